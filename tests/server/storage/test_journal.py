"""The journal of running races, against a real database (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from server.domain.records import LiveAction, LiveRace
from server.storage import migrate
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

    store.journal = slow_journal  # type: ignore[method-assign,assignment]
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


async def mine_and_theirs(store: SqlStore) -> None:
    """Race ``mine`` journaled by ``store``, race ``theirs`` by another node (``n2``)."""
    ann = await store.register_player(name="ann", now=T0)
    await store.journal(races=[live("mine", ann.player_id)], actions=[])
    other = SqlStore(store.url)
    other.owner = "n2"
    try:
        await other.journal(races=[live("theirs", ann.player_id)], actions=[])
    finally:
        await other.close()


async def test_the_sweep_reads_the_owners_then_the_races_of_those_asked_for(
    store: SqlStore,
) -> None:
    """``race_owners`` names each owner once; ``live_owners(owners)`` only their races."""
    await mine_and_theirs(store)
    assert await store.race_owners() == {store.owner, "n2"}
    assert [r[0] for r in await store.live_owners(["n2"])] == ["theirs"]
    assert sorted(r[0] for r in await store.live_owners()) == ["mine", "theirs"]
    assert await store.live_owners([]) == []


async def test_a_checkpoint_moves_each_clock_of_this_owner_forward_only(store: SqlStore) -> None:
    """``checkpoint`` notes each race's clock: never backwards (a late checkpoint after a
    newer one), and never for a race another node writes (docs/cluster.md)."""
    await mine_and_theirs(store)
    await store.checkpoint(alive={"mine": 5000, "theirs": 5000})
    await store.checkpoint(alive={"mine": 3000})  # older than what is noted: kept
    async with store.engine.connect() as conn:
        rows: dict[str, int] = dict(
            (await conn.execute(text("SELECT uid, alive_ms FROM live_races"))).all()
        )
    assert rows == {"mine": 5000, "theirs": 0}


async def test_a_sqlite_file_journal_group_is_one_call_on_its_own_thread(tmp_path: Path) -> None:
    """On a SQLite file the journal group and the checkpoint each go to the journal's own
    connection in one call, and take no connection of the engine: the group's checks,
    inserts and commit are one crossing from the event loop, not several a statement."""
    store = SqlStore(f"sqlite:///{tmp_path}/yukon.db")
    await migrate.upgrade(store)
    try:
        ann = await store.register_player(name="ann", now=T0)
        assert store.direct is not None
        calls: list[object] = []
        run = store.direct.run

        async def counted(fn: Any) -> Any:
            calls.append(fn)
            return await run(fn)

        store.direct.run = counted  # type: ignore[method-assign]
        checkouts: list[object] = []
        event.listen(store.engine.sync_engine, "checkout", lambda *a: checkouts.append(a))
        await store.journal(
            races=[live("r1", ann.player_id), live("r2", ann.player_id)],
            actions=[LiveAction("r1", 1, ann.player_id, 1, 100, "AS>F")],
        )
        await store.journal(races=[], actions=[LiveAction("r2", 1, ann.player_id, 1, 90, "KH>1")])
        await store.checkpoint(alive={"r1": 700})
        assert len(calls) == 3
        assert checkouts == []
        found = {race.uid: (acts, ms) for race, acts, ms in await store.live_races()}
        assert found["r1"] == ([LiveAction("r1", 1, ann.player_id, 1, 100, "AS>F")], 700)
        assert found["r2"][0] == [LiveAction("r2", 1, ann.player_id, 1, 90, "KH>1")]
    finally:
        await store.close()


async def test_a_race_journaled_directly_is_stored_as_the_engine_stores_it(
    tmp_path: Path,
) -> None:
    """The journal's own connection writes a race's start with each column's own type
    processing: the row is the one the engine writes (dates, times, booleans, JSON), and
    rebuilds as the same race."""
    url = f"sqlite:///{tmp_path}/yukon.db"
    store = SqlStore(url)
    await migrate.upgrade(store)
    engine_only = SqlStore(url)
    engine_only.direct = None  # as for PostgreSQL: through the engine
    try:
        ann = await store.register_player(name="ann", now=T0)
        race = replace(
            live("x", ann.player_id),
            daily_date=dt.date(2026, 12, 3),
            attempt=2,
            undo=False,
            hints=True,
            salt="ab" * 16,
            practice=True,
            ghost_race="g1",
            ghost_player="bob",
            rated=True,
            archive=True,
            quick=True,
            players=((ann.player_id, "ann"), (7, "bob")),
            started_wall=T0 + 0.123456,
        )
        await store.journal(races=[replace(race, uid="direct")], actions=[])
        await engine_only.journal(races=[replace(race, uid="engine")], actions=[])
        async with store.engine.connect() as conn:
            rows = {
                r[0]: r[1:]
                for r in (await conn.execute(text("SELECT * FROM live_races ORDER BY uid"))).all()
            }
        assert rows["direct"] == rows["engine"]
        rebuilt = {r.uid: r for r, _, _ in await store.live_races()}
        assert rebuilt["direct"] == replace(rebuilt["engine"], uid="direct")
        assert replace(rebuilt["direct"], uid="x") == race
    finally:
        await engine_only.close()
        await store.close()


async def test_a_write_elsewhere_and_a_journal_group_each_see_the_other_whole(
    tmp_path: Path,
) -> None:
    """Another connection deletes a race's live row (its result stored) while a journal
    group for it is on its way: the group takes the write lock for its checks and inserts
    together (waiting for the other write on its own thread), so it either finds the race
    gone and drops its actions, or writes them first and the delete takes them along.
    Either way no action of the ended race is left and the other race's is kept."""
    url = f"sqlite:///{tmp_path}/yukon.db"
    store = SqlStore(url)
    await migrate.upgrade(store)
    try:
        ann = await store.register_player(name="ann", now=T0)
        await store.journal(
            races=[live("ending", ann.player_id), live("going", ann.player_id)], actions=[]
        )
        other = sqlite3.connect(f"{tmp_path}/yukon.db", isolation_level=None)
        other.execute("PRAGMA foreign_keys=ON")
        other.execute("BEGIN IMMEDIATE")
        other.execute("DELETE FROM live_races WHERE uid = 'ending'")
        group = asyncio.create_task(
            store.journal(
                races=[],
                actions=[
                    LiveAction("ending", 1, ann.player_id, 1, 100, "AS>F"),
                    LiveAction("going", 1, ann.player_id, 1, 120, "KH>1"),
                ],
            )
        )
        await asyncio.sleep(0)  # the group is on its way to its thread
        other.execute("COMMIT")
        other.close()
        assert await group == set()
        async with store.engine.connect() as conn:
            left = (await conn.execute(text("SELECT race_uid, n FROM live_actions"))).all()
        assert [tuple(r) for r in left] == [("going", 1)]
    finally:
        await store.close()


