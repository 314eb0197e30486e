import { describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { confidentialClient } from '../helpers/app.js';
import { registerClient } from '../helpers/clients.js';
import { loginAttempts, pkcePair, runCodeFlow } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';
import { manage, register } from '../helpers/registration.js';
import { appPerSuite } from '../helpers/suite-app.js';

const client = confidentialClient();
const poster = confidentialClient({ client_id: 'post-rp', token_endpoint_auth_method: 'client_secret_post' });
const OPERATOR = basicAuthorization('operator', 'challenge-password-123');

/**
 * RFC 9110 15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header field". Every 401 the
 * product answers on its routes, walked: each carries its challenge (Bearer at UserInfo and registration, Basic for a
 * client refused at /token or /par and for the management API). The login page after a failed sign-in has no HTTP
 * authentication scheme to name (an HTML form): it is 403, credentials given and judged insufficient (15.5.4).
 */
describe('every 401 carries a WWW-Authenticate challenge (RFC 9110 15.5.2)', () => {
  const running = appPerSuite({
    clients: [client, poster],
    properties: { 'svc.management.user': 'operator', 'svc.management.password': 'challenge-password-123', 'svc.proxy': true },
  });
  const operator = managementCalls(running, OPERATOR);

  const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${running.issuer}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
  const grant = { grant_type: 'authorization_code', code: 'nope', code_verifier: pkcePair().verifier, redirect_uri: 'http://rp.localhost/cb' };
  const push = { response_type: 'code', scope: 'openid', redirect_uri: 'http://rp.localhost/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
  const wrongBasic = { authorization: basicAuthorization(client.client_id, 'wrong', { formEncoded: true }) };

  /** Each request that may answer 401, by name: what it answered. */
  const walk = async (): Promise<[string, Response | { status: number; headers: Headers }][]> => {
    const signIn = async (login: string, password: string, address: string): Promise<Response> => (await loginAttempts(running, client)).attempt(login, password, address);
    const disabled = await registerClient(running, 'plain');
    const live = await runCodeFlow(running.issuer, disabled.metadata, { skipUserinfo: true });
    expect((await operator('POST', `/oidc/v1/management/clients/${disabled.metadata.client_id}/disable`)).status).toBe(200);
    const { token: spent } = await issueInitialAccessToken(running.app.svc.provider);
    expect((await register(running, { redirect_uris: ['https://rp.example/cb'] }, spent)).status).toBe(201);
    const other = await registerClient(running, 'plain');
    const stranger = await registerClient(running, 'plain');
    const clientBasic = { authorization: basicAuthorization(String(disabled.metadata.client_id), String(disabled.metadata.client_secret), { formEncoded: true }) };
    return [
      ['the login page after a wrong password', await signIn('demo', 'wrong', '192.0.2.10')],
      ['the login page after an unknown login', await signIn('nobody-here', 'wrong', '192.0.2.11')],
      ['the login page after an empty password', await signIn('demo', '', '192.0.2.12')],
      ['UserInfo without an access token', await fetch(`${running.issuer}/userinfo`)],
      ['UserInfo with an unknown access token', await fetch(`${running.issuer}/userinfo`, { headers: bearer('nope') })],
      ['UserInfo by POST with an unknown access token in the body', await form('/userinfo', { access_token: 'nope' })],
      ['UserInfo with a live access token of a disabled client', await fetch(`${running.issuer}/userinfo`, { headers: bearer(live.tokens.access_token) })],
      ['/token with a wrong Basic secret', await form('/token', grant, wrongBasic)],
      ['/token with a wrong client_secret_post secret', await form('/token', { ...grant, client_id: poster.client_id, client_secret: 'wrong' })],
      ['/token without client authentication', await form('/token', { ...grant, client_id: poster.client_id })],
      ['/token for a disabled client', await form('/token', grant, clientBasic)],
      ['/par with a wrong Basic secret', await form('/par', push, wrongBasic)],
      ['/par without client authentication', await form('/par', { ...push, client_id: poster.client_id })],
      ['/par for a disabled client', await form('/par', push, clientBasic)],
      ['introspection (not served)', await form('/token/introspection', { token: 'nope' }, wrongBasic)],
      ['revocation (not served)', await form('/token/revocation', { token: 'nope' }, wrongBasic)],
      ['registration without an initial access token', await fetch(`${running.issuer}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"redirect_uris":["https://rp.example/cb"]}' })],
      ['registration with an unknown initial access token', await fetch(`${running.issuer}/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer('nope') }, body: '{"redirect_uris":["https://rp.example/cb"]}' })],
      ['registration with a spent initial access token', await register(running, { redirect_uris: ['https://rp.example/cb'] }, spent)],
      ['client configuration with an unknown registration access token', await manage(String(other.metadata.registration_client_uri), 'GET', 'nope')],
      ['client configuration with another client\'s registration access token', await manage(String(other.metadata.registration_client_uri), 'GET', String(stranger.metadata.registration_access_token))],
      ['management without credentials', await operator('GET', '/oidc/v1/management/clients', { auth: null })],
      ['management with a wrong password', await operator('POST', '/oidc/v1/management/invite_client', { auth: basicAuthorization('operator', 'wrong') })],
      ['an initial access token request with a wrong password', await operator('POST', '/oidc/v1/management/initial-access-tokens', { auth: basicAuthorization('operator', 'wrong') })],
    ];
  };

  it('walks every 401 of the product: each names its scheme; the failed sign-in\'s page is 403, with no challenge to give', async () => {
    const answers = (await walk()).map(([name, answer]) => [name, answer.status, answer.headers.get('www-authenticate')?.split(' ')[0] ?? null] as const);
    expect(answers.filter(([, status, scheme]) => status === 401 && scheme === null)).toEqual([]);
    const page = (name: string) => [name, 403, null];
    const bearer401 = (name: string) => [name, 401, 'Bearer'];
    const basic401 = (name: string) => [name, 401, 'Basic'];
    expect(answers).toEqual([
      page('the login page after a wrong password'),
      page('the login page after an unknown login'),
      page('the login page after an empty password'),
      bearer401('UserInfo without an access token'),
      bearer401('UserInfo with an unknown access token'),
      bearer401('UserInfo by POST with an unknown access token in the body'),
      bearer401('UserInfo with a live access token of a disabled client'),
      basic401('/token with a wrong Basic secret'),
      basic401('/token with a wrong client_secret_post secret'),
      basic401('/token without client authentication'),
      basic401('/token for a disabled client'),
      basic401('/par with a wrong Basic secret'),
      basic401('/par without client authentication'),
      basic401('/par for a disabled client'),
      ['introspection (not served)', 404, null],
      ['revocation (not served)', 404, null],
      bearer401('registration without an initial access token'),
      bearer401('registration with an unknown initial access token'),
      bearer401('registration with a spent initial access token'),
      bearer401('client configuration with an unknown registration access token'),
      bearer401('client configuration with another client\'s registration access token'),
      basic401('management without credentials'),
      basic401('management with a wrong password'),
      basic401('an initial access token request with a wrong password'),
    ]);
  });
});
