import type { JWK } from 'jose';
import * as oidc from 'openid-client';

/** The token and UserInfo answers as the provider sent them, before openid-client read them. */
export interface RawAnswers {
  token?: { status: number; body: string };
  userinfo?: { status: number; contentType: string; body: string };
}

/**
 * A `configure` for {@link runCodeFlow} that decrypts (A128CBC-HS256) with the private halves of
 * `keys` and records the raw token and UserInfo answers in `seen`.
 */
export function recordingAnswers(seen: RawAnswers, ...keys: { privateKey: CryptoKey; jwk: JWK }[]): (config: oidc.Configuration) => void {
  return (config) => {
    if (keys.length > 0) oidc.enableDecryptingResponses(config, ['A128CBC-HS256'], ...keys.map((k) => ({ key: k.privateKey, kid: k.jwk.kid as string })));
    config[oidc.customFetch] = async (url, init) => {
      // openid-client passes a RequestInit-compatible object; its body type is narrower in its typings.
      const response = await fetch(url, init as RequestInit);
      if (url.endsWith('/token')) seen.token = { status: response.status, body: await response.clone().text() };
      if (url.endsWith('/userinfo')) seen.userinfo = { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.clone().text() };
      return response;
    };
  };
}

/** The ID token of a recorded token answer, as it came (a JWE when encrypted). */
export function rawIdToken(seen: RawAnswers): string {
  return (JSON.parse(seen.token?.body ?? '{}') as { id_token: string }).id_token;
}
