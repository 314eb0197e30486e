/**
 * Lua scripts of the Redis store. Each touches exactly one key, so each is atomic and Cluster-safe
 * without hash tags. Records are hashes: `p` the payload JSON (without `jti`), `j` = "1" when `jti`
 * equals the id and was left out, `c` the consumed timestamp.
 */

/** KEYS[1] record; ARGV: payload JSON, jti flag, ttl seconds (0 = none), consumed ('' = none). */
export const UPSERT = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'p', ARGV[1], 'j', ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'c', ARGV[4]) end
local ttl = tonumber(ARGV[3])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return 1`;

/** KEYS[1] record; ARGV[1] epoch seconds. Returns 1 consumed now, 0 consumed before, -1 missing. */
export const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], 'c', ARGV[1])`;

/**
 * KEYS[1] grant index (a set of record keys); ARGV[1] member; ARGV[2] member ttl (0 = none).
 * The index lives as long as its longest-lived member.
 */
export const INDEX_ADD = `
local existed = redis.call('EXISTS', KEYS[1])
redis.call('SADD', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl == 0 then
  redis.call('PERSIST', KEYS[1])
elseif existed == 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
else
  local current = redis.call('TTL', KEYS[1])
  if current ~= -1 and current < ttl then redis.call('EXPIRE', KEYS[1], ttl) end
end
return 1`;

/** KEYS[1] grant index. Returns its members and deletes it. */
export const INDEX_TAKE = `
local members = redis.call('SMEMBERS', KEYS[1])
redis.call('DEL', KEYS[1])
return members`;
