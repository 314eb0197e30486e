import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { pairwiseSub, sectorOf } from '../../../policies/subjects.js';
import { confidentialClient, startApp, type RunningApp } from '../../helpers/app.js';
import { redeemCode, signIn } from '../../helpers/flow.js';
import type { StoreKind } from '../../helpers/stores.js';

const client = confidentialClient();
const PAIRWISE_KEY = 'code-flow-pairwise-key-0123456789abcdef';
// The client is pairwise (the default): its sub is derived from the account id for its sector (itself: it redirects to the loopback interface).
const SUB = pairwiseSub(PAIRWISE_KEY, sectorOf(client) as string, 'demo-0001');
const redirectUri = client.redirect_uris?.[0] as string;
/** A relying party whose redirect URI carries a query (RFC 6749 3.1.2 allows one), values that form-encoding changes included. */
const QUERY_REDIRECT = 'http://rp.localhost/cb?tenant=a%2Fb&x=1+2';
const queryClient = confidentialClient({ client_id: 'query-rp', redirect_uris: [QUERY_REDIRECT] });

/** Authorization code + PKCE with openid-client as the relying party, on the store `properties()` selects. */
export function codeFlows(_kind: StoreKind, properties: () => Record<string, string>): void {
  describe('authorization code + PKCE with a real relying party (openid-client)', () => {
    let running: RunningApp;
    let config: oidc.Configuration;

    beforeAll(async () => {
      running = await startApp({ clients: [client, queryClient], properties: { ...properties(), 'svc.subject.pairwise-key': PAIRWISE_KEY } });
      config = await oidc.discovery(
        new URL(running.issuer),
        client.client_id,
        undefined,
        oidc.ClientSecretBasic(client.client_secret),
        { execute: [oidc.allowInsecureRequests] },
      );
    });
    afterAll(async () => running.close());

    it('discovers, authorizes with login and consent, exchanges the code and calls UserInfo', async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });

      const { callbackUrl } = await signIn(url.href, { login: 'demo', password: 'demo' });
      expect(callbackUrl.searchParams.get('state')).toBe(state);
      expect(callbackUrl.searchParams.get('iss')).toBe(running.issuer);
      expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));

      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.expires_in).toBe(3600);

      const claims = tokens.claims();
      if (!claims) throw new Error('no ID token');
      expect(claims.iss).toBe(running.issuer);
      expect(claims.aud).toBe(client.client_id);
      expect(claims.sub).toBe(SUB);
      expect(claims.nonce).toBe(nonce);
      expect(claims.exp - claims.iat).toBe(86400);
      expect(claims).not.toHaveProperty('acr');
      expect(claims).not.toHaveProperty('amr');
      expect(claims).not.toHaveProperty('azp');

      const header = JSON.parse(Buffer.from((tokens.id_token as string).split('.')[0] as string, 'base64url').toString()) as { alg: string };
      expect(header.alg).toBe('RS256');

      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      expect(userinfo.sub).toBe(SUB);
    });

    it('puts auth_time in the ID token whenever max_age is sent', async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        max_age: '600',
      });
      const { callbackUrl } = await signIn(url.href);
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, maxAge: 600 });
      expect(tokens.claims()?.auth_time).toEqual(expect.any(Number));
    });

    it('serves a public client (token_endpoint_auth_method none) with PKCE', async () => {
      // A provider of another issuer than the suite's: on a key prefix of its own.
      const store = properties();
      const prefix = store['svc.redis.key-prefix'];
      const running2 = await startApp({
        // subject_type public: the test reads the account id as sub.
        clients: [{ client_id: 'public-rp', token_endpoint_auth_method: 'none', redirect_uris: [redirectUri], subject_type: 'public' }],
        properties: { ...store, ...(prefix ? { 'svc.redis.key-prefix': `${prefix}public:` } : {}) },
      });
      try {
        const publicConfig = await oidc.discovery(new URL(running2.issuer), 'public-rp', undefined, oidc.None(), {
          execute: [oidc.allowInsecureRequests],
        });
        const verifier = oidc.randomPKCECodeVerifier();
        const url = oidc.buildAuthorizationUrl(publicConfig, {
          redirect_uri: redirectUri,
          scope: 'openid',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        });
        const { callbackUrl } = await signIn(url.href, { login: 'demo-basic', password: 'demo-basic' });
        const tokens = await oidc.authorizationCodeGrant(publicConfig, callbackUrl, { pkceCodeVerifier: verifier, idTokenExpected: true });
        expect(tokens.claims()?.sub).toBe('demo-0002');
      } finally {
        await running2.close();
      }
    });

    describe('a redirect URI with a query', () => {
      /** The callback of a flow of `queryClient` that openid-client started, and its verifier. */
      const callback = async (): Promise<{ callbackUrl: URL; verifier: string }> => {
        const queryConfig = await oidc.discovery(new URL(running.issuer), 'query-rp', undefined, oidc.ClientSecretBasic(queryClient.client_secret), { execute: [oidc.allowInsecureRequests] });
        const verifier = oidc.randomPKCECodeVerifier();
        const url = oidc.buildAuthorizationUrl(queryConfig, { redirect_uri: QUERY_REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'q' });
        const { callbackUrl } = await signIn(url.href);
        return { callbackUrl, verifier };
      };

      it('honest: the code arrives beside the registered query, and a token request naming the registered redirect_uri redeems it', async () => {
        const { callbackUrl, verifier } = await callback();
        expect([callbackUrl.searchParams.get('tenant'), callbackUrl.searchParams.get('x'), callbackUrl.searchParams.get('state')]).toEqual(['a/b', '1 2', 'q']);
        const redeemed = await redeemCode(running.issuer, queryClient, callbackUrl.searchParams.get('code') as string, verifier);
        expect([redeemed.status, typeof redeemed.body.id_token]).toEqual([200, 'string']);
      });

      // openid-client 6's authorizationCodeGrant sends the first spelling: the callback URL stripped of every query parameter.
      it('attack: the redirect URI without its query, or with it spelled otherwise, redeems nothing (invalid_grant); the code stays good for the registered one', async () => {
        for (const spelled of ['http://rp.localhost/cb', 'http://rp.localhost/cb?tenant=a/b&x=1%202', 'http://rp.localhost/cb?x=1+2&tenant=a%2Fb']) {
          const { callbackUrl, verifier } = await callback();
          const code = callbackUrl.searchParams.get('code') as string;
          const refused = await redeemCode(running.issuer, { ...queryClient, redirect_uris: [spelled] }, code, verifier);
          const again = await redeemCode(running.issuer, queryClient, code, verifier);
          expect([spelled, refused.status, refused.body.error, refused.body.id_token, again.status]).toEqual([spelled, 400, 'invalid_grant', undefined, 200]);
        }
      });
    });
  });
}
