"""``spider-race bench server``: how much a server carries, as figures anyone can rerun.

Bots play through the client library (:class:`spider_client.Client`), as real players do,
against a server: its own (a ``python -m spider_server`` process with an embedded Redis
and a raised rate limit) unless ``--url`` names one.

**Moves that stay legal.** Every race deals one seeded ``spider1`` deal in which, after a
short opening, one card can go from a column to another and back (:func:`find_ping_pong`
finds such a deal with the engine): each bot plays the opening, then sends that move and
its way back, again and again. Every move is a real move, checked by the server's engine,
committed to Redis and announced to the race; nothing grows but the player's action list.

**Players** (default): ``--players N`` bots in ``--races M`` races (and ``--spectators S``
watching, spread over the races in turn) send moves for ``--warmup W`` seconds (2 by
default: connections, races and schedules settle; nothing is measured) and then for
``--seconds T``, measured:

- ``--rate R``: each player sends R moves a second on a fixed schedule (open loop: a late
  ack does not move the schedule; the ack time is counted from the scheduled time);
- ``--rate max``: each sends its next move as soon as the last is acked.

It prints ``key: value`` lines: ``moves_per_s`` (acked moves a second), ``ack_p50_ms``,
``ack_p99_ms``, ``event_p99_ms`` (from sending a move to a spectator receiving its
``progress``; ``n/a`` without spectators), ``connections``, ``server_rss_mb`` (the server
process's resident memory at the end of the run, with every connection open; ``n/a``
with ``--url``), ``errors`` (moves refused, lost connections), ``moves`` and
``warmup_moves`` (acked in the measured time and in the warm-up), ``moves_in_redis`` (the
moves found in the players' action lists in Redis after the run: every move acked,
``moves`` + ``warmup_moves``, with ``moves`` = ``moves_per_s`` × seconds; needs
``--redis`` with ``--url``), and the **baseline** measured in the same run
on the same machine with the same number of connections and the same rate mode:
``baseline_per_s``, the messages a second of a bare websocket echo server that does one
Redis transaction per message (a ``MULTI``/``EXEC`` of one ``INCR``), built with the
same libraries and the same Redis client settings as the server
(:func:`spider_server.store.redisconn.connect`), and ``ratio`` = moves_per_s / baseline_per_s.
CPU time per move during the timed phase — of the server process, of Redis (from its
``INFO cpu``) and of the bots (this process) — is printed too
(``server_cpu_ms_per_move``, …, and the baseline's ``baseline_server_cpu_ms_per_message``,
``baseline_redis_…`` and ``baseline_clients_…``), and ``cpu_ratio``: the baseline's CPU time
per message (echo server, Redis and clients) over ours per move (server, Redis and bots).
On a machine whose cores are shared, rates depend on the neighbours, CPU time per move
much less: ``cpu_ratio`` is what ``ratio`` would be if both runs had the cores to
themselves and were CPU-bound. ``pair_ratio`` leaves the clients out: the server's and
its Redis's CPU per move over the echo server's and its Redis's per message (at most 1:
the pair costs no more than the baseline's).

The spectators run in worker processes (``--spectator-procs P``; by default one per 250
spectators, at most one per core), each through the client library, so that reading
their frames does not queue behind one process's loop: the figure is the server's delivery
more than the bench's own reading. Each worker notes when every ``progress`` reaches each
of its spectators (on the system-wide monotonic clock, this process's loop time); after
the measured time it waits (up to 10 s) until every spectator has seen every bot's last
move, and sends its notes back. A spectator still behind then, a reconnect or an event
dropped counts in ``errors``.

``--stalled K`` adds K spectators that never read (a raw socket with a small receive
buffer). Before the measured time each asks for its race again and again, unread, until
the server's ``/metrics`` counts it among the connections whose frames wait for their
reader (``spider_backlogged_connections``): the server's socket takes no more and frames
queue for it. Then they leave their races, and the measured time is cut into slices of
about 2 s (eight at least, by fours): they join their races for the middle two of each
four (away, watching, watching, away: a steady drift of the machine's speed, and its
spells of a few seconds, weigh on both sides alike). The deliveries to
the others in their races count on the side of their move's slice (a move sent within
0.1 s of a join or leave counts on neither). It prints ``event_p99_ms_stalled_away`` and
``…_watching`` (with ``events_stalled_…``), ``stalled_slowdown_pct`` (watching over away,
minus one), the server's CPU time per move on each side (``server_cpu_ms_per_move_stalled_…``,
with the bench's own server), and what the server showed in the middle of every slice:
``stalled_backlogged_at_start`` and ``stalled_backlogged_watching`` (the fewest),
``stalled_backlog_frames`` (frames queued at the last look) and
``stalled_slices_as_planned`` (slices where its spectators subscribed were the others, plus
the stalled ones while they watched); ``stalled_toggle_late_ms`` is how late a join or
leave was sent. The slowdown is ``n/a`` unless every stalled spectator was backlogged and
every slice was as planned. A reader that answers no ping is cut after the ping interval
plus the ping timeout (40 s by default): the bench's own server pings every ``seconds`` +
60 s or more when there are stalled spectators, so that it keeps them for the whole run;
a server named with ``--url`` needs that too, and a rate limit that lets their requests
through.

``--hint-spam K`` and ``--pool-refill`` add solver work in the measured time's second
half (:mod:`.solverload`): K players, each alone in a ``spider4`` race with hints, ask for
hints back to back, and the seed pool refills ``spider4`` deals (the bench's own server
keeps a pool that never fills). The first half is quiet; a refill cannot be called back,
so the quiet half comes first. It prints ``ack_p99_ms_quiet`` and ``ack_p99_ms_loaded``
(the players' acks by their due time), ``solver_load_ratio`` (loaded over quiet),
``hints_answered``, and from the server's ``/metrics`` the solver jobs completed in the
loaded half and those running at its end. ``--pars N`` finishes N races one after another
in that half (``spider1`` and ``spider2`` in turn) and waits for each one's par: it prints
``pars_landed``, the waits from each finish to its par (``par_wait_s_total``, ``_p50``,
``_max``), the workers' CPU on pars (``par_cpu_s_total``, from ``/metrics``) and
``par_wait_to_cpu_ratio`` (the waits over that CPU: 1 when a par waits for nothing but
its own search).

**Idle** (``--idle N``): N connections that said hello and do nothing, held for
``--seconds``; prints ``connections``, ``connect_per_s`` and ``server_rss_mb``.

The benchmark raises its own limit of open files (and so its server's) as far as the hard
limit allows.

The package, one part per module: :mod:`.deal` (the deal the bots play), :mod:`.processes`
(starting and stopping Redis, the server and the echo server), :mod:`.baseline` (the echo
server and its load), :mod:`.meter` (CPU time), :mod:`.sending` (senders, the timed phase
and its tally), :mod:`.players`, :mod:`.spectators` (the worker processes),
:mod:`.stalled` (the stalled-spectator experiment), :mod:`.solverload` (the
solver-load experiment), :mod:`.report` (the figures printed),
:mod:`.modes` (the modes and the entry points); ``python -m spider_race.bench_server``
runs the worker processes.
"""

from __future__ import annotations

from .deal import PingPong, find_ping_pong
from .modes import main, run

__all__ = ["PingPong", "find_ping_pong", "run", "main"]
