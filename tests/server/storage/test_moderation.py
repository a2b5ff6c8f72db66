"""The operator's store (server/storage/moderation.py) on both backends: every action one
audit row, every undo one more, refusals that write nothing, the review queue, and the
refunds a mark would give read from stored rated races."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from server.storage.models import RaceRow
from server.storage.moderation import ModerationError, ModerationStore
from server.storage.moderation_models import AccountMark, ModerationEntry, VoidedResult
from server.storage.refunds import REFUND_CAP
from server.storage.sql import NameTakenError, SqlStore

from .test_sql import T0, race, register, res

NOW = T0 + 3600
BY = {"operator": "olga", "now": NOW}


@pytest.fixture
async def mod(store: SqlStore) -> AsyncIterator[ModerationStore]:
    yield ModerationStore(store.engine)


async def refused(code: str, action: object) -> ModerationError:
    with pytest.raises(ModerationError) as caught:
        await action  # type: ignore[misc]
    assert caught.value.code == code, caught.value
    return caught.value


async def log_rows(store: SqlStore) -> int:
    def count(conn: Connection) -> int:
        table = ModerationEntry.__table__
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())

    result: int = await store.run_sync(count)
    return result


async def test_a_mark_an_unmark_and_their_undos_are_each_one_entry(
    store: SqlStore, mod: ModerationStore
) -> None:
    [ann] = await register(store, "ann")
    marked = await mod.mark(name="ANN", kind="engine", reason="solver line", **BY)
    assert (marked.action, marked.name, marked.operator, marked.reason) == (
        "mark",
        "ann",
        "olga",
        "solver line",
    )
    assert marked.details == {"kind": "engine", "closed": [], "refunds": []} and marked.at == NOW
    err = await refused("already_marked", mod.mark(name="ann", kind="engine", reason="x", **BY))
    assert str(err) == f"ann is already marked engine (entry {marked.id})"
    await refused("not_marked", mod.unmark(name="ann", kind="boost", reason="x", **BY))
    await refused("bad_kind", mod.mark(name="ann", kind="cheat", reason="x", **BY))
    await refused("unknown_player", mod.mark(name="nobody", kind="alt", reason="x", **BY))
    assert await log_rows(store) == 1  # refusals write nothing

    lifted = await mod.unmark(name="ann", kind="engine", reason="appeal", **BY)
    account = await mod.account(name="ann", now=NOW)
    [mark] = account.marks
    assert not mark.in_force and mark.undone_entry == lifted.id and mark.entry == marked.id

    back = await mod.undo(entry=lifted.id, reason="appeal refused", **BY)
    assert (back.action, back.undoes, back.details["action"]) == ("undo", lifted.id, "unmark")
    account = await mod.account(name="ann", now=NOW)
    assert [(m.kind, m.in_force, m.entry) for m in account.marks] == [
        ("engine", False, marked.id),
        ("engine", True, back.id),  # a new row: the table is the account's history
    ]
    # The mark of the first entry was lifted by the unmark: undoing it is refused.
    await refused("cannot_undo", mod.undo(entry=marked.id, reason="x", **BY))
    await refused("already_undone", mod.undo(entry=lifted.id, reason="x", **BY))
    await refused("cannot_undo", mod.undo(entry=back.id, reason="x", **BY))
    await refused("unknown_entry", mod.undo(entry=999, reason="x", **BY))

    log = await mod.log()
    assert [e.action for e in log] == ["undo", "unmark", "mark"]  # newest first
    assert log[1].undone_by == back.id and log[0].undoes == lifted.id
    assert [e.id for e in await mod.log(after=marked.id)] == [back.id, lifted.id]
    assert [e.id for e in await mod.log(name="ann", limit=1)] == [back.id]
    assert ann.player_id == account.player_id


async def test_undoing_a_mark_lifts_it_and_reopens_what_it_closed(
    store: SqlStore, mod: ModerationStore
) -> None:
    bob, cyd = await register(store, "bob", "cyd")
    record = race(res(bob, rank=1), res(cyd, rank=2), uid="race-q")
    await store.record_race(record)
    flag = await mod.enqueue(
        kind="flag",
        player_id=bob.player_id,
        race="race-q",
        rule="cv",
        evidence={"cv": 0.04},
        now=T0,
    )
    report = await mod.enqueue(
        kind="report",
        player_id=bob.player_id,
        reporter_id=cyd.player_id,
        race="race-q",
        note="too fast",
        now=T0 + 1,
    )
    other = await mod.enqueue(kind="flag", player_id=cyd.player_id, rule="fast", now=T0 + 2)
    await refused("unknown_race", mod.enqueue(kind="flag", player_id=1, race="nope", now=T0))
    await refused("bad_kind", mod.enqueue(kind="rumour", player_id=1, now=T0))

    queue = await mod.queue()
    assert [q.id for q in queue] == [other, report, flag]  # newest first
    by_id = {q.id: q for q in queue}
    assert (by_id[report].reporter, by_id[report].name, by_id[report].race) == (
        "cyd",
        "bob",
        "race-q",
    )
    assert by_id[flag].evidence == {"cv": 0.04} and by_id[flag].state == "open"

    marked = await mod.mark(name="bob", kind="engine", reason="flags", **BY)
    assert marked.details["closed"] == [flag, report]
    assert [q.id for q in await mod.queue()] == [other]
    closed = await mod.queue(states=("closed",))
    assert {q.id for q in closed} == {flag, report} and closed[0].closed_by == "olga"

    await mod.undo(entry=marked.id, reason="wrong player", **BY)
    assert [q.id for q in await mod.queue()] == [other, report, flag]
    account = await mod.account(name="bob", now=NOW)
    assert [m.in_force for m in account.marks] == [False]
    assert [q.id for q in account.queue] == [report, flag]
    assert [q.id for q in (await mod.account(name="cyd", now=NOW)).reported] == [report]

    dismissed = await mod.dismiss(item=other, reason="a fast player", **BY)
    assert dismissed.details == {"item": other, "kind": "flag"} and dismissed.name == "cyd"
    await refused("not_open", mod.dismiss(item=other, reason="x", **BY))
    await refused("unknown_item", mod.dismiss(item=999, reason="x", **BY))
    await mod.undo(entry=dismissed.id, reason="look again", **BY)
    assert other in {q.id for q in await mod.queue()}


async def test_a_rename_follows_the_rules_of_names_and_undoes(
    store: SqlStore, mod: ModerationStore
) -> None:
    [ann, _] = await register(store, "ann", "Alice")
    await refused("bad_name", mod.rename(name="ann", new_name="x" * 21, reason="r", **BY))
    await refused("same_name", mod.rename(name="ANN", new_name="ann", reason="r", **BY))
    await refused("name_taken", mod.rename(name="ann", new_name="ALICE", reason="r", **BY))
    await refused("name_taken", mod.rename(name="ann", new_name="\u0410lice", reason="r", **BY))
    renamed = await mod.rename(name="ann", new_name=" Anna ", reason="offensive", **BY)
    assert renamed.details == {"from": "ann", "to": "Anna"} and renamed.name == "ann"
    assert await store.find_player(token=ann.token) == dataclasses.replace(ann, name="Anna")
    await refused("unknown_player", mod.rename(name="ann", new_name="b", reason="r", **BY))
    # The new name is the account's now: nobody else may register it.
    with pytest.raises(NameTakenError):
        await store.register_player(name="anna", now=T0)
    await mod.undo(entry=renamed.id, reason="mistake", **BY)
    assert (await mod.account(name="ann", now=NOW)).name == "ann"
    # A rename undone after another rename is refused (the name is no longer the new one).
    first = await mod.rename(name="ann", new_name="Ann2", reason="r", **BY)
    await mod.rename(name="Ann2", new_name="Ann3", reason="r", **BY)
    await refused("cannot_undo", mod.undo(entry=first.id, reason="r", **BY))
    # An undo that needs a name taken meanwhile is refused, and writes nothing.
    renamed = await mod.rename(name="Ann3", new_name="Ann4", reason="r", **BY)
    await store.register_player(name="ann3", now=T0)
    rows = await log_rows(store)
    await refused("name_taken", mod.undo(entry=renamed.id, reason="r", **BY))
    assert await log_rows(store) == rows


async def test_close_reopen_mute_unmute_and_their_undos(
    store: SqlStore, mod: ModerationStore
) -> None:
    await register(store, "dee")
    account = await mod.account(name="dee", now=NOW)
    assert (account.closed, account.muted, account.hidden) == (False, False, False)
    await refused("not_closed", mod.set_state(action="reopen", name="dee", reason="r", **BY))
    await refused("not_muted", mod.set_state(action="unmute", name="dee", reason="r", **BY))
    closed = await mod.set_state(action="close", name="dee", reason="abuse", **BY)
    muted = await mod.set_state(action="mute", name="dee", reason="chat", **BY)
    await refused("already_closed", mod.set_state(action="close", name="dee", reason="r", **BY))
    await refused("already_muted", mod.set_state(action="mute", name="dee", reason="r", **BY))
    account = await mod.account(name="dee", now=NOW)
    assert (account.closed, account.muted) == (True, True)
    await mod.undo(entry=muted.id, reason="r", **BY)
    assert not (await mod.account(name="dee", now=NOW)).muted
    reopened = await mod.set_state(action="reopen", name="dee", reason="appeal", **BY)
    # The close was reversed by the reopen: undoing the close now would do nothing.
    await refused("cannot_undo", mod.undo(entry=closed.id, reason="r", **BY))
    await mod.undo(entry=reopened.id, reason="appeal refused", **BY)
    assert (await mod.account(name="dee", now=NOW)).closed


async def test_a_void_of_a_race_or_of_one_runner_and_its_undo(
    store: SqlStore, mod: ModerationStore
) -> None:
    a, b, c = await register(store, "ann", "bob", "cyd")
    await store.record_race(race(res(a, rank=1), res(b, rank=2), uid="race-v"))
    await refused("unknown_race", mod.void(race="race-x", reason="r", **BY))
    await refused("not_in_race", mod.void(race="race-v", name="cyd", reason="r", **BY))
    await refused("unknown_player", mod.void(race="race-v", name="zed", reason="r", **BY))
    one = await mod.void(race="race-v", name="bob", reason="alt of ann", **BY)
    assert (one.race, one.name, one.details) == ("race-v", "bob", {"players": ["bob"]})
    await refused("already_voided", mod.void(race="race-v", name="bob", reason="r", **BY))
    rest = await mod.void(race="race-v", reason="farming", **BY)
    assert rest.details == {"players": ["ann"]} and rest.name is None
    await refused("already_voided", mod.void(race="race-v", reason="r", **BY))
    runs = (await mod.account(name="ann", now=NOW)).runs
    assert [(r.race, r.voided) for r in runs] == [("race-v", True)]

    await mod.undo(entry=one.id, reason="not an alt", **BY)
    assert not (await mod.account(name="bob", now=NOW)).runs[0].voided

    def voids(conn: Connection) -> list[tuple[int, bool]]:
        t = VoidedResult.__table__
        rows = conn.execute(select(t.c.log_id, t.c.undone_at.is_(None)).order_by(t.c.id))
        return [(int(x), bool(y)) for x, y in rows]

    assert await store.run_sync(voids) == [(one.id, False), (rest.id, True)]
    # Voided again later: a new row beside the lifted one.
    again = await mod.void(race="race-v", name="bob", reason="it was", **BY)
    assert (await store.run_sync(voids))[-1] == (again.id, True)
    assert c.name == "cyd"


async def test_two_marks_in_force_of_one_kind_cannot_be_stored(store: SqlStore) -> None:
    """The partial unique index holds even if the store's check were skipped."""
    from sqlalchemy import insert
    from sqlalchemy.exc import IntegrityError

    from server.storage.moderation import _utc

    [ann] = await register(store, "ann")
    mod = ModerationStore(store.engine)
    entry = await mod.mark(name="ann", kind="alt", reason="r", **BY)

    def second(conn: Connection) -> None:
        conn.execute(
            insert(AccountMark.__table__).values(
                player_id=ann.player_id,
                kind="alt",
                reason="r",
                marked_by="x",
                marked_at=_utc(NOW),
                log_id=entry.id,
            )
        )

    with pytest.raises(IntegrityError):
        await store.run_sync(second)
    await mod.unmark(name="ann", kind="alt", reason="r", **BY)
    await store.run_sync(second)  # one in force again: allowed


