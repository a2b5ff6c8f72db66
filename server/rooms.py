"""The room and race logic as a plain state machine (sans I/O).

``Hub`` holds every connection, player and room of a server. Each entry point takes an
event and the server's monotonic time and returns the effects to carry out
(``effects.Send``, ``Close``, ``Persist``); nothing here awaits, reads a socket or a
database, or looks at a clock of its own, so every path is tested with a fake clock.
The websocket layer (``server.connection``) feeds it and calls ``tick`` at
``next_deadline()``.

Session order, enforced here: ``hello`` first; then lobby messages (create, join,
watch); in a room ``ready``/``start``; during a race ``move``/``undo``/``resign``;
after it ``rematch`` or ``leave``. See docs/protocol.md.
"""

from __future__ import annotations

import datetime as dt
import heapq
import hmac
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from protocol import Game, GameCode, InvalidCodeError, InvalidRulesError, Rules
from protocol.commitment import SALT_HEX, commitment
from protocol.messages import (
    CLOSE_REPLACED,
    CLOSE_VERSION,
    PROTOCOL_VERSION,
    Accepted,
    Countdown,
    Create,
    Daily,
    DailyDeal,
    Error,
    Hello,
    Hint,
    HintAnswer,
    Join,
    Leave,
    Left,
    Message,
    MessageError,
    MoveMsg,
    Progress,
    Ready,
    Refused,
    Rematch,
    Resign,
    Result,
    RoomPlayer,
    Start,
    Undo,
    Undone,
    Watch,
    Welcome,
    decode_client,
    normalize_name,
)
from protocol.messages import (
    Board as BoardMsg,
)
from protocol.messages import (
    History as HistoryMsg,
)
from protocol.messages import (
    Race as RaceMsg,
)
from protocol.messages import (
    Room as RoomMsg,
)
from protocol.shuffle import SEED_BYTES

from .daily import (
    DAILY_TIME_LIMIT_S,
    code_public,
    code_public_at,
    counts_on_board,
    utc_date,
)
from .effects import (
    Authenticate,
    BeginDaily,
    Close,
    Effect,
    Forget,
    Journal,
    LiveAction,
    LiveRace,
    Persist,
    PlayerResult,
    Query,
    RaceRecord,
    Send,
    Solve,
)
from .limits import address_key
from .race import Race, Runner

__all__ = ["Hub", "HubConfig", "ROOM_ALPHABET", "CLOSE_POLICY"]

log = logging.getLogger("yukon.rooms")

#: Room codes use letters and digits that cannot be misread aloud: no 0/O, no 1/I.
ROOM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ROOM_CODE_LENGTH = 5
#: Websocket close code for flooding, garbage, a missing hello and a wrong password.
CLOSE_POLICY = 1008
#: Websocket close code when the server holds all the connections it allows, or all its
#: address may have, or cannot check a password soon enough.
CLOSE_TRY_LATER = 1013

#: The longest delay ``2 ** n`` is computed for (far above any configured maximum); a
#: bigger exponent overflows a float (OverflowError from 2.0 ** 1024).
_MAX_EXPONENT = 64

#: Addresses remembered for per-address limits and password failures, each; beyond, the
#: oldest are forgotten (an attacker rotating addresses must not grow them without bound).
_MAX_REMEMBERED = 10_000

_CLASSIC = Rules()

#: Most hint answers a player's cache keeps (a winning line adds one per move of it).
_HINT_CACHE = 2048

#: Frames that go out without first releasing a held ``progress``: the answers to a
#: player's own moves (they may overtake it, docs/protocol.md 4.11), and progress itself.
_OVERTAKE = (Accepted, Refused, Undone, Progress)

#: Decode errors that count towards the garbage limit.
_STRIKE_CODES = frozenset(
    {
        "bad_frame",
        "too_big",
        "bad_msgpack",
        "bad_message",
        "unknown_type",
        "bad_field",
        "hello_first",
        "already_hello",
    }
)


@dataclass(frozen=True)
class HubConfig:
    """The numbers that shape a server; docs/protocol.md documents each default, and
    docs/operations.md which number of the protocol each field is."""

    resume_window_s: float = 60.0
    hello_timeout_s: float = 10.0
    countdown_s: float = 3.0
    #: Token bucket per connection: burst size and messages per second.
    bucket_capacity: float = 40.0
    bucket_rate: float = 20.0
    #: More than this many malformed messages within ``strike_window_s`` closes the connection.
    strike_limit: int = 10
    strike_window_s: float = 60.0
    max_rooms: int = 10_000
    #: Connections beyond this are closed at once with 1013 (try again later).
    max_connections: int = 10_000
    #: A daily attempt's time limit, in seconds.
    daily_time_limit: int = DAILY_TIME_LIMIT_S
    #: A player registered less than this long (seconds) before a daily attempt begins
    #: plays it as practice (``--daily-min-age``); 0: every first attempt counts.
    daily_min_age_s: float = 0.0
    #: A private server: every hello must carry this password. None: open to all.
    password: str | None = None
    #: After this many wrong passwords from one address, each further answer waits
    #: ``2 ** (failures - free)`` seconds, up to ``password_max_delay_s``, and the
    #: address's next password check waits as long: an address's checks are judged one
    #: at a time, so guessing in parallel is no faster than one guess after another.
    password_free_failures: int = 3
    password_max_delay_s: float = 30.0
    #: Failures are forgotten after this long without one.
    password_memory_s: float = 600.0
    #: Wrong passwords the whole server takes per ``password_global_window_s`` (a token
    #: bucket). Once they are spent, every check from an address that has not given the
    #: right password before waits its turn, one per ``window / failures`` seconds: many
    #: addresses guessing together are no faster than that.
    password_global_failures: int = 60
    password_global_window_s: float = 60.0
    #: A check that would wait longer than this, or that finds ``password_queue`` checks
    #: of its address already waiting, is refused at once (``password_busy``, 1013).
    password_max_wait_s: float = 60.0
    password_queue: int = 8
    #: How long an address that gave the right password skips the server-wide wait.
    password_trust_s: float = 86_400.0
    #: Per-address limits; an address is an IPv4 address or an IPv6 /64 (``limits``), and
    #: 0 means no limit. Connections open at once; beyond: close 1013.
    max_connections_per_address: int = 64
    #: Names registered (hellos with a name) per ``registration_window_s``.
    max_registrations_per_address: int = 20
    registration_window_s: float = 3600.0
    #: Rooms (daily rooms included) that players from one address created and that exist.
    max_rooms_per_address: int = 16
    #: ``board``/``history`` requests of one connection being answered at once; one more
    #: is refused (``too_many_queries``) rather than queued.
    max_queries_per_connection: int = 2
    #: Positions the solver may search for one hint before it answers "unknown": a fixed
    #: count, so the same position always gets the same answer (docs/solver.md, "Hints").
    hint_budget_nodes: int = 100_000
    #: Hints being worked out at once, for every player together; beyond it a hint is
    #: refused (``unavailable``) rather than queued behind them.
    hint_queue_limit: int = 32
    #: How long the ``progress`` a move produces waits for a newer one in its room
    #: (docs/protocol.md, section 4.11). 0: after every move at once, to every member.
    progress_hold_s: float = 0.1


@dataclass(eq=False)
class _Conn:
    id: int
    opened: float
    tokens: float
    filled: float
    address: str = ""
    player: _Player | None = None
    strikes: deque[float] = field(default_factory=deque)
    closed: bool = False
    #: A hello is being checked against storage; the connection waits for the answer.
    authenticating: bool = False
    #: A wrong password's answer is being held back, or the password check waits its
    #: turn (``pending_hello``); the hello deadline no longer applies.
    refusing: bool = False
    #: The address per-address limits count by (``limits.address_key``).
    key: str = ""
    #: A hello whose password check waits for its turn (``Hub._password_turn``).
    pending_hello: Hello | None = None
    #: The check passed the server-wide wait already (``Hub._password_turn``).
    gated: bool = False
    #: ``board``/``history`` requests being answered.
    queries: int = 0
    #: The hello being checked registers a name (counted in ``Hub._may_register``).
    registering: bool = False


