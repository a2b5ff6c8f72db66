"""The SQL store: the one place that reads and writes the database.

SQLAlchemy 2 (async) over aiosqlite (the embedded default) or asyncpg (PostgreSQL). Every
function takes keyword arguments and speaks in plain dataclasses, never rows, so nothing
outside this package writes or reads SQL.

``SqlStore`` is made of one part per area, each a module of this package (a facade over
them, so that callers import everything from here): ``base`` (engine, dialect, fences),
``players`` (names, tokens, settings), ``dailies`` (the day's deal and attempts),
``results`` (finished races and their history), ``live`` (the journal of live races and
take-overs), ``boards`` (leaderboards) and ``ratings`` (ratings and streaks).
"""

from __future__ import annotations

from .base import DEFAULT_URL, FencedError, StoreBase, describe_error, normalize_url
from .boards import Board, BoardEntry, BoardsStore
from .dailies import DailiesStore
from .live import LiveStore
from .players import Identity, NameTakenError, PlayersStore, hash_token
from .ratings import RatingsStore
from .results import (
    History,
    HistoryEntry,
    ResultsStore,
    RoomRace,
    RoomResult,
    StoredResult,
    StoredRun,
)

__all__ = [
    "SqlStore",
    "Identity",
    "NameTakenError",
    "BoardEntry",
    "StoredResult",
    "Board",
    "HistoryEntry",
    "History",
    "StoredRun",
    "RoomRace",
    "RoomResult",
    "normalize_url",
    "hash_token",
    "describe_error",
    "DEFAULT_URL",
    "FencedError",
    "StoreBase",
]


class SqlStore(PlayersStore, DailiesStore, ResultsStore, LiveStore, BoardsStore, RatingsStore):
    """Players, races, results and moves in one SQL database: each area's part (the modules
    named above) on one engine, so one object serves every caller."""
