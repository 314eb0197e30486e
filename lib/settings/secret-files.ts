import { statSync } from 'node:fs';
import { resolve } from 'node:path';

import type { Logger } from '../logger.js';
import { PROPERTY_DEFINITIONS } from './definitions.js';
import type { SettingSource } from './load.js';

/**
 * The mode of `file` (the file a link leads to) as octal, `0644`, when its group or anyone else may read or change
 * it; undefined when only its owner may, on Windows (no such bits), or when it cannot be looked at.
 */
function exposedMode(file: string): string | undefined {
  if (process.platform === 'win32') return undefined;
  try {
    const { mode } = statSync(file);
    return mode & 0o077 ? (mode & 0o777).toString(8).padStart(4, '0') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Logs `secret_file_exposed` (a warning: the start goes on) when `file`, named by `property` and holding `holds`, may be
 * read or changed by others than its owner: its path, mode and the fix, never its content.
 */
export function warnIfExposed(logger: Logger, property: string, file: string, holds: string): void {
  const mode = exposedMode(file);
  if (mode === undefined) return;
  const absolute = resolve(file);
  logger.warn('secret_file_exposed', { property, file: absolute, mode, holds, fix: `chmod 600 ${absolute}; only the service user may read it` });
}

/** {@link warnIfExposed} for the configuration file (`SVC_CONFIG`, `--file`) when it gave a secret property, naming those. */
export function warnIfConfigFileExposed(logger: Logger, sources: ReadonlyMap<string, SettingSource>): void {
  const fromFile = PROPERTY_DEFINITIONS.filter((d) => d.secret && sources.get(d.name)?.kind === 'file');
  const source = fromFile.length ? sources.get(fromFile[0]?.name ?? '') : undefined;
  if (source?.kind === 'file') warnIfExposed(logger, 'SVC_CONFIG', source.file, fromFile.map((d) => d.name).join(', '));
}
