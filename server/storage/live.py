"""Live races and their journal in the SQL store: the races a node is running and their
actions, written in groups (on SQLite through a connection of its own), fenced by owner
and epoch so that a node that lost a race writes nothing for it, checkpoints, and the
rebuilding of live races after a restart or a take-over (docs/cluster.md).

A part of ``SqlStore`` (server/storage/sql.py), kept apart because it is the hot write
path with its own raw-SQL fast lane and its own fencing rules.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Table, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from ..domain.records import LiveAction, LiveRace
from .base import StoreBase, _live, _live_actions, _races, _utc
from .direct import SqliteThread

__all__ = ["LiveStore"]


def _split_held(
    rows: Iterable[Sequence[Any]], fence: dict[str, tuple[str, int]]
) -> tuple[set[str], set[str]]:
    """``(uid, owner, epoch)`` rows of ``live_races``: the uids still written by the
    ``(owner, epoch)`` ``fence`` gives for them, and those another node took over."""
    held: set[str] = set()
    fenced: set[str] = set()
    for uid, owner, epoch in rows:
        if (owner, epoch) == fence[uid]:
            held.add(uid)
        else:
            fenced.add(uid)
    return held, fenced


def _uids_in_direct(
    conn: sqlite3.Connection, table: str, columns: str, uids: Sequence[str], *, rows: bool = False
) -> Any:
    """``columns`` of the rows of ``table`` whose uid is one of ``uids`` (on the journal's
    own SQLite connection, in chunks within SQLite's limit on parameters): the first
    column's values as a set, or (``rows``) the rows."""
    found: list[Any] = []
    for i in range(0, len(uids), 500):
        chunk = uids[i : i + 500]
        marks = ", ".join(["?"] * len(chunk))
        found += conn.execute(f"SELECT {columns} FROM {table} WHERE uid IN ({marks})", chunk)
    return found if rows else {row[0] for row in found}


class LiveStore(StoreBase):
    """The journal of live races, checkpoints, owners and take-overs."""

    def _insert_ignoring_duplicates(self, table: Table) -> Any:
        """INSERT that skips rows already there: a retried journal batch is harmless."""
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(table).on_conflict_do_nothing()
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing()

    def _marks(self, n: int) -> str:
        """``n`` placeholders in the driver's own style, for SQL sent straight to it."""
        style = self.engine.dialect.paramstyle
        if style == "qmark":
            return ", ".join(["?"] * n)
        if style == "numeric_dollar":
            return ", ".join(f"${i}" for i in range(1, n + 1))
        raise ValueError(f"unsupported parameter style {style!r}")  # pragma: no cover

    def _insert_actions_sql(self) -> str:
        """``INSERT ... ON CONFLICT DO NOTHING`` of ``live_actions`` rows, in the driver's
        own placeholders (both SQLite and PostgreSQL know the clause)."""
        columns = ("race_uid", "n", "player_id", "seq", "at_ms", "action")
        return (
            f"INSERT INTO {_live_actions.name} ({', '.join(columns)}) "
            f"VALUES ({self._marks(len(columns))}) ON CONFLICT DO NOTHING"
        )

    async def _uids_in(self, conn: AsyncConnection, table: Table, uids: Sequence[str]) -> set[str]:
        """Which of ``uids`` ``table`` holds. Straight to the driver, as the journal's
        rows are: SQLAlchemy's expanding ``IN`` left cyclic garbage behind every 50 ms
        group, and the collector's passes are the server's latency tail
        (docs/performance.md)."""
        found: set[str] = set()
        for i in range(0, len(uids), 500):  # within every driver's limit on parameters
            chunk = tuple(uids[i : i + 500])
            result = await conn.exec_driver_sql(
                f"SELECT uid FROM {table.name} WHERE uid IN ({self._marks(len(chunk))})", chunk
            )
            found.update(row[0] for row in result)
        return found

    async def journal(
        self, *, races: Sequence[LiveRace], actions: Sequence[LiveAction]
    ) -> set[str]:
        """Write a batch of journal entries in one transaction, idempotently. Entries of a
        race whose result is already stored are dropped: it needs no rebuilding. So are
        those of a race another node took over (fenced): their uids are returned."""
        uids = {r.uid for r in races} | {a.uid for a in actions}
        if not uids:
            return set()
        for attempt in range(3):
            try:
                if self.direct is not None:
                    return await self._journal_direct(self.direct, uids, races, actions)
                return await self._journal(uids, races, actions)
            except (IntegrityError, sqlite3.IntegrityError):
                # A race ended (its result stored, its live row deleted) between this
                # batch's check and its insert: check again, and its entries are dropped.
                # (Through ``direct`` the check and the insert hold the write lock
                # together, so this is the engine's case.)
                if attempt == 2:
                    raise
        return set()  # pragma: no cover (the loop returns or raises)

    def _live_values(self, r: LiveRace) -> dict[str, Any]:
        """A ``live_races`` row of a race as it starts, as Python values."""
        return {
            "uid": r.uid,
            "room": r.room,
            "code": r.code,
            "rules": r.rules,
            "daily_date": r.daily_date,
            "attempt": r.attempt,
            "undo": r.undo,
            "time_limit": r.time_limit,
            "max_players": r.max_players,
            "fixed": r.fixed,
            "host_id": r.host_id,
            "players": json.dumps([list(p) for p in r.players]),
            "started_at": _utc(r.started_wall),
            "alive_ms": 0,
            "hints": r.hints,
            "salt": r.salt,
            "practice": r.practice,
            "owner": self.owner,
            "epoch": 1,
            "ghost_race": r.ghost_race,
            "ghost_player": r.ghost_player,
            "rated": r.rated,
            "archive": r.archive,
            "quick": r.quick,
            "invite_key": r.invite_key,
            "winnable": r.winnable,
        }

    def _live_params(self, r: LiveRace) -> tuple[Any, ...]:
        """``_live_values`` as the driver takes them, in ``live_races``' column order:
        each through its column type's own bind processor, so the row is stored exactly
        as the engine stores it (dates and times as SQLite text, booleans as integers)."""
        binds = self._live_binds
        if binds is None:
            dialect = self.engine.dialect
            binds = self._live_binds = [
                (c.name, c.type.dialect_impl(dialect).bind_processor(dialect))
                for c in _live.columns
            ]
        values = self._live_values(r)
        if len(values) != len(binds):  # a column added to the model and not here
            raise ValueError(f"live_races has {sorted(c for c, _ in binds)}, not {sorted(values)}")
        return tuple(
            value if bind is None else bind(value)
            for name, bind in binds
            for value in (values[name],)
        )

    def _insert_live_sql(self) -> str:
        """``INSERT ... ON CONFLICT DO NOTHING`` of a ``live_races`` row (``_live_params``)."""
        columns = [c.name for c in _live.columns]
        return (
            f"INSERT INTO {_live.name} ({', '.join(columns)}) "
            f"VALUES ({self._marks(len(columns))}) ON CONFLICT DO NOTHING"
        )

    async def _journal_direct(
        self,
        direct: SqliteThread,
        uids: set[str],
        races: Sequence[LiveRace],
        actions: Sequence[LiveAction],
    ) -> set[str]:
        """``_journal`` on a SQLite file's own connection: the rows and statements made
        here, the whole group run in one call on its thread (``server.storage.direct``)."""
        ordered = sorted(uids)
        fence = {uid: self._fence(uid) for uid in ordered}
        starts = [(r.uid, self._live_params(r)) for r in races]
        insert_live = self._insert_live_sql() if starts else ""
        rows = [(a.uid, a.n, a.player_id, a.seq, a.at_ms, a.action) for a in actions]
        insert_actions = self._insert_actions_sql() if rows else ""

        def group(conn: sqlite3.Connection) -> set[str]:
            if starts:  # as in ``_journal``: only a race's start asks
                stored = _uids_in_direct(conn, _races.name, "uid", [uid for uid, _ in starts])
                fresh = [params for uid, params in starts if uid not in stored]
                conn.executemany(insert_live, fresh)
            held, fenced = _split_held(
                _uids_in_direct(conn, _live.name, "uid, owner, epoch", ordered, rows=True),
                fence,
            )
            mine = [row for row in rows if row[0] in held]
            if mine:
                conn.executemany(insert_actions, mine)
            return fenced

        return await direct.transact(group)

    async def _journal(
        self, uids: set[str], races: Sequence[LiveRace], actions: Sequence[LiveAction]
    ) -> set[str]:
        async with self.engine.begin() as conn:
            ordered = sorted(uids)
            # Only a race's start needs to know whether its result is stored (a group
            # replayed after its race ended); most groups hold actions alone, and the
            # question was one of their five round trips.
            stored = (
                await self._uids_in(conn, _races, sorted(r.uid for r in races)) if races else set()
            )
            fresh = [r for r in races if r.uid not in stored]
            if fresh:
                await conn.execute(
                    self._insert_ignoring_duplicates(_live),
                    [self._live_values(r) for r in fresh],
                )
            live, fenced = await self._held(conn, ordered)
            rows = [
                (a.uid, a.n, a.player_id, a.seq, a.at_ms, a.action)
                for a in actions
                if a.uid in live
            ]
            if rows:
                # Straight to the driver (executemany): these are most of the server's
                # writes, and SQLAlchemy's per-row parameter handling cost more CPU on the
                # event loop than the insert itself (docs/performance.md).
                await conn.exec_driver_sql(self._insert_actions_sql(), rows)
        return fenced

    async def _held(self, conn: AsyncConnection, uids: Sequence[str]) -> tuple[set[str], set[str]]:
        """Which of ``uids`` are running races this store still writes for, and which were
        taken over by another node. On PostgreSQL the rows are locked (``FOR SHARE``) until
        the transaction ends, so a takeover's epoch bump waits for a group being written:
        the new owner then reads every action the old one wrote. Straight to the driver, as
        ``_uids_in``."""
        held: set[str] = set()
        fenced: set[str] = set()
        lock = " FOR SHARE" if self.dialect == "postgresql" else ""
        for i in range(0, len(uids), 500):
            chunk = tuple(uids[i : i + 500])
            result = await conn.exec_driver_sql(
                f"SELECT uid, owner, epoch FROM {_live.name}"
                f" WHERE uid IN ({self._marks(len(chunk))}){lock}",
                chunk,
            )
            mine, theirs = _split_held(
                (tuple(row) for row in result), {uid: self._fence(uid) for uid in chunk}
            )
            held |= mine
            fenced |= theirs
        return held, fenced

    async def checkpoint(self, *, alive: dict[str, int]) -> None:
        """Note how far each running race's clock has got: a crash costs at most the time
        since the last checkpoint, never the time the server was away."""
        if not alive:
            return
        if self.direct is not None:
            params = [(ms, uid, ms, self.owner) for uid, ms in alive.items()]
            update = (
                f"UPDATE {_live.name} SET alive_ms = ? WHERE uid = ? AND alive_ms < ? AND owner = ?"
            )
            await self.direct.transact(lambda c: c.executemany(update, params))
            return
        # One statement for every race (executemany): a checkpoint of 500 races must not
        # hold the event loop for 500 round trips (bench/load.py).
        statement = (
            _live.update()
            .where(
                _live.c.uid == bindparam("u"),
                _live.c.alive_ms < bindparam("ms"),
                _live.c.owner == self.owner,  # a race taken over is not this node's to time
            )
            .values(alive_ms=bindparam("ms"))
        )
        async with self.engine.begin() as conn:
            await conn.execute(statement, [{"u": uid, "ms": ms} for uid, ms in alive.items()])

    async def live_races(self) -> list[tuple[LiveRace, list[LiveAction], int]]:
        """Every journaled race still to be rebuilt, its actions in order, and the clock to
        resume it at. Races whose result was stored meanwhile are removed instead."""
        out = []
        async with self.engine.begin() as conn:
            rows = (await conn.execute(select(_live).order_by(_live.c.started_at))).all()
            for row in rows:
                if await self._has_race(conn, row.uid):
                    await conn.execute(
                        _live_actions.delete().where(_live_actions.c.race_uid == row.uid)
                    )
                    await conn.execute(_live.delete().where(_live.c.uid == row.uid))
                    continue
                out.append(await self._rebuild(conn, row))
        return out

    async def live_owners(
        self, owners: Iterable[str] | None = None
    ) -> list[tuple[str, str, str, int]]:
        """Every running race as ``(uid, room, owner, epoch)`` (only those of ``owners``,
        if given): a node's sweep looks for races whose owner is gone (docs/cluster.md)."""
        query = select(_live.c.uid, _live.c.room, _live.c.owner, _live.c.epoch)
        if owners is not None:
            query = query.where(_live.c.owner.in_(sorted(set(owners))))
        async with self.engine.connect() as conn:
            rows = await conn.execute(query)
            return [(r.uid, r.room, r.owner, r.epoch) for r in rows]

    async def race_owners(self) -> set[str]:
        """The nodes that own a running race: what a node's sweep checks once a second,
        a row per node instead of a row per race on every node (docs/performance.md)."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(_live.c.owner).distinct())
            return {r.owner for r in rows}

    async def take_over(
        self, *, uid: str, owner: str, epoch: int
    ) -> tuple[LiveRace, list[LiveAction], int] | None:
        """Take race ``uid`` from ``owner`` at ``epoch``: bump the fencing token and read the
        journal in one transaction. From its commit the old owner's writes are refused;
        its group being written, if any, holds the row and is read here. None: the row
        moved meanwhile (another node took it, or the race ended)."""
        async with self.engine.begin() as conn:
            bumped = await conn.execute(
                _live.update()
                .where(_live.c.uid == uid, _live.c.owner == owner, _live.c.epoch == epoch)
                .values(owner=self.owner, epoch=epoch + 1)
            )
            if bumped.rowcount != 1:
                return None
            row = (await conn.execute(select(_live).where(_live.c.uid == uid))).first()
            assert row is not None
            self.epochs[uid] = epoch + 1
            return await self._rebuild(conn, row)

    async def _rebuild(
        self, conn: AsyncConnection, row: Any
    ) -> tuple[LiveRace, list[LiveAction], int]:
        """A ``live_races`` row with its actions, and the clock to resume it at."""
        actions = [
            LiveAction(row.uid, a.n, a.player_id, a.seq, a.at_ms, a.action)
            for a in (
                await conn.execute(
                    select(_live_actions)
                    .where(_live_actions.c.race_uid == row.uid)
                    .order_by(_live_actions.c.n)
                )
            ).all()
        ]
        started = row.started_at
        if started.tzinfo is None:
            started = started.replace(tzinfo=dt.UTC)
        live = LiveRace(
            uid=row.uid,
            room=row.room,
            code=row.code,
            rules=row.rules,
            daily_date=row.daily_date,
            attempt=row.attempt,
            undo=row.undo,
            time_limit=row.time_limit,
            max_players=row.max_players,
            fixed=row.fixed,
            host_id=row.host_id,
            players=tuple((int(p), str(n)) for p, n in json.loads(row.players)),
            started_wall=started.timestamp(),
            hints=bool(row.hints),
            salt=row.salt,
            practice=bool(row.practice),
            ghost_race=row.ghost_race,
            ghost_player=row.ghost_player,
            rated=bool(row.rated),
            archive=bool(row.archive),
            quick=bool(row.quick),
            invite_key=row.invite_key,
            winnable=bool(row.winnable),
        )
        alive = max([row.alive_ms, *(a.at_ms for a in actions)])
        return live, actions, alive
