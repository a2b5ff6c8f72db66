"""The operator's store (issue 40, item 5; docs/fairplay.md): marks, account states,
renames, voids, the review queue and the audit log, behind ``yukon mod``.

Every action is one transaction that writes one ``moderation_log`` row (who, when, what,
to whom, why, and in ``details`` what it changed) together with the state it changes, and
an undo is one more action: a row naming the entry it undoes (migration 0014 explains
the tables). Refusals (an unknown name, a mark already in force, an entry undone before)
are ``ModerationError``, with a stable ``code`` and a sentence for the operator; nothing
is written then.

Like ``SqlStore``: an async engine, keyword-only arguments, plain dataclasses out, times
in and out as wall-clock seconds. What a mark does to a running server (boards, the
pool, sockets, refunds applied) is the server's part; this store keeps the record, and
``refunds`` works out what a mark would give back (``server.storage.refunds``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Table, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from protocol.dailylog import EntryKind
from protocol.messages import name_key, name_skeleton, normalize_name

from ..domain.ratings import Game
from . import dailylog
from .models import Player, PlayerRating, RaceRow, RatingRow, ResultRow
from .moderation_models import (
    MARK_KINDS,
    AccountMark,
    AccountState,
    ModerationEntry,
    RatingRefund,
    ReviewItem,
    VoidedResult,
)
from .ratings import lock_players
from .refunds import REFUND_DAYS, MarkedRace, Opponent, OpponentRow, Refund, plan_refunds

__all__ = [
    "ModerationStore",
    "ModerationError",
    "Mark",
    "LogEntry",
    "QueueItem",
    "Run",
    "Account",
    "MARK_KINDS",
    "QUEUE_KINDS",
    "iso",
]

#: What goes into the review queue (``ReviewItem``): a rule flagged a run, a player
#: reported another, two runners of a race shared an address, the sandbag watch.
QUEUE_KINDS = ("flag", "report", "address", "sandbag")
#: The runs ``account`` lists, newest first.
RUNS_SHOWN = 20

_players = cast(Table, Player.__table__)
_races = cast(Table, RaceRow.__table__)
_results = cast(Table, ResultRow.__table__)
_ratings = cast(Table, RatingRow.__table__)
_current = cast(Table, PlayerRating.__table__)
_log = cast(Table, ModerationEntry.__table__)
_marks = cast(Table, AccountMark.__table__)
_queue = cast(Table, ReviewItem.__table__)
_states = cast(Table, AccountState.__table__)
_voids = cast(Table, VoidedResult.__table__)
_refunds = cast(Table, RatingRefund.__table__)


#: The account states an action sets: (column, value, the refusal's code and words).
STATE_ACTIONS: dict[str, tuple[str, bool, str, str]] = {
    "close": ("closed", True, "already_closed", "is already closed"),
    "reopen": ("closed", False, "not_closed", "is not closed"),
    "mute": ("muted", True, "already_muted", "is already muted"),
    "unmute": ("muted", False, "not_muted", "is not muted"),
}


#: What undoing each action that changes a board does to it, as the daily's log says it.
_BOARD_INVERSES = {
    "mark": "unmark",
    "unmark": "mark",
    "void": "unvoid",
    "close": "reopen",
    "reopen": "close",
}


class ModerationError(Exception):
    """An action refused: ``code`` is stable (``unknown_player``, ``already_marked``,
    ...), the message is one sentence for the operator."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Mark:
    id: int
    kind: str
    reason: str
    by: str
    at: float
    #: The log entry that made it, and the one that lifted it.
    entry: int
    undone_at: float | None = None
    undone_by: str | None = None
    undone_entry: int | None = None

    @property
    def in_force(self) -> bool:
        return self.undone_at is None


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One row of the audit log."""

    id: int
    at: float
    operator: str
    action: str
    player_id: int | None
    #: The account's name when the entry was written.
    name: str | None
    #: The race's id (``races.uid``), for a void.
    race: str | None
    reason: str
    details: dict[str, Any]
    #: The entry this one undoes (an ``undo``), and the entry that undid this one.
    undoes: int | None = None
    undone_by: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": iso(self.at),
            "operator": self.operator,
            "action": self.action,
            "player": self.name,
            "race": self.race,
            "reason": self.reason,
            "details": self.details,
            "undoes": self.undoes,
            "undone_by": self.undone_by,
        }


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One entry of the review queue, with names instead of ids."""

    id: int
    kind: str
    at: float
    player_id: int
    name: str
    reporter: str | None
    other: str | None
    race: str | None
    rule: str | None
    evidence: dict[str, Any]
    note: str | None
    state: str
    closed_at: float | None = None
    closed_by: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "at": iso(self.at),
            "player": self.name,
            "reporter": self.reporter,
            "other": self.other,
            "race": self.race,
            "rule": self.rule,
            "evidence": self.evidence,
            "note": self.note,
            "state": self.state,
            "closed_at": None if self.closed_at is None else iso(self.closed_at),
            "closed_by": self.closed_by,
        }


