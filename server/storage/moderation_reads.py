"""The operator's reads (server/storage/moderation.py): the review queue, an account's
whole record (marks, states, runs, queue items), and the refunds a mark would give back
(worked out by ``server.storage.refunds`` from the races this reads).

Kept apart from the actions because reading writes nothing and has its own queries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..domain.ratings import Game
from .moderation_base import (
    RUNS_SHOWN,
    Account,
    Mark,
    ModerationBase,
    QueueItem,
    Run,
    _current,
    _marks,
    _opt_ts,
    _players,
    _queue,
    _races,
    _ratings,
    _refunds,
    _results,
    _states,
    _ts,
    _unjson,
    _utc,
    _voids,
)
from .refunds import REFUND_DAYS, MarkedRace, Opponent, OpponentRow, Refund, plan_refunds
from .signals_models import RunSignals

__all__ = ["ModerationReads"]

_signals = cast(Table, RunSignals.__table__)


class ModerationReads(ModerationBase):
    """The review queue, an account's record, and the refunds a mark would give."""

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
                        _signals.c.figures,
                        _signals.c.flags,
                    )
                    .join(_races, _races.c.id == r.race_id)
                    .outerjoin(_signals, _signals.c.result_id == r.id)
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
                    signals=None if x.figures is None else _unjson(x.figures),
                    flags=() if x.flags is None else tuple(json.loads(x.flags)),
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

    async def enforcement(
        self,
    ) -> tuple[dict[int, frozenset[str]], frozenset[int], frozenset[int]]:
        """What a running server applies (``server.runtime.enforcer``): the marks in force
        by player id, and the closed and the muted accounts. Small sets, read whole."""
        async with self.engine.connect() as conn:
            marks: dict[int, set[str]] = {}
            in_force = select(_marks.c.player_id, _marks.c.kind).where(_marks.c.undone_at.is_(None))
            for player_id, kind in await conn.execute(in_force):
                marks.setdefault(int(player_id), set()).add(str(kind))
            states = select(_states.c.player_id, _states.c.closed, _states.c.muted).where(
                (_states.c.closed) | (_states.c.muted)
            )
            closed: set[int] = set()
            muted: set[int] = set()
            for player_id, is_closed, is_muted in await conn.execute(states):
                if is_closed:
                    closed.add(int(player_id))
                if is_muted:
                    muted.add(int(player_id))
        return {k: frozenset(v) for k, v in marks.items()}, frozenset(closed), frozenset(muted)

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
