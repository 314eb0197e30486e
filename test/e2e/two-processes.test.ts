import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { generateSigningKeys } from '../../lib/index.js';
import { confidentialClient } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { freePort, startServerProcess, waitFor, type ServerProcess } from '../helpers/processes.js';
import { ruleDerivedEnv } from '../../lib/index.js';
import { describeEachStore } from '../helpers/stores.js';

describeEachStore('two example-server processes sharing one Redis act as one provider', (_kind, properties) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-two-'));
  const client = confidentialClient();
  let a: ServerProcess;
  let b: ServerProcess;
  let urlA = '';
  let urlB = '';

  beforeAll(async () => {
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(await generateSigningKeys()));
    writeFileSync(join(dir, 'clients.json'), JSON.stringify([client]));
    const [portA, portB] = [await freePort(), await freePort()];
    urlA = `http://localhost:${portA}`;
    urlB = `http://localhost:${portB}`;
    const store = Object.fromEntries(Object.entries(properties()).map(([name, value]) => [ruleDerivedEnv(name), value]));
    const shared = {
      ...store,
      SVC_BASE_URL: urlA,
      SVC_KEYS_FILE: join(dir, 'keys.json'),
      SVC_COOKIES_KEYS: randomBytes(32).toString('hex'),
      SVC_CLIENTS_FILE: join(dir, 'clients.json'),
    };
    a = startServerProcess({ ...shared, PORT: String(portA) });
    b = startServerProcess({ ...shared, PORT: String(portB) });
    await Promise.all([waitFor(`${urlA}/readyz`, 10_000), waitFor(`${urlB}/readyz`, 10_000)]);
  }, 20_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('authorizes and signs in on A, redeems the code on B, calls UserInfo on A', async () => {
    const flow = await runCodeFlow(`${urlA}/oidc/v1`, client, { tokenOrigin: urlB });
    expect(flow.tokenRequestUrl).toBe(`${urlB}/oidc/v1/token`);
    expect(flow.claims.sub).toBe('demo-0001');
    expect(flow.claims.iss).toBe(`${urlA}/oidc/v1`);
    expect(flow.userinfo.sub).toBe('demo-0001');
  });

  it('publishes the same keys from both processes', async () => {
    const [ka, kb] = await Promise.all([fetch(`${urlA}/oidc/v1/jwks`), fetch(`${urlB}/oidc/v1/jwks`)].map(async (r) => (await r).json()));
    expect(kb).toEqual(ka);
  });
}, ['redis standalone', 'redis cluster']);
