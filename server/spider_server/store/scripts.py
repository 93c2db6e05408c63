"""The Lua scripts that keep a race's invariants, as module constants.

Each is registered once per Redis client (:class:`~.Store`) and called with explicit
keys (all of one race's hash tag) and arguments. Payloads are msgpack maps (Lua's
``cmsgpack``) whose hash values are strings, written by :mod:`.`.

Both scripts append events the same way: for each event, in order, the race's version is
incremented, the event is appended to the race's stream with id ``<version>-0`` (fields
``v``, ``a`` audience, ``d`` data) and published on the race's channel as
``<version>:<audience>:<data>``. A script runs atomically, so every node sees one order, and
an event is in the stream before anyone hears of it on the channel.

The events are published only when a node other than the committing one watches the race
(the race's ``nodes`` set holds each watching node until its claim expires): the committing
node dispatches its own events itself (:meth:`..fanout.hub.Hub.committed`), and a node registers
before it subscribes, so any event it could miss is in the snapshot it reads next.
"""

from __future__ import annotations

from .keys import UNDO_MARK

__all__ = [
    "APPLY_RESULTS",
    "COMMIT_RACE",
    "COMMIT_ACTIONS",
    "RESAVE_ACK",
    "sharded",
    "QUEUE_MATCH",
    "CANCEL_MATCH",
    "POP_MATCHES",
    "MATCH_DELIVERED",
    "DUE_CONFIRMS",
]

_APPEND_EVENTS = """
-- Whether a node other than ``node`` watches the race (its claim lasts past ``now``).
local function watched_elsewhere(nodes, node, now)
  for _, n in ipairs(redis.call('ZRANGEBYSCORE', nodes, now, '+inf', 'LIMIT', 0, 2)) do
    if n ~= node then
      return true
    end
  end
  return false
end

-- The events added to the stream (and published): the race's version after them, which
-- the caller writes to meta.
local function add_events(stream, channel, maxlen, version, list, publish)
  for _, e in ipairs(list) do
    version = version + 1
    local v = string.format('%d', version)
    redis.call('XADD', stream, 'MAXLEN', '~', maxlen, v .. '-0', 'v', v, 'a', e[1], 'd', e[2])
    if publish then
      redis.call('PUBLISH', channel, v .. ':' .. e[1] .. ':' .. e[2])
    end
  end
  return version
end

local function append_events(meta, stream, channel, maxlen, version, list, publish)
  version = add_events(stream, channel, maxlen, version, list, publish)
  redis.call('HSET', meta, 'version', string.format('%d', version))
  return version
end

local function hset_map(key, map)
  local args = {}
  for k, v in pairs(map) do
    args[#args + 1] = k
    args[#args + 1] = v
  end
  if #args > 0 then
    redis.call('HSET', key, unpack(args))
  end
end
"""

COMMIT_RACE = (
    _APPEND_EVENTS
    + """
-- A change to a race, applied only if its version is still the one it was decided on.
-- KEYS: meta, players, events, nodes, then every other key of the race (their TTL is
--       refreshed, or they are deleted with the race); h entries index into KEYS.
-- ARGV: expected version ('new': the race must not exist), channel, ttl, maxlen, payload,
--       committing node, now
-- payload: {m = {field = value}, ps = {player = entry}, pd = {player, ...},
--           h = {{key index, {field = value}}, ...}, e = {{audience, data}, ...}, del = 0|1}
-- Returns {1, new version} or {0, current version (-1: no race)}.
local meta, players, stream = KEYS[1], KEYS[2], KEYS[3]
local current = redis.call('HGET', meta, 'version')
if ARGV[1] == 'new' then
  if current then return {0, tonumber(current)} end
elseif current ~= ARGV[1] then
  return {0, tonumber(current) or -1}
end
local p = cmsgpack.unpack(ARGV[5])
if p['del'] == 1 then
  redis.call('DEL', unpack(KEYS))
  return {1, -1}
end
hset_map(meta, p['m'])
hset_map(players, p['ps'])
for _, pid in ipairs(p['pd']) do
  redis.call('HDEL', players, pid)
end
for _, h in ipairs(p['h']) do
  hset_map(KEYS[h[1]], h[2])
end
local publish = #p['e'] > 0 and watched_elsewhere(KEYS[4], ARGV[6], ARGV[7])
local version = append_events(meta, stream, ARGV[2], ARGV[4], tonumber(current) or 0, p['e'],
                              publish)
for i = 1, #KEYS do
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
return {1, version}
"""
)

