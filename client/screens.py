"""The screens: lobby, room, race, watch, results, leaderboards, help, and two small dialogs.

A screen draws the session and turns keys and clicks into the app's actions; it holds no
game state of its own (the leaderboard screen remembers which page it shows, no more).
It reaches the app only as its ``Host`` (host.py): nothing here imports app.py.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from collections.abc import Callable
from typing import ClassVar, cast

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Digits, Input, Label, Select, Static

from protocol import GameCode, InvalidCodeError
from protocol.messages import (
    MAX_NAME,
    Board,
    BoardPage,
    BoardRow,
    Create,
    Daily,
    Ghost,
    History,
    HistoryPage,
    HistoryRow,
    Join,
    Leave,
    PostMortemAnswer,
    Ready,
    Rematch,
    Start,
    Watch,
    normalize_name,
)

from .closed import RoomState
from .config import LOCAL_WHERE
from .dailydeck import NextDaily, archive_date
from .host import Host, host
from .invite import name_link, replay_link
from .quick import QuickInfo
from .replay import SPEEDS, ReplayRun, postmortem_text
from .state import FOUNDATION, RaceBoard, Session, format_ms, headline, rating_text, streak_text
from .widgets import (
    BoardView,
    Live,
    RaceHeader,
    ResultsView,
    RoomView,
    StandingsView,
    StatusLine,
    TickBox,
    describe_rules,
    outcome_cell,
    room_invite,
)

__all__ = [
    "AlertScreen",
    "ClosedRoomScreen",
    "ConfirmScreen",
    "HelpScreen",
    "HistoryScreen",
    "LeaderboardScreen",
    "LobbyScreen",
    "NameLinkScreen",
    "NameScreen",
    "PasswordScreen",
    "RaceScreen",
    "ReplayScreen",
    "ResultsScreen",
    "RoomScreen",
    "TrustScreen",
    "WatchScreen",
]

VARIANTS = [
    ("C Classic", "C"),
    ("R Relaxed", "R"),
    ("S Russian", "S"),
    ("A Alaska", "A"),
    ("M Moosehide", "M"),
]
PLAYER_LIMITS = [(f"{n}", n) for n in range(2, 9)]
TIME_LIMITS = [("5 min", 300), ("10 min", 600), ("15 min", 900), ("30 min", 1800), ("60 min", 3600)]


class Hints(Live):
    """The key line at the bottom of a screen; its text comes from the screen."""

    DEFAULT_CSS = """
    Hints { height: 1; background: $panel; padding: 0 1; color: $text-muted; }
    """

    def render(self) -> RenderableType:
        screen = self.screen
        text = screen.hints() if isinstance(screen, Base) else ""
        if self.session.ascii:
            for fancy, plain in (("←", "left"), ("→", "right"), ("↑↓", "up/down"), ("⏎", "Enter")):
                text = text.replace(fancy, plain)
        out = Text(no_wrap=True, overflow="ellipsis")
        for i, part in enumerate(text.split(" · ")):
            if i:
                out.append("  ")
            if part.startswith("("):  # a remark, not a key
                out.append(part, style="italic")
                continue
            key, _, what = part.partition(" ")
            out.append(key, style="bold")
            out.append(f" {what}" if what else "")
        return out


class Title(Live):
    """The first line of the lobby, room and results screens: what this is, and who I am."""

    DEFAULT_CSS = """
    Title { height: 1; background: $panel; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text

    def render(self) -> RenderableType:
        session = self.session
        left = Text(" Yukon Race", style="bold")
        if self.text:
            left.append(f" · {self.text}")
        room = session.room
        if self.text in ("room", "results") and room is not None and room.max_players > 1:
            left.append(f" · room {room.room}" if self.text == "results" else f" {room.room}")
        elif self.text == "room" and room is not None and room.ghost is not None:
            left.append(f" · racing {room.ghost}'s run (ghost)")
        right = Text()
        if session.me:
            right.append(session.me, style="bold")
            right.append(f" @ {self.client.where} ", style="#8a8a8a")
        else:
            right.append(f"{self.client.where} ", style="#8a8a8a")
        # Who I am stays whole; what this screen is gives way (cut by cells).
        width = self.size.width or 80
        room_left = max(0, width - right.cell_len - 1)
        if left.cell_len > room_left:
            left.truncate(room_left, overflow="ellipsis")
        return left + Text(" " * max(0, width - left.cell_len - right.cell_len)) + right


class Base(Screen[None]):
    """What every full screen shares: the app, the session, a status line, key hints."""

    HINTS = ""

    @property
    def client(self) -> Host:
        return host(self)

    @property
    def session(self) -> Session:
        return self.client.session

    def hints(self) -> str:
        return self.HINTS

    def refresh_view(self) -> None:
        """Redraw from the session.

        A widget whose height follows its content (``height: auto``: the room's players,
        the results' ranks) needs a layout pass too: a plain refresh repaints it within the
        height it had, so a list that grew showed only its first rows until a resize.
        """
        for widget in self.query(Live):
            height = widget.styles.height
            widget.refresh(layout=height is not None and height.is_auto)

    def on_screen_resume(self) -> None:
        self.refresh_view()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_copy_link(self) -> None:
        """``c``: the room's invite link to the clipboard, by the terminal (OSC 52, which
        Textual's ``copy_to_clipboard`` writes). Whether the terminal took it cannot be
        known (some ignore OSC 52; tmux passes it on only with ``set-clipboard on``), so
        the status says so, and the link stays on the screen to select by hand."""
        link = room_invite(self.client)
        if link is None:
            return
        self.app.copy_to_clipboard(link)
        self.session.say(f"copied the invite link, if the terminal allows it: {link}")
        self.client.sync()


# -- lobby ---------------------------------------------------------------------------------


class LobbyScreen(Base):
    """Create a room, join or watch one, play the daily deal, open the leaderboards."""

    AUTO_FOCUS = "#create"
    HINTS = (
        "r quick · n new · j join · w watch · d daily · a archive · l boards · h history · p page"
        " · i link · f 4 colours · s letters · ? help · q quit"
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "quick", "quick race"),
        Binding("n", "create", "new room"),
        Binding("j", "join", "join"),
        Binding("w", "watch", "watch"),
        Binding("d", "daily", "daily deal"),
        Binding("a", "archive", "a past day (archive)"),
        Binding("f", "four_colour", "four-colour deck"),
        Binding("s", "suit_letters", "suits as letters"),
        Binding("l", "boards", "leaderboards"),
        Binding("h", "history", "history"),
        Binding("i", "name_link", "your name's link"),
        Binding("p", "player", "your page"),
        Binding("question_mark", "help", "help"),
        Binding("q", "quit", "quit"),
        Binding("escape", "unfocus", "back to the buttons", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Title("lobby")
        with Vertical(id="lobby"):
            with Container(classes="box", id="quick-box") as box:  # issue 29
                box.border_title = "Quick race"
                with Horizontal(classes="row"):
                    yield Button("Quick race (r)", compact=True, variant="primary", id="quick")
                    about = "players of about your rating, 2 to 4, within seconds"
                    yield Label(Text(about, style="#8a8a8a"))
                yield QuickInfo(id="quick-info")
            with Container(classes="box", id="new-room") as box:
                box.border_title = "New room"
                with Horizontal(classes="row"):
                    yield Label("Rules", classes="label")
                    yield Select(VARIANTS, value="C", allow_blank=False, compact=True, id="variant")
                    yield TickBox("E open spaces", compact=True, id="opt-e")
                    yield TickBox("G groups", compact=True, id="opt-g")
                    yield TickBox("T take-back", compact=True, id="opt-t")
                with Horizontal(classes="row"):
                    yield Label("or code", classes="label")
                    yield Input(placeholder="YU1-C-AAAAAAB", compact=True, id="code")
                with Horizontal(classes="row"):
                    yield Label("Options", classes="label")
                    yield TickBox("undo", value=True, compact=True, id="undo")
                    yield TickBox("hints", value=False, compact=True, id="hints")
                    yield TickBox("rated", value=False, compact=True, id="rated")
                    remark = "(h in a race; hinted wins rank lower)"
                    yield Label(Text(remark, style="#8a8a8a"))
                with Horizontal(classes="row"):
                    yield Label("Players", classes="label")
                    yield Select(
                        PLAYER_LIMITS, value=4, allow_blank=False, compact=True, id="players"
                    )
                    yield Label("Time", classes="label2")
                    yield Select(
                        TIME_LIMITS, value=1800, allow_blank=False, compact=True, id="time"
                    )
                    yield Button("Create room (n)", compact=True, variant="primary", id="create")
            with Container(classes="box", id="join-box") as box:
                box.border_title = "Join or watch a room"
                with Horizontal(classes="row"):
                    yield Label("Room code", classes="label")
                    yield Input(placeholder="K7WQM", max_length=16, compact=True, id="room-code")
                    yield Button("Join (j)", compact=True, id="join")
                    yield Button("Watch (w)", compact=True, id="watch")
            with Container(classes="box", id="alone-box") as box:
                box.border_title = "On your own"
                with Horizontal(classes="row"):
                    yield Button("Today's daily deal (d)", compact=True, id="daily")
                    yield Button("Leaderboards (l)", compact=True, id="boards")
                    yield Button("History (h)", compact=True, id="history")
                    yield Button("Quit (q)", compact=True, id="quit")
                # Issue 29 (client/dailydeck.py): a past day from the archive; the countdown.
                with Horizontal(classes="row"):
                    yield Label("Archive", classes="label")
                    yield Input(
                        placeholder="YYYY-MM-DD", max_length=10, compact=True, id="archive-date"
                    )
                    yield Button("Play that day (a)", compact=True, id="archive")
                    yield NextDaily()
        yield StatusLine()
        yield Hints()

    def create_message(self) -> Create | None:
        """The ``create`` the form describes, or None (and a status) if the code is wrong."""
        code = self.query_one("#code", Input).value.strip()
        players = cast(int, self.query_one("#players", Select).value)
        time_limit = cast(int, self.query_one("#time", Select).value)
        undo = self.query_one("#undo", TickBox).value
        hints = self.query_one("#hints", TickBox).value
        rated = self.query_one("#rated", TickBox).value
        if code:
            try:
                parsed = GameCode.parse(code)
            except InvalidCodeError as exc:
                self.session.say(f"game code: {exc}", "error")
                self.client.sync()
                return None
            return Create(
                code=str(parsed),
                max_players=players,
                undo=undo,
                time_limit=time_limit,
                hints=hints,
                rated=rated,
            )
        rules = cast(str, self.query_one("#variant", Select).value)
        for letter in "EGT":
            if self.query_one(f"#opt-{letter.lower()}", TickBox).value:
                rules += letter
        return Create(
            rules=rules,
            max_players=players,
            undo=undo,
            time_limit=time_limit,
            hints=hints,
            rated=rated,
        )

    def _room_code(self) -> str | None:
        field = self.query_one("#room-code", Input)
        code = field.value.strip()
        if not code:
            field.focus()
            self.session.say("type the room code, then Enter (or w to watch)")
            self.client.sync()
            return None
        return code

    def action_quick(self) -> None:
        """Enter the quick-race pool, or leave it (docs/protocol.md 4.26)."""
        for message in self.session.quick_race():
            self.client.send(message)

    def action_create(self) -> None:
        message = self.create_message()
        if message is not None:
            self.client.send(message)

    def action_join(self) -> None:
        code = self._room_code()
        if code is not None:
            self.client.send(Join(code))

    def action_watch(self) -> None:
        code = self._room_code()
        if code is not None:
            self.client.send(Watch(code))

    #: ``d`` was pressed: the question waits for today's board (is my counted attempt
    #: played?); the board asked for it, to tell its answer from an older page.
    _daily_ask: Board | None = None

    def action_daily(self) -> None:
        """Ask before the daily: the first attempt of the day is the one that counts, and
        a key pressed by mistake must not spend it. Today's board says whether it is."""
        if self._daily_ask is not None:
            return
        self.session.board = None
        ask = Board("daily", limit=1)
        self._daily_ask = ask
        self.client.send(ask)
        if self.client.link_state.kind != "online":
            self._daily_ask = None

    def refresh_view(self) -> None:
        super().refresh_view()
        quick = self.query_one("#quick", Button)
        quick.label = "Leave pool (r)" if self.session.pool else "Quick race (r)"
        self.query_one(QuickInfo).display = self.session.pool is not None
        page = self.session.board
        if self._daily_ask is None or page is None or page.kind != "daily":
            return
        self._daily_ask = None
        par = f", par {page.par} moves" if page.par is not None else ""
        if streak := streak_text(self.session.standing):
            par += f"; your {streak}"
        if page.you is None:
            question = (
                f"Today's daily deal ({page.date}{par}): your one attempt that counts on the"
                " leaderboard. Start now?"
            )
        else:
            question = (
                f"Today's daily deal ({page.date}{par}): you have played the attempt that"
                " counts; this one is practice. Start now?"
            )

        def answered(yes: bool | None) -> None:
            if yes:
                self.client.send(Daily())

        self.app.push_screen(ConfirmScreen(question), answered)

    def action_boards(self) -> None:
        self.app.push_screen(LeaderboardScreen())

    # -- issue 29: the archive, the deck, the countdown --------------------------------------

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick_next_daily)

    def _tick_next_daily(self) -> None:
        for widget in self.query(NextDaily):
            widget.refresh()

    def action_archive(self) -> None:
        """``a``: play the typed past day from the archive (practice, docs/protocol.md
        4.28); with no day typed yet, the box takes the focus."""
        field = self.query_one("#archive-date", Input)
        date = archive_date(field.value)
        if date is None:
            field.focus()
            self.session.say("type a past day as YYYY-MM-DD, then Enter")
            self.client.sync()
            return
        self.client.send(Daily(date=date))

    def action_four_colour(self) -> None:
        self.session.four_colour = not self.session.four_colour
        on_off = "on" if self.session.four_colour else "off"
        self.session.say(f"four-colour deck {on_off} (♦ blue, ♣ green)")
        self.client.deck_changed()

    def action_suit_letters(self) -> None:
        self.session.suit_letters = not self.session.suit_letters
        on_off = "on" if self.session.suit_letters else "off"
        self.session.say(f"suits as letters (S H D C) {on_off}")
        self.client.deck_changed()

    @on(Input.Submitted, "#archive-date")
    def _submitted_archive(self) -> None:
        self.action_archive()

    def action_name_link(self) -> None:
        self.app.push_screen(NameLinkScreen())

    def action_history(self) -> None:
        self.app.push_screen(HistoryScreen())

    def action_player(self) -> None:
        if self.session.me is not None:
            open_player(self, self.session.me)

    def action_quit(self) -> None:
        self.app.exit()

    def action_unfocus(self) -> None:
        self.query_one("#create", Button).focus()

    def on_screen_resume(self) -> None:
        """Back from a room or the results: the keys are shortcuts again (Textual would give
        focus back to the last text box, where ``d`` types a "d"), and the room just left
        is no longer in the room code box."""
        super().on_screen_resume()
        self.query_one("#room-code", Input).value = ""
        self.query_one("#archive-date", Input).value = ""
        self.action_unfocus()

    @on(Input.Submitted, "#room-code")
    def _submitted_room(self) -> None:
        self.action_join()

    @on(Input.Submitted, "#code")
    def _submitted_code(self) -> None:
        self.action_create()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        action = {
            "quick": self.action_quick,
            "create": self.action_create,
            "join": self.action_join,
            "watch": self.action_watch,
            "daily": self.action_daily,
            "boards": self.action_boards,
            "history": self.action_history,
            "quit": self.action_quit,
            "archive": self.action_archive,
        }.get(event.button.id or "")
        if action is not None:
            action()


# -- room ----------------------------------------------------------------------------------


class RoomScreen(Base):
    """Who is in, who is ready; the host starts; the countdown."""

    AUTO_FOCUS = ""  # keys, not a focused button: space must never start a race
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "ready", "ready"),
        Binding("s", "start", "start"),
        Binding("m", "rematch", "rematch"),
        Binding("c", "copy_link", "copy the invite link"),
        Binding("l", "leave", "leave"),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Title("room")
        with Vertical(id="room-body"):
            yield RoomView()
            yield Static("", id="room-note")
            yield Digits("", id="countdown")
            with Horizontal(classes="row", id="room-buttons"):
                yield Button("Ready (space)", compact=True, variant="success", id="ready")
                yield Button("Start (s)", compact=True, variant="primary", id="start")
                yield Button("Leave (l)", compact=True, id="leave")
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def hints(self) -> str:
        room = self.session.room
        if room is None:
            return ""
        copy = "c copy link · " if room_invite(self.client) is not None else ""
        if self.session.may_rematch:
            return f"m rematch · {copy}l leave · ? help · q quit"
        if room.you == "spectator" or room.state == "countdown":
            return f"{copy}l leave · ? help · q quit"
        if self.session.is_host:
            return f"s start · {copy}l leave · ? help · q quit"
        if room.state == "finished":
            return f"{copy}l leave · ? help · q quit"
        return f"space ready · {copy}l leave · ? help · q quit"

    def _me_ready(self) -> bool:
        room, me = self.session.room, self.session.me
        if room is None:
            return False
        return any(p.name == me and p.ready for p in room.players)

    def refresh_view(self) -> None:
        super().refresh_view()
        room = self.session.room
        if room is None:
            return
        try:
            ready = self.query_one("#ready", Button)
            start = self.query_one("#start", Button)
            note = self.query_one("#room-note", Static)
        except NoMatches:  # not mounted yet
            return
        player = room.you == "player"
        lobby = room.state == "lobby"
        ready.display = player and lobby and not self.session.is_host
        label = "Not ready (space)" if self._me_ready() else "Ready (space)"
        if str(ready.label) != label:
            ready.label = label
            ready.refresh(layout=True)
        start.display = player and lobby and self.session.is_host
        note.update(self._note())
        self._tick()

    def _note(self) -> Text:
        session = self.session
        room = session.room
        assert room is not None
        text = Text()
        if room.state == "countdown":
            text.append("Get ready: the race starts in", style="bold #5fd75f")
        elif room.state == "finished" and session.may_rematch:
            text.append("The race is over: m asks for a rematch (a new deal)", style="#8a8a8a")
        elif room.state == "finished":
            text.append("The race is over; any of its players may ask for a rematch", "#8a8a8a")
        elif room.you == "spectator":
            text.append(f"You watch; {room.host} starts the race", style="#8a8a8a")
        elif session.is_host:
            waiting = [p.name for p in room.players if not p.ready]
            if waiting:
                text.append(f"Waiting for {', '.join(waiting)} to be ready", style="#d7af00")
            else:
                text.append("Everyone is ready: press s to start", style="bold #5fd75f")
                if len(room.players) == 1 and room.max_players > 1:
                    text.append(" (a race alone is fine)", style="#8a8a8a")
            if room.max_players > 1:  # a practice room (a ghost's) takes nobody else
                text.append(
                    f"\nOthers join with the room code {room.room} or the invite link above",
                    style="#8a8a8a",
                )
        else:
            text.append(f"{room.host} starts the race when everyone is ready", style="#8a8a8a")
        return text

    def _tick(self) -> None:
        left = self.session.countdown_left(self.client.clock())
        try:
            digits = self.query_one("#countdown", Digits)
        except NoMatches:  # not mounted yet
            return
        digits.display = left is not None
        if left is not None:
            digits.update(str(max(1, math.ceil(left))))

    def action_ready(self) -> None:
        room = self.session.room
        if room is None or room.you != "player" or self.session.is_host or room.state != "lobby":
            return
        self.client.send(Ready(not self._me_ready()))

    def action_start(self) -> None:
        if self.session.is_host:
            self.client.send(Start())

    def action_rematch(self) -> None:
        if self.session.may_rematch:
            self.client.send(Rematch())

    def action_leave(self) -> None:
        self.client.send(Leave())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        {"ready": self.action_ready, "start": self.action_start, "leave": self.action_leave}.get(
            event.button.id or "", lambda: None
        )()


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
    """Open ``name``'s page over ``screen`` (client/player.py imports the screens)."""
    from .player import PlayerScreen

    screen.app.push_screen(PlayerScreen(name))


