"""Every Redis key and channel the server uses, and how long each lives.

Keys of one race share the hash tag ``{race:<code>}`` so that its scripts touch one slot
(the same code runs on Redis Cluster). Layout::

    {race:<code>}:meta            hash    the race: options, state, version, times, the secret
                                          seed and salt (revealed only after the finish),
                                          the commitment, and after the finish ``final``
                                          (msgpack: results, replays, final boards), and
                                          once computed ``par`` (msgpack: the deal's par)
    {race:<code>}:players         hash    player id -> msgpack of the player's public entry
                                          (name, order, ready, status, counts, score, time)
    {race:<code>}:events          stream  the race's events; entry id ``<version>-0``, fields
                                          v (version), a (audience: ``all`` or ``spectators``),
                                          d (msgpack of the event without its version)
    {race:<code>}:game:<player>   hash    the player's game: seq, position (full text), status,
                                          moves, turned_up, runs, deals_left, score, time, down0,
                                          suited, raised_at (both absent from older games: 0)
    {race:<code>}:actions:<player> list   the player's actions in order: moves, undo, resign
                                          (layout 2: each with its time in ms, ``d1j 1840``)
    {race:<code>}:stack:<player>  list    the player's moves that stand after their undos, in
                                          order (a move pushes, an undo pops)
    {race:<code>}:marks:<player>  hash    each multiple of ``UNDO_MARK`` reached -> the full
                                          position there (an undo rebuilds from the mark below
                                          it); layout 1 also n -> the stack's depth, for 0.2.0
    {race:<code>}:times:<player>  list    layout 1: the race time in ms of each action
                                          without one in its entry (absent in older races)
    {race:<code>}:ghosts          hash    ghost id -> msgpack of the recorded run it replays
                                          (source race and player, actions, times)
    {race:<code>}:acks:<player>   hash    seq -> msgpack of the ack sent for that action (a
                                          resend gets the same ack again)
    {race:<code>}:online          zset    "<player>|<node>|<conn>" -> expiry time: players
                                          connected to the race
    {race:<code>}:spectators      zset    "<node>|<conn>" -> expiry time: spectators watching
    {race:<code>}:nodes           zset    node -> expiry time: the server nodes watching the
                                          race (renewed while they watch)
    node:<node>                   channel pub/sub: the node's own (nothing is published on it)
    {race:<code>}:ch              channel pub/sub: "<version>:<audience>:<data>" per event, in
                                          version order (published by the script that
                                          appended it to the stream, when a node other
                                          than the committing one watches the race)
    player:<id>:races             zset    race code -> join time: races a player is in, for the
                                          per-player limit (checked outside race scripts) and
                                          ``my_races``; at most the limit of races that count
                                          and :data:`PLAYER_RACES_KEPT` others
    {race:<code>}:hints           hash    player id -> hints asked for (HINCRBY)
    {race:<code>}:hint_lines      hash    player id -> msgpack of the shortest winning line
                                          from the deal a hint gave them (their standing
                                          moves, then the solver's line): a provisional par
    {race:<code>}:par_claim       string  the node computing the finished race's par (SET NX,
                                          renewed while it runs, lives ``presence_ttl``)
    pool:<variant>                list    seeds the solver proved winnable, not yet dealt (a
                                          winnable race pops one with LPOP)
    pool:waiting:<variant>        list    codes of winnable races preparing, waiting for a seed
    pool:variants                 set     variants winnable races were asked for (refilled)
    proof:<variant>:<seed>        string  msgpack of the winning line that proved the deal
                                          (a provisional par at its race's finish), lives
                                          ``PROOF_TTL``
    daily:<variant>:<day>         string  the day's proven seed (set once, SET NX)
    daily:<variant>:<day>:races   hash    player id -> code of their daily race that day
    daily:<variant>:<day>:waiting set     codes of daily races preparing, waiting for the seed
    daily:<variant>:<day>:par     string  msgpack of the day's deal's par (set once, SET NX)
    daily:<variant>:<day>:par_claim string the node computing the day's par (as par_claim)
    daily:pending                 set     "<variant>|<day>" daily deals asked for, not proven
    leaderboard:<variant>:<day>   zset    player id -> time in ms * 10**6 + moves (winners)
    leaderboard:<variant>:<day>:names hash player id -> name
    leaderboard:<variant>:<day>:bots set  player ids of the winners whose hello said ``bot``
    {ratings}:player:<id>         hash    a player's record: v (version, +1 a write), d (msgpack:
                                          name, bot, per variant: mu, sigma, races, wins, best
                                          time, streaks, rating history)
    {ratings}:history:<id>        list    msgpack of the player's last races, newest first
                                          (capped at HISTORY_MAX: code, variant, time, rank,
                                          players, status, race time, rated, before, after)
    {ratings}:ladder:<pool>:<variant> zset player id -> rating shown (pool: humans, bots),
                                          players with a rated race in the variant
    {ratings}:applied             hash    "<code>:<created_at>" -> msgpack of the race's rating
                                          changes: the race was applied (once per race)
    {ratings}:applied_at          zset    the same member -> when it was applied (trimmed
                                          after APPLIED_KEEP)
    {ratings}:pending             zset    race code -> when its finish was about to be
                                          committed: finished races whose records are not
                                          written yet (every node's background step applies
                                          them; the write removes the code)
    {ratings}:rated_races         string  how many rated races changed ratings (INCR)
    {ratings}:names               hash    name (case folded) -> id of the player of that name
                                          who finished a race last (``profile`` by name)
    {ratings}:rebuilt             string  when the ratings cache was rebuilt from the archive
                                          (records, ladders, names: ``player_records``)
    {ratings}:rebuilding          string  the node rebuilding it (a lease)
    {ratings}:rebuild_names       hash    name -> archived race id of the name's record,
                                          while a rebuild runs
    {archive}:imported            string  when the data from before the archive was archived
    {archive}:importing           string  the node archiving it (a lease)

Ratings share one hash tag, ``{ratings}``, so that one script writes every record a race
touches (each player's record, history and ladder place, the race's marker) at once, also on
Redis Cluster, where players' keys would otherwise sit in different slots: no two-phase
write to recover from. A finish is one write per race (hundreds of moves come before it),
so the one slot is not a hot spot.

TTLs: a player's record and history live PROFILE_TTL (a year) after their last finished race;
the ladders' and the marker's entries have no TTL (a marker is dropped APPLIED_KEEP after it
was written, longer than a finished race lives).
    {lobby}:open                  zset    code -> creation time: the public races listed as
                                          waiting for players (at most ``OPEN_MAX``: a
                                          public race past it is refused at its creation)
    {lobby}:open:rated            zset    the same, of the rated races only
    {lobby}:open:v:<variant>      zset    the same, of one variant (``:rated`` after it: of
                                          its rated races)
    {lobby}:open:info             hash    code -> msgpack of the race's listing (OpenRace)
    {lobby}:open:ver              hash    code -> the race version its listing is of
    {lobby}:open:from             hash    code -> the address its creator created it from
                                          (the list shows one race an address at a time)
    {lobby}:mine:<player>         zset    the player's listed races (code -> 0) and claims
                                          of races being created ("~<id>" -> expiry): at
                                          most ``player_open_races`` (lives ``race_ttl``)
    {lobby}:from:<address>        zset    the same of a client address
                                          (``address_open_races``)
    {lobby}:gone                  zset    code -> time it left the list (a later update of
                                          an older version cannot bring it back; kept an hour,
                                          at most GONE_MAX)
    {lobby}:ch                    channel pub/sub: "<code>|<msgpack listing>" when a listing
                                          changes, "<code>|" when it leaves the list
    {match}:q:<pool>              zset    player -> time queued: a quick-match queue (pool
                                          ``<variant>:<undo u|n>:<humans|bots>``)
    {match}:who                   hash    player -> "<pool>\t<conn>\t<rating>\t<b|h>[g]\t<since>\t
                                          <address>\t<name>" while queued (bot or human,
                                          g: a guest, queued since, from address), "matched\t<code>\t
                                          <time>\t<conn>" once matched, until delivered (one
                                          entry: one queue)
    {match}:alive                 zset    player -> expiry: renewed by the player's node while
                                          they wait; an expired player leaves the queue
    {match}:pools                 set     pools that have players queued
    {match}:groups                string  groups taken from the queues (counter)
    {match}:created               string  quick-match races created (counter)
    {match}:recent                list    "<code>|<player>,<player>…|<time>" of the last
                                          ``RECENT_MAX`` quick-match races
    {match}:ch                    channel pub/sub: "<player>\t<conn>\t<code>" per matched
                                          player (the node holding the connection tells it)
    {match}:confirm               zset    code -> time by which its matched players must have
                                          joined it (a node settling it pushes that on by a
                                          lease, so that another takes it up if it dies)
    {match}:seats:<code>          hash    "~pool" -> the match's pool; player -> "<address>\t
                                          <since>" (where they queued from, since when); lives
                                          ``MATCH_KEEP``
    {match}:first:<player>        string  "<pool>\t<since>": queued ahead of everyone (their
                                          match was called off, not by them); ``FIRST_TTL``
    {match}:strikes:p:<player>    zset    "<n|d>:<code>" -> time: matches the player missed
                                          (n) or left before their start (d), the last day
    {match}:strikes:a:<address>   zset    "<n|d>:<code>:<player>" -> time: the same of every
                                          player of a client address

TTLs: every race change refreshes the race's keys to :attr:`Settings.race_ttl`, and so do a
player's first action and every 64th after for the keys they write; the finish sets them to
:attr:`Settings.results_ttl`; a race whose last player left an open race is deleted.
The rate limits' keys (``{limit:a:<address>}:…``, ``{limit:p:<player>}:…``) are built, and
laid out, in :mod:`.limits`.
"""

