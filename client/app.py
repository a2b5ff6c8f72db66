"""The Textual app: one session, one connection, and the screen the session's phase calls for.

Every server message goes to ``Session.receive``; every key or click becomes a session
call whose messages ``send`` passes to the connection; after either, ``sync`` shows the
screen of the session's phase (lobby, room, race, watch, results) and redraws it.

The app imports its screens (screens/), which import their widgets (widgets.py); those
two see the app only as the ``Host`` of host.py, and never import this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from protocol.messages import (
    DailyDeal,
    Error,
    Finish,
    Join,
    Message,
    MoveMsg,
    Room,
    Undo,
    Watch,
    Welcome,
)

from .closed import room_state
from .config import (
    DEFAULT_URL,
    LOCAL_KEY,
    LOCAL_WHERE,
    DailyMemory,
    Deck,
    DeckMemory,
    HintedMemory,
    TokenStore,
)
from .connection import BACKOFF, Connection, Link, LinkStatus
from .dailylog import HeadMemory, check_day
from .host import Host
from .quick import quick_from
from .screens import (
    AlertScreen,
    Base,
    ClosedRoomScreen,
    ConfirmScreen,
    HelpScreen,
    LobbyScreen,
    NameScreen,
    PasswordScreen,
    RaceScreen,
    ResultsScreen,
    RoomScreen,
    TrustScreen,
    UnreachableScreen,
    WatchScreen,
)
from .state import Session

__all__ = ["YukonApp"]

log = logging.getLogger("yukon.client")

CSS = """
Screen { background: $background; }
.row { height: 1; width: 100%; }
.row > * { margin-right: 1; }
.label { width: 10; color: $text-muted; }
.label2 { width: 5; color: $text-muted; }
.box {
    height: auto;
    border: round $primary-darken-1;
    border-title-color: $text;
    border-title-style: bold;
    padding: 0 1;
    margin: 0 1;
}
#lobby { height: 1fr; padding-top: 1; }
#lobby .row { margin-bottom: 1; }
#lobby .box .row:last-of-type { margin-bottom: 0; }
#variant { width: 14; }
#players { width: 8; }
#time { width: 12; }
#code { width: 41; }  /* a game code is up to 39 characters */
#room-code { width: 12; }
#archive-date { width: 12; }  /* issue 29: a past day, YYYY-MM-DD */
TickBox.-textual-compact:focus { border: none !important; }
Select { width: 16; }

#room-body { height: 1fr; padding: 1 1; }
#countdown { width: auto; margin: 1 2; color: $success; }
#room-note { height: auto; margin: 1 1; }
#room-buttons { margin: 0 1; }

#race-body { height: 1fr; }
#board { width: 1fr; min-width: 44; max-width: 60; }
#standings { width: 1fr; min-width: 34; border-left: vkey $panel-lighten-1; }

#watch-note { height: auto; margin: 1 1 0 1; }
#watch-standings { height: 1fr; margin: 1 0; }
Button { width: auto; min-width: 8; }

#results-body { height: 1fr; padding: 1 1; }
#results-head { height: auto; margin: 0 1 1 1; }
#results-buttons { margin: 1 1; }

#board-head { height: auto; margin: 1 0; }
#code-row { margin: 0 1 1 1; }
#board-code { width: 41; }

