"""The quick-race pool on a fake clock: rooms by rating band, by waiting time, the limit."""

from __future__ import annotations

import random

import pytest

from server.rooms.pool import UNLIMITED_BAND, Pool, PoolConfig, match, usual_window

CFG = PoolConfig(min_players=2, max_players=4, max_wait_s=20.0, fill_s=6.0)


def ids(groups: list) -> list[list[int]]:  # type: ignore[type-arg]
    return [[w.player for w in g.players] for g in groups]


def test_four_near_players_form_a_full_room_at_once() -> None:
    pool = Pool(CFG)
    for pid, rating in enumerate([1500, 1520, 1490, 1510], 1):
        pool.enter(pid, rating, 0.0)
    assert ids(pool.match(0.0)) == [[1, 2, 3, 4]]
    assert len(pool) == 0


def test_far_ratings_wait_until_the_band_reaches_them() -> None:
    pool = Pool(CFG)
    pool.enter(1, 1500, 0.0)
    pool.enter(2, 1800, 0.0)  # 300 apart: the band starts at 75 and widens 25 a second
    for t in (0.0, 3.0, 6.0, 8.0, 8.9):
        assert pool.match(t) == [], t
    # at 9 s the band is 75 + 225 = 300: the two meet (a small room: past fill_s)
    assert ids(pool.match(9.0)) == [[1, 2]]


def test_a_small_room_waits_for_fill_time_then_forms() -> None:
    pool = Pool(CFG)
    pool.enter(1, 1500, 0.0)
    pool.enter(2, 1500, 1.0)
    assert pool.match(5.9) == []  # two of four: a fuller room may come
    assert ids(pool.match(6.0)) == [[1, 2]]


def test_the_nearest_ratings_share_a_room() -> None:
    pool = Pool(CFG)
    ratings = {1: 1500, 2: 1900, 3: 1510, 4: 1890, 5: 1495, 6: 1905, 7: 1505, 8: 1895}
    for pid, r in ratings.items():
        pool.enter(pid, r, 0.0)
    groups = pool.match(0.0)
    assert sorted(sorted(g) for g in ids(groups)) == [[1, 3, 5, 7], [2, 4, 6, 8]]
    assert max(g.spread for g in groups) <= 15


def test_the_band_is_the_longest_waiters_and_bounded_by_the_limit() -> None:
    pool = Pool(CFG)
    pool.enter(1, 1500, 0.0)
    assert pool.status(1, 0.0).band == 75
    assert pool.status(1, 4.0).band == 175
    assert pool.status(1, 19.9).band == 572
    assert pool.status(1, 20.0).band == UNLIMITED_BAND
    assert pool.status(1, 20.0).max_wait_ms == 20_000
    assert pool.status(1, 2.5).waited_ms == 2500


def test_nobody_waits_past_the_limit_while_another_waits() -> None:
    pool = Pool(CFG)
    pool.enter(1, 800, 0.0)
    pool.enter(2, 2700, 0.0)  # 1900 apart: only the limit brings them together
    assert pool.match(19.9) == []
    assert ids(pool.match(20.0)) == [[1, 2]]


def test_a_player_alone_waits_on_and_is_never_paired_with_a_fake() -> None:
    pool = Pool(CFG)
    pool.enter(1, 1500, 0.0)
    for t in (0.0, 20.0, 600.0):
        assert pool.match(t) == []
    assert len(pool) == 1
    assert pool.status(1, 600.0).waiting == 1


def test_leaving_takes_a_player_out_and_entering_twice_keeps_the_place() -> None:
    pool = Pool(CFG)
    pool.enter(1, 1500, 0.0)
    pool.enter(1, 1500, 5.0)
    assert pool.status(1, 5.0).waited_ms == 5000
    assert pool.leave(1)
    assert not pool.leave(1)
    assert 1 not in pool


def test_the_longest_waiting_player_picks_first() -> None:
    cfg = PoolConfig(min_players=2, max_players=2, max_wait_s=20.0, fill_s=0.0)
    # 3 and 1 are nearest, but 2 has waited longest and 1 is within its band
    groups = match(
        [
            Pool(cfg).enter(1, 1550, 5.0),
            Pool(cfg).enter(2, 1500, 0.0),
            Pool(cfg).enter(3, 1560, 6.0),
        ],
        cfg,
        6.0,
    )
    assert ids(groups) == [[2, 1]]


def test_operator_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        PoolConfig(min_players=1)
    with pytest.raises(ValueError):
        PoolConfig(min_players=3, max_players=2)
    pool = Pool(PoolConfig(min_players=3, max_players=3, fill_s=0.0))
    pool.enter(1, 1500, 0.0)
    pool.enter(2, 1500, 0.0)
    assert pool.match(30.0) == []  # three needed
    pool.enter(3, 1500, 30.0)
    assert ids(pool.match(30.0)) == [[1, 2, 3]]


def test_a_crowd_on_a_fake_clock_never_waits_past_the_limit() -> None:
    rng = random.Random(29)
    pool = Pool(CFG)
    joined: dict[int, float] = {}
    waits: list[float] = []
    now = 0.0
    pid = 0
    while now < 120.0:
        for _ in range(rng.randrange(3)):
            pid += 1
            pool.enter(pid, rng.gauss(1500, 300), now)
            joined[pid] = now
        for g in pool.match(now):
            assert 2 <= len(g.players) <= 4
            waits.extend(now - joined[w.player] for w in g.players)
        now = round(now + 0.5, 3)
    assert waits and max(waits) <= CFG.max_wait_s + 0.5  # the poll's step


def test_usual_window_from_stored_race_hours() -> None:
    hours = [0] * 24
    assert usual_window(hours) is None
    hours[18], hours[19], hours[20], hours[21] = 10, 12, 9, 6
    hours[3] = 3
    assert usual_window(hours) == "most races start 18:00-20:00 UTC"  # 22 of 40
    wrap = [0] * 24
    wrap[23], wrap[0], wrap[1] = 12, 10, 8  # over midnight
    assert usual_window(wrap) == "most races start 23:00-01:00 UTC"
    assert usual_window([1] * 24) == "most races start 00:00-12:00 UTC"
