import { readFileSync } from 'node:fs';
import { extname } from 'node:path';

import { SettingsError } from '../errors.js';
import { defaultSettings, PROPERTY_DEFINITIONS, ruleDerivedEnv, type PropertyDefinition } from './definitions.js';
import { parseProperties } from './properties-file.js';
import type { Settings } from './types.js';

/** Where {@link loadSettings} reads from. */
export interface LoadSettingsOptions {
  /** Environment variables; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** A `.properties` or `.json` file; default the file named by `SVC_CONFIG`, if any. */
  file?: string;
  /** Extra properties by name (e.g. from code); the environment still wins over them. */
  properties?: Record<string, string | number | boolean>;
}

/** Environment variables of ours that are not properties. */
const NON_PROPERTY_ENV = new Set(['SVC_CONFIG']);

/**
 * Loads {@link Settings} from a properties/JSON file, explicit properties and the environment
 * (environment wins), applies defaults, and validates every value.
 *
 * @throws {@link SettingsError} naming the property when a property is unknown or its value invalid.
 */
export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  const env = options.env ?? process.env;
  const production = env.NODE_ENV === 'production';
  const raw = new Map<string, { value: string; source: string }>();

  const file = options.file ?? env.SVC_CONFIG;
  if (file) {
    for (const [name, value] of readConfigFile(file)) raw.set(name, { value, source: file });
  }
  for (const [name, value] of Object.entries(options.properties ?? {})) {
    raw.set(name, { value: String(value), source: 'code' });
  }
  for (const [name, entry] of fromEnvironment(env)) raw.set(name, entry);

  const known = new Map(PROPERTY_DEFINITIONS.map((d) => [d.name, d]));
  const unknown = [...raw.keys()].filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new SettingsError(
      `unknown propert${unknown.length === 1 ? 'y' : 'ies'}: ${unknown
        .map((n) => `${n} (from ${raw.get(n)?.source})`)
        .join(', ')}`,
      unknown,
    );
  }

  const settings = defaultSettings(production);
  for (const definition of PROPERTY_DEFINITIONS) {
    const entry = raw.get(definition.name);
    if (entry) applyOne(settings, definition, entry);
  }
  if (!raw.has('svc.base-url')) settings.baseUrl = `http://localhost:${settings.port}`;
  return settings;
}

function applyOne(settings: Settings, definition: PropertyDefinition, entry: { value: string; source: string }): void {
  try {
    definition.apply(settings, entry.value);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // Secret values are never echoed: the parsers of secret properties describe faults without them.
    throw new SettingsError(`invalid value for ${definition.name} (from ${entry.source}): ${reason}`, [definition.name]);
  }
}

function fromEnvironment(env: NodeJS.ProcessEnv): Map<string, { value: string; source: string }> {
  const found = new Map<string, { value: string; source: string }>();
  const byEnv = new Map<string, PropertyDefinition>();
  for (const d of PROPERTY_DEFINITIONS) {
    byEnv.set(ruleDerivedEnv(d.name), d);
    if (d.env) byEnv.set(d.env, d);
  }
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const definition = byEnv.get(variable);
    if (!definition) {
      if (variable.startsWith('SVC_') && !NON_PROPERTY_ENV.has(variable)) {
        throw new SettingsError(`unknown environment variable ${variable}: no svc-connect property has this name`, [variable]);
      }
      continue;
    }
    const previous = found.get(definition.name);
    if (previous && previous.value !== value) {
      throw new SettingsError(
        `conflicting values for ${definition.name}: environment variables ${previous.source} and ${variable} differ`,
        [definition.name],
      );
    }
    found.set(definition.name, { value, source: variable });
  }
  return found;
}

function readConfigFile(file: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new SettingsError(`cannot read configuration file ${file} named by SVC_CONFIG (${code})`, ['SVC_CONFIG']);
  }
  const extension = extname(file).toLowerCase();
  try {
    if (extension === '.json') return flattenJson(JSON.parse(text) as unknown);
    if (extension === '.properties') return parseProperties(text);
  } catch (err) {
    throw new SettingsError(`malformed configuration file ${file}: ${(err as Error).message}`, ['SVC_CONFIG']);
  }
  throw new SettingsError(`configuration file ${file} must end in .properties or .json`, ['SVC_CONFIG']);
}

/** Flattens `{"svc": {"redis": {"url": "…"}}}` and `{"svc.redis.url": "…"}` alike into dotted names. */
function flattenJson(value: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    if (!prefix) throw new Error('expected a JSON object at the top level');
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out.set(prefix, String(value));
      return out;
    }
    throw new Error(`${prefix}: expected a string, number or boolean`);
  }
  for (const [key, child] of Object.entries(value)) {
    flattenJson(child, prefix ? `${prefix}.${key}` : key, out);
  }
  return out;
}