async def test_refunds_read_from_stored_rated_races(store: SqlStore, mod: ModerationStore) -> None:
    """Two rated races of a cheater: the loser of each gets back what the game cost
    them, capped; a race older than 5 days, and a race they won, give nothing."""
    cheat, bob, cyd, dee = await register(store, "cheat", "bob", "cyd", "dee")
    old = race(res(cheat, rank=1), res(dee, rank=2), ended=NOW - 6 * 86_400)
    first = race(res(cheat, rank=1), res(bob, rank=2), ended=NOW - 600)
    second = race(res(cheat, rank=1), res(bob, rank=2), res(cyd, rank=3), ended=NOW - 300)
    lost = race(res(cheat, rank=2), res(cyd, rank=1), ended=NOW - 100)
    for record in (old, first, second, lost):
        await store.record_race(dataclasses.replace(record, rated=True))
    refunds = await mod.refunds(name="cheat", now=NOW)

    def ids(conn: Connection) -> dict[str, int]:
        t = RaceRow.__table__
        return {str(u): int(i) for u, i in conn.execute(select(t.c.uid, t.c.id))}

    stored = await store.run_sync(ids)
    assert [(r.player_id, r.race_id) for r in refunds] == [
        (bob.player_id, stored[first.uid]),
        (cyd.player_id, stored[second.uid]),
    ]
    bobs, cyds = refunds
    # bob lost over a hundred points in his first race, but won some back in the second
    # (against cyd), and his peak is 1500 (before his first race): the ceiling of 1520
    # is what binds.
    current = await store.current_ratings([bob.player_id, cyd.player_id])
    assert bobs.cost > 100 and bobs.points < bobs.cost
    assert bobs.rating_before == current[bob.player_id][0] and bobs.rating_after == 1520.0
    # cyd lost to the cheater in the second race and beat them in the last one (that
    # game gave cyd points: nothing back for it), which left cyd at their peak: 20 back.
    assert cyds.cost < REFUND_CAP and cyds.points == pytest.approx(20.0)
    assert cyds.rating_before == current[cyd.player_id][0]
    # What an account page shows is the same plan.
    assert (await mod.account(name="cheat", now=NOW)).refunds == tuple(refunds)
    # A marked opponent gets nothing.
    await mod.mark(name="cyd", kind="boost", reason="r", **BY)
    assert {r.player_id for r in await mod.refunds(name="cheat", now=NOW)} == {bob.player_id}
    assert await mod.refunds(name="dee", now=NOW) == []


