"""One msgpack map per frame: encode a message, decode a frame of either direction."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeAlias

import msgpack

from .client import (
    Board,
    Create,
    Daily,
    Finish,
    Ghost,
    Hello,
    Hint,
    History,
    Join,
    Leave,
    MoveMsg,
    Player,
    PostMortem,
    Quick,
    Ready,
    Rematch,
    Replay,
    Report,
    Resign,
    Start,
    Undo,
    Watch,
)
from .fields import (
    MAX_FRAME,
    MessageError,
    from_fields,
    to_fields,
)
from .server import (
    Accepted,
    BoardPage,
    Countdown,
    DailyDeal,
    Error,
    HintAnswer,
    HistoryPage,
    Left,
    PlayerPage,
    Pool,
    PostMortemAnswer,
    Progress,
    Race,
    Refused,
    ReplayPage,
    Reported,
    Result,
    Room,
    Route,
    Undone,
    Welcome,
)

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
        Report,
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
        Reported,
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


def replace(message: Message, **changes: Any) -> Message:
    """A copy of a message with some fields changed."""
    return dataclasses.replace(message, **changes)
