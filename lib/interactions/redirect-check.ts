import type { Context, Next } from 'koa';
import { errors, interactionPolicy, type Client, type KoaContextWithOIDC } from 'oidc-provider';

import { answerError } from '../pages/error-page.js';
import { ROUTE_NAMES } from '../seams.js';

/**
 * Refuses (`invalid_redirect_uri`, an error page: never a redirect) an interaction whose redirect URI the client no
 * longer registers. oidc-provider checks it at `/authorize` only: resuming an interaction opened before an RFC 7592
 * update removed the URI would still send the code, or the error and `state`, there.
 */
function assertRedirectUriRegistered(client: Client | undefined, redirectUri: unknown): void {
  if (!client?.redirectUriAllowed(String(redirectUri))) throw new errors.InvalidRedirectUri();
}

/**
 * `policy` with {@link assertRedirectUriRegistered} as the first check of its `login` prompt: the policy runs at
 * `/authorize` and again at every resume, with the client as registered then.
 */
export function withRedirectUriCheck(policy: interactionPolicy.Prompt[]): interactionPolicy.Prompt[] {
  const login = policy.find((prompt) => prompt.name === 'login');
  if (!login) throw new TypeError('oidc-provider interaction policy has no login prompt');
  login.checks.add(
    new interactionPolicy.Check('redirect_uri_registered', 'the redirect URI is still registered', (ctx: KoaContextWithOIDC) => {
      assertRedirectUriRegistered(ctx.oidc.client, ctx.oidc.params?.redirect_uri);
      return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    }),
    0,
  );
  return policy;
}

/**
 * `provider.use` middleware for what the policy check cannot see: an error result (she denied, an essential claim is
 * missing) is sent to the redirect URI as oidc-provider resumes, before the policy runs. A `resume` answer for a
 * redirect URI the client no longer registers is replaced by the `invalid_redirect_uri` error page: neither the
 * error nor the `state` goes there.
 */
export function resumedRedirectGuard(): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    if (oidc?.route !== ROUTE_NAMES.resume || !oidc.params || !oidc.client || oidc.client.redirectUriAllowed(String(oidc.params.redirect_uri))) return;
    ctx.remove('Location');
    await answerError(ctx, { status: 400, error: 'invalid_redirect_uri', error_description: 'redirect_uri is no longer registered for this client' });
  };
}
