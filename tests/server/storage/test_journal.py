"""The journal of running races, against a real database (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import threading
import time

from sqlalchemy import text

from server.effects import LiveAction, LiveRace
from server.storage.journal import JournalWriter
from server.storage.sql import SqlStore

T0 = 1_795_000_000.0


def live(uid: str, host: int) -> LiveRace:
    return LiveRace(
        uid=uid,
        room="WALTZ",
        code="YU1-C-AAAAAAB",
        rules="C",
        daily_date=None,
        attempt=0,
        undo=True,
        time_limit=600,
        max_players=2,
        fixed=True,
        host_id=host,
        players=((host, "ann"),),
        started_wall=T0,
    )


def end_race_elsewhere(url: str, uid: str, *, wait: bool = True) -> threading.Thread:
    """Another connection stores a race's result (deleting its live row), and waits for
    it (``wait``): on a thread with its own event loop, as a concurrent server task would."""

    async def end_it() -> None:
        other = SqlStore(url)
        try:
            async with other.engine.begin() as conn:
                await conn.execute(text("DELETE FROM live_races WHERE uid = :u"), {"u": uid})
        finally:
            await other.close()

    thread = threading.Thread(target=asyncio.run, args=(end_it(),))
    thread.start()
    if wait:
        thread.join(30)
    return thread


async def test_a_race_that_ends_while_its_actions_are_written_drops_them_quietly(
    store: SqlStore,
) -> None:
    """A race's result is stored (its live row deleted) between a journal batch's check of
    the live races and its insert: the batch is checked again, not failed. On PostgreSQL
    the check locks the rows (``FOR SHARE``, the cluster's fencing: docs/cluster.md), so
    the delete waits for the batch and takes its actions with it."""
    ann = await store.register_player(name="ann", now=T0)
    await store.journal(
        races=[live("ending", ann.player_id), live("going", ann.player_id)], actions=[]
    )
    insert = store._insert_actions_sql
    ended: list[str] = []
    locks = store.dialect == "postgresql"
    threads: list[threading.Thread] = []

    def insert_as_the_race_ends() -> str:
        if not ended:
            threads.append(end_race_elsewhere(store.url, "ending", wait=not locks))
            ended.append("ending")
        return insert()

    store._insert_actions_sql = insert_as_the_race_ends  # type: ignore[method-assign]
    actions = [
        LiveAction("ending", 1, ann.player_id, 1, 100, "AS>F"),
        LiveAction("going", 1, ann.player_id, 1, 120, "KH>1"),
    ]
    await store.journal(races=[], actions=actions)
    assert ended == ["ending"]
    for thread in threads:
        await asyncio.to_thread(thread.join, 30)
    found = {race.uid: acts for race, acts, _ in await store.live_races()}
    assert "ending" not in found
    assert found["going"] == [actions[1]]


async def test_stopping_while_a_group_is_being_written_loses_none_of_it(
    store: SqlStore,
) -> None:
    """A clean shutdown that comes while the writer's task is inside a write (a slow
    database) waits for that write instead of cancelling it: a cancel there would take
    the group out of the queue and roll its transaction back, and the final flush would
    find nothing to write. Every action queued before ``stop`` is in the journal after."""
    ann = await store.register_player(name="ann", now=T0)
    journal_sql = store.journal
    writing = asyncio.Event()

    async def slow_journal(**kw: list[LiveRace] | list[LiveAction]) -> set[str]:
        writing.set()
        await asyncio.sleep(0.3)  # the database is slow: stop() comes meanwhile
        return await journal_sql(**kw)  # type: ignore[arg-type]

    store.journal = slow_journal  # type: ignore[method-assign]
    writer = JournalWriter(store, dict, interval=0.01)
    writer.start()
    writer.add(live("slow", ann.player_id))
    writer.add(LiveAction("slow", 1, ann.player_id, 1, 100, "AS>F"))
    await asyncio.wait_for(writing.wait(), 10)
    writer.add(LiveAction("slow", 2, ann.player_id, 2, 200, "KH>1"))
    await writer.stop()
    found = {race.uid: acts for race, acts, _ in await store.live_races()}
    assert [a.seq for a in found["slow"]] == [1, 2]


def action(uid: str, seq: int) -> LiveAction:
    return LiveAction(uid, seq, 1, seq, 100 * seq, "AS>F")


def test_a_group_is_written_when_full_or_when_its_oldest_action_has_waited() -> None:
    """Actions wait for ``group`` of them or for ``max_delay`` seconds, whichever comes
    first; a race's start is written at once (nothing could rebuild it otherwise)."""
    writer = JournalWriter(None, dict, group=3, max_delay=0.25)  # type: ignore[arg-type]
    assert not writer.due(time.monotonic())  # nothing queued
    writer.add(action("r", 1))
    first = writer._first_at
    assert not writer.due(first + 0.1)
    assert writer.due(first + 0.25)  # waited long enough
    writer.add(action("r", 2))
    assert not writer.due(first + 0.1)
    writer.add(action("r", 3))
    assert writer.due(first + 0.1)  # a full group
    quiet = JournalWriter(None, dict, group=3, max_delay=0.25)  # type: ignore[arg-type]
    quiet.add(live("r", 1))
    assert quiet.due(time.monotonic())


async def test_a_journal_group_waits_for_its_size_then_is_written(store: SqlStore) -> None:
    """Through the writer's own task: a lone action is written after ``max_delay``, not
    at the next look, and nothing is lost."""
    ann = await store.register_player(name="ann", now=T0)
    await store.journal(races=[live("slow", ann.player_id)], actions=[])
    writer = JournalWriter(store, dict, interval=0.01, group=100, max_delay=1.5)
    writer.start()
    try:
        writer.add(LiveAction("slow", 1, ann.player_id, 1, 100, "AS>F"))
        added = time.monotonic()
        await asyncio.sleep(0.2)
        if time.monotonic() - added < 1.5:  # (a machine too busy to say: not checked)
            assert writer.pending == 1  # looked at several times, not written yet
        for _ in range(200):
            if not writer.pending:
                break
            await asyncio.sleep(0.05)
        assert writer.pending == 0
    finally:
        await writer.stop()
    found = {race.uid: acts for race, acts, _ in await store.live_races()}
    assert [a.action for a in found["slow"]] == ["AS>F"]


async def test_the_sweep_reads_the_owners_then_the_races_of_those_asked_for(
    store: SqlStore,
) -> None:
    """``race_owners`` names each owner once; ``live_owners(owners)`` only their races."""
    ann = await store.register_player(name="ann", now=T0)
    await store.journal(races=[live("mine", ann.player_id)], actions=[])
    other = SqlStore(store.url)
    other.owner = "n2"
    try:
        await other.journal(races=[live("theirs", ann.player_id)], actions=[])
    finally:
        await other.close()
    assert await store.race_owners() == {store.owner, "n2"}
    assert [r[0] for r in await store.live_owners(["n2"])] == ["theirs"]
    assert sorted(r[0] for r in await store.live_owners()) == ["mine", "theirs"]
    assert await store.live_owners([]) == []
