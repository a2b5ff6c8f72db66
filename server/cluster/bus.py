"""What the nodes of a cluster say to each other: typed, versioned messages (docs/cluster.md).

A player's *session* lives on the node their connection reached (its gateway); their
*room* on the node that owns it. When the two differ, the gateway and the owner talk only
through the messages here: the session side hands the room side a guest (``Attach``), its
frames (``Frame``) and its end (``Detach``); the room side answers with the frames for
its guests (``Deliver``: one message for every guest of one gateway that gets the same
frame), closes one (``Shut``), sends one home (``Home``: its player left every room
there), or has one replaced (``Kick``); a wrong password is told to every node
(``PasswordFail``).

Each is a frozen dataclass with a field table, encoded like the wire protocol's messages
(``protocol.messages``: one msgpack map, ``t`` its type) with ``v``, the version of this
set: a node that reads another version, an unknown type or a field out of bounds raises
``BusError`` and drops the message, never a traceback. ``outgoing`` turns a hub's cluster
effect into the message for another node; the receiving node hands a message to its hub
itself (``hub.handle(message, now)``: each message is one of the hub's events), so this
module is a leaf that knows the hub's effects but not the hub. A ``Transport`` carries
them: ``OverBytes`` encodes each for a transport of bytes (Redis: ``server.cluster.relay``, on
the channel of the node it is for; the other side decodes it), ``InProcess`` hands the
object itself to a node in the same process, without encoding. The fake-clock tests
(tests/server/test_nodes.py) run two hubs over either: through ``encode`` and ``decode``
both ways, or in process.

Pure code: no I/O, no clock (the time comes in with each call).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeAlias

import msgpack

from protocol.messages import (
    MAX_FRAME,
    Bool,
    F,
    Int,
    Kind,
    ListOf,
    MessageError,
    Opt,
    Str,
    from_fields,
    to_fields,
)

from ..domain.records import Standing
from ..domain.streaks import Streak
from ..rooms.effects import Detach, Effect, Forward, Handover, QuickInvite, Release

__all__ = [
    "BUS_VERSION",
    "Attach",
    "BusError",
    "BusMessage",
    "Deliver",
    "DetachMsg",
    "Frame",
    "Home",
    "InProcess",
    "Kick",
    "OverBytes",
    "PasswordFail",
    "QuickJoin",
    "QuickSeat",
    "Shut",
    "Transport",
    "decode",
    "encode",
    "outgoing",
]

#: The version of this set of messages: a node drops what another version sends (nodes of
#: one cluster run one release; a rolling upgrade that changes a message bumps it).
BUS_VERSION = 1
_U31 = 2**31 - 1
#: Connection ids: a gateway's own are positive, a guest's on its owner negative.
_conn = Int(-_U31, _U31)
_node = Str(64)
#: A rounded rating (as the wire protocol bounds one) and the last day ``date`` can hold.
_rating = Int(-10000, 10000)
_LAST_DAY = dt.date.max.toordinal()


class BusError(ValueError):
    """A relay message this node cannot read (another version, garbage)."""


@dataclass(frozen=True)
class Raw(Kind):
    """A frame as it came: bytes (a binary frame), or str (a text frame, which the owner
    answers with ``bad_frame`` as it would its own client's)."""

    max_len: int
    #: A text frame may come (a client's); False: bytes only (one the server encoded).
    text: bool = True

    def check(self, value: object, where: str) -> bytes | str:
        kinds = (bytes, str) if self.text else bytes
        if not isinstance(value, kinds) or len(value) > self.max_len:
            raise MessageError("bad_field", f"field {where!r} must be a frame")
        return value


@dataclass(frozen=True)
class Num(Kind):
    """A number of seconds (a wall time): an int or a float."""

    def check(self, value: object, where: str) -> float:
        if type(value) not in (int, float):
            raise MessageError("bad_field", f"field {where!r} must be a number")
        return float(value)  # type: ignore[arg-type]


#: Frames the relay carries: a client's (at most MAX_FRAME; a larger one never gets past the
#: websocket layer) or one the server encoded for a client (a page fits MAX_FRAME too).
_frame = Raw(MAX_FRAME * 4)


@dataclass(frozen=True, slots=True)
class Attach:
    """Gateway to owner: the session ``(gateway, conn)`` is a guest of the owner from now
    on, for player ``player``, with ``frame`` (a join or watch) first if any; ``follow``:
    once seated, its client is told to connect to the owner (``route``)."""

    TYPE: ClassVar[str] = "attach"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("gateway", _node),
        F("conn", _conn),
        F("player", Int(0, 2**63 - 1)),
        F("name", Str(64)),
        F("token", Str(128)),
        F("registered", Num()),
        F("address", Str(64)),
        F("frame", Opt(_frame)),
        F("follow", Bool(), False),
        F("rating", Opt(_rating), False),
        F("provisional", Bool(), False),
        F("streak_day", Opt(Int(1, _LAST_DAY)), False),
        F("streak_run", Int(0, _U31), False),
        F("streak_best", Int(0, _U31), False),
    )
    gateway: str
    conn: int
    player: int
    name: str
    token: str
    registered: float
    address: str
    frame: bytes | str | None
    follow: bool = False
    #: The player's standing as the gateway knows it (``Standing``): rating (None: none
    #: yet), provisional, and the streak (``streak_day``: the last day won, as
    #: ``date.toordinal``). Optional: an older node's ``attach`` has none, and reads as
    #: a player with no rating and no streak, as the owner would have shown them then.
    rating: int | None = None
    provisional: bool = True
    streak_day: int | None = None
    streak_run: int = 0
    streak_best: int = 0

    @property
    def standing(self) -> Standing:
        """The player's standing carried here."""
        day = None if self.streak_day is None else dt.date.fromordinal(self.streak_day)
        return Standing(
            self.rating, self.provisional, Streak(day, self.streak_run, self.streak_best)
        )


