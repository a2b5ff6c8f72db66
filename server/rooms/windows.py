"""Counts over a sliding window, per key (an address, a player): the per-address budgets
of docs/protocol.md 5.5 that count events in time rather than things held.

Sans-I/O: the caller gives the time. Memory is bounded twice: each key keeps at most
``limit`` times (older ones are useless once the limit is reached), and at most
``max_keys`` keys are remembered, the least recently used forgotten first, so that an
attacker rotating addresses cannot grow it without bound (forgetting a key only ever
gives that key a fresh budget).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

__all__ = ["SlidingCounts"]


@dataclass
class SlidingCounts:
    """At most ``limit`` events per key in any ``window_s`` seconds (``limit`` 0: none)."""

    limit: int
    window_s: float
    max_keys: int = 10_000
    _times: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict, repr=False)

    def count(self, key: str, now: float) -> int:
        """Events of ``key`` in the window ending at ``now``."""
        times = self._times.get(key)
        if times is None:
            return 0
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._times[key]
            return 0
        return len(times)

    def full(self, key: str, now: float) -> bool:
        """Is ``key``'s budget spent (so the next event is to be refused)?"""
        return self.limit > 0 and self.count(key, now) >= self.limit

    def add(self, key: str, now: float) -> None:
        """Count one event of ``key`` at ``now``."""
        if self.limit <= 0:
            return
        times = self._times.get(key)
        if times is None:
            times = self._times[key] = deque(maxlen=self.limit)
            while len(self._times) > self.max_keys:
                self._times.popitem(last=False)
        else:
            self._times.move_to_end(key)
        times.append(now)

    def spend(self, key: str, now: float) -> bool:
        """Count one event unless the budget is spent: whether it was counted."""
        if self.full(key, now):
            return False
        self.add(key, now)
        return True

    def retry_after(self, key: str, now: float) -> float:
        """Seconds until ``key`` may have one more event (0 if it may now)."""
        if not self.full(key, now):
            return 0.0
        return max(0.0, self._times[key][0] + self.window_s - now)

    def __len__(self) -> int:
        return len(self._times)
