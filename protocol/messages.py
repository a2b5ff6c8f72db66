"""The wire protocol: typed messages and their msgpack encoding (docs/protocol.md).

Every websocket message is one binary frame holding one msgpack map whose ``"t"`` field
names its type. Each type here is a frozen dataclass with a field table (``FIELDS``) that
drives both directions: ``encode`` writes every field (``None`` as nil), ``decode`` checks
every field's type and bounds and raises ``MessageError`` with a stable code. Unknown keys
are ignored so that a newer peer can add fields without breaking an older one.

Pure code: the server and the client share it, and neither needs a socket to test it.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

import disarm
import msgpack
import regex

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_FRAME",
    "MAX_NAME",
    "name_key",
    "name_skeleton",
    "CLOSE_VERSION",
    "CLOSE_REPLACED",
    "CLOSE_TOO_SLOW",
    "MessageError",
    "Kind",
    "F",
    "Int",
    "Str",
    "Bool",
    "Opt",
    "ListOf",
    "from_fields",
    "to_fields",
    "normalize_name",
    "replace",
    "encode",
    "decode",
    "decode_client",
    "decode_server",
    "CLIENT_TYPES",
    "SERVER_TYPES",
    "PLAYER_STATES",
    "ROOM_STATES",
    # client -> server
    "Hello",
    "Create",
    "Join",
    "Watch",
    "Leave",
    "Ready",
    "Start",
    "MoveMsg",
    "Undo",
    "Resign",
    "Rematch",
    "Daily",
    "Board",
    "History",
    "Hint",
    "Replay",
    "PostMortem",
    "Ghost",
    "Finish",
    "Player",
    "Quick",
    # server -> client
    "Welcome",
    "Error",
    "Room",
    "RoomPlayer",
    "Left",
    "Countdown",
    "Race",
    "Accepted",
    "Refused",
    "Undone",
    "Progress",
    "PlayerProgress",
    "Result",
    "RankEntry",
    "DailyDeal",
    "BoardRow",
    "BoardPage",
    "HistoryRow",
    "HistoryPage",
    "HintAnswer",
    "ReplayPage",
    "PostMortemAnswer",
    "Route",
    "PlayerPage",
    "BestTime",
    "MAX_RATINGS",
    "Pool",
    "POOL_STATES",
    "NODE_ID_CHARS",
    "HINT_VERDICTS",
    "POSTMORTEM_STATUSES",
    "MAX_RACE_ID",
    "MAX_REPLAY_PAGE",
    "MAX_LINE",
    "MAX_WASTED",
    "BOARD_KINDS",
    "MAX_PAGE",
    "Message",
]

#: The protocol version this code speaks; a hello with another gets an error and a close.
PROTOCOL_VERSION = 1
#: Largest frame either side accepts, in bytes.
MAX_FRAME = 16 * 1024
#: Longest player name, in characters, after trimming.
MAX_NAME = 20
#: The longest a name's ``name_key`` and ``name_skeleton`` may be (their columns).
MAX_NAME_KEY = 80
MAX_NAME_SKELETON = 400

# Close codes the server uses besides the standard 1000, 1001, 1008, 1009 and 1011.
#: The hello asked for a protocol version this server does not speak.
CLOSE_VERSION = 4000
#: The same player connected again elsewhere; this older connection is closed.
CLOSE_REPLACED = 4001
#: The client stopped reading and its outgoing queue overflowed.
CLOSE_TOO_SLOW = 4002

_U31 = 2**31 - 1
_U63 = 2**63 - 1

#: What a player's race state can be.
PLAYER_STATES = ("playing", "stuck", "won", "resigned", "timeout", "abandoned")
#: What a room's state can be.
ROOM_STATES = ("lobby", "countdown", "racing", "finished")
#: What a hint can say of a position: a win from it (and its next move), no win, the
#: solver could not tell within its budget but offers the best move its search found
#: (``best``, not proven), or it could not tell and has no move to offer.
HINT_VERDICTS = ("win", "lost", "best", "unknown")
#: Which leaderboards there are.
BOARD_KINDS = ("daily", "deal", "archive")
#: Where a player stands in the quick-race pool (``pool.state``, docs/protocol.md 4.26).
POOL_STATES = ("waiting", "left")
#: What a post-mortem can say of a run (docs/protocol.md 4.22; ``solver.postmortem``).
POSTMORTEM_STATUSES = ("won", "lost", "open", "unwinnable", "unknown")
#: The longest race id (``<boot>-<number>``: 12 hex digits, a dash, a counter).
MAX_RACE_ID = 40
#: Most actions in one ``replay_page``: 500 of the longest (a time of 9 bytes, an action
#: of 8 characters) take under 10 KiB, so a page fits a frame (MAX_FRAME) with its fields.
MAX_REPLAY_PAGE = 500
#: Most moves of a winning line in a ``postmortem_answer`` (a line is about 90 to 150).
MAX_LINE = 512
#: Most wasted move numbers listed in a ``postmortem_answer`` (``wasted_total`` counts all).
MAX_WASTED = 1000
#: Most rows in one page of a leaderboard or a history: a full page of the longest names
#: still fits a frame (MAX_FRAME).
MAX_PAGE = 50


class MessageError(ValueError):
    """A frame that is not a valid message; ``code`` is the stable error code for the peer."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


# -- field kinds ----------------------------------------------------------------------------


class Kind:
    """A field's wire type and bounds; ``check`` returns the value or raises MessageError."""

    def check(self, value: object, where: str) -> Any:
        raise NotImplementedError

    def wire(self, value: Any) -> Any:
        return value


