"""The lobby: create a race with its options, join one by code, join an open race, or
press Quick match.

Every field has its label. The focus starts on the variant choice (``spider1``, the
newcomer's game, unless another is chosen), not in a text field: a stray key types
nothing. Tab goes down the form: variant, the variant's options, seed, time limit, undo,
live boards, Create race, join code, Join, Leave, Your races; then Quick match's variant,
*with bots* and Quick match, and the open races; then round to the name and *public*
(above the variant: a public race is listed in everyone's open races). Enter in a text
field of the new race creates it; Enter in the join code joins. *Your races* lists the
player's races with their state (``my_races``); *Leave* leaves the race whose code is typed
(one that has not started frees its place at once).

*Your unfinished races*, at the top once the lobby has connected, lists the player's races
that are not over for them (:func:`unfinished`: a player who quit a running race may come
back to it); Enter on one rejoins it as the same player. When there are some, the focus
goes to them (if it is still on the variant, where the lobby put it).

The ticks are :class:`Tick`: ``✓`` ticked, empty unticked.

*Quick match* queues for a race of the variant chosen beside it (with bots too when ticked)
until the server has found the players, then shows the race; *Cancel* leaves the queue.
*Open races* (:mod:`.openraces`) lists the public races waiting for players, live; Enter on
one joins it. A terminal at least :data:`WIDE` columns wide shows Quick match and the open
races beside the form, a narrower one below it.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from spider_client.protocol import MyRace, OpenRace
from spider_engine.variants import find_variant, variant_ids

from .host import host_of
from .openraces import OpenRaces

__all__ = [
    "DEFAULT_VARIANT",
    "OPTIONS",
    "STATES",
    "VARIANTS",
    "WIDE",
    "LobbyScreen",
    "Tick",
    "race_line",
    "unfinished",
    "variant_choices",
]

DEFAULT_VARIANT = "spider1"
"""The variant a newcomer should start with: Spider of one suit."""

VARIANTS = {
    "spider1": "Spider, one suit: start here",
    "spider2": "Spider, two suits",
    "spider4": "Spider, four suits: the hardest",
    "spiderette": "Spiderette: one deck, seven columns",
    "myrmex": "Myrmex: the Decktet, cards of two suits",
    "wizard": "Wizard's Tower: tarot cards, no stock",
    "sparrow": "Sparrow: Mah Jong tiles",
    "starfish": "Starfish: six suits and Jokers",
}
"""The variants in the order a newcomer meets them, each with a line saying what it is."""

OPTIONS = {
    "keep": "completed runs stay on the board",
    "open": "every card dealt face up",
    "relaxed": "the stock deals onto empty columns",
    "blind": "dealt as Spider: only the last card of a column face up",
    "weave": "a reserve place, z",
}
"""The variants' options, each with what it changes (shown when the mouse rests on it)."""


WIDE = 118
"""The columns from which the lobby shows Quick match and the open races beside the form."""

STATES = {
    "open": "waiting for players",
    "countdown": "counting down",
    "running": "running",
    "finished": "finished",
}
"""A race's state in words."""


def race_line(race: MyRace) -> str:
    """One race of ``my_races``: code, variant, state (and the player's own end), players."""
    state = STATES.get(race.state, race.state)
    if race.role == "spectator":
        state += ", watching"
    elif race.state == "running" and race.status not in (None, "playing"):
        state += f", you {race.status}"
    players = f"{race.players} player" + ("" if race.players == 1 else "s")
    return f"{race.code}  {race.variant:<12} {state:<24} {players}"


def unfinished(races: list[MyRace]) -> list[MyRace]:
    """The player's races that are not over for them: waiting, counting down, or running
    with their game going on (a player who quit may rejoin them)."""
    return [
        r
        for r in races
        if r.role == "player"
        and r.state in ("open", "countdown", "running")
        and (r.state != "running" or r.status in (None, "waiting", "playing"))
    ]


class Tick(Checkbox):
    """A checkbox whose tick shows whether it is ticked: ``✓`` ticked, empty unticked
    (textual's draws an ``X`` in both, told apart by its colour alone, which many
    terminals' colours hardly show)."""

    TICKED = "✓"
    UNTICKED = " "

    def __init__(self, label: str, value: bool = False, **kwargs: Any) -> None:
        super().__init__(label, value, **kwargs)
        self.BUTTON_INNER = self.TICKED if value else self.UNTICKED

    def watch_value(self) -> None:
        self.BUTTON_INNER = self.TICKED if self.value else self.UNTICKED
        super().watch_value()


def variant_choices() -> list[tuple[str, str]]:
    """The variant choice's lines (``spider1 — Spider, one suit: start here``) and ids: the
    known variants in :data:`VARIANTS`'s order, then any other the engine lists."""
    known = set(variant_ids())
    ids = [v for v in VARIANTS if v in known] + sorted(known - set(VARIANTS))
    return [(f"{v} — {VARIANTS[v]}" if v in VARIANTS else v, v) for v in ids]


