import type { Account, FindAccount, KoaContextWithOIDC } from 'oidc-provider';

import type { Authenticator } from '../interactions/authenticator.js';
import type { ClaimRegistry } from './modules.js';
import { channelCarriesUserData, type Channel } from './privacy.js';
import { channelRequests, type ChannelClaims, type ClaimRequest } from './request.js';
import { resolveRequests } from './resolve.js';
import { claimsForScope } from './scopes.js';

/** What {@link createFindAccount} needs. */
export interface AccountOptions {
  authenticator: Authenticator;
  registry: ClaimRegistry;
  /** `svc.stage.include-scopes-in-user-info`: the `scope` claim goes to UserInfo instead of the ID token. */
  includeScopesInUserInfo: boolean;
}

/** The requests a channel resolves: the scope's claims (voluntary), then the `claims` parameter. */
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
  const { authenticator, registry, includeScopesInUserInfo } = options;
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
        const { values } = await resolveRequests(registry, sub, requestsFor(scope, claims as ChannelClaims | undefined, rejected));
        return { ...values, ...protocol, sub };
      },
    };
  };
}
