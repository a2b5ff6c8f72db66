"""What the room logic asks the I/O layer to do: send, close, persist, look things up.

The state machine never touches a socket or a database; it returns these values and the
websocket layer (``server.runtime.connection``) carries them out in order. Effects that need the
database report back through a ``Hub`` entry point named in their docstring.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from protocol.messages import Message

from ..domain.streaks import Streak

__all__ = [
    "ClusterEffect",
    "Send",
    "Close",
    "Persist",
    "Authenticate",
    "BeginDaily",
    "Query",
    "Forget",
    "Solve",
    "Examine",
    "Effect",
    "RaceRecord",
    "PlayerResult",
    "LiveRace",
    "LiveAction",
    "Journal",
    "Locate",
    "Handover",
    "Forward",
    "Detach",
    "Release",
    "Resumed",
    "GhostRun",
    "RatingChange",
    "Standing",
    "Rate",
    "PoolEnter",
    "PoolLeave",
    "QuickInvite",
]


@dataclass(slots=True)  # not frozen: built for every move, and a frozen __init__ costs 4x
class Send:
    conn: int
    message: Message


@dataclass(frozen=True, slots=True)
class Close:
    """Close a connection with a websocket close code and a short reason: after the frames
    already queued for it, or, ``at_once``, right away, dropping them and reading nothing
    more (a flood: every frame still arriving would otherwise be parsed, and each ping
    answered, until the closing handshake ends)."""

    conn: int
    code: int
    reason: str
    at_once: bool = False


@dataclass(frozen=True, slots=True)
class PlayerResult:
    player_id: int
    name: str
    rank: int
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    #: A daily attempt after the first: kept, but off the daily board.
    practice: bool
    #: Accepted actions with their time offsets, so the result can be replayed and checked.
    journal: tuple[tuple[int, str], ...]
    #: The player got a hint in this race: ranked after those who did not, on boards too.
    hinted: bool = False


@dataclass(frozen=True, slots=True)
class RaceRecord:
    """A finished race, everything storage keeps about it."""

    #: Unique across restarts, so that a retried write is recognised and not doubled.
    uid: str
    race_id: int
    room: str | None
    code: str
    rules: str
    daily_date: dt.date | None
    started_wall: float
    ended_wall: float
    results: tuple[PlayerResult, ...]
    #: A rated race: storing it rates its runners (``RatingChange``, docs/ratings.md).
    rated: bool = False
    #: A past day's deal played from the archive (docs/protocol.md 4.28): its results are
    #: practice, kept on that day's archive board only (``archive_bests``).
    archive: bool = False


@dataclass(frozen=True, slots=True)
class RatingChange:
    """A runner's rating after a rated race, as storage committed it (``Hub.committed``):
    rounded as the wire shows it, with the change from the rating before (a player's
    first rated race counts from the default, 1500)."""

    player_id: int
    rating: int
    change: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class Standing:
    """What is shown beside a player's name (storage reads it at hello, the welcome says
    it): the rounded rating (None: no rated race yet), whether it is provisional, and the
    daily streak (docs/ratings.md)."""

    rating: int | None = None
    provisional: bool = True
    streak: Streak = field(default_factory=Streak)


@dataclass(frozen=True, slots=True)
class Persist:
    """Store a finished race; then call ``Hub.committed(race_id, now, ratings)`` with the
    rating changes storing it made (none for an unrated race)."""

    record: RaceRecord


@dataclass(frozen=True, slots=True)
class Authenticate:
    """Register ``name`` (no token) or find the player holding ``token``; then call
    ``Hub.authenticated`` or ``Hub.hello_refused``."""

    conn: int
    name: str | None
    token: str | None


@dataclass(frozen=True, slots=True)
class BeginDaily:
    """Record that ``player_id`` begins ``date``'s daily deal, numbering the attempt; then
    call ``Hub.daily_begun`` or ``Hub.daily_refused``."""

    conn: int
    player_id: int
    date: dt.date
    #: A past day's deal from the archive: the stored deal only (never the solver), and
    #: the attempt is practice (docs/protocol.md 4.28).
    archive: bool = False


@dataclass(frozen=True, slots=True)
class Query:
    """A read-only request (a leaderboard, a history); answer it from storage through
    ``Hub.query_answered``, which frees the connection's place for another."""

    conn: int
    player_id: int
    message: Message