from __future__ import annotations

__all__ = [
    "RACE_KEYS",
    "UNDO_MARK",
    "actions",
    "acks",
    "marks",
    "stack",
    "channel",
    "node_channel",
    "par_claim",
    "race_of_channel",
    "events",
    "game",
    "ghosts",
    "meta",
    "nodes",
    "online",
    "player_races",
    "players",
    "hints",
    "pool",
    "pool_waiting",
    "POOL_VARIANTS",
    "daily",
    "DAILY_PENDING",
    "leaderboard",
    "race_key",
    "spectators",
    "PLAYER_RACES_KEPT",
    "times",
    "PLAYER_RACES_TTL",
    "APPLIED",
    "ARCHIVE",
    "UNARCHIVED_TTL",
    "ARCHIVE_SINCE",
    "APPLIED_AT",
    "APPLIED_KEEP",
    "HISTORY_MAX",
    "PENDING",
    "PROFILE_TTL",
    "RATED_RACES",
    "NAMES",
    "REBUILD_NAMES",
    "RATINGS_REBUILT",
    "RATINGS_REBUILD_LEASE",
    "LADDERS_ACCOUNTS",
    "LADDERS_ACCOUNTS_LEASE",
    "ARCHIVE_IMPORTED",
    "ARCHIVE_IMPORT_LEASE",
    "history",
    "ladder",
    "record",
    "LOBBY_OPEN",
    "LOBBY_INFO",
    "LOBBY_VERSIONS",
    "LOBBY_GONE",
    "LOBBY_CHANNEL",
    "LOBBY_RATED",
    "LOBBY_FROM",
    "lobby_variant",
    "lobby_mine",
    "lobby_from",
    "OPEN_MAX",
    "GONE_MAX",
    "match_queue",
    "MATCH_WHO",
    "MATCH_ALIVE",
    "MATCH_POOLS",
    "MATCH_GROUPS",
    "MATCH_CREATED",
    "MATCH_RECENT",
    "MATCH_CHANNEL",
    "MATCH_CONFIRM",
    "match_seats",
    "match_first",
    "match_strikes",
    "MATCH_KEEP",
    "FIRST_TTL",
    "STRIKES_MAX",
    "RECENT_MAX",
]

