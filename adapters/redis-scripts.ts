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

/**
 * KEYS[1] attempt hash (`n` count in window, `w` window end ms, `u` locked until ms, `s` lockouts);
 * ARGV: limit, window ms, base cool-down ms, max cool-down ms, strike memory ms. Uses the server's
 * clock, so processes with skewed clocks agree. Returns 0 (allowed) or the ms until allowed again.
 */
export const ATTEMPT_TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local base = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local memory = tonumber(ARGV[5])
local h = redis.call('HMGET', KEYS[1], 'u', 'w', 's')
local u = tonumber(h[1] or '0')
if u > now then return u - now end
local w = tonumber(h[2] or '0')
local s = tonumber(h[3] or '0')
local n = 1
if w > now then n = redis.call('HINCRBY', KEYS[1], 'n', 1) else
  w = now + window
  redis.call('HSET', KEYS[1], 'n', 1, 'w', w)
end
if n <= limit then
  local keep = w - now
  if s > 0 and memory > keep then keep = memory end
  redis.call('PEXPIRE', KEYS[1], keep)
  return 0
end
s = s + 1
local cool = base * (2 ^ (s - 1))
if cool > max then cool = max end
redis.call('HSET', KEYS[1], 's', s, 'u', now + cool, 'n', 0, 'w', 0)
local keep = memory
if cool > keep then keep = cool end
redis.call('PEXPIRE', KEYS[1], keep)
return cool`;

/** KEYS[1] attempt hash. Gives one reservation back (never below zero). */
export const ATTEMPT_GIVE_BACK = `
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
if n > 0 then redis.call('HINCRBY', KEYS[1], 'n', -1) end
return 1`;
