"""Where finished races go. The race logic only ever sees this interface.

``MemoryStore`` keeps results in the process (the SQL store replaces it); a result is
announced to players only after ``record_race`` has returned.
"""

from __future__ import annotations

from typing import Protocol

from .effects import RaceRecord

__all__ = ["ResultStore", "MemoryStore"]


class ResultStore(Protocol):
    async def record_race(self, record: RaceRecord) -> None:
        """Commit a finished race; raise if it could not be stored."""
        ...


class MemoryStore:
    """Results kept in memory, in the order races finished."""

    def __init__(self) -> None:
        self.races: list[RaceRecord] = []

    async def record_race(self, record: RaceRecord) -> None:
        self.races.append(record)
