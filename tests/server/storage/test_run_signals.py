"""A stored race stores each run's signals and queues a flag per rule fired, in its transaction."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection

from server.domain.records import PlayerResult, RaceRecord
from server.storage.moderation_models import ReviewItem
from server.storage.signals_models import RunSignals
from server.storage.sql import SqlStore

T0 = 1_795_000_000.0
WINNING = (Path(__file__).resolve().parents[2] / "data" / "winning-game.txt").read_text().split()


def record(uid: str, journals: dict[int, tuple[tuple[int, str], ...]]) -> RaceRecord:
    return RaceRecord(
        uid=uid,
        race_id=7,
        room="ROOM",
        code=WINNING[0],
        rules="C",
        daily_date=None,
        started_wall=T0,
        ended_wall=T0 + 95.5,
        results=tuple(
            PlayerResult(
                player_id=pid,
                name=f"p{pid}",
                rank=i + 1,
                outcome="won",
                time_ms=journal[-1][0],
                moves=len(journal),
                score=500,
                foundations=52,
                undos=0,
                practice=False,
                journal=journal,
            )
            for i, (pid, journal) in enumerate(journals.items())
        ),
    )


def rows(conn: Connection) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    sig = [dict(r._mapping) for r in conn.execute(select(RunSignals.__table__))]
    queue = [dict(r._mapping) for r in conn.execute(select(ReviewItem.__table__))]
    return sig, queue


async def test_a_bot_run_is_flagged_into_the_queue_and_a_human_run_is_not(
    store: SqlStore,
) -> None:
    bot = await store.register_player(name="bot", now=T0)
    human = await store.register_player(name="human", now=T0)
    moves = WINNING[1:]
    bot_journal = tuple((20 * (i + 1), m) for i, m in enumerate(moves))
    steps = [1_500, 900, 2_200, 1_200, 3_100, 800, 2_700, 1_100]
    human_journal = tuple(
        (sum(steps[j % len(steps)] for j in range(i + 1)), m) for i, m in enumerate(moves)
    )
    race = record("r1", {bot.player_id: bot_journal, human.player_id: human_journal})
    await store.record_race(race)
    await store.record_race(dataclasses.replace(race))  # a retry stores nothing twice
    signals, queue = await store.run_sync(rows)
    assert len(signals) == 2
    by_flagged = {int(str(s["flagged"])): s for s in signals}
    assert json.loads(str(by_flagged[0]["flags"])) == []
    assert set(json.loads(str(by_flagged[1]["flags"]))) == {"cv", "window_cv", "fast"}
    assert {q["rule"] for q in queue} == {"cv", "window_cv", "fast"}
    assert {q["player_id"] for q in queue} == {bot.player_id}
    assert all(q["kind"] == "flag" and q["state"] == "open" for q in queue)
    evidence = json.loads(str(queue[0]["evidence"]))
    assert evidence["signals"]["history"] == 0  # no human history yet: no pace rule
