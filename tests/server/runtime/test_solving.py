"""The solver's worker processes as one object (``server.runtime.solving.SolverPool``): real
worker processes, killed for real."""

from __future__ import annotations

import pytest

from server.runtime.solving import Lane, SolverClosedError, SolverPool
from solver import solve

from ..wire import kill_workers

#: Real worker processes: the slow tier (tests/tiers.py does not see a pool start them).
pytestmark = pytest.mark.slow

#: The start of YU1-C-AAAAAAB (server.runtime.executor's warm-up position).
POSITION = (
    "C ---- 7H/9s6HQSAD9H8S/4h9c2H4CKC3HTS/8djsjd2S6S6D3C3D/8h5h5dahKD7SQCAS2C"
    "/5ckh7d6ctdJCACQD4S9D/jh3s4dkstcth8C5SQH2D7C"
)


def fails(text: str) -> None:
    raise ValueError(text)


async def test_a_job_runs_in_its_lane_and_a_dead_worker_is_replaced() -> None:
    pool = SolverPool(daily_processes=0)
    try:
        solution = await pool.run(Lane.HINT, solve, POSITION, budget_nodes=1)
        assert solution.verdict in ("win", "loss", "unknown")
        first = pool.current(Lane.HINT)
        assert first is not None and pool.current(Lane.POSTMORTEM) is None  # lanes apart
        assert pool.in_flight(Lane.HINT) == 0
        await kill_workers(first)
        with pytest.raises(Exception):  # noqa: B017 (BrokenProcessPool, as the pool says)
            await pool.run(Lane.HINT, solve, POSITION, budget_nodes=1)
        assert pool.current(Lane.HINT) is None  # the next job starts a fresh worker
        again = await pool.run(Lane.HINT, solve, POSITION, budget_nodes=1)
        assert again.verdict == solution.verdict
        assert pool.current(Lane.HINT) not in (None, first)
    finally:
        pool.close()


async def test_a_jobs_own_error_keeps_the_worker_and_a_closed_pool_refuses() -> None:
    pool = SolverPool(daily_processes=0)  # the daily lane on a thread of this process
    try:
        with pytest.raises(ValueError, match="bad run"):
            await pool.run(Lane.DAILY, fails, "bad run")
        kept = pool.current(Lane.DAILY)
        assert kept is not None
        await pool.run(Lane.DAILY, solve, POSITION, budget_nodes=1)
        assert pool.current(Lane.DAILY) is kept
    finally:
        pool.close()
    with pytest.raises(SolverClosedError):
        await pool.run(Lane.DAILY, solve, POSITION, budget_nodes=1)
