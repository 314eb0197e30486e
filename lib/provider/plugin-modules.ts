import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { ClaimModule } from '../claims/modules.js';
import { SettingsError } from '../errors.js';
import type { Authenticator } from '../claims/authenticator.js';
import type { Logger } from '../logger.js';
import { isRelativeSpecifier } from '../settings/relative-paths.js';
import { clip } from '../terminal-text.js';

/**
 * What a module named by `svc.authenticator.module` or `svc.claims.modules` is given when its default
 * export is a function: never a secret (no credentials, keys or store addresses).
 */
export interface ModuleContext {
  /** The public base URL (`svc.base-url`). */
  readonly baseUrl: string;
  /** `true` under `NODE_ENV=production`. */
  readonly production: boolean;
  /** The provider's logger (never log secrets or claim values). */
  readonly logger: Logger;
}

/** The default export of an `svc.authenticator.module`: an {@link Authenticator}, or a function (maybe async) returning one. */
export type AuthenticatorModuleExport = Authenticator | ((context: ModuleContext) => Authenticator | Promise<Authenticator>);

/** The default export of a module in `svc.claims.modules`: a {@link ClaimModule}, a list of them, or a function returning either. */
export type ClaimModulesExport =
  | ClaimModule
  | readonly ClaimModule[]
  | ((context: ModuleContext) => ClaimModule | readonly ClaimModule[] | Promise<ClaimModule | readonly ClaimModule[]>);

/** First line of an error message, shortened: enough to see the cause, nothing of a module's source. */
function causeOf(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const line = text.split('\n')[0] ?? '';
  return clip(line, 300);
}

/**
 * Where a module specifier leads from the working directory: a `file:` URL or absolute path as it is;
 * a relative one, or a bare one naming an existing file, as a file; else a package found as
 * `require.resolve` does, else as svc-connect would import it (packages whose exports offer `import`
 * only). `shown` is what errors print.
 */
function locate(specifier: string): { url: string; shown: string } {
  if (specifier.startsWith('file:')) return { url: specifier, shown: specifier };
  const cwd = process.cwd();
  const file = (path: string): { url: string; shown: string } => ({ url: pathToFileURL(path).href, shown: path });
  if (isAbsolute(specifier)) return file(specifier);
  const beside = resolve(cwd, specifier);
  if (isRelativeSpecifier(specifier) || existsSync(beside)) return file(beside);
  try {
    return file(createRequire(resolve(cwd, 'noop.js')).resolve(specifier));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') {
      throw new ModuleNotFound(`no package ${specifier} in the node_modules folders from ${cwd} up, and no file ${beside} (write ./${specifier} for a file relative to the configuration file or the working directory)`);
    }
    return { url: specifier, shown: `package ${specifier}` };
  }
}

/** A bare specifier that names neither a package nor a file. */
class ModuleNotFound extends Error {}

/** The module's default export, or what it returns when it is a function. */
async function loadDefault(property: string, path: string, context: ModuleContext): Promise<unknown> {
  let loaded: Record<string, unknown>;
  let shown = path;
  try {
    const located = locate(path);
    shown = located.shown;
    loaded = (await import(located.url)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ModuleNotFound) throw new SettingsError(`cannot load ${property} ${path}: ${err.message}`, [property]);
    const code = (err as NodeJS.ErrnoException).code;
    const where = shown === path ? '' : ` (${shown})`;
    throw new SettingsError(`cannot load ${property} ${path}${where}: ${code ? `${code}: ` : ''}${causeOf(err)}`, [property]);
  }
  const value = loaded.default;
  if (value === undefined) {
    throw new SettingsError(`${property} ${path} has no default export (export default the ${property === 'svc.claims.modules' ? 'claim module' : 'authenticator'}, or a function returning it)`, [property]);
  }
  if (typeof value !== 'function') return value;
  try {
    return await (value as (context: ModuleContext) => unknown)(context);
  } catch (err) {
    throw new SettingsError(`${property} ${path}: its default export failed: ${causeOf(err)}`, [property]);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * Loads the authenticator named by `svc.authenticator.module` (ESM, by dynamic import).
 * @throws {@link SettingsError} naming the module when it cannot be loaded or lacks a member of {@link Authenticator}.
 */
export async function loadAuthenticatorModule(path: string, context: ModuleContext): Promise<Authenticator> {
  const property = 'svc.authenticator.module';
  const value = await loadDefault(property, path, context);
  if (!isObject(value)) {
    throw new SettingsError(`${property} ${path} must export default an authenticator (an object with authenticate and exists functions) or a function returning one; got ${value === null ? 'null' : typeof value}`, [property]);
  }
  const missing = ['authenticate', 'exists'].filter((member) => typeof value[member] !== 'function');
  if (missing.length > 0) {
    throw new SettingsError(`${property} ${path}: the authenticator has no ${missing.join(' and no ')} function (see the Authenticator interface)`, [property]);
  }
  return value as unknown as Authenticator;
}

/**
 * Loads the claim modules named by `svc.claims.modules`, in order (ESM, by dynamic import).
 * @throws {@link SettingsError} naming the module when one cannot be loaded or does not fit {@link ClaimModule}.
 */
export async function loadClaimModules(paths: readonly string[], context: ModuleContext): Promise<ClaimModule[]> {
  const property = 'svc.claims.modules';
  const modules: ClaimModule[] = [];
  for (const path of paths) {
    const value = await loadDefault(property, path, context);
    const list: unknown[] = Array.isArray(value) ? (value as unknown[]) : [value];
    if (list.length === 0) throw new SettingsError(`${property} ${path} exports no claim module (an empty list)`, [property]);
    list.forEach((entry, i) => {
      const where = Array.isArray(value) ? `${path} [${i}]` : path;
      if (!isObject(entry)) {
        throw new SettingsError(`${property} ${where} must export default a claim module (name, provides, resolve), a list of them, or a function returning either; got ${entry === null ? 'null' : typeof entry}`, [property]);
      }
      const faults = [
        typeof entry.name === 'string' && entry.name ? undefined : 'a name (string)',
        Array.isArray(entry.provides) && (entry.provides as unknown[]).every((p) => typeof p === 'string') ? undefined : 'provides (a list of claim names)',
        typeof entry.resolve === 'function' ? undefined : 'a resolve function',
      ].filter(Boolean);
      if (faults.length > 0) throw new SettingsError(`${property} ${where}: the claim module needs ${faults.join(', ')} (see the ClaimModule interface)`, [property]);
      modules.push(entry as unknown as ClaimModule);
    });
  }
  return modules;
}
