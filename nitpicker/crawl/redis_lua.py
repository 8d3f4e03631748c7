"""The Lua scripts of the Redis frontier (:mod:`nitpicker.crawl.redis_frontier`).

Each script runs atomically in Redis: no other worker's call sees half of it. ``KEYS[1]`` is
the crawl's key prefix ``P``; the keys under it:

========================  =========  =========================================================
key                       type       what it holds
========================  =========  =========================================================
``P:ids``                 hash       frontier key -> entry id (the dedup set: a key is queued once)
``P:rows``                hash       entry id -> JSON ``[key, url, depth, mode]``
``P:state``               hash       entry id -> 0 pending, 1 leased, 2 done
``P:pending``             zset       pending entry ids of the site, scored ``depth * 1e12 + id`` (shallowest first)
``P:checks``              zset       pending entry ids only checked (``FollowMode.METADATA``), scored alike:
                                     leased when ``P:pending`` is empty (the site first)
``P:open``                zset       frontier keys not done yet, all scored 0 (prefix look-ups)
``P:holder``              hash       leased entry id -> the lease token that holds it
``P:lease:<token>``       set        the entry ids a lease holds (a chunk of up to ~200)
``P:leases``              zset       live lease tokens, scored by their deadline (ms, Redis clock)
``P:spent``               set        tokens whose chunk is crawled or expired: never granted again
``P:seq``                 string     the last entry id
``P:stats``               hash       ``done``, ``expired`` counters
``P:meta``                hash       ``roots`` (JSON), ``created_at``: which crawl this is
``P:hosts``               hash       ``host:port`` -> JSON ``[error, why, probe_at_ms]``: the hosts
                                     a worker's breaker gave up on (:mod:`nitpicker.archive.host_board`)
========================  =========  =========================================================

A lease token is ``<worker>:<chunk number>``. Leasing with a token that holds a chunk returns
that chunk's entries again (a retried call whose answer was lost gets exactly what the first
call took); leasing with a spent token returns nothing (seed 002 A14, idempotent re-claims).
Every lease call first returns the entries of expired leases to pending (a dead worker's chunk),
and every acknowledgement pushes the deadline of the lease it belongs to.

The given-up hosts ride on ``FLUSH`` (the job's optional ``give_up`` and ``well`` lists write
them) and ``COUNTS``: both replies end with one more element, a JSON list of
``[host, error, why, ms_left, probe_at_ms]`` for the hosts whose probe time is ahead (Redis's
clock). The elements before it are as they were, so a reader of the old replies (the first four
counts, then ``added``) reads the same; ``LEASE``'s reply is unchanged. A worker of an older
version ignores ``P:hosts`` (it keeps its own breaker).
"""

from __future__ import annotations

from typing import Final

from nitpicker.items import FollowMode

__all__ = ["CLAIM", "COUNTS", "DROP", "FLUSH", "LEASE", "RELEASE", "RELEASE_TOKENS"]