@dataclass(frozen=True, slots=True)
class Run:
    """One of an account's stored runs, as ``yukon mod show`` lists it."""

    race: str
    finished_at: float
    rules: str
    outcome: str
    rank: int
    time_ms: int
    moves: int
    rated: bool
    voided: bool


@dataclass(frozen=True, slots=True)
class Account:
    """Everything the moderation tables hold about one account (``yukon mod show``)."""

    player_id: int
    name: str
    registered: float
    closed: bool
    muted: bool
    hidden: bool
    rating: int | None
    #: Every mark, in force or lifted, oldest first.
    marks: tuple[Mark, ...]
    #: Queue entries about the account (flags, reports, pairs), newest first.
    queue: tuple[QueueItem, ...]
    #: Reports the account made, newest first.
    reported: tuple[QueueItem, ...]
    #: The newest stored runs (``RUNS_SHOWN``).
    runs: tuple[Run, ...]
    #: What an engine or boost mark would give back to the account's opponents now.
    refunds: tuple[Refund, ...] = field(default=())


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _ts(at: dt.datetime) -> float:
    """A stored time as wall seconds: SQLite hands back naive datetimes, every one UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return at.timestamp()


def _opt_ts(at: dt.datetime | None) -> float | None:
    return None if at is None else _ts(at)


def iso(ts: float) -> str:
    """A time as the JSON of ``yukon mod`` gives it: ISO 8601, UTC, to the second."""
    return _utc(ts).isoformat(timespec="seconds").replace("+00:00", "Z")


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _unjson(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {"value": value}


@dataclass(frozen=True, slots=True)
class _Who:
    id: int
    name: str


class ModerationStore:
    """The moderation tables of one database. ``SqlStore`` could inherit it as it does
    ``RatingsStore`` (it only needs ``engine``); ``yukon mod`` builds one on an engine."""

    engine: AsyncEngine

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    # -- reading ------------------------------------------------------------------------------

    @staticmethod
    async def _player(conn: AsyncConnection, name: str) -> _Who:
        row = (
            await conn.execute(
                select(_players.c.id, _players.c.name).where(
                    _players.c.name_key == name_key(name.strip())
                )
            )
        ).first()
        if row is None:
            raise ModerationError("unknown_player", f"no player is named {name.strip()!r}")
        return _Who(int(row.id), str(row.name))

    async def _lock(self, conn: AsyncConnection, name: str) -> _Who:
        """The player named ``name``, held until the transaction ends (PostgreSQL), so
        that two operators acting on one account act one after the other."""
        who = await self._player(conn, name)
        await lock_players(conn, [who.id])
        return who

    async def log(
        self, *, limit: int = 50, name: str | None = None, after: int | None = None
    ) -> list[LogEntry]:
        """The audit log, newest first: ``limit`` entries, of one account (``name``), or
        only those after entry ``after`` (what a server polls to apply new actions)."""
        async with self.engine.connect() as conn:
            query = self._log_query()
            if name is not None:
                who = await self._player(conn, name)
                query = query.where(_log.c.player_id == who.id)
            if after is not None:
                query = query.where(_log.c.id > after)
            rows = (await conn.execute(query.order_by(_log.c.id.desc()).limit(limit))).all()
        return [self._entry(row) for row in rows]

    @staticmethod
    def _log_query() -> Any:
        later = _log.alias("later")
        return (
            select(_log, _races.c.uid.label("race_uid"), later.c.id.label("undone_by"))
            .outerjoin(_races, _races.c.id == _log.c.race_id)
            .outerjoin(later, later.c.undoes == _log.c.id)
        )

    @staticmethod
    def _entry(row: Any) -> LogEntry:
        return LogEntry(
            id=int(row.id),
            at=_ts(row.at),
            operator=str(row.operator),
            action=str(row.action),
            player_id=row.player_id,
            name=row.name,
            race=row.race_uid,
            reason=str(row.reason),
            details=_unjson(row.details),
            undoes=row.undoes,
            undone_by=row.undone_by,
        )

    async def entry(self, *, entry: int) -> LogEntry | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(self._log_query().where(_log.c.id == entry))).first()
        return None if row is None else self._entry(row)

    @staticmethod
    def _queue_query() -> Any:
        subject = _players.alias("subject")
        reporter = _players.alias("reporter")
        other = _players.alias("other")
        return (
            select(
                _queue,
                subject.c.name.label("subject_name"),
                reporter.c.name.label("reporter_name"),
                other.c.name.label("other_name"),
                _races.c.uid.label("race_uid"),
            )
            .join(subject, subject.c.id == _queue.c.player_id)
            .outerjoin(reporter, reporter.c.id == _queue.c.reporter_id)
            .outerjoin(other, other.c.id == _queue.c.other_id)
            .outerjoin(_races, _races.c.id == _queue.c.race_id)
        )

    @staticmethod
    def _item(row: Any) -> QueueItem:
        return QueueItem(
            id=int(row.id),
            kind=str(row.kind),
            at=_ts(row.created_at),
            player_id=int(row.player_id),
            name=str(row.subject_name),
            reporter=row.reporter_name,
            other=row.other_name,
            race=row.race_uid,
            rule=row.rule,
            evidence=_unjson(row.evidence),
            note=row.note,
            state=str(row.state),
            closed_at=_opt_ts(row.closed_at),
            closed_by=row.closed_by,
        )

    async def queue(
        self, *, states: Sequence[str] = ("open",), limit: int = 100
    ) -> list[QueueItem]:
        """The review queue, newest first: the entries in ``states``."""
        async with self.engine.connect() as conn:
            rows = (
                await conn.execute(
                    self._queue_query()
                    .where(_queue.c.state.in_(list(states)))
                    .order_by(_queue.c.id.desc())
                    .limit(limit)
                )
            ).all()
        return [self._item(row) for row in rows]

    async def account(self, *, name: str, now: float) -> Account:
        """Everything the moderation tables hold about ``name``'s account, with its newest
        runs and what an engine or boost mark would refund if given ``now``."""
        async with self.engine.connect() as conn:
            who = await self._player(conn, name)
            created = (
                await conn.execute(select(_players.c.created_at).where(_players.c.id == who.id))
            ).scalar_one()
            state = (
                await conn.execute(select(_states).where(_states.c.player_id == who.id))
            ).first()
            rating = (
                await conn.execute(select(_current.c.rating).where(_current.c.player_id == who.id))
            ).scalar()
            marks = (
                await conn.execute(
                    select(_marks).where(_marks.c.player_id == who.id).order_by(_marks.c.id)
                )
            ).all()
            about = (
                await conn.execute(
                    self._queue_query()
                    .where(_queue.c.player_id == who.id)
                    .order_by(_queue.c.id.desc())
                )
            ).all()
            made = (
                await conn.execute(
                    self._queue_query()
                    .where(_queue.c.reporter_id == who.id)
                    .order_by(_queue.c.id.desc())
                )
            ).all()
            r = _results.c
            voided = (
                select(_voids.c.id)
                .where(_voids.c.result_id == r.id, _voids.c.undone_at.is_(None))
                .exists()
            )
            runs = (
                await conn.execute(
                    select(
                        _races.c.uid,
                        _races.c.rules,
                        _races.c.rated,
                        r.finished_at,
                        r.outcome,
                        r.rank,
                        r.time_ms,
                        r.moves,
                        voided.label("voided"),
                    )
                    .join(_races, _races.c.id == r.race_id)
                    .where(r.player_id == who.id)
                    .order_by(r.finished_at.desc(), r.id.desc())
                    .limit(RUNS_SHOWN)
                )
            ).all()
            refunds = await self._plan_refunds(conn, who.id, now)
        return Account(
            player_id=who.id,
            name=who.name,
            registered=_ts(created),
            closed=bool(state.closed) if state else False,
            muted=bool(state.muted) if state else False,
            hidden=bool(state.hidden) if state else False,
            rating=None if rating is None else round(rating),
            marks=tuple(self._mark(m) for m in marks),
            queue=tuple(self._item(q) for q in about),
            reported=tuple(self._item(q) for q in made),
            runs=tuple(
                Run(
                    race=str(x.uid),
                    finished_at=_ts(x.finished_at),
                    rules=str(x.rules),
                    outcome=str(x.outcome),
                    rank=int(x.rank),
                    time_ms=int(x.time_ms),
                    moves=int(x.moves),
                    rated=bool(x.rated),
                    voided=bool(x.voided),
                )
                for x in runs
            ),
            refunds=tuple(refunds),
        )

    @staticmethod
    def _mark(row: Any) -> Mark:
        return Mark(
            id=int(row.id),
            kind=str(row.kind),
            reason=str(row.reason),
            by=str(row.marked_by),
            at=_ts(row.marked_at),
            entry=int(row.log_id),
            undone_at=_opt_ts(row.undone_at),
            undone_by=row.undone_by,
            undone_entry=row.undone_log_id,
        )

    async def refunds(self, *, name: str, now: float) -> list[Refund]:
        """What an engine or boost mark of ``name`` at ``now`` would give back to their
        opponents (``server.storage.refunds``), from the stored ratings. Reads only."""
        async with self.engine.connect() as conn:
            who = await self._player(conn, name)
            return await self._plan_refunds(conn, who.id, now)

    async def _plan_refunds(self, conn: AsyncConnection, marked: int, now: float) -> list[Refund]:
        g = _ratings.c
        since = _utc(now - REFUND_DAYS * 86_400)
        mine = (
            await conn.execute(
                select(g.race_id, g.rated_at).where(
                    g.player_id == marked, g.rated_at >= since, g.rated_at <= _utc(now)
                )
            )
        ).all()
        if not mine:
            return []
        race_ids = [int(x.race_id) for x in mine]
        rows = (
            await conn.execute(
                select(
                    g.race_id,
                    g.player_id,
                    g.rating_before,
                    g.deviation_before,
                    g.deviation,
                    g.games,
                )
                .where(g.race_id.in_(race_ids), g.player_id != marked)
                .order_by(g.race_id, g.player_id)
            )
        ).all()
        by_race: dict[int, list[OpponentRow]] = {}
        for x in rows:
            games = tuple(
                Game(int(o), float(r), float(d), float(s)) for o, r, d, s in json.loads(x.games)
            )
            by_race.setdefault(int(x.race_id), []).append(
                OpponentRow(
                    int(x.player_id), x.rating_before, x.deviation_before, x.deviation, games
                )
            )
        races = [
            MarkedRace(int(x.race_id), _ts(x.rated_at), tuple(by_race.get(int(x.race_id), ())))
            for x in mine
        ]
        ids = sorted({o.player_id for rs in by_race.values() for o in rs})
        if not ids:
            return []
        current = {
            int(x.player_id): float(x.rating)
            for x in await conn.execute(
                select(_current.c.player_id, _current.c.rating).where(_current.c.player_id.in_(ids))
            )
        }
        peaks: dict[int, float] = {}
        for pid, top, top_before in await conn.execute(
            select(g.player_id, func.max(g.rating), func.max(g.rating_before))
            .where(g.player_id.in_(ids))
            .group_by(g.player_id)
        ):
            peaks[int(pid)] = max(float(top), float(top_before))
        f = _refunds.c
        for pid, top in await conn.execute(
            select(f.player_id, func.max(f.rating_after))
            .where(f.player_id.in_(ids), f.undone_log_id.is_(None))
            .group_by(f.player_id)
        ):
            peaks[int(pid)] = max(peaks.get(int(pid), 0.0), float(top))
        excluded = {
            int(pid)
            for (pid,) in await conn.execute(
                select(_marks.c.player_id).where(
                    _marks.c.player_id.in_(ids),
                    _marks.c.kind.in_(("engine", "boost")),
                    _marks.c.undone_at.is_(None),
                )
            )
        }
        refunded = {
            (int(pid), int(race))
            for pid, race in await conn.execute(
                select(f.player_id, f.race_id)
                .join(_marks, _marks.c.id == f.mark_id)
                .where(_marks.c.player_id == marked, f.undone_log_id.is_(None))
            )
        }
        opponents = {pid: Opponent(current[pid], peaks[pid]) for pid in ids if pid in current}
        return plan_refunds(
            marked=marked,
            races=races,
            opponents=opponents,
            now=now,
            excluded=excluded | (set(ids) - set(opponents)),
            refunded=refunded,
        )

    # -- writing ------------------------------------------------------------------------------

    @staticmethod
    async def _write(
        conn: AsyncConnection,
        *,
        action: str,
        operator: str,
        reason: str,
        now: float,
        who: _Who | None = None,
        race_id: int | None = None,
        details: dict[str, Any] | None = None,
        undoes: int | None = None,
    ) -> int:
        """Append one entry to the audit log; its id."""
        result = await conn.execute(
            insert(_log)
            .values(
                at=_utc(now),
                operator=operator,
                action=action,
                player_id=None if who is None else who.id,
                name=None if who is None else who.name,
                race_id=race_id,
                reason=reason,
                details=_json(details or {}),
                undoes=undoes,
            )
            .returning(_log.c.id)
        )
        return int(result.scalar_one())

    async def _done(self, entry: int) -> LogEntry:
        found = await self.entry(entry=entry)
        assert found is not None
        return found

    @staticmethod
    async def _log_boards(
        conn: AsyncConnection,
        action: str,
        now: float,
        *,
        who: _Who | None = None,
        race_id: int | None = None,
        voids_of: int | None = None,
    ) -> None:
        """Append to the daily's log (docs/protocol.md 4.29) one board entry per past day
        whose board this action changes: the days of ``who``'s counted daily results (a
        mark, a close and their undos), or of the results the void of entry ``voids_of``
        covers. Only days the log holds a day entry for; never the operator's reason."""
        r = _results.c
        if voids_of is not None:
            query = (
                select(r.daily_date)
                .join(_voids, _voids.c.result_id == r.id)
                .where(_voids.c.log_id == voids_of)
            )
        else:
            assert who is not None
            query = select(r.daily_date).where(r.player_id == who.id)
        query = query.where(r.daily_date.is_not(None), r.practice.is_(False)).distinct()
        touched = [d.isoformat() for (d,) in await conn.execute(query)]
        body: dict[str, str | int | None] = {
            "action": action,
            "player": None if who is None else who.name,
            "race": race_id,
        }
        for day in await dailylog.days_in_log(conn, touched):
            await dailylog.append_in(conn, EntryKind.BOARD, day, now, body)

    async def enqueue(
        self,
        *,
        kind: str,
        player_id: int,
        now: float,
        race: str | None = None,
        result_id: int | None = None,
        reporter_id: int | None = None,
        other_id: int | None = None,
        rule: str | None = None,
        evidence: dict[str, Any] | None = None,
        note: str | None = None,
    ) -> int:
        """Put an entry into the review queue (a flag with its evidence, a player's
        report, an address pair, a sandbag report: ``QUEUE_KINDS``); its id. ``race``
        is the race's id (``races.uid``). The server writes these; no log entry (the
        queue is what operators act on, not an action)."""
        if kind not in QUEUE_KINDS:
            raise ModerationError("bad_kind", f"{kind!r} is not one of {', '.join(QUEUE_KINDS)}")
        async with self.engine.begin() as conn:
            race_id = None
            if race is not None:
                race_id = (
                    await conn.execute(select(_races.c.id).where(_races.c.uid == race))
                ).scalar()
                if race_id is None:
                    raise ModerationError("unknown_race", f"no stored race has the id {race!r}")
            result = await conn.execute(
                insert(_queue)
                .values(
                    kind=kind,
                    created_at=_utc(now),
                    player_id=player_id,
                    reporter_id=reporter_id,
                    other_id=other_id,
                    race_id=race_id,
                    result_id=result_id,
                    rule=rule,
                    evidence=_json(evidence or {}),
                    note=note,
                )
                .returning(_queue.c.id)
            )
            return int(result.scalar_one())

    async def mark(
        self, *, name: str, kind: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Mark an account; its open queue entries are closed by the same entry."""
        if kind not in MARK_KINDS:
            raise ModerationError("bad_kind", f"{kind!r} is not one of {', '.join(MARK_KINDS)}")
        try:
            async with self.engine.begin() as conn:
                who = await self._lock(conn, name)
                mark = await self._in_force(conn, who.id, kind)
                if mark is not None:
                    raise ModerationError(
                        "already_marked",
                        f"{who.name} is already marked {kind} (entry {mark.log_id})",
                    )
                open_items = [
                    int(i)
                    for (i,) in await conn.execute(
                        select(_queue.c.id)
                        .where(_queue.c.player_id == who.id, _queue.c.state == "open")
                        .order_by(_queue.c.id)
                    )
                ]
                entry = await self._write(
                    conn,
                    action="mark",
                    operator=operator,
                    reason=reason,
                    now=now,
                    who=who,
                    details={"kind": kind, "closed": open_items},
                )
                await self._insert_mark(conn, who.id, kind, reason, operator, now, entry)
                await self._log_boards(conn, "mark", now, who=who)
                if open_items:
                    await conn.execute(
                        update(_queue)
                        .where(_queue.c.id.in_(open_items))
                        .values(
                            state="closed",
                            closed_at=_utc(now),
                            closed_by=operator,
                            closed_log_id=entry,
                        )
                    )
        except IntegrityError:  # another operator marked them at the same moment
            raise ModerationError(
                "already_marked", f"{name.strip()} is already marked {kind}"
            ) from None
        return await self._done(entry)

    @staticmethod
    async def _in_force(conn: AsyncConnection, player_id: int, kind: str) -> Any:
        return (
            await conn.execute(
                select(_marks).where(
                    _marks.c.player_id == player_id,
                    _marks.c.kind == kind,
                    _marks.c.undone_at.is_(None),
                )
            )
        ).first()

    @staticmethod
    async def _insert_mark(
        conn: AsyncConnection,
        player_id: int,
        kind: str,
        reason: str,
        operator: str,
        now: float,
        entry: int,
    ) -> None:
        await conn.execute(
            insert(_marks).values(
                player_id=player_id,
                kind=kind,
                reason=reason,
                marked_by=operator,
                marked_at=_utc(now),
                log_id=entry,
            )
        )

    @staticmethod
    async def _lift(
        conn: AsyncConnection, mark_id: int, operator: str, now: float, entry: int
    ) -> None:
        await conn.execute(
            update(_marks)
            .where(_marks.c.id == mark_id)
            .values(undone_at=_utc(now), undone_by=operator, undone_log_id=entry)
        )

    async def unmark(
        self, *, name: str, kind: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        if kind not in MARK_KINDS:
            raise ModerationError("bad_kind", f"{kind!r} is not one of {', '.join(MARK_KINDS)}")
        async with self.engine.begin() as conn:
            who = await self._lock(conn, name)
            mark = await self._in_force(conn, who.id, kind)
            if mark is None:
                raise ModerationError("not_marked", f"{who.name} is not marked {kind}")
            entry = await self._write(
                conn,
                action="unmark",
                operator=operator,
                reason=reason,
                now=now,
                who=who,
                details={"kind": kind, "mark": int(mark.id)},
            )
            await self._lift(conn, int(mark.id), operator, now, entry)
            await self._log_boards(conn, "unmark", now, who=who)
        return await self._done(entry)

    async def rename(
        self, *, name: str, new_name: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Give an account a new name, under the rules of a registered name (docs/
        protocol.md 4.1: unique regardless of case, compatibility forms and look-alikes)."""
        try:
            new = normalize_name(new_name)
        except ValueError as exc:
            raise ModerationError("bad_name", f"{new_name.strip()!r}: {exc}") from None
        try:
            async with self.engine.begin() as conn:
                who = await self._lock(conn, name)
                if new == who.name:
                    raise ModerationError("same_name", f"{who.name} is already named {new}")
                await self._check_free(conn, who.id, new)
                entry = await self._write(
                    conn,
                    action="rename",
                    operator=operator,
                    reason=reason,
                    now=now,
                    who=who,
                    details={"from": who.name, "to": new},
                )
                await self._set_name(conn, who.id, new)
        except IntegrityError:
            raise ModerationError(
                "name_taken", f"{new!r} is taken, or looks like a name that is"
            ) from None
        return await self._done(entry)

    @staticmethod
    async def _check_free(conn: AsyncConnection, player_id: int, name: str) -> None:
        """Refuse ``name`` if another player's name is it or looks like it."""
        p = _players.c
        taken = (
            await conn.execute(
                select(p.name).where(
                    p.id != player_id,
                    (p.name_key == name_key(name)) | (p.name_skeleton == name_skeleton(name)),
                )
            )
        ).scalar()
        if taken is not None:
            raise ModerationError("name_taken", f"{name!r} is taken: {taken!r} is or looks like it")

    @staticmethod
    async def _set_name(conn: AsyncConnection, player_id: int, name: str) -> None:
        await conn.execute(
            update(_players)
            .where(_players.c.id == player_id)
            .values(name=name, name_key=name_key(name), name_skeleton=name_skeleton(name))
        )

    async def set_state(
        self, *, action: str, name: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """``close``, ``reopen``, ``mute`` or ``unmute`` an account."""
        column, value, code, words = STATE_ACTIONS[action]
        async with self.engine.begin() as conn:
            who = await self._lock(conn, name)
            if await self._state(conn, who.id, column) == value:
                raise ModerationError(code, f"{who.name} {words}")
            entry = await self._write(
                conn, action=action, operator=operator, reason=reason, now=now, who=who
            )
            await self._put_state(conn, who.id, column, value, now, entry)
            if column == "closed":
                await self._log_boards(conn, action, now, who=who)
        return await self._done(entry)

    @staticmethod
    async def _state(conn: AsyncConnection, player_id: int, column: str) -> bool:
        value = (
            await conn.execute(select(_states.c[column]).where(_states.c.player_id == player_id))
        ).scalar()
        return bool(value)

    @staticmethod
    async def _put_state(
        conn: AsyncConnection, player_id: int, column: str, value: bool, now: float, entry: int
    ) -> None:
        values = {column: value, "changed_at": _utc(now), "log_id": entry}
        changed = await conn.execute(
            update(_states).where(_states.c.player_id == player_id).values(**values)
        )
        if changed.rowcount == 0:
            await conn.execute(insert(_states).values(player_id=player_id, **values))

    async def void(
        self, *, race: str, name: str | None = None, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Void a stored race's results (``race``: its id, ``races.uid``), or only
        ``name``'s result in it."""
        async with self.engine.begin() as conn:
            race_id = (
                await conn.execute(select(_races.c.id).where(_races.c.uid == race.strip()))
            ).scalar()
            if race_id is None:
                raise ModerationError("unknown_race", f"no stored race has the id {race.strip()!r}")
            who = None if name is None else await self._lock(conn, name)
            r = _results.c
            query = (
                select(r.id, r.player_id, _players.c.name)
                .join(_players, _players.c.id == r.player_id)
                .where(r.race_id == race_id)
                .order_by(r.rank, r.id)
            )
            if who is not None:
                query = query.where(r.player_id == who.id)
            results = (await conn.execute(query)).all()
            if who is not None and not results:
                raise ModerationError("not_in_race", f"{who.name} did not run race {race.strip()}")
            held = {
                int(i)
                for (i,) in await conn.execute(
                    select(_voids.c.result_id).where(
                        _voids.c.race_id == race_id, _voids.c.undone_at.is_(None)
                    )
                )
            }
            todo = [x for x in results if int(x.id) not in held]
            if not todo:
                whose = (
                    f"{who.name}'s result in race" if who is not None else "every result of race"
                )
                raise ModerationError("already_voided", f"{whose} {race.strip()} is voided already")
            entry = await self._write(
                conn,
                action="void",
                operator=operator,
                reason=reason,
                now=now,
                who=who,
                race_id=int(race_id),
                details={"players": [str(x.name) for x in todo]},
            )
            for x in todo:
                await conn.execute(
                    insert(_voids).values(
                        result_id=int(x.id),
                        race_id=int(race_id),
                        player_id=int(x.player_id),
                        voided_at=_utc(now),
                        log_id=entry,
                    )
                )
            await self._log_boards(conn, "void", now, who=who, race_id=int(race_id), voids_of=entry)
        return await self._done(entry)

    async def dismiss(self, *, item: int, reason: str, operator: str, now: float) -> LogEntry:
        """Dismiss an open entry of the review queue (nothing to act on)."""
        async with self.engine.begin() as conn:
            row = (await conn.execute(select(_queue).where(_queue.c.id == item))).first()
            if row is None:
                raise ModerationError("unknown_item", f"the review queue has no entry {item}")
            if row.state != "open":
                raise ModerationError("not_open", f"queue entry {item} is {row.state} already")
            name = (
                await conn.execute(select(_players.c.name).where(_players.c.id == row.player_id))
            ).scalar_one()
            entry = await self._write(
                conn,
                action="dismiss",
                operator=operator,
                reason=reason,
                now=now,
                who=_Who(int(row.player_id), str(name)),
                race_id=row.race_id,
                details={"item": item, "kind": str(row.kind)},
            )
            await conn.execute(
                update(_queue)
                .where(_queue.c.id == item)
                .values(
                    state="dismissed", closed_at=_utc(now), closed_by=operator, closed_log_id=entry
                )
            )
        return await self._done(entry)

    # -- undo ---------------------------------------------------------------------------------

    async def undo(self, *, entry: int, reason: str, operator: str, now: float) -> LogEntry:
        """Undo entry ``entry``: one more entry (``undo``, naming it) that puts back what
        it changed, if that is still as it left it; refused otherwise, and for an undo
        (do the action again instead) or an entry undone before."""
        try:
            async with self.engine.begin() as conn:
                row = (await conn.execute(select(_log).where(_log.c.id == entry))).first()
                if row is None:
                    raise ModerationError("unknown_entry", f"the log has no entry {entry}")
                if row.action == "undo":
                    raise ModerationError(
                        "cannot_undo",
                        f"entry {entry} is an undo itself: do what it undid again instead",
                    )
                undo = getattr(self, f"_undo_{row.action}", None)
                if undo is None:
                    raise ModerationError("cannot_undo", f"a {row.action} cannot be undone here")
                later = (
                    await conn.execute(select(_log.c.id).where(_log.c.undoes == entry))
                ).scalar()
                if later is not None:
                    raise ModerationError(
                        "already_undone", f"entry {entry} was undone by entry {later}"
                    )
                who = None
                if row.player_id is not None:
                    await lock_players(conn, [int(row.player_id)])
                    name = (
                        await conn.execute(
                            select(_players.c.name).where(_players.c.id == row.player_id)
                        )
                    ).scalar_one()
                    who = _Who(int(row.player_id), str(name))
                new = await self._write(
                    conn,
                    action="undo",
                    operator=operator,
                    reason=reason,
                    now=now,
                    who=who,
                    race_id=row.race_id,
                    details={"action": str(row.action), **_unjson(row.details)},
                    undoes=entry,
                )
                await undo(conn, row, who, new, operator, now)
                inverse = _BOARD_INVERSES.get(str(row.action))
                if inverse is not None:
                    await self._log_boards(
                        conn,
                        inverse,
                        now,
                        who=who,
                        race_id=None if row.race_id is None else int(row.race_id),
                        voids_of=int(row.id) if row.action == "void" else None,
                    )
        except IntegrityError:  # another operator undid it, or acted, at the same moment
            raise ModerationError(
                "already_undone", f"entry {entry} was undone or overtaken meanwhile"
            ) from None
        return await self._done(new)

    async def _undo_mark(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> None:
        mark = (await conn.execute(select(_marks).where(_marks.c.log_id == row.id))).first()
        assert mark is not None
        if mark.undone_at is not None:
            raise ModerationError(
                "cannot_undo",
                f"the {mark.kind} mark of entry {row.id} was lifted by entry {mark.undone_log_id}",
            )
        await self._lift(conn, int(mark.id), operator, now, new)
        await conn.execute(
            update(_queue)
            .where(_queue.c.closed_log_id == row.id, _queue.c.state == "closed")
            .values(state="open", closed_at=None, closed_by=None, closed_log_id=None)
        )

    async def _undo_unmark(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> None:
        mark = (await conn.execute(select(_marks).where(_marks.c.undone_log_id == row.id))).first()
        assert mark is not None
        again = await self._in_force(conn, who.id, str(mark.kind))
        if again is not None:
            raise ModerationError(
                "cannot_undo",
                f"{who.name} is marked {mark.kind} again (entry {again.log_id})",
            )
        await self._insert_mark(conn, who.id, str(mark.kind), str(mark.reason), operator, now, new)

    async def _undo_rename(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> None:
        details = _unjson(row.details)
        if who.name != details["to"]:
            raise ModerationError(
                "cannot_undo", f"{who.name} has been renamed since entry {row.id}"
            )
        await self._check_free(conn, who.id, str(details["from"]))
        await self._set_name(conn, who.id, str(details["from"]))

    async def _undo_close(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> None:
        """Undo a close, reopen, mute or unmute: the state back as it was before."""
        column, value, _, _ = STATE_ACTIONS[str(row.action)]
        if await self._state(conn, who.id, column) != value:
            raise ModerationError(
                "cannot_undo", f"{who.name}'s {column} state changed since entry {row.id}"
            )
        await self._put_state(conn, who.id, column, not value, now, new)

    _undo_reopen = _undo_close
    _undo_mute = _undo_close
    _undo_unmute = _undo_close

    async def _undo_void(
        self, conn: AsyncConnection, row: Any, who: _Who | None, new: int, operator: str, now: float
    ) -> None:
        lifted = await conn.execute(
            update(_voids)
            .where(_voids.c.log_id == row.id, _voids.c.undone_at.is_(None))
            .values(undone_at=_utc(now), undone_log_id=new)
        )
        if lifted.rowcount == 0:
            raise ModerationError("cannot_undo", f"the void of entry {row.id} is lifted already")

    async def _undo_dismiss(
        self, conn: AsyncConnection, row: Any, who: _Who | None, new: int, operator: str, now: float
    ) -> None:
        reopened = await conn.execute(
            update(_queue)
            .where(_queue.c.closed_log_id == row.id, _queue.c.state == "dismissed")
            .values(state="open", closed_at=None, closed_by=None, closed_log_id=None)
        )
        if reopened.rowcount == 0:
            raise ModerationError(
                "cannot_undo", f"the queue entry of entry {row.id} is not dismissed"
            )