UNDO_MARK = 32
"""Standing moves between two kept positions of a game: an undo pushes fewer onto a mark."""

RACE_KEYS = ("meta", "players", "events", "online", "spectators")
"""The race's keys that do not belong to one player."""

PLAYER_RACES_TTL = 7 * 24 * 3600
"""Seconds a player's list of races lives after the last join."""
PLAYER_RACES_KEPT = 10
"""Races of a player's list that no longer count towards the limit (finished, or the
player's game over) kept for ``my_races``, newest first; older ones are dropped."""


def race_key(code: str, suffix: str) -> str:
    """``{race:<code>}:<suffix>``: every key of one race is built here."""
    return f"{{race:{code}}}:{suffix}"


def meta(code: str) -> str:
    return race_key(code, "meta")


def players(code: str) -> str:
    return race_key(code, "players")


def events(code: str) -> str:
    return race_key(code, "events")


def game(code: str, player: str) -> str:
    return race_key(code, f"game:{player}")


def actions(code: str, player: str) -> str:
    return race_key(code, f"actions:{player}")


def stack(code: str, player: str) -> str:
    return race_key(code, f"stack:{player}")


def marks(code: str, player: str) -> str:
    return race_key(code, f"marks:{player}")


def times(code: str, player: str) -> str:
    """Layout 1: the race time (ms from the start) of each of the player's actions without
    one in its entry in :func:`actions`, in order (absent in older races and in layout 2)."""
    return race_key(code, f"times:{player}")