def _bad(where: str, what: str, value: object) -> MessageError:
    shown = type(value).__name__ if not isinstance(value, (int, str)) else repr(value)[:40]
    if value is None:
        shown = "nil"
    return MessageError("bad_field", f"field {where!r} must be {what}, got {shown}")


@dataclass(frozen=True)
class Int(Kind):
    lo: int
    hi: int

    def check(self, value: object, where: str) -> int:
        if type(value) is not int or not self.lo <= value <= self.hi:
            raise _bad(where, f"an integer from {self.lo} to {self.hi}", value)
        return value


@dataclass(frozen=True)
class Str(Kind):
    max_len: int
    choices: tuple[str, ...] = ()

    def check(self, value: object, where: str) -> str:
        if type(value) is not str:
            raise _bad(where, "a string", value)
        if len(value) > self.max_len:
            raise MessageError(
                "bad_field", f"field {where!r} is longer than {self.max_len} characters"
            )
        if self.choices and value not in self.choices:
            raise _bad(where, "one of " + ", ".join(self.choices), value)
        return value


@dataclass(frozen=True)
class Bool(Kind):
    def check(self, value: object, where: str) -> bool:
        if type(value) is not bool:
            raise _bad(where, "true or false", value)
        return value


@dataclass(frozen=True)
class Opt(Kind):
    """The inner kind, or nil."""

    inner: Kind

    def check(self, value: object, where: str) -> Any:
        return None if value is None else self.inner.check(value, where)

    def wire(self, value: Any) -> Any:
        return None if value is None else self.inner.wire(value)


@dataclass(frozen=True)
class ListOf(Kind):
    inner: Kind
    max_len: int

    def check(self, value: object, where: str) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise _bad(where, "an array", value)
        if len(value) > self.max_len:
            raise MessageError("bad_field", f"field {where!r} has more than {self.max_len} entries")
        return tuple(self.inner.check(v, f"{where}[{i}]") for i, v in enumerate(value))

    def wire(self, value: Any) -> Any:
        return [self.inner.wire(v) for v in value]


@dataclass(frozen=True)
class Pair(Kind):
    """A two-element array: ``[first, second]``, each of its own kind."""

    first: Kind
    second: Kind

    def check(self, value: object, where: str) -> tuple[Any, Any]:
        if not isinstance(value, list) or len(value) != 2:
            raise _bad(where, "an array of two", value)
        return (
            self.first.check(value[0], where + "[0]"),
            self.second.check(value[1], where + "[1]"),
        )

    def wire(self, value: Any) -> Any:
        return [self.first.wire(value[0]), self.second.wire(value[1])]


@dataclass(frozen=True)
class Obj(Kind):
    """A nested map with its own field table (``cls`` is a record dataclass)."""

    cls: type[Any]

    def check(self, value: object, where: str) -> Any:
        if not isinstance(value, dict):
            raise _bad(where, "a map", value)
        return from_fields(self.cls, value, where + ".")

    def wire(self, value: Any) -> Any:
        return to_fields(value)


@dataclass(frozen=True)
class F:
    """One field of a message: name on the wire, kind, and whether it may be left out."""

    name: str
    kind: Kind
    required: bool = True


def from_fields(cls: type[Any], data: Mapping[Any, Any], prefix: str = "") -> Any:
    """An instance of ``cls`` (a record with a ``FIELDS`` table) from a decoded map, every
    field checked; ``MessageError`` names the first bad one. Shared with the cluster's own
    messages between nodes (``server.cluster.bus``)."""
    kwargs = {}
    for f in cls.FIELDS:
        if f.name in data:
            kwargs[f.name] = f.kind.check(data[f.name], prefix + f.name)
        elif f.required:
            raise MessageError("bad_field", f"missing field {prefix + f.name!r}")
    return cls(**kwargs)


def to_fields(obj: Any) -> dict[str, Any]:
    """A record's fields as a map to encode (``from_fields`` reads it back)."""
    return {f.name: f.kind.wire(getattr(obj, f.name)) for f in obj.FIELDS}


# -- messages -------------------------------------------------------------------------------

_seq = F("seq", Int(1, _U31))
_ms = Int(0, _U63)
_state = Str(16, PLAYER_STATES)
_small = Int(0, _U31)
#: A rating, rounded (Glicko-2 on the Glicko scale: docs/ratings.md).
_rating = Int(-10000, 10000)
#: The most points of a rating history a ``player_page`` carries.
MAX_RATINGS = 200


# Client -> server ---------------------------------------------------------------------------


#: A game code field: the longest code is 35 characters (rules.md section 9), and a client
#: may send one with spaces around it.
_game_code = Str(48)
#: A commitment to a secret deal (64 hex digits) and the salt revealed with its code.
_commitment = Opt(Str(64))
_salt = Opt(Str(32))


@dataclass(frozen=True, slots=True)
class Hello:
    """First message of every connection: protocol version, name, and token when resuming."""

    TYPE: ClassVar[str] = "hello"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("v", Int(0, 65535)),
        F("name", Opt(Str(64)), False),
        F("token", Opt(Str(128)), False),
        F("password", Opt(Str(128)), False),
        F("follow", Bool(), False),
        F("bot", Bool(), False),
    )
    v: int
    name: str | None = None
    token: str | None = None
    #: Only for a private server (``yukon serve --password``).
    password: str | None = None
    #: The client follows a ``route`` to its room's node (docs/protocol.md 4.25): a client
    #: that does not say so is served through the cluster's relay, as before.
    follow: bool = False
    #: With a name: register a BOT account, for good (docs/bots.md). Ignored with a token.
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Create:
    """Create a room: a rules field with a random deal, or a game code; limits and options."""

    TYPE: ClassVar[str] = "create"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("rules", Opt(Str(8)), False),
        F("code", Opt(_game_code), False),
        F("max_players", Int(2, 8), False),
        F("undo", Bool(), False),
        F("time_limit", Int(30, 7200), False),
        F("hints", Bool(), False),
        F("rated", Bool(), False),
        F("bots", Bool(), False),
    )
    rules: str | None = None
    code: str | None = None
    max_players: int = 4
    undo: bool = True
    time_limit: int = 1800
    #: Runners may ask for hints (``hint``); a run that got one ranks after those without.
    hints: bool = False
    #: The race changes its runners' ratings (docs/ratings.md).
    rated: bool = False
    #: BOT accounts may join (docs/bots.md); a room a bot creates allows them anyway.
    bots: bool = False


