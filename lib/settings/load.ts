import { dirname, extname, resolve } from 'node:path';

import { SettingsError } from '../errors.js';
import { readFileBytes, utf8Text } from '../user-files.js';
import { clip } from '../terminal-text.js';
import { PROPERTY_DEFINITIONS, writeValue, type PropertyDefinition } from './definitions.js';
import { parseProperties } from './properties-file.js';
import { resolveAgainst } from './relative-paths.js';
import { closestResembled, editDistance } from './resemblance.js';
import type { Settings } from './types.js';

/** Where {@link loadSettings} reads from. */
export interface LoadSettingsOptions {
  /** Environment variables; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** A `.properties` or `.json` file; default the file named by `SVC_CONFIG`, if any. */
  file?: string;
  /** Extra properties by name (e.g. from code); the environment still wins over them. */
  properties?: Record<string, string | number | boolean>;
  /**
   * Told the name (never the value) of each ignored `SVC_` variable: not a property and not like one.
   * Default: a process warning, once per name and process.
   */
  onIgnoredVariable?: (variable: string, message: string) => void;
}

const NON_PROPERTY_ENV = new Set(['SVC_CONFIG']);

const ENV_RULE = { prefix: 'SVC_', separator: /_/ };
const PROPERTY_RULE = { prefix: 'svc.', separator: /[.-]/ };

const warnedVariables = new Set<string>();
function warnOnce(variable: string, message: string): void {
  if (warnedVariables.has(variable)) return;
  warnedVariables.add(variable);
  process.emitWarning(message, { code: 'SVC_IGNORED_VARIABLE' });
}

/**
 * Whether `NODE_ENV` asks for production: `production` or `prod`, letter case and surrounding spaces
 * ignored, so a stray capital or space cannot quietly turn the production refusals into warnings.
 */
export function isProductionEnvironment(value: string | undefined): boolean {
  const normalized = (value ?? '').trim().toLowerCase();
  return normalized === 'production' || normalized === 'prod';
}

/**
 * Refuses a `NODE_ENV` at most two edits from `production` that is not production (`prodution`): read as another
 * environment it would quietly turn the production refusals into warnings.
 */
function refuseMisspeltProduction(value: string | undefined): void {
  const normalized = (value ?? '').trim();
  if (isProductionEnvironment(normalized) || editDistance(normalized.toLowerCase(), 'production') > 2) return;
  throw new SettingsError(
    `NODE_ENV=${normalized} looks like production misspelled: write production for the production checks, or a word of its own (development, test) for another environment`,
    ['NODE_ENV'],
  );
}

/**
 * Loads {@link Settings} from a properties/JSON file, explicit properties and the environment
 * (environment wins), applies defaults, and validates every value.
 *
 * Names: every name in the file and in `properties` must be a property. Of the environment, the
 * variables of the properties are read; another variable starting with `SVC_` (any letter case) is
 * an error when it looks like one of them (a close misspelling, or one cut short: docs/configuration.md),
 * and is otherwise ignored and reported to `onIgnoredVariable`. Other variables are not looked at.
 *
 * @throws {@link SettingsError} naming the property when a property is unknown or its value invalid,
 * and naming the variable and the property it resembles for a mistyped variable.
 */
export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  return loadSettingsWithSources(options).settings;
}

/** Where a property's effective value came from: its default, the configuration file, code (`options.properties`), or the environment. */
export type SettingSource = { kind: 'default' } | { kind: 'file'; file: string } | { kind: 'code' } | { kind: 'env'; variable: string };

/** A property's value as given, with where it came from. */
interface GivenValue {
  value: string;
  source: Exclude<SettingSource, { kind: 'default' }>;
}

/** Where a value came from, as messages name it: the file's path, the variable, or `code`. */
const originOf = (source: GivenValue['source']): string => (source.kind === 'file' ? source.file : source.kind === 'env' ? source.variable : 'code');

/** What the configuration file gave: every property it names with its value as written, whatever overrides it. */
export interface ConfigFileValues {
  file: string;
  given: ReadonlyMap<string, string>;
}

/**
 * {@link loadSettings}, also saying where each property's value came from (for `svc-connect config check`), and what the
 * configuration file gave.
 */