@dataclass(frozen=True, slots=True)
class Rate:
    """A player asks for a quick race: look up their current rating (``current_ratings``)
    and when others usually play (``race_hours``, kept a while); then call
    ``Hub.quick_rated`` (docs/protocol.md 4.26)."""

    player_id: int


@dataclass(frozen=True, slots=True)
class PoolEnter:
    """A cluster's node: its player waits in the whole cluster's quick-race pool, from
    wall time ``joined`` (``server.cluster.quickpool``; docs/cluster.md)."""

    player_id: int
    rating: float
    joined: float


@dataclass(frozen=True, slots=True)
class PoolLeave:
    """A cluster's node: its player no longer waits in the cluster's pool."""

    player_id: int


@dataclass(frozen=True, slots=True)
class QuickInvite:
    """A cluster's node placed a quick room here: the player's gateway ``node`` sends them
    into ``room`` (``Hub.quick_join``); ``room`` "": back to waiting."""

    node: str
    player_id: int
    room: str


@dataclass(frozen=True, slots=True)
class Forget:
    """Delete the player ``player_id``, just registered, whose ``welcome`` could not be
    sent (the connection was gone): nobody holds the token, so the name must not stay
    taken for good. Nothing else refers to a player who was never welcomed."""

    player_id: int


@dataclass(frozen=True, slots=True)
class Solve:
    """Decide ``position`` (position notation with every card known) with the solver, off
    the event loop and within ``budget_nodes`` positions; then call ``Hub.hint_ready``
    with the verdict and winning line, or ``Hub.hint_failed`` if the solver could not run.
    ``request`` identifies the hint, for the hub."""

    player_id: int
    request: int
    position: str
    budget_nodes: int


@dataclass(frozen=True, slots=True)
class LiveRace:
    """What it takes to rebuild a running race after a restart, written when it starts."""

    uid: str
    room: str
    code: str
    rules: str
    daily_date: dt.date | None
    attempt: int
    undo: bool
    time_limit: int
    max_players: int
    fixed: bool
    host_id: int
    #: ``(player_id, name)`` in the room's order.
    players: tuple[tuple[int, str], ...]
    started_wall: float
    #: The room allows hints.
    hints: bool = False
    #: The salt of the commitment to a secret deal, revealed with its code.
    salt: str | None = None
    #: A daily attempt that is practice (a later attempt, or a player younger than
    #: ``HubConfig.daily_min_age_s`` when it began), or a ghost race.
    practice: bool = False
    #: A ghost race: the stored run raced (its race's id and its runner's name), which a
    #: restart fetches again to bring the ghost back.
    ghost_race: str | None = None
    ghost_player: str | None = None
    #: A rated race (docs/ratings.md): still rated when rebuilt.
    rated: bool = False
    #: An archive run (a past day's deal as practice): a restart keeps it one.
    archive: bool = False
    #: A race the quick-race pool formed (docs/protocol.md 4.26): rebuilt as a quick room.
    quick: bool = False


@dataclass(slots=True)  # not frozen: built for every move, and a frozen __init__ costs 4x
class LiveAction:
    """One accepted action of a running race: a move text, ``undo``, ``resign``,
    ``abandon``, ``leave``, or ``hint`` (the player got a first hint: the run is hinted)."""

    uid: str
    n: int
    player_id: int
    seq: int | None
    at_ms: int
    action: str


@dataclass(slots=True)  # not frozen: built for every move, and a frozen __init__ costs 4x
class Journal:
    """Record a running race's start or one of its actions. Written in groups, a little
    later: an answer never waits for it (docs/protocol.md, restarts)."""

    entry: LiveRace | LiveAction


@dataclass(frozen=True, slots=True)
class Examine:
    """Work out the solver's post-mortem of a stored run (``message``, a ``postmortem``),
    off the event loop (``server.domain.replays``); then call ``Hub.postmortem_answered`` with
    the answer or the error."""

    conn: int
    player_id: int
    message: Message


