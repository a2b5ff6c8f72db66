"""The journal of running races, written in groups so that no answer waits for a disk.

Every accepted action is queued here as the hub answers it; a background task writes the
queue in one transaction once it holds ``group`` actions or its oldest has waited
``max_delay`` seconds (looking every ``interval``), and every ``checkpoint_every`` seconds
notes each race's clock. A crash loses at most the last group: the players' clients hold
those moves (they were told they were accepted) and resend them when they resume,
because the server tells them the last ``seq`` it has (docs/protocol.md, "Restarts").

Why groups of a size and not a fixed beat: a transaction costs the node's loop a fixed
amount of CPU (its round trips) besides its rows. Written every 50 ms whatever it held,
a node of a cluster, holding a third of the moves, paid that fixed cost as often as a
server alone: three nodes spent about 40 more transactions a second than one on the
same moves (docs/performance.md, "What a node does that does not scale down").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable

from ..domain.records import LiveAction, LiveRace
from .sql import SqlStore, describe_error

__all__ = ["JournalWriter"]

log = logging.getLogger("yukon.storage")


class JournalWriter:
    def __init__(
        self,
        store: SqlStore,
        alive: Callable[[], dict[str, int]],
        *,
        interval: float = 0.05,
        group: int = 64,
        max_delay: float = 0.25,
        checkpoint_every: float = 1.0,
        on_fenced: Callable[[set[str]], None] | None = None,
    ) -> None:
        self.store = store
        self.alive = alive
        self.interval = interval
        self.group = group
        self.max_delay = max_delay
        #: When the oldest action queued was queued (monotonic; 0.0: none is).
        self._first_at = 0.0
        self.checkpoint_every = checkpoint_every
        self._races: list[LiveRace] = []
        self._actions: list[LiveAction] = []
        self._task: asyncio.Task[None] | None = None
        #: Something is to be written at once (a race's start) or the writer is to stop:
        #: its next look comes now, not after ``interval``.
        self._roused = False
        #: What the writer's task awaits between looks (``_nap``); None while it works.
        self._wake: asyncio.Future[None] | None = None
        #: The timer that ends the nap, and whether the nap runs to the next checkpoint
        #: (the queue was empty: ``add`` brings it back to the grid).
        self._timer: asyncio.TimerHandle | None = None
        self._idle = False
        self._clocks_stopped = False
        #: ``stop`` asked the loop to end after the write in hand.
        self._stopping = False
        self._lock = asyncio.Lock()
        self._failing = False
        #: Called with the uids of races another node took over (the database refused
        #: their entries: docs/cluster.md); the node then drops those rooms.
        self.on_fenced = on_fenced
        #: Figures for metrics: batches written and failed writes.
        self.batches = 0
        self.failures = 0

    def add(self, entry: LiveRace | LiveAction) -> None:
        if isinstance(entry, LiveRace):
            # A race that is not journaled cannot be rebuilt at all (its players could not
            # even resend): write its start at once instead of with the next group.
            self._races.append(entry)
            self._rouse()
        else:
            if not self._actions:
                self._first_at = time.monotonic()
                if self._idle:
                    self._to_grid()
            self._actions.append(entry)

    def due(self, now: float) -> bool:
        """Whether the queue is to be written now (``now``: monotonic): a race's start (at
        once), ``group`` actions, or an action that has waited ``max_delay``."""
        if self._races:
            return True
        n = len(self._actions)
        return n >= self.group or (n > 0 and now - self._first_at >= self.max_delay)

    @property
    def pending(self) -> int:
        return len(self._races) + len(self._actions)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Write what is queued (a clean shutdown loses nothing), then stop.

        The clocks are not checkpointed here: ``checkpoint`` is called when the shutdown
        begins, so the time spent closing connections is not charged to anyone either.
        """
        if self._task is not None:
            # Not cancelled: a cancel landing inside a write would lose the group in hand
            # (taken from the queue, its transaction rolled back). The loop ends after the
            # write in hand instead, and what is queued is written below.
            self._stopping = True
            self._rouse()
            with contextlib.suppress(Exception):
                await self._task
            self._task = None
        await self.flush()

    async def checkpoint(self) -> None:
        """Note every running race's clock now, for the last time: a shutdown begins, and
        the time it takes (closing connections) must not be charged after a restart."""
        self._clocks_stopped = True
        await self._checkpoint(final=True)

    async def flush(self) -> None:
        async with self._lock:
            races, actions = self._races, self._actions
            if not races and not actions:
                return
            self._races, self._actions = [], []
            try:
                fenced = await self.store.journal(races=races, actions=actions)
            except Exception as exc:
                # Keep them, in order, ahead of anything queued meanwhile; try again later.
                self._races = races + self._races
                self._actions = actions + self._actions
                self._first_at = 0.0  # due again at the next look: retried every interval
                self.failures += 1
                if not self._failing:
                    log.warning("journal: write failed (%s); will retry", describe_error(exc))
                self._failing = True
                return
            self.batches += 1
            if fenced and self.on_fenced is not None:
                self.on_fenced(fenced)
            if self._failing:
                log.info("journal: writing again")
            self._failing = False

    async def _checkpoint(self, *, final: bool = False) -> None:
        if self._clocks_stopped and not final:
            return
        # On failure the next checkpoint will do: a stale one only costs a little race time.
        with contextlib.suppress(Exception):
            await self.store.checkpoint(alive=self.alive())

    def _rouse(self) -> None:
        """The next look comes now (``_nap`` ends, or is not begun)."""
        self._roused = True
        if self._wake is not None:
            _wake_up(self._wake)

    def _grid(self, now: float) -> float:
        """The next look's time after ``now``: the next multiple of ``interval`` on the
        loop's clock. The rooms' held progress is released on a grid of the same clock
        (``rooms.room.progress_due``), so at a move a second per player a look shares the
        loop's wake-up with a release instead of waking it on its own."""
        return (math.floor(now / self.interval) + 1) * self.interval

    async def _nap(self, until: float | None = None) -> None:
        """Wait until the next look on the grid (``_grid``), or, with nothing queued, until
        the grid point at or after ``until`` (the next checkpoint), or until ``_rouse``: a
        future and a timer (``asyncio.wait_for`` on an event made a task and a timeout
        every look). An idle node looked 20 times a second for nothing: most of its
        wake-ups when no race ran (docs/performance.md, issue 26)."""
        loop = asyncio.get_running_loop()
        wake = self._wake = loop.create_future()
        at = self._grid(loop.time())
        if until is not None and not self._actions:
            self._idle = True
            at = max(at, math.ceil(until / self.interval) * self.interval)
        self._timer = loop.call_at(at, _wake_up, wake)
        try:
            await wake
        finally:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None
            self._wake = None
            self._idle = False

    def _to_grid(self) -> None:
        """An action came into the empty queue while the writer slept to its checkpoint:
        its next look is the grid's again (so the action waits at most ``max_delay``)."""
        wake, timer = self._wake, self._timer
        self._idle = False
        if wake is None or timer is None or wake.done():
            return
        timer.cancel()
        loop = wake.get_loop()
        self._timer = loop.call_at(self._grid(loop.time()), _wake_up, wake)

    async def _run(self) -> None:
        """Look every ``interval`` and write the queue when it is ``due``; checkpoint
        beside it, so a slow checkpoint never holds a journal group back (and never runs
        twice at once)."""
        loop = asyncio.get_running_loop()
        next_checkpoint = loop.time() + self.checkpoint_every
        checkpointing: asyncio.Task[None] | None = None
        try:
            while not self._stopping:
                if not self._roused:
                    await self._nap(None if self._actions else next_checkpoint)
                self._roused = False
                if self.due(time.monotonic()):
                    await self.flush()
                if loop.time() >= next_checkpoint and (
                    checkpointing is None or checkpointing.done()
                ):
                    checkpointing = asyncio.create_task(self._checkpoint())
                    next_checkpoint = loop.time() + self.checkpoint_every
        finally:
            if checkpointing is not None and not checkpointing.done():
                await asyncio.gather(checkpointing, return_exceptions=True)


def _wake_up(wake: asyncio.Future[None]) -> None:
    """End a ``_nap`` (its timer, or ``_rouse``), once: whichever comes second finds it done."""
    if not wake.done():
        wake.set_result(None)
