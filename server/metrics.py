"""Counters and histograms for ``/metrics`` (Prometheus text format), kept by the I/O layer.

Plain numbers updated in place: the hot path pays a dict lookup and an add, nothing more.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

__all__ = ["Metrics", "Histogram", "LATENCY_BUCKETS"]

#: Upper bounds, in seconds, of the move-acknowledgement latency buckets.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


@dataclass
class Histogram:
    bounds: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    total: float = 0.0
    n: int = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.n += 1


@dataclass
class Metrics:
    """What the server counts. Gauges (connections, rooms, races) are read from the hub."""

    moves_accepted: int = 0
    moves_refused: int = 0
    connections_opened: int = 0
    #: Seconds from a move's frame arriving to its answer being queued for the client.
    move_ack: Histogram = field(default_factory=Histogram)
