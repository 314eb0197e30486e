import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { signIn } from './browser.js';

/** Everything a completed code flow produced. */
export interface FlowResult {
  code: string;
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  claims: oidc.IDToken;
  userinfo: oidc.UserInfoResponse;
  /** Where the token request actually went. */
  tokenRequestUrl?: string;
}

/**
 * Runs the code flow with openid-client against `issuer` for a confidential client: discovery,
 * PKCE S256, login and consent through the HTML forms, code exchange, ID token validation, UserInfo.
 * `rewrite` lets a test send the token request to another process (same issuer, same store).
 */
export async function runCodeFlow(
  issuer: string,
  client: ClientMetadata,
  options: {
    login?: string;
    password?: string;
    tokenOrigin?: string;
    scope?: string;
    /** Extra authorization parameters (e.g. `claims`). */
    params?: Record<string, string>;
    /** Adjusts the openid-client configuration (e.g. `enableDecryptingResponses`). */
    configure?: (config: oidc.Configuration) => void;
    /** Skip the UserInfo call. */
    skipUserinfo?: boolean;
  } = {},
): Promise<FlowResult> {
  const config = await oidc.discovery(new URL(issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret as string), {
    execute: [oidc.allowInsecureRequests],
  });
  options.configure?.(config);
  let tokenRequestUrl: string | undefined;
  if (options.tokenOrigin) {
    const target = options.tokenOrigin;
    config[oidc.customFetch] = (url, init) => {
      const u = new URL(url);
      if (u.pathname.endsWith('/token')) {
        const t = new URL(target);
        u.protocol = t.protocol;
        u.host = t.host;
        tokenRequestUrl = u.href;
      }
      // openid-client passes a RequestInit-compatible object; its body type is narrower in its typings.
      return fetch(u.href, init as RequestInit);
    };
  }
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: (client.redirect_uris as string[])[0] as string,
    scope: options.scope ?? 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    ...options.params,
  });
  const { callbackUrl } = await signIn(url.href, { login: options.login, password: options.password });
  const code = callbackUrl.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callbackUrl.href}`);
  const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  const claims = tokens.claims();
  if (!claims) throw new Error('no ID token');
  const userinfo = options.skipUserinfo ? { sub: claims.sub } : await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  return { code, tokens, claims, userinfo, tokenRequestUrl };
}