def ghosts(code: str) -> str:
    """A ghost race's recorded runs: a hash, ghost id -> msgpack of the run."""
    return race_key(code, "ghosts")


def par_claim(code: str) -> str:
    """Which node computes the finished race's par (its value); lapses unless renewed."""
    return race_key(code, "par_claim")


def acks(code: str, player: str) -> str:
    return race_key(code, f"acks:{player}")


def online(code: str) -> str:
    return race_key(code, "online")


def spectators(code: str) -> str:
    return race_key(code, "spectators")


def nodes(code: str) -> str:
    return race_key(code, "nodes")


def channel(code: str) -> str:
    return race_key(code, "ch")


def node_channel(node: str) -> str:
    """A node's own channel (its pub/sub connection always has one subscription)."""
    return f"node:{node}"


def race_of_channel(name: str) -> str | None:
    """The race code of a race's channel name (:func:`channel`), else None."""
    if not name.startswith("{race:") or "}" not in name:
        return None
    return name[len("{race:") : name.index("}")]


def player_races(player: str) -> str:
    return f"player:{player}:races"


def hints(code: str) -> str:
    return race_key(code, "hints")


def hint_lines(code: str) -> str:
    """Each player's shortest winning line from the deal a hint gave (a provisional par)."""
    return race_key(code, "hint_lines")


def pool(variant: str) -> str:
    return f"pool:{variant}"


def pool_waiting(variant: str) -> str:
    return f"pool:waiting:{variant}"


POOL_VARIANTS = "pool:variants"


def proof(variant: str, seed: str) -> str:
    return f"proof:{variant}:{seed}"


PROOF_TTL = 14 * 24 * 3600
"""Seconds a proven deal's line lives (its seed waits in a pool, then races)."""
DAILY_PENDING = "daily:pending"
DAILY_TTL = 3 * 24 * 3600
"""Seconds a day's daily keys (seed, races, leaderboard) live after their last write."""


def daily(variant: str, day: str, suffix: str = "") -> str:
    """``daily:<variant>:<day>`` (the seed), or with a suffix (``races``, ``waiting``)."""
    return f"daily:{variant}:{day}" + (f":{suffix}" if suffix else "")


def leaderboard(variant: str, day: str, suffix: str = "") -> str:
    return f"leaderboard:{variant}:{day}" + (f":{suffix}" if suffix else "")


# -- ratings, records and histories (one hash tag: see the layout above) -----------------------

HISTORY_MAX = 50
"""Races kept in a player's history."""
PROFILE_TTL = 365 * 24 * 3600
"""Seconds a player's record and history live after their last finished race."""
APPLIED_KEEP = 30 * 24 * 3600
"""Seconds a race's applied marker is kept (beyond any finished race's life)."""
UNARCHIVED_TTL = 10 * 365 * 24 * 3600
"""Seconds a finished race's keys live while the node keeps an archive: until its record
is written (then ``archived_ttl``); the backlog's bound keeps their number bounded."""

ARCHIVE = "{archive}:pending"
"""zset: "<code>:<created_at>" (the race's marker) -> when it is due to be archived: the
finished races whose records are not in the database yet (every node's archive step takes
them up, for a lease; a write removes the marker)."""
ARCHIVE_SINCE = "{archive}:since"
"""zset: the same markers -> when each race was queued (``ARCHIVE``'s scores move with the
leases): how long the oldest has waited."""

