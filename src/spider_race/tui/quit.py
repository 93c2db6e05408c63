"""The question before quitting a race whose game goes on: ``q`` on the race screen while
the player's game is counting down or running.

Quitting does not end the game: the clock goes on, the player is marked away, and after
the race's ``away_grace`` seconds away in all (this time and any before) they are out as
abandoned; and a player who makes no move for the race's ``idle_limit`` is out as idle. Until then they may come
back as the same player (``spider-race play CODE``, or the lobby's unfinished races), which
the question says. **Stay** has the focus, so that a second stray key quits nothing:
``escape`` or ``n`` stays, ``y`` quits.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from spider_client import Client

__all__ = ["QuitScreen", "game_goes_on", "quit_question"]


def quit_question(code: str, grace: int, come_back: str) -> str:
    """What the question says: the game goes on, for how long away, and how to come back
    (``come_back``: the command; empty when the player cannot)."""
    lines = [
        f"Your game in race {code} goes on without you: the clock keeps running, and after "
        f"{grace} s away in all you are out as abandoned.",
    ]
    if come_back:
        lines += [
            "",
            "Come back as the same player before then with",
            f"  {come_back}",
            "or from the lobby's unfinished races (spider-race play).",
        ]
    return "\n".join(lines)


class QuitScreen(ModalScreen[bool]):
    """Quit and leave the game running (True), or stay (False)."""

    CSS = """
    QuitScreen { align: center middle; }
    #quit-dialog {
        width: 66; max-width: 100%; height: auto; max-height: 100%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    #quit-title { text-style: bold; margin-bottom: 1; }
    #quit-text { height: auto; }
    #quit-buttons { height: auto; margin-top: 1; }
    #quit-buttons Button { margin-right: 2; }
    """

    BINDINGS = [
        Binding("escape,n", "stay", "stay"),
        Binding("y", "leave", "quit, the game runs on"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="quit-dialog"):
            yield Label("Quit the race?", id="quit-title")
            yield Static(self.question, id="quit-text", markup=False)
            with Horizontal(id="quit-buttons"):
                yield Button("Stay (n)", id="quit-stay", variant="primary")
                yield Button("Quit, leave it running (y)", id="quit-leave", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#quit-stay", Button).focus()

    @on(Button.Pressed, "#quit-stay")
    def action_stay(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#quit-leave")
    def action_leave(self) -> None:
        self.dismiss(True)


def game_goes_on(role: str, client: Client) -> bool:
    """Whether the player's game is counting down or running, not over: quitting leaves
    it running without them."""
    race = client.race
    return (
        role == "player"
        and race is not None
        and race.state in ("countdown", "running")
        and client.status in ("waiting", "playing")
    )
