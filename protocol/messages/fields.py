"""Field kinds, limits and close codes: what every message's field table is built from.

A message type (``client.py``, ``server.py``) lists its fields as ``F(name, kind)``; the
kinds here check a value's type and bounds on decode and raise ``MessageError`` with the
stable code the peer is told (docs/protocol.md section 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = 1
#: Largest frame either side accepts, in bytes.
MAX_FRAME = 16 * 1024
#: Longest player name, in characters, after trimming.
MAX_NAME = 20
#: The longest a name's ``name_key`` and ``name_skeleton`` may be (their columns).
MAX_NAME_KEY = 80
MAX_NAME_SKELETON = 400
#: A device id (``hello.device``, docs/protocol.md 4.31): 16 to 64 of these characters.
DEVICE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MIN_DEVICE = 16


def is_device(text: str) -> bool:
    """Is ``text`` a device id a client may send (16-64 URL-safe characters)?"""
    return MIN_DEVICE <= len(text) <= 64 and all(ch in DEVICE_CHARS for ch in text)


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


# -- field kinds every message module shares -------------------------------------------------

_seq = F("seq", Int(1, _U31))
_ms = Int(0, _U63)
_state = Str(16, PLAYER_STATES)
_small = Int(0, _U31)
#: A rating, rounded (Glicko-2 on the Glicko scale: docs/ratings.md).
_rating = Int(-10000, 10000)
#: The most points of a rating history a ``player_page`` carries.
MAX_RATINGS = 200
#: A game code field: the longest code is 35 characters (rules.md section 9), and a client
#: may send one with spaces around it.
_game_code = Str(48)
#: A commitment to a secret deal (64 hex digits) and the salt revealed with its code.
_commitment = Opt(Str(64))
_salt = Opt(Str(32))
#: A race's id (``result.race``, ``replay``, ``post_mortem``, ``ghost``).
_race_id = Str(MAX_RACE_ID)