@dataclass(frozen=True, slots=True)
class Join:
    TYPE: ClassVar[str] = "join"
    FIELDS: ClassVar[tuple[F, ...]] = (F("room", Str(16)),)
    room: str


@dataclass(frozen=True, slots=True)
class Watch:
    TYPE: ClassVar[str] = "watch"
    FIELDS: ClassVar[tuple[F, ...]] = (F("room", Str(16)),)
    room: str


@dataclass(frozen=True, slots=True)
class Leave:
    TYPE: ClassVar[str] = "leave"
    FIELDS: ClassVar[tuple[F, ...]] = ()


@dataclass(frozen=True, slots=True)
class Ready:
    TYPE: ClassVar[str] = "ready"
    FIELDS: ClassVar[tuple[F, ...]] = (F("ready", Bool(), False),)
    ready: bool = True


@dataclass(frozen=True, slots=True)
class Start:
    TYPE: ClassVar[str] = "start"
    FIELDS: ClassVar[tuple[F, ...]] = ()


@dataclass(frozen=True, slots=True)
class MoveMsg:
    """A move in move notation, numbered so that a resend is answered, not played twice."""

    TYPE: ClassVar[str] = "move"
    FIELDS: ClassVar[tuple[F, ...]] = (_seq, F("move", Str(16)))
    seq: int
    move: str


@dataclass(frozen=True, slots=True)
class Undo:
    TYPE: ClassVar[str] = "undo"
    FIELDS: ClassVar[tuple[F, ...]] = (_seq,)
    seq: int


@dataclass(frozen=True, slots=True)
class Finish:
    """Let the server play out the win once no card of your game is face down (every card
    is known to you already, so its moves reveal nothing); numbered like a move, so that a
    resend is answered, not played twice. Answered with ``race``, or ``refused``
    ``cannot_finish`` (docs/protocol.md 4.24)."""

    TYPE: ClassVar[str] = "finish"
    FIELDS: ClassVar[tuple[F, ...]] = (_seq,)
    seq: int


@dataclass(frozen=True, slots=True)
class Resign:
    """Give up the race. With a ``seq`` (numbered like a move) it is journaled with it and
    answered with ``race``, so that a client resends it after a resume like a move and a
    resign accepted just before a crash is never lost (docs/protocol.md 4.10, 4.19); nil
    (an older client): no answer but ``progress``, and not resent."""

    TYPE: ClassVar[str] = "resign"
    FIELDS: ClassVar[tuple[F, ...]] = (F("seq", Opt(Int(1, _U31)), False),)
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Rematch:
    TYPE: ClassVar[str] = "rematch"
    FIELDS: ClassVar[tuple[F, ...]] = ()


@dataclass(frozen=True, slots=True)
class Daily:
    """Play today's daily deal alone, now; the first attempt of the day is the one that counts.

    With ``date`` (``YYYY-MM-DD``): a past day's deal, as archive practice, once that day's
    code is public (docs/protocol.md 4.28); never on the day's board nor its deal's."""

    TYPE: ClassVar[str] = "daily"
    FIELDS: ClassVar[tuple[F, ...]] = (F("date", Opt(Str(10)), False),)
    date: str | None = None


@dataclass(frozen=True, slots=True)
class Board:
    """Ask for a leaderboard page: a day's daily deal, or one game code's deal."""

    TYPE: ClassVar[str] = "board"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("kind", Str(8, BOARD_KINDS)),
        F("date", Opt(Str(10)), False),
        F("code", Opt(_game_code), False),
        F("offset", Int(0, _U31), False),
        F("limit", Int(1, MAX_PAGE), False),
        F("around", Bool(), False),
    )
    kind: str
    date: str | None = None
    code: str | None = None
    offset: int = 0
    limit: int = 20
    around: bool = False


@dataclass(frozen=True, slots=True)
class History:
    """Ask for your own results, newest first, and your totals."""

    TYPE: ClassVar[str] = "history"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("offset", Int(0, _U31), False),
        F("limit", Int(1, MAX_PAGE), False),
    )
    offset: int = 0
    limit: int = 20


@dataclass(frozen=True, slots=True)
class Hint:
    """Ask for the next move of a winning line from your current position (a room with
    hints only); answered with ``hint_answer``."""

    TYPE: ClassVar[str] = "hint"
    FIELDS: ClassVar[tuple[F, ...]] = ()


_race_id = Str(MAX_RACE_ID)


@dataclass(frozen=True, slots=True)
class Replay:
    """Ask for one player's run in a finished race, to play it back: a page of its
    actions from ``offset`` on; answered with ``replay_page``."""

    TYPE: ClassVar[str] = "replay"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("race", _race_id),
        F("player", Str(64)),
        F("offset", Int(0, _U31), False),
    )
    race: str
    player: str
    offset: int = 0


@dataclass(frozen=True, slots=True)
class PostMortem:
    """Ask for the solver's post-mortem of one player's run in a finished race; answered
    with ``postmortem_answer``."""

    TYPE: ClassVar[str] = "postmortem"
    FIELDS: ClassVar[tuple[F, ...]] = (F("race", _race_id), F("player", Str(64)))
    race: str
    player: str


