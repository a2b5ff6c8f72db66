"""Finished races in the SQL store: recording a race with its results, moves and the bests
it beats (rated in the same transaction), and the reads of what was recorded: a player's
history, a room's last race, one run's moves, when races are played.

A part of ``SqlStore`` (server/storage/sql.py), kept apart because the record of a
finished race is written once and only read after, unlike the live races' journal.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from protocol.messages import name_key

from ..domain.records import RaceRecord, RatingChange
from ..domain.signals import DEFAULT_FAIRPLAY, FairPlay
from .base import (
    FencedError,
    StoreBase,
    _archive_bests,
    _aware,
    _bests,
    _live,
    _live_actions,
    _moves,
    _players,
    _races,
    _results,
    _utc,
)
from .models import board_key
from .ratings import lock_players, rate, stored_changes
from .run_signals import record_signals

__all__ = [
    "ResultsStore",
    "StoredResult",
    "HistoryEntry",
    "StoredRun",
    "RoomResult",
    "RoomRace",
    "History",
]


@dataclass(frozen=True, slots=True)
class StoredResult:
    """A result as stored, with its actions (move texts and ``undo``) in order."""

    code: str
    outcome: str
    moves: int
    score: int
    foundations: int
    undos: int
    actions: tuple[str, ...]
    hinted: bool = False


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    finished_at: dt.datetime
    code: str
    room: str | None
    daily_date: dt.date | None
    practice: bool
    outcome: str
    rank: int
    players: int
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    hinted: bool = False
    #: The race's id (``races.uid``).
    race: str | None = None


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One player's run in a stored race, with its actions: what a replay shows."""

    race: str
    player_id: int
    name: str
    code: str
    rules: str
    room: str | None
    daily_date: dt.date | None
    practice: bool
    finished_at: dt.datetime
    rank: int
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    hinted: bool
    #: Every runner of the race, in rank order (ties in the order they were stored).
    players: tuple[str, ...]
    #: ``(ms, action)`` in order: a move text or ``undo``, at its time on the race clock.
    actions: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class RoomResult:
    """One runner's place in a room's stored race (``RoomRace``)."""

    rank: int
    name: str
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    hinted: bool


@dataclass(frozen=True, slots=True)
class RoomRace:
    """The newest stored race of a room code: what its invite link shows once the room
    is closed (``/r/CODE``)."""

    race: str
    code: str
    finished_at: dt.datetime
    #: Every runner, in rank order (ties in the order they were stored).
    results: tuple[RoomResult, ...]


@dataclass(frozen=True, slots=True)
class History:
    games: int
    wins: int
    best_time_ms: int | None
    offset: int
    rows: tuple[HistoryEntry, ...]


