"""The node's metrics, rendered in the Prometheus text format for ``GET /metrics``.

Counters and gauges are this node's own (a deployment sums them over its nodes); races by
state are the races this node's connections watch.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping

__all__ = ["Histogram", "Metrics"]


class Histogram:
    """A cumulative histogram with fixed bucket bounds (seconds)."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def render(self, name: str) -> list[str]:
        lines = []
        total = 0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            total += n
            lines.append(f'{name}_bucket{{le="{bound}"}} {total}')
        lines.append(f'{name}_bucket{{le="+Inf"}} {self.count}')
        lines.append(f"{name}_sum {self.sum:.6f}")
        lines.append(f"{name}_count {self.count}")
        return lines


class Metrics:
    """What one node counts."""

    def __init__(self) -> None:
        self.connections = 0
        self.connections_total = 0
        self.frames_total = 0
        self.actions_total: Counter[str] = Counter()
        self.errors_total: Counter[str] = Counter()
        self.races_created_total = 0
        self.transitions_total: Counter[str] = Counter()
        self.closed_total: Counter[int] = Counter()
        self.action_seconds = Histogram(
            (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
        )
        self.gc_seconds = Histogram((0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5))
        """Pauses of Python's cyclic garbage collector (while they last, nothing else runs)."""
        self.loop_lag = Histogram((0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5))
        """How late a timer of the event loop fires: how long work held the loop."""

    def render(
        self,
        races_by_state: Mapping[str, int],
        subscriptions: Mapping[str, int] | None = None,
        backlog: tuple[int, int] = (0, 0),
    ) -> str:
        out = [
            "# HELP spider_connections Open websocket connections on this node.",
            "# TYPE spider_connections gauge",
            f"spider_connections {self.connections}",
            "# HELP spider_connections_total Websocket connections accepted by this node.",
            "# TYPE spider_connections_total counter",
            f"spider_connections_total {self.connections_total}",
            "# HELP spider_frames_total Frames received from clients.",
            "# TYPE spider_frames_total counter",
            f"spider_frames_total {self.frames_total}",
            "# HELP spider_races Races watched by this node's connections, by state.",
            "# TYPE spider_races gauge",
        ]
        for state in ("open", "countdown", "running", "finished"):
            out.append(f'spider_races{{state="{state}"}} {races_by_state.get(state, 0)}')
        subs = subscriptions or {}
        out += [
            "# HELP spider_subscriptions Connections following a race on this node, by role.",
            "# TYPE spider_subscriptions gauge",
        ]
        for role in ("player", "spectator"):
            out.append(f'spider_subscriptions{{role="{role}"}} {subs.get(role, 0)}')
        out += [
            "# HELP spider_backlogged_connections Connections with frames waiting for their"
            " reader now (the socket takes no more; a reader that stopped stays in it).",
            "# TYPE spider_backlogged_connections gauge",
            f"spider_backlogged_connections {backlog[0]}",
            "# HELP spider_backlog_frames Frames queued for those connections.",
            "# TYPE spider_backlog_frames gauge",
            f"spider_backlog_frames {backlog[1]}",
            "# HELP spider_races_created_total Races created through this node.",
            "# TYPE spider_races_created_total counter",
            f"spider_races_created_total {self.races_created_total}",
            "# HELP spider_transitions_total Race starts and finishes this node performed.",
            "# TYPE spider_transitions_total counter",
        ]
        for kind in ("start", "finish"):
            out.append(f'spider_transitions_total{{kind="{kind}"}} {self.transitions_total[kind]}')
        out += [
            "# HELP spider_actions_total Player actions applied (moves, deals, undos, resigns).",
            "# TYPE spider_actions_total counter",
        ]
        for kind in ("move", "undo", "resign", "duplicate"):
            out.append(f'spider_actions_total{{kind="{kind}"}} {self.actions_total[kind]}')
        out += [
            "# HELP spider_errors_total Error replies sent, by code.",
            "# TYPE spider_errors_total counter",
        ]
        for code, n in sorted(self.errors_total.items()):
            out.append(f'spider_errors_total{{code="{code}"}} {n}')
        out += [
            "# HELP spider_closed_total Connections this node closed, by close code.",
            "# TYPE spider_closed_total counter",
        ]
        for close_code, count in sorted(self.closed_total.items()):
            out.append(f'spider_closed_total{{code="{close_code}"}} {count}')
        out += [
            "# HELP spider_action_seconds Time from receiving an action to sending its ack.",
            "# TYPE spider_action_seconds histogram",
            *self.action_seconds.render("spider_action_seconds"),
            "# HELP spider_gc_pause_seconds Pauses of the garbage collector in this process.",
            "# TYPE spider_gc_pause_seconds histogram",
            *self.gc_seconds.render("spider_gc_pause_seconds"),
            "# HELP spider_loop_lag_seconds How late a 100 ms timer of the event loop fires.",
            "# TYPE spider_loop_lag_seconds histogram",
            *self.loop_lag.render("spider_loop_lag_seconds"),
        ]
        return "\n".join(out) + "\n"