PICK_BINDINGS: list[BindingType] = [
    Binding("up", "pick(-1)", "previous run", show=False),
    Binding("down", "pick(1)", "next run", show=False),
    Binding("v", "replay", "replay"),
    Binding("p", "player", "player's page", show=False),
]


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
        text = Text(f"\n Room {state.room} is closed", style="bold")
        text.append(": everyone left it (or it was a private practice room).\n")
        last = state.last_race
        if last is None:
            text.append(" It has no stored race to show.", style="#8a8a8a")
            text.append("\n Esc goes to the lobby: start a room of your own, or join another.\n")
            return text
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


# -- leaderboards --------------------------------------------------------------------------


def _players(n: int) -> str:
    return f"{n} player" if n == 1 else f"{n} players"


class BoardTable(Live):
    """One page of a leaderboard, with my own row marked (and shown below if off the page)."""

    DEFAULT_CSS = """
    BoardTable { height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        session = self.session
        page = session.board
        screen = self.screen
        if page is None or not isinstance(screen, LeaderboardScreen) or not screen.matches(page):
            return Text("loading…", style="#8a8a8a")
        if not page.rows:
            return Text("nobody on this board yet", style="#8a8a8a")
        table = Table(box=None, pad_edge=False, header_style="bold #8a8a8a")
        for name, justify in (
            ("#", "right"),
            ("player", "left"),
            ("outcome", "left"),
            ("time", "right"),
            ("moves", "right"),
            ("score", "right"),
            ("cards", "right"),
            ("undos", "right"),
            *board_standing_columns(page),
        ):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        you = page.you
        picked = screen.selected
        for i, row in enumerate(page.rows):
            mine = you is not None and row.name == you.name and row.rank == you.rank
            style = "bold #5fafff" if mine else ""
            table.add_row(*self._cells(row), style=style + (" reverse" if i == picked else ""))
        if you is not None and you not in page.rows:
            table.add_row("", "...", *[""] * (len(table.columns) - 2))
            last = " reverse" if picked == len(page.rows) else ""
            table.add_row(*self._cells(you), style="bold #5fafff" + last)
        return table

    def _cells(self, r: BoardRow) -> list[RenderableType]:
        page = self.session.board
        extra = board_standing_cells(r, page) if page is not None else []
        return [str(r.rank), r.name, outcome_cell(r.outcome), *_run_cells(r), *extra]


def board_standing_columns(page: BoardPage) -> list[tuple[str, str]]:
    """A board's rating column (and a daily board's streak column), when any row has one
    (docs/protocol.md 4.27; an older server sends neither)."""
    rows = [*page.rows, *([page.you] if page.you else [])]
    cols = [("rating", "right")] if any(r.rating is not None for r in rows) else []
    if page.kind == "daily" and any(r.streak for r in rows):
        cols.append(("streak", "right"))
    return cols


def board_standing_cells(r: BoardRow, page: BoardPage) -> list[RenderableType]:
    names = [name for name, _ in board_standing_columns(page)]
    cells: list[RenderableType] = []
    if "rating" in names:
        cells.append(rating_text(r.rating, False))
    if "streak" in names:
        cells.append(str(r.streak or ""))
    return cells


def _run_cells(r: BoardRow | HistoryRow) -> list[RenderableType]:
    """The figures of one run, the same columns on a board and in the history."""
    return [format_ms(r.time_ms), str(r.moves), str(r.score), f"{r.foundations}/52", str(r.undos)]


class LeaderboardScreen(RunPicker):
    """Today's daily board (with my row), earlier days, and any game code's board."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "day(-1)", "previous day"),
        Binding("right", "day(1)", "next day"),
        Binding("t", "today", "today"),
        Binding("c", "code", "game code"),
        Binding("y", "mine", "your row"),
        Binding("r", "race", "race the run"),
        Binding("a", "archive", "archive board"),
        Binding("p", "play_day", "play this day"),
        Binding("pagedown", "page(1)", "next page", show=False),
        Binding("pageup", "page(-1)", "previous page", show=False),
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("question_mark", "help", "help"),
        *PICK_BINDINGS,
    ]

    def __init__(
        self, *, date: str | None = None, code: str | None = None, archive: bool = False
    ) -> None:
        super().__init__()
        self.kind = "deal" if code else "archive" if archive and date else "daily"
        self.date: str | None = date
        self.code: str | None = code
        self.page_offset = 0
        self.around = False
        #: Today (UTC, as the server counts days): by this clock, until a reply says.
        self.today: str | None = dt.datetime.now(dt.UTC).date().isoformat()

    def compose(self) -> ComposeResult:
        yield Title("leaderboards")
        yield Static("", id="board-head")
        yield NextDaily()
        with Horizontal(id="code-row", classes="row"):
            yield Label("Game code", classes="label")
            yield Input(placeholder="YU1-C-AAAAAAB, then Enter", compact=True, id="board-code")
        yield BoardTable()
        yield StatusLine()
        yield Hints()

    def hints(self) -> str:
        if self.kind != "deal":
            return (
                "← → day · t today · a archive · p play day · y you · c code · PgUp PgDn"
                " · ↑↓ v replay · r race · esc back"
            )
        return (
            "t today's board · y you · c other code · PgUp PgDn · ↑↓ v replay · r race · esc back"
        )

    def runs(self) -> list[tuple[str | None, str]]:
        page = self.session.board
        if page is None or not self.matches(page):
            return []
        rows = list(page.rows)
        if page.you is not None and page.you not in page.rows:
            rows.append(page.you)
        return [(r.race, r.name) for r in rows]

    def mine(self) -> int:
        page = self.session.board
        you = page.you if page is not None else None
        return next((i for i, (_, n) in enumerate(self.runs()) if you and n == you.name), 0)

    def on_mount(self) -> None:
        self.query_one("#code-row").display = False
        self.ask()
        self.set_interval(1.0, lambda: self.query_one(NextDaily).refresh())

    def page_size(self) -> int:
        return max(5, self.size.height - 8) if self.size.height else 14

    def matches(self, page: BoardPage | None) -> bool:
        """Is ``page`` the answer to what this screen shows?"""
        if page is None or page.kind != self.kind:
            return False
        if self.kind != "deal":
            return self.date is None or page.date == self.date
        return page.code is not None and self.code is not None and page.code == self.code

    def ask(self) -> None:
        where = {"date": self.date} if self.kind != "deal" else {"code": self.code}
        limit = self.page_size()
        self.client.send(
            Board(self.kind, offset=self.page_offset, limit=limit, around=self.around, **where)
        )
        self.around = False

    def refresh_view(self) -> None:
        page = self.session.board
        if page is not None and self.matches(page):
            if self.kind == "daily" and self.date is None:
                self.date = self.today = page.date  # the server's today
            self.page_offset = page.offset  # (a page around my row starts where it starts)
        super().refresh_view()
        try:
            head = self.query_one("#board-head", Static)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head())

    def _head(self) -> Text:
        page = self.session.board
        text = Text(" ")
        if self.kind == "daily":
            text.append(f"Daily deal {self.date or 'today'}", style="bold")
            if self.date is not None and self.date == self.today:
                text.append(" (today)", style="bold")
            if page is not None and self.matches(page):
                text.append(f" · {_players(page.total)}", style="#8a8a8a")
                if page.par is not None:
                    text.append(f" · par {page.par}", style="#8a8a8a")
                if page.code:
                    text.append(f" · {page.code}", style="#8a8a8a")
                else:
                    text.append(" · code secret today", style="#8a8a8a")
        elif self.kind == "archive":
            text.append(f"Archive of {self.date}: best practice runs", style="bold")
            if page is not None and self.matches(page):
                text.append(f" · {_players(page.total)}", style="#8a8a8a")
                if page.code:
                    text.append(f" · {page.code}", style="#8a8a8a")
                else:
                    text.append(" · not in the archive yet", style="#8a8a8a")
        else:
            text.append(f"Game code {self.code}", style="bold")
            if page is not None and self.matches(page):
                text.append(f" · {_players(page.total)}", style="#8a8a8a")
        return text

    def action_archive(self) -> None:
        """``a``: this day's archive board (its practice runs from the archive), or back to
        its daily board (docs/protocol.md 4.28)."""
        if self.kind == "deal":
            return
        if self.date is None:
            self.date = self.today
        self.kind = "daily" if self.kind == "archive" else "archive"
        self.page_offset = 0
        self.ask()
        self.refresh_view()

    def action_play_day(self) -> None:
        """``p``: play this day's deal from the archive, as practice."""
        if self.kind != "deal" and self.date is not None:
            self.client.send(Daily(date=self.date))

    def _shift(self, days: int) -> None:
        base = dt.date.fromisoformat(self.date) if self.date else dt.datetime.now(dt.UTC).date()
        self.date = (base + dt.timedelta(days=days)).isoformat()

    def action_day(self, days: int) -> None:
        if self.kind == "deal":
            return
        self._shift(days)
        self.page_offset = 0
        self.ask()
        self.refresh_view()

    def action_today(self) -> None:
        self.kind, self.date, self.code, self.page_offset = "daily", None, None, 0
        self.ask()
        self.refresh_view()

    def action_page(self, pages: int) -> None:
        page = self.session.board
        total = page.total if page is not None and self.matches(page) else 0
        offset = max(0, self.page_offset + pages * self.page_size())
        if offset != self.page_offset and (pages < 0 or offset < total):
            self.page_offset = offset
            self.ask()

    def action_mine(self) -> None:
        self.around = True
        self.ask()

    def action_code(self) -> None:
        row = self.query_one("#code-row")
        row.display = True
        self.query_one("#board-code", Input).focus()

    def action_back(self) -> None:
        field = self.query_one("#board-code", Input)
        if field.has_focus:
            self.query_one("#code-row").display = False
            self.set_focus(None)
            return
        self.dismiss()

    @on(Input.Submitted, "#board-code")
    def _code(self, event: Input.Submitted) -> None:
        try:
            code = str(GameCode.parse(event.value))
        except InvalidCodeError as exc:
            self.session.say(f"game code: {exc}", "error")
            self.client.sync()
            return
        self.kind, self.code, self.page_offset = "deal", code, 0
        self.query_one("#code-row").display = False
        self.set_focus(None)
        self.ask()
        self.refresh_view()