@dataclass(eq=False)
class _PasswordAddress:
    """The password checks of one address: its failures and its turn (``Hub._password_turn``)."""

    count: int = 0
    #: When the last failure was.
    last: float = 0.0
    #: When this address's next check may be judged.
    next: float = 0.0
    #: Checks waiting for their turn, in order of arrival.
    queue: deque[_Conn] = field(default_factory=deque)
    #: A "password_turn" timer is set for this time.
    timer_at: float | None = None


@dataclass(eq=False)
class _Player:
    id: int
    name: str
    token: str
    conn: int | None = None
    room: _Room | None = None
    spectator: bool = False
    gone_at: float | None = None
    #: When the name was registered (wall time), for ``HubConfig.daily_min_age_s``.
    registered: float = 0.0
    #: A daily attempt is being numbered by storage.
    daily_pending: bool = False
    #: The hint being worked out for this player (its request number), if any.
    hint_request: int | None = None
    #: Hint answers already known in the race ``hint_uid``, by full position: every
    #: position along a winning line given, and positions found lost or undecided.
    hint_uid: str = ""
    hint_answers: dict[str, tuple[str, str | None]] = field(default_factory=dict)


@dataclass(eq=False)
class _HintJob:
    """A hint on its way: whose, for which race, and the position and ``seq`` it is for."""

    player: _Player
    uid: str
    position: str
    seq: int


@dataclass(eq=False)
class _Room:
    code: str
    host: _Player
    rules: Rules
    fixed: GameCode | None
    deal: GameCode
    max_players: int
    undo: bool
    time_limit: int
    players: list[_Player] = field(default_factory=list)
    spectators: list[_Player] = field(default_factory=list)
    ready: set[str] = field(default_factory=set)
    state: str = "lobby"
    countdown_until: float = 0.0
    race: Race | None = None
    race_id: int = 0
    started_wall: float = 0.0
    finishing: bool = False
    result: Result | None = None
    #: The date of the daily deal this private room plays, None for a normal room.
    daily: dt.date | None = None
    attempt: int = 0
    #: A daily attempt kept off the boards: a later attempt, or a player too young.
    practice: bool = False
    #: Player ids by name, fixed when the race starts (a player may leave before the end).
    ids: dict[str, int] = field(default_factory=dict)
    #: The race's id across restarts (``RaceRecord.uid``), and its journal's next number.
    uid: str = ""
    journal_n: int = 0
    #: Runners may ask for hints (never in a daily room).
    hints: bool = False
    #: The salt of the commitment to a deal the server drew in secret (None for a deal the
    #: host chose by its code, which is public anyway): revealed with the code.
    salt: str | None = None
    #: The address (``limits.address_key``) of the player who created it; "" if none counts.
    key: str = ""
    #: When a held ``progress`` is due (monotonic seconds), or None: nothing held.
    progress_due: float | None = None
    #: Whose moves the held ``progress`` shows: one runner (who then does not get it: their
    #: ``accepted`` told them), or None once a second runner has moved in the hold.
    progress_mover: _Player | None = None

    def members(self) -> list[_Player]:
        return self.players + self.spectators


