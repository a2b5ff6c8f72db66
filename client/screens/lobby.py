"""The lobby: make a room, join one by code, watch, the daily and its archive."""

from __future__ import annotations

from typing import ClassVar, cast

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Button, Input, Label, Select

from protocol import GameCode, InvalidCodeError
from protocol.messages import (
    Board,
    Create,
    Daily,
    Join,
    Watch,
)

from ..chrome import Base, Hints, Title
from ..dailydeck import NextDaily, archive_date
from ..invite import normalize_room
from ..quick import QuickInfo
from ..state import streak_text
from ..widgets import (
    StatusLine,
    TickBox,
)
from .dialogs import ConfirmScreen, NameLinkScreen
from .history import HistoryScreen
from .leaderboard import LeaderboardScreen
from .picker import open_player

VARIANTS = [
    ("C Classic", "C"),
    ("R Relaxed", "R"),
    ("S Russian", "S"),
    ("A Alaska", "A"),
    ("M Moosehide", "M"),
]
PLAYER_LIMITS = [(f"{n}", n) for n in range(2, 9)]
TIME_LIMITS = [("5 min", 300), ("10 min", 600), ("15 min", 900), ("30 min", 1800), ("60 min", 3600)]

# -- lobby ---------------------------------------------------------------------------------


class LobbyScreen(Base):
    """Create a room, join or watch one, play the daily deal, open the leaderboards."""

    AUTO_FOCUS = "#create"
    HINTS = (
        "r quick · n new · k code · j join · w watch · d daily · a archive · b boards"
        " · h history · p page · i link · f 4 colours · s letters · ? help · q quit"
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "quick", "quick race"),
        Binding("n", "create", "new room"),
        Binding("k", "game_code", "a game code for the new room"),
        Binding("j", "join", "join"),
        Binding("w", "watch", "watch"),
        Binding("d", "daily", "daily deal"),
        Binding("a", "archive", "a past day (archive)"),
        Binding("f", "four_colour", "four-colour deck"),
        Binding("s", "suit_letters", "suits as letters"),
        # b, not l: l leaves (a room, a race, the results) on every other screen.
        Binding("b", "boards", "leaderboards"),
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
                    # The placeholder names the key: the label's column has no room for it.
                    yield Input(placeholder="YU1-C-AAAAAAB  (k)", compact=True, id="code")
                with Horizontal(classes="row"):
                    yield Label("Options", classes="label")
                    yield TickBox("undo", value=True, compact=True, id="undo")
                    yield TickBox("hints", value=False, compact=True, id="hints")
                    yield TickBox("rated", value=False, compact=True, id="rated")
                    yield TickBox("by link only", value=False, compact=True, id="invite-only")
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
                    yield RoomCodeInput(
                        placeholder="K7WQM", max_length=16, compact=True, id="room-code"
                    )
                    yield Button("Join (j)", compact=True, id="join")
                    yield Button("Watch (w)", compact=True, id="watch")
            with Container(classes="box", id="alone-box") as box:
                box.border_title = "On your own"
                with Horizontal(classes="row"):
                    yield Button("Today's daily deal (d)", compact=True, id="daily")
                    yield Button("Leaderboards (b)", compact=True, id="boards")
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
        # Joinable only through the room's invite link, with its key (protocol 4.32).
        invite_only = self.query_one("#invite-only", TickBox).value
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
                invite_only=invite_only,
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
            invite_only=invite_only,
        )

    def _room_code(self) -> str | None:
        field = self.query_one("#room-code", Input)
        code = field.value.strip()
        if not code:
            field.focus()
            self.session.say("type the room code, then Enter: join it (or watch it, if racing)")
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

    def action_enter_room(self) -> None:
        """Enter on a room's code: join it, or watch it if it is racing or full (what the
        player meant: an invite link does the same), rather than a refusal."""
        code = self._room_code()
        if code is not None:
            self.client.join_or_watch(code)

    def action_game_code(self) -> None:
        """``k``: the new room's "or code" field, for a deal to race by its game code."""
        self.query_one("#code", Input).focus()
        self.session.say("type a game code (YU1-C-AAAAAAB), then Enter: a room on that deal")
        self.client.sync()

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
        try:
            quick = self.query_one("#quick", Button)
        except NoMatches:  # not composed yet: the link's first status can come before
            return
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
        # Nor the game code of the room just left: the next n deals a random deal again.
        self.query_one("#code", Input).value = ""
        self.action_unfocus()

    @on(Input.Submitted, "#room-code")
    def _submitted_room(self) -> None:
        self.action_enter_room()

    def on_key(self, event: events.Key) -> None:
        """Typing while a button (or a box, a list) has the focus goes into the field it
        most likely meant, rather than nowhere: the new room's code by its form, the room
        code by its buttons and everywhere else, the archive's day by its button. What
        goes is what codes and days are written with (capitals, digits, ``-``); the
        lobby's keys (n, j, w, ...) stay keys, and a lower-case letter that is none of
        them says so, rather than move the focus into a field where the keys stop."""
        focused = self.focused
        char = event.character
        if isinstance(focused, Input) or not event.is_printable or char is None:
            return
        if event.key in self._keys():
            return
        if char.islower():
            hint = "in the lobby the leaderboards are b (l leaves a room)" if char == "l" else ""
            self.session.say(hint or f"{char} is not a key here: ? lists the lobby's keys")
            self.client.sync()
            event.stop()
            return
        target = "#room-code"
        if focused is not None and focused.id == "archive":
            target = "#archive-date"
        elif focused is not None and any(a.id == "new-room" for a in focused.ancestors):
            target = "#code"
        field = self.query_one(target, Input)
        # Not all selected on focus (Textual's default): the next key would replace the
        # character just put in.
        field.select_on_focus = False
        field.focus()
        field.insert_text_at_cursor(char)
        event.stop()
        event.prevent_default()

    def _keys(self) -> set[str]:
        """The keys this screen (and the app) binds: those are never typed into a field."""
        keys = {b.key for b in self.BINDINGS if isinstance(b, Binding)}
        return keys | {"space", "question_mark"}

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


class RoomCodeInput(Input):
    """The lobby's room code field. A room code is five characters, so once the field
    holds one, ``j`` and ``w`` cannot be part of it: they join and watch, as the status
    line and the buttons say, instead of typing ``KRRSCw`` (issue 42). Before that they
    are letters like any other (J and W are in room codes)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.character in ("j", "w") and normalize_room(self.value) is not None:
            screen = self.screen
            if isinstance(screen, LobbyScreen):
                event.stop()
                event.prevent_default()
                if event.character == "j":
                    screen.action_join()
                else:
                    screen.action_watch()
                return
        await super()._on_key(event)