# -- history -------------------------------------------------------------------------------


def _races(n: int) -> str:
    return f"{n} race" if n == 1 else f"{n} races"


class HistoryTable(Live):
    """One page of my own results, newest first."""

    DEFAULT_CSS = """
    HistoryTable { height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        page = self.session.history
        screen = self.screen
        if page is None or not isinstance(screen, HistoryScreen) or not screen.asked:
            return Text("loading…", style="#8a8a8a")
        if not page.rows:
            return Text("no races yet" if page.offset == 0 else "no more races", style="#8a8a8a")
        # Nine columns in 76: one space between them, the day without its year.
        table = Table(box=None, pad_edge=False, collapse_padding=True, header_style="bold #8a8a8a")
        for name, justify in (
            ("when", "left"),
            ("race", "left"),
            ("rank", "right"),
            ("outcome", "left"),
            ("time", "right"),
            ("moves", "right"),
            ("score", "right"),
            ("cards", "right"),
            ("undos", "right"),
        ):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        for i, row in enumerate(page.rows):
            table.add_row(*self._cells(row), style="reverse" if i == screen.selected else "")
        return table

    @staticmethod
    def _cells(r: HistoryRow) -> list[RenderableType]:
        when = dt.datetime.fromtimestamp(r.finished_ms / 1000).strftime("%m-%d %H:%M")
        if r.date is not None:  # the day is the daily's (UTC), "when" the local clock's
            race = "daily practice" if r.practice else f"daily {r.date[5:]}"
        else:
            race = f"room {r.room}" if r.room else "a race"
        outcome = outcome_cell(r.outcome)
        if r.hinted:
            outcome.append(" (h)", style="#87d7ff")
        return [when, race, f"{r.rank}/{r.players}", outcome, *_run_cells(r)]


class HistoryScreen(RunPicker):
    """My results, newest first, with my totals; from the lobby and the results."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pagedown", "page(1)", "next page"),
        Binding("pageup", "page(-1)", "previous page"),
        Binding("right", "page(1)", "next page", show=False),
        Binding("left", "page(-1)", "previous page", show=False),
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("question_mark", "help", "help"),
        *PICK_BINDINGS,
    ]
    HINTS = "PgUp PgDn page (or ← →) · ↑↓ v replay · esc back · (h): a hinted run"

    def runs(self) -> list[tuple[str | None, str]]:
        page = self.session.history
        me = self.session.me or ""
        return [(r.race, me) for r in page.rows] if page is not None and self.asked else []

    def mine(self) -> int:
        return 0

    def __init__(self) -> None:
        super().__init__()
        self.page_offset = 0
        #: A page was asked for since this screen opened (an older one is not shown).
        self.asked = False

    def compose(self) -> ComposeResult:
        yield Title("history")
        yield Static("", id="history-head")
        yield HistoryTable()
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.session.history = None
        self.ask()

    def page_size(self) -> int:
        return max(5, min(50, self.size.height - 7)) if self.size.height else 14

    def ask(self) -> None:
        self.asked = True
        self.client.send(History(offset=self.page_offset, limit=self.page_size()))

    def refresh_view(self) -> None:
        super().refresh_view()
        try:
            head = self.query_one("#history-head", Static)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head(self.session.history))

    def _head(self, page: HistoryPage | None) -> Text:
        text = Text(" Your races", style="bold")
        if page is None:
            return text
        text.append(f" · {_races(page.games)} · {page.wins} won", style="#8a8a8a")
        if page.best_time_ms is not None:
            text.append(f" · best {format_ms(page.best_time_ms)}", style="#8a8a8a")
        if page.games > len(page.rows):
            last = min(page.games, page.offset + len(page.rows))
            text.append(f" · {page.offset + 1}-{last} of {page.games}", style="#8a8a8a")
        return text

    def action_page(self, pages: int) -> None:
        page = self.session.history
        total = page.games if page is not None else 0
        offset = max(0, self.page_offset + pages * self.page_size())
        if offset != self.page_offset and (pages < 0 or offset < total):
            self.page_offset = offset
            self.ask()

    def action_back(self) -> None:
        self.dismiss()


