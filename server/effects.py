"""What the room logic asks the I/O layer to do: send, close, persist.

The state machine never touches a socket or a database; it returns these values and the
websocket layer (``server.connection``) carries them out in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.messages import Message

__all__ = ["Send", "Close", "Persist", "Effect", "RaceRecord", "ResultRow"]


@dataclass(frozen=True, slots=True)
class Send:
    conn: int
    message: Message


@dataclass(frozen=True, slots=True)
class Close:
    """Close a connection with a websocket close code and a short reason."""

    conn: int
    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class ResultRow:
    name: str
    rank: int
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    used_undo: bool
    #: Accepted actions with their time offsets, so the result can be replayed and checked.
    journal: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class RaceRecord:
    """A finished race, everything storage keeps about it."""

    race_id: int
    room: str
    code: str
    rules: str
    started_wall: float
    ended_wall: float
    results: tuple[ResultRow, ...]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Persist:
    """Store a finished race; call ``Hub.committed(race_id, now)`` once it is stored."""

    record: RaceRecord


Effect = Send | Close | Persist
