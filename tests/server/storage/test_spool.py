"""ResultWriter: a result is spooled to disk, then retried until the database commits it.

The outages are real: for PostgreSQL a loopback TCP proxy between the store and the server
is cut (connections dropped and refused) and restored; for SQLite another connection holds
an exclusive lock, so writes fail with "database is locked".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from server.domain.records import PlayerResult, RaceRecord
from server.storage.models import MoveRow, RaceRow, ResultRow
from server.storage.spool import ResultWriter, record_from_json, record_to_json
from server.storage.sql import Identity, SqlStore, describe_error

T0 = 1_795_000_000.0
WAIT = 15.0  # upper bound for any single wait in this file


def record(uid: str, *players: Identity, daily: dt.date | None = None) -> RaceRecord:
    return RaceRecord(
        uid=uid,
        race_id=7,
        room=None if daily else "ROOM",
        code="C-0001234",
        rules="C",
        daily_date=daily,
        started_wall=T0,
        ended_wall=T0 + 95.5,
        results=tuple(
            PlayerResult(
                player_id=p.player_id,
                name=p.name,
                rank=i + 1,
                outcome="won" if i == 0 else "stuck",
                time_ms=90_000 + i,
                moves=100 + i,
                score=500,
                foundations=52 if i == 0 else 30,
                undos=i,
                practice=False,
                journal=((250, "7H>2"), (900, "undo"), (1200, "AS>F")),
            )
            for i, p in enumerate(players)
        ),
    )


async def count(store: SqlStore, model: Any, uid: str | None = None) -> int:
    def run(conn: Connection) -> int:
        query = select(func.count()).select_from(model.__table__)
        if uid is not None:
            query = query.where(model.__table__.c.uid == uid)
        return int(conn.execute(query).scalar_one())

    result: int = await store.run_sync(run)
    return result


async def until(condition: Callable[[], bool], what: str) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(poll(), WAIT)
    except TimeoutError:
        pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
async def players(store: SqlStore) -> list[Identity]:
    return [await store.register_player(name=n, now=T0) for n in ("alice", "bob")]


# -- the spool format ----------------------------------------------------------------------------


def test_record_json_round_trip() -> None:
    a, b = Identity(1, "alice", "t"), Identity(2, "Zoë ✓", "t")
    for original in (
        record("room-race", a, b),
        record("daily-race", a, daily=dt.date(2026, 11, 29)),
        record("nobody"),
    ):
        line = record_to_json(original)
        assert "\n" not in line
        again = record_from_json(line)
        assert again == original
        assert isinstance(again.results, tuple)
        assert all(isinstance(r.journal, tuple) for r in again.results)
        assert all(isinstance(step, tuple) for r in again.results for step in r.journal)


def test_the_hint_mark_is_spooled_and_an_older_spool_reads_as_unhinted() -> None:
    a = Identity(1, "alice", "t")
    plain = record("spooled-race", a)
    hinted = dataclasses.replace(
        plain, results=(dataclasses.replace(plain.results[0], hinted=True),)
    )
    assert record_from_json(record_to_json(hinted)) == hinted
    older = record_to_json(plain).replace(',"hinted":false', "")  # written before hints
    assert "hinted" not in older
    assert record_from_json(older) == plain


# -- writing -------------------------------------------------------------------------------------


async def test_write_stores_and_removes_the_spool(
    store: SqlStore, players: list[Identity], tmp_path: Path
) -> None:
    spool = tmp_path / "spool" / "results.jsonl"
    writer = ResultWriter(store, spool, first_delay=0.01, max_delay=0.05)
    rec = record("r1", *players)
    await asyncio.wait_for(writer.write(rec), WAIT)
    assert await count(store, RaceRow, "r1") == 1
    assert await count(store, ResultRow) == 2
    assert await count(store, MoveRow) == 6
    assert not spool.exists()
    assert writer.pending == 0 and writer.failures == 0
    # Writing it again (a replay) stores nothing new.
    await asyncio.wait_for(writer.write(rec), WAIT)
    assert await count(store, RaceRow) == 1 and await count(store, ResultRow) == 2


# -- a real outage -------------------------------------------------------------------------------


class TcpProxy:
    """127.0.0.1:<port> forwarded to a target. While ``down`` it drops every open
    connection and resets every new one."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.up = True
        self.port = 0
        self._server: asyncio.Server | None = None
        self._transports: set[asyncio.WriteTransport] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def cut(self) -> None:
        self.up = False
        for transport in list(self._transports):
            transport.abort()

    def restore(self) -> None:
        self.up = True

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if not self.up:
                writer.transport.abort()
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.target)
            except OSError:
                writer.transport.abort()
                return
            pair = {writer.transport, up_writer.transport}
            self._transports |= pair

            async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
                with contextlib.suppress(OSError):
                    while data := await src.read(65536):
                        dst.write(data)
                        await dst.drain()
                dst.transport.abort()

            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
            self._transports -= pair
        finally:
            self._tasks.discard(task)