# -- replay --------------------------------------------------------------------------------


class ReplayBoard(BoardView):
    """The board of a replay: the position its screen is at, read-only."""

    def board(self) -> RaceBoard | None:
        screen = self.screen
        return screen.position() if isinstance(screen, ReplayScreen) else None


class MoveList(Live):
    """The run's actions around the one shown, numbered, the current one highlighted;
    for a won run the wasted moves are dimmed."""

    DEFAULT_CSS = """
    MoveList { width: 16; height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        screen = self.screen
        run = self.session.replay
        if not isinstance(screen, ReplayScreen) or run is None or not run.complete:
            return Text("")
        pm = self.session.postmortem(run.race, run.player)
        wasted = set(pm.wasted) if isinstance(pm, PostMortemAnswer) else set()
        rows = max(1, self.size.height)
        first = max(0, min(screen.k - rows // 2, run.total - rows))
        text = Text(no_wrap=True, overflow="ellipsis")
        for i in range(first + 1, min(run.total, first + rows) + 1):
            style = "reverse bold" if i == screen.k else "#6c6c6c strike" if i in wasted else ""
            text.append(f"{i:>3} {run.actions[i - 1][1]}\n", style=style)
        return text


class ReplayScreen(Base):
    """One run of a finished race, step by step (docs/protocol.md 4.22): forward, back, to
    the start, the end or a move number, or played at 1x, 4x or 16x with its real timing;
    the clock and move count at that point, the move list, the post-mortem, the link."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "forward"),
        Binding("left", "step(-1)", "back"),
        Binding("home", "to(0)", "start"),
        Binding("end", "to(-1)", "end"),
        Binding("space", "play", "play/pause"),
        Binding("s", "speed", "speed"),
        Binding("g", "goto", "go to a move"),
        Binding("j", "losing", "the losing move"),
        Binding("c", "copy_link", "copy the link"),
        Binding("r", "race", "race this run"),
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("question_mark", "help", "help"),
    ]

    def __init__(self, race: str, player: str) -> None:
        super().__init__()
        self.race_id = race
        self.player = player
        #: How many actions are played in the position shown.
        self.k = 0
        #: Playing: the run's clock (ms) and the app's clock (s) when it was read.
        self.playing: tuple[float, float] | None = None
        self.rate = SPEEDS[0]
        self._shown: tuple[int, RaceBoard] | None = None

    def compose(self) -> ComposeResult:
        yield Title("replay")
        yield Static("", id="replay-head")
        with Horizontal(id="replay-body"):
            yield ReplayBoard(id="board")
            yield MoveList(id="replay-moves")
        yield Static("", id="replay-pm")
        with Horizontal(id="jump-row", classes="row"):
            yield Label("Move number", classes="label")
            yield Input(placeholder="0 to the last, then Enter", compact=True, id="replay-jump")
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.query_one("#jump-row").display = False
        self.client.send(*self.session.open_replay(self.race_id, self.player))
        self.set_interval(0.05, self._tick)

    def hints(self) -> str:
        return (
            "← → step · Home End · space play · s speed · g move · j losing · c link · r race · esc"
        )

    def run(self) -> ReplayRun | None:
        run = self.session.replay
        return run if run is not None and run.race == self.race_id and run.complete else None

    def link(self) -> str | None:
        try:
            return replay_link(self.client.url, self.race_id, self.player)
        except ValueError:
            return None

    def position(self) -> RaceBoard | None:
        """The position shown, as a board (the runner's view), with what would have
        kept a win lit at the position before the losing move."""
        run = self.run()
        if run is None:
            return None
        if self._shown is None or self._shown[0] != self.k:
            board = RaceBoard(run.race_at(self.k), 0.0, ascii=self.session.ascii)
            self._shown = (self.k, board)
        board = self._shown[1]
        pm = self.session.postmortem(run.race, run.player)
        lost = isinstance(pm, PostMortemAnswer) and pm.status == "lost"
        board.hint = pm.line[0] if lost and self.k == pm.last_winnable else None  # type: ignore[union-attr]
        return board

    def refresh_view(self) -> None:
        super().refresh_view()
        try:
            head = self.query_one("#replay-head", Static)
            pm = self.query_one("#replay-pm", Static)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head())
        pm.update(self._postmortem())

    def _head(self) -> Text:
        run = self.session.replay
        text = Text(" ")
        if run is None or run.race != self.race_id:
            return text
        if run.refused is not None:
            text.append(f"{self.player}'s run: {run.refused}", style="bold #ff5f5f")
            return text
        page = run.page
        if page is None or not run.complete:
            text.append(f"loading {self.player}'s run…", style="#8a8a8a")
            return text
        text.append(f"{page.player}'s run", style="bold")
        if page.date is not None:
            text.append(f" · daily {page.date}" + (" (practice)" if page.practice else ""))
        elif page.room is not None:
            text.append(f" · room {page.room}")
        text.append(f" · #{page.rank} of {len(page.players)} · {page.outcome}")
        text.append(f" at {format_ms(page.time_ms)} · {page.code}", style="#8a8a8a")
        game = run.games[self.k]
        ms = self.playing[0] if self.playing is not None else run.time_at(self.k)
        text.append(f"\n {format_ms(int(ms))}", style="bold")
        text.append(f"  move {self.k} of {run.total} · {run.counts[self.k]} moves")
        text.append(f" · {game.cards_on_foundations}/52 cards")
        last = run.actions[self.k - 1][1] if self.k else None
        what = "the deal" if last is None else "undo" if last == "undo" else last
        text.append(f" · {what}", style="bold")
        state = f"playing {self.rate}x" if self.playing is not None else f"paused · {self.rate}x"
        text.append(f" · {state}", style="#8a8a8a")
        link = self.link()
        if link is not None:
            text.append(f"\n Link: {link}", style="#8a8a8a")
        return text

    def _postmortem(self) -> Text:
        run = self.run()
        if run is None:
            return Text("")
        pm = self.session.postmortem(run.race, run.player)
        text = Text(" Post-mortem: ", style="bold")
        if pm is None:
            text.append("working it out…", style="#8a8a8a")
        elif isinstance(pm, str):
            text.append(pm.removeprefix("post-mortem: "), style="#d7af00")
        else:
            text.append(postmortem_text(pm))
        return text

    def go(self, k: int) -> None:
        run = self.run()
        if run is None:
            return
        self.k = max(0, min(run.total, k))
        if self.playing is not None and self.k >= run.total:
            self.playing = None
        self.client.sync()

    def _tick(self) -> None:
        run = self.run()
        if self.playing is None or run is None:
            return
        now = self.client.clock()
        clock_ms = self.playing[0] + (now - self.playing[1]) * 1000 * self.rate
        self.playing = (clock_ms, now)
        self.k = run.due(clock_ms)
        if self.k >= run.total:
            self.k, self.playing = run.total, None
        self.client.sync()

    def action_step(self, delta: int) -> None:
        self.playing = None
        self.go(self.k + delta)

    def action_to(self, k: int) -> None:
        run = self.run()
        self.playing = None
        self.go(run.total if k < 0 and run is not None else k)

    def action_play(self) -> None:
        run = self.run()
        if run is None:
            return
        if self.playing is not None:
            self.playing = None
        else:
            if self.k >= run.total:
                self.k = 0
            self.playing = (float(run.time_at(self.k)), self.client.clock())
        self.client.sync()

    def action_speed(self) -> None:
        if self.playing is not None:  # the time so far at the old speed
            self._tick()
        self.rate = SPEEDS[(SPEEDS.index(self.rate) + 1) % len(SPEEDS)]
        self.client.sync()

    def action_losing(self) -> None:
        run = self.run()
        pm = self.session.postmortem(run.race, run.player) if run is not None else None
        if (
            isinstance(pm, PostMortemAnswer)
            and pm.status == "lost"
            and pm.last_winnable is not None
        ):
            self.playing = None
            self.go(pm.last_winnable)

    def action_goto(self) -> None:
        self.query_one("#jump-row").display = True
        self.query_one("#replay-jump", Input).focus()

    def action_race(self) -> None:
        """r: race this run as a ghost (docs/protocol.md 4.23): its room replaces the
        replay, or the server says why not (a run of today's daily before one's own)."""
        self.client.send(Ghost(self.race_id, self.player))

    def action_copy_link(self) -> None:
        link = self.link()
        if link is None:
            return
        self.app.copy_to_clipboard(link)
        self.session.say(f"copied the replay's link, if the terminal allows it: {link}")
        self.client.sync()

    def action_back(self) -> None:
        field = self.query_one("#replay-jump", Input)
        if field.has_focus:
            self.query_one("#jump-row").display = False
            self.set_focus(None)
            return
        self.session.close_replay()
        self.dismiss()

    @on(Input.Submitted, "#replay-jump")
    def _jump(self, event: Input.Submitted) -> None:
        self.query_one("#jump-row").display = False
        self.set_focus(None)
        try:
            k = int(event.value)
        except ValueError:
            self.session.say(f"move number: {event.value!r} is not a number", "error")
            self.client.sync()
            return
        self.playing = None
        self.go(k)


