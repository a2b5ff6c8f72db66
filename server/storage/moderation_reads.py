"""The operator's reads (server/storage/moderation.py): the review queue, an account's
whole record (marks, states, runs, queue items), and the refunds a mark would give back
(worked out by ``server.storage.refunds`` from the races this reads).

Kept apart from the actions because reading writes nothing and has its own queries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, select

from . import moderation_refunds
from .moderation_base import (
    RUNS_SHOWN,
    Account,
    AppliedRefund,
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
    _refunds,
    _results,
    _states,
    _ts,
    _unjson,
    _voids,
)
from .refunds import Refund
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
            refunds = await moderation_refunds.plan(conn, who.id, now)
            f = _refunds.c
            given = (
                await conn.execute(
                    select(_refunds, _races.c.uid)
                    .join(_marks, _marks.c.id == f.mark_id)
                    .join(_races, _races.c.id == f.race_id)
                    .where(_marks.c.player_id == who.id)
                    .order_by(f.id)
                )
            ).all()
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
            refunded=tuple(
                AppliedRefund(
                    player_id=int(x.player_id),
                    race=str(x.uid),
                    points=float(x.points),
                    rating_before=float(x.rating_before),
                    rating_after=float(x.rating_after),
                    entry=int(x.log_id),
                    undone_entry=x.undone_log_id,
                )
                for x in given
            ),
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
            return await moderation_refunds.plan(conn, who.id, now)
