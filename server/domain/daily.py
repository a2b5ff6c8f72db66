"""The daily deal: one winnable deal a day (UTC) per server, from a secret nobody else holds.

Each date has a sequence of *candidates*: candidate 0 is the seeded deal whose 128-bit
seed is the first 16 bytes of HMAC-SHA256("yukon-daily:<date>") under the server's secret,
candidate n > 0 the one seeded by HMAC-SHA256("yukon-daily:<date>:<n>"). The day's deal is
the first candidate the solver proves winnable within ``DAILY_BUDGET_NODES`` positions. A
budget in nodes, not seconds, makes the choice the same on any machine, however busy.
Nobody can compute a day's deal without the secret, nor search for it from the cards it
shows (a seed is 128 bits, not one of 26^7 deal numbers: docs/fairness.md); its code is
revealed once the day is over, with the salt of the commitment that was public all day
(``DailyChoice.commitment``).

Days chosen before seeded deals existed keep the 7-letter code stored for them, and have
no commitment.

Choosing takes the solver anything from a millisecond to a few seconds, so it runs in a
worker process (never on the event loop), once per date: ``DailyDeals`` keeps the choice in
memory and in the database, where it stays fixed even if a later solver would choose
differently. Its *par* (the winning line without wasted moves) is shown on the daily board.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Protocol

from protocol import Game, GameCode, Rules
from protocol.commitment import commitment
from protocol.shuffle import SEED_BYTES
from solver import par, solve

from ..runtime.workers import real_stderr

__all__ = [
    "DAILY_BUDGET_NODES",
    "MAX_CANDIDATES",
    "DailyChoice",
    "DailyDeals",
    "DAILY_TIME_LIMIT_S",
    "PUBLICATION_MARGIN_S",
    "NoWinnableDealError",
    "candidate_code",
    "choose_daily",
    "code_public",
    "code_public_at",
    "counts_on_board",
    "day_begun",
    "next_daily_ms",
    "parse_archive_date",
    "utc_date",
]

log = logging.getLogger("yukon.daily")

#: Positions the solver may search per candidate before the next candidate is tried.
#: About 1.5 s of one core for a candidate it cannot decide; a winnable deal is usually
#: proven within a few thousand positions.
DAILY_BUDGET_NODES = 100_000
#: A daily attempt's time limit in seconds (``HubConfig.daily_time_limit``).
DAILY_TIME_LIMIT_S = 1800
#: How long after the last moment a day's attempt may begin (00:00 UTC the next day) its
#: deal may still reach the player: numbering in the database, a day's deal chosen late.
PUBLICATION_MARGIN_S = 300
#: Candidates tried for one date before giving up. With about nine deals in ten proven
#: winnable within the budget, needing more than 64 does not happen in practice.
MAX_CANDIDATES = 64


class NoWinnableDealError(RuntimeError):
    """No candidate of a date was proven winnable within the budget."""


@dataclass(frozen=True, slots=True)
class DailyChoice:
    """A date's daily deal, with how it was chosen."""

    date: dt.date
    code: GameCode
    #: Which candidate of the date it is (0 for the first).
    candidate: int
    #: The length of the winning line below.
    par: int
    #: The solver's winning line without its wasted moves, in move notation.
    line: tuple[str, ...]
    #: Positions searched over every candidate tried.
    nodes: int
    #: The salt of the day's commitment, drawn when the choice is stored; None for a day
    #: chosen before commitments existed.
    salt: str | None = None

    @property
    def commitment(self) -> str | None:
        """SHA-256 of "<code>:<salt>": public from the day's start, so that anyone can
        check, once the code and salt are revealed, that the deal was never switched."""
        return commitment(self.code, self.salt) if self.salt is not None else None


def candidate_code(secret: bytes, date: dt.date, rules: Rules, n: int = 0) -> GameCode:
    """The game code of ``date``'s candidate ``n`` under ``rules``."""
    label = f"yukon-daily:{date.isoformat()}" + (f":{n}" if n else "")
    digest = hmac.new(secret, label.encode(), hashlib.sha256).digest()
    return GameCode(rules, digest[:SEED_BYTES])


