import { afterAll, beforeAll, expect, it } from '@jest/globals';

import { confidentialClient, pairwiseSubOf, sessionsOf, startApp, type RunningApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { FormBrowser, runCodeFlow } from '../helpers/flow.js';
import { describeEachStore } from '../helpers/stores.js';

const PASSWORD = 'subject-type-revoke-password';
const COOKIE_KEYS = 'subject-revoke-cookie-key-0123456789abcd';
/** Pairwise first, public after the restart (its subject_type). */
const TURNED_PUBLIC = confidentialClient({ client_id: 'turned-public', redirect_uris: ['https://turned-public.example/cb'], subject_type: 'pairwise' });
/** Public first, pairwise after the restart. */
const TURNED_PAIRWISE = confidentialClient({ client_id: 'turned-pairwise', redirect_uris: ['https://turned-pairwise.example/cb'], subject_type: 'public' });
/** Pairwise throughout. */
const PAIRWISE = confidentialClient({ client_id: 'always-pairwise', redirect_uris: ['https://always-pairwise.example/cb'], subject_type: 'pairwise' });

/**
 * `subjects revoke SUB --client ID` finds her by the `sub` the client received, whichever subject type it was issued
 * under: a static client's subject type is the operator's configuration and changes at a restart (process A serves the
 * clients as first configured, process B, on the same store, after the change), and the client keeps the `sub`s it was
 * given. Never another person's: a pairwise client naming an account id it was never given revokes nobody.
 */
describeEachStore(
  'subjects revoke --client after the client changed its subject type',
  (kind, storeProperties) => {
    let before: RunningApp;
    let after: RunningApp;

    beforeAll(async () => {
      const properties = { ...storeProperties(), 'svc.cookies.keys': COOKIE_KEYS, 'svc.management.password': PASSWORD };
      before = await startApp({ clients: [TURNED_PUBLIC, TURNED_PAIRWISE, PAIRWISE], properties });
      after = await startApp({
        clients: [{ ...TURNED_PUBLIC, subject_type: 'public' }, { ...TURNED_PAIRWISE, subject_type: 'pairwise' }, PAIRWISE],
        ...(kind === 'memory' ? { store: before.app.svc.store } : {}),
        // Another port, so another issuer: the store moves to it (before, claimed, goes on serving).
        properties: { ...properties, 'svc.redis.previous-base-url': before.baseUrl },
      });
    });
    afterAll(async () => {
      await after.close();
      await before.close();
    });

    const revoke = (sub: string, clientId: string) => runCli(['subjects', 'revoke', sub, '--client', clientId], { SVC_MANAGEMENT_PASSWORD: PASSWORD, SVC_BASE_URL: after.baseUrl });
    const userinfo = async (accessToken: string): Promise<number> => (await fetch(`${after.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
    const grantsOf = async (accountId: string): Promise<number> =>
      ((await after.app.svc.store.inventory?.list('Grant', { limit: 500 }))?.records ?? []).filter((r) => r.payload.accountId === accountId).length;

    it('attack: her pairwise sub, given after the client turned public, revokes her sessions and grants (the one she gave again under the public type too); another person is untouched', async () => {
      const browser = new FormBrowser();
      const old = await runCodeFlow(before.issuer, TURNED_PUBLIC, { browser, skipUserinfo: true });
      expect(old.claims.sub).toBe(pairwiseSubOf('https://turned-public.example/cb'));
      const again = await runCodeFlow(after.issuer, { ...TURNED_PUBLIC, subject_type: 'public' }, { browser, skipUserinfo: true });
      expect(again.claims.sub).toBe('demo-0001');
      const other = await runCodeFlow(after.issuer, { ...TURNED_PUBLIC, subject_type: 'public' }, { login: 'demo-basic', password: 'demo-basic', skipUserinfo: true });

      const run = await revoke(old.claims.sub, 'turned-public');
      expect([run.code, run.stderr]).toEqual([0, expect.stringContaining('revoked')]);
      expect(JSON.parse(run.stdout)).toMatchObject({ revoked_sessions: 1, revoked_grants: 2 });
      expect([await sessionsOf(after, 'demo-0001'), await grantsOf('demo-0001'), await userinfo(again.tokens.access_token)]).toEqual([0, 0, 401]);
      expect([await sessionsOf(after, 'demo-0002'), await grantsOf('demo-0002'), await userinfo(other.tokens.access_token)]).toEqual([1, 1, 200]);
    });

    it('honest: her account id, given after the client turned pairwise (the sub it received while public), revokes her; another person is untouched', async () => {
      const old = await runCodeFlow(before.issuer, TURNED_PAIRWISE, { skipUserinfo: true });
      expect(old.claims.sub).toBe('demo-0001');
      const other = await runCodeFlow(after.issuer, { ...TURNED_PAIRWISE, subject_type: 'pairwise' }, { login: 'demo-basic', password: 'demo-basic', skipUserinfo: true });

      const run = await revoke('demo-0001', 'turned-pairwise');
      expect([run.code, JSON.parse(run.stdout)]).toEqual([0, expect.objectContaining({ revoked_sessions: 1, revoked_grants: 1 })]);
      expect([await sessionsOf(after, 'demo-0001'), await grantsOf('demo-0001'), await userinfo(old.tokens.access_token)]).toEqual([0, 0, 401]);
      expect(await userinfo(other.tokens.access_token)).toBe(200);
    });

    it('attack: a pairwise client naming an account id it was never given (it has her pairwise sub only) revokes nobody', async () => {
      const hers = await runCodeFlow(after.issuer, PAIRWISE, { login: 'demo-basic', password: 'demo-basic', skipUserinfo: true });
      const run = await revoke('demo-0002', 'always-pairwise');
      expect([run.code, JSON.parse(run.stdout)]).toEqual([0, expect.objectContaining({ revoked_sessions: 0, revoked_grants: 0, revoked_tokens: 0 })]);
      expect(await userinfo(hers.tokens.access_token)).toBe(200);
      // Her sub at that client finds her.
      const right = await revoke(pairwiseSubOf('https://always-pairwise.example/cb', 'demo-0002'), 'always-pairwise');
      expect(JSON.parse(right.stdout)).toMatchObject({ revoked_grants: expect.any(Number) });
      expect(await userinfo(hers.tokens.access_token)).toBe(401);
    });
  },
  ['memory', 'redis standalone'],
);