export function loadSettingsWithSources(options: LoadSettingsOptions = {}): { settings: Settings; sources: Map<string, SettingSource>; configFile?: ConfigFileValues } {
  const env = options.env ?? process.env;
  refuseMisspeltProduction(env.NODE_ENV);
  const production = isProductionEnvironment(env.NODE_ENV);
  const raw = new Map<string, GivenValue>();

  const file = options.file ?? env.SVC_CONFIG;
  const configFile = file ? { file, given: readConfigFile(file) } : undefined;
  for (const [name, value] of configFile?.given ?? []) raw.set(name, { value, source: { kind: 'file', file: configFile?.file ?? '' } });
  for (const [name, value] of Object.entries(options.properties ?? {})) raw.set(name, { value: String(value), source: { kind: 'code' } });
  for (const [name, entry] of fromEnvironment(env, options.onIgnoredVariable ?? warnOnce)) raw.set(name, entry);

  const known = PROPERTY_DEFINITIONS.map((d) => d.name);
  const unknown = [...raw.keys()].filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    // Every property has a dot, and parts of letters and hyphens in one case: anything else may be a value on a line of its
    // own (a wrapped key list, a key with dots or digits), never repeated, unless it is a variable's name or a property's
    // with another separator, case or letter (no secret is that close to a name printed in the reference).
    const variableOf = (name: string): PropertyDefinition | undefined => PROPERTY_DEFINITIONS.find((d) => d.envs.some((e) => e.toLowerCase() === name.toLowerCase()));
    const nameLike = (name: string): boolean => /^(?:[a-z-]+|[A-Z-]+)(?:\.(?:[a-z-]+|[A-Z-]+))+$/.test(name);
    const resembled = (name: string): string | undefined => closestResembled(name, known, PROPERTY_RULE);
    const repeatable = (name: string): boolean => nameLike(name) || variableOf(name) !== undefined || resembled(name) !== undefined;
    const shown = (name: string): string => (repeatable(name) ? name : name.includes('.') ? "a name that is no property's" : 'a name without a dot');
    const hint = (name: string): string => {
      const variable = variableOf(name);
      if (variable) return `; an environment variable's name: in a file write ${variable.name}`;
      const like = resembled(name);
      if (like) return `; did you mean ${like}?`;
      return nameLike(name) ? '' : '; not repeated: it may be a value, and a value wrapped onto the next line needs a \\ at the end of the line before';
    };
    throw new SettingsError(
      `unknown propert${unknown.length === 1 ? 'y' : 'ies'}: ${unknown.map((n) => `${shown(n)} (from ${originOf((raw.get(n) as GivenValue).source)}${hint(n)})`).join(', ')}`,
      unknown.map(shown),
    );
  }

  const settings = { production } as Settings;
  const sources = new Map<string, SettingSource>();
  // Paths written in the configuration file are relative to its folder; the others to the working directory.
  const fileFolder = file ? dirname(resolve(file)) : undefined;
  for (const definition of PROPERTY_DEFINITIONS) {
    const entry = raw.get(definition.name);
    sources.set(definition.name, entry?.source ?? { kind: 'default' });
    const kind = entry?.source.kind === 'file' ? definition.path : undefined;
    const value = !entry ? definition.fallback(settings) : parseOne(definition, kind && fileFolder ? { ...entry, value: resolveAgainst(entry.value, kind, fileFolder) } : entry);
    writeValue(settings, definition, value);
  }
  refuseSharedPort(settings, raw.get('svc.ops.port'));
  return { settings, sources, ...(configFile ? { configFile } : {}) };
}

/** Refuses an operations listener on the public port: its listen would fail as if another process held the port. */
function refuseSharedPort(settings: Settings, given: GivenValue | undefined): void {
  if (!given || settings.ops.port === undefined || settings.ops.port === 0 || settings.ops.port !== settings.port) return;
  throw new SettingsError(
    `invalid value for svc.ops.port (from ${originOf(given.source)}): ${settings.ops.port} is svc.port too; the operations listener needs a port of its own`,
    ['svc.ops.port'],
  );
}

function parseOne(definition: PropertyDefinition, entry: GivenValue): unknown {
  try {
    return definition.parse(entry.value);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // Secret values are never echoed: the parsers of secret properties describe faults without them.
    throw new SettingsError(`invalid value for ${definition.name} (from ${originOf(entry.source)}): ${reason}`, [definition.name]);
  }
}

