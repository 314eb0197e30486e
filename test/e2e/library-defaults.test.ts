/**
 * The default requests of relying-party libraries people deploy, sent as raw HTTP, each as its source sends it
 * (docs/relying-party.md, "Relying-party libraries", says what each needs): a browser application on oidc-client-ts,
 * Spring Security, ASP.NET Core, mod_auth_openidc, Auth.js (on oauth4webapi, which it runs) and Keycloak as a broker;
 * then the parameters and registration metadata other libraries add.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { compactDecrypt, decodeJwt, SignJWT } from 'jose';
import * as o from 'oauth4webapi';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { REPLAY_DETECTION_MODEL } from '../../lib/provider/replay-detection.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { authorizationUrl, FormBrowser, pkcePair, signIn, userData } from '../helpers/flow.js';
import { raw } from '../helpers/raw-request.js';
import { registerSigningClient, signingKey } from '../helpers/request-objects.js';
import { encryptionKey, isUnspent, register } from '../helpers/registration.js';

const FORM = 'application/x-www-form-urlencoded';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A registration answer: a confidential client's id and secret, and the rest of its metadata. */
interface Registered {
  client_id: string;
  client_secret: string;
  [name: string]: unknown;
}

describe('relying-party libraries: their default requests', () => {
  let running: RunningApp;
  let store: CountingStore;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store, claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  /** Registers `body` with a fresh initial access token; the answer's metadata. */
  const registered = async (body: Record<string, unknown>): Promise<Registered> => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const answer = await register(running, body, token);
    if (answer.status !== 201) throw new Error(`registration answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body as Registered;
  };

  /** Drives `url` through login and consent in `browser`; the last page (a form_post answer) and its response. */
  const signInToPage = async (url: string, browser = new FormBrowser()): Promise<{ page: string; response?: Response }> => {
    await browser.follow(url, running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    const { response } = await browser.submit('consent-allow', {}, running.baseUrl);
    return { page: browser.lastPage, response };
  };

  /** The hidden inputs of a form_post answer. */
  const postedFields = (page: string): Record<string, string> =>
    Object.fromEntries([...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map(([, k, v]) => [k as string, (v as string).replace(/&amp;/g, '&')]));

  const tokenRequest = async (fields: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, string>; headers: Headers }> => {
    const answer = await fetch(`${running.issuer}/token`, { method: 'POST', headers: { 'content-type': FORM, ...headers }, body: new URLSearchParams(fields).toString() });
    return { status: answer.status, body: (await answer.json()) as Record<string, string>, headers: answer.headers };
  };

  describe('a browser application on oidc-client-ts (react-oidc-context): public client, its own origin', () => {
    const ORIGIN = 'https://spa.example';
    const CALLBACK = `${ORIGIN}/callback`;
    let spa: Registered;

    beforeAll(async () => {
      // No encryption: a page cannot keep a private key, and oidc-client-ts decrypts nothing (docs/relying-party.md).
      spa = await registered({ redirect_uris: [CALLBACK], post_logout_redirect_uris: [`${ORIGIN}/`], token_endpoint_auth_method: 'none' });
    });

    /** oidc-client-ts's signinRedirect with `response_mode: "fragment"`: no nonce for the code flow, PKCE always. */
    const signinRequest = (challenge: string, extra: Record<string, string> = {}): string =>
      authorizationUrl(running.issuer, { client_id: spa.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid profile email', state: 'f4c1e0', code_challenge: challenge, code_challenge_method: 'S256', response_mode: 'fragment', ...extra });

    it('honest: code in the fragment with iss, redeemed from its origin with client_id in the body (CORS), an ID token jwt-decode reads (signed, no user data), and UserInfo as JSON with its sub (preflight and answer allowed for its origin)', async () => {
      const { verifier, challenge } = pkcePair();
      const { callbackUrl } = await signIn(signinRequest(challenge));
      const fragment = new URLSearchParams(callbackUrl.hash.slice(1));
      expect({ search: callbackUrl.search, state: fragment.get('state'), iss: fragment.get('iss') }).toEqual({ search: '', state: 'f4c1e0', iss: running.issuer });

      // TokenClient.exchangeCode: Accept and Content-Type are CORS-safelisted, so the browser sends no preflight.
      const token = await raw(`${running.issuer}/token`, 'POST', { origin: ORIGIN, accept: 'application/json', 'content-type': FORM }, new URLSearchParams({
        grant_type: 'authorization_code', redirect_uri: CALLBACK, code: fragment.get('code') as string, code_verifier: verifier, client_id: spa.client_id,
      }).toString());
      expect({ status: token.status, origin: token.headers['access-control-allow-origin'] }).toEqual({ status: 200, origin: ORIGIN });
      const { id_token: idToken, access_token: accessToken } = JSON.parse(token.text) as Record<string, string>;
      const claims = decodeJwt(idToken as string);
      expect({ parts: idToken?.split('.').length, userData: userData(claims), sub: typeof claims.sub }).toEqual({ parts: 3, userData: {}, sub: 'string' });

      // UserInfoService.getClaims: a Bearer header, so a preflight first.
      const preflight = await raw(`${running.issuer}/userinfo`, 'OPTIONS', { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' });
      expect({ status: preflight.status, origin: preflight.headers['access-control-allow-origin'], headers: preflight.headers['access-control-allow-headers'] }).toEqual({ status: 204, origin: ORIGIN, headers: 'authorization' });
      const userinfo = await raw(`${running.issuer}/userinfo`, 'GET', { origin: ORIGIN, accept: 'application/json, application/jwt', authorization: `Bearer ${accessToken}` });
      expect({ status: userinfo.status, origin: userinfo.headers['access-control-allow-origin'], type: userinfo.headers['content-type'], body: JSON.parse(userinfo.text) as unknown })
        .toEqual({ status: 200, origin: ORIGIN, type: 'application/json; charset=utf-8', body: { sub: claims.sub } });
    });

    it('honest: its silent renew in the frame (prompt=none, and the ID token as hint with includeIdTokenInSilentRenew) gets a fresh code; its signoutRedirect (the ID token as hint, post_logout_redirect_uri) brings her back', async () => {
      const browser = new FormBrowser();
      const first = pkcePair();
      const { callbackUrl } = await signIn(signinRequest(first.challenge), { browser });
      const code = new URLSearchParams(callbackUrl.hash.slice(1)).get('code') as string;
      const { body } = await tokenRequest({ grant_type: 'authorization_code', redirect_uri: CALLBACK, code, code_verifier: first.verifier, client_id: spa.client_id });

      const renew = await browser.follow(signinRequest(pkcePair().challenge, { prompt: 'none', id_token_hint: body.id_token as string }), running.baseUrl);
      const renewed = new URLSearchParams(new URL(renew.leftTo as string).hash.slice(1));
      expect({ code: renewed.has('code'), state: renewed.get('state'), error: renewed.get('error') }).toEqual({ code: true, state: 'f4c1e0', error: null });

      await browser.follow(`${running.issuer}/logout?${new URLSearchParams({ id_token_hint: body.id_token as string, post_logout_redirect_uri: `${ORIGIN}/`, state: 'so-1' }).toString()}`, running.baseUrl);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, running.baseUrl);
      expect(done.leftTo).toBe(`${ORIGIN}/?state=so-1`);
    });
  });

  describe('Spring Security OAuth2 Client', () => {
    const CALLBACK = 'https://app.example/login/oauth2/code/svc';

    /** OAuth2AuthorizationRequestRedirectFilter's request, in its order; PKCE only with its customizer (6.3+) or requireProofKey (6.5+). */
    const springRequest = (clientId: string, pkce?: string): string =>
      authorizationUrl(running.issuer, { response_type: 'code', client_id: clientId, scope: 'openid profile email', state: 'sp-state', redirect_uri: CALLBACK, nonce: 'sp-nonce', ...(pkce ? { code_challenge: pkce, code_challenge_method: 'S256' } : {}) });

    it('its confidential client without PKCE is sent back invalid_request naming PKCE, with its state (C3: PKCE for every client)', async () => {
      const client = await registered({ redirect_uris: [CALLBACK] });
      const answer = await fetch(springRequest(client.client_id), { redirect: 'manual' });
      const back = new URL(answer.headers.get('location') as string);
      expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'invalid_request', error_description: 'Authorization Server policy requires PKCE to be used for this request', state: 'sp-state', iss: running.issuer });
    });

    it('honest: registered for ID token encryption only, it gets the claims in the ID token (client_secret_basic with form-encoded credentials, nonce), and UserInfo as JSON, which its DefaultOAuth2UserService reads', async () => {
      const key = await encryptionKey('RSA-OAEP-256');
      const client = await registered({ redirect_uris: [CALLBACK], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } });
      const { verifier, challenge } = pkcePair();
      const { callbackUrl } = await signIn(springRequest(client.client_id, challenge));
      const credentials = Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64');
      const token = await tokenRequest(
        { grant_type: 'authorization_code', code: callbackUrl.searchParams.get('code') as string, redirect_uri: CALLBACK, code_verifier: verifier },
        { authorization: `Basic ${credentials}`, accept: 'application/json;charset=UTF-8', 'content-type': `${FORM};charset=UTF-8` },
      );
      expect(token.status).toBe(200);
      const { plaintext } = await compactDecrypt(token.body.id_token as string, key.privateKey);
      expect(decodeJwt(new TextDecoder().decode(plaintext))).toMatchObject({ nonce: 'sp-nonce', email: 'erika.mustermann@example.com' });

      const userinfo = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${token.body.access_token}`, accept: 'application/json' } });
      expect({ type: userinfo.headers.get('content-type'), body: Object.keys((await userinfo.json()) as object) }).toEqual({ type: 'application/json; charset=utf-8', body: ['sub'] });
    });

    describe('private_key_jwt (NimbusJwtClientAuthenticationParametersConverter: aud is the token endpoint)', () => {
      /** A client assertion as Spring Security (and Keycloak's broker) makes it: iss = sub = client id, aud = the token endpoint, exp in 60 s. */
      const springAssertion = async (clientId: string, kid: string, key: CryptoKey, claims: Record<string, unknown> = {}): Promise<string> => {
        const now = Math.floor(Date.now() / 1000);
        return new SignJWT({ iss: clientId, sub: clientId, aud: `${running.issuer}/token`, jti: crypto.randomUUID(), iat: now, exp: now + 60, ...claims })
          .setProtectedHeader({ alg: 'RS256', kid }).sign(key);
      };
      const presented = async (clientId: string, assertion: string): Promise<{ status: number; body: Record<string, string> }> => {
        const { status, body } = await tokenRequest({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: CALLBACK, code_verifier: pkcePair().verifier, client_id: clientId, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
        return { status, body };
      };

      it('its assertion, signed with the registered key, is refused 401 invalid_client with a description naming the aud rule, not "client authentication failed"; its jti is not stored', async () => {
        const client = await registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt', redirect_uris: [CALLBACK] }, 'RS256');
        const before = store.writes(REPLAY_DETECTION_MODEL);
        const answer = await presented(client.metadata.client_id, await springAssertion(client.metadata.client_id, client.kid, client.signingKey));
        expect(answer).toEqual({ status: 401, body: { error: 'invalid_client', error_description: `the client assertion audience (aud) must be the issuer identifier ${running.issuer}, as a string` } });
        expect(store.writes(REPLAY_DETECTION_MODEL)).toBe(before);
        // With the issuer as its aud (Spring's jwtClientAssertionCustomizer), the same client authenticates: only the made-up code is refused.
        expect((await presented(client.metadata.client_id, await springAssertion(client.metadata.client_id, client.kid, client.signingKey, { aud: running.issuer }))).body.error).toBe('invalid_grant');
      });

      it('attack: the same assertion signed by a key the client never registered learns no reason (client authentication failed), and stores nothing', async () => {
        const client = await registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt', redirect_uris: [CALLBACK] }, 'RS256');
        const stranger = await signingKey('RS256', client.kid);
        const before = store.writes(REPLAY_DETECTION_MODEL);
        for (const claims of [{}, { aud: running.issuer }, { exp: Math.floor(Date.now() / 1000) + 7200 }]) {
          const answer = await presented(client.metadata.client_id, await springAssertion(client.metadata.client_id, client.kid, stranger.privateKey, claims));
          expect(answer).toEqual({ status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } });
        }
        expect(store.writes(REPLAY_DETECTION_MODEL)).toBe(before);
      });

      it('an assertion of its own key expiring in two hours is refused with a description naming the one-hour rule', async () => {
        const client = await registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt', redirect_uris: [CALLBACK] }, 'RS256');
        const answer = await presented(client.metadata.client_id, await springAssertion(client.metadata.client_id, client.kid, client.signingKey, { aud: running.issuer, exp: Math.floor(Date.now() / 1000) + 7200 }));
        expect(answer).toEqual({ status: 401, body: { error: 'invalid_client', error_description: 'client assertion expires more than 3600 seconds from now' } });
      });
    });
  });

  describe('ASP.NET Core OpenIdConnect handler', () => {
    const CALLBACK = 'https://app.example/signin-oidc';
    const SIGNED_OUT = 'https://app.example/signout-callback-oidc';
    /** Its protected state is a kilobyte or two of base64url. */
    const STATE = `CfDJ8${'Ab9_'.repeat(300)}`;
    const TELEMETRY = { 'x-client-SKU': 'ID_NET9_0', 'x-client-ver': '8.1.0.0' };
    let client: Registered;

    beforeAll(async () => {
      client = await registered({ redirect_uris: [CALLBACK], post_logout_redirect_uris: [SIGNED_OUT] });
    });

    it('its default response_type=id_token is answered unsupported_response_type, form-posted to its callback with its state', async () => {
      const answer = await fetch(authorizationUrl(running.issuer, { client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'id_token', scope: 'openid profile', response_mode: 'form_post', nonce: 'n', state: STATE, ...TELEMETRY }));
      const page = await answer.text();
      expect({ action: /<form method="post" action="([^"]+)"/.exec(page)?.[1], fields: postedFields(page) })
        .toEqual({ action: CALLBACK, fields: { error: 'unsupported_response_type', error_description: 'unsupported response_type requested', state: STATE, iss: running.issuer } });
    });

    it('honest: .NET 9 with ResponseType=code pushes (PAR offered), its secret in the body though registered client_secret_basic, telemetry parameters, nonce, response_mode=form_post: the code comes back as a form the page may submit, and redeems', async () => {
      const { verifier, challenge } = pkcePair();
      const pushed = await fetch(`${running.issuer}/par`, {
        method: 'POST',
        headers: { 'content-type': FORM },
        body: new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid profile', code_challenge: challenge, code_challenge_method: 'S256', response_mode: 'form_post', nonce: 'n'.repeat(120), state: STATE, ...TELEMETRY, client_secret: client.client_secret }).toString(),
      });
      const { request_uri: requestUri } = (await pushed.json()) as Record<string, string>;
      expect({ status: pushed.status, type: pushed.headers.get('content-type') }).toEqual({ status: 201, type: 'application/json; charset=utf-8' });

      const { page, response } = await signInToPage(authorizationUrl(running.issuer, { client_id: client.client_id, request_uri: requestUri }));
      const fields = postedFields(page);
      expect({ action: /<form method="post" action="([^"]+)"/.exec(page)?.[1], state: fields.state, iss: fields.iss }).toEqual({ action: CALLBACK, state: STATE, iss: running.issuer });
      // The page submits itself by an inline script, which our Content-Security-Policy lets run by its hash; no form-action limits the post.
      const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1] as string;
      const csp = response?.headers.get('content-security-policy') ?? '';
      expect({ hashed: csp.includes(`'sha256-${Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(script))).toString('base64')}'`), formAction: csp.includes('form-action') }).toEqual({ hashed: true, formAction: false });

      const token = await tokenRequest({ client_id: client.client_id, client_secret: client.client_secret, code: fields.code as string, grant_type: 'authorization_code', redirect_uri: CALLBACK, ...TELEMETRY, code_verifier: verifier });
      expect({ status: token.status, nonce: decodeJwt(token.body.id_token as string).nonce }).toEqual({ status: 200, nonce: 'n'.repeat(120) });
    });

    it('its sign-out without SaveTokens names neither hint nor client: she is asked and signed out but stays with the provider; with ClientId set in OnRedirectToIdentityProviderForSignOut she returns with its state', async () => {
      for (const [extra, expected] of [[{}, undefined], [{ client_id: client.client_id }, `${SIGNED_OUT}?state=so-state`]] as const) {
        const browser = new FormBrowser();
        await signInToPage(authorizationUrl(running.issuer, { client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', response_mode: 'form_post', state: 's' }), browser);
        await browser.follow(`${running.issuer}/logout?${new URLSearchParams({ post_logout_redirect_uri: SIGNED_OUT, state: 'so-state', ...TELEMETRY, ...extra }).toString()}`, running.baseUrl);
        const done = await browser.submit('op.logoutForm', { logout: 'yes' }, running.baseUrl);
        expect({ extra, back: done.leftTo }).toEqual({ extra, back: expected });
      }
    });
    it('honest: with SaveTokens and ID token encryption, its sign-out sends the ID token it saved, the JWE as received, as id_token_hint without client_id: she returns with its state', async () => {
      const key = await encryptionKey('RSA-OAEP-256');
      const encrypting = await registered({ redirect_uris: [CALLBACK], post_logout_redirect_uris: [SIGNED_OUT], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } });
      const browser = new FormBrowser();
      const { verifier, challenge } = pkcePair();
      const { page } = await signInToPage(authorizationUrl(running.issuer, { client_id: encrypting.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid profile', code_challenge: challenge, code_challenge_method: 'S256', response_mode: 'form_post', nonce: 'n', state: 's', ...TELEMETRY }), browser);
      const token = await tokenRequest({ client_id: encrypting.client_id, client_secret: encrypting.client_secret, code: postedFields(page).code as string, grant_type: 'authorization_code', redirect_uri: CALLBACK, code_verifier: verifier });
      const saved = token.body.id_token as string;
      expect({ status: token.status, parts: saved.split('.').length }).toEqual({ status: 200, parts: 5 });
      await browser.follow(`${running.issuer}/logout?${new URLSearchParams({ post_logout_redirect_uri: SIGNED_OUT, id_token_hint: saved, state: 'so-saved', ...TELEMETRY }).toString()}`, running.baseUrl, { headers: { accept: 'text/html' } });
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, running.baseUrl);
      expect(done.leftTo).toBe(`${SIGNED_OUT}?state=so-saved`);
    });
  });

  describe('mod_auth_openidc', () => {
    const REDIRECT = 'https://app.example.org/protected/redirect_uri';
    /** oidc_metadata_client_register's body: every flow it knows, three grants, its logout and login URIs. */
    const modAuthOpenidcRegistration = {
      client_name: 'mod_auth_openidc',
      redirect_uris: [REDIRECT],
      response_types: ['code', 'id_token', 'id_token token', 'code id_token', 'code token', 'code id_token token'],
      grant_types: ['authorization_code', 'implicit', 'refresh_token'],
      initiate_login_uri: REDIRECT,
      frontchannel_logout_uri: `${REDIRECT}?logout=get`,
      backchannel_logout_uri: `${REDIRECT}?logout=backchannel`,
    };

    it('its dynamic registration is refused naming the grant, the token kept; narrowed by its registration_endpoint_json it registers, its front- and back-channel logout URIs left out of the answer', async () => {
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      const refused = await register(running, modAuthOpenidcRegistration, token);
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 400, body: { error: 'invalid_client_metadata', error_description: 'grant_types: "implicit" is not offered: authorization_code is the only grant (no refresh tokens: C3)' } });
      const grantsOnly = await register(running, { ...modAuthOpenidcRegistration, grant_types: ['authorization_code'] }, token);
      expect(grantsOnly.body).toEqual({ error: 'invalid_client_metadata', error_description: "response_types can only contain 'code'" });
      expect(await isUnspent(running, token)).toBe(true);

      const narrowed = await register(running, { ...modAuthOpenidcRegistration, grant_types: ['authorization_code'], response_types: ['code'] }, token);
      expect(narrowed.status).toBe(201);
      expect({ initiate: narrowed.body.initiate_login_uri, front: narrowed.body.frontchannel_logout_uri, back: narrowed.body.backchannel_logout_uri }).toEqual({ initiate: REDIRECT, front: undefined, back: undefined });
    });

    it('honest: its authorization response (query, its default) carries iss equal to the issuer, as its iss check wants', async () => {
      const client = await registered({ redirect_uris: [REDIRECT] });
      const { callbackUrl } = await signIn(authorizationUrl(running.issuer, { response_type: 'code', scope: 'openid', client_id: client.client_id, state: 'm', redirect_uri: REDIRECT, nonce: 'n', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }));
      expect(callbackUrl.searchParams.get('iss')).toBe(running.issuer);
    });
  });

  describe('Auth.js (its OIDC provider on oauth4webapi)', () => {
    const CALLBACK = 'https://app.example/api/auth/callback/svc';

    /** Auth.js's sign-in: discovery, PKCE, state and nonce checks, client_secret_basic, the ID token's claims as the profile. */
    const authJsSignIn = async (client: Registered): Promise<{ claims?: o.IDToken; error?: string }> => {
      const as = await o.processDiscoveryResponse(new URL(running.issuer), await o.discoveryRequest(new URL(running.issuer), { [o.allowInsecureRequests]: true, algorithm: 'oidc' }));
      const verifier = o.generateRandomCodeVerifier();
      const [state, nonce] = [o.generateRandomState(), o.generateRandomNonce()];
      const url = authorizationUrl(running.issuer, { client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid profile email', code_challenge: await o.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce });
      const { callbackUrl } = await signIn(url);
      const oauthClient: o.Client = { client_id: client.client_id };
      const params = o.validateAuthResponse(as, oauthClient, callbackUrl, state);
      const response = await o.authorizationCodeGrantRequest(as, oauthClient, o.ClientSecretBasic(client.client_secret), params, CALLBACK, verifier, { [o.allowInsecureRequests]: true });
      try {
        return { claims: o.getValidatedIdTokenClaims(await o.processAuthorizationCodeResponse(as, oauthClient, response, { expectedNonce: nonce, requireIdToken: true })) };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };

    it('honest: a client without encryption signs in (iss of the response checked, state, nonce, PKCE); the ID token holds sub and no user data', async () => {
      const { claims, error } = await authJsSignIn(await registered({ redirect_uris: [CALLBACK] }));
      expect({ error, sub: typeof claims?.sub, userData: userData((claims ?? {}) as Record<string, unknown>) }).toEqual({ error: undefined, sub: 'string', userData: {} });
    });

    it('an encrypted ID token stops it: oauth4webapi decrypts only with a jweDecrypt option, which Auth.js does not pass', async () => {
      const key = await encryptionKey('RSA-OAEP-256');
      const { error } = await authJsSignIn(await registered({ redirect_uris: [CALLBACK], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } }));
      expect(error).toBe('JWE decryption is not configured');
    });
  });

  it('honest: Keycloak as a broker (client_secret_post, scope openid, state and nonce, PKCE switched on) signs in', async () => {
    const callback = 'https://keycloak.example/realms/acme/broker/svc/endpoint';
    const client = await registered({ redirect_uris: [callback], token_endpoint_auth_method: 'client_secret_post' });
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(authorizationUrl(running.issuer, { scope: 'openid', state: 'kc-state', response_type: 'code', client_id: client.client_id, redirect_uri: callback, nonce: 'kc-nonce', code_challenge: challenge, code_challenge_method: 'S256' }));
    const token = await tokenRequest({ code: callbackUrl.searchParams.get('code') as string, grant_type: 'authorization_code', redirect_uri: callback, code_verifier: verifier, client_id: client.client_id, client_secret: client.client_secret });
    expect({ status: token.status, nonce: decodeJwt(token.body.id_token as string).nonce }).toEqual({ status: 200, nonce: 'kc-nonce' });
  });

  it('honest: parameters other libraries add (access_type, include_granted_scopes, resource, audience, claims_locales, display=page, ui_locales, login_hint, acr_values, x-client-SKU) change nothing: the code is issued and redeems', async () => {
    const callback = 'https://app.example/cb';
    const client = await registered({ redirect_uris: [callback] });
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(authorizationUrl(running.issuer, {
      client_id: client.client_id, redirect_uri: callback, response_type: 'code', scope: 'openid email', state: 'x', code_challenge: challenge, code_challenge_method: 'S256',
      access_type: 'offline', include_granted_scopes: 'true', resource: 'https://api.example', audience: 'https://api.example', claims_locales: 'de', display: 'page', ui_locales: 'de-DE en', login_hint: 'erika@example.com', acr_values: 'urn:mace:incommon:iap:silver', 'x-client-SKU': 'ID_NET9_0',
    }));
    const token = await tokenRequest({ grant_type: 'authorization_code', code: callbackUrl.searchParams.get('code') as string, redirect_uri: callback, code_verifier: verifier, client_id: client.client_id, client_secret: client.client_secret });
    expect({ status: token.status, refresh: token.body.refresh_token, scope: token.body.scope }).toEqual({ status: 200, refresh: undefined, scope: 'openid email' });
  });

  it('honest: registration metadata libraries send registers; what is served is stored, the rest (software_id, software_version, front- and back-channel logout, request_uris) left out of the answer', async () => {
    const metadata = {
      redirect_uris: ['https://rp.example/cb'],
      contacts: ['ops@rp.example'],
      logo_uri: 'https://rp.example/logo.png',
      tos_uri: 'https://rp.example/tos',
      policy_uri: 'https://rp.example/privacy',
      client_uri: 'https://rp.example/',
      post_logout_redirect_uris: ['https://rp.example/bye'],
      default_max_age: 3600,
      require_auth_time: true,
      initiate_login_uri: 'https://rp.example/login',
    };
    const unserved = {
      software_id: '4NRB1-0XZABZI9E6-5SM3R',
      software_version: '2.1.0',
      frontchannel_logout_uri: 'https://rp.example/fc',
      backchannel_logout_uri: 'https://rp.example/bc',
      request_uris: ['https://rp.example/request.jwt'],
    };
    const answer = await registered({ ...metadata, ...unserved });
    expect(answer).toMatchObject(metadata);
    for (const name of Object.keys(unserved)) expect({ name, value: answer[name] }).toEqual({ name, value: undefined });

    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(authorizationUrl(running.issuer, { client_id: answer.client_id, redirect_uri: 'https://rp.example/cb', response_type: 'code', scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }));
    const token = await tokenRequest({ grant_type: 'authorization_code', code: callbackUrl.searchParams.get('code') as string, redirect_uri: 'https://rp.example/cb', code_verifier: verifier, client_id: answer.client_id, client_secret: answer.client_secret });
    expect(decodeJwt(token.body.id_token as string).auth_time).toEqual(expect.any(Number));
  });

  it('refuses metadata it cannot serve with a message naming the field, the initial access token kept', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ initiate_login_uri: 'http://rp.example/login' }, 'initiate_login_uri must be a https uri'],
      [{ contacts: ['not an address'] }, 'contacts can only contain email addresses'],
      [{ default_max_age: '3600' }, 'default_max_age must be a non-negative integer'],
      [{ token_endpoint_auth_method: 'client_secret_jwt' }, "token_endpoint_auth_method must be 'client_secret_basic', 'client_secret_post', 'private_key_jwt', or 'none'"],
    ];
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    for (const [extra, description] of cases) {
      const answer = await register(running, { redirect_uris: ['https://rp.example/cb'], ...extra }, token);
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: { error: 'invalid_client_metadata', error_description: description } });
    }
    expect(await isUnspent(running, token)).toBe(true);
  });
});