@dataclass(frozen=True, slots=True)
class Ghost:
    """Race a recorded run: a one-player practice room on its deal, where the run plays
    alongside at its real pace (docs/protocol.md 4.23). ``race`` names a stored race;
    nil asks for ``player``'s run on today's daily board, once your own counted attempt
    at today's deal is over. Answered with ``room`` (a lobby), or an ``error``."""

    TYPE: ClassVar[str] = "ghost"
    FIELDS: ClassVar[tuple[F, ...]] = (F("race", Opt(_race_id)), F("player", Str(64)))
    race: str | None
    player: str


@dataclass(frozen=True, slots=True)
class Player:
    """Ask for a player's page: rating and its history, races, wins, best times, streak
    (docs/protocol.md 4.27)."""

    TYPE: ClassVar[str] = "player"
    FIELDS: ClassVar[tuple[F, ...]] = (F("name", Str(64)),)
    name: str


@dataclass(frozen=True, slots=True)
class Quick:
    """Enter the public quick-race pool (``leave``: leave it); docs/protocol.md 4.26."""

    TYPE: ClassVar[str] = "quick"
    FIELDS: ClassVar[tuple[F, ...]] = (F("leave", Bool(), False),)
    leave: bool = False


# Server -> client ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    TYPE: ClassVar[str] = "welcome"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("v", Int(0, 65535)),
        F("name", Str(MAX_NAME)),
        F("token", Str(128)),
        F("resume_s", _small),
        F("room", Opt(Str(16)), False),  # sent always; optional only for an older server
        # Ratings and streaks (docs/protocol.md 4.27): sent always; optional for an older
        # server.
        F("rating", Opt(_rating), False),
        F("provisional", Bool(), False),
        F("streak", _small, False),
        F("best_streak", _small, False),
        F("next_daily_ms", Opt(_ms), False),  # dailydeck: the countdown (4.28)
        F("bot", Bool(), False),  # issue 40: this is a BOT account (docs/bots.md)
    )
    v: int
    name: str
    token: str
    resume_s: int
    #: The room this player is back in (its ``room`` message follows at once), or nil: a
    #: client that lost its connection learns here, without waiting, whether its place
    #: was kept (docs/protocol.md 4.15).
    room: str | None = None
    #: The player's rating, rounded (nil: no rated race yet), and whether it is provisional.
    rating: int | None = None
    provisional: bool = True
    #: Consecutive UTC days with a won counted daily attempt, now and at best.
    streak: int = 0
    best_streak: int = 0
    # -- dailydeck (issue 29): the countdown ------------------------------------------------
    #: Milliseconds until the next UTC day by the server's clock: a client counts down from
    #: when it received this, never from its own wall clock (docs/protocol.md 4.28).
    next_daily_ms: int | None = None
    #: This is a BOT account (registered with ``hello.bot``; docs/bots.md).
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Error:
    TYPE: ClassVar[str] = "error"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("code", Str(32)),
        F("text", Str(512)),
        F("seq", Opt(Int(1, _U31)), False),
    )
    code: str
    text: str
    seq: int | None = None


#: What a node id may be made of (``route``; ``yukon serve --node-id``): it goes into a
#: URL's query and a load balancer's backend name as it is.
NODE_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


@dataclass(frozen=True, slots=True)
class Route:
    """Your room lives on node ``node``: reconnect with ``?node=<node>`` and resume there
    (docs/protocol.md 4.25). Sent only to a client whose hello said ``follow``, by the room's
    own node, when the client reached it through another node: every frame of theirs would
    otherwise cross the cluster's relay twice."""

    TYPE: ClassVar[str] = "route"
    FIELDS: ClassVar[tuple[F, ...]] = (F("node", Str(64)), F("room", Str(16)))
    node: str
    room: str


@dataclass(frozen=True, slots=True)
class Pool:
    """Where you stand in the quick-race pool (docs/protocol.md 4.26): sent on entering,
    when the number waiting changes (at most once a second), and on leaving."""

    TYPE: ClassVar[str] = "pool"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("state", Str(16, POOL_STATES)),
        F("waiting", _small),
        F("waited_ms", _small),
        F("max_wait_ms", _small),
        F("band", _small),
        F("usual", Opt(Str(128)), False),
    )
    state: str
    #: Players waiting now, you included (the whole cluster's pool).
    waiting: int
    waited_ms: int
    #: The longest anyone waits for a race while another player waits too.
    max_wait_ms: int
    #: The rating half-width you are matched within now (it widens as you wait).
    band: int
    #: When others usually play, from stored races ("most races start 18:00-22:00 UTC"),
    #: or None: too few races stored to say.
    usual: str | None = None


