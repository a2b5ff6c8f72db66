"""The daily's log in the database: an append-only table of the hash chain of
``protocol.dailylog`` (docs/protocol.md 4.29).

Entries are appended, never updated or deleted: a day's entry in the transaction that
keeps the day's deal (``append_in``, called by ``SqlStore.save_daily_deal``), and a board
entry in the transaction of the operator's action that changed a past board (a void, a
mark, and their undos). ``n`` is the primary key, so two processes of a cluster appending
at once cannot both take the same place: the loser's insert fails on the key and is tried
again from the new head, in a savepoint (``append_in``), which keeps the chain a chain.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from sqlalchemy import DateTime, Integer, String, Table, Text, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from protocol.dailylog import EntryKind, LogEntry, make_entry

from .declarative import Base

__all__ = ["DailyLogRow", "append", "append_in", "days_in_log", "entries", "log_time"]

#: Attempts at an append that lost its place to another process's append.
_TRIES = 8


class DailyLogRow(Base):
    """One entry of the daily's log (migration 0015)."""

    __tablename__ = "daily_log"

    n: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(8))
    #: The day the entry is about (``YYYY-MM-DD``), as text: it is hashed as text.
    day: Mapped[str] = mapped_column(String(10), index=True)
    #: When it was appended, as hashed: ``YYYY-MM-DDTHH:MM:SSZ``.
    at: Mapped[str] = mapped_column(String(20))
    #: The body as canonical JSON.
    body: Mapped[str] = mapped_column(Text)
    prev: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    #: The same moment as a timestamp, for operators' queries.
    appended_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


_log = cast(Table, DailyLogRow.__table__)


def log_time(now: float) -> str:
    """A wall time as an entry's ``at``: ISO 8601 UTC to the second."""
    return dt.datetime.fromtimestamp(int(now), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(row: object) -> LogEntry:
    r = cast(DailyLogRow, row)
    return LogEntry(r.n, EntryKind(r.kind), r.day, r.at, json.loads(r.body), r.prev, r.hash)


async def append_in(
    conn: AsyncConnection,
    kind: EntryKind,
    day: str,
    now: float,
    body: Mapping[str, str | int | None],
) -> LogEntry:
    """Append one entry inside the caller's transaction, after the caller's own writes.

    On PostgreSQL another process may take the next place between the read of the head
    and the insert: the insert is made in a savepoint and tried again from the new head.
    On SQLite a transaction that has written holds the file's write lock, so nobody can.
    """
    if conn.dialect.name != "postgresql":
        return await _append_once(conn, kind, day, now, body)
    for attempt in range(_TRIES):
        try:
            async with conn.begin_nested():
                return await _append_once(conn, kind, day, now, body)
        except IntegrityError:
            if attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")


async def _append_once(
    conn: AsyncConnection,
    kind: EntryKind,
    day: str,
    now: float,
    body: Mapping[str, str | int | None],
) -> LogEntry:
    last = (await conn.execute(select(_log).order_by(_log.c.n.desc()).limit(1))).first()
    entry = make_entry(_entry(last) if last is not None else None, kind, day, log_time(now), body)
    await conn.execute(
        insert(_log).values(
            n=entry.n,
            kind=entry.kind.value,
            day=entry.date,
            at=entry.at,
            body=json.dumps(dict(entry.body), sort_keys=True, separators=(",", ":")),
            prev=entry.prev,
            hash=entry.hash,
            appended_at=dt.datetime.fromtimestamp(now, dt.UTC),
        )
    )
    return entry


async def append(
    engine: AsyncEngine,
    kind: EntryKind,
    day: str,
    now: float,
    body: Mapping[str, str | int | None],
) -> LogEntry:
    """Append one entry in a transaction of its own. Its read of the head comes before any
    write of it, so on SQLite (where ``append_in`` relies on the caller's earlier write
    holding the lock) another process may take the place first: then it is tried again."""
    for attempt in range(_TRIES):
        try:
            async with engine.begin() as conn:
                return await append_in(conn, kind, day, now, body)
        except IntegrityError:
            if attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")


async def entries(
    engine: AsyncEngine, *, since: int = 0, limit: int | None = None
) -> Sequence[LogEntry]:
    """The entries from ``since`` on, in order (all of them by default)."""
    query = select(_log).where(_log.c.n >= since).order_by(_log.c.n)
    if limit is not None:
        query = query.limit(limit)
    async with engine.connect() as conn:
        return [_entry(row) for row in await conn.execute(query)]


async def days_in_log(conn: AsyncConnection, days: Iterable[str]) -> list[str]:
    """Which of ``days`` have a day entry: the days whose boards the log vouches for."""
    wanted = sorted(set(days))
    if not wanted:
        return []
    query = select(_log.c.day).where(_log.c.kind == EntryKind.DAY.value, _log.c.day.in_(wanted))
    return sorted({str(d) for (d,) in await conn.execute(query)})
