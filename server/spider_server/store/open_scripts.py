"""The open races' list's Lua scripts (keys of the ``{lobby}`` hash tag, so that each runs
on one slot, on Redis Cluster too): a listing written or taken off, a public race's
claim on its creator's and its address's places, and the list read in its order.

Registered once per client by :class:`~.openlist.OpenList`; called with explicit keys and
arguments, as :mod:`.scripts`'s are."""

from __future__ import annotations

__all__ = ["CLAIM_OPEN", "LIST_RACE", "READ_OPEN", "SETTLE_OPEN"]

LIST_RACE = """
-- A public race's listing, if ``version`` is newer than the listed one: written (data) or
-- taken off the list (empty data, remembered as gone), published on the lobby's channel.
-- The race is in the full list, its variant's, and (rated) the rated ones of both.
-- KEYS: open, info, versions, gone, channel, rated, variant, variant rated, from
-- ARGV: code, version, created_at, data, rated ('1' or '0'), now, gone max
local code, version = ARGV[1], tonumber(ARGV[2])
local now = tonumber(ARGV[6])
if redis.call('ZSCORE', KEYS[4], code) then
  return 0
end
local listed = tonumber(redis.call('HGET', KEYS[3], code) or '-1')
if version <= listed then
  return 0
end
if ARGV[4] == '' then
  for _, key in ipairs({KEYS[1], KEYS[6], KEYS[7], KEYS[8]}) do
    redis.call('ZREM', key, code)
  end
  redis.call('HDEL', KEYS[2], code)
  redis.call('HDEL', KEYS[3], code)
  redis.call('HDEL', KEYS[9], code)
  redis.call('ZADD', KEYS[4], now, code)
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - 3600)
  redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -tonumber(ARGV[7]) - 1)
  if listed >= 0 then
    redis.call('PUBLISH', KEYS[5], code .. '|')
  end
  return 1
end
redis.call('ZADD', KEYS[1], ARGV[3], code)
redis.call('ZADD', KEYS[7], ARGV[3], code)
if ARGV[5] == '1' then
  redis.call('ZADD', KEYS[6], ARGV[3], code)
  redis.call('ZADD', KEYS[8], ARGV[3], code)
end
redis.call('HSET', KEYS[2], code, ARGV[4])
redis.call('HSET', KEYS[3], code, ARGV[2])
redis.call('PUBLISH', KEYS[5], code .. '|' .. ARGV[4])
return 1
"""

_COUNT = """
-- The live entries of a player's or an address's places (KEYS[2] or KEYS[3]): listed
-- races (still in the full list) and claims not expired; the others are dropped.
local now = tonumber(ARGV[2])
local function live(key)
  local items = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local codes, n = {}, 0
  for i = 1, #items, 2 do
    local m = items[i]
    local alive
    if string.sub(m, 1, 1) == '~' then
      alive = tonumber(items[i + 1]) > now
    else
      alive = redis.call('ZSCORE', KEYS[1], m) ~= false
      if alive then
        codes[#codes + 1] = m
      end
    end
    if alive then
      n = n + 1
    else
      redis.call('ZREM', key, m)
    end
  end
  return n, codes
end
"""

CLAIM_OPEN = (
    _COUNT
    + """
-- Claim a place for a public race about to be created: refused when the player has
-- ``player cap`` listed (or being created) already ({'player', codes...}), the address
-- ``address cap`` ({'address'}), or the full list ``max`` ({'full'}); else {'ok'}.
-- KEYS: open, mine, from
-- ARGV: claim ('~<id>'), now, expiry, player cap, address cap, max, ttl
local mine, codes = live(KEYS[2])
if mine >= tonumber(ARGV[4]) then
  local out = {'player'}
  for _, c in ipairs(codes) do
    out[#out + 1] = c
  end
  return out
end
if live(KEYS[3]) >= tonumber(ARGV[5]) then
  return {'address'}
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[6]) then
  return {'full'}
end
for _, key in ipairs({KEYS[2], KEYS[3]}) do
  redis.call('ZADD', key, ARGV[3], ARGV[1])
  redis.call('EXPIRE', key, ARGV[7])
end
return {'ok'}
"""
)

SETTLE_OPEN = """
-- A claim settled: the race created (``code``) holds its places while it is listed, with
-- its address kept for the list's order; no race (empty code): the places are free.
-- KEYS: open, mine, from, from hash
-- ARGV: claim, code, address, ttl
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[2] ~= '' and redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  for _, key in ipairs({KEYS[2], KEYS[3]}) do
    redis.call('ZADD', key, 0, ARGV[2])
    redis.call('EXPIRE', key, ARGV[4])
  end
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
end
return 1
"""

READ_OPEN = """
-- The first ``n`` races of a list (the full list or a filter's) in the list's order: in
-- rounds, each address's oldest race first (an address's second race comes after every
-- address's first), oldest first within a round. A race without a known address is one
-- of its own. Walks the races oldest first and stops once ``n`` are of the first round:
-- every later one comes after them.
-- KEYS: list, info, from
-- ARGV: n
local n = tonumber(ARGV[1])
local seen, order, first = {}, {}, 0
for i, code in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local from = redis.call('HGET', KEYS[3], code) or ('=' .. code)
  local round = seen[from] or 0
  seen[from] = round + 1
  order[#order + 1] = {round, i, code}
  if round == 0 then
    first = first + 1
    if first >= n then
      break
    end
  end
end
table.sort(order, function(a, b)
  if a[1] ~= b[1] then
    return a[1] < b[1]
  end
  return a[2] < b[2]
end)
local out = {}
for j = 1, math.min(n, #order) do
  local code = order[j][3]
  out[#out + 1] = code
  out[#out + 1] = redis.call('HGET', KEYS[2], code) or ''
end
return out
"""