@dataclass(frozen=True, slots=True)
class Frame:
    """Gateway to owner: a frame of the guest (its flood bucket paid on the gateway)."""

    TYPE: ClassVar[str] = "frame"
    FIELDS: ClassVar[tuple[F, ...]] = (F("gateway", _node), F("conn", _conn), F("frame", _frame))
    gateway: str
    conn: int
    frame: bytes | str


@dataclass(frozen=True, slots=True)
class DetachMsg:
    """Gateway to owner: the guest's connection is gone (its resume window starts)."""

    TYPE: ClassVar[str] = "detach"
    FIELDS: ClassVar[tuple[F, ...]] = (F("gateway", _node), F("conn", _conn))
    gateway: str
    conn: int


@dataclass(frozen=True, slots=True)
class Deliver:
    """Owner to gateway: one encoded server frame for each of the gateway's ``conns``
    (fan-out per node: a room's frame crosses once per gateway, not once per member)."""

    TYPE: ClassVar[str] = "deliver"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("conns", ListOf(_conn, 100_000)),
        F("data", Raw(MAX_FRAME * 4, text=False)),
        F("progress", Bool()),
    )
    conns: tuple[int, ...]
    data: bytes
    #: A ``progress``: the gateway's outbox may replace an older one not yet written.
    progress: bool


@dataclass(frozen=True, slots=True)
class Shut:
    """Owner to gateway: close the session's connection with ``code`` (replaced, flooding,
    the room moved)."""

    TYPE: ClassVar[str] = "close"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("conn", _conn),
        F("code", Int(1000, 4999)),
        F("reason", Str(123)),
    )
    conn: int
    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class Home:
    """Owner to gateway: the guest's player is in no room there any more; the session is
    served on its gateway again, starting with ``frame`` (one that came too late)."""

    TYPE: ClassVar[str] = "home"
    FIELDS: ClassVar[tuple[F, ...]] = (F("conn", _conn), F("frame", Opt(_frame)))
    conn: int
    frame: bytes | str | None


@dataclass(frozen=True, slots=True)
class Kick:
    """Any node to a gateway: the player said hello on a newer session elsewhere (4001)."""

    TYPE: ClassVar[str] = "kick"
    FIELDS: ClassVar[tuple[F, ...]] = (F("conn", _conn),)
    conn: int


@dataclass(frozen=True, slots=True)
class PasswordFail:
    """Any node to every other: a wrong password from the address ``key``, counted
    everywhere (``Password.failed_elsewhere``)."""

    TYPE: ClassVar[str] = "pwfail"
    FIELDS: ClassVar[tuple[F, ...]] = (F("key", Str(64)),)
    key: str


