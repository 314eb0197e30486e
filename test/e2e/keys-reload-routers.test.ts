import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { generateProviderKeys } from '../../lib/index.js';
import { rotateKeysFile } from '../../lib/provider/key-rotation.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, runCodeFlow } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';
import { register } from '../helpers/registration.js';

const USER = 'operator';
const PASSWORD = 'reload-routers-password-123';

/*
 * The interaction pages and the management toolbox are built once, with the provider of the start; a key reload
 * mounts a new provider for the protocol routes only. What they do with theirs (interactionDetails/Result, Grant,
 * Client, InitialAccessToken) is store and cookie work, whose keys a reload keeps: nothing they serve is signed.
 */
describe('after a provider key reload, what the interaction pages and the toolbox served is issued under the new keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-reload-routers-'));
  const keysFile = join(dir, 'keys.json');
  const rp = confidentialClient();
  let running: RunningApp;

  beforeAll(async () => {
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    running = await startApp({ properties: { 'svc.keys.file': keysFile, 'svc.management.user': USER, 'svc.management.password': PASSWORD }, clients: [rp] });
  });
  afterAll(async () => running.close());

  /** The ID token's kid, once it verifies against the JWKS the provider publishes now. */
  async function verifiedKid(idToken: string, client: ClientMetadata): Promise<string | undefined> {
    const published = (await (await fetch(`${running.issuer}/jwks`)).json()) as JSONWebKeySet;
    await jwtVerify(idToken, createLocalJWKSet(published), { issuer: running.issuer, audience: client.client_id });
    return decodeProtectedHeader(idToken).kid;
  }

  it('a sign-in begun before the reload and consented after it, and a client registered with a toolbox token issued after it: ID tokens signed by the new key', async () => {
    const before = String((await runCodeFlow(running.issuer, rp, { skipUserinfo: true })).tokens.id_token);
    const oldKid = await verifiedKid(before, rp);

    // Her login page and consent page are served before the reload.
    const browser = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    await browser.follow(codeFlowUrl(running.issuer, rp, { code_challenge: challenge }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');

    const t = Math.floor(Date.now() / 1000);
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    const reload = await running.app.svc.reloadKeys();
    expect(reload.reloaded).toBe(true);
    const newKid = reload.signing?.RS256;
    expect(newKid).toEqual(expect.any(String));
    expect(newKid).not.toBe(oldKid);

    const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
    const code = new URL(String(allowed.leftTo)).searchParams.get('code');
    const token = await redeemCode(running.issuer, rp, String(code), verifier);
    expect(token.status).toBe(200);
    expect(await verifiedKid(String(token.body.id_token), rp)).toBe(newKid);

    const issued = await managementCalls(running, `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`)('POST', '/oidc/v1/management/initial-access-tokens');
    expect(issued.status).toBe(201);
    const registered = await register(running, { redirect_uris: ['https://after-reload.example/cb'] }, String(issued.body.initial_access_token));
    expect(registered.status).toBe(201);
    const client = registered.body as unknown as ClientMetadata;
    const after = await runCodeFlow(running.issuer, client, { skipUserinfo: true });
    expect(await verifiedKid(String(after.tokens.id_token), client)).toBe(newKid);
  });
});