_PRELUDE: Final = r"""
local P = KEYS[1]
local PREDICTED, FULL, CHECK = @PREDICTED@, @FULL@, @CHECK@

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function score(depth, id)
  return tonumber(depth) * 1e12 + tonumber(id)
end

local function row_of(id)
  local raw = redis.call('HGET', P .. ':rows', id)
  if not raw then return nil end
  return cjson.decode(raw)
end

-- The pending zset of an entry of `mode`: the site's, or the checks' (leased after it).
local function lane(mode)
  if tonumber(mode) == CHECK then return P .. ':checks' end
  return P .. ':pending'
end

-- pending (both lanes), leased, done, pending checks
local function counts()
  local checks = redis.call('ZCARD', P .. ':checks')
  return {
    redis.call('ZCARD', P .. ':pending') + checks,
    redis.call('HLEN', P .. ':holder'),
    tonumber(redis.call('HGET', P .. ':stats', 'done') or '0'),
    checks,
  }
end

-- The hosts given up on whose probe time is ahead, as JSON (see the module's doc).
local function given_up_hosts()
  local now = now_ms()
  local out = {}
  local all = redis.call('HGETALL', P .. ':hosts')
  for i = 1, #all, 2 do
    local h = cjson.decode(all[i + 1])
    local at = tonumber(h[3])
    if at > now then table.insert(out, {all[i], h[1], h[2], at - now, at}) end
  end
  if #out == 0 then return '[]' end
  return cjson.encode(out)
end

local function retire(token)
  redis.call('DEL', P .. ':lease:' .. token)
  redis.call('ZREM', P .. ':leases', token)
  redis.call('SADD', P .. ':spent', token)
end

-- The lease holding `id` lets go of it; a lease left empty is spent.
local function unhold(id)
  local token = redis.call('HGET', P .. ':holder', id)
  if not token then return end
  redis.call('HDEL', P .. ':holder', id)
  local lease = P .. ':lease:' .. token
  redis.call('SREM', lease, id)
  if redis.call('SCARD', lease) == 0 then retire(token) end
end

local function to_pending(id)
  local row = row_of(id)
  redis.call('HSET', P .. ':state', id, 0)
  redis.call('ZADD', lane(row[4]), score(row[3], id), id)
end

local function finish(id)
  local state = redis.call('HGET', P .. ':state', id)
  if (not state) or state == '2' then return 0 end
  local row = row_of(id)
  if state == '0' then
    redis.call('ZREM', lane(row[4]), id)
  else
    unhold(id)
  end
  redis.call('HSET', P .. ':state', id, 2)
  redis.call('ZREM', P .. ':open', row[1])
  redis.call('HINCRBY', P .. ':stats', 'done', 1)
  return 1
end

local function insert(key, url, depth, mode)
  local id = redis.call('INCR', P .. ':seq')
  redis.call('HSET', P .. ':ids', key, id)
  redis.call('HSET', P .. ':rows', id, cjson.encode({key, url, tonumber(depth), tonumber(mode)}))
  redis.call('ZADD', P .. ':open', 0, key)
  return tostring(id)
end

local function hold(id, token, deadline)
  redis.call('HSET', P .. ':state', id, 1)
  redis.call('HSET', P .. ':holder', id, token)
  redis.call('SADD', P .. ':lease:' .. token, id)
  redis.call('ZADD', P .. ':leases', deadline, token)
end

-- Leases past their deadline: their entries not done are pending again.
local function reclaim(now)
  local expired = redis.call('ZRANGEBYSCORE', P .. ':leases', '-inf', now)
  for _, token in ipairs(expired) do
    for _, id in ipairs(redis.call('SMEMBERS', P .. ':lease:' .. token)) do
      if redis.call('HGET', P .. ':state', id) == '1' then to_pending(id) end
      redis.call('HDEL', P .. ':holder', id)
    end
    retire(token)
    redis.call('HINCRBY', P .. ':stats', 'expired', 1)
  end
end
""".replace("@PREDICTED@", str(int(FollowMode.PREDICTED))).replace(
    "@FULL@", str(int(FollowMode.FULL))).replace("@CHECK@", str(int(FollowMode.METADATA)))

LEASE: Final = _PRELUDE + r"""
-- ARGV: token, count, ttl_ms, tokens to renew...
local token, count, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
local deadline = now + ttl
for i = 4, #ARGV do redis.call('ZADD', P .. ':leases', 'XX', deadline, ARGV[i]) end
local lease = P .. ':lease:' .. token
local ids = {}
if redis.call('EXISTS', lease) == 1 then
  for _, id in ipairs(redis.call('SMEMBERS', lease)) do
    if redis.call('HGET', P .. ':holder', id) == token then table.insert(ids, id) end
  end
  redis.call('ZADD', P .. ':leases', 'XX', deadline, token)
elseif redis.call('SISMEMBER', P .. ':spent', token) == 0 then
  reclaim(now)
  local popped = redis.call('ZPOPMIN', P .. ':pending', count)
  if #popped < 2 * count then  -- the site's lane is empty: the checks
    for _, v in ipairs(redis.call('ZPOPMIN', P .. ':checks', count - math.floor(#popped / 2))) do
      table.insert(popped, v)
    end
  end
  for i = 1, #popped, 2 do
    hold(popped[i], token, deadline)
    table.insert(ids, popped[i])
  end
end
local out = counts()
for _, id in ipairs(ids) do
  table.insert(out, id)
  table.insert(out, redis.call('HGET', P .. ':rows', id))
end
return out
"""

