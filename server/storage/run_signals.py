"""Record a race's fair-play signals with its results, and flag runs into the review queue.

Called by ``SqlStore.record_race`` in the race's own transaction, so a run's figures,
its flags and its result are stored together or not at all (issue 40 items 1 and 2).
"""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..domain import signals
from ..domain.records import RaceRecord
from .moderation_models import ReviewItem
from .signals_models import RunSignals

_signals: Table = RunSignals.__table__  # type: ignore[assignment]
_queue: Table = ReviewItem.__table__  # type: ignore[assignment]

#: How many recent unflagged runs of a rule set make the human history of the pace rule.
HISTORY = 2_000


async def human_paces(conn: AsyncConnection, rules: str, limit: int = HISTORY) -> list[float]:
    """The paces of the last ``limit`` unflagged runs of ``rules``, sorted ascending."""
    rows = await conn.execute(
        select(_signals.c.pace)
        .where(_signals.c.rules == rules, _signals.c.flagged == 0)
        .order_by(_signals.c.result_id.desc())
        .limit(limit)
    )
    return sorted(float(p) for (p,) in rows)


async def record_signals(
    conn: AsyncConnection,
    record: RaceRecord,
    race_id: int,
    result_ids: dict[int, int],
    thresholds: signals.Thresholds = signals.DEFAULT_THRESHOLDS,
) -> int:
    """Store each run's figures; put each rule that fired into ``review_queue``.

    Returns how many flags were queued. The human history is read once, before this
    race's runs are added, so runners of one race are not judged against each other.
    """
    paces = await human_paces(conn, record.rules)
    now = dt.datetime.fromtimestamp(record.ended_wall, dt.UTC)
    queued = 0
    for r in record.results:
        result_id = result_ids.get(r.player_id)
        if result_id is None:
            continue
        figures = signals.of_journal(
            record.code,
            r.journal,
            resumed_at=r.resumed_at,
            human_paces=paces,
            thresholds=thresholds,
        )
        flags = signals.judge(figures, thresholds)
        await conn.execute(
            insert(_signals).values(
                result_id=result_id,
                rules=record.rules,
                pace=figures.pace,
                flagged=int(bool(flags)),
                figures=json.dumps(figures.as_json(), sort_keys=True),
                flags=json.dumps([f.rule for f in flags]),
            )
        )
        for flag in flags:
            evidence = {**flag.evidence, "signals": figures.as_json()}
            await conn.execute(
                insert(_queue).values(
                    kind="flag",
                    created_at=now,
                    player_id=r.player_id,
                    race_id=race_id,
                    result_id=result_id,
                    rule=flag.rule,
                    evidence=json.dumps(evidence, sort_keys=True),
                )
            )
            queued += 1
    return queued
