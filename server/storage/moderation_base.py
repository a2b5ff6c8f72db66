"""What every part of the operator's store shares (server/storage/moderation.py): the
refusal (``ModerationError``), the dataclasses it answers in, the table handles, the time
and JSON helpers, and the audit log itself: finding the player acted on, appending an
entry, reading entries back.

Kept apart so that the reads, the actions and the undo each build on one small base and
each file stays readable on its own (issue 41: no file over 800 lines).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from protocol.dailylog import EntryKind
from protocol.messages import name_key

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
from .refunds import Refund

__all__ = [
    "ModerationBase",
    "ModerationError",
    "Mark",
    "LogEntry",
    "QueueItem",
    "Run",
    "Account",
    "AppliedRefund",
    "MARK_KINDS",
    "QUEUE_KINDS",
    "RUNS_SHOWN",
    "STATE_ACTIONS",
    "BOARD_INVERSES",
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


#: What undoing each action that changes a board does to it, as the daily's log says it.
BOARD_INVERSES = {
    "mark": "unmark",
    "unmark": "mark",
    "void": "unvoid",
    "close": "reopen",
    "reopen": "close",
    "hide": "unhide",
    "unhide": "hide",
}

#: The account states an action sets: (column, value, the refusal's code and words).
STATE_ACTIONS: dict[str, tuple[str, bool, str, str]] = {
    "close": ("closed", True, "already_closed", "is already closed"),
    "reopen": ("closed", False, "not_closed", "is not closed"),
    "mute": ("muted", True, "already_muted", "is already muted"),
    "unmute": ("muted", False, "not_muted", "is not muted"),
    "hide": ("hidden", True, "already_hidden", "is already hidden"),
    "unhide": ("hidden", False, "not_hidden", "is not hidden"),
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
    #: The run's fair-play figures (``Signals.as_json``: ``cv``, ``window_cv``, ``fast``,
    #: ``pace``, ``pace_pct``, ...) and the rules that fired; None: stored before 0017.
    signals: dict[str, Any] | None = None
    flags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AppliedRefund:
    """A refund a mark of the account gave one of its opponents (a ``rating_refunds``
    row): for which race (``races.uid``), how many points, from what rating to what, the
    entry that gave it and the one that took it back (None: still given)."""

    player_id: int
    race: str
    points: float
    rating_before: float
    rating_after: float
    entry: int
    undone_entry: int | None = None

    @property
    def in_force(self) -> bool:
        return self.undone_entry is None


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
    #: What an engine or boost mark would give back to the account's opponents now
    #: (races a mark in force refunded already left out).
    refunds: tuple[Refund, ...] = field(default=())
    #: What its marks gave back (in force or taken back), oldest first.
    refunded: tuple[AppliedRefund, ...] = field(default=())


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


class ModerationBase:
    """The engine and the audit log: what the reads, the actions and the undo share."""

    engine: AsyncEngine

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

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