def choose_daily(
    secret: bytes,
    date: dt.date,
    rules: Rules,
    budget_nodes: int = DAILY_BUDGET_NODES,
    max_candidates: int = MAX_CANDIDATES,
) -> DailyChoice:
    """The first candidate of ``date`` the solver proves winnable (CPU-bound: seconds).

    Deterministic: the same secret, date, rules, budget and solver give the same choice.
    """
    nodes = 0
    for n in range(max_candidates):
        code = candidate_code(secret, date, rules, n)
        game = Game.from_code(code)
        solution = solve(game, budget_nodes=budget_nodes)
        nodes += solution.nodes
        if solution.verdict == "won":
            line = tuple(par(solution.moves, solution.position))
            return DailyChoice(date, code, n, len(line), line, nodes)
    raise NoWinnableDealError(
        f"none of the {max_candidates} candidates for {date} was proven winnable"
        f" within {budget_nodes} positions each"
    )


def utc_date(timestamp: float) -> dt.date:
    """The UTC calendar date of a wall-clock timestamp: days change at 00:00 UTC."""
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).date()


#: A UTC day in seconds (UTC has no leap seconds in Python's timestamps).
_DAY_S = 86_400


def _midnight(date: dt.date) -> float:
    return dt.datetime.combine(date, dt.time(), dt.UTC).timestamp()


def day_begun(date: dt.date, wall: float) -> bool:
    """Has ``date`` begun (UTC) at wall time ``wall``? Nothing about a day (its board, its
    par) shows before it begins."""
    return wall >= _midnight(date)


def code_public_at(date: dt.date) -> float:
    """When ``date``'s daily code becomes public (wall time, seconds since the epoch).

    Not at midnight: an attempt begun at 23:59 runs up to ``DAILY_TIME_LIMIT_S`` into the
    next day, and a code published meanwhile would let it be solved elsewhere and won in
    seconds. So the code stays secret until every attempt of the day has had its whole time
    limit, plus ``PUBLICATION_MARGIN_S`` for a deal that reached its player late. (A race
    the server resumes after a restart does not charge the time it was down, so the hub
    also ends any attempt of the day still running at this moment.)
    """
    # The next midnight as seconds, not as ``date + 1 day``: that date does not exist after
    # 9999-12-31, and a leaderboard may be asked for any date (issue 28, item 19).
    return _midnight(date) + _DAY_S + DAILY_TIME_LIMIT_S + PUBLICATION_MARGIN_S


def code_public(date: dt.date, wall: float) -> bool:
    """May ``date``'s daily code be shown at wall time ``wall``? The one rule every place
    that shows a daily code follows: rooms and results, boards, history, the web page."""
    return wall >= code_public_at(date)


def next_daily_ms(wall: float) -> int:
    """Milliseconds from wall time ``wall`` (the server's clock) to the next 00:00 UTC, when
    the next daily deal begins: what the countdown of both clients and ``/leaderboard``
    counts down from (docs/protocol.md 4.28). Never 0: at midnight exactly it is a day."""
    return max(1, round((_midnight(utc_date(wall)) + _DAY_S - wall) * 1000))


def parse_archive_date(text: str | None, wall: float) -> dt.date | str:
    """The past day a ``daily`` with ``date`` asks to play from the archive, or why not
    (an error text): the day must be a date (``YYYY-MM-DD``) whose code is public at
    ``wall``, so that nobody gets a deal whose code is still secret (today's, yesterday's
    before 00:35 UTC, a future day's). Whether the server has a stored deal for it is
    storage's to say."""
    try:
        date = dt.date.fromisoformat(text or "")
    except ValueError:
        return "the archive's date is YYYY-MM-DD"
    if not code_public(date, wall):
        return (
            f"{date} is not in the archive yet: a day's deal is there once its code is"
            " public, from 00:35 UTC the next day"
        )
    return date


def counts_on_board(registered: float, started: float, min_age_s: float) -> bool:
    """May an attempt begun at ``started`` by a player registered at ``registered`` (wall
    times) count on the daily board, under ``--daily-min-age`` (``min_age_s``, 0: off)?

    A fresh name is a fresh first attempt: with a minimum age, a name registered to see
    the deal first and play it again under another name plays practice instead
    (docs/limits.md has the trade-off)."""
    return min_age_s <= 0 or started - registered >= min_age_s


class DailyStore(Protocol):
    """What ``DailyDeals`` needs of storage (``SqlStore`` has it)."""

    async def daily_deal(self, *, date: dt.date, rules: str) -> DailyChoice | None: ...

    async def save_daily_deal(self, choice: DailyChoice, *, now: float) -> DailyChoice: ...


