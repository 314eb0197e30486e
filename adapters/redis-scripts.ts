/**
 * Lua scripts of the Redis store. Each touches exactly one key, so each is atomic and Cluster-safe
 * without hash tags. Records are strings (see `redis-records.ts`): a header (`j` or `-`, then
 * `c<epoch>` when consumed), `|`, the payload JSON. Records of earlier versions are hashes (`p`, `j`,
 * `c`); the scripts still consume and give those back (`GET` answers WRONGTYPE for them).
 * `INFO commandstats` counts every command a script runs, so each script runs as few as it can.
 */

/**
 * KEYS[1] record; ARGV[1] epoch seconds. Returns 1 consumed now, 0 consumed before, -1 missing.
 * Rewrites only the header, keeping payload and expiry.
 */
export const CONSUME = `
local v = redis.pcall('GET', KEYS[1])
if type(v) == 'table' then
  if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
  return redis.call('HSETNX', KEYS[1], 'c', ARGV[1])
end
if not v then return -1 end
local bar = string.find(v, '|', 1, true)
if not bar or bar < 2 then return -1 end
if bar > 2 then return 0 end
redis.call('SET', KEYS[1], string.sub(v, 1, 1) .. 'c' .. ARGV[1] .. string.sub(v, 2), 'KEEPTTL')
return 1`;

/**
 * KEYS[1] record. Removes only the consumed mark, keeping payload and expiry.
 * Returns 1 when the record exists, 0 when it is missing.
 */
export const UNCONSUME = `
local v = redis.pcall('GET', KEYS[1])
if type(v) == 'table' then
  if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
  redis.call('HDEL', KEYS[1], 'c')
  return 1
end
if not v then return 0 end
local bar = string.find(v, '|', 1, true)
if bar and bar > 2 then redis.call('SET', KEYS[1], string.sub(v, 1, 1) .. string.sub(v, bar), 'KEEPTTL') end
return 1`;

/**
 * KEYS[1] grant index (a set of record keys); ARGV[1] member; ARGV[2] member ttl (0 = none).
 * The index lives as long as its longest-lived member: its TTL is read before the member is added
 * (-2 new, -1 without expiry) and raised only when the member outlives it.
 */
export const INDEX_ADD = `
local current = redis.call('TTL', KEYS[1])
redis.call('SADD', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl == 0 then
  if current >= 0 then redis.call('PERSIST', KEYS[1]) end
elseif current == -2 or (current >= 0 and current < ttl) then
  redis.call('EXPIRE', KEYS[1], ttl)
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
 * Within a running window without lockouts the expiry already ends the window: it is not set again.
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
local fresh = w <= now
if fresh then
  w = now + window
  redis.call('HSET', KEYS[1], 'n', 1, 'w', w)
else
  n = redis.call('HINCRBY', KEYS[1], 'n', 1)
end
if n <= limit then
  if fresh or s > 0 then
    local keep = w - now
    if s > 0 and memory > keep then keep = memory end
    redis.call('PEXPIRE', KEYS[1], keep)
  end
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

/**
 * KEYS[1] attempt hash. Gives one reservation back (never below zero). A key that expired in the
 * meantime is not re-created.
 */
export const ATTEMPT_GIVE_BACK = `
local n = redis.call('HINCRBY', KEYS[1], 'n', -1)
if n < 0 then
  if redis.call('HLEN', KEYS[1]) == 1 then redis.call('DEL', KEYS[1]) else redis.call('HSET', KEYS[1], 'n', 0) end
end
return 1`;
