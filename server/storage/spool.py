"""Results that must not be lost, even while the database is away.

``ResultWriter.write`` first appends the record to a local spool file (flushed and
fsynced), then tries the database until it commits, backing off between tries. Only then
does it return, so the caller announces a result that is in the database. A record still in
the spool when the server starts again (it crashed, or stopped while the database was away)
is written then. The database write is idempotent (``RaceRecord.uid``), so a record written
just before a crash and replayed after it is stored once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import logging
import os
from pathlib import Path
from typing import IO, Any

from sqlalchemy.exc import DataError, IntegrityError, ProgrammingError

from ..domain.records import PlayerResult, RaceRecord, RatingChange
from .sql import FencedError, SqlStore, describe_error

#: Errors that mean the database refused this record, not that it is away.
_PERMANENT = (IntegrityError, DataError, ProgrammingError)

__all__ = ["ResultWriter", "record_to_json", "record_from_json"]

log = logging.getLogger("yukon.storage")


def _private(path: Path, mode: str) -> IO[str]:
    """Open a spool file readable by the server's user only: a record holds its race's game
    code, which for today's daily deal is still a secret (docs/fairness.md)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)  # a file left by an older version may have been readable by all
    return os.fdopen(fd, mode, encoding="utf-8")


def record_to_json(record: RaceRecord) -> str:
    data = dataclasses.asdict(record)
    data["daily_date"] = record.daily_date.isoformat() if record.daily_date else None
    return json.dumps(data, separators=(",", ":"))


def record_from_json(text: str) -> RaceRecord:
    data: dict[str, Any] = json.loads(text)
    results = tuple(
        PlayerResult(
            **{
                **r,
                "journal": tuple((at, mv) for at, mv in r["journal"]),
                "resumed_at": tuple(r.get("resumed_at", ())),
            }
        )
        for r in data.pop("results")
    )
    daily = data.pop("daily_date")
    return RaceRecord(
        **data,
        daily_date=dt.date.fromisoformat(daily) if daily else None,
        results=results,
    )


class ResultWriter:
    """Writes finished races to the database, through a spool file that survives outages."""

    def __init__(
        self,
        store: SqlStore,
        spool: Path,
        *,
        first_delay: float = 0.25,
        max_delay: float = 5.0,
    ) -> None:
        self.store = store
        self.spool = spool
        self.first_delay = first_delay
        self.max_delay = max_delay
        self._pending: dict[str, RaceRecord] = {}
        self._lock = asyncio.Lock()
        #: Figures for logs and metrics.
        self.failures = 0
        self.retries = 0

    @property
    def pending(self) -> int:
        """Results kept in the spool, waiting for the database."""
        return len(self._pending)

    async def recover(self) -> list[RaceRecord]:
        """Records left in the spool by an earlier run, written now (retrying as needed)."""
        if not self.spool.exists():
            return []
        records = []
        for line in self.spool.read_text().splitlines():
            if line.strip():
                try:
                    records.append(record_from_json(line))
                except (ValueError, TypeError, KeyError):
                    log.error("spool %s: skipping an unreadable line", self.spool)
        if records:
            log.warning("spool %s: %d result(s) from an earlier run", self.spool, len(records))
        for record in records:
            self._pending[record.uid] = record
        for record in records:
            await self._commit(record)
        return records

    async def write(self, record: RaceRecord) -> dict[int, RatingChange]:
        """Return once ``record`` is committed to the database; never lose it meanwhile.
        The answer: the rating changes storing it made (docs/ratings.md), by player id."""
        async with self._lock:
            self._pending[record.uid] = record
            await asyncio.to_thread(self._append, record_to_json(record))
        return await self._commit(record)

    async def _commit(self, record: RaceRecord) -> dict[int, RatingChange]:
        delay = self.first_delay
        tries = 0
        while True:
            try:
                changes = await self.store.record_race(record)
                break
            except FencedError:
                # Another node took the race over and will store it: nothing to keep here.
                log.warning("race %s: taken over by another node; not stored here", record.uid)
                async with self._lock:
                    self._pending.pop(record.uid, None)
                    await asyncio.to_thread(self._rewrite)
                raise
            except _PERMANENT as exc:
                # The database answered and refused the record: retrying cannot help. Keep
                # it, aside, for a person to look at; nothing is thrown away.
                log.error(
                    "race %s: the database refused the result (%s); kept in %s",
                    record.uid,
                    describe_error(exc),
                    self.failed_path,
                )
                async with self._lock:
                    await asyncio.to_thread(self._set_aside, record)
                raise
            except Exception as exc:  # any database or network failure: keep it, retry
                tries += 1
                self.failures += 1
                if tries == 1:
                    log.warning(
                        "race %s: database write failed (%s); result kept in %s, retrying",
                        record.uid,
                        type(exc).__name__,
                        self.spool,
                    )
                await asyncio.sleep(delay)
                self.retries += 1
                delay = min(delay * 2, self.max_delay)
        if tries:
            log.info("race %s: stored after %d failed attempt(s)", record.uid, tries)
        async with self._lock:
            self._pending.pop(record.uid, None)
            await asyncio.to_thread(self._rewrite)
        return changes

    @property
    def failed_path(self) -> Path:
        return self.spool.with_suffix(self.spool.suffix + ".failed")

    def _set_aside(self, record: RaceRecord) -> None:
        with _private(self.failed_path, "a") as f:
            f.write(record_to_json(record) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._pending.pop(record.uid, None)
        self._rewrite()

    def _append(self, line: str) -> None:
        self.spool.parent.mkdir(parents=True, exist_ok=True)
        with _private(self.spool, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _rewrite(self) -> None:
        """The spool holds exactly the records not yet committed (atomic replace)."""
        if not self._pending:
            self.spool.unlink(missing_ok=True)
            return
        tmp = self.spool.with_suffix(self.spool.suffix + ".tmp")
        with _private(tmp, "w") as f:
            for record in self._pending.values():
                f.write(record_to_json(record) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.spool)
