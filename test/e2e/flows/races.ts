import { describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../../lib/index.js';
import { confidentialClient } from '../../helpers/app.js';
import { appPerSuite } from '../../helpers/suite-app.js';
import { authorizationUrl, pkcePair, redeemCode, signIn } from '../../helpers/flow.js';
import { manage, register } from '../../helpers/registration.js';
import type { StoreKind } from '../../helpers/stores.js';

const REPEATS = 20;
const client = confidentialClient();
const REDIRECT = (client.redirect_uris as string[])[0] as string;

/** Races on single-use tokens through the whole provider, each repeated 20 times: exactly one use wins. */
export function races(_kind: StoreKind, properties: () => Record<string, string>): void {
  describe('races, each repeated 20 times', () => {
    const running = appPerSuite(() => ({ clients: [client], properties: properties() }));

    it('100 concurrent registrations with one initial access token → exactly one 201', async () => {
      for (let i = 0; i < REPEATS; i += 1) {
        const { token } = await issueInitialAccessToken(running.app.svc.provider);
        const results = await Promise.all(Array.from({ length: 100 }, () => register(running, { redirect_uris: ['https://rp.example/cb'] }, token)));
        const statuses = results.map((r) => r.status);
        expect({ round: i, created: statuses.filter((s) => s === 201).length, refused: statuses.filter((s) => s === 401).length }).toEqual({ round: i, created: 1, refused: 99 });
      }
    }, 120_000);

    it('50 concurrent redemptions of one code → exactly one token response', async () => {
      for (let i = 0; i < REPEATS; i += 1) {
        const { verifier, challenge } = pkcePair();
        const { callbackUrl } = await signIn(
          authorizationUrl(running.issuer, { client_id: client.client_id, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' }),
        );
        const code = callbackUrl.searchParams.get('code') as string;
        const results = await Promise.all(Array.from({ length: 50 }, () => redeemCode(running.issuer, client, code, verifier)));
        const ok = results.filter((r) => r.status === 200);
        expect({ round: i, ok: ok.length, invalidGrant: results.filter((r) => r.body.error === 'invalid_grant').length }).toEqual({ round: i, ok: 1, invalidGrant: 49 });
        expect(ok[0]?.body.access_token).toEqual(expect.any(String));
      }
    }, 120_000);

    it('20 concurrent reads with one registration access token → exactly one 200 and one surviving token', async () => {
      for (let i = 0; i < REPEATS; i += 1) {
        const { token } = await issueInitialAccessToken(running.app.svc.provider);
        const created = await register(running, { redirect_uris: ['https://rp.example/cb'] }, token);
        const uri = created.body.registration_client_uri as string;
        const results = await Promise.all(Array.from({ length: 20 }, () => manage(uri, 'GET', created.body.registration_access_token as string)));
        const winners = results.filter((r) => r.status === 200);
        expect({ round: i, winners: winners.length, refused: results.filter((r) => r.status === 401).length }).toEqual({ round: i, winners: 1, refused: 19 });
        expect((await manage(uri, 'GET', created.body.registration_access_token as string)).status).toBe(401);
        expect((await manage(uri, 'GET', winners[0]?.body.registration_access_token as string)).status).toBe(200);
      }
    }, 120_000);

    it('10 concurrent updates and deletes (PUT, POST, DELETE) with one registration access token → exactly one applied, one live token after', async () => {
      const tokensOf = async (clientId: string): Promise<number> =>
        (await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records.filter((r) => r.payload.clientId === clientId && r.payload.consumed === undefined).length ?? -1;
      for (let i = 0; i < REPEATS; i += 1) {
        const { token } = await issueInitialAccessToken(running.app.svc.provider);
        const created = await register(running, { redirect_uris: ['https://rp.example/cb'] }, token);
        const [uri, rat, clientId] = [created.body.registration_client_uri as string, created.body.registration_access_token as string, created.body.client_id as string];
        const methods = ['PUT', 'POST', 'DELETE', 'PUT', 'POST', 'DELETE', 'PUT', 'POST', 'PUT', 'POST'] as const;
        const results = await Promise.all(methods.map((method, n) => manage(uri, method, rat, method === 'DELETE' ? undefined : { client_id: clientId, redirect_uris: ['https://rp.example/cb'], client_name: `update ${n}` })));
        const winners = results.flatMap((r, n) => (r.status < 300 ? [n] : []));
        expect({ round: i, winners: winners.length, refused: results.filter((r) => r.status === 401 && r.body.error === 'invalid_token').length }).toEqual({ round: i, winners: 1, refused: 9 });
        const won = winners[0] as number;
        const stored = await running.app.svc.store.adapter('Client').find(clientId);
        if (methods[won] === 'DELETE') expect({ round: i, stored, tokens: await tokensOf(clientId) }).toEqual({ round: i, stored: undefined, tokens: 0 });
        else expect({ round: i, name: stored?.client_name, tokens: await tokensOf(clientId) }).toEqual({ round: i, name: `update ${won}`, tokens: 1 });
      }
    }, 120_000);
  });
}