async def test_0014_goes_down_with_its_rows_and_leaves_the_rest(
    store: SqlStore, mod: ModerationStore
) -> None:
    """Down to 0013 drops the moderation tables, rows and all, without touching the
    players and results they refer to (SQLite copies no table here, so nothing cascades),
    and up again they are back, empty."""
    from server.storage import migrate
    from server.storage.models import ResultRow

    from .test_sql import count_rows

    a, b = await register(store, "ann", "bob")
    await store.record_race(race(res(a, rank=1), res(b, rank=2), uid="race-d"))
    await mod.enqueue(kind="flag", player_id=a.player_id, race="race-d", now=T0)
    await mod.mark(name="ann", kind="engine", reason="r", **BY)
    await mod.void(race="race-d", reason="r", **BY)
    await mod.set_state(action="close", name="bob", reason="r", **BY)
    assert await migrate.downgrade(store, "0013") == "0013"
    assert await count_rows(store, ResultRow) == 2
    assert await migrate.upgrade(store) == migrate.head()
    assert await store.find_player(token=a.token) == a  # (today's query reads 0018's column)
    assert await mod.log() == [] and await mod.queue() == []
    assert (await mod.account(name="ann", now=NOW)).marks == ()


async def test_a_marked_accounts_page_says_it_broke_the_rules_and_nothing_more(
    store: SqlStore, mod: ModerationStore
) -> None:
    """docs/fairplay.md "The marked account's own page": an engine, boost or alt mark in
    force empties the page (``broke_rules``); a bot mark does not; unmark and it is back."""
    import datetime as dt

    from server.domain.leaderboard import player_page

    ann, bob = await register(store, "ann", "bob")
    await store.record_race(race(res(ann, rank=1), res(bob, rank=2)))
    today = dt.date(2026, 12, 7)
    before = await store.player_stats(name="ann", today=today)
    assert before is not None and before.races == 1 and not before.broke_rules
    for kind in ("engine", "boost", "alt"):
        await mod.mark(name="ann", kind=kind, reason="x", **BY)
        page = player_page(await store.player_stats(name="ANN", today=today))  # type: ignore[arg-type]
        assert page.broke_rules and page.name == "ann"
        assert (page.rating, page.races, page.wins, page.best, page.ratings) == (
            None,
            0,
            0,
            (),
            (),
        )
        await mod.unmark(name="ann", kind=kind, reason="x", **BY)
    back = await store.player_stats(name="ann", today=today)
    assert back == before
    await mod.mark(name="bob", kind="bot", reason="a program", **BY)
    bot = await store.player_stats(name="bob", today=today)
    assert bot is not None and not bot.broke_rules and bot.races == 1