class Outage:
    """A store whose database can be made unreachable and brought back."""

    store: SqlStore
    begin: Callable[[], Awaitable[None]]
    end: Callable[[], Awaitable[None]]
    close: Callable[[], Awaitable[None]]
    #: What the failed writes must say.
    expect_error: str | None


@contextlib.asynccontextmanager
async def outage_for(db_url: str) -> AsyncIterator[Outage]:
    outage = Outage()
    if db_url.startswith("sqlite"):
        path = db_url.split("///", 1)[1]
        outage.store = SqlStore(db_url)
        lock: list[sqlite3.Connection] = []

        async def begin() -> None:
            conn = sqlite3.connect(path, isolation_level=None, timeout=0)
            conn.execute("BEGIN EXCLUSIVE")
            lock.append(conn)

        async def end() -> None:
            for conn in lock:
                conn.execute("ROLLBACK")
                conn.close()
            lock.clear()

        outage.begin, outage.end = begin, end
        outage.expect_error = "database is locked"
        try:
            yield outage
        finally:
            await end()
            await outage.store.close()
        return

    parts = urlsplit(db_url)
    proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{proxy.port}"
    proxied = urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))
    outage.store = SqlStore(proxied)

    async def cut() -> None:
        proxy.cut()

    async def restore() -> None:
        proxy.restore()

    outage.begin, outage.end = cut, restore
    outage.expect_error = None
    try:
        yield outage
    finally:
        await outage.store.close()
        await proxy.close()


async def test_write_waits_out_a_real_outage(
    store: SqlStore, players: list[Identity], db_url: str, tmp_path: Path
) -> None:
    spool = tmp_path / "results.jsonl"
    async with outage_for(db_url) as outage:
        reached = outage.store
        await reached.ping()  # a pooled connection that the outage will break
        errors: list[BaseException] = []
        record_race = reached.record_race

        async def spy(rec: RaceRecord) -> None:
            try:
                await record_race(rec)
            except Exception as exc:
                errors.append(exc)
                raise

        reached.record_race = spy  # type: ignore[method-assign, assignment]
        writer = ResultWriter(reached, spool, first_delay=0.02, max_delay=0.1)
        rec = record("during-outage", *players)

        await outage.begin()
        started = time.monotonic()
        task = asyncio.create_task(writer.write(rec))
        try:
            # Each SQLite failure waits out busy_timeout (5 s): one is enough there.
            failures = 1 if outage.expect_error else 3
            await until(lambda: writer.failures >= failures, "failed writes")
            assert spool.exists()
            assert [record_from_json(line) for line in spool.read_text().splitlines()] == [rec]
            assert writer.pending == 1
            assert not task.done(), "write() returned while the database was away"
            assert await count(store, RaceRow) == 0
            if outage.expect_error is not None:
                assert outage.expect_error in describe_error(errors[0])
        finally:
            await outage.end()
        await asyncio.wait_for(task, WAIT)
        task.result()

    assert time.monotonic() - started < WAIT
    assert await count(store, RaceRow, "during-outage") == 1
    assert await count(store, ResultRow) == 2
    assert await count(store, MoveRow) == 6
    assert not spool.exists()
    assert writer.pending == 0
    assert writer.retries >= 1 and len(errors) == writer.failures