class DailyDeals:
    """Each date's daily deal, chosen once and kept: memory, then the database, then the
    solver in ``executor``. Concurrent askers for the same date share one computation."""

    def __init__(
        self,
        store: DailyStore,
        secret: bytes,
        rules: Rules,
        executor: Executor | None,
        *,
        budget_nodes: int = DAILY_BUDGET_NODES,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.secret = secret
        self.rules = rules
        self.executor = executor
        self.budget_nodes = budget_nodes
        self.wall = wall
        self._known: dict[dt.date, DailyChoice] = {}
        self._pending: dict[dt.date, asyncio.Task[DailyChoice]] = {}
        #: In a cluster, a lock per date taken before choosing (``Relay.lock``): one node
        #: chooses while the others wait for its row. True: this process may choose.
        self.lock: Callable[[str], Awaitable[bool]] | None = None

    def known(self, date: dt.date) -> DailyChoice | None:
        """The choice for ``date`` if this process already has it (no waiting)."""
        return self._known.get(date)

    async def stored(self, date: dt.date) -> DailyChoice | None:
        """The choice for ``date`` if one was ever made (never starts the solver)."""
        choice = self._known.get(date)
        if choice is None:
            choice = await self.store.daily_deal(date=date, rules=str(self.rules))
            if choice is not None:
                self._known[date] = choice
        return choice

    async def get(self, date: dt.date) -> DailyChoice:
        """The choice for ``date``, choosing it now if nobody has."""
        choice = self._known.get(date)
        if choice is not None:
            return choice
        # One task per date, shared by every asker; an asker who gives up (a closed
        # connection) does not cancel it for the others.
        task = self._pending.get(date)
        if task is None:
            task = asyncio.create_task(self._choose(date), name=f"daily deal {date}")
            self._pending[date] = task
            task.add_done_callback(self._done)
        return await asyncio.shield(task)

    def _done(self, task: asyncio.Task[DailyChoice]) -> None:
        for date, pending in list(self._pending.items()):
            if pending is task:
                del self._pending[date]
        if not task.cancelled():
            task.exception()  # every asker has had it; a failure is retried on the next ask

    async def close(self) -> None:
        """Stop choosing, and wait until it has stopped: the server is shutting down, and
        its database must not close under a choice still being stored."""
        tasks = list(self._pending.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _turn(self, date: dt.date) -> DailyChoice | None:
        """Wait until this process may choose ``date``'s deal (None), or another process of
        the cluster has chosen it (its choice). Without a lock, or with the lock's store
        away, choose: the database's unique row keeps the first choice anyway."""
        rules = str(self.rules)
        while True:
            choice = await self.store.daily_deal(date=date, rules=rules)
            if choice is not None or self.lock is None:
                return choice
            try:
                if await self.lock(f"daily:{date}:{rules}"):
                    return await self.store.daily_deal(date=date, rules=rules)
            except Exception as exc:
                log.warning("daily deal for %s: no lock (%s); choosing here", date, exc)
                return None
            await asyncio.sleep(0.2)  # another node is choosing

    async def _choose(self, date: dt.date) -> DailyChoice:
        choice = await self._turn(date)
        if choice is None:
            started = time.perf_counter()
            loop = asyncio.get_running_loop()
            with real_stderr():  # a worker process may start here (yukon play --local)
                work = loop.run_in_executor(
                    self.executor, choose_daily, self.secret, date, self.rules, self.budget_nodes
                )
            # The salt is drawn here, not in the worker: the choice stays a pure function
            # of the secret and the date, and the salt is random, never derived.
            fresh = dataclasses.replace(await work, salt=secrets.token_hex(16))
            # Another server process on the same database may have chosen first: the
            # stored choice wins, so every process deals the same.
            choice = await self.store.save_daily_deal(fresh, now=self.wall())
            log.info(
                "daily deal for %s chosen: candidate %d, par %d, %d positions in %.2f s",
                date,
                fresh.candidate,
                fresh.par,
                fresh.nodes,
                time.perf_counter() - started,
            )
        self._known[date] = choice
        return choice

    async def prepare(self) -> None:
        """Choose today's and tomorrow's deals ahead of the first player who asks."""
        today = utc_date(self.wall())
        for date in (today, today + dt.timedelta(days=1)):
            try:
                await self.get(date)
            except Exception:
                log.exception("daily deal for %s: could not choose it yet", date)

    async def keep_ready(self) -> None:
        """Run for the server's life: prepare, then again after each midnight (UTC)."""
        while True:
            await self.prepare()
            now = self.wall()
            midnight = dt.datetime.combine(
                utc_date(now) + dt.timedelta(days=1), dt.time(), dt.UTC
            ).timestamp()
            await asyncio.sleep(min(max(midnight - now + 1.0, 1.0), 3600.0))
