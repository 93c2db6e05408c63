"""Drawing the race's progress as rich text: every player's line, the results, clocks.

Pure functions of the protocol's dataclasses to :class:`rich.text.Text`, so that they are
tested without a terminal. Counts are written in words that agree with them (``1 move``,
``2 moves``); names get the room they need, up to :data:`MAX_NAME_ROOM` cells. A player whose hello said
they are a bot has :data:`BOT_MARK` after their name. Given the pane's width, the players'
lines and the results' lines are laid out to fit it (:data:`LAYOUTS`), so that the terminal
wraps none of them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from rich.cells import cell_len
from rich.text import Text

from spider_client.protocol import ParInfo, PlayerInfo, RaceInfo, RatingChange, Result

from ..words import plural

__all__ = [
    "BOT_MARK",
    "MAX_NAME_ROOM",
    "NAME_ROOM",
    "STATUS_STYLES",
    "elide",
    "format_clock",
    "idle_warning",
    "IDLE_WARNING",
    "name_room",
    "progress_bar",
    "render_players",
    "render_par",
    "render_results",
    "shown_name",
    "waiting_text",
]

BOT_MARK = " [bot]"
"""After the name of a player whose hello said ``bot`` (declared, not detected)."""


def shown_name(name: str, bot: bool) -> str:
    """A player's name as the lists show it: with :data:`BOT_MARK` for a bot."""
    return name + BOT_MARK if bot else name


def progress_bar(done: int, total: int, *, width: int = 16) -> Text:
    """A bar of ``width`` cells, ``done`` of ``total`` filled."""
    total = max(total, 1)
    filled = round(width * min(done, total) / total)
    bar = Text("█" * filled, style="green")
    bar.append("░" * (width - filled), style="grey39")
    return bar


STATUS_STYLES = {
    "won": "bold green",
    "playing": "cyan",
    "waiting": "dim",
    "stuck": "yellow",
    "resigned": "red",
    "timeout": "red",
    "left": "dim red",
    "abandoned": "dim red",
    "idle": "dim red",
}

IDLE_WARNING = 10
"""Seconds before the player's idle deadline from which the race screen warns them."""


def idle_warning(race: RaceInfo, me: PlayerInfo | None, now: float) -> str:
    """The warning, in the last :data:`IDLE_WARNING` seconds before ``me``'s idle deadline
    (``idle_at``, server time; ``now`` is the server's time), that they are out unless they
    act (rules.md §7a: out as ``idle``); empty otherwise."""
    if race.state != "running" or me is None or me.status != "playing" or me.idle_at is None:
        return ""
    left = me.idle_at - now
    if left > IDLE_WARNING:
        return ""
    return f"move within {max(0, math.ceil(left))} s or you are out"


def render_players(
    race: RaceInfo,
    *,
    sets: int,
    cards: int,
    me: str | None = None,
    now: float | None = None,
    width: int | None = None,
) -> Text:
    """Every player's progress: runs completed (a bar out of ``sets``), cards turned up,
    moves, score and status; ``me`` is marked, and so is a ghost (``◌``, "(ghost)").

    No line is wider than ``width`` cells (so that the terminal wraps none): when a
    player's line does not fit, everyone's goes on two lines (the counts under the bar);
    narrower still, on :func:`narrow <_player_lines>` lines; the layout is the same for
    every player, so that the names and bars stay in their columns."""
    out = Text()
    room = name_room(shown_name(info.name, info.bot) for info in race.players)
    least = NARROW_NAME + (len(BOT_MARK) if any(info.bot for info in race.players) else 0)
    lines: list[list[Text]] = []
    for layout in LAYOUTS if width is not None else LAYOUTS[:1]:
        lines = [
            _player_lines(
                info, race, sets=sets, me=me, width=width, room=room, layout=layout, least=least
            )
            for info in race.players
        ]
        if width is None or all(t.cell_len <= width for player in lines for t in player):
            break
    for player in lines:
        for text in player:
            if width is not None and text.cell_len > width:
                text.truncate(width, overflow="ellipsis")
            out.append_text(text)
            out.append("\n")
    if not race.players:
        out.append("no players yet\n", style="dim")
    if race.spectators:
        out.append(f"{race.spectators} watching\n", style="dim")
    return out


LAYOUTS = ("one line", "two lines", "narrow")
"""The players' layouts, widest first: :func:`render_players` takes the first in which
every line fits."""


