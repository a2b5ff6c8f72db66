"""Client -> server messages (docs/protocol.md section 2), each a frozen dataclass whose
``FIELDS`` table drives its decoding on the server and its encoding in the clients."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .fields import (
    _U31,
    BOARD_KINDS,
    MAX_PAGE,
    Bool,
    F,
    Int,
    Opt,
    Str,
    _game_code,
    _race_id,
    _seq,
)


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
        F("device", Opt(Str(64)), False),
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
    #: The client's device id (docs/protocol.md 4.31): random, kept by the client for
    #: every name it plays on this device; the rating rules read it, no player sees it.
    device: str | None = None


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
        F("invite_only", Bool(), False),
        F("winnable", Opt(Bool()), False),
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
    #: Only its invite link lets anyone in (docs/protocol.md 4.32): ``join`` and ``watch``
    #: need the room's ``key``, which ``room`` gives its members.
    invite_only: bool = False
    #: Random deals proven winnable by the solver (issue 40): nil (left out) means yes for
    #: a room without a code; false asks for plain random deals (refused if ``rated``);
    #: true with a ``code`` is refused (docs/protocol.md 4.3).
    winnable: bool | None = None


@dataclass(frozen=True, slots=True)
class Join:
    TYPE: ClassVar[str] = "join"
    FIELDS: ClassVar[tuple[F, ...]] = (F("room", Str(16)), F("key", Opt(Str(32)), False))
    room: str
    #: An invite-only room's key (its invite link's ``?k=``, docs/protocol.md 4.32).
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Watch:
    TYPE: ClassVar[str] = "watch"
    FIELDS: ClassVar[tuple[F, ...]] = (F("room", Str(16)), F("key", Opt(Str(32)), False))
    room: str
    #: An invite-only room's key, as for ``join``.
    key: str | None = None


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


#: The longest ``reason`` of a ``report`` (characters), kept with the report for operators.
MAX_REPORT_REASON = 280


@dataclass(frozen=True, slots=True)
class Report:
    """Report a player you raced to the server's operators (docs/protocol.md 4.33):
    ``race`` names the stored race (nil: your latest stored race together, else the room
    you share with them now), ``reason`` says why in your words. Answered with ``reported``
    or an ``error``; it joins the review queue (docs/fairplay.md). Rate-limited."""

    TYPE: ClassVar[str] = "report"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("player", Str(64)),
        F("race", Opt(_race_id), False),
        F("reason", Opt(Str(MAX_REPORT_REASON)), False),
    )
    player: str
    race: str | None = None
    reason: str | None = None
