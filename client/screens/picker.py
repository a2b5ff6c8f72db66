"""What the screens whose rows are runs share: choose one, replay it, race its ghost,
open its player's page."""

from __future__ import annotations

from rich.console import RenderableType
from textual.binding import Binding, BindingType
from textual.screen import Screen

from protocol.messages import (
    BoardRow,
    Ghost,
    HistoryRow,
)

from ..chrome import Base
from ..player import PlayerScreen
from ..state import format_ms
from .replay import ReplayScreen

# -- results -------------------------------------------------------------------------------


class RunPicker(Base):
    """A screen whose rows are runs (results, a board, the history): ↑ ↓ choose one, v
    opens its replay (docs/protocol.md 4.22). Nothing is marked until ↑ or ↓; v then
    opens my own run, or the first."""

    selected: int | None = None

    def runs(self) -> list[tuple[str | None, str]]:
        """The rows shown, in order, as (race or None, player)."""
        return []

    def mine(self) -> int:
        me = self.session.me
        return next((i for i, (_, name) in enumerate(self.runs()) if name == me), 0)

    def action_pick(self, delta: int) -> None:
        runs = self.runs()
        if not runs:
            return
        start = self.mine() if self.selected is None else self.selected + delta
        self.selected = max(0, min(len(runs) - 1, start))
        self.refresh_view()

    def action_replay(self) -> None:
        runs = self.runs()
        if not runs:
            return
        i = self.mine() if self.selected is None else min(self.selected, len(runs) - 1)
        race, name = runs[i]
        if race is None:
            self.session.say("this run has no replay (an older server)", "error")
            self.client.sync()
            return
        self.app.push_screen(ReplayScreen(race, name))

    def action_race(self) -> None:
        """Race the chosen run as a ghost (docs/protocol.md 4.23): the server opens a ghost
        room on its deal (whose screen then shows), or says why not."""
        runs = self.runs()
        if not runs:
            return
        i = self.mine() if self.selected is None else min(self.selected, len(runs) - 1)
        race, name = runs[i]
        if race is not None:
            self.client.send(Ghost(race, name))

    def action_player(self) -> None:
        """The chosen row's player's page (docs/protocol.md 4.27)."""
        runs = self.runs()
        if runs:
            i = self.mine() if self.selected is None else min(self.selected, len(runs) - 1)
            open_player(self, runs[i][1])


def open_player(screen: Screen[None], name: str) -> None:
    """Open ``name``'s page over ``screen``."""
    screen.app.push_screen(PlayerScreen(name))


PICK_BINDINGS: list[BindingType] = [
    Binding("up", "pick(-1)", "previous run", show=False),
    Binding("down", "pick(1)", "next run", show=False),
    Binding("v", "replay", "replay"),
    Binding("p", "player", "player's page", show=False),
]


def run_cells(r: BoardRow | HistoryRow) -> list[RenderableType]:
    """The figures of one run, the same columns on a board and in the history."""
    return [format_ms(r.time_ms), str(r.moves), str(r.score), f"{r.foundations}/52", str(r.undos)]
