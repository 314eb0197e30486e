import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { deletePrefix, dumpPrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';

describe('what a dump of Redis shows after a full flow', () => {
  const prefix = testPrefix('secrets');
  const client = confidentialClient();
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ clients: [client], properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix } });
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('holds none of the issued token values in any key or value', async () => {
    const flow = await runCodeFlow(running.issuer, client);
    const entries = await dumpPrefix(SHARED_REDIS_URL, prefix);
    const models = new Set([...entries.keys()].map((k) => k.slice(prefix.length).split(':')[0]));
    for (const model of ['AccessToken', 'AuthorizationCode', 'Grant', 'Session', 'grant', 'sessionUid']) expect([...models]).toContain(model);
    const secrets = { code: flow.code, access_token: flow.tokens.access_token, id_token: flow.tokens.id_token as string };
    for (const [key, value] of entries) {
      for (const [name, secret] of Object.entries(secrets)) {
        expect({ key, name, found: key.includes(secret) || value.includes(secret) }).toEqual({ key, name, found: false });
      }
    }
  });
});