_COMMIT_ACTION = (
    _APPEND_EVENTS
    + """
-- Players' actions, in order: each applied only if its race runs and its player's seq is
-- still the one it was decided on (two nodes never both apply one, a resend is applied
-- once); each answered on its own, as if each were a script call of its own.
-- KEYS: STRIDE for each action: meta, players, events, game, actions, acks, nodes, stack,
--       marks(, times: layout 1)
-- ARGV: ttl, maxlen, committing node, now; then for each action the count of its
--       arguments, then those arguments: expected seq, player, action, ack frame, entry,
--       n, then n events as audience and data, then the action's race time (ms), then the
--       game's fields that changed and their values (its new seq always; its position
--       whenever the board changed)
-- A race's channel is its meta key's name with 'ch' for 'meta' (keys.channel).
-- The standing moves (stack) follow each action: a move pushes, an undo pops, and a move
-- that reaches a depth that is a multiple of the mark's spacing keeps the position there
-- (marks). Each action's race time goes to times (layout 1) or into its entry in actions,
-- '<action> <time>' (layout 2); layout 1 also copies the depth into marks as n.
-- The keys' TTL is refreshed on the player's first action and every 64th after, and on the
-- keys an action creates past the first (a race change refreshes every key of the race).
-- Returns, for each action, {1, new version}, {0, 'state'} (not running), or {0, 'seq',
-- current seq} (the seq moved on, or the game is no longer playing).
local ttl, maxlen, node, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local versions, watched = {}, {}  -- by race (meta, nodes): what this call read or wrote
local moved = {}  -- the races whose version moved, in order and as a set (written at the end)

local function commit(k, b, last)
  -- k: the action's keys follow KEYS[k]; b: its arguments follow ARGV[b]; last: its last
  local meta, stream, game, nodes = KEYS[k + 1], KEYS[k + 3], KEYS[k + 4], KEYS[k + 7]
  local version = versions[meta]
  if version == nil then
    local m = redis.call('HMGET', meta, 'state', 'version')
    version = m[1] == 'running' and tonumber(m[2])
    versions[meta] = version
  end
  if not version then
    return {0, 'state'}
  end
  local g = redis.call('HMGET', game, 'seq', 'status')
  local seq = tonumber(g[1] or '-1')
  -- a game the race ended without an action (abandoned, stuck on undo) takes none either:
  -- the caller reads it again and finds it over
  if seq ~= tonumber(ARGV[b + 1]) or g[2] ~= 'playing' then
    return {0, 'seq', seq}
  end
  local time = b + 7 + 2 * tonumber(ARGV[b + 6])
  redis.call('HSET', game, unpack(ARGV, time + 1, last))
  local action = ARGV[b + 3]
  ACTION_ENTRY
  redis.call('HSET', KEYS[k + 6], string.format('%d', seq + 1), ARGV[b + 4])
  redis.call('HSET', KEYS[k + 2], ARGV[b + 2], ARGV[b + 5])
  local depth
  if action == 'undo' then
    redis.call('RPOP', KEYS[k + 8])
    depth = redis.call('LLEN', KEYS[k + 8])
  elseif action ~= 'resign' then
    depth = redis.call('RPUSH', KEYS[k + 8], action)
    if depth == 1 and seq > 0 then
      redis.call('EXPIRE', KEYS[k + 8], ttl)
    end
    if depth % MARK == 0 then
      for i = time + 1, last - 1, 2 do
        if ARGV[i] == 'position' then
          redis.call('HSET', KEYS[k + 9], string.format('%d', depth), ARGV[i + 1])
          MARK_TTL
        end
      end
    end
  end
  DEPTH_COPY
  local events = {}
  for i = b + 7, time - 1, 2 do
    events[#events + 1] = {ARGV[i], ARGV[i + 1]}
  end
  local publish = #events > 0 and watched[nodes]
  if publish == nil then
    publish = watched_elsewhere(nodes, node, now)
    watched[nodes] = publish
  end
  local channel = publish and string.sub(meta, 1, -5) .. 'ch'
  local before = version
  version = add_events(stream, channel, maxlen, version, events, publish)
  versions[meta] = version
  if version ~= before and not moved[meta] then
    moved[meta] = true
    moved[#moved + 1] = meta
  end
  if seq % 64 == 0 then
    for i = k + 1, k + STRIDE do
      redis.call('EXPIRE', KEYS[i], ttl)
    end
  end
  return {1, version}
end

local replies, k, b = {}, 0, 5
while b <= #ARGV do
  local last = b + tonumber(ARGV[b])
  replies[#replies + 1] = commit(k, b, last)
  k, b = k + STRIDE, last + 1
end
for _, meta in ipairs(moved) do
  redis.call('HSET', meta, 'version', string.format('%d', versions[meta]))
end
return replies
""".replace("% MARK", f"% {UNDO_MARK}")
)