APPLIED = "{ratings}:applied"
APPLIED_AT = "{ratings}:applied_at"
PENDING = "{ratings}:pending"
RATED_RACES = "{ratings}:rated_races"
NAMES = "{ratings}:names"
REBUILD_NAMES = "{ratings}:rebuild_names"
"""hash: folded name -> archived race id of the record a rebuild wrote for it (newest wins)."""
RATINGS_REBUILT = "{ratings}:rebuilt"
"""string: when the ratings cache was rebuilt from the archive (lost: rebuilt again)."""
RATINGS_REBUILD_LEASE = "{ratings}:rebuilding"
"""string: the node rebuilding the ratings cache (SET NX, a lease renewed each page)."""
LADDERS_ACCOUNTS = "{ratings}:ladders_accounts"
"""string: when every player without an account was taken off the ladders (its lease:)."""
LADDERS_ACCOUNTS_LEASE = "{ratings}:ladders_accounts_lease"
ARCHIVE_IMPORTED = "{archive}:imported"
"""string: when the data Redis held from before the archive (finished races, records,
histories) was archived: it is done once (again only when Redis lost this marker)."""
ARCHIVE_IMPORT_LEASE = "{archive}:importing"
"""string: the node archiving that data (SET NX, a lease renewed each page)."""


def record(player: str) -> str:
    return f"{{ratings}}:player:{player}"


def history(player: str) -> str:
    return f"{{ratings}}:history:{player}"


def ladder(pool: str, variant: str) -> str:
    return f"{{ratings}}:ladder:{pool}:{variant}"


LOBBY_OPEN = "{lobby}:open"
LOBBY_INFO = "{lobby}:open:info"
LOBBY_VERSIONS = "{lobby}:open:ver"
LOBBY_GONE = "{lobby}:gone"
LOBBY_CHANNEL = "{lobby}:ch"
LOBBY_RATED = "{lobby}:open:rated"
LOBBY_FROM = "{lobby}:open:from"
OPEN_MAX = 2000
"""Public races the open list holds at most (one more is refused at its creation)."""


def lobby_variant(variant: str, *, rated: bool = False) -> str:
    """``{lobby}:open:v:<variant>`` (``:rated``: its rated races): a filter's own list."""
    return f"{{lobby}}:open:v:{variant}" + (":rated" if rated else "")


def lobby_mine(player: str) -> str:
    return f"{{lobby}}:mine:{player}"


def lobby_from(address: str) -> str:
    return f"{{lobby}}:from:{address}"


GONE_MAX = 10_000
"""Races that left the list remembered at most (for an hour)."""


def match_queue(pool: str) -> str:
    """``{match}:q:<pool>``: every key of the quick-match queues shares one hash tag, so
    that one script takes a group from a queue and marks its players matched."""
    return f"{{match}}:q:{pool}"


MATCH_WHO = "{match}:who"
MATCH_ALIVE = "{match}:alive"
MATCH_POOLS = "{match}:pools"
MATCH_GROUPS = "{match}:groups"
MATCH_CREATED = "{match}:created"
MATCH_RECENT = "{match}:recent"
MATCH_CHANNEL = "{match}:ch"
RECENT_MAX = 1000
"""Quick-match races :data:`MATCH_RECENT` remembers."""
MATCH_CONFIRM = "{match}:confirm"
MATCH_KEEP = 3600
"""Seconds a match's seats are kept (far longer than any match takes to be confirmed)."""
FIRST_TTL = 120
"""Seconds a player whose match was called off stays first in line to queue again."""
STRIKES_MAX = 64
"""Strikes kept per player and per address (the newest)."""


def match_seats(code: str) -> str:
    return f"{{match}}:seats:{code}"


def match_first(player: str) -> str:
    return f"{{match}}:first:{player}"


def match_strikes(*, player: str | None = None, address: str | None = None) -> str:
    """``{match}:strikes:p:<player>`` or ``{match}:strikes:a:<address>``."""
    if player is not None:
        return f"{{match}}:strikes:p:{player}"
    assert address is not None
    return f"{{match}}:strikes:a:{address}"
