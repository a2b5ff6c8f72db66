"""What the room logic asks the I/O layer to do: send, close, persist, look things up.

The state machine never touches a socket or a database; it returns these values and the
websocket layer (``server.runtime.connection``) carries them out in order. Effects that need the
database report back through a ``Hub`` entry point named in their docstring.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from protocol.messages import Message

from ..domain.records import LiveAction, LiveRace, RaceRecord, Standing

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
    "Prove",
    "Examine",
    "Effect",
    "Journal",
    "Locate",
    "Handover",
    "Forward",
    "Detach",
    "Release",
    "Resumed",
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
    #: Register the name as a BOT account (``hello.bot``; docs/bots.md).
    bot: bool = False
    #: Where a registration comes from (an address key): kept with the name, so that two
    #: names registered from one address within a day are linked (docs/ratings.md).
    address: str = ""


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
    #: The pool's lane (``pool.Waiter.lane``): "" or "marked".
    lane: str = ""


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
class Prove:
    """Ask the solver, within ``budget_nodes`` positions, whether the deal of ``rules`` and
    ``seed`` (a secret 128-bit seed) is won, on the solver's stock lane (never delaying a
    hint or a post-mortem); then call ``Hub.handle(DealProven(...))`` with the verdict
    (``failed`` if the solver could not run). ``room``: the room waiting for this proof
    (its deal, drawn when the stock was empty: ``Deals``), or "" for the stock's own."""

    rules: str
    seed: int | bytes
    budget_nodes: int
    room: str = ""


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
    | Prove
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
