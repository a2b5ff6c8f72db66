"""``RoomProgress``: the room's ``progress``, held for newer moves, and the one way a
frame reaches a member (``send``), which releases a held one first.
"""

from __future__ import annotations

import math

from protocol.messages import Message, Progress

from ..timers import TimerKind
from .base import RoomBase
from .kinds import OVERTAKE, M, RoomState

__all__ = ["PROGRESS_GRID_S", "RoomProgress", "progress_due"]


#: Held progress is due on this grid of the server's clock (``progress_due``).
PROGRESS_GRID_S = 0.025


def progress_due(now: float, hold: float) -> float:
    """When a progress held at ``now`` goes out: ``hold`` later, rounded down to the grid
    (so between ``hold - PROGRESS_GRID_S`` and ``hold``: the protocol's "up to" holds).

    Why: every room whose hold ends in the same slot of the grid is then released by one
    timer, in one turn of the event loop, instead of each room waking the server on its
    own; at a move a second per player, those wake-ups cost the server more CPU than
    the frames themselves (docs/performance.md, issue 27).
    """
    target = now + hold
    if hold <= PROGRESS_GRID_S:
        return target
    due = math.floor(target / PROGRESS_GRID_S + 1e-9) * PROGRESS_GRID_S
    if target - due < 1e-9:  # on the grid already (within rounding)
        return target
    return due


class RoomProgress(RoomBase[M]):
    """A room with its progress: held, released, sent; and ``send``."""

    def _hold_progress(self, mover: M | None, now: float) -> None:
        """A move's ``progress`` waits ``progress_hold_s`` for newer moves in the room.

        Why: four fast players make a progress per move for each of them; held, one
        snapshot goes out per room per hold, built and encoded once, whatever the rate,
        and not to a runner whose own moves are all it shows. Any other frame to a member
        releases it first (``send``), so it never arrives after something that happened
        later.
        """
        hold = self._config.progress_hold_s
        if hold <= 0:  # no hold: at once, to everyone (the worked examples of the docs)
            self.progress(now)
        elif self.progress_due is None:
            self.progress_due = progress_due(now, hold)
            self.progress_mover = mover
            self._timer(self.progress_due, TimerKind.PROGRESS, self)
        elif self.progress_mover is not mover:
            self.progress_mover = None

    def progress_timer(self, now: float) -> None:
        """The held ``progress``'s timer: out it goes, if it is still held and due."""
        due = self.progress_due
        if due is not None and due <= now:
            self.release_progress()

    def release_progress(self) -> None:
        """A held ``progress`` goes out now (before a frame that must not overtake it)."""
        due, mover = self.progress_due, self.progress_mover
        self.progress_due = self.progress_mover = None
        if due is not None and self.race is not None and self.state == RoomState.RACING:
            self.progress(self._outside.now, skip=mover)

    def progress(self, now: float, *, skip: M | None = None) -> None:
        assert self.race is not None
        if self.progress_due is not None:  # a held one goes out now, to everyone
            self.progress_due = self.progress_mover = None
            skip = None
        race = self.race
        msg = Progress(
            race.elapsed_ms(now), race.progress(self.connected()), race.ghost_progress(now)
        )
        for m in self.members():
            if m is not skip:
                self.send(m, msg)

    def send(self, m: M, message: Message) -> None:
        """Send to a member. Any frame but the answers to their own moves first releases
        the held ``progress`` (``_hold_progress``), so that it never arrives after
        something that happened later."""
        if self.progress_due is not None and not isinstance(message, OVERTAKE):
            self.release_progress()
        self._deliver(m, message)
