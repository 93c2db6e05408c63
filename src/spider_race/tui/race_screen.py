"""The race screen: the top line (code, state, countdown, clock), the player's board,
every player's progress, live boards for spectators, results, and the move line.

Keys on the race screen: :mod:`.keys` (the board has the focus; ``?`` shows them).

The footer shows only the keys that can act (a spectator's: ``?`` and ``q``). A
spectator has no board of their own: the side pane, with every player's progress and their
boards side by side (:mod:`.tiles`), has the focus and scrolls by the arrow and page keys.
Nothing on the screen moves when a column is picked: the move being picked is a line of its
own under the board, and the board's pane keeps its width.

The screen is drawn again from the client's state (:meth:`RaceScreen.redraw`) on every
event the app passes on and after every key that changes what is picked.
"""

from __future__ import annotations

import contextlib

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from spider_client import Client
from spider_client.protocol import RaceInfo
from spider_engine import Board, EngineError, Move
from spider_engine.moves import column_index, column_letter

from .host import RaceHost, host_of
from .keys import (
    fitting_count,
    has_jokers,
    has_reserve,
    has_sets,
    has_stock,
    help_text,
    joker_depth,
    key_acts,
    move_examples,
    place_letter,
    variant_board,
)
from .progress import format_clock, idle_warning, render_players, render_results, waiting_text
from .quit import QuitScreen, game_goes_on, quit_question
from .ratings import RaceRatings
from .render import RESERVE, board_room, cards_as_shown, render_board
from .tiles import spectator_boards

__all__ = ["BoardView", "RaceScreen"]


class BoardView(Static, can_focus=True):
    """The player's board; has the focus for column keys."""


