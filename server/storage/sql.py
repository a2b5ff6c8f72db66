"""The SQL store: the one place that reads and writes the database.

SQLAlchemy 2 (async) over aiosqlite (the embedded default) or asyncpg (PostgreSQL). Every
function takes keyword arguments and speaks in plain dataclasses, never rows, so nothing
outside this package writes or reads SQL.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    Table,
    and_,
    bindparam,
    delete,
    event,
    func,
    insert,
    select,
    tuple_,
    union_all,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from protocol import GameCode
from protocol.dailylog import EntryKind
from protocol.messages import name_key, name_skeleton

from ..domain.daily import DailyChoice
from ..domain.records import LiveAction, LiveRace, RaceRecord, RatingChange, Standing
from . import dailylog
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
    board_key,
)
from .ratings import RatingsStore, lock_players, rate, stored_changes
from .visibility import on_the_boards

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
]

DEFAULT_URL = "sqlite+aiosqlite:///./yukon.db"

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


class NameTakenError(Exception):
    """Another player registered this name, or one that looks like it (names are unique
    regardless of case, compatibility forms and look-alike characters)."""


@dataclass(frozen=True, slots=True)
class Identity:
    player_id: int
    name: str
    #: The secret the player keeps; only its hash is stored.
    token: str
    #: When the name was registered (wall time): ``--daily-min-age`` reads it.
    created: float = 0.0


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
class BoardEntry:
    rank: int
    player_id: int
    name: str
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    #: The player got a hint in that race (such rows rank after all the others).
    hinted: bool = False
    #: The race's id (``races.uid``): what a replay of the row's run asks for.
    race: str | None = None


@dataclass(frozen=True, slots=True)
class Board:
    """One page of a leaderboard; ``you`` is the asking player's own row, if they have one."""

    total: int
    offset: int
    rows: tuple[BoardEntry, ...]
    you: BoardEntry | None


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