@dataclass(frozen=True, slots=True)
class RoomPlayer:
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("name", Str(MAX_NAME)),
        F("ready", Bool()),
        F("connected", Bool()),
        F("rating", Opt(_rating), False),  # sent always; optional for an older server
        F("provisional", Bool(), False),
        F("bot", Bool(), False),  # a BOT account (docs/bots.md); sent always
    )
    name: str
    ready: bool
    connected: bool
    #: The player's rating, rounded; nil for a player who has none yet.
    rating: int | None = None
    provisional: bool = False
    #: A BOT account: clients show it with a BOT badge.
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Room:
    """Everything about a room a member may know; sent whenever any of it changes."""

    TYPE: ClassVar[str] = "room"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("room", Str(16)),
        F("you", Str(16, ("player", "spectator"))),
        F("host", Str(MAX_NAME)),
        F("state", Str(16, ROOM_STATES)),
        F("rules", Str(8)),
        F("code", Opt(_game_code)),
        F("max_players", Int(1, 8)),  # 1: a daily attempt's private room
        F("undo", Bool()),
        F("hints", Bool(), False),  # sent always; optional only for an older server's rooms
        F("time_limit", Int(30, 7200)),
        F("players", ListOf(Obj(RoomPlayer), 8)),
        F("spectators", _small),
        F("commitment", _commitment, False),  # sent always; optional for an older server
        F("salt", _salt, False),
        F("ghost", Opt(Str(MAX_NAME)), False),  # sent always; optional for an older server
        F("rated", Bool(), False),  # sent always; optional for an older server
        F("quick", Bool(), False),  # issue 29: optional, an older server leaves it out
        F("bots", Bool(), False),  # issue 40: BOT accounts may join; optional for an older one
    )
    room: str
    you: str
    host: str
    state: str
    rules: str
    code: str | None
    max_players: int
    undo: bool
    time_limit: int
    players: tuple[RoomPlayer, ...]
    spectators: int
    #: Runners may ask for hints (never in a daily room).
    hints: bool = False
    #: For a deal the server drew in secret: SHA-256 of "<code>:<salt>" (docs/protocol.md).
    commitment: str | None = None
    #: Revealed with ``code``, so that anyone can check ``commitment``.
    salt: str | None = None
    #: A ghost room (``ghost``): the name of the runner whose recorded run it races.
    ghost: str | None = None
    #: Its races change their runners' ratings (docs/ratings.md).
    rated: bool = False
    #: A room the quick-race pool formed (docs/protocol.md 4.26).
    quick: bool = False
    #: BOT accounts may join it (docs/bots.md).
    bots: bool = False


@dataclass(frozen=True, slots=True)
class Left:
    """The answer to ``leave``: you are out of the room."""

    TYPE: ClassVar[str] = "left"
    FIELDS: ClassVar[tuple[F, ...]] = (F("room", Str(16)),)
    room: str


@dataclass(frozen=True, slots=True)
class Countdown:
    TYPE: ClassVar[str] = "countdown"
    FIELDS: ClassVar[tuple[F, ...]] = (F("ms", _small),)
    ms: int


@dataclass(frozen=True, slots=True)
class Race:
    """A player's whole race state: at the start, and again on resume."""

    TYPE: ClassVar[str] = "race"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("view", Str(256)),
        F("elapsed_ms", _ms),
        F("time_limit", Int(30, 7200)),
        F("seq", Int(0, _U31)),
        F("score", _small),
        F("moves", _small),
        F("state", _state),
    )
    view: str
    elapsed_ms: int
    time_limit: int
    seq: int
    score: int
    moves: int
    state: str


@dataclass(frozen=True, slots=True)
class Accepted:
    TYPE: ClassVar[str] = "accepted"
    FIELDS: ClassVar[tuple[F, ...]] = (
        _seq,
        F("move", Str(16)),
        F("turned", Opt(Str(2))),
        F("score", _small),
        F("moves", _small),
        F("foundations", Int(0, 52)),
        F("state", _state),
        F("elapsed_ms", _ms),
    )
    seq: int
    move: str
    turned: str | None
    score: int
    moves: int
    foundations: int
    state: str
    elapsed_ms: int


@dataclass(frozen=True, slots=True)
class Refused:
    TYPE: ClassVar[str] = "refused"
    FIELDS: ClassVar[tuple[F, ...]] = (
        _seq,
        F("code", Str(32)),
        F("reason", Str(256)),
    )
    seq: int
    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class Undone:
    TYPE: ClassVar[str] = "undone"
    FIELDS: ClassVar[tuple[F, ...]] = (
        _seq,
        F("move", Str(16)),
        F("view", Str(256)),
        F("score", _small),
        F("moves", _small),
        F("foundations", Int(0, 52)),
        F("state", _state),
        F("elapsed_ms", _ms),
    )
    seq: int
    move: str
    view: str
    score: int
    moves: int
    foundations: int
    state: str
    elapsed_ms: int


@dataclass(frozen=True, slots=True)
class PlayerProgress:
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("name", Str(MAX_NAME)),
        F("state", _state),
        F("foundations", Int(0, 52)),
        F("score", _small),
        F("moves", _small),
        F("time_ms", Opt(_ms)),
        F("connected", Bool()),
    )
    name: str
    state: str
    foundations: int
    score: int
    moves: int
    time_ms: int | None
    connected: bool


@dataclass(frozen=True, slots=True)
class Progress:
    TYPE: ClassVar[str] = "progress"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("elapsed_ms", _ms),
        F("players", ListOf(Obj(PlayerProgress), 8)),
        F("ghost", Opt(Obj(PlayerProgress)), False),  # sent always; optional for an older server
    )
    elapsed_ms: int
    players: tuple[PlayerProgress, ...]
    #: In a ghost room: the recorded run where it stood at ``elapsed_ms`` (not a runner:
    #: outside ``players``, so that no client takes it for one).
    ghost: PlayerProgress | None = None