class LobbyScreen(Screen[None]):
    """Create a race (public or not, variant and its options, seed, time limit, undo, live
    boards), join one by code or from the open races, or queue for a quick match."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]

    CSS = """
    LobbyScreen { align: center middle; overflow-y: auto; }
    #lobby-page { width: auto; height: auto; layout: vertical; }
    LobbyScreen.-wide #lobby-page { layout: horizontal; width: 100%; max-width: 164; }
    #lobby, #lobby-side { width: 78; height: auto; border: round $accent; padding: 0 2; }
    LobbyScreen.-wide #lobby-side { width: 1fr; padding: 0 1; }
    #lobby .row, #lobby-side .row { height: auto; }
    #lobby .field { width: 13; padding: 1 1 0 0; }
    #lobby .heading, #lobby-side .heading { margin-top: 1; text-style: bold; }
    #lobby-side Select { width: 1fr; }
    #lobby-side Checkbox { width: auto; }
    #quick-match-state { width: 1fr; height: auto; padding: 1 1 0 0; }
    #lobby Input { width: 1fr; }
    #lobby #minutes { width: 10; }
    #lobby #minutes-unit { width: auto; padding: 1 1 0 1; }
    #lobby #variant { width: 1fr; }
    #lobby #code { width: 16; }
    #lobby Checkbox { width: auto; }
    #lobby-message { height: auto; color: $warning; }
    #my-races-list { height: auto; padding: 0 0 0 13; }
    #unfinished-list { height: auto; max-height: 6; }
    """

    def __init__(self, *, name: str) -> None:
        super().__init__()
        self.player_name = name

    def compose(self) -> ComposeResult:
        with Container(id="lobby-page"):
            yield from self._form()
            with Vertical(id="lobby-side"):
                yield Label("Quick match", classes="heading")
                with Horizontal(classes="row"):
                    yield Select(
                        variant_choices(),
                        value=DEFAULT_VARIANT,
                        allow_blank=False,
                        id="quick-variant",
                    )
                with Horizontal(classes="row"):
                    yield Tick("with bots", value=False, id="quick-bots")
                    yield Button("Quick match", id="quick-match", variant="primary")
                with Horizontal(classes="row"):
                    yield Static("", id="quick-match-state")
                    cancel = Button("Cancel", id="cancel-match")
                    cancel.display = False
                    yield cancel
                yield OpenRaces(id="open-races")

    def _form(self) -> ComposeResult:
        """The new race's form and the join by code."""
        with Vertical(id="lobby"):
            yield Label("[b]spider-race[/b] — race friends on the same deal")
            heading = Label(
                "Your unfinished races: enter rejoins", classes="heading", id="unfinished-heading"
            )
            heading.display = False
            yield heading
            races = OptionList(id="unfinished-list")
            races.display = False
            yield races
            with Horizontal(classes="row"):
                yield Label("Your name", classes="field")
                yield Input(value=self.player_name, placeholder="your name", id="name")
            yield Label("New race", classes="heading")
            with Horizontal(classes="row"):
                yield Label("Listed", classes="field")
                public = Tick("public: in everyone's open races", value=False, id="public")
                public.tooltip = "unticked: only those you give the join code can join"
                yield public
            with Horizontal(classes="row"):
                yield Label("Variant", classes="field")
                yield Select(
                    variant_choices(), value=DEFAULT_VARIANT, allow_blank=False, id="variant"
                )
            with Horizontal(classes="row", id="options"):
                yield Label("Options", classes="field")
                for option, what in OPTIONS.items():
                    box = Tick(option, value=False, id=f"option-{option}")
                    box.tooltip = what
                    yield box
            with Horizontal(classes="row"):
                yield Label("Seed", classes="field")
                yield Input(placeholder="empty: a secret random seed", id="seed")
            with Horizontal(classes="row"):
                yield Label("Time limit", classes="field")
                yield Input(value="30", placeholder="30", id="minutes", type="number")
                yield Label("minutes", id="minutes-unit")
            with Horizontal(classes="row"):
                yield Label("", classes="field")
                yield Tick("undo allowed", value=True, id="undo")
                yield Tick("live boards for spectators", value=False, id="live")
            with Horizontal(classes="row"):
                yield Label("", classes="field")
                yield Button("Create race", id="create", variant="primary")
            yield Label("Or join a race", classes="heading")
            with Horizontal(classes="row"):
                yield Label("Join code", classes="field")
                yield Input(placeholder="ABCDE", id="code")
                yield Label(" ")
                yield Button("Join", id="join")
                yield Button("Leave", id="leave")
            with Horizontal(classes="row"):
                yield Label("", classes="field")
                yield Button("Your races", id="my-races")
            yield Static("", id="my-races-list")
            yield Static("", id="lobby-message")

    def on_mount(self) -> None:
        self._show_options(DEFAULT_VARIANT)
        self.query_one("#variant", Select).focus()

    @on(Select.Changed, "#variant")
    def _variant_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self._show_options(event.value)

    def _show_options(self, base: str) -> None:
        """Show only the options of ``base`` (an option of another variant is unticked)."""
        allowed = find_variant(base).options_allowed
        for option in OPTIONS:
            box = self.query_one(f"#option-{option}", Checkbox)
            box.display = option in allowed
            if option not in allowed:
                box.value = False

    def variant(self) -> str:
        """The variant id chosen: the base and its ticked options, in alphabetical order."""
        base = self.query_one("#variant", Select).value
        chosen = [
            option
            for option in sorted(OPTIONS)
            if self.query_one(f"#option-{option}", Checkbox).value
        ]
        return "+".join([base if isinstance(base, str) else DEFAULT_VARIANT, *chosen])

    @on(Button.Pressed, "#create")
    @on(Input.Submitted, "#name, #seed, #minutes")
    def create(self) -> None:
        seed = self.query_one("#seed", Input).value.strip()
        minutes = self.query_one("#minutes", Input).value.strip() or "30"
        try:
            time_limit = max(int(float(minutes) * 60), 1)
        except ValueError:
            self.query_one("#lobby-message", Static).update("the time limit is a number of minutes")
            return
        options: dict[str, Any] = {
            "variant": self.variant(),
            "time_limit": time_limit,
            "undo": self.query_one("#undo", Checkbox).value,
            "live_boards": self.query_one("#live", Checkbox).value,
        }
        if self.query_one("#public", Checkbox).value:
            options["public"] = True
        if seed:
            options["seed"] = seed
        self._go(create=options)

    @on(Button.Pressed, "#join")
    @on(Input.Submitted, "#code")
    def join(self) -> None:
        code = self.query_one("#code", Input).value.strip().upper()
        if not code:
            self.query_one("#lobby-message", Static).update("type the race's join code")
            return
        self._go(code=code)

    @on(OptionList.OptionSelected, "#unfinished-list")
    def rejoin(self, event: OptionList.OptionSelected) -> None:
        """Rejoin the unfinished race chosen, as the same player."""
        if event.option.id:
            self._go(code=event.option.id)

    def show_unfinished(self, races: list[MyRace]) -> None:
        """Show the player's unfinished races (:func:`unfinished`) at the top of the form;
        the first time there are some, the focus goes to them if it is still where the
        lobby put it (or not placed yet: the lobby's own focus may still be on its way)."""
        shown = unfinished(races)
        listed = self.query_one("#unfinished-list", OptionList)
        was_shown = listed.display
        listed.set_options(Option(race_line(r), id=r.code) for r in shown)
        listed.display = bool(shown)
        self.query_one("#unfinished-heading").display = bool(shown)
        if shown:
            listed.highlighted = 0
            if not was_shown and self.focused in (None, self.query_one("#variant", Select)):
                listed.focus()

    @on(OptionList.OptionSelected, "#open-race-list")
    def join_open(self, event: OptionList.OptionSelected) -> None:
        """Join the open race chosen, as its join code does."""
        if event.option.id:
            self.query_one("#code", Input).value = event.option.id
            self._go(code=event.option.id)

    @on(Button.Pressed, "#quick-match")
    def quick_match(self) -> None:
        chosen = self.query_one("#quick-variant", Select).value
        variant = chosen if isinstance(chosen, str) else DEFAULT_VARIANT
        self.matching(variant)
        self._go(
            quick={"variant": variant, "with_bots": self.query_one("#quick-bots", Checkbox).value}
        )

    @on(Button.Pressed, "#cancel-match")
    def cancel_match(self) -> None:
        host_of(self).cancel_match()
        self.matching(None)

    def matching(self, variant: str | None) -> None:
        """Show the quick match queued for ``variant``, or none (None)."""
        self.query_one("#quick-match", Button).disabled = variant is not None
        self.query_one("#cancel-match", Button).display = variant is not None
        state = f"Looking for players ({variant})…" if variant is not None else ""
        self.query_one("#quick-match-state", Static).update(state)

    def show_open_races(self, races: list[OpenRace], me: str | None) -> None:
        """Show the open races listed now (``me``: the player's id, whose races are *by
        you*)."""
        self.query_one(OpenRaces).show(races, me)

    @on(Button.Pressed, "#my-races")
    def my_races(self) -> None:
        host_of(self).list_races()

    @on(Button.Pressed, "#leave")
    def leave(self) -> None:
        code = self.query_one("#code", Input).value.strip().upper()
        if not code:
            self.query_one("#lobby-message", Static).update("type the code of the race to leave")
            return
        host_of(self).list_races(leave=code)

    def show_races(self, races: list[MyRace], note: str) -> None:
        """Show the player's races (``note`` on the message line)."""
        lines = [race_line(r) for r in races] or ["you are in no race"]
        self.query_one("#my-races-list", Static).update("\n".join(lines))
        self.query_one("#lobby-message", Static).update(note)
        self.show_unfinished(races)

    def _go(self, **what: Any) -> None:
        app = host_of(self)
        app.player_name = self.query_one("#name", Input).value.strip() or app.player_name
        if "quick" not in what:
            self.matching(None)
            self.query_one("#lobby-message", Static).update("connecting…")
        app.start(**what)
