/*
 * Lua scripts of the Redis store. Each touches exactly one key (the attempt failure: keys of one hash tag): atomic and
 * Cluster-safe. Records are as `redis-records.ts` writes them. Each runs as few commands as it can
 * (`INFO commandstats` counts every one).
 */

/** KEYS[1] record; ARGV[1] epoch seconds; ARGV[2] this consume's marker. Returns 1 consumed now, 0 consumed before, -1 missing. */
export const CONSUME = `
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
local bar = string.find(v, '|', 1, true)
if not bar or bar < 2 then return -1 end
if bar > 2 then return 0 end
redis.call('SET', KEYS[1], string.sub(v, 1, 1) .. 'c' .. ARGV[1] .. '.' .. ARGV[2] .. string.sub(v, 2), 'KEEPTTL')
return 1`;

/**
 * KEYS[1] record; ARGV[1] a consume's marker. Removes the consumed mark only when that consume made it (returns 1):
 * sent after a consume whose answer timed out, it undoes that consume should it land late, and never another's.
 */
export const UNCONSUME_OWN = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local bar = string.find(v, '|', 1, true)
local dot = string.find(v, '.', 1, true)
if not bar or not dot or dot > bar or string.sub(v, dot + 1, bar - 1) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], string.sub(v, 1, 1) .. string.sub(v, bar), 'KEEPTTL')
return 1`;

/** KEYS[1] record. Removes the consumed mark; returns 1 when the record exists, 0 when it is missing. */
export const UNCONSUME = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local bar = string.find(v, '|', 1, true)
if bar and bar > 2 then redis.call('SET', KEYS[1], string.sub(v, 1, 1) .. string.sub(v, bar), 'KEEPTTL') end
return 1`;