class Hub:
    """Every connection, player and room of one server; see the module docstring."""

    def __init__(
        self,
        config: HubConfig | None = None,
        *,
        wall_clock: Callable[[], float] = time.time,
        random_deal: Callable[[], int | bytes] = lambda: secrets.token_bytes(SEED_BYTES),
        new_salt: Callable[[], str] = lambda: secrets.token_hex(SALT_HEX // 2),
        new_room_code: Callable[[], str] = lambda: "".join(
            secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH)
        ),
        boot_id: str | None = None,
    ) -> None:
        self.config = config or HubConfig()
        self._wall = wall_clock
        self._random_deal = random_deal
        self._new_salt = new_salt
        self._new_room_code = new_room_code
        #: Makes race ids unique across restarts (``RaceRecord.uid``).
        self._boot = boot_id or secrets.token_hex(6)
        self._conns: dict[int, _Conn] = {}
        #: Password checks by address key (``_password_turn``).
        self._pw: dict[str, _PasswordAddress] = {}
        #: The server-wide budget of wrong passwords (a token bucket), when it was last
        #: filled, and when the server-wide wait's next turn is.
        self._pw_tokens = float(self.config.password_global_failures)
        self._pw_filled: float | None = None
        self._pw_gate = 0.0
        #: Address keys that gave the right password, and when.
        self._pw_trusted: dict[str, float] = {}
        #: Per-address counts: connections open, recent registrations, rooms existing.
        self._addr_conns: dict[str, int] = {}
        self._addr_regs: dict[str, deque[float]] = {}
        self._addr_rooms: dict[str, int] = {}
        #: Addresses refused a connection since they were last below their limit (logged).
        self._addr_full: set[str] = set()
        #: Players known to this process, by token (in memory only) and by id.
        self._tokens: dict[str, _Player] = {}
        self._players: dict[int, _Player] = {}
        self._rooms: dict[str, _Room] = {}
        #: Room codes held for daily attempts being numbered, by player id: the room is
        #: reserved before storage numbers the attempt, so that no refusal can come after
        #: the numbering and turn a counted attempt into practice.
        self._daily_rooms: dict[int, str] = {}
        self._finishing: dict[int, _Room] = {}
        self._race_ids = 0
        self._timers: list[tuple[float, int, str, object]] = []
        self._timer_seq = 0
        #: Hints being worked out (``Solve`` effects not answered yet), by request number.
        self._hint_jobs: dict[int, _HintJob] = {}
        self._hint_ids = 0
        self._out: list[Effect] = []
        self._now = 0.0

    # -- figures for logs and metrics -----------------------------------------------------

    @property
    def connections(self) -> int:
        return len(self._conns)

    @property
    def rooms(self) -> int:
        return len(self._rooms)

    @property
    def races_running(self) -> int:
        return sum(1 for r in self._rooms.values() if r.state == "racing")

    # -- entry points ---------------------------------------------------------------------

    def connect(self, conn: int, now: float, *, address: str = "") -> list[Effect]:
        """A new connection (from ``address``); it must say hello within ``hello_timeout_s``."""
        self._now = now
        c = self.config
        if len(self._conns) >= c.max_connections:
            log.warning("connection limit (%d) reached: refusing %s", c.max_connections, address)
            return [Close(conn, CLOSE_TRY_LATER, "server full, try again later")]
        key = address_key(address)
        held = self._addr_conns.get(key, 0)
        if key and 0 < c.max_connections_per_address <= held:
            if key not in self._addr_full:  # one line per address, not one per refusal
                self._addr_full.add(key)
                log.warning("%s holds %d connections: refusing more", key, held)
            return [Close(conn, CLOSE_TRY_LATER, "too many connections from your address")]
        self._addr_conns[key] = held + 1
        self._conns[conn] = _Conn(conn, now, c.bucket_capacity, now, address, key=key)
        self._timer(now + c.hello_timeout_s, "hello", conn)
        return []

    def control(self, conn: int, now: float) -> list[Effect]:
        """A ping or a pong from the client. It costs a token of the flood bucket like any
        frame: pings are answered by the websocket layer with a pong each, so a client that
        sends them and never reads would otherwise fill the server's memory for free."""
        self._out = []
        self._now = now
        c = self._conns.get(conn)
        if c is not None and not c.closed and not self._take_token(c, now):
            log.warning("conn %d: flooding (pings), closing", conn)
            self._close(c, CLOSE_POLICY, "too many messages", at_once=True)
        return self._flush()

    def receive(self, conn: int, data: bytes | str, now: float) -> list[Effect]:
        """One frame from a connection: decode, check, act; answer errors, never raise."""
        self._out = []
        self._now = now
        c = self._conns.get(conn)
        if c is None or c.closed:
            return []
        if not self._take_token(c, now):
            log.warning("conn %d: flooding, closing", conn)
            self._close(c, CLOSE_POLICY, "too many messages", at_once=True)
            return self._flush()
        try:
            message = decode_client(data)
        except MessageError as exc:
            self._error(c, exc.code, exc.text)
            return self._flush()
        if isinstance(message, Hello):
            self._hello(c, message, now)
        elif c.player is None:
            if c.authenticating:
                self._error(c, "hello_pending", "wait for the welcome before anything else")
            else:
                self._error(c, "hello_first", "the first message must be a hello")
        else:
            self._dispatch(c, c.player, message, now)
        return self._flush()

    def disconnect(self, conn: int, now: float) -> list[Effect]:
        """The connection is gone. Its player keeps their place for the resume window."""
        self._now = now
        self._out = []
        c = self._conns.pop(conn, None)
        if c is None:
            return []
        held = self._addr_conns.get(c.key, 0) - 1
        if held > 0:
            self._addr_conns[c.key] = held
        else:
            self._addr_conns.pop(c.key, None)
        self._addr_full.discard(c.key)
        p = c.player
        if p is not None and p.conn == conn:
            p.conn = None
            p.gone_at = now
            self._timer(now + self.config.resume_window_s, "gone", p)
            log.info("%s disconnected (may resume for %ds)", p.name, self.config.resume_window_s)
            room = p.room
            if room is not None:
                if room.state in ("lobby", "finished"):
                    self._hand_over_if_away(room)
                self._room_changed(room, now)
        return self._flush()

    def tick(self, now: float) -> list[Effect]:
        """Fire every deadline that has passed: hello timeouts, countdowns, time limits, expiry."""
        self._out = []
        self._now = now
        timers = self._timers
        while timers and timers[0][0] <= now:
            _, _, kind, ref = heapq.heappop(timers)
            if kind == "hello":
                c = self._conns.get(ref)  # type: ignore[call-overload]
                if c is not None and c.player is None and not c.closed and not c.refusing:
                    self._close(c, CLOSE_POLICY, "no hello in time")
            elif kind == "password":
                assert isinstance(ref, _Conn)
                self._refuse_password(ref)
            elif kind == "password_turn":
                assert isinstance(ref, str)
                self._password_queue(ref, now)
            elif kind == "countdown":
                room = ref
                assert isinstance(room, _Room)
                alive = self._rooms.get(room.code) is room
                if alive and room.state == "countdown" and room.countdown_until <= now:
                    self._start_race(room, now)
            elif kind == "progress":
                room = ref
                assert isinstance(room, _Room)
                due = room.progress_due
                if due is not None and due <= now:
                    self._release_progress(room)
            elif kind == "limit":
                room = ref
                assert isinstance(room, _Room)
                self._enforce_limit(room, now)
            elif kind == "gone":
                p = ref
                assert isinstance(p, _Player)
                gone = p.gone_at
                if (
                    p.conn is None
                    and gone is not None
                    and gone + self.config.resume_window_s <= now
                ):
                    self._expire_player(p, now)
        return self._flush()

    def next_deadline(self) -> float | None:
        """When ``tick`` must next be called (monotonic seconds), or None."""
        return self._timers[0][0] if self._timers else None

    def committed(self, race_id: int, now: float) -> list[Effect]:
        """Storage has committed race ``race_id``: now, and only now, announce the result."""
        self._now = now
        self._out = []
        room = self._finishing.pop(race_id, None)
        if room is not None and room.race_id == race_id and self._rooms.get(room.code) is room:
            assert room.race is not None
            room.finishing = False
            room.state = "finished"
            code = self._public_code(room)
            room.result = Result(
                code=code, ranks=room.race.ranks(), salt=room.salt if code else None
            )
            log.info(
                "room %s: race %d over, %s; winner %s",
                room.code,
                race_id,
                code or "a secret deal",
                room.result.ranks[0].name if room.result.ranks else "-",
            )
            for m in room.members():
                self._send(m, room.result)
            self._hand_over_if_away(room)
            self._room_changed(room, now, progress=False)
        return self._flush()

    # -- handshake ------------------------------------------------------------------------

    def _hello(self, c: _Conn, msg: Hello, now: float) -> None:
        if c.player is not None or c.authenticating:
            self._error(c, "already_hello", "this connection already said hello")
            return
        if msg.v != PROTOCOL_VERSION:
            self._error(
                c,
                "version",
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {msg.v}",
            )
            self._close(c, CLOSE_VERSION, "unsupported protocol version")
            return
        if self.config.password is not None:
            self._password_turn(c, msg, now)
            return
        self._hello_checked(c, msg, now)

    def _hello_checked(self, c: _Conn, msg: Hello, now: float) -> None:
        """The rest of a hello, once any password is right: a token, or a name to register."""
        if msg.token is not None:
            p = self._tokens.get(msg.token)
            gone = p.gone_at if p is not None else None
            if p is not None and gone is not None and gone + self.config.resume_window_s <= now:
                self._expire_player(p, now)  # the window is over, even if no tick said so yet
                p = None
            if p is not None:
                self._attach(c, p, now)
            else:  # not in memory: storage knows every registered player
                c.authenticating = True
                self._out.append(Authenticate(c.id, None, msg.token))
            return
        if msg.name is None:
            self._error(c, "name_invalid", "a hello needs a name, or a token to resume")
            return
        try:
            name = normalize_name(msg.name)
        except ValueError as exc:
            self._error(c, "name_invalid", str(exc))
            return
        if not self._may_register(c, now):
            return
        c.authenticating = True
        self._out.append(Authenticate(c.id, name, None))

    def _may_register(self, c: _Conn, now: float) -> bool:
        """At most ``max_registrations_per_address`` names per window from one address.

        Counted when the hello goes to storage (a name taken by then is given back in
        ``hello_refused``), so hellos sent all at once cannot slip past the count.
        """
        cfg = self.config
        if not c.key or not cfg.max_registrations_per_address:  # no address, or no limit
            return True
        regs = self._addr_regs.get(c.key)
        if regs is None:
            regs = self._addr_regs[c.key] = deque()
            _forget_oldest(self._addr_regs)
        while regs and regs[0] <= now - cfg.registration_window_s:
            regs.popleft()
        if len(regs) >= cfg.max_registrations_per_address:
            wait = int(regs[0] + cfg.registration_window_s - now) + 1
            self._error(
                c,
                "too_many_names",
                f"{len(regs)} names were registered from your address lately;"
                f" say hello with your token, or try again in {wait} s",
            )
            return False
        regs.append(now)
        c.registering = True
        return True

    # -- the password of a private server ---------------------------------------------------

    def _password_turn(self, c: _Conn, msg: Hello, now: float) -> None:
        """Check a private server's password in its turn: an address's checks one at a time.

        Delaying only the answer to a wrong guess (as this server once did) costs nothing
        to a guesser who sends many guesses at once: the right one was welcomed at once.
        Here a check waits until its address's delay is over (a right password too), and
        checks arriving meanwhile queue behind it, so parallel guessing from one address
        is no faster than sequential. The server-wide budget (``_password_judge``) does the
        same for guesses from many addresses.
        """
        cfg = self.config
        st = self._pw.get(c.key)
        if st is None:
            st = self._pw[c.key] = _PasswordAddress()
            _forget_oldest(self._pw, keep=lambda s: bool(s.queue))
        if st.count and now - st.last > cfg.password_memory_s:
            st.count = 0
        c.authenticating = True  # nothing else is heard from this connection meanwhile
        if st.queue or st.next > now:
            if len(st.queue) >= cfg.password_queue or st.next - now > cfg.password_max_wait_s:
                self._password_busy(c)
                return
            c.refusing = True
            c.pending_hello = msg
            st.queue.append(c)
            self._password_wake(c.key, st)
            return
        self._password_judge(c, msg, st, now)

    def _password_wake(self, key: str, st: _PasswordAddress) -> None:
        if st.queue and st.timer_at != st.next:
            st.timer_at = st.next
            self._timer(st.next, "password_turn", key)

    def _password_queue(self, key: str, now: float) -> None:
        """An address's turn has come: judge its waiting checks while it stays its turn."""
        st = self._pw.get(key)
        if st is None:
            return
        if st.timer_at is not None and st.timer_at > now:
            return  # an older timer; the newer one comes
        st.timer_at = None
        while st.queue and st.next <= now:
            c = st.queue.popleft()
            msg = c.pending_hello
            c.pending_hello = None
            if c.closed or self._conns.get(c.id) is not c or msg is None:
                continue  # gave up waiting
            self._password_judge(c, msg, st, now)
        self._password_wake(key, st)

    def _password_judge(self, c: _Conn, msg: Hello, st: _PasswordAddress, now: float) -> None:
        """Compare the password (in constant time); a wrong one delays the address's next
        turn and is answered with an error and a 1008 close once that delay is over."""
        cfg = self.config
        spent = not self._password_budget_left(now) or self._pw_gate > now
        if not c.gated and spent and not self._trusted(c.key, now):
            # The server-wide budget of failures is spent, or checks wait for their turn
            # already (a refilled failure must not let a newcomer jump that queue): wait
            # for a server-wide turn.
            turn = max(now, self._pw_gate)
            if turn - now > cfg.password_max_wait_s:
                self._password_busy(c)
                return
            self._pw_gate = turn + cfg.password_global_window_s / max(
                1, cfg.password_global_failures
            )
            if turn > now:
                c.gated = True
                c.refusing = True
                c.pending_hello = msg
                st.queue.appendleft(c)  # the address waits with it: one check at a time
                st.next = max(st.next, turn)
                self._password_wake(c.key, st)
                return
        c.gated = False
        expected = cfg.password
        assert expected is not None
        if hmac.compare_digest((msg.password or "").encode(), expected.encode()):
            c.authenticating = c.refusing = False
            self._pw_trusted.pop(c.key, None)
            self._pw_trusted[c.key] = now
            _forget_oldest(self._pw_trusted)
            self._hello_checked(c, msg, now)
            return
        st.count += 1
        st.last = now
        self._pw_tokens = max(0.0, self._pw_tokens - 1.0)
        if self._pw_tokens < 1.0:  # the budget is spent: the next turn is one spacing away
            spacing = cfg.password_global_window_s / max(1, cfg.password_global_failures)
            self._pw_gate = max(self._pw_gate, now + spacing)
        over = min(st.count - cfg.password_free_failures, _MAX_EXPONENT)
        delay = min(2.0**over, cfg.password_max_delay_s) if over > 0 else 0.0
        st.next = now + delay
        log.warning("%s: wrong password (%d in a row)", c.address or f"conn {c.id}", st.count)
        c.refusing = True
        if delay:
            self._timer(st.next, "password", c)
        else:
            self._refuse_password(c)

    def _password_budget_left(self, now: float) -> bool:
        """Is a failure of the server-wide budget left (refilled over its window)?"""
        cfg = self.config
        capacity = float(cfg.password_global_failures)
        if self._pw_filled is not None:
            rate = capacity / cfg.password_global_window_s
            self._pw_tokens = min(capacity, self._pw_tokens + (now - self._pw_filled) * rate)
        self._pw_filled = now
        return self._pw_tokens >= 1.0

    def _trusted(self, key: str, now: float) -> bool:
        """Did this address give the right password lately? Then it skips the server-wide
        wait (its own failures still delay it): guessers elsewhere do not lock it out."""
        since = self._pw_trusted.get(key)
        return since is not None and now - since <= self.config.password_trust_s

    def _password_busy(self, c: _Conn) -> None:
        """Too many checks wait already: refuse at once, without judging the password (the
        answer says nothing about it), and let the client come back later (1013)."""
        text = "too many password checks are waiting; try again in a minute"
        self._out.append(Send(c.id, Error("password_busy", text)))
        self._close(c, CLOSE_TRY_LATER, "too many password checks, try again later")

    def _refuse_password(self, c: _Conn) -> None:
        if c.closed or self._conns.get(c.id) is not c:
            return
        text = "this server is private: the password is wrong or missing"
        self._out.append(Send(c.id, Error("password", text)))
        self._close(c, CLOSE_POLICY, "wrong password")

    def authenticated(
        self,
        conn: int,
        *,
        player_id: int,
        name: str,
        token: str,
        now: float,
        registered: float = 0.0,
        new: bool = False,
    ) -> list[Effect]:
        """Storage registered a name (``new``) or recognised a token: the connection is that
        player, whose name was registered at wall time ``registered``. A name registered for
        a connection that is gone by now (its client gave up waiting) is forgotten again:
        nobody got its token, so nobody could ever use the name, and it would stay taken for
        good."""
        self._out = []
        self._now = now
        c = self._conns.get(conn)
        if new and (c is None or c.closed or not c.authenticating):
            log.info("%s registered, but the connection is gone: forgetting it", name)
            self._out.append(Forget(player_id))
            return self._flush()
        if c is not None and not c.closed and c.authenticating:
            c.authenticating = False
            p = self._players.get(player_id)
            if p is None:
                p = _Player(player_id, name, token)
                self._players[player_id] = p
                log.info("%s said hello", name)
            elif p.token != token:  # a player restored after a restart: now we know it
                self._tokens.pop(p.token, None)
                p.token = token
            p.registered = registered
            self._tokens[token] = p
            self._attach(c, p, now)
        return self._flush()

    def hello_refused(self, conn: int, *, code: str, text: str, now: float) -> list[Effect]:
        """Storage refused the hello (name taken, unknown token, database away)."""
        self._out = []
        self._now = now
        c = self._conns.get(conn)
        if c is not None and not c.closed and c.authenticating:
            c.authenticating = False
            if c.registering:  # no name was registered (taken, or no database): not counted
                c.registering = False
                regs = self._addr_regs.get(c.key)
                if regs:
                    regs.pop()
            self._error(c, code, text)
        return self._flush()

    def _attach(self, c: _Conn, p: _Player, now: float) -> None:
        """Bind a connection to a player, replacing an older connection of theirs."""
        resumed = p.gone_at is not None or p.conn is not None
        if p.conn is not None and p.conn in self._conns:
            old = self._conns[p.conn]
            self._close(old, CLOSE_REPLACED, "replaced by a newer connection")
            old.player = None
        p.conn = c.id
        p.gone_at = None
        c.player = p
        if resumed:
            log.info("%s resumed", p.name)
        self._send(p, Welcome(PROTOCOL_VERSION, p.name, p.token, int(self.config.resume_window_s)))
        self._resync(p, now)
        if p.room is not None:  # the others see them connected again
            self._room_changed(p.room, now, skip=p)

    def _resync(self, p: _Player, now: float) -> None:
        """After a resume: the room, the player's own race, progress, and any result."""
        room = p.room
        if room is None:
            return
        self._send(p, self._room_msg(room, p))
        race = room.race
        if race is not None and room.state in ("racing", "finished"):
            runner = race.runners.get(p.name)
            if runner is not None and not p.spectator:
                self._send(p, self._race_msg(room, runner, now))
            self._send(p, Progress(race.elapsed_ms(now), race.progress(self._connected(room))))
        if room.state == "countdown":
            self._send(p, Countdown(max(0, int((room.countdown_until - now) * 1000))))
        if room.result is not None:
            self._send(p, room.result)

    # -- dispatch -------------------------------------------------------------------------

    def _dispatch(self, c: _Conn, p: _Player, msg: Message, now: float) -> None:
        if isinstance(msg, MoveMsg):
            self._move(c, p, msg.seq, msg.move, now)
        elif isinstance(msg, Undo):
            self._move(c, p, msg.seq, None, now)
        elif isinstance(msg, Create):
            self._create(c, p, msg, now)
        elif isinstance(msg, Join):
            self._join(c, p, msg.room, now, spectator=False)
        elif isinstance(msg, Watch):
            self._join(c, p, msg.room, now, spectator=True)
        elif isinstance(msg, Ready):
            self._ready(c, p, msg.ready, now)
        elif isinstance(msg, Start):
            self._start(c, p, now)
        elif isinstance(msg, Resign):
            self._resign(c, p, now)
        elif isinstance(msg, Leave):
            self._leave(c, p, now)
        elif isinstance(msg, Rematch):
            self._rematch(c, p, now)
        elif isinstance(msg, Daily):
            self._daily(c, p, now)
        elif isinstance(msg, Hint):
            self._hint(c, p, now)
        elif isinstance(msg, (BoardMsg, HistoryMsg)):
            limit = self.config.max_queries_per_connection
            if c.queries >= limit:
                self._error(
                    c,
                    "too_many_queries",
                    f"{c.queries} of your board or history requests are being answered;"
                    " wait for an answer before asking again",
                )
                return
            c.queries += 1
            self._out.append(Query(c.id, p.id, msg))

    def query_answered(self, conn: int, reply: Message, now: float) -> list[Effect]:
        """Storage answered a ``Query``: send the answer; the connection may ask again."""
        self._out = []
        self._now = now
        c = self._conns.get(conn)
        if c is not None:
            c.queries = max(0, c.queries - 1)
            if not c.closed:
                self._out.append(Send(conn, reply))
        return self._flush()

    def _create(self, c: _Conn, p: _Player, msg: Create, now: float) -> None:
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return
        if p.room is not None:
            self._error(c, "already_in_room", f"you are in room {p.room.code}; leave it first")
            return
        if msg.rules is not None and msg.code is not None:
            self._error(c, "bad_rules", "give either rules or a game code, not both")
            return
        fixed: GameCode | None = None
        try:
            if msg.code is not None:
                fixed = GameCode.parse(msg.code)
                rules = fixed.rules
            else:
                rules = Rules.parse(msg.rules if msg.rules is not None else "C")
        except (InvalidCodeError, InvalidRulesError) as exc:
            self._error(c, "bad_rules", str(exc))
            return
        if self._rooms_full():
            self._error(c, "server_full", "this server has no room for another room; try later")
            return
        held = self._addr_rooms.get(c.key, 0)
        if c.key and 0 < self.config.max_rooms_per_address <= held:
            self._error(
                c,
                "too_many_rooms",
                f"players from your address have {held} rooms open;"
                " join one, or wait until one closes",
            )
            return
        code = self._free_room_code()
        if code is None:
            self._error(c, "server_full", "no free room code; try again later")
            return
        deal = fixed or GameCode(rules, self._random_deal())
        room = _Room(code, p, rules, fixed, deal, msg.max_players, msg.undo, msg.time_limit)
        room.salt = None if fixed else self._new_salt()
        room.hints = msg.hints
        room.key = c.key
        self._addr_rooms[c.key] = held + 1
        room.players.append(p)
        p.room = room
        p.spectator = False
        self._rooms[code] = room
        log.info("%s created room %s (%s)", p.name, code, fixed or rules)
        self._room_changed(room, now, progress=False)

    def _join(self, c: _Conn, p: _Player, code: str, now: float, *, spectator: bool) -> None:
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return
        if p.room is not None:
            self._error(c, "already_in_room", f"you are in room {p.room.code}; leave it first")
            return
        room = self._rooms.get(code.strip().upper())
        if room is None or room.daily is not None:  # a daily attempt is private
            self._error(c, "no_such_room", f"there is no room {code.strip()[:16]!r}")
            return
        if not spectator:
            if room.state not in ("lobby", "finished"):
                self._error(c, "race_running", "this room is racing; watch it, or join after")
                return
            if len(room.players) >= room.max_players:
                self._error(
                    c, "room_full", f"room {room.code} is full ({room.max_players} players)"
                )
                return
            room.players.append(p)
        else:
            room.spectators.append(p)
        p.room = room
        p.spectator = spectator
        if spectator:
            self._room_changed(room, now, progress=False, skip=p)
            self._resync(p, now)
        else:
            self._room_changed(room, now, progress=False)

    def _ready(self, c: _Conn, p: _Player, ready: bool, now: float) -> None:
        room = self._room_as_player(c, p)
        if room is None:
            return
        if room.state != "lobby":
            self._error(c, "wrong_state", "ready is for the lobby, before the race")
            return
        if ready:
            room.ready.add(p.name)
        else:
            room.ready.discard(p.name)
        self._room_changed(room, now, progress=False)

    def _start(self, c: _Conn, p: _Player, now: float) -> None:
        room = self._room_as_host(c, p, "lobby", "starts the race", "the room is not in the lobby")
        if room is None:
            return
        waiting = [m.name for m in room.players if m is not p and m.name not in room.ready]
        if waiting:
            self._error(c, "not_ready", "not ready yet: " + ", ".join(waiting))
            return
        room.state = "countdown"
        room.countdown_until = now + self.config.countdown_s
        self._timer(room.countdown_until, "countdown", room)
        countdown = Countdown(int(self.config.countdown_s * 1000))
        for m in room.members():
            self._send(m, countdown)
        self._room_changed(room, now, progress=False)

    def _start_race(self, room: _Room, now: float) -> None:
        self._race_ids += 1
        room.race_id = self._race_ids
        room.race = Race(
            room.deal,
            [m.name for m in room.players],
            started=now,
            time_limit_s=room.time_limit,
            undo=room.undo,
        )
        room.started_wall = self._wall()
        room.ids = {m.name: m.id for m in room.players}
        room.uid = f"{self._boot}-{room.race_id}"
        room.journal_n = 0
        room.state = "racing"
        room.result = None
        self._limit_timers(room, room.race, now)
        self._out.append(
            Journal(
                LiveRace(
                    uid=room.uid,
                    room=room.code,
                    code=str(room.deal),
                    rules=str(room.rules),
                    daily_date=room.daily,
                    attempt=room.attempt,
                    undo=room.undo,
                    time_limit=room.time_limit,
                    max_players=room.max_players,
                    fixed=room.fixed is not None,
                    host_id=room.host.id,
                    players=tuple((m.id, m.name) for m in room.players),
                    started_wall=room.started_wall,
                    hints=room.hints,
                    salt=room.salt,
                    practice=room.practice,
                )
            )
        )
        log.info(
            "room %s: race %d started with %d players", room.code, room.race_id, len(room.players)
        )
        for m in room.players:
            runner = room.race.runners[m.name]
            self._send(m, self._race_msg(room, runner, now))
        self._room_changed(room, now)
        self._check_over(room)

    def _move(self, c: _Conn, p: _Player, seq: int, move: str | None, now: float) -> None:
        runner, race, room = self._runner(c, p, seq)
        if runner is None or race is None or room is None:
            return
        self._enforce_limit(room, now)
        if seq <= runner.last_seq:
            reply = race.replay_of(runner, seq)
            if reply is None:
                self._error(
                    c, "stale_seq", f"seq {seq} is older than the last {runner.last_seq}", seq=seq
                )
            else:
                self._send(p, reply)
            return
        if runner.done:
            self._error(c, "finished", f"your race is over ({runner.state.value})", seq=seq)
            return
        before = runner.state
        reply = (
            race.move(runner, seq, move, now) if move is not None else race.undo(runner, seq, now)
        )
        self._send(p, reply)
        if reply.TYPE != "refused":
            self._journal(room, p.id, seq, move or "undo", race.elapsed_ms(now))
            if runner.state is before:
                self._hold_progress(room, p, now)
            else:  # won, stuck, or unstuck: everyone sees it at once
                self._progress(room, now)
            self._check_over(room)

    def _resign(self, c: _Conn, p: _Player, now: float) -> None:
        runner, race, room = self._runner(c, p, None)
        if runner is None or race is None or room is None:
            return
        self._enforce_limit(room, now)
        if runner.done:
            self._error(c, "finished", f"your race is over ({runner.state.value})")
            return
        race.resign(runner, now)
        self._journal(room, p.id, None, "resign", race.elapsed_ms(now))
        log.info("room %s: %s resigned", room.code, p.name)
        self._progress(room, now)
        self._check_over(room)

    def _leave(self, c: _Conn, p: _Player, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        if not p.spectator and room.race is not None and room.state == "racing":
            runner = room.race.runners.get(p.name)
            if runner is not None and not runner.done:
                self._error(c, "in_race", "you are racing: resign first, then leave")
                return
            if runner is not None:  # a restart must not bring them back into the room
                self._journal(room, p.id, None, "leave", room.race.elapsed_ms(now))
        self._remove_member(room, p, now)
        self._send(p, Left(room.code))

    def _rematch(self, c: _Conn, p: _Player, now: float) -> None:
        room = self._room_as_host(
            c, p, "finished", "starts a rematch", "a rematch follows a finished race"
        )
        if room is None:
            return
        if room.daily is not None:
            self._error(c, "wrong_state", "a daily deal has no rematch; ask for the daily again")
            return
        room.state = "lobby"
        room.race = None
        room.result = None
        room.ready.clear()
        room.fixed = None  # a rematch is always a new deal, drawn at random
        room.deal = GameCode(room.rules, self._random_deal())
        room.salt = self._new_salt()
        self._room_changed(room, now, progress=False)

    # -- hints ------------------------------------------------------------------------------

    def _hint(self, c: _Conn, p: _Player, now: float) -> None:
        """The next move of a winning line from the runner's position, from the cache of
        lines already found or else from the solver (``Solve``: answered in ``hint_ready``)."""
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        if p.spectator:
            self._error(c, "not_player", "spectators watch; they cannot ask for hints")
            return
        if not room.hints:
            what = "a daily deal" if room.daily is not None else "this room"
            self._error(c, "hints_disabled", f"{what} allows no hints")
            return
        race = room.race
        if race is None or room.state not in ("racing", "finished"):
            self._error(c, "no_race", "the race has not started")
            return
        runner = race.runners.get(p.name)
        if runner is None:
            self._error(c, "not_player", "you are not in this race")
            return
        self._enforce_limit(room, now)
        if runner.done:
            self._error(c, "finished", f"your race is over ({runner.state.value})")
            return
        pending = self._hint_jobs.get(p.hint_request) if p.hint_request is not None else None
        if pending is not None and pending.uid == room.uid:  # (one of an earlier race: ignored)
            self._error(c, "wrong_state", "your last hint is still being worked out; wait for it")
            return
        position = runner.game.position()
        if p.hint_uid != room.uid:
            p.hint_uid, p.hint_answers = room.uid, {}
        known = p.hint_answers.get(position)
        if known is not None:
            self._give_hint(room, p, runner, HintAnswer(runner.last_seq, *known), now)
            return
        if len(self._hint_jobs) >= self.config.hint_queue_limit:
            self._error(c, "unavailable", "the server is working out many hints; ask again soon")
            return
        self._hint_ids += 1
        request = self._hint_ids
        self._hint_jobs[request] = _HintJob(p, room.uid, position, runner.last_seq)
        p.hint_request = request
        self._out.append(Solve(p.id, request, position, self.config.hint_budget_nodes))

    def hint_ready(
        self,
        player_id: int,
        request: int,
        *,
        verdict: str,
        moves: tuple[str, ...],
        now: float,
    ) -> list[Effect]:
        """The solver decided a hint's position: ``verdict`` ``won`` (with the winning line
        ``moves``), ``lost`` or ``unknown``. Remember it, and answer the player if they
        still race the race they asked in (the answer names the position's ``seq``)."""
        self._out = []
        self._now = now
        job = self._take_hint_job(player_id, request)
        if job is None:
            return self._flush()
        p = job.player
        known: tuple[str, str | None]
        if verdict == "won" and moves:
            known = ("win", moves[0])
        else:
            known = ("lost" if verdict == "lost" else "unknown", None)
        if p.hint_uid == job.uid:  # (not if the player has asked in another race since)
            answers = p.hint_answers
            if len(answers) > _HINT_CACHE:
                answers.clear()
            if known[0] == "win":
                # Every position along the line: a player who follows it is answered at once.
                game = Game.from_position(job.position)
                for move in moves:
                    answers[game.position()] = ("win", move)
                    game.play(move)
            answers[job.position] = known
        room = self._hint_room(job)
        if room is not None:
            assert room.race is not None
            self._enforce_limit(room, now)
            runner = room.race.runners.get(p.name)
            if runner is not None and not runner.done:
                self._give_hint(room, p, runner, HintAnswer(job.seq, *known), now)
        return self._flush()

    def hint_failed(self, player_id: int, request: int, *, now: float) -> list[Effect]:
        """The solver could not run (its worker process died): the player may ask again."""
        self._out = []
        self._now = now
        job = self._take_hint_job(player_id, request)
        if job is None:
            return self._flush()
        p = job.player
        c = self._conns.get(p.conn) if p.conn is not None else None
        if c is not None and self._hint_room(job) is not None:
            self._error(c, "unavailable", "the hint could not be worked out just now; ask again")
        return self._flush()

    def _take_hint_job(self, player_id: int, request: int) -> _HintJob | None:
        """The hint job ``request`` of this player, done now: the player may ask again."""
        job = self._hint_jobs.pop(request, None)
        if job is None or job.player.id != player_id:
            return None
        if job.player.hint_request == request:
            job.player.hint_request = None
        return job

    def _hint_room(self, job: _HintJob) -> _Room | None:
        """The room of a hint's race, if its player still races there."""
        p = job.player
        room = p.room
        if self._players.get(p.id) is not p or room is None or p.spectator:
            return None
        if room.uid != job.uid or room.race is None or room.state != "racing":
            return None
        if self._rooms.get(room.code) is not room:
            return None
        return room

    def _give_hint(
        self, room: _Room, p: _Player, runner: Runner, answer: HintAnswer, now: float
    ) -> None:
        """Send a hint; the first one a runner receives marks their run as hinted."""
        if p.conn is None:  # not received: kept in the cache for when they ask again
            return
        assert room.race is not None
        if not runner.hinted:
            runner.hinted = True
            self._journal(room, p.id, None, "hint", room.race.elapsed_ms(now))
            log.info("room %s: %s got a hint; the run ranks after unhinted ones", room.code, p.name)
        self._send(p, answer)

    # -- the daily deal ---------------------------------------------------------------------

    def _daily(self, c: _Conn, p: _Player, now: float) -> None:
        room = p.room
        if room is not None and room.daily is not None and room.state == "finished":
            self._remove_member(room, p, now)  # a finished attempt makes way for the next
        elif room is not None:
            self._error(c, "already_in_room", f"you are in room {room.code}; leave it first")
            return
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return
        # Every refusal comes before storage numbers the attempt: the room is reserved now.
        code = None if self._rooms_full() else self._free_room_code()
        if code is None:
            self._error(c, "server_full", "this server has no room for another room; try later")
            return
        self._daily_rooms[p.id] = code
        p.daily_pending = True
        self._out.append(BeginDaily(c.id, p.id, utc_date(self._wall())))

    def daily_begun(
        self,
        player_id: int,
        *,
        date: dt.date,
        attempt: int,
        deal: GameCode,
        par: int | None = None,
        salt: str | None = None,
        now: float,
    ) -> list[Effect]:
        """The day's deal is known (``server.daily``) and storage numbered the attempt: deal
        it now; the player's clock starts as it is sent. ``par`` goes to the player with it.

        Addressed by player, not connection: a player who reconnected meanwhile gets the deal
        on the new connection, and one who dropped meanwhile finds the attempt running when
        they resume, as after any drop during a race. The room was reserved when the player
        asked (``_daily``), so nothing here refuses a numbered attempt: only a player whose
        resume window ran out meanwhile has used it without playing.
        """
        self._out = []
        self._now = now
        code = self._daily_rooms.pop(player_id, None)
        p = self._players.get(player_id)
        if p is None or not p.daily_pending or code is None or code in self._rooms:
            log.info("player %d: daily attempt %d began with nobody to play it", player_id, attempt)
            return self._flush()
        p.daily_pending = False
        if p.room is not None:  # cannot happen: a pending daily refuses create and join
            log.warning("%s: daily attempt %d began while in a room", p.name, attempt)
            return self._flush()
        room = _Room(
            code, p, deal.rules, None, deal, 1, True, self.config.daily_time_limit, daily=date
        )
        room.attempt = attempt
        room.salt = salt
        young = not counts_on_board(p.registered, self._wall(), self.config.daily_min_age_s)
        room.practice = attempt > 1 or young
        room.players.append(p)
        p.room = room
        p.spectator = False
        self._rooms[code] = room
        log.info(
            "%s began daily %s, attempt %d%s",
            p.name,
            date,
            attempt,
            " (practice: registered too recently)" if young and attempt == 1 else "",
        )
        self._send(
            p,
            DailyDeal(
                date.isoformat(),
                attempt,
                room.practice,
                str(deal.rules),
                par,
                commitment=commitment(deal, salt) if salt else None,
            ),
        )
        self._start_race(room, now)
        return self._flush()

    def daily_refused(self, player_id: int, *, code: str, text: str, now: float) -> list[Effect]:
        self._out = []
        self._now = now
        self._daily_rooms.pop(player_id, None)
        p = self._players.get(player_id)
        if p is not None:
            p.daily_pending = False
            c = self._conns.get(p.conn) if p.conn is not None else None
            if c is not None:
                self._error(c, code, text)
        return self._flush()

    # -- room bookkeeping -------------------------------------------------------------------

    def _hand_over_if_away(self, room: _Room) -> None:
        """A host who is away must not hold the others back from starting or a rematch."""
        host = room.host
        if host.conn is None:
            present = [m for m in room.players if m.conn is not None]
            if present:
                room.ready.add(host.name)  # a host never says ready; keep them counted so
                room.host = present[0]

    def _rooms_full(self) -> bool:
        """No room may open: rooms and reserved daily rooms together reach the limit."""
        return len(self._rooms) + len(self._daily_rooms) >= self.config.max_rooms

    def _free_room_code(self) -> str | None:
        reserved = self._daily_rooms.values()
        for _ in range(100):  # 32**5 codes: a clash is rare, a run of them means something broke
            code = self._new_room_code()
            if code not in self._rooms and code not in reserved:
                return code
        return None

    def _room_as_player(self, c: _Conn, p: _Player) -> _Room | None:
        if p.room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return None
        if p.spectator:
            self._error(c, "not_player", "spectators watch; they cannot play")
            return None
        return p.room

    def _room_as_host(
        self, c: _Conn, p: _Player, state: str, action: str, wrong_state: str
    ) -> _Room | None:
        """The player's room if they host it and it is in ``state``; else answer an error."""
        room = self._room_as_player(c, p)
        if room is None:
            return None
        if room.host is not p:
            self._error(c, "not_host", f"only the host ({room.host.name}) {action}")
            return None
        if room.state != state:
            self._error(c, "wrong_state", f"{wrong_state} (it is {room.state})")
            return None
        return room

    def _runner(
        self, c: _Conn, p: _Player, seq: int | None
    ) -> tuple[Runner | None, Race | None, _Room | None]:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room", seq=seq)
            return None, None, None
        if p.spectator:
            self._error(c, "not_player", "spectators watch; they cannot play", seq=seq)
            return None, None, None
        race = room.race
        if race is None or room.state not in ("racing", "finished"):
            self._error(c, "no_race", "the race has not started", seq=seq)
            return None, None, None
        runner = race.runners.get(p.name)
        if runner is None:
            self._error(c, "not_player", "you are not in this race", seq=seq)
            return None, None, None
        return runner, race, room

    def _remove_member(self, room: _Room, p: _Player, now: float) -> None:
        if p in room.players:
            room.players.remove(p)
        if p in room.spectators:
            room.spectators.remove(p)
        room.ready.discard(p.name)
        p.room = None
        p.spectator = False
        if room.host is p and room.players:
            room.host = room.players[0]
        if not room.players:
            for s in list(room.spectators):
                self._send(s, Error("room_closed", f"room {room.code} closed: every player left"))
                s.room = None
                s.spectator = False
            room.spectators.clear()
            del self._rooms[room.code]
            if room.key:
                held = self._addr_rooms.get(room.key, 0) - 1
                if held > 0:
                    self._addr_rooms[room.key] = held
                else:
                    self._addr_rooms.pop(room.key, None)
            log.info("room %s closed", room.code)
            return
        self._room_changed(room, now)

    def _expire_player(self, p: _Player, now: float) -> None:
        """The resume window passed: abandon any race, leave the room, free the name."""
        room = p.room
        if room is not None:
            if room.race is not None and room.state == "racing" and not p.spectator:
                runner = room.race.runners.get(p.name)
                if runner is not None and not runner.done:
                    room.race.abandon(runner, now)
                    self._journal(room, p.id, None, "abandon", room.race.elapsed_ms(now))
                    log.info("room %s: %s abandoned the race", room.code, p.name)
                    self._check_over(room)
            self._remove_member(room, p, now)
        self._tokens.pop(p.token, None)
        self._players.pop(p.id, None)

    def _room_changed(
        self, room: _Room, now: float, *, progress: bool = True, skip: _Player | None = None
    ) -> None:
        """Every member (but ``skip``) gets the room again, and progress if it is racing."""
        for m in room.members():
            if m is not skip:
                self._send(m, self._room_msg(room, m))
        if progress and room.race is not None and room.state == "racing":
            self._progress(room, now, skip=skip)

    def _hold_progress(self, room: _Room, mover: _Player, now: float) -> None:
        """A move's ``progress`` waits ``progress_hold_s`` for newer moves in the room.

        Why: four fast players make a progress per move for each of them; held, one
        snapshot goes out per room per hold, built and encoded once, whatever the rate,
        and not to a runner whose own moves are all it shows. Any other frame to a member
        releases it first (``_send``), so it never arrives after something that happened
        later.
        """
        hold = self.config.progress_hold_s
        if hold <= 0:  # no hold: at once, to everyone (the worked examples of the docs)
            self._progress(room, now)
        elif room.progress_due is None:
            room.progress_due = now + hold
            room.progress_mover = mover
            self._timer(room.progress_due, "progress", room)
        elif room.progress_mover is not mover:
            room.progress_mover = None

    def _release_progress(self, room: _Room) -> None:
        due, mover = room.progress_due, room.progress_mover
        room.progress_due = room.progress_mover = None
        if due is not None and room.race is not None and room.state == "racing":
            self._progress(room, self._now, skip=mover)

    def _progress(self, room: _Room, now: float, *, skip: _Player | None = None) -> None:
        assert room.race is not None
        if room.progress_due is not None:  # a held one goes out now, to everyone
            room.progress_due = room.progress_mover = None
            skip = None
        msg = Progress(room.race.elapsed_ms(now), room.race.progress(self._connected(room)))
        for m in room.members():
            if m is not skip:
                self._send(m, msg)

    def _journal(self, room: _Room, player_id: int, seq: int | None, action: str, ms: int) -> None:
        room.journal_n += 1
        self._out.append(Journal(LiveAction(room.uid, room.journal_n, player_id, seq, ms, action)))

    # -- restarts ----------------------------------------------------------------------------

    def live_elapsed(self, now: float) -> dict[str, int]:
        """Each running race's clock, for the journal's checkpoints."""
        return {
            room.uid: room.race.elapsed_ms(now)
            for room in self._rooms.values()
            if room.race is not None and room.state == "racing"
        }

    def restore(
        self, live: LiveRace, actions: list[LiveAction], alive_ms: int, now: float
    ) -> list[Effect]:
        """Rebuild a race that was running when the server stopped, from its journal.

        Its clock resumes at ``alive_ms`` (the last moment the journal knew it was alive):
        the time the server was away is not charged. Every player starts disconnected, with
        a fresh resume window; a client that resumes learns the last ``seq`` the server
        has and resends any later move it had been told was accepted.
        """
        self._out = []
        self._now = now
        if live.room in self._rooms:
            log.error("restore: room %s exists already; race %s not restored", live.room, live.uid)
            return self._flush()
        players = []
        for pid, name in live.players:
            p = self._players.get(pid)
            if p is None:
                p = _Player(pid, name, "")
                self._players[pid] = p
                p.gone_at = now
                self._timer(now + self.config.resume_window_s, "gone", p)
            players.append(p)
        host = next((p for p in players if p.id == live.host_id), players[0])
        code = GameCode.parse(live.code)
        room = _Room(
            live.room,
            host,
            code.rules,
            code if live.fixed else None,
            code,
            live.max_players,
            live.undo,
            live.time_limit,
            daily=live.daily_date,
        )
        room.attempt = live.attempt
        room.practice = live.practice or live.attempt > 1
        room.hints = live.hints
        room.salt = live.salt
        room.players = players
        room.ready = {p.name for p in players}
        for p in players:
            p.room = room
            p.spectator = False
        self._race_ids += 1
        room.race_id = self._race_ids
        room.uid = live.uid
        room.ids = {p.name: p.id for p in players}
        room.started_wall = live.started_wall
        started = now - alive_ms / 1000
        race = Race(
            code,
            [p.name for p in players],
            started=started,
            time_limit_s=live.time_limit,
            undo=live.undo,
        )
        room.race = race
        room.state = "racing"
        names = {pid: name for pid, name in live.players}
        for a in sorted(actions, key=lambda a: a.n):
            runner = race.runners[names[a.player_id]]
            at = started + a.at_ms / 1000
            if a.action == "resign":
                race.resign(runner, at)
            elif a.action == "hint":
                runner.hinted = True
            elif a.action in ("abandon", "leave"):
                # Out of the room for good (the result stays in the race).
                if a.action == "abandon":
                    race.abandon(runner, at)
                gone = next(p for p in players if p.id == a.player_id)
                if gone in room.players:
                    room.players.remove(gone)
                    room.ready.discard(gone.name)
                    gone.room = None
            elif a.action == "undo":
                assert a.seq is not None
                race.undo(runner, a.seq, at)
            else:
                assert a.seq is not None
                reply = race.move(runner, a.seq, a.action, at)
                if reply.TYPE == "refused":  # cannot happen with an intact journal
                    log.error("restore %s: journaled move %s refused", live.uid, a.action)
            room.journal_n = max(room.journal_n, a.n)
        if room.host not in room.players and room.players:
            room.host = room.players[0]
        self._rooms[room.code] = room
        self._limit_timers(room, race, now)
        log.info(
            "room %s: race %s restored at %.1f s with %d actions",
            room.code,
            live.uid,
            alive_ms / 1000,
            len(actions),
        )
        self._enforce_limit(room, now)
        self._check_over(room)
        return self._flush()

    def _enforce_limit(self, room: _Room, now: float) -> None:
        """Past the time limit nobody plays on, whether or not the timer has fired yet; nor
        on a daily attempt once its day's code is public (``code_public``: only a race
        resumed after a restart, whose down time was not charged, can run that long)."""
        race = room.race
        if race is None or room.state != "racing":
            return
        if race.expire(now) or (
            room.daily is not None and code_public(room.daily, self._wall()) and race.cut(now)
        ):
            self._progress(room, now)
            self._check_over(room)

    def _limit_timers(self, room: _Room, race: Race, now: float) -> None:
        """Wake up at the race's time limit, and a daily attempt also when its code goes
        public if that comes first (wall time, so a moved clock at worst ends it late:
        every move checks too). That is never the case for an attempt begun on its day
        with the usual limit, so no timer holds an ordinary room for a day."""
        self._timer(race.deadline, "limit", room)
        if room.daily is not None:
            public = now + max(0.0, code_public_at(room.daily) - self._wall())
            if public < race.deadline:
                self._timer(public, "limit", room)

    def _check_over(self, room: _Room) -> None:
        """A race whose players are all done goes to storage; the result follows the commit."""
        race = room.race
        if room.state == "racing" and race is not None and not room.finishing and race.is_over():
            room.finishing = True
            self._finishing[room.race_id] = room
            ranks = {e.name: e for e in race.ranks()}
            rows = tuple(
                PlayerResult(
                    player_id=room.ids[r.name],
                    name=r.name,
                    rank=ranks[r.name].rank,
                    outcome=r.state.value,
                    time_ms=ranks[r.name].time_ms,
                    moves=r.game.move_count,
                    score=r.game.score,
                    foundations=r.game.cards_on_foundations,
                    undos=r.undos,
                    practice=room.practice,
                    journal=tuple(r.journal),
                    hinted=r.hinted,
                )
                for r in race.runners.values()
            )
            self._out.append(
                Persist(
                    RaceRecord(
                        uid=room.uid,
                        race_id=room.race_id,
                        room=None if room.daily else room.code,
                        code=str(room.deal),
                        rules=str(room.rules),
                        daily_date=room.daily,
                        started_wall=room.started_wall,
                        ended_wall=self._wall(),
                        results=rows,
                    )
                )
            )

    def _connected(self, room: _Room) -> dict[str, bool]:
        return {m.name: m.conn is not None for m in room.players}

    def _public_code(self, room: _Room) -> str | None:
        """A daily deal's code stays secret until ``code_public``; a race's, until its end."""
        if room.daily is not None:
            return str(room.deal) if code_public(room.daily, self._wall()) else None
        return str(room.deal) if room.fixed is not None or room.state == "finished" else None

    def _room_msg(self, room: _Room, viewer: _Player) -> RoomMsg:
        code = self._public_code(room)
        return RoomMsg(
            room=room.code,
            you="spectator" if viewer.spectator else "player",
            host=room.host.name,
            state=room.state,
            rules=str(room.rules),
            code=code,
            max_players=room.max_players,
            undo=room.undo,
            hints=room.hints,
            time_limit=room.time_limit,
            players=tuple(
                RoomPlayer(m.name, m is room.host or m.name in room.ready, m.conn is not None)
                for m in room.players
            ),
            spectators=len(room.spectators),
            commitment=commitment(room.deal, room.salt) if room.salt else None,
            salt=room.salt if code else None,
        )

    def _race_msg(self, room: _Room, runner: Runner, now: float) -> RaceMsg:
        assert room.race is not None
        game = runner.game
        return RaceMsg(
            view=game.view(),
            elapsed_ms=room.race.elapsed_ms(now),
            time_limit=room.time_limit,
            seq=runner.last_seq,
            score=game.score,
            moves=game.move_count,
            state=runner.state.value,
        )

    # -- plumbing ---------------------------------------------------------------------------

    def _timer(self, when: float, kind: str, ref: object) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (when, self._timer_seq, kind, ref))

    def _take_token(self, c: _Conn, now: float) -> bool:
        cfg = self.config
        c.tokens = min(cfg.bucket_capacity, c.tokens + (now - c.filled) * cfg.bucket_rate)
        c.filled = now
        if c.tokens < 1.0:
            return False
        c.tokens -= 1.0
        return True

    def _send(self, p: _Player, message: Message) -> None:
        room = p.room
        if (
            room is not None
            and room.progress_due is not None
            and not isinstance(message, _OVERTAKE)
        ):
            self._release_progress(room)
        if p.conn is not None:
            self._out.append(Send(p.conn, message))

    def _error(self, c: _Conn, code: str, text: str, *, seq: int | None = None) -> None:
        """Answer with an error; malformed messages also count towards the garbage limit.

        An error does not release a held ``progress``: it is about the sender's own
        message, and one player's bad input must not change what the others receive.
        """
        self._out.append(Send(c.id, Error(code, text, seq)))
        now = self._now
        if code in _STRIKE_CODES:
            strikes = c.strikes
            strikes.append(now)
            while strikes and strikes[0] <= now - self.config.strike_window_s:
                strikes.popleft()
            if len(strikes) > self.config.strike_limit:
                log.warning("conn %d: too many malformed messages, closing", c.id)
                self._close(c, CLOSE_POLICY, "too many malformed messages")

    def _close(self, c: _Conn, code: int, reason: str, *, at_once: bool = False) -> None:
        if not c.closed:
            c.closed = True
            self._out.append(Close(c.id, code, reason, at_once))

    def _flush(self) -> list[Effect]:
        out, self._out = self._out, []
        return out


_V = TypeVar("_V")


def _forget_oldest(table: dict[str, _V], *, keep: Callable[[_V], bool] = lambda _: False) -> None:
    """Bound a per-address table: past ``_MAX_REMEMBERED`` entries, forget the oldest
    tenth (insertion order), except those ``keep`` holds on to."""
    if len(table) <= _MAX_REMEMBERED:
        return
    oldest = itertools.islice(table.items(), _MAX_REMEMBERED // 10)
    for key in [k for k, v in oldest if not keep(v)]:
        del table[key]
