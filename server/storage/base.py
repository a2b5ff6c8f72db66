"""What every part of the SQL store shares: the engine and its dialect, the node's fencing
tokens, URL and error helpers, and the table handles.

``SqlStore`` (server/storage/sql.py) is one class made of per-area parts (players,
dailies, results, live races, boards, ratings); each part is a subclass of ``StoreBase``
so that it can use the engine and these helpers on its own, and the parts stay small
enough to read one at a time (issue 41: no file over 800 lines).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from sqlalchemy import Table, event, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from .direct import SqliteThread
from .models import (
    ArchiveBest,
    DailyAttempt,
    DailyDealRow,
    DealBest,
    LiveActionRow,
    LiveRaceRow,
    MoveRow,
    Player,
    RaceRow,
    ResultRow,
    Setting,
)

DEFAULT_URL = "sqlite+aiosqlite:///./yukon.db"


__all__ = ["StoreBase", "FencedError", "normalize_url", "describe_error", "DEFAULT_URL"]

#: The tables, for the SQL Core queries of every area.
_players = cast(Table, Player.__table__)
_races = cast(Table, RaceRow.__table__)
_results = cast(Table, ResultRow.__table__)
_moves = cast(Table, MoveRow.__table__)
_attempts = cast(Table, DailyAttempt.__table__)
_settings = cast(Table, Setting.__table__)
_daily_deals = cast(Table, DailyDealRow.__table__)
_bests = cast(Table, DealBest.__table__)
_archive_bests = cast(Table, ArchiveBest.__table__)
_live = cast(Table, LiveRaceRow.__table__)
_live_actions = cast(Table, LiveActionRow.__table__)


class FencedError(Exception):
    """Another node took this race over (its ``live_races`` row holds another owner or a
    newer epoch): this node must not write for it any more (docs/cluster.md)."""


def normalize_url(url: str) -> str:
    """Accept plain ``sqlite:///`` and ``postgresql://`` URLs and pick the async drivers."""
    if url.startswith("sqlite:"):
        return "sqlite+aiosqlite:" + url[len("sqlite:") :]
    for prefix in ("postgresql:", "postgres:"):
        if url.startswith(prefix):
            return "postgresql+asyncpg:" + url[len(prefix) :]
    return url


def describe_error(exc: BaseException) -> str:
    """A database failure in one line: the driver's own words, without SQLAlchemy's links."""
    inner = getattr(exc, "orig", None) or exc
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[0] if text else ''}".rstrip(": ")


def _aware(at: dt.datetime) -> dt.datetime:
    """A stored time as UTC: SQLite hands back naive datetimes, and every one is UTC."""
    return at if at.tzinfo is not None else at.replace(tzinfo=dt.UTC)


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _direct_for(engine: AsyncEngine) -> SqliteThread | None:
    """The journal's own connection for a SQLite database that is a plain file; None for
    anything else (PostgreSQL; an in-memory database, which another connection would
    not see; a URL with options, which this connection would not honour)."""
    url = engine.url
    database = url.database
    if engine.dialect.name != "sqlite" or url.query or not database:
        return None
    if database == ":memory:" or database.startswith("file:"):
        return None
    return SqliteThread(database)


class StoreBase:
    """The engine, the dialect, the node's fences: what each area of ``SqlStore`` builds on."""

    engine: AsyncEngine

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        kwargs: dict[str, Any] = {"echo": echo, "pool_pre_ping": True}
        if self.url.startswith("postgresql+asyncpg"):
            # Give up on an unreachable database well inside a client's 10 s hello deadline,
            # so the client hears "unavailable" instead of a timeout.
            kwargs["connect_args"] = {"timeout": 5}
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        #: The node this store writes for ("" alone), and the fencing token it holds for
        #: each race it took over (a race it started holds epoch 1): journal groups and
        #: results are written only for races whose row still says so (docs/cluster.md).
        self.owner = ""
        self.epochs: dict[str, int] = {}
        #: A SQLite file's journal and checkpoints go through a connection of their own,
        #: a group in one call (``direct``); None: through the engine (PostgreSQL, or a
        #: SQLite URL that names no plain file).
        self.direct: SqliteThread | None = _direct_for(self.engine)
        self._live_binds: list[tuple[str, Any]] | None = None

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def close(self) -> None:
        if self.direct is not None:
            await self.direct.close()
        await self.engine.dispose()

    async def ping(self) -> None:
        """Raise if the database does not answer."""
        async with self.engine.connect() as conn:
            await conn.execute(select(1))

    async def run_sync(self, fn: Any) -> Any:
        """Run ``fn(sync_connection)`` in a transaction (migrations use this).

        On SQLite ``migrations/env.py`` turns foreign keys off while it migrates, and they
        can only come back on outside a transaction: here, once it is over, whatever its
        outcome, before the connection goes back to the pool (an in-memory database has
        only that one connection, so it cannot simply be dropped)."""
        async with self.engine.connect() as conn:
            try:
                result = await conn.run_sync(fn)
                await conn.commit()
                return result
            finally:
                if self.engine.dialect.name == "sqlite":
                    await conn.rollback()
                    await conn.exec_driver_sql("PRAGMA foreign_keys=ON")

    def _fence(self, uid: str) -> tuple[str, int]:
        """The ``(owner, epoch)`` this store writes race ``uid`` as."""
        return self.owner, self.epochs.get(uid, 1)

    @staticmethod
    async def _has_race(conn: AsyncConnection, uid: str) -> bool:
        found = await conn.execute(select(_races.c.id).where(_races.c.uid == uid))
        return found.first() is not None
