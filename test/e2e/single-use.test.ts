import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';

import { refOf } from '../../adapters/inventory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import type { ClaimModule } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { deletePrefix, SHARED_REDIS_URL, startOwnRedis, testPrefix, type OwnRedis } from '../helpers/redis.js';
import { registerSigningClient, type SigningClient } from '../helpers/request-objects.js';

const client = confidentialClient();

/**
 * A token request whose deferred writes (the access token, its grant index) fail when the request ends is
 * answered 503 `server_error`, "try again shortly". Its code was consumed at once, before: a retry must not
 * find it spent, or oidc-provider treats the retry as a replay and revokes the grant she just gave.
 */
describe('a token request whose writes fail at its end: the code is not spent (Redis)', () => {
  const PREFIX = 'tokfail:';
  let redis: OwnRedis;
  let admin: Redis;
  let running: RunningApp;
  const acl = (...rules: string[]): Promise<unknown> => admin.call('ACL', 'SETUSER', 'app', 'on', '>pw', 'clearselectors', '+@all', ...rules);
  const healthy = (): Promise<unknown> => acl('resetkeys', '~*', '&*');
  /** Every key is writable but access tokens (as with the master of their slot away on a Cluster). */
  const failAccessTokenWrites = (): Promise<unknown> =>
    acl('resetkeys', '%R~*', '&*', ...['AuthorizationCode', 'Grant', 'grant', 'Session', 'sessionUid', 'Interaction', 'Client', 'ClientSuspension', 'ClientDeletion', 'attempts'].map((m) => `~${PREFIX}${m}:*`));

  beforeAll(async () => {
    redis = await startOwnRedis();
    admin = new Redis(redis.url);
    await healthy();
    running = await startApp({ clients: [client], properties: { 'svc.redis.url': `redis://app:pw@127.0.0.1:${redis.port}`, 'svc.redis.key-prefix': PREFIX } });
  });
  afterAll(async () => {
    await running.close();
    admin.disconnect();
    redis.dispose();
  });

  const codeOf = async (): Promise<{ code: string; verifier: string }> => {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge }));
    return { code: callbackUrl.searchParams.get('code') as string, verifier };
  };

  it('answers 503 while the access token cannot be stored, then redeems the same code once the store takes writes again, her grant kept', async () => {
    const { code, verifier } = await codeOf();
    await failAccessTokenWrites();
    try {
      const refused = await redeemCode(running.issuer, client, code, verifier);
      expect([refused.status, refused.body.error]).toEqual([503, 'server_error']);
    } finally {
      await healthy();
    }
    await running.app.svc.store.ping().catch(() => undefined);
    const grants = await admin.keys(`${PREFIX}Grant:*`);
    expect(grants).toHaveLength(1);
    const retried = await redeemCode(running.issuer, client, code, verifier);
    expect([retried.status, retried.body.error]).toEqual([200, undefined]);
    expect(typeof retried.body.access_token).toBe('string');
    expect(await admin.keys(`${PREFIX}Grant:*`)).toEqual(grants);
    // Still single use: a third redemption is a replay.
    expect((await redeemCode(running.issuer, client, code, verifier)).body.error).toBe('invalid_grant');
    expect(await admin.exists(`${PREFIX}AuthorizationCode:${refOf(code)}`)).toBe(0);
  });
});

describe('a token request that fails while it is served (a claim module down): the code is not spent', () => {
  const plain = confidentialClient({ client_id: 'plain-rp', allow_unencrypted_userinfo: true });
  let running: RunningApp;
  let moduleDown = false;

  beforeAll(async () => {
    const modules: ClaimModule[] = createDemoClaimModules().map((m) => ({
      ...m,
      resolve: (accountId: string, claims: readonly string[]) => {
        if (moduleDown) throw new Error('claim source unreachable');
        return m.resolve(accountId, claims);
      },
    }));
    running = await startApp({ clients: [plain], claimModules: modules });
  });
  afterAll(async () => running.close());

  it('answers server_error, then redeems the same code once the module answers again; a third redemption is a replay', async () => {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, plain, { code_challenge: challenge, scope: 'openid email' }));
    const code = callbackUrl.searchParams.get('code') as string;
    moduleDown = true;
    try {
      const refused = await redeemCode(running.issuer, plain, code, verifier);
      expect([refused.status, refused.body.error]).toEqual([500, 'server_error']);
    } finally {
      moduleDown = false;
    }
    const retried = await redeemCode(running.issuer, plain, code, verifier);
    expect([retried.status, typeof retried.body.id_token]).toEqual([200, 'string']);
    expect((await redeemCode(running.issuer, plain, code, verifier)).body.error).toBe('invalid_grant');
  });

  it('a wrong code_verifier (refused before the code is consumed) still leaves the code to its client once', async () => {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, plain, { code_challenge: challenge }));
    const code = callbackUrl.searchParams.get('code') as string;
    expect((await redeemCode(running.issuer, plain, code, pkcePair().verifier)).body.error).toBe('invalid_grant');
    expect((await redeemCode(running.issuer, plain, code, verifier)).status).toBe(200);
    expect((await redeemCode(running.issuer, plain, code, verifier)).body.error).toBe('invalid_grant');
  });
});

