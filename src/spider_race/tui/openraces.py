"""The lobby's open races: the public races waiting for players, kept live.

Each race is one line of an :class:`OpenRaceList`: its code, variant (with its options),
seats taken of the seats there are and those free, the time limit and the rules that
differ from the usual (no undo, hints, a winnable deal), what kind of race it is (rated,
live boards, humans only), and who made it with their rating in the variant; the longest
waiting first. A creator's name shared by another listed creator gets the last four
characters of the player id beside it (``alice #d0b7``), as the results and the profiles
show it; the player's own races are *by you*. The app keeps the list from the client's
subscription (:meth:`~spider_client.Client.watch_open_races`): a race appears when it is
listed and leaves when it fills, starts, its creator leaves it, or is gone. Enter (or a
click) on a line joins that race, as its join code does.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from spider_client.protocol import OpenRace

__all__ = ["EMPTY", "OpenRaceList", "OpenRaces", "open_race_line", "race_terms"]

EMPTY = "No open races. Create one or Quick match."
"""What the list says when no public race is waiting."""


def race_terms(race: OpenRace) -> str:
    """The race's time limit, the rules that differ from the usual ones, and what kind of
    race it is (rated, live boards, humans only)."""
    minutes = max(1, round(race.time_limit / 60))
    terms = [f"{minutes} min"]
    if not race.undo:
        terms.append("no undo")
    if race.hints:
        terms.append("hints")
    if race.winnable:
        terms.append("winnable deal")
    if race.rated:
        terms.append("rated")
    if race.live_boards:
        terms.append("live boards")
    if race.humans_only:
        terms.append("humans only")
    return ", ".join(terms)


def open_race_line(race: OpenRace, listed: Iterable[OpenRace] = (), me: str | None = None) -> str:
    """One listed race, on two lines: ``K7M2Q  spider1  1/4 seats, 3 free`` and ``30 min
    · by alice (1520)``. The creator's name gets the id's last four characters when another creator
    in ``listed`` has the same name; the player ``me`` reads *you*; the rating is left
    out while the creator has none in the variant."""
    if race.creator == me:
        who = "you"
    else:
        who = race.creator_name or "someone"
        if any(o.creator != race.creator and o.creator_name == race.creator_name for o in listed):
            who += f" #{race.creator[-4:]}"
    if race.creator_rating is not None:
        who += f" ({round(race.creator_rating)}{'?' if race.creator_provisional else ''})"
    seats = f"{race.players}/{race.max_players} seats, {race.free} free"
    return f"{race.code}  {race.variant}  {seats}\n{'':7}{race_terms(race)} · by {who}"


class OpenRaceList(OptionList):
    """The listed races, the longest waiting first (as the server lists them); each
    option's id is the race's code."""

    def show(self, races: Iterable[OpenRace], me: str | None = None) -> None:
        """Show ``races`` (the highlight stays on the race it was on, while listed)."""
        shown = sorted(races, key=lambda r: r.created_at)
        highlighted = self.highlighted_option
        keep = highlighted.id if highlighted is not None else None
        self.set_options(Option(open_race_line(r, shown, me), id=r.code) for r in shown)
        codes = [r.code for r in shown]
        if keep in codes:
            self.highlighted = codes.index(keep)
        self.display = bool(shown)

    def codes(self) -> list[str]:
        """The codes listed, in their order."""
        return [str(self.get_option_at_index(i).id) for i in range(self.option_count)]


class OpenRaces(Vertical):
    """The lobby's *Open races*: a heading, the list, and a line that says why it is
    empty (:data:`EMPTY`, or that the server could not be reached)."""

    DEFAULT_CSS = """
    OpenRaces { height: auto; }
    OpenRaces .heading { margin-top: 1; text-style: bold; }
    OpenRaces OpenRaceList { height: auto; max-height: 20; padding: 0; }
    OpenRaces #open-races-empty { height: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Label("Open races", classes="heading")
        races = OpenRaceList(id="open-race-list")
        races.display = False
        yield races
        yield Static(EMPTY, id="open-races-empty")

    def show(self, races: Iterable[OpenRace], me: str | None = None) -> None:
        """Show the races listed now (the empty line when there is none)."""
        shown = list(races)
        self.query_one(OpenRaceList).show(shown, me)
        empty = self.query_one("#open-races-empty", Static)
        empty.update(EMPTY)
        empty.display = not shown

    def unavailable(self, why: str) -> None:
        """Say that the list could not be followed, and why."""
        self.query_one(OpenRaceList).show([])
        empty = self.query_one("#open-races-empty", Static)
        empty.update(f"Open races are not shown: {why}")
        empty.display = True