@dataclass(frozen=True, slots=True)
class QuickSeat:
    """The cluster's pooler to a node: form a quick room here for ``players`` (ids, the
    longest waiting first), whose sessions are on ``gateways`` (docs/cluster.md)."""

    TYPE: ClassVar[str] = "qseat"
    FIELDS: ClassVar[tuple[F, ...]] = (
        F("players", ListOf(Int(0, 2**63 - 1), 8)),
        F("gateways", ListOf(_node, 8)),
    )
    players: tuple[int, ...]
    gateways: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuickJoin:
    """A quick room's node to a player's gateway: send the player into ``room`` (as their
    own ``join``); ``room`` "": the room could not form, they wait on."""

    TYPE: ClassVar[str] = "qjoin"
    FIELDS: ClassVar[tuple[F, ...]] = (F("player", Int(0, 2**63 - 1)), F("room", Str(16)))
    player: int
    room: str


BusMessage: TypeAlias = (
    Attach | Frame | DetachMsg | Deliver | Shut | Home | Kick | PasswordFail | QuickSeat | QuickJoin
)

TYPES: dict[str, type[Any]] = {
    c.TYPE: c
    for c in (
        Attach,
        Frame,
        DetachMsg,
        Deliver,
        Shut,
        Home,
        Kick,
        PasswordFail,
        QuickSeat,
        QuickJoin,
    )
}

_PACKER = msgpack.Packer(use_bin_type=True)


def encode(message: BusMessage) -> bytes:
    """The msgpack bytes of a message: a map with ``t`` and ``v`` first."""
    body: dict[str, Any] = {"t": message.TYPE, "v": BUS_VERSION}
    body.update(to_fields(message))
    data: bytes = _PACKER.pack(body)
    return data


def decode(data: bytes) -> BusMessage:
    """A message from its bytes, every field checked; ``BusError`` if it cannot be read."""
    try:
        body = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception as exc:  # the C unpacker raises several unrelated types
        raise BusError(f"not msgpack ({type(exc).__name__})") from None
    if not isinstance(body, dict):
        raise BusError("not a map")
    version = body.get("v")
    if version != BUS_VERSION:
        raise BusError(f"version {version!r}, this node reads {BUS_VERSION}")
    cls = TYPES.get(body.get("t"))  # type: ignore[arg-type]
    if cls is None:
        raise BusError(f"unknown type {str(body.get('t'))[:32]!r}")
    try:
        message: BusMessage = from_fields(cls, body)
    except MessageError as exc:
        raise BusError(exc.text) from None
    return message


class Transport(Protocol):
    """How a message reaches node ``node``: sent, never awaited (what cannot go now is
    queued or lost; a lost one becomes a resume, docs/cluster.md)."""

    def send(self, node: str, message: BusMessage) -> None: ...


class OverBytes:
    """A transport of bytes (Redis pub/sub, ``Relay.publish``): each message encoded
    (``encode``); the node it is for decodes it (``decode``)."""

    def __init__(self, publish: Callable[[str, bytes], None]) -> None:
        self.publish = publish

    def send(self, node: str, message: BusMessage) -> None:
        self.publish(node, encode(message))


class InProcess:
    """Nodes in one process: the message object itself is handed to the receiver of the
    node it is for (no encoding: the dataclasses are frozen, so nothing is shared that
    either side could change)."""

    def __init__(self, receivers: Mapping[str, Callable[[BusMessage], None]]) -> None:
        self.receivers = receivers

    def send(self, node: str, message: BusMessage) -> None:
        self.receivers[node](message)


def outgoing(node: str, effect: Effect) -> tuple[str, BusMessage] | None:
    """The message a hub's cluster effect sends, and the node it is for; None for an
    effect that is not one message to one node (``Locate`` asks the directory,
    ``PasswordFailed`` goes to every node)."""
    match effect:
        case Forward(to, conn, frame):
            return to, Frame(node, conn, frame)
        case Handover():
            e = effect
            last = e.standing.streak.last_won
            return e.node, Attach(
                node,
                e.conn,
                e.player_id,
                e.name,
                e.token,
                e.registered,
                e.address,
                e.frame,
                e.follow,
                e.standing.rating,
                e.standing.provisional,
                None if last is None else last.toordinal(),
                e.standing.streak.run,
                e.standing.streak.best,
            )
        case Detach(to, conn):
            return to, DetachMsg(node, conn)
        case Release(to, conn, frame):
            return to, Home(conn, frame)
        case QuickInvite(to, player, room):
            return to, QuickJoin(player, room)
    return None
