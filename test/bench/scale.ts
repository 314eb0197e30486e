/** Preloading a Redis with many clients, sessions and grants through the real adapter. */
import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';

import { createRedisStore } from '../../adapters/redis.js';

/** Bytes of Redis memory per record of each kind, measured as `used_memory` deltas. */
export interface PreloadResult {
  bytesPerClient: number;
  bytesPerSession: number;
  bytesPerGrant: number;
  seconds: number;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

/** Writes `count` clients, `count` sessions and `count` grants with realistic payloads. */
export async function preload(url: string, keyPrefix: string, count: number): Promise<PreloadResult> {
  const store = createRedisStore({ url, keyPrefix, operationTimeoutMs: 30_000 });
  const redis = new Redis(url);
  const started = performance.now();
  const now = Math.floor(Date.now() / 1000);
  const kinds: [string, (i: number) => Promise<void>][] = [
    [
      'client',
      (i) =>
        store.adapter('Client').upsert(`client-${i}`, {
          client_id: `client-${i}`,
          client_secret: randomBytes(32).toString('base64url'),
          client_id_issued_at: now,
          redirect_uris: [`https://rp-${i}.example.com/callback`],
          id_token_encrypted_response_alg: 'RSA-OAEP-256',
          userinfo_encrypted_response_alg: 'RSA-OAEP-256',
          userinfo_signed_response_alg: 'RS256',
          jwks: { keys: [{ kty: 'RSA', use: 'enc', kid: 'k', e: 'AQAB', n: randomBytes(256).toString('base64url') }] },
        }),
    ],
    [
      'session',
      (i) =>
        store.adapter('Session').upsert(randomBytes(16).toString('base64url'), {
          uid: randomBytes(16).toString('base64url'),
          accountId: `account-${i}`,
          loginTs: now,
          exp: now + 1_209_600,
          iat: now,
          kind: 'Session',
          authorizations: { [`client-${i}`]: { sid: randomBytes(16).toString('base64url'), grantId: `grant-${i}` } },
        }, 1_209_600),
    ],
    [
      'grant',
      (i) =>
        store.adapter('Grant').upsert(`grant-${i}`, {
          accountId: `account-${i}`,
          clientId: `client-${i}`,
          exp: now + 1_209_600,
          iat: now,
          kind: 'Grant',
          openid: { scope: 'openid profile email', claims: ['sub', 'name', 'email'] },
        }, 1_209_600),
    ],
  ];
  const bytes: Record<string, number> = {};
  for (const [kind, write] of kinds) {
    const before = await usedMemory(redis);
    for (let start = 0; start < count; start += 2000) {
      await Promise.all(Array.from({ length: Math.min(2000, count - start) }, (_, j) => write(start + j)));
    }
    bytes[kind] = ((await usedMemory(redis)) - before) / count;
  }
  await store.close();
  redis.disconnect();
  return {
    bytesPerClient: Math.round(bytes.client ?? 0),
    bytesPerSession: Math.round(bytes.session ?? 0),
    bytesPerGrant: Math.round(bytes.grant ?? 0),
    seconds: (performance.now() - started) / 1000,
  };
}
