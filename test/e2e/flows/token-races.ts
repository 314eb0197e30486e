import { describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../../lib/index.js';
import { appPerSuite } from '../../helpers/suite-app.js';
import type { StoreKind } from '../../helpers/stores.js';

const ROUNDS = 5;
const CONCURRENT = 20;
const METADATA = { redirect_uris: ['https://rp.example/cb'] };

const REGISTRATION_SPELLINGS = ['/register', '/REGISTER', '/Register', '/register/', '/REGISTER/?x=1'];
const CLIENT_SPELLINGS = ['/register/{id}', '/REGISTER/{id}', '/Register/{id}/', '/register/{id}/', '/REGISTER/{id}?x=1'];
const CLIENT_METHODS = ['GET', 'PUT', 'POST', 'DELETE'] as const;

/**
 * Concurrent uses of one single-use token, mixed across path spellings and methods (issue 13): of
 * 20 at once exactly one succeeds, on every store. The claim is made in the store when
 * oidc-provider looks the token up, so no spelling, method or interleaving gets a second use.
 */
export function tokenRaces(_kind: StoreKind, properties: () => Record<string, string>): void {
  describe('races on single-use tokens across spellings and methods', () => {
    const running = appPerSuite(() => ({ properties: properties() }));

    const call = async (method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
      const response = await fetch(`${running.issuer}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    };

    it(`${CONCURRENT} concurrent registrations with one initial access token, mixed spellings → exactly one 201`, async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const { token } = await issueInitialAccessToken(running.app.svc.provider);
        const answers = await Promise.all(
          Array.from({ length: CONCURRENT }, (_v, i) => call('POST', REGISTRATION_SPELLINGS[i % REGISTRATION_SPELLINGS.length] as string, token, METADATA)),
        );
        const statuses = answers.map((a) => a.status);
        expect({ round, created: statuses.filter((s) => s === 201).length, refused: answers.filter((a) => a.status === 401 && a.body.error === 'invalid_token').length }).toEqual({
          round,
          created: 1,
          refused: CONCURRENT - 1,
        });
      }
    });

    it(`${CONCURRENT} concurrent uses of one registration access token, mixed spellings and methods → exactly one success`, async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const { token } = await issueInitialAccessToken(running.app.svc.provider);
        const created = await call('POST', '/register', token, METADATA);
        expect(created.status).toBe(201);
        const id = created.body.client_id as string;
        const rat = created.body.registration_access_token as string;
        const answers = await Promise.all(
          Array.from({ length: CONCURRENT }, (_v, i) => {
            const method = CLIENT_METHODS[i % CLIENT_METHODS.length] as string;
            // POST is served (as PUT) on the canonical spelling only; the others use every spelling.
            const spelling = method === 'POST' ? '/register/{id}' : (CLIENT_SPELLINGS[i % CLIENT_SPELLINGS.length] as string);
            const body = method === 'PUT' || method === 'POST' ? { client_id: id, ...METADATA } : undefined;
            return call(method, spelling.replace('{id}', id), rat, body);
          }),
        );
        const succeeded = answers.filter((a) => a.status >= 200 && a.status < 300);
        const refused = answers.filter((a) => a.status === 401 && a.body.error === 'invalid_token');
        expect({ round, succeeded: succeeded.length, refused: refused.length }).toEqual({ round, succeeded: 1, refused: CONCURRENT - 1 });
        // The presented token is spent whatever won: it reads nothing any more.
        expect((await call('GET', `/register/${id}`, rat)).status).toBe(401);
      }
    });
  });
}
