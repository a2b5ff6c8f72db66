"""The solver's worker processes, as one object: hints, post-mortems, the daily deal and
the stock of winnable deals.

The solver holds the GIL while it runs (its C search too), so it never runs on the event
loop: each job goes to a worker process (``server.runtime.workers``). What every user of it needs
was written three times before (hints, post-mortems, the daily deal): start the process on
first use with the real stderr, start anew after a worker died (a broken pool stays
broken), cancel what is awaited when the server closes, and count the jobs in flight.
``SolverPool`` does it once.

Each kind of job has a lane (its own worker process): a post-mortem of a long run, the
day's deal being chosen, or the stock being filled, never delays a hint.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, TypeVar

from .workers import real_stderr, solver_pool

__all__ = ["Lane", "SolverPool", "SolverClosedError"]

log = logging.getLogger("yukon.server")

T = TypeVar("T")


class Lane(enum.Enum):
    """Who the job is for; each lane has its worker(s) of its own."""

    HINT = "hint"
    POSTMORTEM = "postmortem"
    DAILY = "daily"
    #: The stock of winnable deals (``domain.stock``): filled in the background, and a
    #: room's deal proven on the spot when the stock was empty.
    STOCK = "stock"


class SolverClosedError(RuntimeError):
    """The server is closing: no more jobs."""


class SolverPool:
    """Worker processes for the solver, one lane per kind of job, started on first use.

    Hints and post-mortems have one worker process each. The daily deal has
    ``daily_processes`` (``yukon serve --solver-processes``); 0 chooses it on a thread of
    this process instead (tests: a process per test server would cost more than the deal).
    The stock of winnable deals has ``stock_processes`` (one; 0: a thread, likewise).
    """

    def __init__(self, *, daily_processes: int = 1, stock_processes: int = 1) -> None:
        self.workers = {
            Lane.HINT: 1,
            Lane.POSTMORTEM: 1,
            Lane.DAILY: daily_processes,
            Lane.STOCK: stock_processes,
        }
        self._pools: dict[Lane, Executor] = {}
        self._jobs: dict[Lane, set[asyncio.Future[Any]]] = {lane: set() for lane in Lane}
        self._closed = False

    def in_flight(self, lane: Lane) -> int:
        """Jobs of ``lane`` being worked out or waiting for a worker now."""
        return len(self._jobs[lane])

    def current(self, lane: Lane) -> Executor | None:
        """The lane's executor if it is started (tests look at its processes)."""
        return self._pools.get(lane)

    def executor(self, lane: Lane) -> Executor:
        """The lane's executor, started if it is not (``SolverClosedError`` once closed)."""
        if self._closed:
            raise SolverClosedError("the server is closing")
        pool = self._pools.get(lane)
        if pool is None:
            workers = self.workers[lane]
            if workers > 0:
                with real_stderr():
                    pool = solver_pool(workers)
            else:
                pool = ThreadPoolExecutor(1, thread_name_prefix=f"solver-{lane.value}")
            self._pools[lane] = pool
        return pool

    async def run(self, lane: Lane, job: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``job(*args, **kwargs)`` in ``lane``'s worker. Any failure is raised as it is;
        a worker that died (``BrokenProcessPool``) leaves its lane to start anew next
        time. ``ValueError`` is the job's own answer (bad input), not a broken worker."""
        pool = self.executor(lane)
        call = functools.partial(job, *args, **kwargs)
        jobs = self._jobs[lane]
        waiting: asyncio.Future[T] | None = None
        try:
            with real_stderr():  # the worker process starts here, on first use
                waiting = asyncio.get_running_loop().run_in_executor(pool, call)
            jobs.add(waiting)
            return await waiting
        except (ValueError, asyncio.CancelledError):
            raise
        except Exception:  # a broken pool stays broken (even submit fails): start anew
            if self._pools.get(lane) is pool:
                del self._pools[lane]
                pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            if waiting is not None:
                jobs.discard(waiting)

    def warm(self, lane: Lane, job: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """Start ``lane``'s worker now with a small ``job`` (loading the solver), so the
        first real job is not slow; a failure is left for that job to report."""
        try:
            pool = self.executor(lane)
            with real_stderr():
                started = pool.submit(job, *args, **kwargs)
            started.add_done_callback(lambda f: f.cancelled() or f.exception())
        except Exception as exc:
            log.warning("solver: cannot start the %s worker (%s)", lane.value, exc)

    def cancel(self, lane: Lane) -> None:
        """Stop awaiting ``lane``'s jobs (their awaiters see ``CancelledError``)."""
        for job in list(self._jobs[lane]):
            job.cancel()

    def close(self) -> None:
        """No more jobs: cancel those awaited and stop the workers (a solve already running
        ends within its node budget)."""
        self._closed = True
        for lane in Lane:
            self.cancel(lane)
        pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