@dataclass(frozen=True, slots=True)
class RankEntry:
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("rank", Int(1, 8)),
        F("name", Str(MAX_NAME)),
        F("outcome", _state),
        F("time_ms", _ms),
        F("moves", _small),
        F("score", _small),
        F("foundations", Int(0, 52)),
        F("hinted", Bool(), False),  # sent always; optional only for an older server's result
        F("rating", Opt(_rating), False),  # sent always; optional for an older server
        F("rating_change", Opt(Int(-10000, 10000)), False),
        F("bot", Bool(), False),  # a BOT account (docs/bots.md); sent always
    )
    rank: int
    name: str
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    #: The runner got a hint in this race: ranked after every runner who did not.
    hinted: bool = False
    #: The runner's rating after the race (nil: none yet), and what this race changed
    #: (nil in an unrated race).
    rating: int | None = None
    rating_change: int | None = None
    #: A BOT account: clients show it with a BOT badge.
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Result:
    """The ranks of a finished race and its game code (nil for today's daily deal)."""

    TYPE: ClassVar[str] = "result"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("code", Opt(_game_code)),
        F("ranks", ListOf(Obj(RankEntry), 8)),
        F("salt", _salt, False),  # sent always; optional for an older server
        F("race", Opt(_race_id), False),  # sent always; optional for an older server
        F("ghost", Opt(Obj(RankEntry)), False),  # sent always; optional for an older server
    )
    code: str | None
    ranks: tuple[RankEntry, ...]
    #: With ``code``, for a deal the room's ``commitment`` named: what checks it.
    salt: str | None = None
    #: The race's id: what ``replay`` and ``postmortem`` ask for.
    race: str | None = None
    #: In a ghost room: the recorded run's own final figures, for comparison; ``rank`` is
    #: where they would rank among ``ranks`` (which they do not change).
    ghost: RankEntry | None = None


@dataclass(frozen=True, slots=True)
class HintAnswer:
    """The answer to ``hint``, for the position after the runner's move or undo ``seq``:
    the next move of a winning line (``win``), no win from there (``lost``), the best move
    the solver found when its budget ran out (``best``: not proven to win), or
    ``unknown`` (the budget ran out, no move to offer). A client that moved since
    discards it."""

    TYPE: ClassVar[str] = "hint_answer"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("seq", Int(0, _U31)),
        F("verdict", Str(8, HINT_VERDICTS)),
        F("move", Opt(Str(16))),
    )
    seq: int
    verdict: str
    move: str | None


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """Sent just before the ``race`` of a daily attempt: which day, which attempt."""

    TYPE: ClassVar[str] = "daily_deal"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("date", Str(10)),
        F("attempt", Int(1, _U31)),
        F("practice", Bool()),
        F("rules", Str(8)),
        F("par", Opt(Int(0, _U31)), False),
        F("commitment", _commitment, False),  # sent always; optional for an older server
        F("archive", Bool(), False),  # dailydeck: a past day's deal, as practice (4.28)
        F("next_daily_ms", Opt(_ms), False),  # dailydeck: the countdown (4.28)
    )
    date: str
    attempt: int
    practice: bool
    rules: str
    #: The length of the solver's winning line without wasted moves (``docs/solver.md``).
    par: int | None = None
    #: The day's commitment (nil for a day chosen before commitments existed).
    commitment: str | None = None
    # -- dailydeck (issue 29) -----------------------------------------------------------------
    #: A past day's deal played from the archive: practice, on that day's archive board only.
    archive: bool = False
    #: Milliseconds until the next UTC day by the server's clock (docs/protocol.md 4.28).
    next_daily_ms: int | None = None


@dataclass(frozen=True, slots=True)
class BoardRow:
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("rank", Int(1, _U63)),
        F("name", Str(MAX_NAME)),
        F("outcome", _state),
        F("time_ms", _ms),
        F("moves", _small),
        F("score", _small),
        F("foundations", Int(0, 52)),
        F("undos", _small),
        F("hinted", Bool(), False),  # sent always; optional only for an older server
        F("race", Opt(_race_id), False),  # sent always; optional for an older server
        F("rating", Opt(_rating), False),  # sent always; optional for an older server
        F("streak", Opt(_small), False),
    )
    rank: int
    name: str
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    #: The run used a hint (docs/protocol.md 4.21): it ranks after every run without one.
    hinted: bool = False
    #: The race the row's run was in: ``replay`` {``race``, ``name``} plays it back.
    race: str | None = None
    #: The player's current rating (nil: none yet).
    rating: int | None = None
    #: A daily board's row: the player's current daily streak (nil on other boards).
    streak: int | None = None


@dataclass(frozen=True, slots=True)
class BoardPage:
    """A page of a leaderboard; ``you`` is the asker's own row wherever it stands."""

    TYPE: ClassVar[str] = "board_page"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("kind", Str(8, BOARD_KINDS)),
        F("date", Opt(Str(10))),
        F("code", Opt(_game_code)),
        F("total", Int(0, _U63)),
        F("offset", Int(0, _U63)),
        F("rows", ListOf(Obj(BoardRow), MAX_PAGE)),
        F("you", Opt(Obj(BoardRow))),
        F("par", Opt(Int(0, _U31)), False),
        F("commitment", _commitment, False),  # sent always; optional for an older server
        F("salt", _salt, False),
        F("next_daily_ms", Opt(_ms), False),  # dailydeck: the countdown (4.28)
    )
    kind: str
    date: str | None
    code: str | None
    total: int
    offset: int
    rows: tuple[BoardRow, ...]
    you: BoardRow | None
    #: A daily board's par: the day's deal is won in this many moves (``docs/solver.md``).
    par: int | None = None
    #: A daily board's commitment to the day's deal, public from the day's start.
    commitment: str | None = None
    #: Revealed with the day's ``code``.
    salt: str | None = None
    # -- dailydeck (issue 29) -----------------------------------------------------------------
    #: Milliseconds until the next UTC day by the server's clock (docs/protocol.md 4.28).
    next_daily_ms: int | None = None