HelpScreen, ConfirmScreen, NameScreen, PasswordScreen, TrustScreen, AlertScreen,
NameLinkScreen {
    align: center middle;
}
#link-box {
    width: 78; height: auto; border: round $accent; padding: 1 1; background: $surface;
}
#help-box {
    width: 78; height: auto; border: round $accent; padding: 0 1; background: $surface;
}
#confirm-box {
    width: 40; height: auto; border: round $error; padding: 1 2; background: $surface;
}
#confirm-box .row { margin-top: 1; }
#name-box {
    width: 60; height: auto; border: round $accent; padding: 1 2; background: $surface;
}
#name-box Input { margin: 1 0; }
#name-box .row { margin-top: 1; }
"""


class YukonApp(App[None]):
    """The terminal client; ``yukon play`` runs it."""

    TITLE = "Yukon Race"
    CSS = CSS
    ENABLE_COMMAND_PALETTE = False
    MODES: ClassVar[dict[str, str | Callable[[], Screen[None]]]] = {
        "lobby": LobbyScreen,
        "room": RoomScreen,
        "race": RaceScreen,
        "watch": WatchScreen,
        "results": ResultsScreen,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "quit", priority=True),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        name: str | None = None,
        password: str | None = None,
        ascii: bool = False,
        store: TokenStore | None = None,
        key: str | None = None,
        link: Link | None = None,
        clock: Callable[[], float] = time.monotonic,
        backoff: Sequence[float] = BACKOFF,
        cafile: Path | None = None,
        invite: str | None = None,
        token: str | None = None,
        invite_key: str | None = None,
    ) -> None:
        """``invite``: the room code of an invite link (``yukon play LINK``), which the
        client joins once the server welcomes it (or watches, when it is racing or full);
        first it asks whether the room is open at all (``closed.room_state``), and shows a
        closed room's last race instead. ``token``: a name's link's token, to say hello
        with (and keep for this server). ``invite_key``: an invite-only room's key (the
        link's ``?k=``, docs/protocol.md 4.32)."""
        super().__init__()
        self.url = url
        self.clock = clock
        self.session = Session(ascii=ascii, invite=invite, invite_key=invite_key)
        self.key = key or url
        self.link_state = LinkStatus("connecting", f"connecting to {self.where}")
        #: The status serial when the link last changed: older statuses give way to it.
        self.link_serial = 0
        self.link: Link = link or Connection(
            url,
            self,
            name=name,
            password=password,
            store=store,
            key=key,
            backoff=backoff,
            cafile=cafile,
            token=token,
        )
        self.cafile = cafile
        #: Where the daily rooms are remembered (beside the tokens), and under which key.
        self.dailies = DailyMemory(store.directory) if store is not None else None
        if self.dailies is not None:
            with contextlib.suppress(OSError):
                self.session.dailies = self.dailies.load(self.key)
        self.hinted = HintedMemory(store.directory) if store is not None else None
        if self.hinted is not None:
            with contextlib.suppress(OSError):
                self.session.hinted_rooms = self.hinted.load(self.key)
        #: The last verified head of the server's daily's log (docs/protocol.md 4.29).
        self.log_heads = HeadMemory(store.directory) if store is not None else None
        #: Each name's deck (four colours, suits as letters), beside the tokens (issue 29).
        self.decks = DeckMemory(store.directory) if store is not None else None
        self._asking_name = False
        self._asking_password = False
        #: The server answered (or refused) this run: a later failure is a drop, said on
        #: the status line; before it, nothing answering is said in a box of its own.
        self._answered = False
        self._unreachable: UnreachableScreen | None = None
        self._unreachable_seen = False
        #: A room the lobby joins by Enter (``join_or_watch``), until the server answers.
        self._joining: str | None = None
        #: ``--quick`` was welcomed back into a room: the room's resync decides (``quick_from``).
        self._quick_resync = False

    @property
    def where(self) -> str:
        """The server in words: its address, or for ``--local`` (whose port changes from
        run to run and means nothing to the player) "your own server"."""
        if self.key == LOCAL_KEY:
            return LOCAL_WHERE
        return self.url.split("://", 1)[-1].rstrip("/")

    # -- lifecycle --------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.switch_mode("lobby")
        self.run_worker(self._start(), name="link", exit_on_error=False)

    async def _start(self) -> None:
        """An invite link's room that is closed is said before anything else (before a
        name is asked): its last race, on a screen of its own; then the connection, to
        the open room's node when the answer names one (a cluster, 4.25)."""
        code = self.session.invite
        if code is not None and isinstance(self.link, Connection):
            state = await room_state(
                self.url, code, cafile=self.cafile, key=self.session.invite_key
            )
            if state is not None and state.node is not None:
                # On a cluster: the first connection goes to the room's node, whose join
                # then needs no route (docs/protocol.md 4.25).
                self.link.aim_at(state.node)
            if state is not None and not state.open:
                self.session.invite = None
                said = "is closed" if state.last_race is not None else "is not open"
                self.session.say(f"invite link: room {code} {said}", "error")
                # Nothing is said to the server (no name asked) until the player goes
                # on: to the lobby, or to replay or race a run of the closed room.
                go_on = asyncio.Event()
                self.push_screen(ClosedRoomScreen(state, go_on.set))
                self.sync()
                await go_on.wait()
        await self.link.run()

    async def action_quit(self) -> None:
        """Quit; in the middle of a race, ask first: the race goes on without the player,
        who has the server's resume window to come back before the run is abandoned."""
        session = self.session
        if session.race is None or session.race_done() or session.result is not None:
            await self._quit()
            return
        if any(isinstance(s, ConfirmScreen) for s in self.screen_stack):
            return
        window = session.resume_s
        question = (
            "Quit in the middle of the race? The race goes on without you: run yukon play"
            f" again within {window} s to come back to it, or your run is abandoned."
        )

        async def answered(yes: bool | None) -> None:
            if yes:
                await self._quit()

        self.push_screen(ConfirmScreen(question), answered)

    async def _quit(self) -> None:
        await self.link.close()
        self.exit()

    async def on_unmount(self) -> None:
        await self.link.close()

    # -- the connection's events ------------------------------------------------------------------

    def link_message(self, message: Message) -> None:
        if isinstance(message, Welcome):
            self._load_deck(message.name)
            # --quick, but the token put us back in a room: decided on its resync (below).
            self._quick_resync = self.session.quick and message.room is not None
        if self._watch_instead(message):
            return
        if isinstance(message, Room) and self._quick_resync:
            self._quick_resync = self.session.quick = False
            for out in quick_from(message):  # the resync itself is taken in below
                self.link.send(out)
        known = len(self.session.dailies)
        hinted = list(self.session.hinted_rooms)
        for reply in self.session.receive(message, self.clock()):
            self.link.send(reply)
        if len(self.session.dailies) != known and self.dailies is not None:
            try:
                self.dailies.save(self.key, self.session.dailies)
            except OSError as exc:
                log.warning("cannot remember the daily room: %s", exc)
        if self.session.hinted_rooms != hinted and self.hinted is not None:
            try:
                self.hinted.save(self.key, self.session.hinted_rooms)
            except OSError as exc:
                log.warning("cannot remember the hinted room: %s", exc)
        if self.session.out_of_step:
            self.session.out_of_step = False
            self.link.reconnect()
        if isinstance(message, DailyDeal) and message.archive:
            self.run_worker(self._check_day(message.date, message.commitment))
        self.sync()

    async def _check_day(self, date: str, commitment: str | None) -> None:
        """A past day from the archive: check it against the daily's log, and say so."""
        verdict = await check_day(self.url, date, commitment, self.log_heads, cafile=self.cafile)
        self.session.say(verdict.text, "good" if verdict.good else "error")
        self.sync()

    def _load_deck(self, name: str) -> None:
        """This name's deck, as it was kept on this client (``deck.json``)."""
        if self.decks is None:
            return
        try:
            deck = self.decks.load(self.key, name)
        except OSError:
            return
        self.session.four_colour, self.session.suit_letters = deck.four, deck.letters

    def deck_changed(self) -> None:
        session = self.session
        if self.decks is not None and session.me is not None:
            try:
                self.decks.save(
                    self.key, session.me, Deck(session.four_colour, session.suit_letters)
                )
            except OSError as exc:
                log.warning("cannot keep the deck's settings: %s", exc)
        self.sync()

    def link_status(self, status: LinkStatus) -> None:
        status = self._unanswered(status)
        was = self.link_state
        self.link_state = status
        self.link_serial = self.session.status.serial
        if was.kind == "online" and status.kind != "online":
            self.session.connection_lost(self.clock())
        was_answered = self._answered or status.kind != "failed"
        if status.kind == "need_name" and not self._asking_name:
            self._ask_name(status.text)
        if status.kind == "need_password" and not self._asking_password:
            self._ask_password(status.text)
        if status.kind == "need_trust" and not self._asking_password:
            self._ask_trust(status)
        if status.kind == "failed" and status.text.startswith("REFUSED"):
            self.push_screen(AlertScreen("Certificate changed", status.text))
        elif status.kind == "failed" and not was_answered:
            # Retrying cannot mend it (a wss:// server dialled as ws://, another protocol
            # version): the whole reason, and how to start again, before anything else.
            self.push_screen(AlertScreen("Cannot connect", status.text))
        self.sync()

    def _unanswered(self, status: LinkStatus) -> LinkStatus:
        """Before the server has ever answered: nothing answering at the address (or an
        invite link's room that cannot be reached because of it) is said at once in a box
        over the lobby (``UnreachableScreen``), which closes once the server answers."""
        if self._answered:
            return status
        if status.kind not in ("connecting", "retrying"):
            self._answered = status.kind != "failed"
            box, self._unreachable = self._unreachable, None
            if box is not None and box.is_current:
                box.dismiss()  # if still being pushed, it sees the answer itself (on_mount)
            return status
        if status.kind != "retrying" or "retrying in" not in status.text:
            return status
        silent = status.text.startswith(("nothing answers", "no answer from", "cannot reach"))
        title = "Nothing answers" if silent else "Cannot connect"  # else: not a race server?
        code = self.session.invite
        if code is not None:
            title = f"Room {code} can't be reached"
            status = LinkStatus(
                status.kind, f"invite link: room {code} can't be reached: {status.text}"
            )
        if self._unreachable is not None:
            self._unreachable.update(status.text)
        elif not self._unreachable_seen:  # once: Esc waits in the lobby for good
            self._unreachable_seen = True
            self._unreachable = UnreachableScreen(title, status.text)
            self.push_screen(self._unreachable, lambda _: self._closed_unreachable())
        return status

    def _closed_unreachable(self) -> None:
        self._unreachable = None

    def _ask_name(self, problem: str) -> None:
        self._asking_name = True

        def chosen(name: str | None) -> None:
            self._asking_name = False
            if name:
                self.link.login(name)

        self.push_screen(NameScreen(self.where, problem), chosen)

    def _ask_password(self, problem: str) -> None:
        """A private server: ask here, rather than leave a lobby that looks usable while
        only the status line says why nothing works. The connection keeps what it took."""
        self._asking_password = True

        def given(password: str | None) -> None:
            self._asking_password = False
            if password:
                self.link.use_password(password)

        self.push_screen(PasswordScreen(self.where, problem), given)

    def _ask_trust(self, status: LinkStatus) -> None:
        """Trust on first use, as SSH does: show the certificate's fingerprint, for the
        player to compare with the one ``yukon serve`` logged; pinned if trusted."""
        self._asking_password = True

        def answered(yes: bool | None) -> None:
            self._asking_password = False
            if yes:
                self.link.trust(status.fingerprint)
            else:
                msg = f"{self.where}: certificate not trusted; nothing was sent"
                self.exit(return_code=1, message=msg)

        self.push_screen(TrustScreen(self.where, status.text, status.fingerprint), answered)

    # -- doing things -----------------------------------------------------------------------------

    #: A join refused with one of these, after Enter on a room's code, is tried as a watch.
    WATCH_INSTEAD: ClassVar[dict[str, str]] = {"race_running": "is racing", "room_full": "is full"}

    def join_or_watch(self, room: str) -> None:
        """Enter on a room's code in the lobby: join it, or, if the server says it is
        racing or full, watch it (as an invite link does) rather than leave the player
        with a refusal where watching was meant."""
        self._joining = room.strip().upper()
        self.send(Join(room))

    def _watch_instead(self, message: Message) -> bool:
        """The answer to ``join_or_watch``'s join: a refusal as racing or full becomes a
        watch (True: the refusal is not shown); anything else ends the wait."""
        room = self._joining
        if room is None or not isinstance(message, (Error, Room)):
            return False
        self._joining = None
        if isinstance(message, Error) and message.code in self.WATCH_INSTEAD:
            self.session.say(f"room {room} {self.WATCH_INSTEAD[message.code]}: watching it…")
            self.send(Watch(room))
            return True
        return False

    def send(self, *messages: Message) -> None:
        """Send what the player did; say so when the connection is down."""
        for message in messages:
            if not self.link.send(message):
                race = self.session.race
                if race is not None and isinstance(message, (MoveMsg, Undo, Finish)):
                    race.pending.pop(message.seq, None)
                    race.next_seq = message.seq  # unused: the number may be used again
                # Short: the link's own status (why, and when it tries again) follows it.
                self.session.say("not sent: the server is away; reconnecting…", "error")
                break
        self.sync()

    # -- showing the session ----------------------------------------------------------------------

    def sync(self) -> None:
        """Show the screen of the session's phase and redraw every screen on the stack."""
        phase = self.session.phase()
        if self.current_mode != phase and phase in self.MODES:
            while len(self.screen_stack) > 1 and isinstance(
                self.screen, (HelpScreen, ConfirmScreen)
            ):
                self.pop_screen()
            asking = (NameScreen, PasswordScreen, TrustScreen, AlertScreen)
            if not any(isinstance(s, asking) for s in self.screen_stack):
                while len(self.screen_stack) > 1:
                    self.pop_screen()
            self.switch_mode(phase)
        for screen in self.screen_stack:
            if isinstance(screen, Base):
                screen.refresh_view()


#: Screens and widgets take the app for a ``Host`` (host.py); mypy checks here that it is one.
_HOST: type[Host] = YukonApp
