import { errors, type Adapter } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { PROVIDER_CLOCK_TOLERANCE_SECONDS } from '../seams.js';

/** oidc-provider's model of the client assertions (`jti`) it has seen, each kept until the assertion expires. */
export const REPLAY_DETECTION_MODEL = 'ReplayDetection';

/**
 * oidc-provider looks a client assertion's mark up, then writes it: two requests presenting one
 * assertion side by side both find none. Written with the store's atomic `insert`, the second
 * write fails, and its request gets 401 `invalid_client` as a replay does.
 */
export function onceOnly(model: string, store: Pick<SvcStore, 'insert'>): Partial<Adapter> {
  return {
    upsert: async (id, payload, expiresIn) => {
      if (!(await store.insert(model, id, payload, expiresIn))) throw new errors.InvalidClientAuth('client assertion tokens must only be used once');
    },
  };
}

/** How far ahead a client assertion's `exp` may lie (RFC 7523 3): its `jti` is remembered that long. */
const CLIENT_ASSERTION_MAX_SECONDS = 3600;

/** How far a client's clock may run ahead of ours: libraries date their hour from their own clock (Authlib: `iat + 3600`). */
const CLIENT_CLOCK_AHEAD_SECONDS = 300;

/** What a client assertion's `aud` may be besides the issuer identifier as a string (`svc.client-assertion.endpoint-audience`). */
export interface ClientAssertionOptions {
  /** Also what oidc-provider accepts on its own: the token endpoint, the endpoint the assertion is sent to, an array holding one of these. */
  endpointAudience: boolean;
}

/**
 * 401 `invalid_client` saying why. Only for an assertion whose signature verified: its reader holds the client's key, and
 * a library's default it breaks (Spring Security and Keycloak name the token endpoint as `aud`) would otherwise be told
 * no more than a wrong key is ("client authentication failed").
 */
function refusedAssertion(reason: string): InstanceType<typeof errors.InvalidClientAuth> {
  return Object.assign(new errors.InvalidClientAuth(reason), { error_description: reason });
}

/**
 * oidc-provider's `assertJwtClientAuthClaimsAndHeader`, run on a verified client assertion before its `jti` is stored
 * (each refusal says why, {@link refusedAssertion}):
 * - a request object (typed `oauth-authz-req+jwt`, or carrying `response_type`, as every accepted one does) never
 *   authenticates its client, though it may carry `iss`, `aud`, `exp`, `jti` and `sub` too: it travels through the
 *   browser (RFC 9101 10.8);
 * - its `aud` is the issuer identifier as a string, unless `endpointAudience`: an assertion naming our token endpoint
 *   may have been made for a server that gave our endpoint as its own (CVE-2025-27370), and the endpoint the request
 *   reached (`/par`) can be named that way as well;
 * - an assertion expiring later than {@link CLIENT_ASSERTION_MAX_SECONDS} (and 5 minutes of a client's clock running
 *   ahead) from now is refused, so no mark outlives that (one far in the future failed the store's write as an
 *   outage) and an unused leaked assertion expires soon.
 */
export function clientAssertionCheck(options: ClientAssertionOptions) {
  return (ctx: { oidc: { issuer: string } }, claims: { exp?: unknown; aud?: unknown }, header: { typ?: unknown }): void => {
    if ('response_type' in claims || /^(application\/)?oauth-authz-req\+jwt$/i.test(String(header.typ))) {
      throw refusedAssertion('a request object is not a client assertion');
    }
    if (!options.endpointAudience && claims.aud !== ctx.oidc.issuer) {
      throw refusedAssertion(`the client assertion audience (aud) must be the issuer identifier ${ctx.oidc.issuer}, as a string`);
    }
    const ahead = Number(claims.exp) - Math.floor(Date.now() / 1000);
    if (!(ahead <= CLIENT_ASSERTION_MAX_SECONDS + Math.max(CLIENT_CLOCK_AHEAD_SECONDS, PROVIDER_CLOCK_TOLERANCE_SECONDS))) {
      throw refusedAssertion(`client assertion expires more than ${CLIENT_ASSERTION_MAX_SECONDS} seconds from now`);
    }
  };
}