# -- recovery after a restart --------------------------------------------------------------------


async def test_recover_stores_a_spool_left_by_an_earlier_run(
    store: SqlStore, players: list[Identity], tmp_path: Path
) -> None:
    spool = tmp_path / "results.jsonl"
    alice, bob = players
    left = [record("left-1", alice, bob), record("left-2", bob, daily=dt.date(2026, 11, 29))]
    spool.write_text("".join(record_to_json(r) + "\n" for r in left))

    writer = ResultWriter(store, spool, first_delay=0.01, max_delay=0.05)
    recovered = await asyncio.wait_for(writer.recover(), WAIT)
    assert recovered == left
    assert await count(store, RaceRow, "left-1") == 1
    assert await count(store, RaceRow, "left-2") == 1
    assert await count(store, ResultRow) == 3
    assert not spool.exists()
    assert writer.pending == 0

    # Nothing left: a second start recovers nothing.
    assert await asyncio.wait_for(writer.recover(), WAIT) == []


async def test_recovering_an_already_stored_record_does_not_double_it(
    store: SqlStore, players: list[Identity], tmp_path: Path
) -> None:
    """The crash came after the commit but before the spool was rewritten."""
    spool = tmp_path / "results.jsonl"
    stored = record("stored", *players)
    await store.record_race(stored)
    fresh = record("fresh", *players)
    spool.write_text(record_to_json(stored) + "\n" + record_to_json(fresh) + "\n")

    writer = ResultWriter(store, spool, first_delay=0.01, max_delay=0.05)
    assert await asyncio.wait_for(writer.recover(), WAIT) == [stored, fresh]
    assert await count(store, RaceRow, "stored") == 1
    assert await count(store, RaceRow, "fresh") == 1
    assert await count(store, ResultRow) == 4
    assert not spool.exists()


async def test_recover_skips_a_torn_last_line(
    store: SqlStore, players: list[Identity], tmp_path: Path
) -> None:
    """A crash in the middle of an append leaves half a line; the rest is still stored."""
    spool = tmp_path / "results.jsonl"
    good = record("good", *players)
    torn = record_to_json(record("torn", *players))[:40]
    spool.write_text(record_to_json(good) + "\n\n" + torn)

    writer = ResultWriter(store, spool, first_delay=0.01, max_delay=0.05)
    assert await asyncio.wait_for(writer.recover(), WAIT) == [good]
    assert await count(store, RaceRow) == 1
    assert not spool.exists()


async def test_recover_without_a_spool_does_nothing(store: SqlStore, tmp_path: Path) -> None:
    writer = ResultWriter(store, tmp_path / "absent.jsonl")
    assert await asyncio.wait_for(writer.recover(), WAIT) == []
    assert not (tmp_path / "absent.jsonl").exists()


async def test_a_record_the_database_refuses_is_set_aside_not_retried(
    store: SqlStore, tmp_path: Path
) -> None:
    """A result for a player the database does not know (a foreign key it refuses) cannot
    succeed by retrying: the writer sets it aside in ``<spool>.failed`` and says so."""
    spool = tmp_path / "results.jsonl"
    writer = ResultWriter(store, spool, first_delay=0.01, max_delay=0.05)
    ghost = Identity(999, "ghost", "t")
    with pytest.raises(IntegrityError):
        await asyncio.wait_for(writer.write(record("r-ghost", ghost)), WAIT)
    assert writer.pending == 0
    assert not spool.exists()
    [kept] = writer.failed_path.read_text().splitlines()
    assert record_from_json(kept).uid == "r-ghost"
    assert await count(store, RaceRow, "r-ghost") == 0
