import { statSync } from 'node:fs';
import { resolve } from 'node:path';

import { redactUrlCredentials, type Logger } from '../logger.js';
import { PROPERTY_DEFINITIONS, type PropertyDefinition } from './definitions.js';
import type { ConfigFileValues } from './load.js';
import type { ClusterNode } from './types.js';

/**
 * The mode of `file` (the file a link leads to) as octal, `0644`, when its group or anyone else may read or change
 * it, and whether this process's user owns it; undefined when only its owner may, on Windows (no such bits), or when
 * it cannot be looked at. A file of root's may give its group read, as PostgreSQL allows for its key: a Kubernetes
 * secret under `fsGroup` is at least 0440 whatever its `defaultMode`, and a systemd credential shows its ACL mask there.
 */
function exposure(file: string): { mode: string; own: boolean } | undefined {
  if (process.platform === 'win32') return undefined;
  try {
    const { mode, uid } = statSync(file);
    if (!(mode & (uid === 0 ? 0o037 : 0o077))) return undefined;
    return { mode: (mode & 0o777).toString(8).padStart(4, '0'), own: uid === process.getuid?.() };
  } catch {
    return undefined;
  }
}

/**
 * Logs `secret_file_exposed` (a warning: the start goes on) when `file`, named by `property` and holding `holds`, may be
 * read or changed by others than its owner: its path, mode and the fix, never its content. The fix of a file another
 * user owns keeps it readable by the service, which may read it through its group or other bits only.
 */
export function warnIfExposed(logger: Logger, property: string, file: string, holds: string): void {
  const found = exposure(file);
  if (found === undefined) return;
  const absolute = resolve(file);
  const fix = found.own ? `chmod 600 ${absolute}` : `chown ${process.getuid?.() ?? 'SERVICE_USER'} ${absolute} && chmod 600 ${absolute}, or leave it root's with chmod 640 and a group of the service user alone`;
  logger.warn('secret_file_exposed', { property, file: absolute, mode: found.mode, holds, fix: `${fix}; only the service user may read it` });
}

/**
 * True when a value as written is a secret: of a secret property, or URLs (Cluster seed nodes) carrying credentials,
 * judged as parsed (`HTTPS://ID.example.com:443` carries none, though its redaction is written otherwise).
 */
function givesSecret(definition: PropertyDefinition, written: string): boolean {
  if (definition.secret === true) return true;
  let value: unknown = written.split(',').map((item) => item.trim());
  try {
    value = definition.parse(written);
  } catch {
    // Overridden by the environment, so never refused, and not valid: judged as written.
  }
  return (Array.isArray(value) ? value : [value]).some((v: unknown) =>
    typeof v === 'string' ? redactUrlCredentials(v) !== v : (v as Partial<ClusterNode> | null)?.password !== undefined || (v as Partial<ClusterNode> | null)?.username !== undefined,
  );
}

/**
 * {@link warnIfExposed} for the configuration file (`SVC_CONFIG`, `--file`) when it gives a secret property, or a URL
 * with a password (the store's, in `svc.redis.url`), naming those, also where the environment overrides them: the
 * file still holds them.
 */
export function warnIfConfigFileExposed(logger: Logger, configFile: ConfigFileValues | undefined): void {
  const secrets = PROPERTY_DEFINITIONS.filter((d) => {
    const written = configFile?.given.get(d.name);
    return written !== undefined && givesSecret(d, written);
  });
  if (configFile && secrets.length) warnIfExposed(logger, 'SVC_CONFIG', configFile.file, secrets.map((d) => d.name).join(', '));
}