def hash_token(token: str) -> str:
    """Tokens are 192-bit random secrets, so a plain SHA-256 is enough (no salt, no stretch)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _board_entry(row: Any, rank: int) -> BoardEntry:
    """A board row from a result row selected with ``SqlStore._entry_columns``."""
    return BoardEntry(
        rank,
        row.player_id,
        row.name,
        row.outcome,
        row.time_ms,
        row.moves,
        row.score,
        row.foundations,
        row.undos,
        row.hinted,
        row.race,
    )


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


class SqlStore(RatingsStore):
    """Players, races, results and moves in one SQL database (ratings and streaks:
    ``RatingsStore``)."""

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

    # -- players ----------------------------------------------------------------------------

    async def register_player(self, *, name: str, now: float) -> Identity:
        """Register a new name and hand out its secret token; NameTakenError if taken."""
        token = secrets.token_urlsafe(24)
        try:
            async with self.engine.begin() as conn:
                result = await conn.execute(
                    insert(_players)
                    .values(
                        name=name,
                        name_key=name_key(name),
                        name_skeleton=name_skeleton(name),
                        token_hash=hash_token(token),
                        created_at=_utc(now),
                    )
                    .returning(_players.c.id)
                )
                player_id = result.scalar_one()
        except IntegrityError:
            raise NameTakenError(name) from None
        return Identity(player_id, name, token, now)

    async def forget_player(self, *, player_id: int) -> None:
        """Delete a player just registered whose ``welcome`` never reached anyone, so the
        name is free again (``effects.Forget``); nothing refers to such a player yet."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(_players).where(_players.c.id == player_id))

    async def find_player(self, *, token: str) -> Identity | None:
        found = await self.find_player_standing(token=token, today=None)
        return None if found is None else found[0]

    async def find_player_standing(
        self, *, token: str, today: dt.date | None
    ) -> tuple[Identity, Standing] | None:
        """The player whose token this is, and (``today``: the server's date) their
        rating and streak, read on one connection: a hello waits for one trip to the
        database, not two. ``today`` None: the identity only (a default standing)."""
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(_players.c.id, _players.c.name, _players.c.created_at).where(
                        _players.c.token_hash == hash_token(token)
                    )
                )
            ).first()
            if row is None:
                return None
            standing = Standing()
            if today is not None:
                standing = (await self._standings(conn, [row.id], today))[row.id]
        created = row.created_at
        if created.tzinfo is None:  # SQLite hands back naive datetimes; every one is UTC
            created = created.replace(tzinfo=dt.UTC)
        return Identity(row.id, row.name, token, created.timestamp()), standing

    # -- settings ---------------------------------------------------------------------------

    async def setting(self, *, key: str, default: str) -> str:
        """The stored value of ``key``; the first caller stores ``default`` and every later
        caller (and restart) gets that same value."""
        async with self.engine.begin() as conn:
            value = (
                await conn.execute(select(_settings.c.value).where(_settings.c.key == key))
            ).scalar()
            if value is not None:
                return str(value)
        try:
            async with self.engine.begin() as conn:
                await conn.execute(insert(_settings).values(key=key, value=default))
            return default
        except IntegrityError:  # another process stored it first
            async with self.engine.connect() as conn:
                value = (
                    await conn.execute(select(_settings.c.value).where(_settings.c.key == key))
                ).scalar_one()
            return str(value)

    # -- the daily deal -----------------------------------------------------------------------

    async def begin_daily(self, *, player_id: int, date: dt.date, now: float) -> int:
        """Number this player's attempt at ``date``'s deal (1 counts; later ones are practice)."""
        for _ in range(5):
            try:
                async with self.engine.begin() as conn:
                    last = (
                        await conn.execute(
                            select(func.max(_attempts.c.attempt)).where(
                                _attempts.c.player_id == player_id,
                                _attempts.c.daily_date == date,
                            )
                        )
                    ).scalar()
                    attempt = (last or 0) + 1
                    await conn.execute(
                        insert(_attempts).values(
                            player_id=player_id,
                            daily_date=date,
                            attempt=attempt,
                            started_at=_utc(now),
                        )
                    )
                return attempt
            except IntegrityError:  # two attempts began at once; number again
                continue
        raise RuntimeError("could not number the daily attempt")

    async def daily_deal(self, *, date: dt.date, rules: str) -> DailyChoice | None:
        """The deal chosen for ``date`` under ``rules``, if one was."""
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(_daily_deals).where(
                        _daily_deals.c.daily_date == date, _daily_deals.c.rules == rules
                    )
                )
            ).first()
        if row is None:
            return None
        return DailyChoice(
            date=row.daily_date,
            code=GameCode.parse(row.code),
            candidate=row.candidate,
            par=row.par,
            line=tuple(row.line.split()),
            nodes=row.nodes,
            salt=row.salt,
        )

    async def save_daily_deal(self, choice: DailyChoice, *, now: float) -> DailyChoice:
        """Keep ``choice`` for its date, unless one was kept first: return the kept one.

        A day with a commitment is appended to the daily's log in the same transaction
        (docs/protocol.md 4.29); should another process take the log's next place at the
        same moment, the transaction is tried again from the new head."""
        rules = str(choice.code.rules)
        for _ in range(8):
            try:
                async with self.engine.begin() as conn:
                    await conn.execute(
                        insert(_daily_deals).values(
                            daily_date=choice.date,
                            rules=rules,
                            code=str(choice.code),
                            candidate=choice.candidate,
                            par=choice.par,
                            line=" ".join(choice.line),
                            nodes=choice.nodes,
                            chosen_at=_utc(now),
                            salt=choice.salt,
                        )
                    )
                    if choice.commitment is not None:
                        await dailylog.append_in(
                            conn,
                            EntryKind.DAY,
                            choice.date.isoformat(),
                            now,
                            {"commitment": choice.commitment, "rules": rules},
                        )
                return choice
            except IntegrityError:  # another server process chose first, or took the log's place
                kept = await self.daily_deal(date=choice.date, rules=rules)
                if kept is not None:
                    return kept
        raise RuntimeError(f"the daily deal of {choice.date} could not be kept")

    # -- results ------------------------------------------------------------------------------

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

    # -- the journal of running races -------------------------------------------------------

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

    def _fence(self, uid: str) -> tuple[str, int]:
        """The ``(owner, epoch)`` this store writes race ``uid`` as."""
        return self.owner, self.epochs.get(uid, 1)

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
        )
        alive = max([row.alive_ms, *(a.at_ms for a in actions)])
        return live, actions, alive

    @staticmethod
    async def _has_race(conn: AsyncConnection, uid: str) -> bool:
        found = await conn.execute(select(_races.c.id).where(_races.c.uid == uid))
        return found.first() is not None

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
                await SqlStore._keep_best(
                    conn,
                    _archive_bests,
                    "daily_date",
                    record.daily_date,
                    r.player_id,
                    result_id,
                    key,
                )
            elif not r.practice:
                await SqlStore._keep_best(
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

    # -- leaderboards ---------------------------------------------------------------------------

    def _entry_columns(self) -> Sequence[Any]:
        r = _results.c
        return (
            r.id,
            r.board_key,
            r.player_id,
            _players.c.name,
            r.outcome,
            r.time_ms,
            r.moves,
            r.score,
            r.foundations,
            r.undos,
            r.hinted,
            _races.c.uid.label("race"),
        )

    async def daily_board(
        self,
        *,
        date: dt.date,
        offset: int = 0,
        limit: int = 20,
        player_id: int | None = None,
        around: bool = False,
    ) -> Board:
        """The counted (first) attempts at ``date``'s deal, best first.

        With ``around`` the page is centred on ``player_id``'s row; a player with no row gets
        an empty page. ``you`` is that player's row whenever they have one.
        """
        r = _results.c
        scope = and_(r.daily_date == date, r.practice.is_(False))
        return await self._board(scope, offset, limit, player_id, around)

    async def deal_board(
        self,
        *,
        code: str,
        offset: int = 0,
        limit: int = 20,
        player_id: int | None = None,
        around: bool = False,
    ) -> Board:
        """Each player's best counted result on the deal ``code``, best first: the rows the
        writer keeps in ``deal_bests``, so one index range like the daily board."""
        b = _bests.c
        return await self._board(
            b.code == code, offset, limit, player_id, around, table=_bests, id_column=b.result_id
        )

    async def archive_board(
        self,
        *,
        date: dt.date,
        offset: int = 0,
        limit: int = 20,
        player_id: int | None = None,
        around: bool = False,
    ) -> Board:
        """Each player's best archive run of ``date``'s deal (practice from the archive,
        docs/protocol.md 4.28), best first: the rows the writer keeps in ``archive_bests``."""
        a = _archive_bests.c
        return await self._board(
            a.daily_date == date,
            offset,
            limit,
            player_id,
            around,
            table=_archive_bests,
            id_column=a.result_id,
        )

    async def _board(
        self,
        scope: Any,
        offset: int,
        limit: int,
        player_id: int | None,
        around: bool,
        *,
        table: Table = _results,
        id_column: Any = None,
    ) -> Board:
        """One page of a board, with absolute ranks.

        The board is the rows of ``table`` (``results``, or ``deal_bests`` whose
        ``id_column`` names the result) that ``scope`` selects, in (``board_key``, result
        id) order. Built for boards of tens of thousands of rows (bench/leaderboard.py):
        the page's ids come from the index alone (OFFSET skips index entries, not joined
        rows), results and names are joined for the page only, one counting pass gives the
        total, the asker's rank and place, and "around me" walks the index both ways from
        the asker's row.
        """
        t = table.c
        rid = t.id if id_column is None else id_column
        # Marked, closed and hidden accounts and voided results are read past, never
        # deleted (visibility.py): lifting the mark or the void brings the row back.
        scope = and_(scope, on_the_boards(t.player_id, rid))
        key = t.board_key
        order = (key, rid)
        async with self.engine.connect() as conn:
            mine = None
            if player_id is not None:
                mine = (
                    await conn.execute(
                        select(rid.label("id"), key.label("board_key"))
                        .where(scope, t.player_id == player_id)
                        .order_by(*order)
                        .limit(1)
                    )
                ).first()
            you_rank = 0
            if mine is None:
                total = (
                    await conn.execute(select(func.count()).select_from(table).where(scope))
                ).scalar_one()
                if around:
                    return Board(total, 0, (), None)
                keys: Any = select(rid.label("id")).where(scope).order_by(*order)
                keys = keys.offset(offset).limit(limit)
            else:
                mine_key = tuple_(mine.board_key, mine.id)
                total, better, position = (
                    await conn.execute(
                        select(
                            func.count(),
                            func.count().filter(key < mine.board_key),
                            func.count().filter(tuple_(key, rid) < mine_key),
                        )
                        .select_from(table)
                        .where(scope)
                    )
                ).one()
                you_rank = 1 + better
                if around:
                    offset = max(0, position - limit // 2)
                    head = position - offset  # rows of the page above mine
                    above = (
                        select(rid.label("id"))
                        .where(scope, tuple_(key, rid) < mine_key)
                        .order_by(key.desc(), rid.desc())
                        .limit(head)
                        .subquery()
                    )
                    below = (
                        select(rid.label("id"))
                        .where(scope, tuple_(key, rid) >= mine_key)
                        .order_by(*order)
                        .limit(limit - head)
                        .subquery()
                    )
                    keys = union_all(select(above.c.id), select(below.c.id))
                else:
                    keys = select(rid.label("id")).where(scope).order_by(*order)
                    keys = keys.offset(offset).limit(limit)
            page_ids = keys.subquery()
            r = _results.c
            page = (
                await conn.execute(
                    select(*self._entry_columns())
                    .select_from(page_ids)
                    .join(_results, r.id == page_ids.c.id)
                    .join(_players, _players.c.id == r.player_id)
                    .join(_races, _races.c.id == r.race_id)
                    .order_by(r.board_key, r.id)
                )
            ).all()
            first_rank = 0
            if page:
                # ``offset`` rows are above page[0]; those tied with it share its rank.
                tied = (
                    await conn.execute(
                        select(func.count())
                        .select_from(table)
                        .where(scope, key == page[0].board_key, rid < page[0].id)
                    )
                ).scalar_one()
                first_rank = 1 + offset - tied
        rows = []
        previous_key = None
        rank = first_rank
        you = None
        for i, row in enumerate(page):
            if previous_key is not None and row.board_key != previous_key:
                rank = offset + i + 1
            previous_key = row.board_key
            entry = _board_entry(row, rank)
            rows.append(entry)
            if mine is not None and row.id == mine.id:
                you = entry
        if mine is not None and you is None:
            you = await self._entry(mine.id, you_rank)
        return Board(total, offset, tuple(rows), you)

    async def _entry(self, result_id: int, rank: int) -> BoardEntry:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(*self._entry_columns())
                    .join(_players, _players.c.id == _results.c.player_id)
                    .join(_races, _races.c.id == _results.c.race_id)
                    .where(_results.c.id == result_id)
                )
            ).one()
        return _board_entry(row, rank)

    # -- a player's own history ------------------------------------------------------------------

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

    # -- replays ---------------------------------------------------------------------------------

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

    # -- the quick-race pool (docs/protocol.md 4.26) ----------------------------------------

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
