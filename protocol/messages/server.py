"""Server -> client messages (docs/protocol.md section 3), each a frozen dataclass whose
``FIELDS`` table drives its encoding on the server and its decoding in the clients."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .fields import (
    _U31,
    _U63,
    BOARD_KINDS,
    HINT_VERDICTS,
    MAX_LINE,
    MAX_NAME,
    MAX_PAGE,
    MAX_RATINGS,
    MAX_REPLAY_PAGE,
    MAX_WASTED,
    POOL_STATES,
    POSTMORTEM_STATUSES,
    ROOM_STATES,
    Bool,
    F,
    Int,
    ListOf,
    Obj,
    Opt,
    Pair,
    Str,
    _commitment,
    _game_code,
    _ms,
    _race_id,
    _rating,
    _salt,
    _seq,
    _small,
    _state,
)


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
        F("key", Opt(Str(32)), False),  # issue 40: an invite-only room's key; sent always
        F("winnable", Bool(), False),  # issue 40: the deal was proven; optional for an older one
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
    #: An invite-only room's key (docs/protocol.md 4.32): its invite link carries it as
    #: ``?k=``; None for a room anyone with its code may join.
    key: str | None = None
    #: The solver proved this race's deal winnable (docs/protocol.md 4.3); false: a plain
    #: random deal, a host's code, or one not proven in time (the stock was empty).
    winnable: bool = False


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
        F("broke_rules", Bool(), False),  # issue 40: sent always; optional for an older one
        F("bot", Bool(), False),  # issue 40: sent always; optional for an older one
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
    #: The account holds an ``engine``, ``boost`` or ``alt`` mark (docs/fairplay.md): the
    #: page says "this account broke this server's rules" and nothing more (the figures
    #: come empty), to everyone, the player too.
    broke_rules: bool = False
    #: A BOT account (docs/bots.md): shown with its badge.
    bot: bool = False


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


@dataclass(frozen=True, slots=True)
class Reported:
    """The answer to ``report``: the report is with the operators (docs/protocol.md
    4.33). ``player`` is the reported name as registered, ``race`` the stored race it is
    about (nil: the room you share, while its race is not stored). Nothing more: what
    operators decide is never sent."""

    TYPE: ClassVar[str] = "reported"
    FIELDS: ClassVar[tuple[F, ...]] = (F("player", Str(MAX_NAME)), F("race", Opt(_race_id)))
    player: str
    race: str | None