/** KEYS[1] an index key; ARGV[1] a record's reference. Deletes the index only while it still points at that record. */
export const UNINDEX = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * KEYS[1] grant index (a sorted set: record key → its expiry in the server's epoch seconds, `inf` for none); ARGV[1]
 * member; ARGV[2] member ttl (0 = none). Members expired by then are dropped, so a grant in use for days keeps only
 * its live tokens; the index lives as long as its longest-lived member (TTL after the drop: -2 gone, -1 no expiry).
 */
export const INDEX_ADD = `
local now = tonumber(redis.call('TIME')[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local current = redis.call('TTL', KEYS[1])
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], ttl == 0 and 'inf' or now + ttl, ARGV[1])
if ttl == 0 then
  if current >= 0 then redis.call('PERSIST', KEYS[1]) end
elseif current == -2 or (current >= 0 and current < ttl) then
  redis.call('EXPIRE', KEYS[1], ttl)
end
return 1`;

/**
 * Shared head of the attempt scripts: the hash's fields (`f` failures in the window, `w` window end ms, `u` locked until
 * ms, `s` lockouts, `r` failures since the last success), then ({@link ATTEMPT_CLOCK}) the server's clock (so processes
 * with skewed clocks agree). ARGV[1] consecutive limit (0: none), ARGV[2] max cool-down ms. `wait` is what the
 * pre-check answers.
 */
const ATTEMPT_FIELDS = `
local h = redis.call('HMGET', KEYS[1], 'f', 'w', 'u', 's', 'r')
`;
const ATTEMPT_CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = tonumber(h[1] or '0')
local w = tonumber(h[2] or '0')
local u = tonumber(h[3] or '0')
local s = tonumber(h[4] or '0')
local r = tonumber(h[5] or '0')
local consecutive = tonumber(ARGV[1])
local wait = 0
if u > now then wait = u - now
elseif consecutive > 0 and r >= consecutive then wait = math.max(1000, tonumber(ARGV[2])) end
`;

/** KEYS[1] attempt hash; ARGV as {@link ATTEMPT_FIELDS}. Returns the pre-check's wait (0: may try); a key neither locked nor in a run asks no clock. */
export const ATTEMPT_CHECK = `${ATTEMPT_FIELDS}
if not h[3] and not h[5] then return 0 end${ATTEMPT_CLOCK}
return wait`;

/**
 * KEYS[1] attempt hash, KEYS[2] and KEYS[3] its bucket's counters by standing and by expiry, KEYS[4] the bucket's floor
 * (the standing of the last counter it replaced; all four of one hash tag); ARGV as {@link ATTEMPT_FIELDS}, then limit,
 * window ms, base cool-down ms, strike memory ms (lockouts count towards the next cool-down until that long after the
 * last one ended), run memory ms (0 without a consecutive limit; a run shorter than the limit is kept in proportion, as
 * `runMemoryMs`), the bucket's cap (0: none; beyond it the counters of lowest standing other than this one are
 * deleted, as the memory store's quarter does), and 1 for an expendable counter. A counter's standing, set at each
 * failure and never lowered while it lives, is the floor plus its run (plus nothing when expendable), GreedyDual as in
 * `memory-attempts.ts`: counters that failed often once stand above the rest only until others replace them. Scores
 * are `standing * 1e10 + epoch seconds` of the last failure. Returns `AttemptCounter.fail`'s answer.
 */
export const ATTEMPT_FAIL = `${ATTEMPT_FIELDS}${ATTEMPT_CLOCK}
local limit = tonumber(ARGV[3])
if u + tonumber(ARGV[6]) <= now then s = 0 end
r = r + 1
local locked = wait
if locked == 0 then
  if w <= now then f = 0; w = now + tonumber(ARGV[4]) end
  f = f + 1
  if f >= limit then
    s = s + 1
    local cool = tonumber(ARGV[5]) * (2 ^ (s - 1))
    if cool > tonumber(ARGV[2]) then cool = tonumber(ARGV[2]) end
    u = now + cool
    f = 0
    w = 0
  end
end
redis.call('HSET', KEYS[1], 'f', f, 'w', w, 'u', u, 's', s, 'r', r)
local keep = math.max(w, u)
if s > 0 then keep = math.max(keep, u + tonumber(ARGV[6])) end
local runMs = tonumber(ARGV[7])
if consecutive > 0 then runMs = math.min(runMs, math.floor(r * runMs / consecutive)) end
keep = math.max(keep, now + runMs)
redis.call('PEXPIREAT', KEYS[1], keep)
local cap = tonumber(ARGV[8])
if cap > 0 then
  local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 8)
  if #gone > 0 then
    redis.call('ZREM', KEYS[2], unpack(gone))
    redis.call('ZREM', KEYS[3], unpack(gone))
  end
  local floor = tonumber(redis.call('GET', KEYS[4]) or '0')
  local before = redis.call('ZSCORE', KEYS[2], KEYS[1])
  local over = redis.call('ZCARD', KEYS[2]) - cap
  if not before then over = over + 1 end
  if over > 0 then
    local lowest = redis.call('ZRANGE', KEYS[2], 0, over, 'WITHSCORES')
    local raised = floor
    for i = 1, #lowest, 2 do
      local k = lowest[i]
      if over > 0 and k ~= KEYS[1] then
        redis.call('DEL', k)
        redis.call('ZREM', KEYS[2], k)
        redis.call('ZREM', KEYS[3], k)
        raised = math.max(raised, math.floor(tonumber(lowest[i + 1]) / 1e10))
        over = over - 1
      end
    end
    if raised > floor then
      floor = raised
      redis.call('SET', KEYS[4], floor)
    end
  end
  local standing = floor
  if ARGV[9] ~= '1' then standing = floor + r end
  if h[1] and before then standing = math.max(standing, math.floor(tonumber(before) / 1e10)) end
  redis.call('ZADD', KEYS[2], standing * 1e10 + math.floor(now / 1000), KEYS[1])
  redis.call('ZADD', KEYS[3], keep, KEYS[1])
  local last = math.max(keep - now, redis.call('PTTL', KEYS[2]))
  for i = 2, 4 do
    if redis.call('PTTL', KEYS[i]) < last then redis.call('PEXPIREAT', KEYS[i], now + last) end
  end
end
return locked`;