class ResultsStore(StoreBase):
    """Recording finished races and reading them back (history, runs, rooms)."""

    #: The fair-play thresholds and automatic hide each recorded run is judged by
    #: (``ServeOptions.fairplay``; the defaults until ``open_server`` sets it).
    fairplay: FairPlay = DEFAULT_FAIRPLAY

    async def record_race(self, record: RaceRecord) -> dict[int, RatingChange]:
        """Store a finished race with its results and moves, once: a retry is a no-op.

        A rated race also rates its runners, in the same transaction (``ratings.rate``):
        the changes it made come back, by player id (a retry returns those stored)."""
        try:
            async with self.engine.begin() as conn:
                if await self._has_race(conn, record.uid):
                    return await stored_changes(conn, record.uid)
                if record.rated:
                    # Before the race's id is drawn: rated races sharing a runner are
                    # numbered in the order they are rated, which recomputing follows.
                    await lock_players(conn, [r.player_id for r in record.results])
                held = (
                    await conn.execute(
                        select(_live.c.owner, _live.c.epoch)
                        .where(_live.c.uid == record.uid)
                        .with_for_update()
                    )
                ).first()
                if held is not None and (held.owner, held.epoch) != self._fence(record.uid):
                    raise FencedError(record.uid)
                race_id, result_ids = await self._insert_race(conn, record)
                await record_signals(conn, record, race_id, result_ids, self.fairplay)
                changes: dict[int, RatingChange] = {}
                if record.rated:
                    changes = await rate(conn, record, race_id, result_ids)
                # Stored: the race needs no rebuilding after a restart any more.
                await conn.execute(
                    _live_actions.delete().where(_live_actions.c.race_uid == record.uid)
                )
                await conn.execute(_live.delete().where(_live.c.uid == record.uid))
            return changes
        except IntegrityError:
            async with self.engine.connect() as conn:
                if await self._has_race(conn, record.uid):
                    return await stored_changes(conn, record.uid)  # a concurrent retry
            raise

    @staticmethod
    async def _insert_race(conn: AsyncConnection, record: RaceRecord) -> tuple[int, dict[int, int]]:
        """Insert the race, its results and moves: the race's row id, and each result's
        by player id."""
        result_ids: dict[int, int] = {}
        race_id = (
            await conn.execute(
                insert(_races)
                .values(
                    uid=record.uid,
                    code=record.code,
                    rules=record.rules,
                    room=record.room,
                    daily_date=record.daily_date,
                    started_at=_utc(record.started_wall),
                    ended_at=_utc(record.ended_wall),
                    rated=record.rated,
                )
                .returning(_races.c.id)
            )
        ).scalar_one()
        finished = _utc(record.ended_wall)
        for r in record.results:
            key = board_key(
                won=r.outcome == "won",
                time_ms=r.time_ms,
                moves=r.moves,
                foundations=r.foundations,
                score=r.score,
                hinted=r.hinted,
            )
            result_id = (
                await conn.execute(
                    insert(_results)
                    .values(
                        race_id=race_id,
                        player_id=r.player_id,
                        code=record.code,
                        daily_date=record.daily_date,
                        practice=r.practice,
                        outcome=r.outcome,
                        time_ms=r.time_ms,
                        moves=r.moves,
                        score=r.score,
                        foundations=r.foundations,
                        rank=r.rank,
                        undos=r.undos,
                        hinted=r.hinted,
                        board_key=key,
                        finished_at=finished,
                        archive=record.archive,
                    )
                    .returning(_results.c.id)
                )
            ).scalar_one()
            result_ids[r.player_id] = result_id
            if record.archive and record.daily_date is not None:
                await ResultsStore._keep_best(
                    conn,
                    _archive_bests,
                    "daily_date",
                    record.daily_date,
                    r.player_id,
                    result_id,
                    key,
                )
            elif not r.practice:
                await ResultsStore._keep_best(
                    conn, _bests, "code", record.code, r.player_id, result_id, key
                )
            if r.journal:
                await conn.execute(
                    insert(_moves),
                    [
                        {"result_id": result_id, "n": n, "at_ms": at, "move": move}
                        for n, (at, move) in enumerate(r.journal, start=1)
                    ],
                )
        return race_id, result_ids

    @staticmethod
    async def _keep_best(
        conn: AsyncConnection,
        table: Table,
        board: str,
        value: object,
        player_id: int,
        result_id: int,
        key: int,
    ) -> None:
        """Make this result the player's best of its board if it is better than the one kept
        in ``table`` (``deal_bests`` by ``code``, ``archive_bests`` by ``daily_date``: the
        column named ``board`` holds ``value``); one statement, so two results stored at
        once cannot both win."""
        from sqlalchemy.dialects import postgresql, sqlite

        upsert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        new: Any = upsert(table).values(
            {board: value, "player_id": player_id, "result_id": result_id, "board_key": key}
        )
        await conn.execute(
            new.on_conflict_do_update(
                index_elements=[table.c[board], table.c.player_id],
                set_={"result_id": new.excluded.result_id, "board_key": new.excluded.board_key},
                # Strictly better: among equal results the first stored stays.
                where=new.excluded.board_key < table.c.board_key,
            )
        )

    async def stored_results(self, *, code: str | None = None) -> list[StoredResult]:
        """Every stored result (of one deal if ``code``) with its actions, so that a check can
        replay each through the engine and compare."""
        r = _results.c
        query = select(
            r.id, r.code, r.outcome, r.moves, r.score, r.foundations, r.undos, r.hinted
        ).order_by(r.id)
        if code is not None:
            query = query.where(r.code == code)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
            out = []
            for row in rows:
                actions = (
                    await conn.execute(
                        select(_moves.c.move)
                        .where(_moves.c.result_id == row.id)
                        .order_by(_moves.c.n)
                    )
                ).scalars()
                out.append(
                    StoredResult(
                        row.code,
                        row.outcome,
                        row.moves,
                        row.score,
                        row.foundations,
                        row.undos,
                        tuple(actions),
                        bool(row.hinted),
                    )
                )
        return out

    async def history(self, *, player_id: int, offset: int = 0, limit: int = 20) -> History:
        r = _results.c
        other = _results.alias("other")
        players_in_race = (
            select(func.count()).select_from(other).where(other.c.race_id == r.race_id)
        ).scalar_subquery()
        async with self.engine.connect() as conn:
            totals = (
                await conn.execute(
                    select(
                        func.count(),
                        func.count().filter(r.outcome == "won"),
                        func.min(r.time_ms).filter(r.outcome == "won"),
                    ).where(r.player_id == player_id)
                )
            ).one()
            page = (
                await conn.execute(
                    select(
                        r.finished_at,
                        r.code,
                        _races.c.room,
                        r.daily_date,
                        r.practice,
                        r.outcome,
                        r.rank,
                        players_in_race.label("players"),
                        r.time_ms,
                        r.moves,
                        r.score,
                        r.foundations,
                        r.undos,
                        r.hinted,
                        _races.c.uid.label("race"),
                    )
                    .join(_races, _races.c.id == r.race_id)
                    .where(r.player_id == player_id)
                    # By finishing time: a result stored late (after an outage) still sorts
                    # where its race ended.
                    .order_by(r.finished_at.desc(), r.id.desc())
                    .offset(offset)
                    .limit(limit)
                )
            ).all()
        return History(
            games=int(totals[0]),
            wins=int(totals[1]),
            best_time_ms=None if totals[2] is None else int(totals[2]),
            offset=offset,
            rows=tuple(HistoryEntry(**row._mapping) for row in page),
        )

    async def race_state(self, *, race: str) -> str | None:
        """``stored`` for a finished race stored under the id ``race`` (``races.uid``),
        ``running`` for one still running (journaled in ``live_races``), else None."""
        async with self.engine.connect() as conn:
            if await self._has_race(conn, race):
                return "stored"
            live = await conn.execute(select(_live.c.uid).where(_live.c.uid == race))
            return "running" if live.first() is not None else None

    async def counted_daily(
        self, *, date: dt.date, player_id: int | None = None, name: str | None = None
    ) -> str | None:
        """The race id of a player's run on ``date``'s daily board (their counted attempt,
        stored), by id or by name (any case or compatibility form); None if they have none."""
        r = _results.c
        query = (
            select(_races.c.uid)
            .join(_races, _races.c.id == r.race_id)
            .where(r.daily_date == date, r.practice.is_(False))
        )
        if player_id is not None:
            query = query.where(r.player_id == player_id)
        else:
            assert name is not None
            query = query.join(_players, _players.c.id == r.player_id).where(
                _players.c.name_key == name_key(name)
            )
        async with self.engine.connect() as conn:
            found = (await conn.execute(query.limit(1))).scalar()
        return None if found is None else str(found)

    async def last_room_race(self, *, room: str) -> RoomRace | None:
        """The newest stored race of a room with code ``room`` (room codes are reused: it
        may be an earlier room's), with its runners in rank order; None if there is none.
        A daily attempt has no room code, so it is never one (its code may be secret)."""
        r = _results.c
        async with self.engine.connect() as conn:
            race = (
                await conn.execute(
                    select(_races.c.id, _races.c.uid, _races.c.code, _races.c.ended_at)
                    .where(_races.c.room == room, _races.c.ended_at.is_not(None))
                    .order_by(_races.c.ended_at.desc(), _races.c.id.desc())
                    .limit(1)
                )
            ).first()
            if race is None:
                return None
            rows = (
                await conn.execute(
                    select(
                        r.rank,
                        _players.c.name,
                        r.outcome,
                        r.time_ms,
                        r.moves,
                        r.score,
                        r.foundations,
                        r.hinted,
                    )
                    .join(_players, _players.c.id == r.player_id)
                    .where(r.race_id == race.id)
                    .order_by(r.rank, r.id)
                )
            ).all()
        return RoomRace(
            race=race.uid,
            code=race.code,
            finished_at=_aware(race.ended_at),
            results=tuple(
                RoomResult(
                    int(x.rank),
                    str(x.name),
                    str(x.outcome),
                    int(x.time_ms),
                    int(x.moves),
                    int(x.score),
                    int(x.foundations),
                    bool(x.hinted),
                )
                for x in rows
            ),
        )

    async def run(self, *, race: str, name: str) -> StoredRun | None:
        """The run of the player called ``name`` (any case or compatibility form, as names
        are unique: ``name_key``) in the stored race ``race``, with its actions; None if
        that race has no such runner (or is not stored)."""
        r = _results.c
        key = name_key(name)
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(
                        r.id,
                        r.race_id,
                        r.player_id,
                        _players.c.name,
                        _races.c.code,
                        _races.c.rules,
                        _races.c.room,
                        r.daily_date,
                        r.practice,
                        r.finished_at,
                        r.rank,
                        r.outcome,
                        r.time_ms,
                        r.moves,
                        r.score,
                        r.foundations,
                        r.undos,
                        r.hinted,
                    )
                    .join(_races, _races.c.id == r.race_id)
                    .join(_players, _players.c.id == r.player_id)
                    .where(_races.c.uid == race, _players.c.name_key == key)
                )
            ).first()
            if row is None:
                return None
            players = (
                await conn.execute(
                    select(_players.c.name)
                    .join(_results, _results.c.player_id == _players.c.id)
                    .where(r.race_id == row.race_id)
                    .order_by(r.rank, r.id)
                )
            ).scalars()
            names = tuple(players)
            actions = (
                await conn.execute(
                    select(_moves.c.at_ms, _moves.c.move)
                    .where(_moves.c.result_id == row.id)
                    .order_by(_moves.c.n)
                )
            ).all()
        return StoredRun(
            race=race,
            player_id=row.player_id,
            name=row.name,
            code=row.code,
            rules=row.rules,
            room=row.room,
            daily_date=row.daily_date,
            practice=bool(row.practice),
            finished_at=row.finished_at,
            rank=row.rank,
            outcome=row.outcome,
            time_ms=row.time_ms,
            moves=row.moves,
            score=row.score,
            foundations=row.foundations,
            undos=row.undos,
            hinted=bool(row.hinted),
            players=names,
            actions=tuple((int(at), str(move)) for at, move in actions),
        )

    async def race_hours(self, *, now: float, days: int = 28, most: int = 20_000) -> list[int]:
        """How many stored races started in each UTC hour (0-23) over the last ``days``
        days before wall time ``now``, the newest ``most`` at most: when others usually
        play (``pool.usual_window``)."""
        since = dt.datetime.fromtimestamp(now, dt.UTC) - dt.timedelta(days=days)
        query = (
            select(_races.c.started_at)
            .where(_races.c.started_at >= since)
            .order_by(_races.c.started_at.desc())
            .limit(most)
        )
        hours = [0] * 24
        async with self.engine.connect() as conn:
            for (started,) in await conn.execute(query):
                if started.tzinfo is None:  # SQLite keeps no zone: stored as UTC
                    started = started.replace(tzinfo=dt.UTC)
                hours[started.astimezone(dt.UTC).hour] += 1
        return hours
