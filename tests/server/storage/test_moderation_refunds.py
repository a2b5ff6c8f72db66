"""Refunds applied (server/storage/moderation_refunds.py) and a mark's effect on later
ratings (server/storage/ratings.py), on both backends: an engine or boost mark gives its
opponents back what its rated races cost them, capped at 150 a race and at peak + 20, in
the mark's transaction; the unmark, or the undo of the mark, takes exactly that back; a
marked player's later rated race moves nobody's rating; and ``recompute_ratings`` agrees
with the live figures through all of it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Connection

from server.domain.ratings import Rating, Runner, rate_race
from server.storage.models import PlayerRating, RaceRow, RatingRow
from server.storage.moderation import ModerationStore
from server.storage.moderation_models import RatingRefund
from server.storage.pairs_models import RatingPairRow
from server.storage.refunds import PEAK_MARGIN, REFUND_CAP
from server.storage.sql import Identity, SqlStore
from tests.server.storage.test_sql import T0, race, register, res

NOW = T0 + 3600
BY: dict[str, Any] = {"operator": "olga", "now": NOW}
_ended = iter(range(1, 10_000))


@pytest.fixture
async def mod(store: SqlStore) -> AsyncIterator[ModerationStore]:
    yield ModerationStore(store.engine)


async def rated_race(store: SqlStore, *results: object) -> str:
    """Store a rated race ending a little after the last (all of them within the hour
    before NOW, inside the refund window); its uid."""
    record = race(*results, ended=T0 + next(_ended))  # type: ignore[arg-type]
    await store.record_race(dataclasses.replace(record, rated=True))
    return record.uid


async def figures(store: SqlStore) -> dict[int, tuple[float, float, float, int]]:
    """Every current rating, exactly as stored."""

    def read(conn: Connection) -> dict[int, tuple[float, float, float, int]]:
        t = PlayerRating.__table__
        return {
            int(r.player_id): (r.rating, r.deviation, r.volatility, r.races)
            for r in conn.execute(select(t))
        }

    result: dict[int, tuple[float, float, float, int]] = await store.run_sync(read)
    return result


async def rating_of(store: SqlStore, who: Identity) -> Rating:
    got = (await figures(store))[who.player_id]
    return Rating(got[0], got[1], got[2])


async def seed(store: SqlStore, who: Identity, rating: Rating) -> None:
    """Give a player with no rated race yet a current rating, as a server that rated
    their earlier races would have stored it (only for the tests of the caps, which
    need a loss of an exact size; a recomputation starts everyone at 1500)."""

    def put(conn: Connection) -> None:
        conn.execute(
            insert(cast(Table, PlayerRating.__table__)).values(
                player_id=who.player_id,
                rating=rating.rating,
                deviation=rating.deviation,
                volatility=rating.volatility,
                races=30,
                rated_at=dt.datetime.fromtimestamp(T0 - 86_400, dt.UTC),
            )
        )

    await store.run_sync(put)


def rating_for_loss(cheat: Rating, loss: float) -> float:
    """The rating a player of deviation 350 needs to lose exactly ``loss`` points to
    ``cheat`` in a race of two (by the real rating system: the higher they stood, the
    more the loss costs them)."""
    low, high = 1000.0, 3000.0

    def lost(rating: float) -> float:
        rated = rate_race([Runner(1, cheat, 1), Runner(2, Rating(rating, 350.0, 0.06), 2)])
        return rating - rated[1].after.rating

    assert lost(low) < loss < lost(high)
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if lost(mid) < loss else (low, mid)
    return (low + high) / 2


async def refund_rows(store: SqlStore) -> list[tuple[int, str, float, int | None]]:
    """``(player, race uid, points, taken back by)`` of every rating_refunds row."""

    def read(conn: Connection) -> list[tuple[int, str, float, int | None]]:
        f = RatingRefund.__table__
        r = RaceRow.__table__
        rows = conn.execute(
            select(f.c.player_id, r.c.uid, f.c.points, f.c.undone_log_id)
            .join(r, r.c.id == f.c.race_id)
            .order_by(f.c.id)
        )
        return [(int(a), str(b), float(c), d) for a, b, c, d in rows]

    result: list[tuple[int, str, float, int | None]] = await store.run_sync(read)
    return result


async def identical(store: SqlStore) -> None:
    report = await store.recompute_ratings()
    assert report.identical, report.differences


async def test_the_cap_of_150_a_race_at_its_edges(store: SqlStore, mod: ModerationStore) -> None:
    """Three opponents who lost 149, 150 and 151 points to the cheater (each from their
    peak: the ceiling does not bind): back 149, 150 and 150, in the mark's transaction,
    each a row, and the entry lists them."""
    cheat, *victims = await register(store, "cheat", "v149", "v150", "v151")
    losses = {}
    for who, loss in zip(victims, (149.0, 150.0, 151.0), strict=True):
        before = await figures(store)
        now = Rating() if cheat.player_id not in before else await rating_of(store, cheat)
        seeded = rating_for_loss(now, loss)
        await seed(store, who, Rating(seeded, 350.0, 0.06))
        uid = await rated_race(store, res(cheat, rank=1), res(who, rank=2, outcome="resigned"))
        losses[who.player_id] = (uid, seeded - (await rating_of(store, who)).rating)
    for pid, (_, lost) in losses.items():
        assert lost == pytest.approx({2: 149.0, 3: 150.0, 4: 151.0}[pid], abs=1e-6)
    before = await figures(store)
    entry = await mod.mark(name="cheat", kind="engine", reason="solver", **BY)
    after = await figures(store)
    got = {v.player_id: after[v.player_id][0] - before[v.player_id][0] for v in victims}
    assert got[victims[0].player_id] == pytest.approx(losses[victims[0].player_id][1])
    assert got[victims[1].player_id] == pytest.approx(150.0, abs=1e-6)
    assert got[victims[2].player_id] == REFUND_CAP  # 151 lost, 150 back
    # Only the rating moves: not the deviation, the volatility or the count of races.
    for v in victims:
        assert after[v.player_id][1:] == before[v.player_id][1:]
    assert after[cheat.player_id] == before[cheat.player_id]
    assert [(p, u) for p, u, _, _ in await refund_rows(store)] == [
        (v.player_id, losses[v.player_id][0]) for v in victims
    ]
    listed = entry.details["refunds"]
    assert [r["player_id"] for r in listed] == [v.player_id for v in victims]
    assert [r["rating_after"] for r in listed] == [after[v.player_id][0] for v in victims]
    # Nothing is left to refund: show lists what was given, nothing as due.
    account = await mod.account(name="cheat", now=NOW)
    assert account.refunds == ()
    assert [(r.player_id, r.rating_after, r.entry) for r in account.refunded] == [
        (v.player_id, after[v.player_id][0], entry.id) for v in victims
    ]
    assert [r.points for r in account.refunded] == pytest.approx(list(got.values()))
    # The undo of the mark takes every point back: the ratings are the floats they were.
    undone = await mod.undo(entry=entry.id, reason="wrong account", **BY)
    assert await figures(store) == before
    assert sorted(r["points"] for r in undone.details["undo"]["taken_back"]) == sorted(
        r["points"] for r in listed
    )
    assert all(r[3] == undone.id for r in await refund_rows(store))
    assert len((await mod.account(name="cheat", now=NOW)).refunds) == 3  # due again


async def test_refunds_stop_at_peak_plus_20(store: SqlStore, mod: ModerationStore) -> None:
    """bob and cyd each lose a race to the cheater; bob wins points back from dee,
    more than he lost (he is at his peak: his refund stops at it + 20, exactly); cyd
    does not (her refund is whole, and leaves her at her peak, under her ceiling)."""
    cheat, bob, cyd, dee = await register(store, "cheat", "bob", "cyd", "dee")
    for who in (bob, cyd):
        await rated_race(store, res(cheat, rank=1), res(who, rank=2, outcome="resigned"))
    await rated_race(store, res(bob, rank=1), res(dee, rank=2, outcome="resigned"))
    now = await figures(store)
    bob_now, cyd_now = now[bob.player_id][0], now[cyd.player_id][0]
    # bob won back more than he lost to dee: he stands at his peak, so 20 points is all
    # his refund can be, whatever the race cost him.
    assert bob_now > 1500.0
    await mod.mark(name="cheat", kind="boost", reason="farm", **BY)
    after = await figures(store)
    assert after[bob.player_id][0] == bob_now + PEAK_MARGIN
    [bobs, cyds] = (await mod.account(name="cheat", now=NOW)).refunded
    assert bobs.points == pytest.approx(PEAK_MARGIN)
    assert cyds.points < REFUND_CAP and after[cyd.player_id][0] == cyd_now + cyds.points
    assert after[cyd.player_id][0] == pytest.approx(1500.0)  # her peak: under the ceiling
    await identical(store)


async def test_unmark_and_undo_take_back_exactly_and_recompute_agrees(
    store: SqlStore, mod: ModerationStore
) -> None:
    """mark, unmark, undo of the unmark, undo of that mark's refunds by an unmark again:
    every opponent's rating is back to the float it was each time nothing happened in
    between, and the recomputation replays each refund at its place, including one an
    opponent raced on before it was taken back."""
    cheat, bob, cyd, dee = await register(store, "cheat", "bob", "cyd", "dee")
    await rated_race(store, res(cheat, rank=1), res(bob, rank=2, outcome="resigned"))
    await rated_race(store, res(cheat, rank=1), res(bob, rank=2), res(cyd, rank=3))
    await rated_race(store, res(bob, rank=1), res(dee, rank=2))
    start = await figures(store)
    await identical(store)

    marked = await mod.mark(name="cheat", kind="engine", reason="solver", **BY)
    given = await figures(store)
    assert given[bob.player_id][0] > start[bob.player_id][0]
    assert given[cyd.player_id][0] > start[cyd.player_id][0]
    assert given[dee.player_id] == start[dee.player_id]  # never raced the cheater
    await identical(store)

    lifted = await mod.unmark(name="cheat", kind="engine", reason="appeal", **BY)
    assert await figures(store) == start
    assert sorted(r["points"] for r in lifted.details["taken_back"]) == sorted(
        r["points"] for r in marked.details["refunds"]
    )
    assert all(r[3] == lifted.id for r in await refund_rows(store))
    account = await mod.account(name="cheat", now=NOW)
    assert len(account.refunds) == len(marked.details["refunds"])  # due again
    assert not any(r.in_force for r in account.refunded)
    await identical(store)

    # The undo of the unmark marks again and gives the refunds again, as a mark would.
    again = await mod.undo(entry=lifted.id, reason="appeal refused", **BY)
    assert await figures(store) == given
    assert [r["points"] for r in again.details["undo"]["refunds"]] == [
        r["points"] for r in marked.details["refunds"]
    ]
    await identical(store)

    # bob races on his refunded rating; then the cheater is unmarked again: the points
    # come off his rating as it is now, and the recomputation gives them and takes them
    # back at their places among his races.
    await rated_race(store, res(bob, rank=1), res(dee, rank=2))
    raced = await figures(store)
    lifted = await mod.unmark(name="cheat", kind="engine", reason="wrong account", **BY)
    back = await figures(store)
    taken = lifted.details["taken_back"]
    assert sorted(r["points"] for r in taken) == sorted(
        r["points"] for r in again.details["undo"]["refunds"]
    )
    bob_points = sum(r["points"] for r in taken if r["player_id"] == bob.player_id)
    assert bob_points > 0
    assert back[bob.player_id][0] == pytest.approx(raced[bob.player_id][0] - bob_points)
    assert back[bob.player_id][0] != raced[bob.player_id][0]
    assert back[cyd.player_id] == start[cyd.player_id]
    report = await store.recompute_ratings()
    assert report.identical, report.differences
    # Each refund of each mark given once and taken back once.
    assert report.refunds == 2 * (len(marked.details["refunds"]) + len(taken))
    assert all(r[3] is not None for r in await refund_rows(store))


async def test_a_marked_players_later_rated_race_moves_nobody(
    store: SqlStore, mod: ModerationStore
) -> None:
    """After an engine mark: a race of the marked player and two others moves neither
    the marked player's rating nor anyone's for their game, the two others' pair still
    counts; each pair with the marked player is stored as ``marked``, and the
    recomputation replays it. After the unmark their races count again."""
    cheat, bob, cyd = await register(store, "cheat", "bob", "cyd")
    await rated_race(store, res(cheat, rank=1), res(bob, rank=2))
    await mod.mark(name="cheat", kind="engine", reason="solver", **BY)
    before = await figures(store)
    uid = await rated_race(store, res(cheat, rank=1), res(bob, rank=2), res(cyd, rank=3))
    after = await figures(store)
    assert after[cheat.player_id] == before[cheat.player_id]
    # bob's rating moved only by his game against cyd: the one of a two-runner race.
    alone = rate_race(
        [
            Runner(bob.player_id, Rating(*before[bob.player_id][:3]), 1),
            Runner(cyd.player_id, Rating(), 2),
        ]
    )
    assert after[bob.player_id][0] == alone[0].after.rating
    assert after[cyd.player_id][0] == alone[1].after.rating

    def pairs(conn: Connection) -> list[tuple[int, int, str]]:
        p = RatingPairRow.__table__
        r = RaceRow.__table__
        rows = conn.execute(
            select(p.c.a, p.c.b, p.c.reason)
            .join(r, r.c.id == p.c.race_id)
            .where(r.c.uid == uid)
            .order_by(p.c.a, p.c.b)
        )
        return [(int(a), int(b), str(c)) for a, b, c in rows]

    assert await store.run_sync(pairs) == [
        (cheat.player_id, bob.player_id, "marked"),
        (cheat.player_id, cyd.player_id, "marked"),
        (bob.player_id, cyd.player_id, "counted"),
    ]

    def rows_of_cheat(conn: Connection) -> int:
        g = RatingRow.__table__
        return len(conn.execute(select(g.c.id).where(g.c.player_id == cheat.player_id)).all())

    assert await store.run_sync(rows_of_cheat) == 1  # the race before the mark only
    # A race of the marked player alone with one other moves nobody.
    before = await figures(store)
    await rated_race(store, res(cyd, rank=1), res(cheat, rank=2))
    assert await figures(store) == before
    # Nothing new to refund: the marked player's later races cost nobody anything.
    assert (await mod.account(name="cheat", now=NOW + 60)).refunds == ()
    await identical(store)
    # Unmarked, the cheater's races rate both sides again (the refund taken back).
    await mod.unmark(name="cheat", kind="engine", reason="appeal", **BY)
    before = await figures(store)
    await rated_race(store, res(cheat, rank=1), res(cyd, rank=2))
    after = await figures(store)
    assert after[cheat.player_id][0] > before[cheat.player_id][0]
    assert after[cyd.player_id][0] < before[cyd.player_id][0]
    await identical(store)


async def test_alt_and_bot_marks_refund_nothing_and_rate_as_before(
    store: SqlStore, mod: ModerationStore
) -> None:
    cheat, bob = await register(store, "cheat", "bob")
    await rated_race(store, res(cheat, rank=1), res(bob, rank=2))
    before = await figures(store)
    entry = await mod.mark(name="cheat", kind="alt", reason="second account", **BY)
    assert "refunds" not in entry.details and await figures(store) == before
    assert await refund_rows(store) == []
    await rated_race(store, res(cheat, rank=1), res(bob, rank=2))
    assert (await figures(store))[bob.player_id][0] < before[bob.player_id][0]
    # An engine mark beside it refunds both races; a boost mark after that, nothing more.
    await mod.mark(name="cheat", kind="engine", reason="solver", **BY)
    assert len(await refund_rows(store)) == 2
    boost = await mod.mark(name="cheat", kind="boost", reason="farm", **BY)
    assert boost.details["refunds"] == [] and len(await refund_rows(store)) == 2
    await identical(store)


async def test_a_mark_among_concurrent_rated_races_stays_exact(
    store: SqlStore, mod: ModerationStore
) -> None:
    """A mark made while rated races of the marked player's opponents (and of the marked
    player) are being committed: each waits for the other (PostgreSQL: the players held
    in id order by both), nothing deadlocks, and the recomputation agrees."""
    import asyncio

    cheat, *others = await register(store, "cheat", "bob", "cyd", "dee", "eve")
    for who in others:
        await rated_race(store, res(cheat, rank=1), res(who, rank=2, outcome="resigned"))
    pairs = [(others[i], others[(i + 1) % len(others)]) for i in range(len(others))]
    await asyncio.gather(
        *(rated_race(store, res(a, rank=1), res(b, rank=2)) for a, b in pairs),
        rated_race(store, res(cheat, rank=1), res(others[0], rank=2)),
        mod.mark(name="cheat", kind="engine", reason="solver", **BY),
        *(rated_race(store, res(b, rank=1), res(a, rank=2)) for a, b in pairs),
    )
    assert len(await refund_rows(store)) >= len(others)
    await identical(store)
    await asyncio.gather(
        mod.unmark(name="cheat", kind="engine", reason="appeal", **BY),
        *(rated_race(store, res(a, rank=1), res(b, rank=2)) for a, b in pairs),
    )
    assert all(r[3] is not None for r in await refund_rows(store))
    await identical(store)
