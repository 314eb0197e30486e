/**
 * The Redis adapter a user would write for vanilla oidc-provider by following its published
 * example: one JSON string per record (a hash `{payload, consumed}` for the models that can be
 * consumed, so `consume` is one HSET), every write as one MULTI/EXEC, a list per grant of the keys
 * to revoke, and index keys for `uid` and `userCode`. Written here for the benchmark only (the
 * baseline of `npm run bench`); it keeps none of svc-connect's rules (ids in keys, jti in payloads,
 * no atomic consume).
 */
import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

/** An adapter factory (one adapter per model) on `client`, every key under `prefix`. */
export function plainRedisAdapter(client: Redis, prefix: string): (model: string) => Adapter {
  const grantKey = (id: string): string => `${prefix}grant:${id}`;
  const uidKey = (uid: string): string => `${prefix}uid:${uid}`;
  const userCodeKey = (code: string): string => `${prefix}userCode:${code}`;

  return (model) => {
    const key = (id: string): string => `${prefix}${model}:${id}`;
    const consumable = CONSUMABLE.has(model);

    const find = async (id: string): Promise<AdapterPayload | undefined> => {
      if (consumable) {
        const data = await client.hgetall(key(id));
        if (!data.payload) return undefined;
        const { payload, ...rest } = data;
        return { ...rest, ...(JSON.parse(payload) as AdapterPayload) };
      }
      const data = await client.get(key(id));
      return data ? (JSON.parse(data) as AdapterPayload) : undefined;
    };

    return {
      async upsert(id, payload, expiresIn) {
        const k = key(id);
        const multi = client.multi();
        if (consumable) multi.hset(k, { payload: JSON.stringify(payload) });
        else multi.set(k, JSON.stringify(payload));
        if (expiresIn) multi.expire(k, expiresIn);
        if (GRANTABLE.has(model) && payload.grantId) {
          const g = grantKey(payload.grantId);
          multi.rpush(g, k);
          // The grant list lives as long as its longest-lived token.
          const ttl = await client.ttl(g);
          if (expiresIn && expiresIn > ttl) multi.expire(g, expiresIn);
        }
        if (payload.userCode) {
          multi.set(userCodeKey(payload.userCode), id);
          if (expiresIn) multi.expire(userCodeKey(payload.userCode), expiresIn);
        }
        if (payload.uid) {
          multi.set(uidKey(payload.uid), id);
          if (expiresIn) multi.expire(uidKey(payload.uid), expiresIn);
        }
        await multi.exec();
      },
      find,
      async findByUid(uid) {
        const id = await client.get(uidKey(uid));
        return id ? find(id) : undefined;
      },
      async findByUserCode(userCode) {
        const id = await client.get(userCodeKey(userCode));
        return id ? find(id) : undefined;
      },
      async consume(id) {
        await client.hset(key(id), 'consumed', Math.floor(Date.now() / 1000));
      },
      async destroy(id) {
        await client.del(key(id));
      },
      async revokeByGrantId(grantId) {
        const keys = await client.lrange(grantKey(grantId), 0, -1);
        const multi = client.multi();
        for (const k of keys) multi.del(k);
        multi.del(grantKey(grantId));
        await multi.exec();
      },
    };
  };
}