def test_only_a_plain_sqlite_file_gets_a_connection_of_its_own() -> None:
    """An in-memory database (another connection would not see it), a URL with options,
    and PostgreSQL go through the engine."""
    assert SqlStore("sqlite:///./some.db").direct is not None
    assert SqlStore("sqlite:///:memory:").direct is None
    assert SqlStore("sqlite://").direct is None
    assert SqlStore("sqlite:///file:x.db?mode=ro&uri=true").direct is None
    assert SqlStore("postgresql://postgres@127.0.0.1:5432/x").direct is None


async def test_a_race_start_is_written_at_once_whenever_the_writer_next_looks() -> None:
    """A race's start wakes the writer between its looks (``interval`` an hour here):
    nothing else could rebuild that race, so it does not wait for the next look."""
    written = asyncio.Event()
    groups: list[tuple[list[LiveRace], list[LiveAction]]] = []

    class Store:
        async def journal(self, *, races: list[LiveRace], actions: list[LiveAction]) -> set[str]:
            groups.append((races, actions))
            written.set()
            return set()

    writer = JournalWriter(Store(), dict, interval=3600.0)  # type: ignore[arg-type]
    writer.start()
    await asyncio.sleep(0)  # the writer's task is waiting for its next look
    writer.add(live("now", 1))
    await asyncio.wait_for(written.wait(), 10)
    assert groups == [([live("now", 1)], [])]
    await writer.stop()


@pytest.mark.slow  # it watches the writer for half a second of real time
async def test_an_idle_writer_sleeps_to_its_checkpoint_and_an_action_brings_it_back() -> None:
    """With nothing queued the writer looks only at its checkpoints (an idle node woke 20
    times a second for nothing); the first action queued brings its looks back to the
    grid, so it is written after ``max_delay``, not at the next checkpoint."""
    written = asyncio.Event()
    looks: list[float] = []
    checkpoints: list[dict[str, int]] = []

    class Store:
        async def journal(self, *, races: list[LiveRace], actions: list[LiveAction]) -> set[str]:
            written.set()
            return set()

        async def checkpoint(self, *, alive: dict[str, int]) -> None:
            checkpoints.append(alive)

    writer = JournalWriter(
        Store(),  # type: ignore[arg-type]
        dict,
        interval=0.01,
        max_delay=0.05,
        checkpoint_every=30.0,
    )
    due = writer.due
    writer.due = lambda now: looks.append(now) or due(now)  # type: ignore[method-assign]
    writer.start()
    await asyncio.sleep(0.5)  # 50 looks on the grid; idle, none
    assert looks == [] and checkpoints == []
    action = LiveAction(uid="u", n=1, player_id=1, seq=1, at_ms=5, action="1S>F")
    began = time.monotonic()
    writer.add(action)
    await asyncio.wait_for(written.wait(), 10)
    assert time.monotonic() - began < 5.0  # the grid's look, not the checkpoint's (30 s)
    assert looks  # it looked on the grid until the action was due
    await writer.stop()