@dataclass(frozen=True, slots=True)
class HistoryRow:
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("finished_ms", _ms),
        F("code", Opt(_game_code)),
        F("room", Opt(Str(16))),
        F("date", Opt(Str(10))),
        F("practice", Bool()),
        F("outcome", _state),
        F("rank", Int(1, 8)),
        F("players", Int(1, 8)),
        F("time_ms", _ms),
        F("moves", _small),
        F("score", _small),
        F("foundations", Int(0, 52)),
        F("undos", _small),
        F("hinted", Bool(), False),  # sent always; optional only for an older server
        F("race", Opt(_race_id), False),  # sent always; optional for an older server
    )
    finished_ms: int
    code: str | None
    room: str | None
    date: str | None
    practice: bool
    outcome: str
    rank: int
    players: int
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    #: The run used a hint.
    hinted: bool = False
    #: The race: ``replay`` {``race``, your name} plays your run back.
    race: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Your results, newest first, and your totals over every result."""

    TYPE: ClassVar[str] = "history_page"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("games", Int(0, _U63)),
        F("wins", Int(0, _U63)),
        F("best_time_ms", Opt(_ms)),
        F("offset", Int(0, _U63)),
        F("rows", ListOf(Obj(HistoryRow), MAX_PAGE)),
    )
    games: int
    wins: int
    best_time_ms: int | None
    offset: int
    rows: tuple[HistoryRow, ...]


@dataclass(frozen=True, slots=True)
class BestTime:
    """A player's best win time with one rules field (unhinted wins only)."""

    FIELDS: ClassVar[tuple[F, ...]] = (F("rules", Str(8)), F("time_ms", _ms))
    rules: str
    time_ms: int


@dataclass(frozen=True, slots=True)
class PlayerPage:
    """The answer to ``player``: a player's page (docs/protocol.md 4.27)."""

    TYPE: ClassVar[str] = "player_page"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("name", Str(MAX_NAME)),
        F("rating", Opt(_rating)),
        F("provisional", Bool()),
        F("deviation", Opt(Int(0, 10000))),
        F("races", Int(0, _U63)),
        F("wins", Int(0, _U63)),
        F("best", ListOf(Obj(BestTime), 64)),
        F("streak", _small),
        F("best_streak", _small),
        F("ratings", ListOf(Pair(_ms, _rating), MAX_RATINGS)),
    )
    name: str
    rating: int | None
    provisional: bool
    #: The rating's deviation, rounded: about a 95 % chance the player's strength is
    #: within twice this of ``rating``.
    deviation: int | None
    races: int
    wins: int
    best: tuple[BestTime, ...]
    streak: int
    best_streak: int
    #: ``[t_ms, rating]`` after each rated race (UTC epoch ms), oldest first, the newest 200.
    ratings: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class ReplayPage:
    """One player's run in a finished race: the deal, the outcome, and a page of the
    accepted actions with their times on the race clock (docs/protocol.md 4.22)."""

    TYPE: ClassVar[str] = "replay_page"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("race", _race_id),
        F("player", Str(MAX_NAME)),
        F("code", _game_code),
        F("rules", Str(8)),
        F("room", Opt(Str(16))),
        F("date", Opt(Str(10))),
        F("practice", Bool()),
        F("finished_ms", _ms),
        F("players", ListOf(Str(MAX_NAME), 8)),
        F("rank", Int(1, 8)),
        F("outcome", _state),
        F("time_ms", _ms),
        F("moves", _small),
        F("score", _small),
        F("foundations", Int(0, 52)),
        F("undos", _small),
        F("hinted", Bool()),
        F("total", _small),
        F("offset", _small),
        F("actions", ListOf(Pair(_ms, Str(16)), MAX_REPLAY_PAGE)),
    )
    race: str
    player: str
    code: str
    rules: str
    room: str | None
    date: str | None
    practice: bool
    finished_ms: int
    #: Every runner of the race, in rank order: each has a run to replay.
    players: tuple[str, ...]
    rank: int
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    hinted: bool
    #: How many actions the run has; ``actions`` holds those from ``offset`` on.
    total: int
    offset: int
    #: ``(ms, action)``: the race clock when it was accepted, and a move or ``undo``.
    actions: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class PostMortemAnswer:
    """The solver's post-mortem of a run (docs/protocol.md 4.22): where a lost run lost
    the deal and how it could still have been won, or what a won run wasted."""

    TYPE: ClassVar[str] = "postmortem_answer"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("race", _race_id),
        F("player", Str(MAX_NAME)),
        F("status", Str(12, POSTMORTEM_STATUSES)),
        F("last_winnable", Opt(_small)),
        F("losing_move", Opt(Str(16))),
        F("lost_from", Opt(_small)),
        F("line", ListOf(Str(16), MAX_LINE)),
        F("par", Opt(_small)),
        F("kept", Opt(_small)),
        F("wasted", ListOf(Int(1, _U31), MAX_WASTED)),
        F("wasted_total", _small),
        F("budget", _small),
    )
    race: str
    player: str
    status: str
    last_winnable: int | None
    losing_move: str | None
    lost_from: int | None
    line: tuple[str, ...]
    par: int | None
    kept: int | None
    wasted: tuple[int, ...]
    wasted_total: int
    #: Positions each solve could search: the same answer on any machine for the same run.
    budget: int


Message: TypeAlias = Any  # any of the message classes above

CLIENT_TYPES: dict[str, type[Any]] = {
    c.TYPE: c
    for c in (
        Hello,
        Create,
        Join,
        Watch,
        Leave,
        Ready,
        Start,
        MoveMsg,
        Undo,
        Resign,
        Rematch,
        Daily,
        Board,
        History,
        Hint,
        Replay,
        PostMortem,
        Ghost,
        Finish,
        Player,
        Quick,
    )
}
SERVER_TYPES: dict[str, type[Any]] = {
    c.TYPE: c
    for c in (
        Welcome,
        Error,
        Room,
        Left,
        Countdown,
        Race,
        Accepted,
        Refused,
        Undone,
        Progress,
        Result,
        DailyDeal,
        BoardPage,
        HistoryPage,
        HintAnswer,
        ReplayPage,
        PostMortemAnswer,
        Route,
        PlayerPage,
        Pool,
    )
}


