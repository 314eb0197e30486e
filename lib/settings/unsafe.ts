import { SettingsError } from '../errors.js';
import type { Logger } from '../logger.js';
import { PROPERTY_DEFINITIONS, type SuppliedParts } from './definitions.js';
import type { Settings } from './types.js';

/** A default that is fine for trying things out and wrong for production. */
export interface UnsafeDefault {
  /** The property to set to fix it. */
  property: string;
  /** What is unsafe about it. */
  reason: string;
  /** What to set, after `set `: the property, or with the value or kind of value (`svc.demo.enabled=false`). */
  fix: string;
}

/**
 * Lists the unsafe defaults still in force for `settings`, and the settings that are unsafe in
 * production whoever set them (`svc.demo.enabled`, `svc.fetch.allow-private-network`, an `http`
 * base URL off loopback): each row's unsafe-default rule, in the order of the table.
 */
export function findUnsafeDefaults(settings: Settings, supplied: SuppliedParts = {}): UnsafeDefault[] {
  return PROPERTY_DEFINITIONS.flatMap((d) => {
    const reason = d.unsafe?.(settings, supplied);
    return reason === undefined ? [] : [{ property: d.name, reason, fix: d.fix ?? d.name }];
  });
}

/**
 * With `NODE_ENV=production` refuses to start while unsafe defaults remain (the error says what to set, each
 * property with the value or kind of value it needs when set already); otherwise warns once per default.
 *
 * @throws {@link SettingsError} in production when `found` is not empty.
 */
export function enforceSafeDefaults(settings: Settings, found: UnsafeDefault[], logger: Logger): void {
  if (found.length === 0) return;
  if (settings.production) {
    const fixes = found.map((f) => `${f.fix} (${f.reason})`).join('; ');
    throw new SettingsError(`refusing to start with NODE_ENV=production while unsafe defaults remain; set ${fixes}`, found.map((f) => f.property));
  }
  for (const f of found) {
    logger.warn('unsafe_default', { property: f.property, reason: f.reason, fix: `set ${f.fix} before production` });
  }
}
