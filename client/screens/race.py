"""The race itself, and watching one: the board, the standings, the clock."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widgets import Static

from protocol.messages import (
    Leave,
)

from ..chrome import Base, Hints
from ..state import FOUNDATION
from ..widgets import (
    BoardView,
    RaceHeader,
    StandingsView,
    StatusLine,
    describe_rules,
    room_invite,
)
from .dialogs import ConfirmScreen

# -- race ----------------------------------------------------------------------------------


class RaceScreen(Base):
    """The board and the standings; every key of the race."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"column({n})", f"column {n}", show=False) for n in range(1, 8)),
        Binding("f", "foundation", "foundation"),
        Binding("up", "step(1)", "deeper", show=False),
        Binding("down", "step(-1)", "shallower", show=False),
        Binding("k", "step(1)", "deeper", show=False),
        Binding("j", "step(-1)", "shallower", show=False),
        Binding("enter", "tap", "tap"),
        Binding("space", "tap", "tap", show=False),
        Binding("escape", "cancel", "cancel"),
        Binding("u", "undo", "undo"),
        Binding("h", "hint", "hint"),
        Binding("a", "finish", "finish"),
        Binding("r", "resign", "resign"),
        Binding("l", "leave", "leave"),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield RaceHeader()
        with Horizontal(id="race-body"):
            yield BoardView(id="board")
            yield StandingsView(id="standings")
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        for widget in self.query(RaceHeader):
            widget.refresh()

    def hints(self) -> str:
        session = self.session
        race = session.race
        if race is None:
            return ""
        if session.result is None and session.race_done():
            won = "you won: " if race.state == "won" else ""
            return f"l leave · ? help · q quit · ({won}waiting for the others to finish)"
        if race.pick is None and race.can_finish():
            return "a finish (the server plays out the win) · 1-7 pick · u undo · r resign · ? help"
        if race.state == "stuck" and session.hints_allowed:
            return "u undo · h hint · r resign · ? help"
        if race.state == "stuck":
            return "u undo · r resign · ? help"
        if race.pick is None and session.hints_allowed:
            return "1-7 pick · ⏎ home · f foundation · h hint · u undo · r resign · ? help"
        if race.pick is None:
            return "1-7 pick · ⏎ home (twice: a column) · f foundation · u undo · r resign · ? help"
        if race.pick.source == FOUNDATION:
            return "1-7 drop · ↑↓ other foundation · esc cancel"
        return "1-7 drop · f foundation · ↑↓ deeper/higher · ⏎ auto · esc cancel"

    def action_column(self, n: int) -> None:
        self.client.send(*self.session.press_column(n))

    def action_foundation(self) -> None:
        self.client.send(*self.session.press_foundation())

    def action_step(self, delta: int) -> None:
        self.session.step(delta)
        self.client.sync()

    def action_tap(self) -> None:
        self.client.send(*self.session.tap(self.client.clock()))

    def action_cancel(self) -> None:
        self.session.cancel()
        self.client.sync()

    def action_undo(self) -> None:
        self.client.send(*self.session.undo())

    def action_hint(self) -> None:
        self.client.send(*self.session.ask_hint())

    def action_finish(self) -> None:
        self.client.send(*self.session.finish())

    def action_resign(self) -> None:
        if self.session.race is None or self.session.race_done():
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.client.send(*self.session.resign())

        self.app.push_screen(ConfirmScreen("Resign this race?"), answered)

    def action_leave(self) -> None:
        if self.session.race_done():
            self.client.send(Leave())
        else:
            self.session.say("you are racing: resign first (r), then leave", "error")
            self.client.sync()

    def on_board_view_clicked(self, event: BoardView.Clicked) -> None:
        event.stop()
        target = event.target
        session = self.session
        if target.kind == "card":
            self.client.send(*session.click_card(target.column, target.card, self.client.clock()))
        elif target.kind == "column":
            self.client.send(*session.click_column(target.column))
        elif target.kind == "foundation":
            self.client.send(*session.click_foundation(target.suit))


class WatchScreen(Base):
    """A race seen from the stands: everyone's progress, nobody's cards."""

    HINTS = "c copy link · l leave · ? help · q quit"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy_link", "copy the invite link"),
        Binding("l", "leave", "leave"),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield RaceHeader()
        yield Static("", id="watch-note")
        yield StandingsView(id="watch-standings")
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def _tick(self) -> None:  # the race clock runs between progresses
        for widget in self.query(RaceHeader):
            widget.refresh()

    def refresh_view(self) -> None:
        super().refresh_view()
        room = self.session.room
        try:
            note = self.query_one("#watch-note", Static)
        except NoMatches:  # not mounted yet
            return
        if room is not None:
            text = Text(f"You watch room {room.room}", style="bold")
            text.append(f" · {describe_rules(room.rules)} · host {room.host}", style="#8a8a8a")
            if room.spectators > 1:
                text.append(f" · {room.spectators} watching", style="#8a8a8a")
            link = room_invite(self.client)
            if link is not None:
                text.append("\nInvite link ", style="#8a8a8a")
                text.append(link, style="bold #87d7ff")
                text.append("  (c copies it)", style="#8a8a8a")
            note.update(text)

    def action_leave(self) -> None:
        self.client.send(Leave())