_LAYOUTS = {  # _COMMIT_ACTION's markers in each layout of a player's keys
    1: {
        "STRIDE": "10",
        # times and marks made after layout 2's actions get the race's TTL there
        "ACTION_ENTRY": "redis.call('RPUSH', KEYS[k + 5], action)\n"
        "  if redis.call('RPUSH', KEYS[k + 10], ARGV[time]) == 1 and seq > 0 then\n"
        "    redis.call('EXPIRE', KEYS[k + 10], ttl)\n  end",
        "MARK_TTL": "",
        "DEPTH_COPY": "if depth and redis.call('HSET', KEYS[k + 9], 'n', "
        "string.format('%d', depth)) == 1 and seq > 0 then\n"
        "    redis.call('EXPIRE', KEYS[k + 9], ttl)\n  end",
    },
    2: {
        "STRIDE": "9",
        "ACTION_ENTRY": "redis.call('RPUSH', KEYS[k + 5], action .. ' ' .. ARGV[time])",
        "MARK_TTL": "redis.call('EXPIRE', KEYS[k + 9], ttl)",  # marks made by the first mark
        "DEPTH_COPY": "",
    },
}


def _commit_action(layout: int) -> str:
    script = _COMMIT_ACTION
    for marker, code in _LAYOUTS[layout].items():
        script = script.replace(marker, code)
    return script


COMMIT_ACTIONS = {layout: _commit_action(layout) for layout in _LAYOUTS}
"""The action script in each layout of a player's keys (``SPIDER_RACE_STORE_LAYOUT``; the
comment at its head tells them apart). This release reads both."""


