import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { simpleParser } from 'mailparser';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules, DEMO_PEOPLE } from '../../lib/demo/claim-modules.js';
import { createPinoLogger } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow, signIn } from '../helpers/flow.js';
import { registerClient } from '../helpers/clients.js';
import { manage, register } from '../helpers/registration.js';
import { deletePrefix, dumpPrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';
import { tokenIn } from '../helpers/smtp.js';

const SENTINELS = { name: 'SENTINEL-leak-name-2b8e', email: 'sentinel-leak-7c1a@example.test', insurance: 'SENTINEL-leak-ins-5d03' };
const MANAGEMENT_PASSWORD = 'SENTINEL-management-password-91f2';

describe('nothing leaked into logs or Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-leak-'));
  const logFile = join(dir, 'log.jsonl');
  const prefix = testPrefix('leak');
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({
      logger: createPinoLogger({ destination: logFile, sync: true, level: 'info' }),
      claimModules: createDemoClaimModules({ 'demo-0001': { ...DEMO_PEOPLE['demo-0001'], name: SENTINELS.name, email: SENTINELS.email, healthInsuranceNumber: SENTINELS.insurance } }),
      properties: {
        'svc.redis.url': SHARED_REDIS_URL,
        'svc.redis.key-prefix': prefix,
        'svc.mail.outbox-dir': join(dir, 'outbox'),
        'svc.management.password': MANAGEMENT_PASSWORD,
      },
    });
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('holds no token, secret, password or claim value after every kind of request', async () => {
    const secrets: Record<string, string> = { ...SENTINELS, management_password: MANAGEMENT_PASSWORD, demo_password_form: 'password=demo' };
    // Invitation → initial access token (mail only).
    const invite = await fetch(`${running.issuer}/management/invite_client?email=leak@example.com`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${MANAGEMENT_PASSWORD}`).toString('base64')}` },
    });
    expect(invite.status).toBe(202);
    const mail = await simpleParser(readFileSync(join(dir, 'outbox', readdirSync(join(dir, 'outbox'))[0] as string)));
    secrets.initial_access_token = tokenIn(mail.text ?? '');
    // Registration, then a read that rotates the registration access token.
    const registered = await register(running, { redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true }, secrets.initial_access_token);
    expect(registered.status).toBe(201);
    secrets.client_secret = registered.body.client_secret as string;
    secrets.rat_1 = registered.body.registration_access_token as string;
    const read = await manage(registered.body.registration_client_uri as string, 'GET', secrets.rat_1);
    expect(read.body.client_secret).toBeUndefined();
    secrets.rat_2 = read.body.registration_access_token as string;
    // Flows: plaintext opt-out client, encrypting client, failed logins.
    const plainFlow = await runCodeFlow(running.issuer, registered.body as unknown as ClientMetadata, { scope: 'openid profile email svc.insurance' });
    expect(plainFlow.claims.name).toBe(SENTINELS.name);
    secrets.code = plainFlow.code;
    secrets.access_token = plainFlow.tokens.access_token;
    secrets.id_token = plainFlow.tokens.id_token as string;
    const rsa = await registerClient(running, 'rsa');
    const encFlow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid profile email', configure: rsa.configure });
    expect(encFlow.claims.email).toBe(SENTINELS.email);
    secrets.access_token_2 = encFlow.tokens.access_token;
    secrets.client_secret_2 = rsa.metadata.client_secret as string;
    await signIn(`${running.issuer}/authorize?client_id=${rsa.metadata.client_id}&response_type=code&scope=openid&redirect_uri=${encodeURIComponent('https://rp.example/cb')}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`, {
      password: 'SENTINEL-wrong-password-1',
    }).catch(() => undefined);
    secrets.wrong_password = 'SENTINEL-wrong-password-1';

    const logs = readFileSync(logFile, 'utf8');
    expect(logs.split('\n').length).toBeGreaterThan(30);
    const stored = [...(await dumpPrefix(SHARED_REDIS_URL, prefix))].flat();
    expect(stored.some((s) => s.startsWith(`${prefix}AccessToken:`))).toBe(true);
    for (const [where, text] of Object.entries({ logs, redis: stored.join('\n') })) {
      for (const [name, secret] of Object.entries(secrets)) {
        expect({ where, name, found: text.includes(secret) }).toEqual({ where, name, found: false });
      }
    }
  }, 60_000);
});
