import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger } from '../helpers/logs.js';
import { manage, register, type HttpResult } from '../helpers/registration.js';
import { memoryFaults, memoryFaultsWithClientDeletes, redisAclFaults, type StoreFaults } from '../helpers/store-faults.js';

/**
 * Issue 13 follow-up: single-use tokens stay correct when the store partly fails, as in a Redis
 * Cluster with one master away (the keys of one request live in different slots). On Redis the
 * faults are real: the app connects as an ACL user whose key permissions are narrowed for the
 * fault (commands inside the store's Lua scripts are checked too). On memory the same faults are
 * injected in the adapter.
 *
 * - F1: a registration whose registration access token cannot be saved stored its client first;
 *   the initial access token must never register two clients.
 * - F2: an update whose new registration access token cannot be saved had deleted the presented
 *   one; the client must stay manageable with the presented token.
 * - F3: a rejected request during a delete fault must not burn the token.
 */

const METADATA = { redirect_uris: ['https://rp.example/cb'] };

const describeFaults = (kind: string, makeFaults: () => Promise<StoreFaults>): void =>
  describe(`single-use tokens under partial store faults [${kind}]`, () => {
    let faults: StoreFaults;
    let running: RunningApp;
    const { logger, lines } = capturingLogger();

    beforeAll(async () => {
      faults = await makeFaults();
      running = await startApp({ logger, store: faults.store });
    });
    afterAll(async () => {
      await running?.close();
      await faults?.dispose();
    });

    const newClient = async (): Promise<{ url: string; id: string; rat: string }> => {
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      const created = await register(running, METADATA, token);
      expect(created.status).toBe(201);
      return { url: created.body.registration_client_uri as string, id: created.body.client_id as string, rat: created.body.registration_access_token as string };
    };
    const errorOf = (r: HttpResult): [number, unknown] => [r.status, r.body.error];

    it('F1: a registration that fails after storing its client removes it; the initial access token then registers exactly one client', async () => {
      const before = await faults.storedClients();
      const logged = lines.length;
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      await faults.failRegistrationTokenWrites();
      const failed = await register(running, METADATA, token);
      await faults.heal();
      expect(errorOf(failed)).toEqual([503, 'server_error']);
      // Nothing of the failed registration is left behind.
      expect(await faults.storedClients()).toBe(before);
      const undone = lines.slice(logged).filter((l) => l.includes('"e":"registration_undone"')).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(undone).toEqual([expect.objectContaining({ route: 'registration', client_id: expect.any(String) })]);

      const answers = [await register(running, METADATA, token), await register(running, METADATA, token)];
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeLessThanOrEqual(1);
      expect(await faults.storedClients()).toBe(before + created.length);
      // The orphan was removed, so the token was given back: the caller's retry registers.
      expect(answers.map((a) => a.status)).toEqual([201, 401]);
      expect(answers[1]?.body.error).toBe('invalid_token');
      expect(lines.join('\n')).not.toContain(token);
    });

    it('F2: an update that fails after deleting the presented token leaves the client manageable with that token, with its metadata unchanged', async () => {
      const { url, id, rat } = await newClient();
      const logged = lines.length;
      await faults.failRegistrationTokenWrites(rat);
      const failed = await manage(url, 'PUT', rat, { client_id: id, redirect_uris: ['https://rp.example/changed'], client_name: 'changed' });
      await faults.heal();
      expect(errorOf(failed)).toEqual([503, 'server_error']);
      const events = lines.slice(logged).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(events).toEqual(expect.arrayContaining([
        expect.objectContaining({ e: 'registration_undone', route: 'client_update', client_id: id }),
        expect.objectContaining({ e: 'registration_access_token_restored', client_id: id }),
      ]));

      // The presented token works again, once: of 10 concurrent reads exactly one wins.
      const reads = await Promise.all(Array.from({ length: 10 }, () => manage(url, 'GET', rat)));
      expect(reads.map((r) => r.status).sort()).toEqual([200, ...Array<number>(9).fill(401)]);
      const read = reads.find((r) => r.status === 200) as HttpResult;
      expect(read.body.redirect_uris).toEqual(METADATA.redirect_uris);
      expect(read.body.client_name).toBeUndefined();
      const next = read.body.registration_access_token as string;
      expect(next).toEqual(expect.any(String));
      expect(next).not.toBe(rat);
      // The caller's retry applies the update and rotates as usual.
      const retried = await manage(url, 'PUT', next, { client_id: id, redirect_uris: ['https://rp.example/changed'], client_name: 'changed' });
      expect(retried.status).toBe(200);
      expect(retried.body.client_name).toBe('changed');
      expect(errorOf(await manage(url, 'GET', rat))).toEqual([401, 'invalid_token']);
      expect(errorOf(await manage(url, 'GET', next))).toEqual([401, 'invalid_token']);
      expect((await manage(url, 'GET', retried.body.registration_access_token as string)).status).toBe(200);
      expect(lines.join('\n')).not.toContain(rat);
    });

    it('a token presented at another client is deleted and stays deleted (only a replacement that never reached its caller is re-created)', async () => {
      const a = await newClient();
      const b = await newClient();
      expect(errorOf(await manage(a.url, 'GET', b.rat))).toEqual([401, 'invalid_token']);
      expect(errorOf(await manage(b.url, 'GET', b.rat))).toEqual([401, 'invalid_token']);
      expect((await manage(a.url, 'GET', a.rat)).status).toBe(200);
    });

    it('F3: a rejected update during a delete fault does not burn the registration access token', async () => {
      const { url, id, rat } = await newClient();
      await faults.failTokenDeletes();
      const rejected = await manage(url, 'PUT', rat, { client_id: id, redirect_uris: ['not a url'] });
      await faults.heal();
      expect(errorOf(rejected)).toEqual([400, 'invalid_redirect_uri']);
      const read = await manage(url, 'GET', rat);
      expect(read.status).toBe(200);
      expect(read.body.redirect_uris).toEqual(METADATA.redirect_uris);
    });

    it('F3: a rejected registration during a delete fault does not burn the initial access token', async () => {
      const before = await faults.storedClients();
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      await faults.failTokenDeletes();
      const rejected = await register(running, { redirect_uris: ['not a url'] }, token);
      await faults.heal();
      expect(errorOf(rejected)).toEqual([400, 'invalid_redirect_uri']);
      expect(await faults.storedClients()).toBe(before);
      expect((await register(running, METADATA, token)).status).toBe(201);
      expect(errorOf(await register(running, METADATA, token))).toEqual([401, 'invalid_token']);
    });
  });

