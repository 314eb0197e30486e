import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { refOf } from '../../adapters/inventory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import type { ClaimModule } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

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