class RaceScreen(Screen[None]):
    """A race: the top line (code, state, countdown, clock), the player's board, every
    player's progress, live boards for spectators, results, and the move line."""

    CSS = """
    #top { height: 1; background: $boost; padding: 0 1; }
    #main { height: 1fr; }
    #board-pane { width: 44; padding: 0 1; scrollbar-gutter: stable; scrollbar-size-vertical: 1; }
    #side { width: 1fr; padding: 0 1; overflow-x: auto; }
    #players { height: auto; }
    #results { height: auto; margin-top: 1; }
    #boards { height: auto; width: auto; margin-top: 1; }
    #help { height: auto; margin-top: 1; border: round $accent; padding: 0 1; }
    #message { height: 1; padding: 0 1; color: $warning; }
    #move { dock: bottom; }
    """

    BINDINGS = [
        Binding("plus", "deal", "deal (+)"),
        Binding("u", "undo", "undo"),
        Binding("r", "ready", "ready"),
        Binding("colon", "type_move", "type a move"),
        Binding("question_mark", "help", "keys"),
        Binding("escape", "clear", "clear", show=False),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.source: int | None = None
        """The picked column (``RESERVE`` for Wizard's reserve), or None."""
        self.count = ""
        """Digits typed after the picked column: how many cards (a Joker move: the depth)."""
        self.mode = ""
        """``"set"`` after ``x`` (Sparrow), ``"joker"`` after ``*`` (Starfish), else ``""``."""
        self.set_columns: list[int] = []
        """The columns picked for a set, in the order picked."""
        self._keys_shown: tuple[object, ...] = ()
        self.ratings = RaceRatings()

    @property
    def race_app(self) -> RaceHost:
        return host_of(self)

    def compose(self) -> ComposeResult:
        yield Static("", id="top")
        with Horizontal(id="main"):
            with VerticalScroll(id="board-pane"):
                yield BoardView("", id="board")
            with ScrollableContainer(id="side"):
                yield Static("", id="players")
                yield Static("", id="results")
                yield Static("", id="boards")
                yield Static("", id="help")
        yield Static("", id="message")
        yield Input(
            placeholder="type a move (d1j, +) or undo / resign / ready, then enter", id="move"
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help").display = False
        if self.race_app.role == "spectator":
            # no board of one's own: the side (players and their boards) scrolls by keys
            self.query_one("#board-pane").display = False
            self.query_one("#move").display = False
            self.query_one("#side").focus()
        else:
            self.query_one("#board", BoardView).focus()
        self.set_interval(0.25, self.redraw_top)
        self.redraw()

    # -- drawing ----------------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw everything again from the client's state (a no-op once the screen is
        gone)."""
        client = self.race_app.client
        if client is None:
            return
        try:
            self._redraw(client)
        except NoMatches:  # the screen is being taken down
            return

    def _redraw(self, client: Client) -> None:
        self.redraw_top()
        race = client.race
        view = client.view
        board = self.query_one("#board", BoardView)
        sample = variant_board(race.variant) if race is not None else None
        if view is not None:
            text = render_board(view, selected=self._selected(), pending=self._pending())
            self._fit_board(text, sample)
            board.update(text)
            self._show_examples(view)
        elif race is not None and self.race_app.role == "player":
            text = waiting_text(race, client.me)
            self._fit_board(text, sample)
            board.update(text)
        self._refresh_keys(client)
        if race is None:
            return
        sets = sample.variant.set_count() if sample else 8
        cards = len(sample.variant.canonical_deck()) if sample else 104
        self.query_one("#players", Static).update(
            render_players(race, sets=sets, cards=cards, me=client.player, width=self._side_width())
        )
        results = self.query_one("#results", Static)
        changes = self.ratings.of(self, client, race)
        results.update(
            render_results(
                race.results,
                me=client.player,
                changes=changes,
                race=race,
                width=self._side_width(),
            )
            if race.results
            else ""
        )
        results.display = bool(race.results)
        boards = self._other_boards(race)
        boards_pane = self.query_one("#boards", Static)
        boards_pane.update(boards)
        boards_pane.display = bool(boards.plain)

    def _fit_board(self, text: Text, sample: Board | None) -> None:
        """Make the board's pane as wide as the board's widest line (at least 44 cells), so
        that no line wraps: 12- and 13-column boards are wider than Spider's. The width is
        the game's from the start (its board, with room for every set in the foundation)
        and never shrinks, so that nothing beside the board moves as the game goes on."""
        width = max((cell_len(line) for line in text.plain.splitlines()), default=0)
        if sample is not None:
            width = max(width, board_room(sample.variant.id))
        pane = self.query_one("#board-pane")
        wanted = max(width + 3, 44)  # the padding and the scroll bar's gutter
        current = pane.styles.width
        if current is None or current.value < wanted:
            pane.styles.width = wanted

    def _side_width(self) -> int | None:
        """The width the side pane has for text (beside the board pane, when shown)."""
        width = self.size.width
        if not width:
            return None
        pane = self.query_one("#board-pane")
        if pane.display and pane.styles.width is not None:
            width -= int(pane.styles.width.value)
        return width - 4  # the padding, and a scroll bar when the text is long

    def on_resize(self, event: events.Resize) -> None:
        self.redraw()

    def _show_examples(self, view: Board) -> None:
        """The move line's placeholder, with examples of this game's kinds of moves."""
        line = self.query_one("#move", Input)
        placeholder = (
            f"type a move ({', '.join(move_examples(view))}) or undo / resign / ready, then enter"
        )
        if line.placeholder != placeholder:
            line.placeholder = placeholder

    def _other_boards(self, race: RaceInfo) -> Text:
        """Every player's board, for spectators (live boards, or after the race)."""
        client = self.race_app.client
        if client is None or self.race_app.role != "spectator":
            return Text()
        return spectator_boards(race, client.boards, width=self._side_width())

    def _refresh_keys(self, client: Client) -> None:
        """Show in the footer only the keys that can act (see :meth:`check_action`): redrawn
        when the race's state, or whether it has undo or a stock, changes."""
        race = client.race
        keys = (
            self.race_app.role,
            race.state if race is not None else "",
            race.undo if race is not None else True,
            has_stock(client.view),
        )
        if keys != self._keys_shown:
            self._keys_shown = keys
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Whether a key is shown and acts (:func:`~.keys.key_acts`): a player's keys only
        for players, and only when they can act."""
        client = self.race_app.client
        return key_acts(
            action,
            role=self.race_app.role,
            race=client.race if client is not None else None,
            view=client.view if client is not None else None,
        )

    def redraw_top(self) -> None:
        client = self.race_app.client
        try:
            top = self.query_one("#top", Static)
        except NoMatches:
            return
        if client is None or client.race is None:
            top.update("connecting…")
            return
        race = client.race
        now = client.server_now()
        parts = [f"[b]{race.code}[/b]", race.variant, race.state]
        if race.state == "countdown" and race.starts_at is not None:
            parts.append(f"[b yellow]starts in {max(race.starts_at - now, 0):.0f}[/]")
        elif race.state == "running" and race.starts_at is not None:
            parts.append(f"clock {format_clock(now - race.starts_at)}")
            if race.ends_at is not None:
                parts.append(f"{format_clock(race.ends_at - now)} left")
        if client.role == "player" and client.status:
            parts.append(f"you: {client.status}")
        if client.role == "player" and (warning := idle_warning(race, client.me, now)):
            parts.append(f"[b white on red]{warning}[/]")
        if not client.connected:
            parts.append("[b red]reconnecting…[/]")
        top.update("  ·  ".join(parts))

    def say(self, text: str) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#message", Static).update(text)

    def _selected(self) -> int | list[int] | None:
        if self.mode == "set":
            return self.set_columns
        return self.source

    def _pending(self) -> str:
        if self.mode == "set":
            return "x" + "".join(column_letter(c) for c in self.set_columns)
        prefix = "*" if self.mode == "joker" else ""
        if self.source is None:
            return prefix
        return f"{prefix}{column_letter(self.source)}{self.count}"

    def _drop(self) -> None:
        """Forget a picked column, set or Joker move."""
        self.source, self.count, self.mode = None, "", ""
        self.set_columns = []

    # -- keys -------------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        if isinstance(self.focused, Input) or self.race_app.role != "player":
            return
        view = self.race_app.client.view if self.race_app.client else None
        char = event.character or ""
        if view is None or len(char) != 1:
            return
        if char == "x" and has_sets(view):
            event.stop()
            event.prevent_default()
            self._drop()
            self.mode = "set"
            self.say("a set: pick the four columns (escape drops it)")
            self.redraw()
        elif char == "*" and has_jokers(view):
            event.stop()
            event.prevent_default()
            self._drop()
            self.mode = "joker"
            self.say("a Joker: pick the column, type the depth, then where the card goes")
            self.redraw()
        elif char.isdigit() and self.source is not None and self.mode != "set":
            self.count += char
            event.stop()
            event.prevent_default()
            self.redraw()
        elif char == "z" and has_reserve(view):
            event.stop()
            event.prevent_default()
            self.pick_column(RESERVE, view)
        elif "a" <= char <= "z" and column_index(char) < len(view.cols):
            event.stop()
            event.prevent_default()
            self.pick_column(column_index(char), view)

    def pick_column(self, column: int, view: Board) -> None:
        """A column key (``RESERVE`` for the reserve): the first picks the source, the
        second moves to it; after ``x`` four of them take a set off; after ``*`` the first
        is the Joker's column, the second where the replaced card goes."""
        if self.mode == "set":
            self._pick_for_set(column)
            return
        if self.source is None:
            if column == RESERVE:
                if view.extra[0] < 0:
                    self.say("the reserve is empty")
                    return
            elif not view.cols[column]:
                self.say(f"column {column_letter(column)} is empty")
                return
            self.source, self.count = column, ""
            self.say("")
            self.redraw()
            return
        source, count, mode = self.source, self.count, self.mode
        self._drop()
        if column == source:
            self.say("")
            self.redraw()
            return
        if mode == "joker":
            if column == RESERVE:
                self.redraw()
                return
            depth = int(count) if count else joker_depth(view, source, column)
            self.play(f"*{column_letter(source)}{depth}{column_letter(column)}")
            return
        if source == RESERVE or column == RESERVE:
            self.play(f"{place_letter(source)}1{place_letter(column)}")
            return
        n = int(count) if count else fitting_count(view, source, column)
        self.play(f"{column_letter(source)}{n}{column_letter(column)}")

    def _pick_for_set(self, column: int) -> None:
        """One column of a set: picking it again drops it; the fourth sends the move."""
        if column == RESERVE:
            return
        if column in self.set_columns:
            self.set_columns.remove(column)
        else:
            self.set_columns.append(column)
        if len(self.set_columns) < 4:
            self.redraw()
            return
        columns = sorted(self.set_columns)
        self._drop()
        self.play("x" + "".join(column_letter(c) for c in columns))

    def action_clear(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#board", BoardView).focus()
        self._drop()
        self.say("")
        self.redraw()

    def action_help(self) -> None:
        """Show (or hide) the keys of this race's game."""
        help_pane = self.query_one("#help", Static)
        if help_pane.display:
            help_pane.display = False
            return
        client = self.race_app.client
        view = client.view if client else None
        variant = client.race.variant if client and client.race else ""
        help_pane.update(help_text(view if view is not None else variant_board(variant)))
        help_pane.display = True

    def action_deal(self) -> None:
        self.play("+")

    def action_undo(self) -> None:
        self.race_app.act("undo")

    def action_ready(self) -> None:
        client = self.race_app.client
        if client is None or client.race is None or client.race.state != "open":
            return
        me = client.me
        self.race_app.act("ready", ready=not (me is not None and me.ready))

    def action_type_move(self) -> None:
        self.query_one("#move", Input).focus()

    async def action_quit(self) -> None:
        """Quit; while the player's game goes on (counting down or running), ask first:
        the game goes on without them (:class:`~.quit.QuitScreen`)."""
        client = self.race_app.client
        race = client.race if client is not None else None
        if client is None or race is None or not game_goes_on(self.race_app.role, client):
            await self.race_app.quit_app()
            return
        come_back = self.race_app.come_back(race.code)
        question = quit_question(race.code, race.away_grace, come_back)

        async def answered(leave: bool | None) -> None:
            if not leave:
                return
            message = f"spider-race: your game in race {race.code} goes on without you"
            if come_back:
                message += (
                    f"; come back before {race.away_grace} s away in all (or be out) with:"
                    f" {come_back}"
                )
            await self.race_app.quit_app(message)

        self.app.push_screen(QuitScreen(question), answered)

    @on(Input.Submitted, "#move")
    def typed(self, event: Input.Submitted) -> None:
        text = event.value.strip().lower()
        event.input.value = ""
        if not text:
            return
        if text in ("undo", "resign", "ready"):
            self.race_app.act(text)
        elif text == "deal":
            self.play("+")
        else:
            self.play(text)

    def play(self, text: str) -> None:
        """Check a move against the view, then send it."""
        client = self.race_app.client
        view = client.view if client else None
        if view is None:
            self.say("the race has not started")
            return
        try:
            move = Move.from_text(text)
        except EngineError as e:
            self.say(str(e))
            return
        if not view.is_legal(move):
            self.say(f"{text}: {cards_as_shown(view, view.explain_illegal(move))}")
            self.redraw()
            return
        self.say("")
        self.race_app.act("move", move=text)
