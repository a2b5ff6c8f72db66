"""A stored race stores each run's signals and queues a flag per rule fired, in its transaction."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection

from server.domain.records import PlayerResult, RaceRecord
from server.domain.signals import AutoHide, FairPlay, Thresholds
from server.storage.moderation import ModerationStore
from server.storage.moderation_models import AccountState, ModerationEntry, ReviewItem
from server.storage.signals_models import RunSignals
from server.storage.sql import SqlStore
from server.storage.visibility import off_the_boards

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


# -- the operator's thresholds and the automatic hide (issue 40 item 2) ------------------------

HOUR = 3600.0


def bot_journal() -> tuple[tuple[int, str], ...]:
    """A run at 20 ms a move: flagged on cv, window_cv and fast at the defaults."""
    return tuple((20 * (i + 1), m) for i, m in enumerate(WINNING[1:]))


async def race_at(store: SqlStore, uid: str, pid: int, ended: float) -> None:
    """A flagged race of ``pid`` that ended at ``ended`` (the store's clock is the race's)."""
    await store.record_race(
        dataclasses.replace(
            record(uid, {pid: bot_journal()}), started_wall=ended - 95.5, ended_wall=ended
        )
    )


async def hidden(store: SqlStore, pid: int) -> bool:
    def read(conn: Connection) -> bool:
        ids = {int(i) for (i,) in conn.execute(select(off_the_boards().subquery()))}
        state = conn.execute(
            select(AccountState.__table__.c.hidden).where(AccountState.__table__.c.player_id == pid)
        ).scalar()
        assert (pid in ids) == bool(state)  # the boards' filter reads the same hide
        return bool(state)

    return await store.run_sync(read)


async def auto_entries(store: SqlStore) -> list[dict[str, object]]:
    def read(conn: Connection) -> list[dict[str, object]]:
        log = ModerationEntry.__table__
        return [dict(r._mapping) for r in conn.execute(select(log).where(log.c.action == "hide"))]

    return await store.run_sync(read)


async def test_the_automatic_hide_is_off_by_default(store: SqlStore) -> None:
    bot = await store.register_player(name="bot", now=T0)
    for i in range(5):
        await race_at(store, f"r{i}", bot.player_id, T0 + i * 60)
    assert not await hidden(store, bot.player_id)
    assert await auto_entries(store) == []


async def test_k_flagged_runs_within_h_hours_hide_and_k_minus_one_do_not(
    store: SqlStore,
) -> None:
    store.fairplay = FairPlay(auto_hide=AutoHide(3, 24))
    bot = await store.register_player(name="bot", now=T0)
    await race_at(store, "r1", bot.player_id, T0)
    await race_at(store, "r2", bot.player_id, T0 + 12 * HOUR)
    assert not await hidden(store, bot.player_id)  # K - 1 flagged runs (of 3 rules each)
    await race_at(store, "r3", bot.player_id, T0 + 24 * HOUR)  # exactly H after the first
    assert await hidden(store, bot.player_id)
    [entry] = await auto_entries(store)
    assert entry["operator"] == "auto" and entry["name"] == "bot"
    assert json.loads(str(entry["details"]))["auto"] == "3/24"
    assert "3 flagged runs within 24 h" in str(entry["reason"])
    await race_at(store, "r4", bot.player_id, T0 + 25 * HOUR)
    assert len(await auto_entries(store)) == 1  # hidden already: nothing more written

    # Undone like any action: back on the boards, and the flags it weighed no longer count.
    mod = ModerationStore(store.engine)
    undo = await mod.undo(
        entry=int(str(entry["id"])), reason="looked: a fast player", operator="olga",
        now=T0 + 26 * HOUR,
    )  # fmt: skip
    assert undo.details["action"] == "hide"
    assert not await hidden(store, bot.player_id)
    await race_at(store, "r5", bot.player_id, T0 + 27 * HOUR)
    await race_at(store, "r6", bot.player_id, T0 + 28 * HOUR)
    assert not await hidden(store, bot.player_id)  # two new flagged runs since the undo
    await race_at(store, "r7", bot.player_id, T0 + 29 * HOUR)
    assert await hidden(store, bot.player_id)
    assert [e["operator"] for e in await auto_entries(store)] == ["auto", "auto"]


async def test_k_flagged_runs_spread_over_more_than_h_hours_do_not_hide(
    store: SqlStore,
) -> None:
    store.fairplay = FairPlay(auto_hide=AutoHide(3, 24))
    bot = await store.register_player(name="bot", now=T0)
    human = await store.register_player(name="human", now=T0)
    await race_at(store, "r1", bot.player_id, T0)
    await race_at(store, "r2", bot.player_id, T0 + 12 * HOUR)
    await race_at(store, "r3", bot.player_id, T0 + 24 * HOUR + 1)  # the first is 1 s out
    assert not await hidden(store, bot.player_id)
    # A dismissed flag does not count either: the operator judged it.
    mod = ModerationStore(store.engine)
    items = [q for q in await mod.queue() if q.race == "r2"]
    for q in items:
        await mod.dismiss(item=q.id, reason="a fast hand", operator="olga", now=T0 + 30 * HOUR)
    await race_at(store, "r4", bot.player_id, T0 + 30 * HOUR)
    assert not await hidden(store, bot.player_id)  # r3, r4 (r2 dismissed)
    await race_at(store, "r5", bot.player_id, T0 + 31 * HOUR)
    assert await hidden(store, bot.player_id)
    assert not await hidden(store, human.player_id)


async def test_the_operators_thresholds_decide_what_is_flagged(store: SqlStore) -> None:
    """A run the defaults pass is flagged under a stricter threshold, and the other way."""
    human = await store.register_player(name="human", now=T0)
    steps = [1_500, 900, 2_200, 1_200, 3_100, 800, 2_700, 1_100]
    journal = tuple(
        (sum(steps[j % len(steps)] for j in range(i + 1)), m) for i, m in enumerate(WINNING[1:])
    )
    await store.record_race(record("r1", {human.player_id: journal}))
    store.fairplay = FairPlay(thresholds=Thresholds(cv_below=0.9))
    await store.record_race(record("r2", {human.player_id: journal}))
    store.fairplay = FairPlay(thresholds=Thresholds(min_intervals=1_000))
    await store.record_race(record("r3", {human.player_id: bot_journal()}))
    signals, queue = await store.run_sync(rows)
    assert [json.loads(str(s["flags"])) for s in signals] == [[], ["cv"], []]
    [flag] = queue
    assert json.loads(str(flag["evidence"]))["below"] == 0.9
