import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeProtectedHeader, type JWK } from 'jose';
import * as oidc from 'openid-client';

import { generateProviderKeys, type PrivateJwks } from '../../lib/index.js';
import { rotateKeysFile } from '../../lib/provider/key-rotation.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';

/*
 * A static client names the algs it gets its ID tokens and UserInfo signed with; a start refuses keys that sign none of
 * them (checkStaticClients). A reload of svc.keys.file must refuse them the same way and keep the keys in use: accepted,
 * every sign-in of that client ended on an error page until the next restart, which then failed.
 */
describe('a keys file reloaded without a key for an alg a static client is registered with', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-reload-clients-'));
  const keysFile = join(dir, 'keys.json');
  const ecClient = confidentialClient({ client_id: 'es256-rp', id_token_signed_response_alg: 'ES256' });
  const psClient = confidentialClient({ client_id: 'ps256-rp', userinfo_signed_response_alg: 'PS256', allow_unencrypted_userinfo: true });
  let original: PrivateJwks;
  let running: RunningApp;

  /** The alg and kid of the ID token a real relying party receives for `client` and verifies against the JWKS. */
  const signedFor = async (client: typeof ecClient): Promise<{ alg: string | undefined; kid: string | undefined }> => {
    const { tokens } = await runCodeFlow(running.issuer, client, { skipUserinfo: true, configure: (config) => oidc.enableNonRepudiationChecks(config) });
    const { alg, kid } = decodeProtectedHeader(String(tokens.id_token));
    return { alg, kid };
  };
  const publishedKids = async (): Promise<string[]> => ((await (await fetch(`${running.issuer}/jwks`)).json()) as { keys: JWK[] }).keys.map((k) => String(k.kid));
  const write = (keys: JWK[]): void => writeFileSync(keysFile, JSON.stringify({ keys }), { mode: 0o600 });
  const ecSigning = (k: JWK): boolean => k.kty === 'EC' && k.use === 'sig';

  beforeAll(async () => {
    original = await generateProviderKeys();
    write(original.keys);
    running = await startApp({ properties: { 'svc.keys.file': keysFile }, clients: [ecClient, psClient] });
  });
  afterAll(async () => running.close());

  it('attack: without the EC signing key (ES256), or with the RSA key labelled "alg": "RS256" (no PS256), the reload is refused naming the client, and the keys in use go on signing for it', async () => {
    const before = await publishedKids();
    const ecKid = original.keys.find(ecSigning)?.kid;
    const edits: Array<[JWK[], string]> = [
      [original.keys.filter((k) => !ecSigning(k)), `static client "es256-rp": id_token_signed_response_alg must be`],
      [original.keys.map((k) => (k.kty === 'RSA' && k.use === 'sig' ? { ...k, alg: 'RS256' } : k)), `static client "ps256-rp": userinfo_signed_response_alg must be`],
    ];
    try {
      for (const [keys, reason] of edits) {
        write(keys);
        const reload = await running.app.svc.reloadKeys();
        expect(reload).toEqual({ reloaded: false, reason: expect.stringContaining(reason) });
        expect(await publishedKids()).toEqual(before);
        expect(await signedFor(ecClient)).toEqual({ alg: 'ES256', kid: ecKid });
      }
    } finally {
      write(original.keys);
    }
  });

  it('honest: a rotated file (a new key of every kind) reloads, and the client gets its ID tokens signed ES256 by the new key', async () => {
    const t = Math.floor(Date.now() / 1000);
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    const reload = await running.app.svc.reloadKeys();
    expect(reload.reloaded).toBe(true);
    expect(reload.signing?.ES256).not.toBe(original.keys.find(ecSigning)?.kid);
    expect(await signedFor(ecClient)).toEqual({ alg: 'ES256', kid: reload.signing?.ES256 });
  });
});