# -- dialogs -------------------------------------------------------------------------------

HELP = """\
[b]Racing[/b]
  [b]1[/b]-[b]7[/b]      pick the exposed card of a column; with a card picked,
           drop it (and the cards on it) on that column
  [b]↑ ↓[/b]      a deeper / higher face-up card (or the column key again)
  [b]f[/b]        the picked card to its foundation
  [b]Enter[/b]    tap: the picked card to its foundation;
           twice quickly: to the longest column that takes it
  [b]Esc[/b] put the card back  [b]u[/b] undo  [b]r[/b] resign  [b]a[/b] finish (all cards face up)
  [b]h[/b]        a hint, in a room that gives them: the next move of a
           winning line (a win with hints ranks after those without)
  Mouse: click a card, then where it goes (legal places light up green);
  click a picked card to tap it.
[b]Everywhere[/b]
  [b]?[/b] this help  [b]l[/b] leave the room / to the lobby  [b]q[/b] quit (asks mid-race)
  [b]m[/b] a finished room's rematch (anyone)  [b]i[/b] lobby: your name's link
  [b]a[/b] lobby: a past day's daily (archive)  [b]f[/b] four colours  [b]s[/b] suits S H D C
  [b]c[/b]        in a room or watching: copy the room's invite link (others
           open it in a browser, or run yukon play LINK)
  [b]↑ ↓ v[/b]    results, boards, history: choose a run and replay it: [b]← →[/b] step
           [b]Home End g[/b]o to  [b]space[/b] play  [b]s[/b]peed  [b]j[/b] losing  [b]c[/b] link
  [b]r[/b]        a run (results, boards, a replay): race it, its ghost alongside

[dim]Esc or ? closes this help[/dim]"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close"),
        Binding("question_mark", "close", "close"),
        Binding("q", "close", "close", show=False),
    ]

    def compose(self) -> ComposeResult:
        text = HELP
        if host(self).session.ascii:
            text = text.replace("↑ ↓", "up down")
        with Container(id="help-box") as box:
            box.border_title = "Keys"
            yield Static(text, markup=True)

    def action_close(self) -> None:
        self.dismiss()


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: y or Enter says yes, n or Esc no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Container(id="confirm-box"):
            yield Static(Text(self.question, style="bold"), id="question")
            with Horizontal(classes="row"):
                yield Button("Yes (y)", compact=True, variant="error", id="yes")
                yield Button("No (n)", compact=True, id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class _AskScreen(ModalScreen[str]):
    """A box that asks for one line before anything else can happen (a name, a password):
    the problem that brought it up, what to type and why, and Esc to quit."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "quit", "quit")]
    #: The box's title, the input's id (the problem line's is ``<FIELD>-problem``), what
    #: the box explains once, and how the input looks.
    BOX_TITLE: ClassVar[str]
    FIELD: ClassVar[str]
    EXPLAIN: ClassVar[str]
    PLACEHOLDER: ClassVar[str]
    SECRET: ClassVar[bool] = False
    MAX_LENGTH: ClassVar[int] = 0

    def __init__(self, where: str, problem: str) -> None:
        super().__init__()
        self.where = where
        self.problem = problem

    def compose(self) -> ComposeResult:
        with Container(id="name-box") as box:
            box.border_title = self.BOX_TITLE
            yield Static(Text(self.problem, style="bold #d7af00"), id=f"{self.FIELD}-problem")
            yield Static(self.EXPLAIN)
            yield Input(
                placeholder=self.PLACEHOLDER,
                password=self.SECRET,
                max_length=self.MAX_LENGTH,
                id=self.FIELD,
            )
            yield Static(Text("Esc quits", style="#8a8a8a"))

    def action_quit(self) -> None:
        self.app.exit()

    def accept(self, value: str) -> str | None:
        """What the typed line gives, or None to keep asking."""
        return value or None

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.input.id == self.FIELD and (value := self.accept(event.value)):
            self.dismiss(value)