describeFaults('redis (ACL)', redisAclFaults);
describeFaults('memory (injected)', async () => memoryFaults());

describe('a registration whose client cannot be removed after a failure [memory (injected)]', () => {
  const faults = memoryFaultsWithClientDeletes();
  let running: RunningApp;
  const { logger, lines } = capturingLogger();
  beforeAll(async () => {
    running = await startApp({ logger, store: faults.store });
  });
  afterAll(async () => {
    await running.close();
    await faults.dispose();
  });

  it('keeps the initial access token spent (it never registers a second client) and logs the orphan by client_id', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    await faults.failRegistrationTokenWrites();
    faults.failClientDeletes();
    const failed = await register(running, METADATA, token);
    await faults.heal();
    expect([failed.status, failed.body.error]).toEqual([503, 'server_error']);
    const again = await register(running, METADATA, token);
    expect([again.status, again.body.error]).toEqual([401, 'invalid_token']);
    expect(await faults.storedClients()).toBe(1);
    const orphan = lines.find((l) => l.includes('"e":"token_cleanup_failed"') && l.includes('remove unfinished Client'));
    expect(orphan).toBeDefined();
    expect(JSON.parse(orphan as string)).toMatchObject({ client_id: expect.any(String), code: 'SVC_STORE_UNAVAILABLE' });
    expect(lines.join('\n')).not.toContain(token);
  });
});