FLUSH: Final = _PRELUDE + r"""
-- ARGV[1]: JSON {ttl, renew: [token], acks: [id], done: [key], add: [[key, url, depth, mode]]}
local job = cjson.decode(ARGV[1])
local deadline = now_ms() + job.ttl
for _, token in ipairs(job.renew) do
  redis.call('ZADD', P .. ':leases', 'XX', deadline, token)
end
for _, id in ipairs(job.acks) do finish(tostring(id)) end
for _, key in ipairs(job.done) do
  local id = redis.call('HGET', P .. ':ids', key)
  if id then finish(id) end
end
local added = 0
for _, e in ipairs(job.add) do
  if redis.call('HEXISTS', P .. ':ids', e[1]) == 0 then
    local id = insert(e[1], e[2], e[3], e[4])
    redis.call('HSET', P .. ':state', id, 0)
    redis.call('ZADD', lane(e[4]), score(e[3], id), id)
    added = added + 1
  end
end
local hosts = P .. ':hosts'
for _, h in ipairs(job.give_up or {}) do  -- [host, error, why, seconds_ms]
  local at = now_ms() + tonumber(h[4])
  local before = redis.call('HGET', hosts, h[1])
  if before then at = math.max(at, tonumber(cjson.decode(before)[3])) end
  redis.call('HSET', hosts, h[1], cjson.encode({h[2], h[3], at}))
end
for _, host in ipairs(job.well or {}) do redis.call('HDEL', hosts, host) end
local out = counts()
table.insert(out, added)
table.insert(out, given_up_hosts())
return out
"""

CLAIM: Final = _PRELUDE + r"""
-- ARGV: key, url, depth, mode, token, ttl_ms. 1 when this token now holds the key's entry.
local key, token = ARGV[1], ARGV[5]
local deadline = now_ms() + tonumber(ARGV[6])
local id = redis.call('HGET', P .. ':ids', key)
if not id then
  id = insert(key, ARGV[2], ARGV[3], ARGV[4])
  hold(id, token, deadline)
  return 1
end
local state = redis.call('HGET', P .. ':state', id)
if state == '0' then
  redis.call('ZREM', lane(row_of(id)[4]), id)
  hold(id, token, deadline)
  return 1
end
if state == '1' and redis.call('HGET', P .. ':holder', id) == token then return 1 end
return 0
"""

RELEASE: Final = _PRELUDE + r"""
-- ARGV: key, fetch_again (1/0). A held entry goes back to pending, or is done.
local id = redis.call('HGET', P .. ':ids', ARGV[1])
if (not id) or redis.call('HGET', P .. ':state', id) ~= '1' then return 0 end
if ARGV[2] == '1' then
  unhold(id)
  to_pending(id)
else
  finish(id)
end
return 1
"""

RELEASE_TOKENS: Final = _PRELUDE + r"""
-- ARGV: tokens. Their entries not done are pending again; the tokens are spent.
for _, token in ipairs(ARGV) do
  for _, id in ipairs(redis.call('SMEMBERS', P .. ':lease:' .. token)) do
    if redis.call('HGET', P .. ':holder', id) == token then
      redis.call('HDEL', P .. ':holder', id)
      if redis.call('HGET', P .. ':state', id) == '1' then to_pending(id) end
    end
  end
  retire(token)
end
return counts()
"""

DROP: Final = _PRELUDE + r"""
-- ARGV: id, requeue (1/0). A predicted entry that missed: queued again as a full crawl, or gone.
local id = ARGV[1]
local row = row_of(id)
if (not row) or tonumber(row[4]) ~= PREDICTED then return 0 end
local state = redis.call('HGET', P .. ':state', id)
if state == '1' then unhold(id) elseif state == '0' then redis.call('ZREM', P .. ':pending', id) end
if ARGV[2] == '1' then
  row[4] = FULL
  redis.call('HSET', P .. ':rows', id, cjson.encode(row))
  to_pending(id)
  return 1
end
redis.call('HDEL', P .. ':ids', row[1])
redis.call('HDEL', P .. ':rows', id)
redis.call('HDEL', P .. ':state', id)
redis.call('ZREM', P .. ':open', row[1])
return 0
"""

COUNTS: Final = _PRELUDE + r"""
local out = counts()
table.insert(out, given_up_hosts())
return out
"""
