"""Counters and histograms for ``/metrics`` (Prometheus text format), kept by the I/O layer.

Plain numbers updated in place: the hot path pays a dict lookup and an add, nothing more.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

__all__ = ["Metrics", "Histogram", "LATENCY_BUCKETS", "HINT_BUCKETS"]

#: Upper bounds, in seconds, of the move-acknowledgement latency buckets.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
#: Upper bounds, in seconds, of the time a hint takes to work out (docs/solver.md, "Hints":
#: milliseconds with the C search, up to about a second with the Python one).
HINT_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass
class Histogram:
    bounds: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

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
    #: Hints the solver worked out, by verdict, counted when the answer goes to its asker
    #: (not for an asker who left first: /metrics is public, and their run is not marked
    #: hinted; answers from a player's cache of the line are not solves), and those it
    #: could not work out (its process died, or the server closed).
    hint_solves: dict[str, int] = field(default_factory=lambda: {"won": 0, "lost": 0, "unknown": 0})
    hint_failures: int = 0
    #: Seconds from the hub asking for a solve to the verdict coming back, for the same
    #: hints as ``hint_solves`` (the time hints at the verdict).
    hint_seconds: Histogram = field(default_factory=lambda: Histogram(HINT_BUCKETS))
