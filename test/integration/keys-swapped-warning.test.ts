import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';

import { generateProviderKeys } from '../../lib/index.js';
import { rotateKeysFile } from '../../lib/provider/key-rotation.js';
import type { StatefulJwk } from '../../lib/provider/key-states.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';

/*
 * keys rotate, with a reload after each step, publishes a key before it signs and keeps it published until every ID
 * token it signed has expired. A reload that skips that (a step's reload missed, a hand edit, a file copied from
 * elsewhere, or a compromised key replaced at once) is accepted, and must say what relying parties will meet.
 */
describe('a keys reload that swaps the signing keys without the rotation steps', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-keys-swapped-'));
  const keysFile = join(dir, 'keys.json');
  const rp = confidentialClient();
  const { logger, lines } = capturingLogger();
  let running: RunningApp;
  /** The ID token a real relying party (openid-client, its signature verified against the JWKS) receives. */
  const idToken = async (): Promise<string> =>
    String((await runCodeFlow(running.issuer, rp, { skipUserinfo: true, configure: (config) => oidc.enableNonRepudiationChecks(config) })).tokens.id_token);
  const warnings = (): Array<Record<string, unknown>> =>
    lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.e === 'keys_swapped_without_rotation')
      .map(({ dropped, unannounced, fix }) => ({ dropped, unannounced, fix }));
  const signers = (): string[] => {
    const { keys } = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] };
    return keys.filter((k) => k.use === 'sig' && (k.svc_state ?? 'current') === 'current').map((k) => String(k.kid));
  };
  const verifiesNow = async (jwt: string): Promise<boolean> => {
    const published = (await (await fetch(`${running.issuer}/jwks`)).json()) as JSONWebKeySet;
    return jwtVerify(jwt, createLocalJWKSet(published), { issuer: running.issuer, audience: rp.client_id }).then(
      () => true,
      () => false,
    );
  };

  beforeAll(async () => {
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    running = await startApp({ logger, properties: { 'svc.keys.file': keysFile }, clients: [rp] });
  });
  afterAll(async () => running.close());

  it('honest: a whole rotation, reloaded after each step, warns at no step, and the relying party verifies every ID token', async () => {
    const t = Math.floor(Date.now() / 1000);
    for (const [now, step] of [
      [t, 'added'],
      [t + 3601, 'promoted'],
      [t + 3601 + 86_401, 'retired'],
    ] as const) {
      const token = await idToken();
      expect((await rotateKeysFile(keysFile, { now })).step).toBe(step);
      expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
      expect(await verifiesNow(token)).toBe(true);
      expect(signers()).toContain(decodeProtectedHeader(await idToken()).kid);
    }
    expect(warnings()).toEqual([]);
  });

  it('attack: steps 1 and 2 run with no reload between: the new keys sign without ever having been published, and the reload says which', async () => {
    const t = Math.floor(Date.now() / 1000) + 200_000;
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    expect(warnings()).toEqual([{ dropped: '', unannounced: signers().join(' '), fix: expect.any(String) }]);
    expect(await verifiesNow(await idToken())).toBe(true);
  });

  it('attack: the file replaced by a new one (a compromised key replaced at once): the keys that signed until the reload are gone, and the reload names them and the new ones', async () => {
    const before = signers();
    const token = await idToken();
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    lines.length = 0;
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    expect(warnings()).toEqual([{ dropped: before.join(' '), unannounced: signers().join(' '), fix: expect.any(String) }]);
    expect(await verifiesNow(token)).toBe(false);
  });
});