class NameScreen(_AskScreen):
    """The first time on a server (or when a name is refused): choose a name. The limit
    is said as the player types (a counter, and a word when it is reached: the box takes
    no more), and a name the server would refuse (blank, say) is refused here, saying why."""

    BOX_TITLE = "Your name"
    FIELD = "name"
    # The problem line says where and why: this says the rest once.
    EXPLAIN = (
        f"Others see this name (1-{MAX_NAME} characters). It is yours from now on:"
        " the next start needs no name. Yours already, on another device? Run"
        " yukon play with that name's link (its lobby's i shows it)."
    )
    PLACEHOLDER = "name, then Enter"
    MAX_LENGTH = MAX_NAME

    def on_mount(self) -> None:
        box = self.query_one("#name-box")
        box.mount(Static(self._count(""), id="name-count"), after=self.query_one("#name"))

    @staticmethod
    def _count(value: str) -> Text:
        n = len(value)
        if n >= MAX_NAME:  # the box takes no more: say so, rather than drop keys silently
            return Text(
                f"{n}/{MAX_NAME}: a name is at most {MAX_NAME} characters", style="bold #d7af00"
            )
        return Text(f"{n}/{MAX_NAME} characters", style="#8a8a8a")

    @on(Input.Changed, "#name")
    def _typed(self, event: Input.Changed) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#name-count", Static).update(self._count(event.value))

    def accept(self, value: str) -> str | None:
        if not value.strip():
            problem = "a name cannot be blank: type at least one character, then Enter"
        else:
            try:
                return normalize_name(value)
            except ValueError as exc:
                problem = f"that name will not do: {exc}"
        self.query_one("#name-problem", Static).update(Text(problem, style="bold #ff5f5f"))
        return None


