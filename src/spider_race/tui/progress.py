"""Drawing the race's progress as rich text: every player's line, the results, clocks.

Pure functions of the protocol's dataclasses to :class:`rich.text.Text`, so that they are
tested without a terminal. Counts are written in words that agree with them (``1 move``,
``2 moves``); names get the room they need, up to :data:`MAX_NAME_ROOM` cells. A player whose hello said
they are a bot has :data:`BOT_MARK` after their name.
"""

from __future__ import annotations

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
    "name_room",
    "progress_bar",
    "render_players",
    "render_par",
    "render_results",
    "shown_name",
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
}


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
    moves, score and status; ``me`` is marked, and so is a ghost (``◌``, "(ghost)"). A player's line longer than ``width`` cells
    goes on two lines."""
    out = Text()
    room = name_room(shown_name(info.name, info.bot) for info in race.players)
    for info in race.players:
        _player_line(out, info, race, sets=sets, cards=cards, me=me, width=width, room=room)
    if not race.players:
        out.append("no players yet\n", style="dim")
    if race.spectators:
        out.append(f"{race.spectators} watching\n", style="dim")
    return out


def _player_line(
    out: Text,
    info: PlayerInfo,
    race: RaceInfo,
    *,
    sets: int,
    cards: int,
    me: str | None,
    width: int | None,
    room: int,
) -> None:
    mark = "▶ " if info.player == me else "◌ " if info.ghost else "  "
    out.append(mark, style="dim" if info.ghost else "bold yellow")
    name = elide(info.name, room - (len(BOT_MARK) if info.bot else 0))
    if info.bot:
        name.append(BOT_MARK, style="magenta")
    name.pad_right(room + 1 - name.cell_len)
    if info.player == me:
        name.stylize("bold")
    out.append_text(name)
    if race.state in ("open", "countdown"):
        ready = "ready" if info.ready else "not ready"
        out.append(ready, style="green" if info.ready else "dim")
        if info.ghost:
            out.append("  (ghost)", style="dim")
        elif not info.connected:
            out.append("  (away)", style="dim")
        out.append("\n")
        return
    out.append_text(progress_bar(info.runs, sets))
    out.append(f" {info.runs}/{sets} runs")
    moves = "move " if info.moves == 1 else "moves"
    rest = Text(f"{info.turned_up:3d} up  {info.moves:4d} {moves}  score {info.score:4d}  ")
    rest.append(info.status, style=STATUS_STYLES.get(info.status, ""))
    if info.time is not None and info.status == "won":
        rest.append(f" in {format_clock(info.time)}", style="green")
    if info.ghost:
        rest.append("  (ghost)", style="dim")
    elif not info.connected:
        rest.append("  (away)", style="dim")
    line = out.plain[out.plain.rfind("\n") + 1 :]
    if width is not None and cell_len(line) + 2 + rest.cell_len > width:
        # too narrow for one line: the rest under the bar
        out.append("\n" + " " * (len(mark) + room + 1))
        rest = _lstrip(rest)
    else:
        out.append("  ")
    out.append_text(rest)
    out.append("\n")


def _lstrip(text: Text) -> Text:
    """``text`` without its leading spaces (its styles kept)."""
    spaces = len(text.plain) - len(text.plain.lstrip(" "))
    return text[spaces:]


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
    (+28)``), ``par: working it out…`` while the server computes it (``par`` None), or
    ``no par: the solver did not settle this deal``."""
    if par is None:
        return "par: working it out…"
    if par.none or par.moves is None:
        return "no par: the solver did not settle this deal"
    parts = [f"par {par.moves}"]
    for r in results:
        if r.status == "won":
            diff = r.moves - par.moves
            sign = "±0" if diff == 0 else f"{diff:+d}".replace("-", "−")
            parts.append(f"{'you' if r.player == me else r.name} {r.moves} ({sign})")
    return " · ".join(parts)


def render_results(
    results: list[Result],
    *,
    me: str | None = None,
    changes: list[RatingChange] | None = None,
    race: RaceInfo | None = None,
) -> Text:
    """The ranking after the race; names whole (with the id's last 4 characters when two
    players share one); each player's rating change after a rated race (``changes``). With
    ``race`` (once its deal is shown), a last line with the deal's par (:func:`render_par`)."""
    out = Text()
    out.append("Results\n", style="bold underline")
    counts = Counter(r.name for r in results)
    names = {
        r.player: shown_name(
            r.name + (f" #{r.player[-4:]}" if counts[r.name] > 1 else ""), r.bot
        )
        for r in results
    }
    room = max(NAME_ROOM, *(cell_len(n) for n in names.values())) if results else NAME_ROOM
    moved = {c.player: c for c in changes or []}
    for r in results:
        style = "bold yellow" if r.player == me else ""
        time = format_clock(r.time) if r.time is not None else "  -  "
        name = names[r.player] + " " * (room + 1 - cell_len(names[r.player]))
        change = moved.get(r.player)
        rating = ""
        if change is not None:
            delta = change.after - change.before
            mark = "?" if change.provisional else ""
            rating = f"  rating {change.before} -> {change.after}{mark} ({delta:+d})"
        out.append(
            f"{r.rank:2d}. {name}{r.status:<9}{time:>7}  {plural(r.runs, 'run')}"
            f"  {plural(r.moves, 'move')}  score {r.score}{rating}"
            f"{'  (ghost)' if r.ghost else ''}\n",
            style=style,
        )
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
