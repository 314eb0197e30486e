import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it, jest } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { runRelyingParty } from '../../examples/relying-party.js';
import { hashPassword } from '../../examples/users-file.js';
import { generateSigningKeys } from '../../lib/provider/keys.js';
import { pairwiseSub, sectorOf } from '../../policies/subjects.js';
import { confidentialClient } from '../helpers/app.js';
import { FormBrowser, runCodeFlow, signIn } from '../helpers/flow.js';
import { freePort, PROCESS_MS, startServerProcess, waitFor } from '../helpers/processes.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';
import { startSmtp, tokenIn } from '../helpers/smtp.js';

jest.setTimeout(PROCESS_MS);

/** The status of one sign-in attempt on the login page of a fresh authorization request. */
async function loginStatus(issuer: string, client: ClientMetadata, login: string, password: string): Promise<number | undefined> {
  const url = new URL(`${issuer}/authorize`);
  const params = { client_id: client.client_id, response_type: 'code', redirect_uri: (client.redirect_uris as string[])[0] as string, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const browser = new FormBrowser();
  await browser.follow(url.href, url.origin);
  const { response } = await browser.submit('login-form', { login, password }, url.origin);
  return response?.status;
}

describe('the example server (npm start)', () => {
  it('serves discovery on the embedded defaults, with no Redis or SMTP', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    try {
      const response = await waitFor(`http://localhost:${port}/oidc/v1/.well-known/openid-configuration`);
      const doc = (await response.json()) as { issuer: string };
      expect(doc.issuer).toBe(`http://localhost:${port}/oidc/v1`);
      expect(server.output()).toContain(`"event":"listening","port":${port}`);
      expect(server.output()).toContain('"property":"svc.redis.url"');
    } finally {
      await server.stop();
    }
  });

  it('refuses to start with NODE_ENV=production on the defaults and names the properties to set', async () => {
    const server = startServerProcess({ NODE_ENV: 'production', PORT: String(await freePort()) });
    const code = await server.exited;
    expect(code).toBe(1);
    for (const property of ['svc.redis.url', 'svc.keys.file', 'svc.cookies.keys', 'svc.subject.pairwise-key', 'svc.management.password', 'svc.mail.smtp-url']) {
      expect(server.output()).toContain(property);
    }
  });

  it('refuses to start on an unknown property, naming it', async () => {
    const server = startServerProcess({ SVC_REDIS_KEYPREFIX: 'x' });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain('SVC_REDIS_KEYPREFIX');
  });

  it('starts with the docs\' own SVC_ variables and someone else\'s exported, warning about each once', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port), SVC_ISSUER: `http://localhost:${port}/oidc/v1`, SVC_INITIAL_ACCESS_TOKEN: 'a-token-value', SVC_FOO_BAR: '1' });
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      for (const variable of ['SVC_ISSUER', 'SVC_INITIAL_ACCESS_TOKEN', 'SVC_FOO_BAR']) {
        expect(server.output().split(`"variable":"${variable}"`).length - 1).toBe(1);
      }
      expect(server.output()).not.toContain('a-token-value');
    } finally {
      await server.stop();
    }
  });

  it('serves real logins with NODE_ENV=production: users and claims from modules, Redis, a keys file, SMTP, no unsafe default left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-production-'));
    const password = 'correct horse battery staple for alice';
    // A cheaper scrypt than the default (still within the file's bounds) keeps the test quick.
    const hash = await hashPassword(password, { N: 2 ** 14, r: 8, p: 1 });
    const claims = { name: 'Alice Example', given_name: 'Alice', family_name: 'Example', birthdate: '1990-01-01', email: 'alice@example.com', email_verified: true };
    writeFileSync(join(dir, 'users.json'), JSON.stringify([{ login: 'alice', sub: 'alice-0001', password: hash, claims }]));
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(await generateSigningKeys()), { mode: 0o600 });
    const client = confidentialClient();
    writeFileSync(join(dir, 'clients.json'), JSON.stringify([client]));
    const pairwiseKey = randomBytes(32).toString('base64url');
    const smtp = await startSmtp();
    const prefix = testPrefix('production-server');
    const port = await freePort();
    const managementPassword = randomBytes(18).toString('base64url');
    const server = startServerProcess({
      NODE_ENV: 'production',
      PORT: String(port),
      REDIS_URL: SHARED_REDIS_URL,
      SVC_REDIS_KEY_PREFIX: prefix,
      SVC_KEYS_FILE: join(dir, 'keys.json'),
      SVC_COOKIES_KEYS: randomBytes(32).toString('base64url'),
      SVC_SUBJECT_PAIRWISE_KEY: pairwiseKey,
      SVC_MANAGEMENT_USER: 'ops',
      SVC_MANAGEMENT_PASSWORD: managementPassword,
      SMTP_URL: smtp.url,
      SVC_MAIL_FROM: 'idp@example.test',
      SVC_AUTHENTICATOR_MODULE: 'examples/authenticator-file.ts',
      SVC_CLAIMS_MODULES: 'examples/claims-file.ts',
      AUTH_USERS_FILE: join(dir, 'users.json'),
      SVC_CLIENTS_FILE: join(dir, 'clients.json'),
    });
    try {
      const issuer = `http://localhost:${port}/oidc/v1`;
      const doc = (await (await waitFor(`${issuer}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[] };
      expect(doc.scopes_supported).toEqual(['openid', 'profile', 'email']);
      expect(server.output()).not.toContain('unsafe_default');
      expect((await fetch(`http://localhost:${port}/oidcdemo/login`)).status).toBe(404);

      const invited = await fetch(`${issuer}/management/invite_client?email=partner@example.com`, {
        headers: { authorization: `Basic ${Buffer.from(`ops:${managementPassword}`).toString('base64')}` },
      });
      expect(invited.status).toBe(202);
      const mail = await smtp.next();
      const result = await runRelyingParty({
        issuer,
        initialAccessToken: tokenIn(mail.text ?? ''),
        redirectUri: 'http://localhost:8080/callback',
        authorize: async (url) => (await signIn(url.href, { login: 'alice', password })).callbackUrl,
      });
      // Both clients are pairwise (the default) and redirect to the loopback interface: each is a sector of its own.
      const subFor = (redirect: string, clientId: unknown): string => pairwiseSub(pairwiseKey, sectorOf({ redirect_uris: [redirect], client_id: clientId }) as string, 'alice-0001');
      expect(result.idTokenClaims).toMatchObject({ iss: issuer, sub: subFor('http://localhost:8080/callback', result.clientId), name: 'Alice Example', given_name: 'Alice', email: 'alice@example.com', email_verified: true });
      expect(result.userinfo.sub).toBe(subFor('http://localhost:8080/callback', result.clientId));
      // The demo accounts do not sign in; a wrong password does not either.
      expect(await loginStatus(issuer, client, 'demo', 'demo')).toBe(403);
      expect(await loginStatus(issuer, client, 'alice', `${password}!`)).toBe(403);
      expect((await runCodeFlow(issuer, client, { login: 'alice', password, scope: 'openid email' })).claims.sub).toBe(subFor((client.redirect_uris as string[])[0] as string, client.client_id));
      for (const secret of [password, hash, managementPassword]) expect(server.output()).not.toContain(secret);
    } finally {
      await server.stop();
      await smtp.close();
      await deletePrefix(SHARED_REDIS_URL, prefix);
    }
  });
});
