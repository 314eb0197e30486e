import { request } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { PUSHED_REQUEST_USE_MODEL } from '../../lib/provider/pushed-requests.js';
import { MODEL_NAMES } from '../../lib/seams.js';
import { hashClientSecret } from '../../lib/registration/client-secrets.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { bracketFlood } from '../helpers/claims-requests.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { pkcePair } from '../helpers/flow.js';
import { outcomeOf } from '../helpers/request-objects.js';

/**
 * Every protected operation under every spelling of its path (issue 13): oidc-provider's router
 * matches case-insensitively, with a trailing slash and for HEAD, so each spelling must either run
 * every check or not be served at all (404/405). Requests go out over raw HTTP with the path
 * exactly as written (no URL normalisation by the client).
 */

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Sends `method rawPath` verbatim to the app. */
function send(running: RunningApp, method: string, rawPath: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const { port } = new URL(running.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: rawPath, headers: { accept: 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: Record<string, unknown> = {};
        try {
          parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          parsed = { text };
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The hand-picked spellings of `/oidc/v1{route}` (route like `/register` or `/register/abc`). */
function spellings(route: string): string[] {
  const [first = '', ...rest] = route.slice(1).split('/');
  const tail = rest.length ? `/${rest.join('/')}` : '';
  const percent = `${first.slice(0, -1)}%${first.charCodeAt(first.length - 1).toString(16)}`;
  return [
    `/oidc/v1/${first}${tail}`,
    `/oidc/v1/${first.toUpperCase()}${tail}`,
    `/oidc/v1/${first[0]?.toUpperCase()}${first.slice(1)}${tail}`,
    `/oidc/v1/${first}${tail}/`,
    `/oidc/v1/${first.toUpperCase()}${tail}/`,
    `/oidc/v1/${percent}${tail}`,
    `/oidc/v1//${first}${tail}`,
    `/oidc/v1/${first}${tail}//`,
    `/oidc/v1/${first}${tail}?x=1`,
    `/oidc/v1/${first}${tail}/?x=1`,
    `/oidc/v1/./${first}${tail}`,
    `/oidc/v1/x/../${first}${tail}`,
    `/OIDC/v1/${first}${tail}`,
    `/oidc/V1/${first}${tail}`,
  ];
}

/** A generated spelling: each letter's case flipped at will, some letters percent-encoded, extras. */
function spellingArbitrary(route: string): fc.Arbitrary<string> {
  const letters = route.split('');
  return fc
    .tuple(
      fc.array(fc.boolean(), { minLength: letters.length, maxLength: letters.length }),
      fc.array(fc.boolean(), { minLength: letters.length, maxLength: letters.length }),
      fc.constantFrom('', '/', '//', '?a=b', '/?a=b', '#f'),
    )
    .map(([upper, encode, suffix]) => {
      const spelled = letters
        .map((c, i) => {
          const cased = upper[i] ? c.toUpperCase() : c;
          return encode[i] && /[a-z]/i.test(c) ? `%${cased.charCodeAt(0).toString(16)}` : cased;
        })
        .join('');
      return `/oidc/v1${spelled}${suffix}`;
    });
}

const json = (token?: string): Record<string, string> => ({ 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) });
const METADATA = { redirect_uris: ['https://rp.example/cb'] };
const NOT_SERVED = [404, 405];
/**
 * Spellings oidc-provider's router serves: as written, upper and mixed case, trailing slash (both
 * cases), and the two with a query string. The others (percent-encoded letters, doubled slashes,
 * dot segments, another case of the mount path) are not served. Asserting the count keeps the
 * suite from passing by serving nothing.
 */
const SERVED_SPELLINGS = 7;

describe('every protected operation under every path spelling', () => {
  const client = confidentialClient();

  const running = appPerSuite({ clients: [client] });

  const iat = async (): Promise<string> => (await issueInitialAccessToken(running.app.svc.provider)).token;
  const registerAt = (path: string, token: string, body: unknown = METADATA): Promise<Answer> => send(running, 'POST', path, json(token), JSON.stringify(body));

  /** A registered client: its id and registration access token. */
  const newClient = async (metadata: Record<string, unknown> = METADATA): Promise<{ id: string; rat: string; secret: string }> => {
    const created = await registerAt('/oidc/v1/register', await iat(), metadata);
    expect(created.status).toBe(201);
    return { id: created.body.client_id as string, rat: created.body.registration_access_token as string, secret: created.body.client_secret as string };
  };
  const canonicalRead = (id: string, rat: string): Promise<Answer> => send(running, 'GET', `/oidc/v1/register/${id}`, json(rat));

  describe('registration with an initial access token', () => {
    const served: string[] = [];
    afterAll(() => expect(served).toHaveLength(SERVED_SPELLINGS));

    it.each(spellings('/register'))('%s: 201 consumes the token, a rejected body gives it back, or the spelling is not served', async (path) => {
      const token = await iat();
      const rejected = await registerAt(path, token, { redirect_uris: ['not a url'] });
      if (NOT_SERVED.includes(rejected.status)) {
        // Not served: the token is untouched and still registers once at the canonical path.
        expect((await registerAt('/oidc/v1/register', token)).status).toBe(201);
        return;
      }
      expect([rejected.status, rejected.body.error]).toEqual([400, 'invalid_redirect_uri']);
      served.push(path);
      const created = await registerAt(path, token);
      expect(created.status).toBe(201);
      for (const again of spellings('/register')) {
        const reuse = await registerAt(again, token);
        expect(reuse.status === 401 ? reuse.body.error : reuse.status).toBe(NOT_SERVED.includes(reuse.status) ? reuse.status : 'invalid_token');
      }
    });

    it('one token across every spelling and method registers exactly one client', async () => {
      const token = await iat();
      const statuses: number[] = [];
      for (const path of spellings('/register')) {
        for (const method of ['POST', 'PUT', 'GET', 'HEAD']) statuses.push((await send(running, method, path, json(token), method === 'GET' || method === 'HEAD' ? undefined : JSON.stringify(METADATA))).status);
      }
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s >= 200 && s < 300)).toHaveLength(1);
    });

    it('generated spellings: one token never registers twice (fast-check)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(spellingArbitrary('/register'), { minLength: 2, maxLength: 6 }), async (paths) => {
          const token = await iat();
          const created = [];
          for (const path of paths) if ((await registerAt(path.replace('#f', ''), token)).status === 201) created.push(path);
          expect(created.length).toBeLessThanOrEqual(1);
        }),
        { numRuns: 25 },
      );
    });
  });

  describe('the client configuration endpoint with a registration access token', () => {
    const deleted: string[] = [];
    afterAll(() => expect(deleted).toHaveLength(SERVED_SPELLINGS));
    it.each(['GET', 'PUT', 'POST', 'HEAD'])('%s under every spelling: each success retires the presented token; anything else leaves it valid', async (method) => {
      const { id, rat } = await newClient();
      let current = rat;
      let successes = 0;
      for (const path of spellings(`/register/${id}`)) {
        const body = method === 'PUT' || method === 'POST' ? JSON.stringify({ client_id: id, ...METADATA }) : undefined;
        const answer = await send(running, method, path, json(current), body);
        if (answer.status === 200) {
          const next = answer.body.registration_access_token;
          expect(typeof next).toBe('string');
          expect(next).not.toBe(current);
          const old = await canonicalRead(id, current);
          expect([old.status, old.body.error]).toEqual([401, 'invalid_token']);
          current = next as string;
          successes += 1;
        } else {
          expect(NOT_SERVED).toContain(answer.status);
          // The refused request left the token as it was: it still reads (and rotates) once.
          const read = await canonicalRead(id, current);
          expect(read.status).toBe(200);
          current = read.body.registration_access_token as string;
        }
      }
      // POST maps to PUT on the canonical spelling only (with or without a query); HEAD never runs.
      expect(successes).toBe(({ GET: SERVED_SPELLINGS, PUT: SERVED_SPELLINGS, POST: 2, HEAD: 0 } as Record<string, number>)[method]);
    });

    it.each(spellings('/register/{id}'))('DELETE %s: deletes the client, or is not served and the token stays valid', async (template) => {
      const { id, rat } = await newClient();
      const answer = await send(running, 'DELETE', template.replace('{id}', id), json(rat));
      if (answer.status === 204) {
        deleted.push(template);
        const read = await canonicalRead(id, rat);
        expect([read.status, read.body.error]).toEqual([401, 'invalid_token']);
        expect(await running.app.svc.provider.Client.find(id)).toBeUndefined();
      } else {
        expect(NOT_SERVED).toContain(answer.status);
        expect((await canonicalRead(id, rat)).status).toBe(200);
      }
    });

    it('HEAD is refused with 405 and does not use the token', async () => {
      const { id, rat } = await newClient();
      const head = await send(running, 'HEAD', `/oidc/v1/register/${id}`, json(rat));
      expect(head.status).toBe(405);
      expect((await canonicalRead(id, rat)).status).toBe(200);
    });

    it('DELETE without a valid token is refused on every spelling', async () => {
      const { id, rat } = await newClient();
      for (const path of spellings(`/register/${id}`)) {
        const answer = await send(running, 'DELETE', path, json('not-the-token'));
        expect(answer.status === 401 ? answer.body.error : NOT_SERVED.includes(answer.status)).toBe(answer.status === 401 ? 'invalid_token' : true);
      }
      expect((await canonicalRead(id, rat)).status).toBe(200);
    });
  });

  describe('the token endpoint with a stored secret hash', () => {
    const reached: string[] = [];
    afterAll(() => expect(reached).toHaveLength(SERVED_SPELLINGS));
    const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
    const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    const grant = { grant_type: 'authorization_code', code: 'not-a-code', redirect_uri: (client.redirect_uris as string[])[0] as string, code_verifier: 'v'.repeat(43) };

    it.each(spellings('/token'))('%s: the hash is invalid_client (Basic and form), the secret reaches the grant check', async (path) => {
      const posted = await newClient({ ...METADATA, token_endpoint_auth_method: 'client_secret_post' });
      const cases: [string, Record<string, string>, string][] = [
        ['basic hash', { authorization: basic(client.client_id, hashClientSecret(client.client_secret as string)) }, form(grant)],
        ['post hash', {}, form({ ...grant, client_id: posted.id, client_secret: hashClientSecret(posted.secret) })],
        ['post hash repeated', {}, `${form({ ...grant, client_id: posted.id })}&client_secret=${encodeURIComponent(hashClientSecret(posted.secret))}&client_secret=${encodeURIComponent(hashClientSecret(posted.secret))}`],
      ];
      for (const [name, headers, body] of cases) {
        const answer = await send(running, 'POST', path, { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body);
        if (NOT_SERVED.includes(answer.status)) continue;
        expect({ name, status: answer.status, error: answer.body.error }).toEqual({ name, status: answer.status === 400 ? 400 : 401, error: answer.status === 400 ? 'invalid_request' : 'invalid_client' });
      }
      const real = await send(running, 'POST', path, { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret as string) }, form(grant));
      if (NOT_SERVED.includes(real.status)) return;
      expect([real.status, real.body.error]).toEqual([400, 'invalid_grant']);
      reached.push(path);
    });

    it('generated spellings: a stored hash never authenticates (fast-check)', async () => {
      const hash = hashClientSecret(client.client_secret as string);
      await fc.assert(
        fc.asyncProperty(spellingArbitrary('/token'), async (path) => {
          const answer = await send(running, 'POST', path.replace('#f', ''), { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, hash) }, form(grant));
          expect(answer.status === 401 ? answer.body.error : NOT_SERVED.includes(answer.status)).toBe(answer.status === 401 ? 'invalid_client' : true);
        }),
        { numRuns: 60 },
      );
    });
  });
});

