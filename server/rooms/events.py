"""What happens to a hub, as typed events: ``Hub.handle(event, now)`` takes any of them.

Every input of the room and race logic is one of these frozen dataclasses, named for what
happened (a connection opened, a frame arrived, storage answered, the directory located a
room, a node died), never a positional call: the I/O layer (``server.runtime.connection``,
``server.cluster.cluster``) says what happened, and ``Hub.handle`` routes it to the part whose
seam it is, with an exhaustive ``match`` (a new event that is not routed fails
``mypy --strict``, not silently at run time). What another node says (``server.cluster.bus``:
``Attach``, ``Frame``, ``DetachMsg``, ``Shut``, ``Home``, ``Kick``, ``PasswordFail``) is
an event too, the same objects whether they came over Redis (decoded) or from a hub in the
same process: one vocabulary between the session side and the room side (issue 26; the
anchor is lila-ws's typed ``LilaIn``/``LilaOut``).

The hub's older entry points (``Hub.receive``, ``Hub.tick``, ...) stay, each the handler
of one event: the move path calls ``receive`` straight, without an event object, since a
frame is the one event that comes thousands of times a second.

Pure code: no I/O, no clock (the time comes in with ``handle``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from protocol import GameCode
from protocol.messages import Error, Message

from ..domain.records import GhostRun, LiveAction, LiveRace, RatingChange, Standing

__all__ = [
    "AdoptLobby",
    "Authenticated",
    "Committed",
    "Connected",
    "Control",
    "DailyBegun",
    "DailyRefused",
    "DealProven",
    "Enforce",
    "FillStock",
    "Disconnected",
    "GhostAnswered",
    "HelloRefused",
    "HintFailed",
    "HintReady",
    "HubEvent",
    "Located",
    "NodeGone",
    "PostMortemAnswered",
    "QueryAnswered",
    "Received",
    "RelayGap",
    "Restore",
    "RoomLost",
    "Tick",
    "Unreachable",
]

# -- a connection of this node -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Connected:
    """A new connection from ``address``; ``asked``: the node its URL asked for (a route
    it followed). It must say hello within ``hello_timeout_s``."""

    conn: int
    address: str = ""
    asked: str = ""


@dataclass(frozen=True, slots=True)
class Received:
    """One frame from a connection."""

    conn: int
    data: bytes | str


@dataclass(frozen=True, slots=True)
class Control:
    """A ping or a pong from a connection (it costs a token of the flood bucket)."""

    conn: int


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The connection is gone; its player keeps their place for the resume window."""

    conn: int


@dataclass(frozen=True, slots=True)
class Tick:
    """``Hub.next_deadline`` has come: fire every deadline that has passed."""


# -- answers of storage and the solver ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Authenticated:
    """Storage registered a name (``new``) or recognised a token; ``away``: the node that
    holds the player's room, when it is another (the directory's answer), and the room."""

    conn: int
    player_id: int
    name: str
    token: str
    registered: float = 0.0
    new: bool = False
    away: str | None = None
    away_room: str | None = None
    #: Their rating and daily streak (docs/ratings.md), read with the identity.
    standing: Standing | None = None
    #: A BOT account (docs/bots.md).
    bot: bool = False


@dataclass(frozen=True, slots=True)
class HelloRefused:
    """Storage refused the hello (name taken, unknown token, database away)."""

    conn: int
    code: str
    text: str


@dataclass(frozen=True, slots=True)
class Committed:
    """Storage committed race ``race_id``: its result may be announced now, with the
    rating changes storing it made (a rated race's, by player id)."""

    race_id: int
    ratings: Mapping[int, RatingChange] | None = None


@dataclass(frozen=True, slots=True)
class QueryAnswered:
    """Storage answered a ``Query`` (a board, a history, a replay)."""

    conn: int
    reply: Message


@dataclass(frozen=True, slots=True)
class GhostAnswered:
    """Storage answered a ``ghost``: the run to race, or the error."""

    conn: int
    found: GhostRun | Error


@dataclass(frozen=True, slots=True)
class PostMortemAnswered:
    """The I/O layer answered a ``postmortem`` (``Examine``)."""

    conn: int
    reply: Message


@dataclass(frozen=True, slots=True)
class HintReady:
    """The solver judged a hint's position (``Hub.hint_ready`` says what ``moves`` is)."""

    player_id: int
    request: int
    verdict: str
    moves: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DealProven:
    """The solver's verdict on a ``Prove``: ``won``, ``lost``, ``unknown`` (the budget ran
    out), or ``failed`` (it could not run)."""

    rules: str
    seed: int | bytes
    verdict: str
    room: str = ""


@dataclass(frozen=True, slots=True)
class FillStock:
    """The server is up: start filling the stock of winnable deals (``Deals.fill``)."""


@dataclass(frozen=True, slots=True)
class HintFailed:
    """The solver could not run: the player may ask again."""

    player_id: int
    request: int


@dataclass(frozen=True, slots=True)
class DailyBegun:
    """The day's deal is known and storage numbered the attempt."""

    player_id: int
    date: dt.date
    attempt: int
    deal: GameCode
    par: int | None = None
    salt: str | None = None


@dataclass(frozen=True, slots=True)
class DailyRefused:
    """The daily attempt could not begin."""

    player_id: int
    code: str
    text: str


@dataclass(frozen=True, slots=True)
class Restore:
    """Rebuild a race from its journal (a restart, or a takeover: ``watchers``, the
    spectators its old node noted), with the ``ghost`` it raced, if any."""

    live: LiveRace
    actions: Sequence[LiveAction]
    alive_ms: int
    ghost: GhostRun | None = None
    watchers: Sequence[tuple[int, str]] = ()


# -- a cluster: the directory, other nodes -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Located:
    """The directory says room ``code`` lives on ``node`` (None: nowhere); ``frame`` is
    the join or watch that asked."""

    conn: int
    code: str
    node: str | None
    frame: bytes | str


@dataclass(frozen=True, slots=True)
class Unreachable:
    """The directory could not answer a ``Locate``."""

    conn: int
    text: str


@dataclass(frozen=True, slots=True)
class NodeGone:
    """Node ``node`` stopped (its heartbeat lapsed)."""

    node: str


@dataclass(frozen=True, slots=True)
class RelayGap:
    """This node missed relay messages (its channel broke)."""


@dataclass(frozen=True, slots=True)
class AdoptLobby:
    """Rebuild room ``code`` from the snapshot its dead ``owner`` kept."""

    code: str
    snapshot: dict[str, Any] = field(hash=False)
    owner: str = ""


@dataclass(frozen=True, slots=True)
class Enforce:
    """What the operator's marks and account states are now, as the database says
    (read every few seconds by every node: docs/fairplay.md, "On a running server")."""

    marks: Mapping[int, frozenset[str]] = field(hash=False)
    closed: frozenset[int] = frozenset()
    muted: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class RoomLost:
    """This node lost room ``code`` (its lease was taken, or the database fenced it)."""

    code: str


#: An event of this node's own (what another node says is a ``bus.BusMessage``).
HubEvent: TypeAlias = (
    Connected
    | Received
    | Control
    | Disconnected
    | Tick
    | Authenticated
    | HelloRefused
    | Committed
    | QueryAnswered
    | GhostAnswered
    | PostMortemAnswered
    | HintReady
    | HintFailed
    | DealProven
    | FillStock
    | DailyBegun
    | DailyRefused
    | Restore
    | Located
    | Unreachable
    | NodeGone
    | RelayGap
    | AdoptLobby
    | RoomLost
    | Enforce
)