class NameLinkScreen(ModalScreen[None]):
    """``i`` in the lobby: this name's link, to use the name on another device (the token
    in the link's fragment, docs/protocol.md 4.2); ``c`` copies it. Anyone with the link
    is this player, which the screen says plainly."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "copy"),
        Binding("escape", "close", "close"),
        Binding("q", "close", "close", show=False),
        Binding("i", "close", "close", show=False),
    ]

    def link(self) -> str | None:
        client = host(self)
        token = client.session.token
        if token is None or client.where == LOCAL_WHERE:
            return None
        try:
            return name_link(client.url, token)
        except ValueError:
            return None

    def compose(self) -> ComposeResult:
        client = host(self)
        link = self.link()
        with Container(id="link-box") as box:
            box.border_title = "Your name on another device"
            if link is None:
                why = (
                    "your own server (--local) has no address another device could use"
                    if client.where == LOCAL_WHERE
                    else "not connected yet: the server has not said who you are"
                )
                yield Static(Text(f"No link: {why}.", style="bold #d7af00"))
            else:
                yield Static(
                    f"To race as {client.session.me} on another device, open this link there"
                    " in a browser, or run yukon play LINK:"
                )
                yield Static(Text(link, style="bold #87d7ff"), id="name-link")
                yield Static(
                    Text(
                        "Anyone with this link plays as you: keep it to yourself.",
                        style="bold #ff5f5f",
                    )
                )
            yield Static(Text("c copies it · Esc closes", style="#8a8a8a"))

    def action_copy(self) -> None:
        link = self.link()
        if link is None:
            return
        self.app.copy_to_clipboard(link)
        client = host(self)
        client.session.say("copied your name's link, if the terminal allows it")
        client.sync()

    def action_close(self) -> None:
        self.dismiss()


class PasswordScreen(_AskScreen):
    """A private server, and this client has no password for it (or a wrong one)."""

    BOX_TITLE = "Password"
    FIELD = "password"
    EXPLAIN = (
        "Ask whoever runs it for the password. It is kept for this server:"
        " the next start needs it no more (or give --password)."
    )
    PLACEHOLDER = "password, then Enter"
    SECRET = True


class TrustScreen(ModalScreen[bool]):
    """A wss:// server whose certificate no authority vouches for, the first time: its
    fingerprint, to compare with the one its ``yukon serve`` logged. y trusts (and pins)
    it, n quits without a word sent to the server."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, where: str, problem: str, fingerprint: str) -> None:
        super().__init__()
        self.where = where
        self.problem = problem
        self.fingerprint = fingerprint

    def compose(self) -> ComposeResult:
        pairs = self.fingerprint.split(":")
        half = (len(pairs) + 1) // 2
        shown = ":".join(pairs[:half]) + ":\n" + ":".join(pairs[half:])
        with Container(id="name-box") as box:
            box.border_title = "A certificate to trust?"
            yield Static(Text(self.problem, style="bold #d7af00"))
            yield Static(Text("\nIts SHA-256 fingerprint:", style="#8a8a8a"))
            yield Static(Text(shown, style="bold"), id="fingerprint")
            yield Static(
                "\nCompare it with the one the server logged when it started (ask whoever"
                " runs it). Trust it on this server from now on? A later change is refused."
                " (Or start with --cafile.)"
            )
            with Horizontal(classes="row"):
                yield Button("Trust (y)", compact=True, variant="warning", id="yes")
                yield Button("Quit (n)", compact=True, id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class AlertScreen(ModalScreen[None]):
    """Something that stopped the client for good and must not go unread (a server's
    certificate changed): the whole text, whatever the width; any of Esc, q, Enter quits."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "quit", "quit"),
        Binding("q", "quit", "quit"),
        Binding("enter", "quit", "quit"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Container(id="name-box") as box:
            box.border_title = self.title_text
            yield Static(Text(self.text, style="bold #ff5f5f"))
            yield Static(Text("\nEsc quits", style="#8a8a8a"))

    def action_quit(self) -> None:
        self.app.exit(return_code=1, message=self.text)
