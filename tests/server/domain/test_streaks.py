"""Daily streaks from the days won (server/domain/streaks.py)."""

from __future__ import annotations

import datetime as dt

from server.domain.streaks import Streak, streaks

D = dt.date(2026, 12, 1)


def day(n: int) -> dt.date:
    return D + dt.timedelta(days=n)


def test_no_wins_no_streak() -> None:
    assert streaks([], D) == (0, 0)


def test_a_streak_lives_until_a_whole_day_is_missed() -> None:
    won = [day(0), day(1), day(2)]
    assert streaks(won, day(2)) == (3, 3)  # today won
    assert streaks(won, day(3)) == (3, 3)  # today not yet won: still alive
    assert streaks(won, day(4)) == (0, 3)  # yesterday missed: broken, best kept


def test_a_missed_day_starts_again_and_best_is_the_longest() -> None:
    won = [day(0), day(1), day(2), day(4), day(5)]
    assert streaks(won, day(5)) == (2, 3)


def test_a_day_after_today_does_not_count() -> None:
    assert streaks([day(0), day(1)], day(0)) == (1, 1)


def test_the_hubs_streak_moves_on_as_storage_would_count_it() -> None:
    """``Streak.won`` day by day agrees with ``streaks`` over the same days, on any later
    day (what a welcome from memory says against what storage says)."""
    won = [day(0), day(1), day(2), day(4), day(5), day(9)]
    kept = Streak()
    for n, d in enumerate(won):
        kept = kept.won(d)
        kept = kept.won(d)  # a second win the same day changes nothing
        assert kept == Streak.of(won[: n + 1], d)
        for later in range(4):
            today = d + dt.timedelta(days=later)
            assert (kept.current(today), kept.best) == streaks(won[: n + 1], today)