function fromEnvironment(env: NodeJS.ProcessEnv, onIgnored: (variable: string, message: string) => void): Map<string, GivenValue> {
  const found = new Map<string, GivenValue>();
  const byEnv = new Map(PROPERTY_DEFINITIONS.flatMap((d) => d.envs.map((e) => [e, d] as const)));
  const ours = [...byEnv.keys(), ...NON_PROPERTY_ENV].filter((name) => name.startsWith(ENV_RULE.prefix));
  const mistyped: string[] = [];
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const definition = byEnv.get(variable);
    if (!definition) {
      if (variable.toUpperCase().startsWith(ENV_RULE.prefix) && !NON_PROPERTY_ENV.has(variable)) {
        const named = fileVariableOf(variable, ours);
        const like = named ?? closestResembled(variable, ours, ENV_RULE);
        const property = like ? byEnv.get(like)?.name : undefined;
        const what = property ? `, property ${property}` : named ? ', which names the configuration file' : '';
        const why = named ? `?${property ? ' It takes the value itself, not a file:' : ''} svc-connect reads no _FILE or _PATH variables)` : '?)';
        if (like) mistyped.push(`${variable} (did you mean ${like}${what}${why}`);
        else onIgnored(variable, `ignoring environment variable ${variable}: it is not an svc-connect property and does not look like one`);
      }
      continue;
    }
    const previous = found.get(definition.name);
    if (previous && previous.value !== value) {
      throw new SettingsError(
        `conflicting values for ${definition.name}: environment variables ${originOf(previous.source)} and ${variable} differ`,
        [definition.name],
      );
    }
    found.set(definition.name, { value, source: { kind: 'env', variable } });
  }
  if (mistyped.length > 0) {
    throw new SettingsError(
      `unknown environment variable${mistyped.length === 1 ? '' : 's'} ${mistyped.join(', ')}: no svc-connect property has this name`,
      mistyped.map((m) => m.split(' ')[0] as string),
    );
  }
  return found;
}

/**
 * The variable of ours that `variable` is with `_FILE` or `_PATH` added (`SVC_COOKIES_KEYS_FILE`, `SVC_CONFIG_PATH`), letter case
 * ignored: the Docker habit of giving a secret as a file, which svc-connect does not follow.
 */
function fileVariableOf(variable: string, ours: readonly string[]): string | undefined {
  const base = /^(.+)_(?:FILE|PATH)$/i.exec(variable)?.[1]?.toUpperCase();
  return ours.find((name) => name === base);
}

/** The properties the configuration file gives, as written; read as every file the user names ({@link readFileBytes}: 1 MiB at most). */
function readConfigFile(file: string): Map<string, string> {
  const bytes = readFileBytes(file, (reason) => new SettingsError(`the configuration file named by SVC_CONFIG: ${reason}`, ['SVC_CONFIG']));
  const extension = extname(file).toLowerCase();
  if (extension !== '.json' && extension !== '.properties') throw new SettingsError(`configuration file ${resolve(file)} must end in .properties or .json`, ['SVC_CONFIG']);
  try {
    const text = utf8Text(bytes);
    return extension === '.json' ? flattenJson(parseJsonText(text)) : parseProperties(text);
  } catch (err) {
    throw new SettingsError(`malformed configuration file ${resolve(file)}: ${(err as Error).message}`, ['SVC_CONFIG']);
  }
}

/**
 * `JSON.parse(text)`, failing with where the fault is (line and column, when the engine says) and never with
 * the engine's message, which quotes the text around the fault: a secret value written there.
 */
function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const position = /at position (\d+)/.exec((err as Error).message)?.[1];
    if (position === undefined) throw new Error('not valid JSON');
    const before = text.slice(0, Number(position)).split('\n');
    throw new Error(`not valid JSON at line ${before.length}, column ${(before.at(-1) ?? '').length + 1}`);
  }
}

/** The most parts a property name has: a JSON file nested deeper names none (and is not walked to the stack's end). */
const DEEPEST_NAME = Math.max(...PROPERTY_DEFINITIONS.map((d) => d.name.split('.').length));

/** Flattens `{"svc": {"redis": {"url": "…"}}}` and `{"svc.redis.url": "…"}` alike into dotted names. */
function flattenJson(value: unknown, prefix = '', out = new Map<string, string>(), depth = 0): Map<string, string> {
  if (depth > DEEPEST_NAME) throw new Error(`${clip(prefix, 80)}: nested deeper than any property`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    if (!prefix) throw new Error('expected a JSON object at the top level');
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      if (out.has(prefix) && out.get(prefix) !== String(value)) throw new Error(`${prefix} is given twice, with different values`);
      out.set(prefix, String(value));
      return out;
    }
    throw new Error(`${prefix}: expected a string, number or boolean`);
  }
  for (const [key, child] of Object.entries(value)) {
    flattenJson(child, prefix ? `${prefix}.${key}` : key, out, depth + 1);
  }
  return out;
}
