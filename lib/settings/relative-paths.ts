import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** How a property's value names something on disk: a `file` or folder path, one ES `module` specifier, or comma-separated `modules`. */
export type PathKind = 'file' | 'module' | 'modules';

/** A specifier Node reads as a path relative to the importer: `./…`, `../…`, `.` or `..`. */
export function isRelativeSpecifier(specifier: string): boolean {
  return /^\.\.?(\/|\\|$)/.test(specifier);
}

/**
 * A module specifier resolved against `base` by Node's rules: a `file:` URL or an absolute path
 * as it is; a relative specifier (`./auth.js`, `../claims/mail.js`) against `base`. A bare
 * specifier is a package name (left as it is, looked up in `node_modules` at load), unless a file
 * of that relative path exists in `base` (`examples/claims-file.ts`): then that file.
 */
function resolveModuleSpecifier(specifier: string, base: string): string {
  if (specifier.startsWith('file:') || isAbsolute(specifier)) return specifier;
  if (isRelativeSpecifier(specifier)) return resolve(base, specifier);
  const beside = resolve(base, specifier);
  return existsSync(beside) ? beside : specifier;
}

/**
 * A value of a configuration file resolved against that file's folder `base`: relative paths become absolute, module
 * specifiers as {@link resolveModuleSpecifier} says. (Environment values and defaults resolve against the working directory.)
 */
export function resolveAgainst(value: string, kind: PathKind, base: string): string {
  switch (kind) {
    case 'file':
      return isAbsolute(value) ? value : resolve(base, value);
    case 'module':
      return resolveModuleSpecifier(value.trim(), base);
    case 'modules':
      return value.split(',').map((m) => (m.trim() ? resolveModuleSpecifier(m.trim(), base) : m)).join(',');
  }
}