@dataclass(frozen=True, slots=True)
class Locate:
    """Find the node that owns room ``code`` (a cluster's directory); then call
    ``Hub.located(conn, node, frame, now)``. ``frame`` (the join or watch) goes with the
    answer, to the owner or back to this hub."""

    conn: int
    code: str
    frame: bytes | str


@dataclass(frozen=True, slots=True)
class Handover:
    """The session ``conn`` is away from now on: its room lives on ``node``. Ask that node
    to hold a guest for it (``Hub.guest_attach`` there), with ``frame`` first if any."""

    node: str
    conn: int
    player_id: int
    name: str
    token: str
    registered: float
    address: str
    frame: bytes | str | None
    #: The client follows a ``route``: once its player is seated there, ``node`` tells it
    #: to connect to it directly (room affinity, docs/cluster.md).
    follow: bool = False
    #: What the gateway knows of the player's rating and streak (its hello read it, its
    #: rated races moved it): the owner shows it beside their name in the room
    #: (``Attach``'s rating fields).
    standing: Standing = Standing()


@dataclass(slots=True)  # not frozen: built for every relayed frame
class Forward:
    """A frame of the away session ``conn``, for its guest on ``node``
    (``Hub.guest_frame`` there)."""

    node: str
    conn: int
    frame: bytes | str


@dataclass(frozen=True, slots=True)
class Detach:
    """The away session ``conn`` is gone: its guest on ``node`` disconnects
    (``Hub.guest_detach`` there)."""

    node: str
    conn: int


@dataclass(frozen=True, slots=True)
class Release:
    """A guest (the session ``conn`` of ``node``) is in no room here any more: its gateway
    serves it again (``Hub.returned`` there), starting with ``frame`` if any (one that
    came after the release)."""

    node: str
    conn: int
    frame: bytes | str | None


@dataclass(frozen=True, slots=True)
class PasswordFailed:
    """A wrong password from address ``key`` (``limits.address_key``) on this node: the
    other nodes of a cluster count it too (``Hub.password_failed_elsewhere``), so that
    an address's back-off and the budget of failures hold for the whole cluster."""

    key: str


@dataclass(frozen=True, slots=True)
class Resumed:
    """Player ``player_id`` said hello on this node's connection ``conn`` and was served
    from memory (no ``Authenticate``: a follower on its room's node, a resume within the
    window): a cluster notes this as their newest session in the directory, as it does
    for every hello storage answers (``Node.locate_player``), and closes an older one on
    another node, so that one session per player holds and a later hello elsewhere
    closes this one."""

    player_id: int
    conn: int


@dataclass(frozen=True, slots=True)
class GhostRun:
    """A stored run to race as a ghost (``Hub.ghost_answered``, ``Hub.restore``): found
    by the I/O layer (``server.domain.replays``), which has checked that it may be raced.

    ``code`` and ``salt`` are the deal the ghost room deals (the run's own); ``daily`` is
    set when that deal is today's daily, still secret: the room then keeps its code
    hidden as a daily room does, and the run's actions never leave the server."""

    race: str
    name: str
    code: str
    salt: str | None
    daily: dt.date | None
    #: ``(ms, action)``: the run's accepted actions at their times on its race clock.
    actions: tuple[tuple[int, str], ...]
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    hinted: bool


#: The effects about other nodes: a ``server.cluster.node.Node`` carries them out.
ClusterEffect = (
    Locate
    | Handover
    | Forward
    | Detach
    | Release
    | PasswordFailed
    | Resumed
    | PoolEnter
    | PoolLeave
    | QuickInvite
)

Effect = (
    Send
    | Close
    | Persist
    | Authenticate
    | BeginDaily
    | Query
    | Forget
    | Journal
    | Solve
    | Examine
    | Locate
    | Handover
    | Forward
    | Detach
    | Release
    | PasswordFailed
    | Resumed
    | Rate
    | PoolEnter
    | PoolLeave
    | QuickInvite
)
