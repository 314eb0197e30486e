import { SettingsError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Settings } from './types.js';

/** A default that is fine for trying things out and wrong for production. */
export interface UnsafeDefault {
  /** The property to set to fix it. */
  property: string;
  /** What is unsafe about it. */
  reason: string;
}

/** What the caller supplies in code instead of through properties. */
export interface SuppliedParts {
  /** An adapter/store was passed in code (so the memory-store default does not apply). */
  store?: boolean;
  /** Signing keys were passed in code. */
  keys?: boolean;
  /** An authenticator was passed in code (the demo accounts then do not sign in). */
  authenticator?: boolean;
  /** The management router and mailer are served by this app. */
  management?: boolean;
}

/** True for an `http:` URL whose host is not loopback (`localhost`, 127.0.0.0/8, `[::1]`). */
function httpOffLoopback(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:') return false;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  return !(host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host));
}

/**
 * Lists the unsafe defaults still in force for `settings`, and the settings that are unsafe in
 * production whoever set them (`svc.demo.enabled`, `svc.fetch.allow-private-network`, an `http`
 * base URL off loopback).
 */
export function findUnsafeDefaults(settings: Settings, supplied: SuppliedParts = {}): UnsafeDefault[] {
  const found: UnsafeDefault[] = [];
  if (!supplied.store && !settings.redis.url && !settings.redis.clusterNodes) {
    found.push({ property: 'svc.redis.url', reason: 'the embedded in-memory store serves one process and loses everything on restart' });
  }
  if (!supplied.keys && !settings.keys.file) {
    found.push({ property: 'svc.keys.file', reason: 'signing keys are generated at each start, so tokens stop verifying after a restart' });
  }
  if (!settings.cookies.keys) {
    found.push({ property: 'svc.cookies.keys', reason: 'cookie keys are generated at each start, so sessions end on restart' });
  }
  if (!settings.subject.pairwiseKey) {
    found.push({ property: 'svc.subject.pairwise-key', reason: 'the pairwise key is generated at each start, so every pairwise sub changes on restart' });
  }
  if (settings.demo.enabled) {
    const ownAuthenticator = supplied.authenticator || settings.authenticator.module !== undefined;
    found.push({
      property: 'svc.demo.enabled',
      reason: ownAuthenticator
        ? '/oidcdemo/login registers clients and runs flows for anyone who can sign in (the demo accounts do not: an authenticator is configured)'
        : 'the demo accounts demo/demo and demo-basic/demo-basic sign in, and /oidcdemo/login registers clients',
    });
  }
  if (settings.fetch.allowPrivateNetwork) {
    found.push({
      property: 'svc.fetch.allow-private-network',
      reason: 'jwks_uri and x5u are fetched over http and from loopback and private addresses (a server-side request forgery surface)',
    });
  }
  if (httpOffLoopback(settings.baseUrl)) {
    found.push({
      property: 'svc.base-url',
      reason: 'the public issuer is http on a host other than loopback: browsers, relying parties and cookies then travel in clear (use https, also when TLS ends at a proxy)',
    });
  }
  if (supplied.management) {
    if (settings.management.user === 'admin' && settings.management.password === 'admin') {
      found.push({ property: 'svc.management.password', reason: 'the management endpoint still uses the shipped credentials admin/admin' });
    }
    if (!settings.mail.smtpUrl) {
      found.push({ property: 'svc.mail.smtp-url', reason: `invitation mails are written to ${settings.mail.outboxDir} instead of being sent` });
    }
  }
  return found;
}

/**
 * With `NODE_ENV=production` refuses to start while unsafe defaults remain (the error names every
 * property to set); otherwise warns once per default.
 *
 * @throws {@link SettingsError} in production when `found` is not empty.
 */
export function enforceSafeDefaults(settings: Settings, found: UnsafeDefault[], logger: Logger): void {
  if (found.length === 0) return;
  if (settings.production) {
    throw new SettingsError(
      `refusing to start with NODE_ENV=production while unsafe defaults remain; set ${found
        .map((f) => `${f.property} (${f.reason})`)
        .join('; ')}`,
      found.map((f) => f.property),
    );
  }
  for (const f of found) {
    logger.warn('unsafe_default', { property: f.property, reason: f.reason, fix: `set ${f.property} before production` });
  }
}
