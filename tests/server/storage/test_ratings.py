"""Ratings and streaks in the database (server/storage/ratings.py), on both backends: a
rated race rates its runners in the transaction that stores it, with its inputs; the
recomputation finds the same numbers, and finds a changed one; streaks by the server's
date."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from server.domain.pairs import PAIR_LIMIT
from server.domain.ratings import PROVISIONAL_RACES
from server.domain.records import LiveRace, RaceRecord, Standing
from server.storage.models import PlayerRating, RatingRow
from server.storage.sql import SqlStore

from .test_sql import DAY, T0, race, register, res


def rated(record: RaceRecord) -> RaceRecord:
    from dataclasses import replace

    return replace(record, rated=True)


async def four_runner_race(store: SqlStore) -> tuple[list[int], dict[int, object]]:
    a, b, c, d = await register(store, "ann", "bob", "cyd", "dee")
    changes = await store.record_race(
        rated(
            race(
                res(a, rank=1, time_ms=50_000),
                res(b, rank=2, time_ms=60_000),
                res(c, rank=3, outcome="resigned"),
                res(d, rank=3, outcome="resigned"),
            )
        )
    )
    return [a.player_id, b.player_id, c.player_id, d.player_id], dict(changes)


async def test_a_rated_race_rates_its_runners_with_their_inputs(store: SqlStore) -> None:
    ids, changes = await four_runner_race(store)
    a, b, c, d = ids
    # New players: everyone starts at 1500; the winner gains what the others lose.
    got = {pid: (ch.rating, ch.change, ch.provisional) for pid, ch in changes.items()}  # type: ignore[attr-defined]
    assert got[a][0] > got[b][0] > 1500 > got[c][0] == got[d][0]
    assert all(p for _, _, p in got.values())
    assert got[a][1] == got[a][0] - 1500
    current = await store.current_ratings([a, b, c, d, 9999])
    assert set(current) == {a, b, c, d}
    assert round(current[a][0]) == got[a][0]

    def rows(conn: Connection) -> list[RatingRow]:
        return list(conn.execute(select(RatingRow.__table__)).all())  # type: ignore[arg-type]

    stored = await store.run_sync(rows)
    assert len(stored) == 4
    mine = next(r for r in stored if r.player_id == c)
    assert (mine.rating_before, mine.deviation_before) == (1500.0, 350.0)
    # Its games: a loss to a and b, a draw with d (tied rank), each at 1500/350 before.
    assert json.loads(mine.games) == [
        [a, 1500.0, 350.0, 0.0],
        [b, 1500.0, 350.0, 0.0],
        [d, 1500.0, 350.0, 0.5],
    ]


async def test_an_unrated_race_rates_nobody(store: SqlStore) -> None:
    a, b = await register(store, "ann", "bob")
    assert await store.record_race(race(res(a, rank=1), res(b, rank=2))) == {}
    assert await store.current_ratings([a.player_id, b.player_id]) == {}


async def test_a_retried_write_answers_the_same_changes(store: SqlStore) -> None:
    a, b = await register(store, "ann", "bob")
    record = rated(race(res(a, rank=1), res(b, rank=2)))
    first = await store.record_race(record)
    again = await store.record_race(record)
    assert again == first
    assert (await store.recompute_ratings()).identical


async def test_recompute_gives_identical_ratings(store: SqlStore) -> None:
    ids, _ = await four_runner_race(store)
    a, b, c, d = ids
    # More races, overlapping runners, some unrated between them.
    people = await register(store, "eve")
    e = people[0].player_id
    from server.storage.sql import Identity

    def who(pid: int, name: str) -> Identity:
        return Identity(pid, name, "")

    for n in range(PROVISIONAL_RACES + 2):
        order = [(a, "ann"), (e, "eve"), (c, "cyd")]
        if n % 3 == 1:
            order.reverse()
        results = [res(who(pid, name), rank=i + 1) for i, (pid, name) in enumerate(order)]
        await store.record_race(rated(race(*results, ended=T0 + 600 * n)))
        await store.record_race(race(res(who(b, "bob"), rank=1), res(who(d, "dee"), rank=2)))
    report = await store.recompute_ratings()
    assert report.identical, report.differences
    assert report.races == PROVISIONAL_RACES + 3
    assert report.players == 5
    # Within 24 h: the same pairs count 10 rated races, the 11th and 12th none of theirs.
    assert report.rows == 4 + 3 * PAIR_LIMIT
    stats = await store.player_stats(name="ANN", today=DAY)
    assert stats is not None and stats.name == "ann"
    assert not stats.provisional  # 1 + PAIR_LIMIT rated races that counted for ann
    assert len(stats.ratings) == 1 + PAIR_LIMIT
    assert [t for t, _ in stats.ratings] == sorted(t for t, _ in stats.ratings)
    assert stats.rating == stats.ratings[-1][1]


async def test_recompute_finds_a_changed_number(store: SqlStore) -> None:
    ids, _ = await four_runner_race(store)

    def nudge(conn: Connection) -> None:
        conn.execute(
            update(PlayerRating.__table__)  # type: ignore[arg-type]
            .where(PlayerRating.player_id == ids[0])
            .values(rating=PlayerRating.rating + 0.0001)
        )
        conn.execute(
            update(RatingRow.__table__)  # type: ignore[arg-type]
            .where(RatingRow.player_id == ids[1])
            .values(deviation_before=349.0)
        )

    await store.run_sync(nudge)
    report = await store.recompute_ratings()
    assert not report.identical
    assert len(report.differences) == 2
    assert f"player {ids[0]}: current rating" in report.differences[1]
    assert f"player {ids[1]}" in report.differences[0]


async def test_streaks_by_the_servers_date_over_midnight_and_a_missed_day(
    store: SqlStore,
) -> None:
    (a,) = await register(store, "ann")

    async def daily(day: dt.date, outcome: str = "won", practice: bool = False) -> None:
        await store.record_race(
            race(
                res(a, outcome=outcome, practice=practice), daily_date=day, code=f"C-{day.day:07d}"
            )
        )

    d0 = dt.date(2026, 12, 1)
    for n in range(3):
        await daily(d0 + dt.timedelta(days=n))
    await daily(d0 + dt.timedelta(days=3), outcome="resigned")  # lost: no day
    await daily(d0 + dt.timedelta(days=3), practice=True)  # practice: never counts
    pid = a.player_id

    async def streak(today: dt.date) -> tuple[int, int]:
        s = (await store.standings([pid], today=today))[pid].streak
        return s.current(today), s.best

    assert await streak(d0 + dt.timedelta(days=2)) == (3, 3)
    # Midnight passes: a day not won yet does not break it...
    assert await streak(d0 + dt.timedelta(days=3)) == (3, 3)
    # ...a whole day missed does (the 4th was lost, the 5th has begun).
    assert await streak(d0 + dt.timedelta(days=4)) == (0, 3)
    await daily(d0 + dt.timedelta(days=4))
    assert await streak(d0 + dt.timedelta(days=4)) == (1, 3)
    stats = await store.player_stats(name="ann", today=d0 + dt.timedelta(days=4))
    assert stats is not None and (stats.streak, stats.best_streak) == (1, 3)
    assert stats.rating is None and stats.provisional and stats.ratings == ()
    assert stats.races == 6 and stats.wins == 5
    assert stats.best == (("C", 60_000),)


async def test_an_unknown_player_has_no_page(store: SqlStore) -> None:
    assert await store.player_stats(name="nobody", today=DAY) is None


@pytest.mark.parametrize("quick", [False, True], ids=["rated", "quick"])
async def test_a_rated_race_stays_rated_in_the_journal(store: SqlStore, quick: bool) -> None:
    """A rated race rebuilt after a restart (or taken over) is still rated: its result
    will rate its runners; a quick race is still one (migration 0013), its ``room``
    messages say so."""
    ann, bob = await register(store, "ann", "bob")
    live = LiveRace(
        uid="rated-live",
        room="ZEBRA",
        code="YU1-C-AAAAAAB",
        rules="C",
        daily_date=None,
        attempt=0,
        undo=True,
        time_limit=1800,
        max_players=2,
        fixed=True,
        host_id=ann.player_id,
        players=((ann.player_id, "ann"), (bob.player_id, "bob")),
        started_wall=T0,
        rated=True,
        quick=quick,
    )
    await store.journal(races=[live], actions=[])
    [(found, _, _)] = await store.live_races()
    assert found == live and found.rated and found.quick is quick


async def test_a_hello_reads_the_player_and_their_standing_on_one_connection(
    store: SqlStore,
) -> None:
    """``find_player_standing``: the token's player and what ``standings`` says of them
    (the same answer as the two reads it replaces); None for an unknown token."""
    a, b = await register(store, "ann", "bob")
    await store.record_race(rated(race(res(a, rank=1), res(b, rank=2, outcome="resigned"))))
    today = dt.date(2026, 12, 3)
    found = await store.find_player_standing(token=a.token, today=today)
    assert found is not None
    identity, standing = found
    assert identity == a
    assert standing == (await store.standings([a.player_id], today=today))[a.player_id]
    assert standing.rating is not None and standing.rating > 1500
    assert await store.find_player_standing(token="not-a-token", today=today) is None
    # Without a date: the identity alone (what find_player answers).
    assert await store.find_player_standing(token=b.token, today=None) == (b, Standing())


async def test_a_pair_counts_ten_races_a_day_at_the_windows_edge(store: SqlStore) -> None:
    from sqlalchemy import select as sel

    from server.domain.pairs import PAIR_WINDOW_S
    from server.storage.pairs_models import RatingPairRow

    a, b = await register(store, "ann", "bob")
    for n in range(PAIR_LIMIT):
        await store.record_race(rated(race(res(a, rank=1), res(b, rank=2), ended=T0 + n)))
    late = T0 + PAIR_WINDOW_S  # 24 h after the 1st: it leaves the window, 9 are left
    eleventh = await store.record_race(rated(race(res(a, rank=1), res(b, rank=2), ended=late - 1)))
    assert {ch.change for ch in eleventh.values()} == {0}
    twelfth = await store.record_race(rated(race(res(a, rank=1), res(b, rank=2), ended=late)))
    assert all(ch.change != 0 for ch in twelfth.values())

    def reasons(conn: Connection) -> list[str]:
        t = RatingPairRow.__table__
        return [r.reason for r in conn.execute(sel(t).order_by(t.c.race_id)).all()]

    assert await store.run_sync(reasons) == ["counted"] * PAIR_LIMIT + ["limit", "counted"]
    assert (await store.recompute_ratings()).identical


async def test_equal_foundations_draw_when_nobody_won_ranks_unchanged(store: SqlStore) -> None:
    a, b = await register(store, "ann", "bob")
    record = rated(
        race(
            res(a, rank=1, outcome="resigned", foundations=12, time_ms=90_000),
            res(b, rank=2, outcome="resigned", foundations=12, time_ms=80_000),
        )
    )
    changes = await store.record_race(record)
    assert {ch.change for ch in changes.values()} == {0}  # a draw of equals: no change
    assert [r.rank for r in record.results] == [1, 2]  # the ranks stay as they were
    stored = await store.current_ratings([a.player_id, b.player_id])
    assert len(stored) == 2 and all(dev < 350 for _, dev in stored.values())  # it counted
    assert (await store.recompute_ratings()).identical
