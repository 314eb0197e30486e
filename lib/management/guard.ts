import type { Middleware } from 'koa';
import type { Adapter } from 'oidc-provider';

import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import { addressCounterKey, clientAddress, counterKey, type ProxyTrust } from '../web/client-address.js';
import { requestIdOf, sendError } from '../web/error-response.js';
import { isCrossSite } from '../web/same-origin.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { checkBasicAuth } from '../web/basic-auth.js';
import { createAttemptGate, isPass } from '../interactions/attempt-gate.js';

/** The role an authenticated management user has (spec 5). */
const MANAGEMENT_ROLE = 'MANAGEMENT';

const REALM = 'Basic realm="svc-connect management", charset="UTF-8"';

/** The operator's credentials and lockout (`svc.management.*`). */
export interface ManagementCredentials {
  user: string;
  password: string;
  lockoutThreshold: number;
  lockoutSeconds: number;
}

/** What the management guard needs. */
export interface GuardOptions {
  credentials: ManagementCredentials;
  /** The public origin (of `svc.base-url`): requests from any other site are refused. */
  origin: string;
  /** Which `X-Forwarded-For` entry is the client (`svc.proxy`, `svc.proxy.hops`). */
  proxy: ProxyTrust;
  logger: Logger;
  /** Counts failed logins and cross-site refusals, when metrics are on. */
  metrics?: Metrics;
  /** The shared store's attempt counters (the lockout). */
  attempts: AttemptCounter;
  /** Key of the MAC that turns client addresses into lockout counter keys; never kept in the store. */
  counterKey: string;
  /** The store's {@link KNOWN_ADDRESS_MODEL} records: the addresses the operator signed in from. */
  knownAddresses: Pick<Adapter, 'find' | 'upsert'>;
}

/** The store model marking a client address (by its keyed MAC) where the management credentials were right. */
export const KNOWN_ADDRESS_MODEL = 'ManagementAddress';

/** How long an address stays known after the operator's last sign-in from it, in seconds (30 days). */
const KNOWN_ADDRESS_SECONDS = 2_592_000;

/**
 * Failures of the management account, from addresses it did not sign in from within 30 days, per window (NIST SP 800-63B 5.2.2 allows
 * an account 100): every address (each IPv6 /64 of a /48, each of a botnet's) has its own budget, so without it their
 * number would bound nothing.
 */
const ACCOUNT_FAILURES = 100;

/** How the management lockout counts: `threshold` failures per window, then the cool-down (C7). */
function lockoutRule(credentials: ManagementCredentials): AttemptRule {
  const coolDown = credentials.lockoutSeconds;
  return { limit: credentials.lockoutThreshold, windowSeconds: Math.max(coolDown, 900), coolDownSeconds: coolDown, maxCoolDownSeconds: Math.max(coolDown, 3600) };
}

/**
 * The one gate in front of every management action (C7): a cross-site request gets 403 before anything else; then
 * the shared store's failure counter for the client address (the `X-Forwarded-For` entry `svc.proxy.hops` from the
 * right behind a proxy; every process sees one count; only completed failures count) answers repeated failures 429
 * with `Retry-After`, and so does the account's counter of failures from addresses where the credentials were not
 * right within 30 days ({@link ACCOUNT_FAILURES}, each success marking its address known for 30 days); then HTTP Basic (constant time) grants role MANAGEMENT
 * (`ctx.state.role`, and `ctx.state.managementUser` for the audit log), or 401 with the Basic challenge.
 */
export function managementGuard(options: GuardOptions): Middleware {
  const { credentials, origin, logger, attempts } = options;
  const rule = lockoutRule(credentials);
  const gate = createAttemptGate({ attempts, logger });
  return async (ctx, next) => {
    if (isCrossSite(ctx, origin)) {
      logger.warn('management_cross_site_refused', { request_id: requestIdOf(ctx) });
      options.metrics?.securityEvents.inc({ event: 'management_cross_site_refused' });
      return sendError(ctx, 403, 'cross_site_request', 'management requests cannot be sent from another site');
    }
    const address = clientAddress(ctx, options.proxy);
    const tooMany = (retryAfterSeconds: number): void => {
      ctx.set('Retry-After', String(retryAfterSeconds));
      sendError(ctx, 429, 'too_many_requests', `too many failed logins from this client, or for this account from addresses it has not signed in from; try again in ${retryAfterSeconds} seconds`);
    };
    // A right password leaves the count as it is: forgetting it would give whoever shares her address (an office
    // NAT, an egress proxy) a fresh budget at each of her sign-ins. Failures age out with the window.
    const addressKey = addressCounterKey('management', address, options.counterKey);
    // A mark that cannot be read is an easing lost, not an outage: her failures count on the account too, as anyone's.
    const known = !!(await options.knownAddresses.find(addressKey).catch(() => undefined));
    const account = { key: counterKey('management-account', credentials.user, options.counterKey), rule: { ...rule, limit: Math.max(ACCOUNT_FAILURES, rule.limit) }, label: 'account', forgetOnSuccess: false };
    // Where she signed in before, her address's own budget alone applies: a stranger's spraying never locks her out there.
    const pass = await gate.enter([{ key: addressKey, rule, label: 'address', forgetOnSuccess: false }, ...(known ? [] : [account])]);
    if (!isPass(pass)) return tooMany(pass.retryAfterSeconds);
    const auth = checkBasicAuth(ctx.get('authorization') || undefined, credentials.user, credentials.password);
    if (auth !== 'ok') {
      if (auth !== 'missing') {
        const wait = await pass.failed();
        if (wait) return tooMany(wait);
      }
      logger.warn('management_login_failed', { request_id: requestIdOf(ctx), reason: auth, ip: address });
      options.metrics?.securityEvents.inc({ event: 'management_login_failed' });
      ctx.set('WWW-Authenticate', REALM);
      return sendError(ctx, 401, 'unauthorized', auth === 'missing' ? 'management credentials are required (HTTP Basic)' : 'the management credentials are not valid');
    }
    const wait = await pass.succeeded();
    if (wait) return tooMany(wait);
    // A mark that could not be written costs her only the account's budget next time: the right password still goes in.
    await options.knownAddresses.upsert(addressKey, {}, KNOWN_ADDRESS_SECONDS).catch(() => logger.warn('attempt_settle_failed', { count: 1 }));
    ctx.state.role = MANAGEMENT_ROLE;
    ctx.state.managementUser = credentials.user;
    await next();
  };
}

/**
 * Refuses every method but `methods` with 405 and `Allow` (before any other check, so a wrong
 * method costs no login attempt). `HEAD` counts as `GET` where `GET` is allowed and reads only;
 * where `GET` acts (`invite_client` mails), `headAsGet: false` refuses `HEAD` too.
 */
export function allowMethods(methods: readonly string[], options: { headAsGet?: boolean } = {}): Middleware {
  const allowed = new Set(methods.includes('GET') && options.headAsGet !== false ? [...methods, 'HEAD'] : methods);
  return async (ctx, next) => {
    if (!allowed.has(ctx.method)) {
      ctx.set('Allow', methods.join(', '));
      return sendError(ctx, 405, 'method_not_allowed', `use ${methods.join(' or ')}`);
    }
    await next();
  };
}
