"""Every node reads the operator's marks and account states from the database every
``every_s`` seconds and hands them to its hub when they changed (``rooms.events.Enforce``;
docs/fairplay.md, "On a running server").

Why a read and not a message: ``yukon mod`` writes only the database (it may run on a box
with no Redis at all, and no node needs to be up), and a node that was down, or one that
missed a message, catches up on its next read. The sets are small (accounts acted on by
hand), so a read costs one round trip of two small tables; a failed read is logged once and
tried again at the next beat, never stopping the server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from ..rooms.effects import Effect
from ..rooms.events import Enforce
from ..rooms.hub import Hub
from ..storage.moderation import ModerationStore
from ..storage.sql import describe_error

__all__ = ["ENFORCE_EVERY_S", "Enforcer"]

log = logging.getLogger("yukon.server")

#: How often a node reads the marks: a mark takes effect within this, plus a read.
ENFORCE_EVERY_S = 2.0


class EnforcerHost(Protocol):
    """What the enforcer needs of its server."""

    hub: Hub

    def apply(self, effects: Iterable[Effect]) -> None: ...


class Enforcer:
    """The read loop (see the module docstring); ``start`` and ``stop`` it with the server."""

    def __init__(
        self,
        host: EnforcerHost,
        moderation: ModerationStore,
        now: Callable[[], float],
        *,
        every_s: float = ENFORCE_EVERY_S,
    ) -> None:
        self.host = host
        self.moderation = moderation
        self.now = now
        self.every_s = every_s
        self._last: Enforce | None = None
        self._failing = False
        self._task: asyncio.Task[None] | None = None

    async def once(self) -> None:
        """One read; the hub hears it only if something changed."""
        try:
            marks, closed, muted = await self.moderation.enforcement()
        except Exception as exc:
            if not self._failing:
                log.warning("marks: cannot read them (%s); trying again", describe_error(exc))
            self._failing = True
            return
        self._failing = False
        event = Enforce(marks, closed, muted)
        last = self._last
        if last is not None and (last.marks, last.closed, last.muted) == (marks, closed, muted):
            return
        self._last = event
        self.host.apply(self.host.hub.handle(event, self.now()))

    async def _run(self) -> None:
        while True:
            await self.once()
            await asyncio.sleep(self.every_s)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="marks")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
