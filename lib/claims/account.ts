import type { Account, FindAccount, KoaContextWithOIDC } from 'oidc-provider';

import type { Authenticator } from './authenticator.js';
import type { ClaimRegistry } from './modules.js';
import { channelCarriesUserData, type Channel } from './privacy.js';
import type { ChannelClaims, ClaimRequest } from './request.js';
import { resolveRequests } from './resolve.js';
import { claimsForScope } from './scopes.js';
import { channelRequests } from './stored-form.js';
import type { ClaimValueMac } from './value-mac.js';

/** What {@link createFindAccount} needs. */
export interface AccountOptions {
  authenticator: Authenticator;
  registry: ClaimRegistry;
  /** `svc.stage.include-scopes-in-user-info`: the `scope` claim goes to UserInfo instead of the ID token. */
  includeScopesInUserInfo: boolean;
  /** Compares delivered values with requested ones (keyed by the cookie keys). */
  valueMac: ClaimValueMac;
}

/**
 * The requests a channel resolves, decoded once: the scope's claims (voluntary), then the `claims`
 * parameter as oidc-provider's filters left it (granted names only).
 */
export function requestsFor(scope: string | undefined, claims: ChannelClaims | undefined, rejected: readonly string[] = []): ClaimRequest[] {
  const explicit = channelRequests(claims);
  const named = new Set(explicit.map((r) => r.requested));
  const fromScope = claimsForScope(scope)
    .filter((c) => !named.has(c))
    .map((c) => ({ requested: c, alternatives: [c], essential: false }));
  const skip = new Set(rejected);
  return [...fromScope, ...explicit].filter((r) => !skip.has(r.requested));
}

/**
 * oidc-provider's `findAccount`: an account exists while its authenticator says so; its claims come
 * from the claim modules, and leave only on a channel encrypted to the client's key (C4). The
 * `scope` claim (protocol data) rides in the ID token, or in UserInfo when configured (C5).
 */
export function createFindAccount(options: AccountOptions): FindAccount {
  const { authenticator, registry, includeScopesInUserInfo, valueMac } = options;
  return async (ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
    if (!(await authenticator.exists(sub))) return undefined;
    return {
      accountId: sub,
      async claims(use, scope, claims, rejected) {
        const channel: Channel = use === 'id_token' ? 'id_token' : 'userinfo';
        const protocol: Record<string, unknown> = { sub };
        if (scope && (channel === 'userinfo') === includeScopesInUserInfo) protocol.scope = scope;
        const client = ctx.oidc.client;
        if (!client || !channelCarriesUserData(client, channel)) return { ...protocol, sub };
        const { values } = await resolveRequests(registry, sub, requestsFor(scope, claims, rejected), valueMac.forClient(client.clientId));
        return { ...values, ...protocol, sub };
      },
    };
  };
}
