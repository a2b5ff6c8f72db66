"""Daily streaks: consecutive UTC days with a won counted daily attempt (docs/ratings.md).

Pure: the days come from stored results (their ``daily_date``, the UTC day of the deal the
server dealt) and ``today`` from the server's clock, never from a client's, so neither a
time zone nor a second device can change a streak.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["streaks", "Streak"]


@dataclass(frozen=True, slots=True)
class Streak:
    """A player's streak as the hub keeps it between hellos: the run of consecutive days
    that ends on ``last_won``, and the best run. ``current`` reads it on any later day,
    and ``won`` moves it on by a day won, so a welcome from memory (a second device, a
    resume) says the same as storage would."""

    last_won: dt.date | None = None
    run: int = 0
    best: int = 0

    def current(self, today: dt.date) -> int:
        """The streak on ``today``: the run, unless a whole day has passed without a win."""
        if self.last_won is None or (today - self.last_won).days > 1:
            return 0
        return self.run

    def won(self, day: dt.date) -> Streak:
        """The streak after the player won their counted attempt of ``day``."""
        if self.last_won is not None and day <= self.last_won:
            return self
        gap = None if self.last_won is None else (day - self.last_won).days
        run = self.run + 1 if gap == 1 else 1
        return Streak(day, run, max(self.best, run))

    @classmethod
    def of(cls, won_days: Iterable[dt.date], today: dt.date) -> Streak:
        """The streak of the days won (those up to ``today``)."""
        days = sorted({d for d in won_days if d <= today})
        if not days:
            return cls()
        run, best = streaks(days, days[-1])
        return cls(days[-1], run, best)


def streaks(won_days: Iterable[dt.date], today: dt.date) -> tuple[int, int]:
    """``(current, best)`` for the days a player won their counted daily attempt.

    The current streak is the run of consecutive days that ends today, or yesterday: a day
    not yet won does not break a streak until the day is over. The best is the longest run
    ever (the current one included). A day after ``today`` (a clock set back) is ignored."""
    days = sorted({d for d in won_days if d <= today})
    best = 0
    run = 0
    previous: dt.date | None = None
    for day in days:
        run = run + 1 if previous is not None and (day - previous).days == 1 else 1
        best = max(best, run)
        previous = day
    current = run if previous is not None and (today - previous).days <= 1 else 0
    return current, best
