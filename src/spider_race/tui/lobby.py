"""The lobby: create a race with its options, or join one by code."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Input, Label, Static

from .host import host_of

__all__ = ["LobbyScreen"]


class LobbyScreen(Screen[None]):
    """Create a race (variant, seed, time limit, undo, live boards) or join one by code."""

    CSS = """
    LobbyScreen { align: center middle; }
    #lobby { width: 64; height: auto; border: round $accent; padding: 1 2; }
    #lobby Input { margin-bottom: 1; }
    #lobby Label { margin-top: 1; }
    """

    def __init__(self, *, name: str) -> None:
        super().__init__()
        self.player_name = name

    def compose(self) -> ComposeResult:
        with Vertical(id="lobby"):
            yield Label("[b]spider-race[/b] — race friends on the same Spider deal")
            yield Input(value=self.player_name, placeholder="your name", id="name")
            yield Label("New race")
            yield Input(
                value="spider4",
                placeholder="variant (spider1, spider4, myrmex, wizard+weave, sparrow, starfish, …)",
                id="variant",
            )
            yield Input(placeholder="seed (empty: a secret random seed)", id="seed")
            yield Input(value="30", placeholder="time limit in minutes", id="minutes")
            yield Checkbox("undo allowed", value=True, id="undo")
            yield Checkbox("live boards for spectators", value=False, id="live")
            yield Button("Create race", id="create", variant="primary")
            yield Label("Or join a race")
            yield Input(placeholder="join code", id="code")
            yield Button("Join", id="join")
            yield Static("", id="lobby-message")

    def on_mount(self) -> None:
        self.query_one("#variant", Input).focus()

    @on(Button.Pressed, "#create")
    @on(Input.Submitted, "#name, #variant, #seed, #minutes")
    def create(self) -> None:
        seed = self.query_one("#seed", Input).value.strip()
        minutes = self.query_one("#minutes", Input).value.strip() or "30"
        try:
            time_limit = max(int(float(minutes) * 60), 1)
        except ValueError:
            self.query_one("#lobby-message", Static).update("the time limit is a number of minutes")
            return
        options: dict[str, Any] = {
            "variant": self.query_one("#variant", Input).value.strip() or "spider4",
            "time_limit": time_limit,
            "undo": self.query_one("#undo", Checkbox).value,
            "live_boards": self.query_one("#live", Checkbox).value,
        }
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

    def _go(self, **what: Any) -> None:
        app = host_of(self)
        app.player_name = self.query_one("#name", Input).value.strip() or app.player_name
        self.query_one("#lobby-message", Static).update("connecting…")
        app.start(**what)
