"""The daily deal: candidates from the secret, the first proven winnable, chosen once."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import datetime as dt
import hashlib
import hmac
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import pytest

from protocol import Game, GameCode, Rules
from protocol.commitment import commitment
from server.domain.daily import (
    DailyChoice,
    DailyDeals,
    NoWinnableDealError,
    candidate_code,
    choose_daily,
    utc_date,
)
from server.storage.sql import SqlStore
from solver import solve

CLASSIC = Rules.parse("C")
DATE = dt.date(2026, 11, 30)
NOON = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC).timestamp()


def test_candidate_zero_is_seeded_by_the_hmac_of_the_date() -> None:
    """128 bits of the HMAC seed the deal, not a 7-letter number anyone could search."""
    digest = hmac.new(b"k", b"yukon-daily:2026-11-30", hashlib.sha256).digest()
    code = candidate_code(b"k", DATE, CLASSIC)
    assert code == GameCode(CLASSIC, digest[:16])
    assert code.seeded and len(code.deal_text) == 26
    assert str(code) == "YU1-C-" + base64.b32encode(digest[:16]).decode().rstrip("=")
    codes = {candidate_code(b"k", DATE, CLASSIC, n) for n in range(20)}
    assert len(codes) == 20
    assert candidate_code(b"other", DATE, CLASSIC) != candidate_code(b"k", DATE, CLASSIC)
    assert candidate_code(b"k", DATE, Rules.parse("A")).rules == Rules.parse("A")


def find_secret_whose_first_candidate_is_not_won(budget: int) -> bytes:
    for i in range(200):
        secret = f"s{i}".encode()
        first = Game.from_code(candidate_code(secret, DATE, CLASSIC))
        if solve(first, budget_nodes=budget).verdict != "won":
            return secret
    raise AssertionError("every first candidate was won")


def test_the_choice_is_the_first_candidate_proven_winnable() -> None:
    budget = 3000
    secret = find_secret_whose_first_candidate_is_not_won(budget)
    choice = choose_daily(secret, DATE, CLASSIC, budget_nodes=budget)
    assert choice.candidate >= 1
    assert choice.code == candidate_code(secret, DATE, CLASSIC, choice.candidate)
    for n in range(choice.candidate):
        earlier = Game.from_code(candidate_code(secret, DATE, CLASSIC, n))
        assert solve(earlier, budget_nodes=budget).verdict != "won"
    # The line is the par line: it wins from the deal, and par is its length.
    game = Game.from_code(choice.code)
    for move in choice.line:
        game.play(move)
    assert game.is_won()
    assert choice.par == len(choice.line) > 0
    full = solve(Game.from_code(choice.code), budget_nodes=budget)
    assert choice.par <= len(full.moves)
    # Deterministic: the same inputs, the same choice.
    assert choose_daily(secret, DATE, CLASSIC, budget_nodes=budget) == choice


def test_no_candidate_proven_winnable_is_an_error_not_a_guess() -> None:
    with pytest.raises(NoWinnableDealError, match="none of the 2 candidates"):
        choose_daily(b"k", DATE, CLASSIC, budget_nodes=1, max_candidates=2)


class CountingExecutor(Executor):
    """A thread pool that counts the solver runs it is given."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(1)
        self.calls = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.calls += 1
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait, cancel_futures=cancel_futures)


async def test_a_date_is_chosen_once_and_kept(store: SqlStore) -> None:
    executor = CountingExecutor()
    try:
        dailies = DailyDeals(store, b"k", CLASSIC, executor, wall=lambda: NOON)
        assert await dailies.stored(DATE) is None
        # Many players asking at once share one computation.
        choices = await asyncio.gather(*(dailies.get(DATE) for _ in range(5)))
        assert executor.calls == 1 and len(set(choices)) == 1
        choice = choices[0]
        # The same deal as the pure choice, with a salt of its own drawn for it.
        assert choice.salt is not None and len(choice.salt) == 32
        assert dataclasses.replace(choice, salt=None) == choose_daily(b"k", DATE, CLASSIC)
        assert choice.commitment == commitment(choice.code, choice.salt)
        assert dailies.known(DATE) == choice
        # Kept in the database: another process (or a restart) finds it, even under a
        # new secret or a solver that would choose otherwise.
        other = DailyDeals(store, b"another secret", CLASSIC, executor, wall=lambda: NOON)
        assert await other.stored(DATE) == choice
        assert await other.get(DATE) == choice
        assert executor.calls == 1
        # Two processes that both chose: the first kept wins, for both.
        rival = DailyChoice(DATE, GameCode(CLASSIC, 7), 3, 1, ("AS>F",), 10)
        assert await store.save_daily_deal(rival, now=NOON) == choice
        # Rules are part of the key.
        assert await store.daily_deal(date=DATE, rules="A") is None
    finally:
        executor.shutdown()


async def test_prepare_chooses_today_and_tomorrow(store: SqlStore) -> None:
    executor = CountingExecutor()
    try:
        dailies = DailyDeals(store, b"k", CLASSIC, executor, wall=lambda: NOON)
        await dailies.prepare()
        today = utc_date(NOON)
        assert dailies.known(today) is not None
        assert dailies.known(today + dt.timedelta(days=1)) is not None
        assert executor.calls == 2
    finally:
        executor.shutdown()


async def test_a_failed_choice_is_raised_to_every_asker_and_retried(store: SqlStore) -> None:
    executor = CountingExecutor()
    try:
        dailies = DailyDeals(store, b"k", CLASSIC, executor, budget_nodes=1, wall=lambda: NOON)
        results = await asyncio.gather(dailies.get(DATE), dailies.get(DATE), return_exceptions=True)
        assert all(isinstance(r, NoWinnableDealError) for r in results)
        assert executor.calls == 1
        dailies.budget_nodes = 100_000
        assert (await dailies.get(DATE)).code == choose_daily(b"k", DATE, CLASSIC).code
    finally:
        executor.shutdown()