def _player_lines(
    info: PlayerInfo,
    race: RaceInfo,
    *,
    sets: int,
    me: str | None,
    width: int | None,
    room: int,
    layout: str,
    least: int = 10,
) -> list[Text]:
    """One player's lines in ``layout``: ``one line``; ``two lines``, the counts and
    status under the bar; ``narrow``, the name (shortened so that the runs fit beside it)
    and the runs with as much of the bar as fits, then the counts and the status as many on
    a line as fit ``width``, indented by :data:`NARROW_INDENT`; when the name would have
    fewer than ``least`` cells beside the runs, it has its line and the runs go under it."""
    mark = "▶ " if info.player == me else "◌ " if info.ghost else "  "
    mark_style = "dim" if info.ghost else "bold yellow"
    presence = Text("(ghost)" if info.ghost else "(away)" if not info.connected else "")
    presence.stylize("dim")
    waiting = race.state in ("open", "countdown")
    if waiting:
        first = Text("ready" if info.ready else "not ready", style="green" if info.ready else "dim")
        widest = len("not ready")
        rest = presence.copy()
        counts = [presence] if presence else []
    else:
        first = progress_bar(info.runs, sets)
        first.append(f" {info.runs}/{sets} runs")
        widest = len(f"{sets}/{sets} runs")
        moves = "move " if info.moves == 1 else "moves"
        rest = Text(f"{info.turned_up:3d} up  {info.moves:4d} {moves}  score {info.score:4d}  ")
        status = Text(info.status, style=STATUS_STYLES.get(info.status, ""))
        if info.time is not None and info.status == "won":
            status.append(f" in {format_clock(info.time)}", style="green")
        if presence:
            status.append("  ")
            status.append_text(presence)
        rest.append_text(status)
        counts = [
            Text(f"{info.turned_up} up"),
            Text(plural(info.moves, "move")),
            Text(f"score {info.score}"),
            status,
        ]
    if layout != "narrow" or width is None:
        head = _name_head(info, mark, mark_style, room, me)
        if layout == "one line" or not rest:
            return [head + first + Text("  ") + rest if rest else head + first]
        return [head + first, Text(" " * head.cell_len) + _lstrip(rest)]
    if not waiting:
        first = Text(f"{info.runs}/{sets} runs")
    if min(room, width - len(mark) - 1 - widest) < min(room, least):
        # too narrow for the name and the runs: the name has the line
        counts.insert(0, first)
        room = max(min(room, width - len(mark) - 1), 1)
        lines = [_name_head(info, mark, mark_style, room, me)]
        lines[0].rstrip()
    else:
        room = min(room, width - len(mark) - 1 - widest)
        bar = min(16, width - len(mark) - room - 2 - widest)
        if not waiting and bar >= 4:
            first = progress_bar(info.runs, sets, width=bar) + Text(" ") + first
        lines = [_name_head(info, mark, mark_style, room, me) + first]
    for part in counts:
        last = lines[-1]
        if len(lines) > 1 and last.cell_len + 2 + part.cell_len <= width:
            last.append("  ")
            last.append_text(part)
        else:
            lines.append(Text(" " * NARROW_INDENT) + part)
    return lines


NARROW_NAME = 10
"""The fewest cells a name (without the bot's mark) is shortened to beside the runs in the
narrow layout; with fewer, the name has its line and the runs go under it."""


def _lstrip(text: Text) -> Text:
    """``text`` without its leading spaces (its styles kept)."""
    spaces = len(text.plain) - len(text.plain.lstrip(" "))
    return text[spaces:]


NARROW_INDENT = 4
"""The indent of a player's counts on lines of their own in a narrow pane: deeper than the
names (after the 2 cells of the mark), so that the names stay in one column."""


def _name_head(info: PlayerInfo, mark: str, mark_style: str, room: int, me: str | None) -> Text:
    """The mark and the name (with the bot's mark), padded to ``room`` cells and a space."""
    head = Text(mark, style=mark_style)
    name = elide(info.name, max(room - (len(BOT_MARK) if info.bot else 0), 1))
    if info.bot:
        name.append(BOT_MARK, style="magenta")
    name.pad_right(max(room + 1 - name.cell_len, 1))
    if info.player == me:
        name.stylize("bold")
    head.append_text(name)
    return head


NAME_ROOM = 14
"""The cells a name has at least in the players' list and the results."""
MAX_NAME_ROOM = 24
"""The cells a name has at most in the players' list; a longer one ends in ``…`` there (the
results, and the spectators' boards, show it whole)."""


def name_room(names: Iterable[str], *, most: int = MAX_NAME_ROOM) -> int:
    """The cells of the names' column: the longest name's, between ``NAME_ROOM`` and
    ``most``."""
    return max(NAME_ROOM, min(max((cell_len(n) for n in names), default=0), most))


def elide(name: str, room: int) -> Text:
    """``name``, ended by ``…`` when it is longer than ``room`` cells."""
    text = Text(name)
    if text.cell_len > room:
        text.truncate(room, overflow="ellipsis")
    return text


def render_par(par: ParInfo | None, results: list[Result], *, me: str | None = None) -> str:
    """The deal's par against each winner's moves (``par 132 · you 150 (+18) · Bob 160
    (+28)``), with ``so far`` and ``looking for a shorter line…`` while it is the shortest
    line known at the finish (provisional), ``par: working it out…`` while the server
    computes it (``par`` None), or ``no par: the solver did not settle this deal``."""
    if par is None:
        return "par: working it out…"
    if par.none or par.moves is None:
        return "no par: the solver did not settle this deal"
    parts = [f"par {par.moves} so far" if par.provisional else f"par {par.moves}"]
    for r in results:
        if r.status == "won":
            diff = r.moves - par.moves
            sign = "±0" if diff == 0 else f"{diff:+d}".replace("-", "−")
            parts.append(f"{'you' if r.player == me else r.name} {r.moves} ({sign})")
    if par.provisional:
        parts.append("looking for a shorter line…")
    return " · ".join(parts)