APPLY_RESULTS = """
-- A finished race's results written into its players' records, histories and ladders, once:
-- only if the race's marker is not there yet, and only if every player's record is still at
-- the version the update was decided on (a check-and-set on each; the caller decides again
-- when one moved: another race of that player was applied first).
-- KEYS: applied (hash), applied_at (zset), pending (zset), rated_races (counter), names
--       (hash), then each player's record (hash: v, d) and history (list), then the ladders
--       written
-- ARGV: marker, race code, now, trim-before, changes (msgpack), n players, history max, ttl,
--       rated (1: ratings changed, counted), then per player: id, expected version, record data, history line,
--       ladder key index (0: none), ladder score, name (folded)
-- Returns {1, 'applied'}, {0, 'done'} (the marker is there: applied before), or
-- {0, 'version', player index} (that record moved on).
local marker = ARGV[1]
if redis.call('HEXISTS', KEYS[1], marker) == 1 then
  redis.call('ZREM', KEYS[3], ARGV[2])
  return {0, 'done'}
end
local n = tonumber(ARGV[6])
for i = 1, n do
  local base = 9 + (i - 1) * 7
  local v = redis.call('HGET', KEYS[4 + 2 * i], 'v') or '0'
  if v ~= ARGV[base + 2] then
    return {0, 'version', i}
  end
end
local ttl = ARGV[8]
for i = 1, n do
  local base = 9 + (i - 1) * 7
  local rec, hist = KEYS[4 + 2 * i], KEYS[5 + 2 * i]
  redis.call('HSET', KEYS[5], ARGV[base + 7], ARGV[base + 1])
  redis.call('HSET', rec, 'v', string.format('%d', tonumber(ARGV[base + 2]) + 1),
             'd', ARGV[base + 3])
  redis.call('EXPIRE', rec, ttl)
  redis.call('LPUSH', hist, ARGV[base + 4])
  redis.call('LTRIM', hist, 0, tonumber(ARGV[7]) - 1)
  redis.call('EXPIRE', hist, ttl)
  local ladder = tonumber(ARGV[base + 5])
  if ladder > 0 then
    redis.call('ZADD', KEYS[ladder], ARGV[base + 6], ARGV[base + 1])
  end
end
redis.call('HSET', KEYS[1], marker, ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[3], marker)
for _, old in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[4], 'LIMIT', 0, 64)) do
  redis.call('HDEL', KEYS[1], old)
  redis.call('ZREM', KEYS[2], old)
end
redis.call('ZREM', KEYS[3], ARGV[2])
if ARGV[9] == '1' then
  redis.call('INCR', KEYS[4])
end
return {1, 'applied'}
"""


RESAVE_ACK = """
-- KEYS: acks; ARGV: seq. The stored ack of action seq, written again (the same value) so
-- that a wait after it (WAIT, WAITAOF) covers the action it acks, whatever connection
-- committed that action: a resent action is acked only once the action is saved.
local ack = redis.call('HGET', KEYS[1], ARGV[1])
if ack then
  redis.call('HSET', KEYS[1], ARGV[1], ack)
end
return ack
"""


def sharded(script: str) -> str:
    """The script publishing with ``SPUBLISH`` (a cluster's sharded pub/sub: the race's
    channel is in its hash slot, so only that slot's shard carries its events)."""
    return script.replace("redis.call('PUBLISH',", "redis.call('SPUBLISH',")


# -- quick match (keys of the ``{match}`` hash tag; the open list's are in open_scripts) --

QUEUE_MATCH = """
-- Queue a player in a pool, out of the one they were in (``expected``: the pool the caller
-- read; another one now: {'retry', pool}). A player matched and not yet told: 'matched'.
-- KEYS: who, alive, pools, new queue, old queue (or the new one)
-- ARGV: player, entry, now, expiry, expected old pool ('' none), new pool
local e = redis.call('HGET', KEYS[1], ARGV[1])
local old = ''
if e then
  old = string.match(e, '^([^\t]*)')
end
if old == 'matched' then
  return 'matched'
end
if old ~= ARGV[5] then
  return {'retry', old}
end
if old ~= '' then
  redis.call('ZREM', KEYS[5], ARGV[1])
end
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[6])
return 'ok'
"""

CANCEL_MATCH = """
-- Take a player out of their queue: only the entry of connection ``conn`` ('' any).
-- KEYS: who, alive, queue of the expected pool;  ARGV: player, conn, expected pool
local e = redis.call('HGET', KEYS[1], ARGV[1])
if not e then
  return 'none'
end
local pool, conn = string.match(e, '^([^\t]*)\t([^\t]*)')
if pool == 'matched' then
  return 'matched'
end
if ARGV[2] ~= '' and conn ~= ARGV[2] then
  return 'other'
end
if pool ~= ARGV[3] then
  return {'retry', pool}
end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 'ok'
"""

