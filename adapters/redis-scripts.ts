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
 * Shared head of the attempt scripts: the server's clock (so processes with skewed clocks agree),
 * the hash's fields (`f` failures in the window, `w` window end ms, `u` locked until ms, `s`
 * lockouts, `r` failures since the last success, `L:<lease>` lapse ms of each attempt in flight),
 * lapsed leases dropped, and `keep()`, which sets the key's expiry to the longest thing it remembers.
 * ARGV[1] lease id, ARGV[2] strike memory ms, ARGV[3] run memory ms.
 */
const ATTEMPT_HEAD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local h = {}
local leases = 0
for i = 1, #all, 2 do
  local field, value = all[i], all[i + 1]
  if string.sub(field, 1, 2) == 'L:' then
    if tonumber(value) <= now then redis.call('HDEL', KEYS[1], field) else leases = leases + 1; h[field] = value end
  else h[field] = value end
end
local f = tonumber(h.f or '0')
local w = tonumber(h.w or '0')
local u = tonumber(h.u or '0')
local s = tonumber(h.s or '0')
local r = tonumber(h.r or '0')
local lease = 'L:' .. ARGV[1]
local function keep()
  local until_ = math.max(w, u)
  for field, value in pairs(h) do
    if string.sub(field, 1, 2) == 'L:' and tonumber(value) > until_ then until_ = tonumber(value) end
  end
  if s > 0 and now + tonumber(ARGV[2]) > until_ then until_ = now + tonumber(ARGV[2]) end
  if r > 0 and now + tonumber(ARGV[3]) > until_ then until_ = now + tonumber(ARGV[3]) end
  if until_ > now then redis.call('PEXPIREAT', KEYS[1], until_) else redis.call('DEL', KEYS[1]) end
end
`;

/**
 * KEYS[1] attempt hash; ARGV as {@link ATTEMPT_HEAD}, then limit, consecutive limit (0: none),
 * max cool-down ms, lease ms. Returns 0 (lease taken), -1 (the budget is held by attempts in
 * flight) or the ms until the key may try again.
 */
export const ATTEMPT_ENTER = `${ATTEMPT_HEAD}
if u > now then return u - now end
local limit = tonumber(ARGV[4])
local consecutive = tonumber(ARGV[5])
if consecutive > 0 and r >= consecutive then return math.max(1000, tonumber(ARGV[6])) end
if w <= now then f = 0; w = 0 end
if f + leases >= limit then return -1 end
h[lease] = now + tonumber(ARGV[7])
redis.call('HSET', KEYS[1], lease, h[lease])
if #all == 0 or (h[lease] > math.max(w, u) and s == 0 and r == 0) then keep() end
return 0`;

/**
 * KEYS[1] attempt hash; ARGV as {@link ATTEMPT_HEAD}, then limit, window ms, base cool-down ms,
 * max cool-down ms. Drops the lease and counts a failure; returns 1 when it was within the budget.
 */
export const ATTEMPT_FAIL = `${ATTEMPT_HEAD}
local held = h[lease] ~= nil
if held then redis.call('HDEL', KEYS[1], lease); h[lease] = nil end
r = r + 1
if u > now then
  redis.call('HSET', KEYS[1], 'r', r)
  keep()
  if held then return 1 else return 0 end
end
local limit = tonumber(ARGV[4])
if w <= now then f = 0; w = now + tonumber(ARGV[5]) end
local within = held or f < limit
f = f + 1
if f >= limit then
  s = s + 1
  local cool = tonumber(ARGV[6]) * (2 ^ (s - 1))
  if cool > tonumber(ARGV[7]) then cool = tonumber(ARGV[7]) end
  u = now + cool
  f = 0
  w = 0
end
redis.call('HSET', KEYS[1], 'f', f, 'w', w, 'u', u, 's', s, 'r', r)
keep()
if within then return 1 else return 0 end`;

/**
 * KEYS[1] attempt hash; ARGV[1] lease id (empty: none), ARGV[2] 1 to forget the failures and
 * cool-down. Needs neither the clock nor a read: a hash whose last field goes is deleted by Redis,
 * and leases of others keep the expiry they had.
 */
export const ATTEMPT_LEAVE = `
if ARGV[1] ~= '' then redis.call('HDEL', KEYS[1], 'L:' .. ARGV[1]) end
if ARGV[2] == '1' then redis.call('HDEL', KEYS[1], 'f', 'w', 'u', 's', 'r') end
return 1`;
