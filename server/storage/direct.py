"""A SQLite database file's own connection on a thread of its own, for the journal.

Why: a journal group through SQLAlchemy's asyncio layer over aiosqlite crosses from the
event loop to aiosqlite's thread and back several times per statement (a cursor, its
execute, its fetch, its close; the pool's ping, the transaction's begin, its commit,
the reset on return), each a wake-up of the loop and a switch of SQLAlchemy's greenlet;
``AsyncConnection.run_sync`` does not help, its statements go through the same adapter,
one crossing each. At a move a second per player the groups come 20 times a second
whatever the load, and those crossings were a quarter of the server's CPU
(docs/performance.md, "what a move costs when nothing batches it"). Here a whole group
(its checks, its inserts, its commit) is one function run on this thread: one crossing
there and one back.

Only the journal and the clock checkpoint come this way: they are the server's steady
writes. Everything else stays on the SQLAlchemy engine (``SqlStore``); both open the
same file, in WAL mode, and each write transaction here takes the write lock at its
start (``BEGIN IMMEDIATE``), so its checks and its inserts see one state of the file,
waiting (``busy_timeout``, on this thread, never on the loop) for another connection's
write to end.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["SqliteThread", "transaction", "BUSY_TIMEOUT_MS"]

T = TypeVar("T")

#: How long a write here waits for another connection's write to end (as the engine's own
#: connections wait: ``sql._sqlite_pragmas``).
BUSY_TIMEOUT_MS = 5000


class SqliteThread:
    """One ``sqlite3`` connection to ``path``, opened on first use and used only on a
    thread of its own; ``run(fn)`` calls ``fn(connection)`` there and awaits its result.

    The connection is in autocommit mode (``isolation_level=None``): ``fn`` opens and ends
    its own transaction (``transaction``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="yukon-sqlite")
        #: Touched only on the executor's one thread.
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` on this connection's thread: one crossing there and back."""
        if self._closed:
            raise sqlite3.ProgrammingError("the journal's connection is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, fn)

    async def transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` in one write transaction (``transaction``) on this
        connection's thread: the journal's group and its checkpoint are each one."""
        return await self.run(lambda conn: transaction(conn, work))

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
            try:
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA journal_mode=WAL")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return fn(conn)

    async def close(self) -> None:
        """Close the connection (after whatever runs now) and end the thread."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close_here)
        self._executor.shutdown(wait=False)

    def _close_here(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work(conn)`` in one write transaction, taken at once (``BEGIN IMMEDIATE``),
    committed if it returns, rolled back if it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result
