"""A race's results, and a closed room's (looked up by its link)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Button, Static

from protocol.messages import (
    Daily,
    Leave,
    Rematch,
)

from ..chrome import Hints, Title
from ..closed import RoomState
from ..replay import postmortem_text
from ..state import format_ms, headline, streak_text
from ..widgets import (
    Live,
    ResultsView,
    StatusLine,
    describe_rules,
    outcome_cell,
)
from .history import HistoryScreen
from .leaderboard import LeaderboardScreen
from .picker import PICK_BINDINGS, RunPicker


class ResultsScreen(RunPicker):
    """Ranks, times, moves and the revealed game code; rematch, again, or back to the lobby."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "rematch", "rematch"),
        Binding("a", "again", "again"),
        Binding("r", "race", "race the run"),
        Binding("b", "board", "leaderboard"),
        Binding("h", "history", "history"),
        Binding("l", "leave", "lobby"),
        Binding("escape", "leave", "lobby", show=False),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
        *PICK_BINDINGS,
    ]

    def compose(self) -> ComposeResult:
        yield Title("results")
        with Vertical(id="results-body"):
            yield Static("", id="results-head")
            yield ResultsView()
            with Horizontal(classes="row", id="results-buttons"):
                yield Button("Rematch (m)", compact=True, variant="primary", id="rematch")
                yield Button("Again (a)", compact=True, variant="primary", id="again")
                yield Button("Leaderboard (b)", compact=True, id="leaderboard")
                yield Button("History (h)", compact=True, id="history")
                yield Button("Lobby (l)", compact=True, id="leave")
        yield StatusLine()
        yield Hints()

    def _daily(self) -> bool:
        room = self.session.room
        return self.session.daily is not None and room is not None and room.max_players == 1

    def hints(self) -> str:
        if self._daily():
            return "a again (practice) · b board · h history · ↑↓ v replay · r race · l lobby"
        if self.session.may_rematch:
            return "m rematch · b board · h history · ↑↓ v replay · r race · l lobby · q quit"
        return "b leaderboard · h history · ↑↓ v replay · r race · l lobby · q quit"

    def runs(self) -> list[tuple[str | None, str]]:
        result = self.session.result
        return [(result.race, r.name) for r in result.ranks] if result is not None else []

    def refresh_view(self) -> None:
        super().refresh_view()
        try:
            head = self.query_one("#results-head", Static)
            rematch = self.query_one("#rematch", Button)
            again = self.query_one("#again", Button)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head())
        daily = self._daily()
        rematch.display = not daily and self.session.may_rematch
        again.display = daily

    def _head(self) -> Text:
        session = self.session
        result, room = session.result, session.room
        text = Text()
        if result is None or room is None:
            return text
        me = next((r for r in result.ranks if r.name == session.me), None)
        line, kind = headline(result, session.me)
        text.append(line, style="bold #5fd75f" if kind == "good" else "bold")
        text.append("\n")
        if self._daily() and session.daily is not None:
            kind = (
                "from the archive: practice, on the day's archive board"
                if session.daily.archive
                else "practice"
                if session.daily.practice
                else "counts for the leaderboard"
            )
            text.append(
                f"Daily deal {session.daily.date}, attempt {session.daily.attempt} ({kind})"
            )
            if session.daily.par is not None:
                text.append(f" · par {session.daily.par} moves", style="#8a8a8a")
            if streak := streak_text(session.standing):  # my daily streak (protocol 4.27)
                text.append(f" · {streak}", style="#5fd75f")
            text.append("\n")
        mine = session.postmortem(result.race, session.me) if result.race and session.me else None
        if me is not None and result.race:
            text.append("Post-mortem: ", style="bold")
            if mine is None:
                text.append("working it out…", style="#8a8a8a")
            elif isinstance(mine, str):
                text.append(mine.removeprefix("post-mortem: "), style="#d7af00")
            else:
                text.append(postmortem_text(mine))
            text.append("\n")
        if result.code:
            text.append("Game code ", style="#8a8a8a")
            text.append(result.code, style="bold")
            text.append(f"  ({describe_rules(room.rules)})", style="#8a8a8a")
        else:
            text.append("The game code stays secret until 00:35 UTC the next day", style="#8a8a8a")
        if session.fairness is not None:
            what, good = session.fairness
            text.append(f"\n{what}", style="#5fd75f" if good else "bold #ff5f5f")
        return text

    def action_rematch(self) -> None:
        if self.session.may_rematch and not self._daily():
            self.client.send(Rematch())

    def action_again(self) -> None:
        if self._daily():
            # An archive run's "again" is the same past day again (docs/protocol.md 4.28).
            daily = self.session.daily
            archived = daily is not None and daily.archive
            self.client.send(Daily(date=daily.date if daily is not None and archived else None))

    def action_board(self) -> None:
        result = self.session.result
        if self._daily() and self.session.daily is not None:
            daily = self.session.daily
            self.app.push_screen(LeaderboardScreen(date=daily.date, archive=daily.archive))
        elif result is not None and result.code:
            self.app.push_screen(LeaderboardScreen(code=result.code))
        else:
            self.app.push_screen(LeaderboardScreen())

    def action_leave(self) -> None:
        self.client.send(Leave())

    def action_history(self) -> None:
        self.app.push_screen(HistoryScreen())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        {
            "rematch": self.action_rematch,
            "again": self.action_again,
            "history": self.action_history,
            "leaderboard": self.action_board,
            "leave": self.action_leave,
        }.get(event.button.id or "", lambda: None)()