def render_results(
    results: list[Result],
    *,
    me: str | None = None,
    changes: list[RatingChange] | None = None,
    race: RaceInfo | None = None,
    width: int | None = None,
) -> Text:
    """The ranking after the race; names whole (with the id's last 4 characters when two
    players share one); each player's rating change after a rated race (``changes``). With
    ``race`` (once its deal is shown), a last line with the deal's par (:func:`render_par`).

    When a player's line is wider than ``width``, every player's goes on a line of its own
    with the rank, name, status and time (the status and time under the name when they do
    not fit beside it), then the counts and the rating change as many on a line as fit,
    indented by :data:`NARROW_INDENT` (a line that does not fit even so ends in ``…``): the
    terminal wraps none of them."""
    out = Text()
    out.append("Results\n", style="bold underline")
    counts = Counter(r.name for r in results)
    names = {
        r.player: shown_name(r.name + (f" #{r.player[-4:]}" if counts[r.name] > 1 else ""), r.bot)
        for r in results
    }
    room = max(NAME_ROOM, *(cell_len(n) for n in names.values())) if results else NAME_ROOM
    moved = {c.player: c for c in changes or []}
    rows: list[tuple[str, list[str], str]] = []
    for r in results:
        time = format_clock(r.time) if r.time is not None else "  -  "
        name = names[r.player] + " " * (room + 1 - cell_len(names[r.player]))
        parts = [plural(r.runs, "run"), plural(r.moves, "move"), f"score {r.score}"]
        change = moved.get(r.player)
        if change is not None:
            delta = change.after - change.before
            mark = "?" if change.provisional else ""
            parts.append(f"rating {change.before} -> {change.after}{mark} ({delta:+d})")
        if r.ghost:
            parts.append("(ghost)")
        line = f"{r.rank:2d}. {name}{r.status:<9}{time:>7}  " + "  ".join(parts)
        head = f"{r.rank:2d}. {names[r.player]}"
        status = r.status + (f" {format_clock(r.time)}" if r.time is not None else "")
        rows.append((line, [status, *parts], head))
    narrow = width is not None and any(cell_len(line) > width for line, _, _ in rows)
    for r, (line, parts, head) in zip(results, rows, strict=True):
        style = "bold yellow" if r.player == me else ""
        lines = [line]
        if narrow and width is not None:
            # the status beside the name when it fits, else under it with the counts
            if cell_len(head) + 1 + cell_len(parts[0]) <= width:
                head += " " + parts.pop(0)
            lines = [head]
            for part in parts:
                if len(lines) > 1 and cell_len(lines[-1]) + 2 + cell_len(part) <= width:
                    lines[-1] += "  " + part
                else:
                    lines.append(" " * NARROW_INDENT + part)
        for text in lines:
            shown = Text(text, style=style)
            if width is not None and shown.cell_len > width:
                shown.truncate(width, overflow="ellipsis")
            out.append_text(shown)
            out.append("\n")
    if race is not None and race.seed:
        out.append(render_par(race.par, results, me=me) + "\n", style="italic")
    return out


def format_clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour), never negative."""
    total = max(int(seconds), 0)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def waiting_text(race: RaceInfo, me: PlayerInfo | None) -> Text:
    """The board's pane before the deal: the race, and what to do now, as the race's
    state says (press r in an open race; nothing to press once it counts down: a quick
    match counts down at once)."""
    # lines no wider than the narrowest board (spiderette's 38 cells), so that the pane
    # keeps its width
    lines = [
        f"Race [b]{race.code}[/b] — {race.variant}",
        "",
        "A quick match, found by the server." if race.quick else "Friends join with this code.",
        f"Undo: {'allowed' if race.undo else 'not allowed'}.",
        f"Live boards for spectators: {'on' if race.live_boards else 'off'}.",
        f"Time limit: {format_clock(race.time_limit)}.",
        "",
    ]
    if race.state == "open" and me is not None and me.ready:
        lines += [
            "You are ready: the countdown starts",
            "once everyone is ([b]r[/b]: not ready).",
        ]
    elif race.state == "open":
        lines.append("Press [b]r[/b] when ready, [b]?[/b] for the keys.")
    elif race.state == "countdown":
        lines += [
            "The countdown is on: the race starts",
            "in a moment. [b]?[/b] shows the keys.",
        ]
    elif race.state == "running":
        lines += ["The race is running: your board", "is on its way."]
    else:
        lines.append("The race is over.")
    return Text.from_markup("\n".join(lines))