/**
 * oidc-provider remembers a client assertion's `jti` (its ReplayDetection model) by looking it up, then writing it:
 * requests presenting one assertion side by side all found none and were all served.
 */
describe('a private_key_jwt client assertion is used once, also by concurrent requests (Redis)', () => {
  const prefix = testPrefix('assertion');
  let running: RunningApp;
  let client: SigningClient;

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix } });
    client = await registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'PS256' });
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  const assertion = async (lifetime = 60, jti = randomUUID(), clockAhead = 0): Promise<string> => {
    const id = String(client.metadata.client_id);
    const now = Math.floor(Date.now() / 1000) + clockAhead;
    return new SignJWT({ jti }).setProtectedHeader({ alg: 'PS256', kid: client.kid }).setIssuer(id).setSubject(id).setAudience(running.issuer).setIssuedAt(now).setExpirationTime(now + lifetime).sign(client.signingKey);
  };
  const replayMarks = async (): Promise<number> => {
    const redis = new Redis(SHARED_REDIS_URL);
    try {
      return (await redis.keys(`${prefix}ReplayDetection:*`)).length;
    } finally {
      redis.disconnect();
    }
  };
  const push = async (clientAssertion: string): Promise<[number, string | undefined]> => {
    const response = await fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: String(client.metadata.client_id),
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: clientAssertion,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: 'https://rp.example/cb',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }).toString(),
    });
    return [response.status, ((await response.json()) as { error?: string }).error];
  };

  it('of 10 pushed requests sent side by side with one assertion, one is served and 9 get invalid_client; later ones too', async () => {
    const shared = await assertion();
    const answers = await Promise.all(Array.from({ length: 10 }, () => push(shared)));
    expect(answers.filter(([status]) => status === 201)).toHaveLength(1);
    expect(answers.filter(([status, error]) => status === 401 && error === 'invalid_client')).toHaveLength(9);
    expect(await push(shared)).toEqual([401, 'invalid_client']);
  });

  it('refuses an assertion expiring more than an hour ahead (10 years, or past what the store can keep) with invalid_client, remembering no jti', async () => {
    const before = await replayMarks();
    for (const lifetime of [3600 + 60, 10 * 365 * 86400, 1e16]) expect(await push(await assertion(lifetime, randomUUID(), 300))).toEqual([401, 'invalid_client']);
    expect(await push(await assertion(3600 + 360))).toEqual([401, 'invalid_client']);
    expect(await replayMarks()).toBe(before);
  });

  it("honest: serves an hour's assertion from a client whose clock runs 4 minutes ahead (Authlib dates exp iat + 3600 by its own clock), once", async () => {
    const fast = await assertion(3600, randomUUID(), 240);
    expect(await push(fast)).toEqual([201, undefined]);
    expect(await push(fast)).toEqual([401, 'invalid_client']);
  });

  it('serves assertions of 60 s, 10 minutes and one hour (what client libraries send), each once', async () => {
    for (const lifetime of [60, 600, 3600]) {
      const shared = await assertion(lifetime);
      expect(await push(shared)).toEqual([201, undefined]);
      expect(await push(shared)).toEqual([401, 'invalid_client']);
    }
  });

  it('10 pushed requests side by side, each with its own assertion, are all served', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, async () => push(await assertion())));
    expect(answers).toEqual(Array.from({ length: 10 }, () => [201, undefined]));
  });
});