POP_MATCHES = """
-- Take groups of compatible players from one queue at once, each with a race code given
-- by the caller, marking them matched: whichever node runs it owns those groups.
-- A player who has waited w seconds accepts ratings within base + growth * w of their own
-- (any rating from ``wait`` seconds on); two players fit when either accepts the other.
-- The oldest player not taken anchors a group of the nearest fitting players (at most
-- ``maxn``), taken when full or when the anchor has waited ``gather`` seconds.
-- Players whose node stopped renewing them (``alive`` expired) leave first.
-- KEYS: queue, who, alive, pools, groups
-- ARGV: now, wait, gather, maxn, base, growth, limit, pool, code1, code2, ...
local now, wait, gather = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local maxn, base, growth = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local pool = ARGV[8]
for _, p in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 200)) do
  local e = redis.call('HGET', KEYS[2], p)
  local q = e and string.match(e, '^([^\t]*)') or ''
  if not e or q == 'matched' or q == pool then
    if q == pool then
      redis.call('ZREM', KEYS[1], p)
    end
    redis.call('HDEL', KEYS[2], p)
    redis.call('ZREM', KEYS[3], p)
  end
end
local flat = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[7]) - 1, 'WITHSCORES')
local ps, since, rating, conn, name = {}, {}, {}, {}, {}
for i = 1, #flat, 2 do
  local e = redis.call('HGET', KEYS[2], flat[i])
  if e then
    local _, c, r, n = string.match(e, '^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$')
    ps[#ps + 1] = flat[i]
    since[#ps] = tonumber(flat[i + 1])
    conn[#ps], rating[#ps], name[#ps] = c, tonumber(r), n
  else
    redis.call('ZREM', KEYS[1], flat[i])
  end
end
local function accepts(i)
  local w = now - since[i]
  if w >= wait then
    return math.huge
  end
  return base + growth * math.max(0, w)
end
local taken, out, codes = {}, {}, 9
for i = 1, #ps do
  if codes > #ARGV then
    break
  end
  if not taken[i] then
    local near = {}
    for j = 1, #ps do
      if j ~= i and not taken[j] then
        local d = math.abs(rating[i] - rating[j])
        if d <= math.max(accepts(i), accepts(j)) then
          near[#near + 1] = {d, j}
        end
      end
    end
    table.sort(near, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
    local n = math.min(#near, maxn - 1)
    if n >= 1 and (n == maxn - 1 or now - since[i] >= gather) then
      local code = ARGV[codes]
      codes = codes + 1
      local group = {code, ps[i], conn[i], name[i]}
      taken[i] = true
      for k = 1, n do
        local j = near[k][2]
        taken[j] = true
        group[#group + 1] = ps[j]
        group[#group + 1] = conn[j]
        group[#group + 1] = name[j]
      end
      for k = 2, #group, 3 do
        redis.call('ZREM', KEYS[1], group[k])
        redis.call('HSET', KEYS[2], group[k],
          'matched\t' .. code .. '\t' .. ARGV[1] .. '\t' .. group[k + 1])
      end
      redis.call('INCR', KEYS[5])
      out[#out + 1] = group
    end
  end
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('SREM', KEYS[4], pool)
end
return out
"""

MATCH_DELIVERED = """
-- Forget a matched player's entry once their connection was told (if it still says so).
-- KEYS: who, alive;  ARGV: player, code
local e = redis.call('HGET', KEYS[1], ARGV[1])
if e and string.match(e, '^matched\t([^\t]*)') == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

DUE_CONFIRMS = """
-- Take the quick-match races whose players' time to join is up (time <= now) for
-- ``lease`` seconds: their time is pushed on by it, so that another node takes them up
-- again if this one does not settle them (it dies).
-- KEYS: confirm;  ARGV: now, lease, limit
local now = tonumber(ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, code in ipairs(due) do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), code)
end
return due
"""