describe('pushed authorization requests under every path spelling', () => {
  let running: RunningApp;
  let store: CountingStore;
  const client = confidentialClient({ client_id: 'par-rp' });
  const posting = confidentialClient({ client_id: 'par-post-rp', token_endpoint_auth_method: 'client_secret_post' });
  const reached: string[] = [];

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {} }).redis));
    running = await startApp({ store, clients: [client, posting], claimModules: createDemoClaimModules() });
  });
  afterAll(async () => {
    await running.close();
    expect(reached).toHaveLength(SERVED_SPELLINGS);
  });

  const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const fields = (of = client, extra: Record<string, string> = {}): Record<string, string> => ({
    client_id: of.client_id,
    response_type: 'code',
    redirect_uri: (of.redirect_uris as string[])[0] as string,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  const writes = (): number[] => [store.writes(MODEL_NAMES.pushedAuthorizationRequest), store.writes(PUSHED_REQUEST_USE_MODEL)];
  /** Where the canonical /authorize sends the browser for `requestUri`: an interaction page, or the `error` (of the error page: no redirect_uri is known for a spent one). */
  const authorize = async (requestUri: string): Promise<string> => {
    const outcome = await outcomeOf(`${running.issuer}/authorize?${form({ client_id: client.client_id, request_uri: requestUri })}`);
    return outcome.interaction ? 'interaction' : String(outcome.error);
  };

  it.each(spellings('/par'))('%s: stored hashes never authenticate, the claims budget holds and nothing is stored, a good push is used once', async (path) => {
    const secret = client.client_secret as string;
    const before = writes();
    const hashes: [string, Record<string, string>, string][] = [
      ['basic hash', { authorization: basic(client.client_id, hashClientSecret(secret)) }, form(fields())],
      ['post hash', {}, form(fields(posting, { client_secret: hashClientSecret(posting.client_secret as string) }))],
    ];
    for (const [name, headers, body] of hashes) {
      const answer = await send(running, 'POST', path, { ...FORM, ...headers }, body);
      if (NOT_SERVED.includes(answer.status)) continue;
      expect({ name, status: answer.status, error: answer.body.error }).toEqual({ name, status: 401, error: 'invalid_client' });
    }
    const flood = await send(running, 'POST', path, { ...FORM, authorization: basic(client.client_id, secret) }, form(fields(client, { claims: JSON.stringify({ userinfo: bracketFlood(3) }) })));
    expect(writes()).toEqual(before);
    if (NOT_SERVED.includes(flood.status)) return;
    expect([flood.status, flood.body.error, flood.body.error_description]).toEqual([400, 'invalid_request', 'the claims parameter expands to 387 claim names; at most 256 are allowed']);
    // A good push (its id_token_hint dropped by content, not by path) is stored once and used once.
    const pushed = await send(running, 'POST', path, { ...FORM, authorization: basic(client.client_id, secret) }, form(fields(client, { id_token_hint: 'a.b.c.d.e' })));
    expect(pushed.status).toBe(201);
    const requestUri = pushed.body.request_uri as string;
    expect(await authorize(requestUri)).toBe('interaction');
    expect(await authorize(requestUri)).toBe('invalid_request_uri');
    reached.push(path);
  });

  it('HEAD and GET at /par are not served', async () => {
    for (const method of ['HEAD', 'GET']) expect(NOT_SERVED).toContain((await send(running, method, '/oidc/v1/par')).status);
  });

  it('generated spellings: a stored hash never authenticates at /par, and nothing is stored (fast-check)', async () => {
    const hash = hashClientSecret(client.client_secret as string);
    const before = writes();
    await fc.assert(
      fc.asyncProperty(spellingArbitrary('/par'), async (path) => {
        const answer = await send(running, 'POST', path.replace('#f', ''), { ...FORM, authorization: basic(client.client_id, hash) }, form(fields()));
        expect(answer.status === 401 ? answer.body.error : NOT_SERVED.includes(answer.status)).toBe(answer.status === 401 ? 'invalid_client' : true);
      }),
      { numRuns: 40 },
    );
    expect(writes()).toEqual(before);
  });
});
