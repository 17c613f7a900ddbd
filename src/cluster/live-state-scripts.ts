/**
 * @module The Lua scripts of RedisLiveState: each runs atomically on the Redis server, so two
 * engines admitting at once cannot both take the last place under a limit. Keys a script derives
 * from a call's hash are built inside it, which a single Redis (or a Sentinel-managed primary)
 * allows; Redis Cluster would need hash tags instead.
 */

/**
 * KEYS[1] tenant live set, KEYS[2] carrier live set, KEYS[3] call hash, KEYS[4] node's call set,
 * KEYS[5] control id key. ARGV[1] member `created_at|call_id`, ARGV[2] tenant limit, ARGV[3]
 * carrier limit, ARGV[4] call id, ARGV[5..] hash field/value pairs.
 * Live sets rather than counters: a counter leaks when an engine dies mid-call, a set heals when
 * the dead node's calls are released (docs/CLUSTER.md "Live state in Redis").
 */
export const ADMIT = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {1, 'ok'} end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return {0, 'tenant'} end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return {0, 'carrier'} end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('HSET', KEYS[3], unpack(ARGV, 5))
redis.call('SADD', KEYS[4], ARGV[4])
redis.call('SET', KEYS[5], ARGV[4])
return {1, 'ok'}`;

/** Shared by RELEASE and FORGET_NODE: removes one call (by id) from every key that names it. */
const RELEASE_FN = `
local function release(id)
  local key = 'vgw:call:' .. id
  local f = redis.call('HMGET', key, 'tenant_id', 'carrier', 'created_at', 'node_id', 'call_control_id')
  if not f[1] then return 0 end
  local member = f[3] .. '|' .. id
  redis.call('ZREM', 'vgw:live:' .. f[1], member)
  redis.call('ZREM', 'vgw:carrier-live:' .. f[2], member)
  redis.call('SREM', 'vgw:node-calls:' .. f[4], id)
  if redis.call('GET', 'vgw:control:' .. f[5]) == id then redis.call('DEL', 'vgw:control:' .. f[5]) end
  redis.call('DEL', key)
  return 1
end`;

/** ARGV[1] call id. */
export const RELEASE = `${RELEASE_FN}
return release(ARGV[1])`;

/** ARGV[1] node id: releases each of its calls, then forgets the node; returns the released ids. */
export const FORGET_NODE = `${RELEASE_FN}
local ids = redis.call('SMEMBERS', 'vgw:node-calls:' .. ARGV[1])
local released = {}
for _, id in ipairs(ids) do
  if release(id) == 1 then released[#released + 1] = id end
end
redis.call('DEL', 'vgw:node-calls:' .. ARGV[1], 'vgw:node:' .. ARGV[1])
redis.call('ZREM', 'vgw:nodes', ARGV[1])
return released`;

/**
 * KEYS[1] lease hash, KEYS[2] node's call set, KEYS[3] announced nodes (sorted set: score = last
 * renewal, which outlives the lease for the reaper). ARGV[1] node id, ARGV[2] TTL ms, ARGV[3..]
 * field/value pairs. The time is Redis's: engines' clocks may differ.
 */
export const RENEW_LEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'live_calls', redis.call('SCARD', KEYS[2]), 'renewed_at', now, unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[3], now, ARGV[1])
return now`;

/** KEYS[1] call hash. ARGV field/value pairs: written only while the call is admitted. */
export const UPDATE_CALL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`;

/**
 * KEYS[1] tenant live set. ARGV[1] exclusive upper bound (`(created_at|id`, or `+`), ARGV[2]
 * count: up to that many members newest first, each followed by its list JSON (false once gone).
 */
export const LIVE_PAGE = `
local members = redis.call('ZRANGE', KEYS[1], ARGV[1], '-', 'BYLEX', 'REV', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, m in ipairs(members) do
  local id = string.sub(m, string.find(m, '|', 1, true) + 1)
  out[#out + 1] = m
  out[#out + 1] = redis.call('HGET', 'vgw:call:' .. id, 'list')
end
return out`;

/**
 * KEYS[1] call hash. ARGV[1] leg, ARGV[2] its snapshot: merged into the `dialogs` map in place, so
 * two legs never overwrite each other. The snapshot stays a string: cjson would turn its empty
 * arrays (a dialog with no route set) into objects.
 */
export const STORE_DIALOG = `
local d = redis.call('HGET', KEYS[1], 'dialogs')
if not d then return 0 end
local m = cjson.decode(d)
m[ARGV[1]] = ARGV[2]
redis.call('HSET', KEYS[1], 'dialogs', cjson.encode(m))
return 1`;

/** KEYS[1] lock key. ARGV[1] the holder's token: only the holder releases it. */
export const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
