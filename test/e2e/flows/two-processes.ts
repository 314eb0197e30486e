import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';

import { generateSigningKeys } from '../../../lib/provider/keys.js';
import { pairwiseSub, sectorOf } from '../../../policies/subjects.js';
import { confidentialClient } from '../../helpers/app.js';
import { codeFlowUrl, FormBrowser, runCodeFlow } from '../../helpers/flow.js';
import { freePort, PROCESS_MS, type ServerProcess, startServerProcess, waitFor } from '../../helpers/processes.js';
import { ruleDerivedEnv } from '../../../lib/settings/definitions.js';
import type { StoreKind } from '../../helpers/stores.js';

jest.setTimeout(PROCESS_MS);

/** Two example-server processes on one Redis store: a flow begun on one finishes on the other. */
export function twoProcessFlows(_kind: StoreKind, properties: () => Record<string, string>): void {
  describe('two example-server processes sharing one Redis act as one provider', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-two-'));
    const client = confidentialClient();
    let a: ServerProcess;
    let b: ServerProcess;
    let urlA = '';
    let urlB = '';
    let shared: Record<string, string> = {};
    let portA = 0;
    const pairwiseKey = randomBytes(32).toString('hex');

    beforeAll(async () => {
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(await generateSigningKeys()));
      writeFileSync(join(dir, 'clients.json'), JSON.stringify([client]));
      const portB = await freePort();
      portA = await freePort();
      urlA = `http://localhost:${portA}`;
      urlB = `http://localhost:${portB}`;
      const store = Object.fromEntries(Object.entries(properties()).map(([name, value]) => [ruleDerivedEnv(name), value]));
      shared = {
        ...store,
        SVC_BASE_URL: urlA,
        SVC_KEYS_FILE: join(dir, 'keys.json'),
        SVC_COOKIES_KEYS: randomBytes(32).toString('hex'),
        SVC_SUBJECT_PAIRWISE_KEY: pairwiseKey,
        SVC_CLIENTS_FILE: join(dir, 'clients.json'),
        // Throttle tests name their client address; the flows above come from the socket peer.
        [ruleDerivedEnv('svc.proxy')]: 'true',
        [ruleDerivedEnv('svc.management.lockout-threshold')]: '3',
        [ruleDerivedEnv('svc.login.lockout-threshold')]: '3',
      };
      a = startServerProcess({ ...shared, PORT: String(portA) });
      b = startServerProcess({ ...shared, PORT: String(portB) });
      await Promise.all([waitFor(`${urlA}/readyz`), waitFor(`${urlB}/readyz`)]);
    });

    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      rmSync(dir, { recursive: true, force: true });
    });

    it('authorizes and signs in on A, redeems the code on B, calls UserInfo on A', async () => {
      const flow = await runCodeFlow(`${urlA}/oidc/v1`, client, { tokenOrigin: urlB });
      expect(flow.tokenRequestUrl).toBe(`${urlB}/oidc/v1/token`);
      // The static client is pairwise (the default): both processes derive its sub with the shared key.
      const sub = pairwiseSub(pairwiseKey, sectorOf(client) as string, 'demo-0001');
      expect(flow.claims.sub).toBe(sub);
      expect(flow.claims.iss).toBe(`${urlA}/oidc/v1`);
      expect(flow.userinfo.sub).toBe(sub);
    });

    it('gives the client the same pairwise sub after A restarts (same pairwise key)', async () => {
      const before = (await runCodeFlow(`${urlA}/oidc/v1`, client, { skipUserinfo: true })).claims.sub;
      await a.stop();
      a = startServerProcess({ ...shared, PORT: String(portA) });
      await waitFor(`${urlA}/readyz`);
      const after = await runCodeFlow(`${urlA}/oidc/v1`, client);
      expect(after.claims.sub).toBe(before);
      expect(after.userinfo.sub).toBe(before);
    });

    it('shares the management lockout: failures on A lock the address out on B', async () => {
      const invite = (url: string, password: string): Promise<Response> =>
        fetch(`${url}/oidc/v1/management/invite_client?email=partner%40example.com`, {
          headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'x-forwarded-for': '203.0.113.70' },
        });
      const statuses = [];
      for (const [url, password] of [[urlA, 'w1'], [urlB, 'w2'], [urlA, 'w3'], [urlB, 'w4'], [urlA, 'w5']] as const) statuses.push((await invite(url, password)).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    });

    it('shares the login throttle: wrong passwords on A and B count as one, and the right one is refused on both', async () => {
      const interaction = async (url: string): Promise<{ attempt(password: string): Promise<number> }> => {
        const browser = new FormBrowser();
        await browser.follow(codeFlowUrl(`${url}/oidc/v1`, client), url);
        const action = browser.formAction('login-form', url);
        let n = 0;
        return {
          async attempt(password) {
            n += 1;
            // A new address each time: only the name's count can lock.
            // Both processes serve one public origin (the base URL, A's).
            const response = await browser.post(action, { login: 'demo-basic', password }, urlA, { 'x-forwarded-for': `198.51.100.${n + (url === urlA ? 0 : 100)}` });
            await response.text();
            // A failure sends the browser back to its page (C8), which the other process shows as this one would.
            const page = new URL(action).pathname.replace(/\/login$/, '');
            if (response.status !== 303 || response.headers.get('location') !== page) return response.status;
            const shown = await browser.request(`${url === urlA ? urlB : urlA}${page}`);
            await shown.text();
            return shown.status;
          },
        };
      };
      const [onA, onB] = [await interaction(urlA), await interaction(urlB)];
      const statuses = [await onA.attempt('x1'), await onB.attempt('x2'), await onA.attempt('x3'), await onB.attempt('demo-basic'), await onA.attempt('demo-basic')];
      expect(statuses).toEqual([403, 403, 403, 429, 429]);
    });

    it('publishes the same keys from both processes', async () => {
      const [ka, kb] = await Promise.all([fetch(`${urlA}/oidc/v1/jwks`), fetch(`${urlB}/oidc/v1/jwks`)].map(async (r): Promise<unknown> => (await r).json()));
      expect(kb).toEqual(ka);
    });
  });
}