# -- encoding -------------------------------------------------------------------------------


#: One packer for every message: building one per call costs more than the packing.
#: (``pack`` resets it after each message and never leaves C, so sharing it is safe.)
_PACKER = msgpack.Packer(use_bin_type=True)


def encode(message: Message) -> bytes:
    """The msgpack bytes of a message: a map with ``t`` first, then every field."""
    body: dict[str, Any] = {"t": message.TYPE}
    body.update(to_fields(message))
    data: bytes = _PACKER.pack(body)
    return data


def _unpack(data: bytes | str) -> dict[Any, Any]:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MessageError("bad_frame", "messages are binary frames holding msgpack")
    if len(data) > MAX_FRAME:
        raise MessageError("too_big", f"a message is at most {MAX_FRAME} bytes")
    try:
        body = msgpack.unpackb(bytes(data), raw=False, strict_map_key=False)
    except Exception as exc:  # the C unpacker raises several unrelated types
        raise MessageError(
            "bad_msgpack", f"the frame is not valid msgpack ({type(exc).__name__})"
        ) from None
    if not isinstance(body, dict):
        raise MessageError("bad_message", "a message is a msgpack map")
    return body


def _decode(data: bytes | str, types: Mapping[str, type[Any]]) -> Message:
    body = _unpack(data)
    kind = body.get("t")
    if not isinstance(kind, str):
        raise MessageError("bad_message", "a message needs a string field 't' naming its type")
    cls = types.get(kind)
    if cls is None:
        raise MessageError("unknown_type", f"unknown message type {kind[:32]!r}")
    return from_fields(cls, body)


def decode_client(data: bytes | str) -> Message:
    """Decode and check a message a client sent (what the server reads)."""
    return _decode(data, CLIENT_TYPES)


def decode_server(data: bytes | str) -> Message:
    """Decode and check a message the server sent (what a client reads)."""
    return _decode(data, SERVER_TYPES)


def decode(data: bytes | str) -> Message:
    """Decode a message of either direction."""
    return _decode(data, {**CLIENT_TYPES, **SERVER_TYPES})


def normalize_name(text: str) -> str:
    """A player name, trimmed; 1-20 printable characters, none of them control characters.

    Raises ``ValueError`` with a message for the player.
    """
    name = text.strip()
    if not name:
        raise ValueError("a name needs at least one character")
    if len(name) > MAX_NAME:
        # Never cut: a name is for good, so the player chooses what to leave out (issue 28).
        raise ValueError(
            f"a name is at most {MAX_NAME} characters, not {len(name)}: nothing is cut,"
            " choose a shorter one"
        )
    for ch in name:
        if not ch.isprintable() or unicodedata.category(ch).startswith("C"):
            raise ValueError(f"a name may not contain the character U+{ord(ch):04X}")
    # Shown on boards to everyone: a name must be seen. Fillers that are letters by
    # category (U+3164, U+115F), the blank braille pattern U+2800, marks on nothing:
    # what is left of them in the skeleton (``name_skeleton``) is nothing visible.
    if not any(
        not ch.isspace() and not unicodedata.category(ch).startswith("M")
        for ch in name_skeleton(name)
    ):
        raise ValueError("a name needs at least one visible character")
    if disarm.is_zalgo(name):
        raise ValueError("a name may carry at most three marks of a kind on one character")
    # Some characters spell out to many under NFKC (U+FDFA: 18); the stored keys have room
    # for 80 and 400 (``players.name_key``, ``name_skeleton``).
    if len(name_key(name)) > MAX_NAME_KEY or len(name_skeleton(name)) > MAX_NAME_SKELETON:
        raise ValueError(f"a name is at most {MAX_NAME_KEY} characters spelled out (NFKC)")
    return name


def name_key(name: str) -> str:
    """The key under which names are unique regardless of case and of compatibility forms:
    NFKC, then full case folding (``ＡＬＩＣＥ`` = ``alice``, ``straße`` = ``STRASSE``).

    Stored (``players.name_key``): a change here needs a migration that recomputes it, as
    0006 did."""
    return unicodedata.normalize("NFKC", name).casefold()


#: Every Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt), from the
#: property itself in the ``regex`` library's tables (pinned: Unicode 17.0), not a list.
#: TR39's data leaves some of them in a skeleton (the Mongolian free variation selectors
#: U+180B..U+180D and U+180F, the Khmer inherent vowels U+17B4 and U+17B5 are marks, so
#: rule 3 of docs/protocol.md 4.1 lets them in), and a name with one inside drew like the
#: name without it (issue 28, item 14).
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}+")


def name_skeleton(name: str) -> str:
    """The key under which names that look alike are one name: the Unicode TR39 skeleton
    (``disarm.skeleton_key``, digits as TR39 has them: ``1`` and ``I`` read as ``l``,
    ``0`` as ``O``), so that a Cyrillic ``а`` passes for no Latin ``a`` on a board.
    Invisible characters have no skeleton: every default-ignorable code point is dropped
    first (``_IGNORABLE``), whatever TR39's tables say of it.

    Stored (``players.name_skeleton``): a change here (or in disarm's or regex's tables, so
    their versions are pinned) needs a migration that recomputes it, as 0006 and 0010 did."""
    return disarm.skeleton_key(_IGNORABLE.sub("", name), digit_policy="tr39")


def replace(message: Message, **changes: Any) -> Message:
    """A copy of a message with some fields changed."""
    return dataclasses.replace(message, **changes)
