"""The boards leave out marked, closed and hidden accounts and voided results, and bring
them back when the action is undone; each change to a past daily board is a board entry of
the daily's log, and the chain stays whole (SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from protocol import GameCode, Rules
from protocol.dailylog import EntryKind, verify_chain
from server.domain.daily import DailyChoice
from server.storage import dailylog
from server.storage.moderation import ModerationStore
from server.storage.moderation_models import AccountState
from server.storage.sql import SqlStore

from .test_sql import CODE, T0, race, register, res

DAY = dt.date(2026, 11, 19)
BY = {"operator": "olga", "now": T0 + 86_400 * 30}


async def _names(store: SqlStore) -> list[str]:
    daily = await store.daily_board(date=DAY)
    deal = await store.deal_board(code=CODE)
    assert [e.name for e in deal.rows] == [e.name for e in daily.rows]
    assert daily.total == len(daily.rows)
    return [e.name for e in daily.rows]


async def test_marks_voids_and_closes_leave_the_boards_and_come_back(store: SqlStore) -> None:
    mod = ModerationStore(store.engine)
    await store.save_daily_deal(
        DailyChoice(DAY, GameCode(Rules.parse("C"), 9), 0, 1, ("x",), 1, "5a" * 16), now=T0 - 3600
    )
    ann, bob, cy = await register(store, "ann", "bob", "cy")
    for who, t in ((ann, 50_000), (bob, 60_000), (cy, 70_000)):
        await store.record_race(
            race(res(who, time_ms=t), code=CODE, daily_date=DAY, uid=f"day-{who.name}")
        )
    assert await _names(store) == ["ann", "bob", "cy"]

    marked = await mod.mark(name="ann", kind="engine", reason="a solver's line", **BY)
    assert await _names(store) == ["bob", "cy"]
    # Ranks close up: bob is first now.
    assert (await store.daily_board(date=DAY)).rows[0].rank == 1
    await mod.undo(entry=marked.id, reason="appeal", **BY)
    assert await _names(store) == ["ann", "bob", "cy"]

    voided = await mod.void(race="day-bob", reason="shared account", **BY)
    assert await _names(store) == ["ann", "cy"]
    await mod.undo(entry=voided.id, reason="mistake", **BY)
    assert await _names(store) == ["ann", "bob", "cy"]

    await mod.set_state(action="close", name="cy", reason="asked to", **BY)
    assert await _names(store) == ["ann", "bob"]
    await mod.set_state(action="reopen", name="cy", reason="came back", **BY)
    # Muting changes no board, and writes no board entry.
    await mod.set_state(action="mute", name="cy", reason="spam", **BY)
    # The automatic hide (docs/fairplay.md) is a state too.
    async with store.engine.begin() as conn:
        await conn.execute(
            update(AccountState.__table__)
            .where(AccountState.player_id == cy.player_id)
            .values(hidden=True)
        )
    assert await _names(store) == ["ann", "bob"]

    entries = await dailylog.entries(store.engine)
    assert verify_chain([e.to_json() for e in entries]).ok
    boards = [
        (e.date, e.body["action"], e.body["player"]) for e in entries if e.kind is EntryKind.BOARD
    ]
    assert boards == [
        (DAY.isoformat(), "mark", "ann"),
        (DAY.isoformat(), "unmark", "ann"),
        (DAY.isoformat(), "void", None),
        (DAY.isoformat(), "unvoid", None),
        (DAY.isoformat(), "close", "cy"),
        (DAY.isoformat(), "reopen", "cy"),
    ]
    voids = [e for e in entries if e.body.get("action") == "void"]
    assert isinstance(voids[0].body["race"], int)


async def test_a_day_the_log_does_not_hold_gets_no_entry(store: SqlStore) -> None:
    mod = ModerationStore(store.engine)
    [ann] = await register(store, "ann")
    await store.record_race(race(res(ann), code=CODE, daily_date=DAY))
    await mod.mark(name="ann", kind="boost", reason="farm", **BY)
    assert await dailylog.entries(store.engine) == []


async def test_a_bot_account_is_kept_and_off_the_humans_boards(store: SqlStore) -> None:
    [ann] = await register(store, "ann")
    robo = await store.register_player(name="robo", now=T0, bot=True)
    assert robo.bot and not ann.bot
    found = await store.find_player(token=robo.token)
    assert found is not None and found.bot
    for who, t in ((robo, 10_000), (ann, 60_000)):
        await store.record_race(race(res(who, time_ms=t), code=CODE, daily_date=DAY))
    assert await _names(store) == ["ann"]
