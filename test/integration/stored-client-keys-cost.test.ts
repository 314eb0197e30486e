/**
 * A stored client's inline keys are judged when a process builds the client from its record (C6), and that
 * judgement costs what the largest accepted set costs (RSA primality tests, about 100 ms): it is paid once per
 * set and process, not again whenever oidc-provider's cache of 100 built clients has dropped the client. Counted,
 * not timed: node:crypto is wrapped so every RSA operation is seen.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';

const real = await import('node:crypto');
let operations = 0;
jest.unstable_mockModule('node:crypto', () => ({
  ...real,
  default: real.default,
  publicEncrypt: (...args: Parameters<typeof real.publicEncrypt>) => {
    operations += 1;
    return real.publicEncrypt(...args);
  },
}));
const { issueInitialAccessToken } = await import('../../lib/index.js');
const { startApp } = await import('../helpers/app.js');
const { encryptionKey, register } = await import('../helpers/registration.js');

type RunningApp = Awaited<ReturnType<typeof startApp>>;

describe('a stored client\'s inline keys are judged once per set and process', () => {
  let running: RunningApp;
  beforeAll(async () => {
    running = await startApp({});
  });
  afterAll(async () => running.close());

  /** A client registered with a fresh RSA key, asking for encrypted ID tokens; its id. */
  async function registered(): Promise<string> {
    const key = await encryptionKey('RSA-OAEP-256', { kid: 'rp' });
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } }, token);
    expect(res.status).toBe(201);
    return String(res.body.client_id);
  }

  /** The RSA operations `Client.find` of `id` took. */
  async function found(id: string): Promise<number> {
    const before = operations;
    expect(await running.app.svc.provider.Client.find(id)).toBeDefined();
    return operations - before;
  }

  it('honest: its first build judges its key (the counter works), and finding it again judges nothing', async () => {
    const id = await registered();
    expect(await found(id)).toBeGreaterThan(0);
    for (let i = 0; i < 5; i += 1) expect(await found(id)).toBe(0);
  });

  it('attack: 200 other clients found between two finds of it (any client_id may be named in an /authorize request) do not make it judged again', async () => {
    const id = await registered();
    expect(await found(id)).toBeGreaterThan(0);
    const records = running.app.svc.store.adapter('Client');
    // Copies without keys or encryption: cheap to build, each taking a place in oidc-provider's cache.
    const { jwks: _jwks, id_token_encrypted_response_alg: _alg, id_token_encrypted_response_enc: _enc, ...plain } = (await records.find(id)) ?? {};
    const others = Array.from({ length: 200 }, (_v, i) => `other-${i}`);
    for (const other of others) await records.upsert(other, { ...plain, client_id: other }, Infinity);
    const costs: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      for (const other of others) await running.app.svc.provider.Client.find(other);
      costs.push(await found(id));
    }
    expect(costs).toEqual([0, 0, 0]);
  });
});
