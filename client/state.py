"""The client's model of the game, pure: no Textual, no sockets, no clock of its own.

``Session`` follows what the server says (``receive``); what the player does (pick a
card, drop it, tap, undo, resign) becomes the messages to send in its base,
``controls.Controls``. The screens only draw it. Times are passed in (``now``, seconds on
any monotonic clock), so every path is tested with plain numbers.

The server is the authority: a move is applied to the local copy only when its
``accepted`` arrives (with the card it turned up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from protocol import Game
from protocol.commitment import check_commitment
from protocol.messages import (
    Accepted,
    BoardPage,
    Countdown,
    DailyDeal,
    Error,
    Finish,
    HintAnswer,
    HistoryPage,
    Join,
    Left,
    Message,
    MoveMsg,
    PlayerPage,
    PlayerProgress,
    Pool,
    PostMortem,
    PostMortemAnswer,
    Progress,
    Quick,
    Race,
    Refused,
    ReplayPage,
    Reported,
    Resign,
    Result,
    Room,
    Undo,
    Undone,
    Watch,
    Welcome,
)
from protocol.messages import Player as PlayerMsg
from protocol.times import format_ms

from .cards import label, move_label
from .controls import Controls
from .race_board import (
    DONE_STATES,
    DOUBLE_TAP_S,
    FINISH,
    FOUNDATION,
    RESIGN,
    Pick,
    RaceBoard,
    Status,
)
from .replay import ReplayRun
from .views import (
    Standing,
    change_text,
    headline,
    names_list,
    rating_text,
    standings,
    streak_text,
)

__all__ = [
    "DONE_STATES",
    "DOUBLE_TAP_S",
    "FINISH",
    "FOUNDATION",
    "Pick",
    "RaceBoard",
    "Session",
    "Standing",
    "Status",
    "change_text",
    "format_ms",
    "headline",
    "names_list",
    "rating_text",
    "streak_text",
]

#: The errors that answer a ``join`` or a ``watch`` (docs/protocol.md 5.1 and 5.3).
_ENTRY_ERRORS = frozenset(
    {"wrong_state", "already_in_room", "no_such_room", "race_running", "room_full"}
)
#: A ``join`` refused with one of these is tried again as a ``watch``: what it says.
_WATCH_INSTEAD = {"race_running": "is racing", "room_full": "is full"}


def _resend(seq: int, move: str | None) -> Message:
    """A move, undo, finish or resign sent again after a drop, under its own number."""
    if move == FINISH:
        return Finish(seq)
    if move == RESIGN:
        return Resign(seq)
    return MoveMsg(seq, move) if move is not None else Undo(seq)


_REPLAY_ERRORS = frozenset(
    {
        "no_such_race",
        "race_running",
        "no_such_player",
        "not_public",
        "too_many_queries",
        "unavailable",
    }
)


@dataclass
class Session(Controls):
    """Everything the client knows, as the server told it, plus what the player holds."""

    ascii: bool = False
    # -- dailydeck (issue 29): the deck's look and the countdown (docs/protocol.md 4.28) ---
    #: The four-colour deck, and suits as letters (S H D C): this player's, kept on disk.
    four_colour: bool = False
    suit_letters: bool = False
    #: The server's last ``next_daily_ms``, and when it came (the session's clock).
    next_daily_ms: int | None = None
    next_daily_at: float = 0.0
    me: str | None = None
    #: My secret token on this server (the ``welcome``'s): what my name's link carries
    #: to another device (docs/protocol.md 4.2).
    token: str | None = None
    room: Room | None = None
    race: RaceBoard | None = None
    progress: Progress | None = None
    result: Result | None = None
    daily: DailyDeal | None = None
    board: BoardPage | None = None
    history: HistoryPage | None = None
    #: My rating and daily streak (docs/protocol.md 4.27): from the welcome, kept up to
    #: date by my own ``player_page`` and my row of a daily board. None: an older server.
    standing: Standing | None = None
    #: The player page asked for (``player``): the page, or the refusal's text.
    player_page: PlayerPage | str | None = None
    countdown_until: float | None = None
    #: The daily attempts I was in, by room code: a resumed daily room comes without its
    #: ``daily_deal`` (protocol 4.19: only room, race, progress), so it is remembered here
    #: (and, by the app, on disk), and a resumed attempt reads as one never interrupted.
    dailies: dict[str, DailyDeal] = field(default_factory=dict)
    #: The rooms whose race gave me a hint: a resumed race (``race`` says nothing of hints)
    #: is still marked hinted. Kept by the app on disk beside the dailies.
    hinted_rooms: list[str] = field(default_factory=list)
    #: A race is about to start (a countdown or a ``daily_deal`` came): its ``race`` is a
    #: "go!"; any other ``race`` outside a resync is a resumed one.
    starting: bool = False
    #: How long the server keeps a dropped player's place (``welcome.resume_s``).
    resume_s: int = 60
    #: A spectator's race clock: the last progress's time, and when it came (None: stands).
    watch_ms: int = 0
    watch_at: float | None = None
    status: Status = field(default_factory=Status)
    #: My copy of the position could not follow the server: fetch it again (reconnect).
    out_of_step: bool = False
    #: Back after a lost connection: the resync (a ``room``) should follow the welcome.
    awaiting_resync: bool = False
    #: The current race's first view, when this client saw its start: what the revealed
    #: code must deal (docs/protocol.md 4.5).
    start_view: str | None = None
    #: The check of a revealed deal against its commitment, for the results: what it
    #: found, and whether that is good news. None: nothing was committed to.
    fairness: tuple[str, bool] | None = None
    #: The room an invite link (``yukon play LINK``) goes to, until the server lets this
    #: client in or says why not; and, once a ``join`` was refused because the race runs
    #: or the room is full, why (``"is racing"``, ``"is full"``): it is watched instead.
    invite: str | None = None
    #: Waiting in the quick-race pool (docs/protocol.md 4.26): its last ``pool``, and when
    #: it came (the client's clock); None: not waiting. ``quick``: enter the pool once
    #: welcomed (``yukon play --quick``).
    pool: Pool | None = None
    pool_at: float = 0.0
    quick: bool = False
    invite_watch: str = ""
    #: The invite link's key, for an invite-only room (docs/protocol.md 4.32).
    invite_key: str | None = None
    #: The link's room let this client in before its ``join`` was answered (the token
    #: resumed it there): the ``already_in_room`` still to come is no news.
    _invite_echo: str | None = field(default=None, init=False, repr=False)
    _lost: bool = field(default=False, init=False, repr=False)
    #: The run being replayed (docs/protocol.md 4.22), None when no replay is open.
    replay: ReplayRun | None = None
    #: Post-mortems by (race, name casefolded): the answer, or the server's refusal text;
    #: absent while it is worked out. One is asked at a time (the server's rule), the
    #: others wait in ``_pm_queue``.
    postmortems: dict[tuple[str, str], PostMortemAnswer | str] = field(default_factory=dict)
    _pm_asked: tuple[str, str] | None = field(default=None, init=False, repr=False)
    _pm_queue: list[tuple[str, str]] = field(default_factory=list, init=False, repr=False)

    # -- the phase decides the screen ---------------------------------------------------------

    def phase(self) -> str:
        """``lobby``, ``room``, ``race``, ``watch`` or ``results``."""
        room = self.room
        if room is None:
            return "lobby"
        if self.result is not None and room.state == "finished":
            return "results"
        if room.state in ("lobby", "countdown"):
            return "room"
        if self.race is not None:
            return "race"
        if room.you == "spectator" and room.state == "racing":
            return "watch"
        return "room"  # joined a finished room: waiting for the rematch

    @property
    def is_host(self) -> bool:
        return self.room is not None and self.me is not None and self.room.host == self.me

    def race_done(self) -> bool:
        return self.race is not None and self.race.is_done(undo=self.undo_allowed)

    def countdown_left(self, now: float) -> float | None:
        if self.countdown_until is None:
            return None
        return max(0.0, self.countdown_until - now)

    def clock_ms(self, now: float) -> int | None:
        """The race clock shown in the header: my own race's, or (watching) the room's,
        run on from the last ``progress`` while the race runs and the server is there;
        None before any."""
        if self.race is not None:
            return self.race.elapsed_ms(now)
        if self.progress is None:
            return None
        ms = self.watch_ms
        if self.watch_at is not None:
            ms += int((now - self.watch_at) * 1000)
        limit = self.room.time_limit * 1000 if self.room is not None else ms
        return max(0, min(ms, limit))

    def _stand_watch_clock(self, now: float) -> None:
        ms = self.clock_ms(now)
        if self.race is None and ms is not None:
            self.watch_ms, self.watch_at = ms, None

    @property
    def letters(self) -> bool:
        """Cards' suits as letters: chosen (``suit_letters``) or forced by ``--ascii``."""
        return self.ascii or self.suit_letters

    def heard_next_daily(self, msg: Message, now: float) -> None:
        """Note a ``next_daily_ms`` (welcome, daily_deal, board_page) received at ``now``."""
        ms = getattr(msg, "next_daily_ms", None)
        if isinstance(ms, int):
            self.next_daily_ms, self.next_daily_at = ms, now

    def daily_left_ms(self, now: float) -> int | None:
        """Milliseconds to the next daily at ``now`` (this session's monotonic clock): the
        server's figure less the time since it came, never this machine's wall clock."""
        if self.next_daily_ms is None:
            return None
        return max(0, self.next_daily_ms - int((now - self.next_daily_at) * 1000))

    def _card(self, card: str) -> str:
        return label(card, ascii=self.letters)

    # -- following the server -------------------------------------------------------------

    def receive(self, msg: Message, now: float) -> list[Message]:
        """Take in one server message; what to send because of it (resent moves)."""
        self.heard_next_daily(msg, now)
        if isinstance(msg, Welcome):
            self.me = msg.name
            self.token = msg.token
            self.resume_s = msg.resume_s
            self.standing = Standing(msg.rating, msg.provisional, msg.streak, msg.best_streak)
            if self.invite is not None and msg.room == self.invite:
                self.invite = None  # the link's room is mine already: its resync follows
            # The server names the room it kept us in; its ``room`` message follows at
            # once. Nil after a drop: our place is gone (docs/protocol.md 4.15).
            self.awaiting_resync = self._lost and self.room is not None
            self._lost = False
            if self.awaiting_resync and msg.room is None:
                self.resync_missed()
            return self._follow_invite() + self._quick_once(msg)
        elif isinstance(msg, Room):
            self._room(msg, now)
            self._invite_answered(msg)
        elif isinstance(msg, Left):
            self._outside()
            self.say(f"you left room {msg.room}")
        elif isinstance(msg, Countdown):
            self.countdown_until = now + msg.ms / 1000
            self.starting = True
        elif isinstance(msg, DailyDeal):  # its race follows at once (the result stays till then)
            self.daily = msg
            self.race = None
            self.starting = True
            what = (
                "from the archive, practice"
                if msg.archive
                else "practice"
                if msg.practice
                else "the attempt that counts"
            )
            self.say(f"daily deal {msg.date}, attempt {msg.attempt}: {what}")
        elif isinstance(msg, Race):
            return self._race(msg, now)
        elif isinstance(msg, Accepted):
            self._accepted(msg, now)
        elif isinstance(msg, Refused):
            self._refused(msg)
        elif isinstance(msg, Undone):
            if self.race is not None:
                self.race.undone(msg, now)
                self.say(f"took back {move_label(msg.move, ascii=self.ascii)}")
        elif isinstance(msg, Progress):
            self._progress(msg, now)
        elif isinstance(msg, Result):
            self.result = msg
            self.fairness = self._check_deal(msg)
            self.countdown_until = None
            if self.race is not None:
                self.race.cancel()
            self.say("the race is over")
            mine = any(r.name == self.me for r in msg.ranks)
            if msg.race is not None and self.me is not None and mine:
                # for the results: the post-mortem, and my rating or streak if changed
                return self.ask_postmortem(msg.race, self.me) + self.after_result(msg)
        elif isinstance(msg, Pool):  # the quick-race pool (protocol 4.26)
            self.pool = msg if msg.state == "waiting" else None
            self.pool_at = now
        elif isinstance(msg, BoardPage):
            self.board = msg
            you = msg.you
            if msg.kind == "daily" and you is not None and you.streak is not None and self.standing:
                self.standing = replace(self.standing, streak=you.streak)
        elif isinstance(msg, PlayerPage):
            self._player_page(msg)
        elif isinstance(msg, HistoryPage):
            self.history = msg
        elif isinstance(msg, HintAnswer):
            self._hint_answer(msg)
        elif isinstance(msg, ReplayPage):
            run = self.replay
            if run is not None and run.race == msg.race:
                out = run.received(msg)
                if run.complete:  # the post-mortem of the run shown, for the replay
                    out += self.ask_postmortem(run.race, run.player)
                return out
        elif isinstance(msg, PostMortemAnswer):
            return self._postmortem_answered(msg)
        elif isinstance(msg, Reported):  # a report of mine is with the operators (4.33)
            self.say(f"your report of {msg.player} is with the server's operators")
        elif isinstance(msg, Error) and msg.code in _REPLAY_ERRORS and self._replay_refused(msg):
            return self._next_postmortem()
        elif isinstance(msg, Error):
            if self.invite is not None and msg.code in _ENTRY_ERRORS:
                return self._invite_refused(msg)
            echo, self._invite_echo = self._invite_echo, None
            if msg.code == "already_in_room" and self.room is not None and self.room.room == echo:
                return []
            if msg.code == "unknown_player":
                self.player_page = msg.text
            self._error(msg)
        return []

    # -- ratings and streaks (docs/protocol.md 4.27) -------------------------------------------

    def _player_page(self, msg: PlayerPage) -> None:
        """A player's page; my own brings my rating and streak up to date too."""
        self.player_page = msg
        if msg.name == self.me:
            self.standing = Standing(msg.rating, msg.provisional, msg.streak, msg.best_streak)

    def after_result(self, result: Result) -> list[Message]:
        """A race I ran is over: my page, when it may have changed my rating (a rated
        race) or my streak (a daily attempt); the standing it brings shows at once."""
        rated = any(r.rating_change is not None for r in result.ranks)
        if self.me is None or not (rated or self.daily is not None):
            return []
        return [PlayerMsg(self.me)]

    # -- replays and post-mortems (docs/protocol.md 4.22) -------------------------------------

    def open_replay(self, race: str, player: str) -> list[Message]:
        """Open the replay of ``player``'s run in ``race``: what to send."""
        self.replay = ReplayRun(race, player)
        return [self.replay.ask()]

    def close_replay(self) -> None:
        self.replay = None

    def postmortem(self, race: str, player: str) -> PostMortemAnswer | str | None:
        """The post-mortem of a run, its refusal's text, or None while it is worked out."""
        return self.postmortems.get((race, player.casefold()))

    def ask_postmortem(self, race: str, player: str) -> list[Message]:
        """Ask for a run's post-mortem, unless it is known or on its way already (a refused
        one is asked again)."""
        key = (race, player.casefold())
        known = isinstance(self.postmortems.get(key), PostMortemAnswer)
        if known or key == self._pm_asked or key in self._pm_queue:
            return []
        self.postmortems.pop(key, None)  # a refusal: asked again (it may be public now)
        if self._pm_asked is not None:
            self._pm_queue.append(key)
            return []
        self._pm_asked = key
        return [PostMortem(race, player)]

    def _postmortem_answered(self, msg: PostMortemAnswer) -> list[Message]:
        key = (msg.race, msg.player.casefold())
        self.postmortems[key] = msg
        if key == self._pm_asked:
            self._pm_asked = None
        return self._next_postmortem()

    def _next_postmortem(self) -> list[Message]:
        if self._pm_asked is not None or not self._pm_queue:
            return []
        race, name = self._pm_queue.pop(0)
        return self.ask_postmortem(race, name)

    def _replay_refused(self, msg: Error) -> bool:
        """An error that answers the open replay (first) or the post-mortem asked; False
        if it answers neither (a board or history query, say)."""
        run = self.replay
        if run is not None and run.page is None and run.refused is None:
            run.refused = msg.text
            return True
        if self._pm_asked is not None:
            self.postmortems[self._pm_asked] = f"post-mortem: {msg.text}"
            self._pm_asked = None  # receive asks the next one
            return True
        return False

    # -- an invite link ---------------------------------------------------------------------

    def _follow_invite(self) -> list[Message]:
        """After a welcome: go to the invite link's room, as a racer first (or, after a
        ``join`` refused as racing or full, as a spectator). Asked again after a welcome
        that follows a reconnect, if the server had not answered yet."""
        code = self.invite
        if code is None:
            return []
        if self.invite_watch:
            self.say(f"room {code} {self.invite_watch}: watching it instead…")
            return [Watch(code, self.invite_key)]
        self.say(f"joining room {code}…")
        return [Join(code, self.invite_key)]

    def _invite_answered(self, msg: Room) -> None:
        """The invite link's room took this client in: the link is done."""
        if self.invite is None or msg.room != self.invite:
            return
        self.invite = None
        self._invite_echo = msg.room
        if msg.you == "spectator" and self.invite_watch:
            self.say(f"room {msg.room} {self.invite_watch}: you watch it")

    def _invite_refused(self, msg: Error) -> list[Message]:
        """The server refused the link's ``join`` or ``watch``: a room racing or full is
        watched instead; anything else ends the link here, said in the lobby."""
        code = self.invite
        assert code is not None
        if msg.code in _WATCH_INSTEAD and not self.invite_watch:
            self.invite_watch = _WATCH_INSTEAD[msg.code]
            return self._follow_invite()
        self.invite = None
        if msg.code == "already_in_room" and self.room is not None and self.room.room == code:
            return []  # back in it already (the token resumed this client there)
        self.say(f"invite link to room {code}: {msg.text}", "error")
        return []

    def _check_deal(self, result: Result) -> tuple[str, bool] | None:
        """Was the revealed deal the one committed to before the start, and the one dealt?
        A client checks the server here rather than trusting it (docs/protocol.md 4.5)."""
        committed = self.room.commitment if self.room is not None else None
        if committed is None or result.code is None:
            return None
        if result.salt is None or not check_commitment(committed, result.code, result.salt):
            return ("the revealed deal does NOT match the commitment sent before the start", False)
        if self.start_view is not None and Game.from_code(result.code).view() != self.start_view:
            return ("the revealed code does NOT deal the cards this race started with", False)
        return ("deal checked: the one committed to before the start", True)

    def _outside(self) -> None:
        self.room = None
        self.race = None
        self.progress = None
        self.result = None
        self.daily = None
        self.countdown_until = None
        self.start_view = None
        self.fairness = None

    def _quick_once(self, welcome: Welcome) -> list[Message]:
        """``yukon play --quick``: into the pool once welcomed, unless back in a room."""
        if not self.quick or welcome.room is not None:
            return []
        self.quick = False
        return [Quick()]

    def quick_race(self) -> list[Message]:
        """The lobby's key: enter the pool, or leave it while waiting."""
        return [Quick(leave=self.pool is not None)]

    def _room(self, msg: Room, now: float) -> None:
        self.awaiting_resync = False
        if msg.quick:
            self.pool = None  # the pool formed this room
        if msg.max_players == 1 and msg.ghost is None:  # a daily room (protocol 4.16)
            if self.daily is None and msg.room in self.dailies:  # resumed: still the daily
                self.daily = self.dailies[msg.room]
            elif self.daily is not None and msg.room not in self.dailies:
                self.dailies[msg.room] = self.daily
        old = self.room
        if old is not None and old.room == msg.room:
            self._tell_room_changes(old, msg)
        else:  # another room: what we knew of the last one is gone (a daily's race comes first)
            self.result = None
            self.progress = None
            if msg.state != "racing":
                self.race = None
            if msg.max_players > 1 and msg.state in ("racing", "countdown"):
                self.say(f"back in room {msg.room}: the race goes on", "good")
            elif msg.max_players > 1:
                self.say(f"room {msg.room}: {', '.join(p.name for p in msg.players)}")
            elif msg.ghost is not None and msg.state == "lobby":
                self.say(f"racing {msg.ghost}'s run as a ghost: s starts", "good")
        if msg.state != "racing":
            self._stand_watch_clock(now)
        elif self.watch_at is None and self.progress is not None and not self._lost:
            self.watch_at = now  # racing again (a resync): the clock runs on
        self.room = msg
        if msg.state != "countdown":
            self.countdown_until = None
        if msg.state in ("lobby", "finished"):
            self.starting = False  # a countdown called off: no race is about to start
        if msg.state == "lobby":  # a rematch: a new race will come
            if msg.room in self.hinted_rooms:
                self.hinted_rooms.remove(msg.room)
            self.race = None
            self.progress = None
            self.result = None

    def _tell_room_changes(self, old: Room, new: Room) -> None:
        """One status line of what changed, each kind of news once, its names as a list:
        "bob and carol joined; dan is ready"."""
        before = {p.name: p for p in old.players}
        after = {p.name: p for p in new.players}
        rematch = old.state == "finished" and new.state == "lobby"
        groups: dict[str, list[str]] = {}

        def add(what: str, name: str) -> None:
            groups.setdefault(what, []).append(name)

        for n in after:
            if n not in before:
                add("joined", n)
        for n in before:
            if n not in after:
                add("left", n)
        for n, p in after.items():
            q = before.get(n)
            if q is None:
                continue
            if q.connected and not p.connected:
                add("lost the connection", n)
            elif not q.connected and p.connected:
                add("back", n)
            elif p.ready != q.ready and n != new.host and new.state == "lobby" and not rematch:
                add("ready" if p.ready else "not ready", n)
        news: list[str] = []
        for what, names in groups.items():
            verb = "is" if len(names) == 1 else "are"
            if what in ("joined", "left", "lost the connection"):
                news.append(f"{names_list(names)} {what}")
            else:
                news.append(f"{names_list(names)} {verb} {what}")
        if new.host != old.host:
            news.append(f"{new.host} is the host now")
        if rematch:
            news.append(self._rematch_text(new))
        if news:
            self.say("; ".join(news))

    def _rematch_text(self, room: Room) -> str:
        if room.you != "player":
            return f"rematch: a new deal; {room.host} starts it"
        if room.host == self.me:
            others = [p.name for p in room.players if p.name != self.me]
            if not others:
                return "rematch: a new deal; s starts it"
            say = "says" if len(others) == 1 else "say"
            return f"rematch: a new deal; s starts it once {names_list(others)} {say} ready"
        return "rematch: a new deal; space says you are ready"

    def _race(self, msg: Race, now: float) -> list[Message]:
        race = self.race
        self.countdown_until = None
        self.result = None
        if race is not None and race.resyncing and race.rules == str(msg.view.split(" ")[0]):
            again = race.resync(msg, now)
            self.out_of_step = False
            out: list[Message] = [_resend(seq, move) for seq, move in again]
            self.say("connection back: the race goes on", "good")
            return out
        if race is not None and race.pending.get(msg.seq, "") == FINISH:
            race.finished_by(msg, now)  # the answer to my finish (protocol 4.24)
            self.say("all 52 cards home: you won!" if msg.state == "won" else "finished", "good")
            return []
        if race is not None and race.pending.get(msg.seq, "") == RESIGN:
            race.finished_by(msg, now)  # the answer to my resign (protocol 4.10)
            self.say("you resigned")
            return []
        self.race = RaceBoard(msg, now, ascii=self.ascii)
        room_code = self.room.room if self.room is not None else None
        if self.starting:
            if room_code in self.hinted_rooms:  # a new race in that room: no hint yet
                self.hinted_rooms.remove(room_code)
        elif room_code in self.hinted_rooms:
            self.race.hinted = True  # a resumed race that had a hint
        self.out_of_step = False
        # A race at its start (also one resumed before any move) shows the deal's own view.
        self.start_view = msg.view if msg.seq == 0 and msg.moves == 0 else None
        self.fairness = None
        starting, self.starting = self.starting, False
        daily = self.daily
        room = self.room
        if msg.state == "stuck":
            self.say(self._stuck_text(), "error")
        elif starting and daily is not None:
            kind = "practice" if daily.practice else "it counts"
            self.say(f"daily deal {daily.date}, attempt {daily.attempt} ({kind}): go!", "good")
        elif starting:
            self.say("go! 1-7 picks a column, ? shows every key", "good")
        elif daily is not None:
            kind = "practice" if daily.practice else "it counts"
            self.say(
                f"daily deal {daily.date}, attempt {daily.attempt} ({kind}): back in the race",
                "good",
            )
        elif room is None or room.max_players == 1:
            self.say("back in the race", "good")
        return []

    def _accepted(self, msg: Accepted, now: float) -> None:
        race = self.race
        if race is None:
            return
        if not race.accepted(msg, now):
            self.out_of_step = True
            race.resyncing = True
            self.say("out of step with the server: fetching the position again", "error")
            return
        if msg.state == "won":
            self.say("all 52 cards home: you won!", "good")
        elif msg.state == "stuck":
            self.say(self._stuck_text(), "error")
        else:
            played = move_label(msg.move, ascii=self.ascii)
            turned = f", turned up {self._card(msg.turned)}" if msg.turned else ""
            if msg.turned and race.can_finish():  # the last card turned up: offer the rest
                self.say(f"{played}{turned}: every card is face up, a finishes for you", "good")
            else:
                self.say(f"{played}{turned}")

    def _stuck_text(self) -> str:
        if self.undo_allowed:
            return "stuck: no legal move left. u takes back a move, r resigns"
        return "stuck: no legal move left, and this room has no undo"

    def _refused(self, msg: Refused) -> None:
        race = self.race
        move = race.answered(msg.seq) if race is not None else None
        if move == FINISH:
            self.say(f"finish: {msg.reason}", "error")
        elif move is not None:
            self.say(f"{move_label(move, ascii=self.ascii)}: {msg.reason}", "error")
        else:
            self.say(msg.reason, "error")

    def _progress(self, msg: Progress, now: float) -> None:
        self.progress = msg
        racing = self.room is not None and self.room.state == "racing" and not self._lost
        self.watch_ms, self.watch_at = msg.elapsed_ms, now if racing else None
        race = self.race
        if race is None or self.me is None:
            return
        for entry in msg.players:
            if entry.name == self.me:
                was = race.state
                race.observe(entry, msg.elapsed_ms, now)
                if entry.state != was:
                    self._tell_state(entry)
                break

    def _tell_state(self, entry: PlayerProgress) -> None:
        if entry.state == "resigned":
            self.say("you resigned; the others race on", "error")
        elif entry.state == "timeout":
            self.say("time is up", "error")
        elif entry.state == "stuck":
            self.say(self._stuck_text(), "error")
        elif entry.state == "won":
            self.say("all 52 cards home: you won!", "good")

    def _hint_answer(self, msg: HintAnswer) -> None:
        """Show a hint, if it is for the position I have (none of my moves since)."""
        race = self.race
        if race is None:
            return
        race.hint_asked = False
        if msg.verdict != "unknown":  # "can't tell" with no move does not mark the run
            race.hinted = True
            room = self.room.room if self.room is not None else None
            if room is not None and room not in self.hinted_rooms:
                self.hinted_rooms = [*self.hinted_rooms[-7:], room]
        if msg.seq != race.last_seq or race.pending:
            self.say("that hint was for an earlier position: h asks again")
            return
        if msg.verdict == "win" and msg.move is not None:
            race.hint = msg.move
            self.say(f"hint: {move_label(msg.move, ascii=self.ascii)}", "good")
        elif msg.verdict == "best" and msg.move is not None:
            race.hint = msg.move
            self.say(f"hint: best move, not proven: {move_label(msg.move, ascii=self.ascii)}")
        elif msg.verdict == "lost":
            undo = ": u takes a move back" if self.undo_allowed else ""
            self.say(f"hint: no win from here{undo}", "error")
        else:
            self.say("hint: can't tell, this position is too deep to work out quickly")

    def _error(self, msg: Error) -> None:
        if self.race is not None:
            self.race.hint_asked = False  # whatever it answers, a hint may be asked again
        if msg.seq is not None and self.race is not None:
            self.race.answered(msg.seq)
        if msg.code == "room_closed":
            self._outside()
        self.say(msg.text, "error")

    # -- connection ----------------------------------------------------------------------------

    def connection_lost(self, now: float | None = None) -> None:
        """The next ``race`` is a resync; anything unanswered will be sent again.

        The clock stands while the server is away (its own clock charges nothing for a
        restart): run on, it would jump back when the resync brings the server's time.
        """
        if now is not None:
            self._stand_watch_clock(now)
            if self.race is not None and self.race.frozen_ms is None:
                self.race.frozen_ms = self.race.elapsed_ms(now)
        self._lost = True
        if self.race is not None:
            self.race.resyncing = True
        # A query's answer is lost with its connection: what was on its way is said to be
        # (asking again, v or the results, works once the link is back).
        if self._pm_asked is not None:
            self.postmortems[self._pm_asked] = "post-mortem: the connection dropped; ask again"
        self._pm_asked = None
        self._pm_queue.clear()
        run = self.replay
        if run is not None and not run.complete and run.refused is None:
            run.refused = "the connection dropped before the run came; open it again"

    def resync_missed(self) -> bool:
        """The welcome came back without my room (its ``room`` is nil): the server no
        longer has it (a restart that could not bring it back, or a long absence). Back to
        the lobby. The welcome says so itself, so no timer guesses it: a slow link or a
        busy machine cannot make a kept room look lost."""
        if not self.awaiting_resync:
            return False
        self.awaiting_resync = False
        code = self.room.room if self.room is not None else ""
        self._outside()
        self.say(f"room {code} is gone (the server restarted, or you were away too long)", "error")
        return True

    # -- standings --------------------------------------------------------------------------

    def standings(self) -> Sequence[PlayerProgress]:
        """The latest ``progress``, my own line from my own race, the leader first
        (``views.standings``)."""
        return standings(self.progress, self.race, self.me)