class ClosedTable(Live):
    """A closed room's last race: its ranks, as the results show them."""

    DEFAULT_CSS = """
    ClosedTable { height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        screen = self.screen
        if not isinstance(screen, ClosedRoomScreen) or screen.state.last_race is None:
            return Text("")
        table = Table(box=None, pad_edge=False, header_style="bold #8a8a8a")
        for name, justify in (
            ("#", "right"),
            ("player", "left"),
            ("outcome", "left"),
            ("time", "right"),
            ("moves", "right"),
            ("cards", "right"),
        ):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        for i, r in enumerate(screen.state.last_race.results):
            outcome = outcome_cell(r.outcome)
            if r.hinted:
                outcome.append(" · hinted", style="#87d7ff")
            table.add_row(
                str(r.rank),
                r.name,
                outcome,
                format_ms(r.time_ms),
                str(r.moves),
                f"{r.foundations}/52",
                style="reverse" if i == screen.selected else "",
            )
        return table


class ClosedRoomScreen(RunPicker):
    """An invite link to a room that is closed (docs/protocol.md 1.6): said at once, with
    that room's last race when the server has one; ↑↓ v replays a run of it, r races it."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "race", "race the run"),
        Binding("escape", "back", "lobby"),
        Binding("l", "back", "lobby", show=False),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
        *PICK_BINDINGS,
    ]

    def __init__(self, state: RoomState, connect: Callable[[], None] | None = None) -> None:
        """``connect``: called when the player goes on (the app then says hello, asking
        for a name if it needs one): nothing is asked before the closed room is read."""
        super().__init__()
        self.state = state
        self.connect = connect

    def _online(self) -> bool:
        """Replays and ghosts need the server: connect first if not yet (once)."""
        if self.client.link_state.kind == "online":
            return True
        if self.connect is not None:
            self.connect()
        self.session.say("connecting: press it again once you are in")
        self.client.sync()
        return False

    def action_replay(self) -> None:
        if self._online():
            super().action_replay()

    def action_race(self) -> None:
        if self._online():
            super().action_race()

    def compose(self) -> ComposeResult:
        yield Title("closed room")
        yield Static(self._head(), id="closed-head")
        yield ClosedTable()
        yield StatusLine()
        yield Hints()

    def hints(self) -> str:
        if self.state.last_race is None:
            return "esc lobby · q quit"
        return "↑↓ v replay · r race this run · esc lobby · q quit"

    def _head(self) -> Text:
        state = self.state
        last = state.last_race
        if last is None:
            # No stored race: a code that never had a room, or one that closed before any
            # race; the server cannot tell which, so neither is claimed (issue 42).
            text = Text(f"\n No room {state.room} is open", style="bold")
            text.append(": check the code, or its players have all left it.\n")
            text.append(" There is no race of it to show.", style="#8a8a8a")
            text.append("\n Esc goes to the lobby: start a room of your own, or join another.\n")
            return text
        text = Text(f"\n Room {state.room} is closed", style="bold")
        text.append(": everyone left it (or it was a private practice room).\n")
        when = ""
        if last.finished_ms is not None:
            stamp = dt.datetime.fromtimestamp(last.finished_ms / 1000)
            when = f", {stamp.strftime('%Y-%m-%d %H:%M')}"
        text.append(f" Its last race{when}", style="bold")
        if last.code:
            text.append(f" · {last.code}", style="#8a8a8a")
        text.append("\n")
        return text

    def runs(self) -> list[tuple[str | None, str]]:
        last = self.state.last_race
        return [(last.race, r.name) for r in last.results] if last is not None else []

    def action_back(self) -> None:
        if self.connect is not None:
            self.connect()
        self.dismiss()
