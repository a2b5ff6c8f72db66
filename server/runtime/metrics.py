"""What ``/metrics`` shows (Prometheus text format), kept by the I/O layer with
``prometheus_client``: one registry per server, so two servers in one process (the tests
run several) never share or collide.

The hot path pays for a counter's ``inc`` and a histogram's ``observe`` per move (a lock
and a few adds each). Figures owned elsewhere (the hub's connections and rooms, the
spool's pending results, the hints in progress) are read from their owners at scrape
time (``Live``), so they can never drift from the truth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    Info,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = [
    "Metrics",
    "Live",
    "LATENCY_BUCKETS",
    "HINT_BUCKETS",
    "HINT_VERDICTS",
    "WINNABLE_VERDICTS",
]

# prometheus_client adds a ``<name>_created`` sample to each counter and histogram (the
# time it was made). In the text format it becomes a gauge family of its own per metric,
# seven more families that say only when the server started, which a scraper would store
# as series of their own. The switch is process-wide (``_created`` is read at scrape
# time); the server is the only user of prometheus_client in its process.
disable_created_metrics()  # type: ignore[no-untyped-call]

#: Upper bounds, in seconds, of the move-acknowledgement latency buckets.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
#: Upper bounds, in seconds, of the time a hint takes to work out (docs/solver.md, "Hints":
#: milliseconds with the C search, up to about a second with the Python one).
HINT_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
#: What a worked-out hint answered, each a series of ``yukon_hint_solves_total`` from the
#: start: the solver's verdict, except that an undecided one that offered the best move
#: found (the ``best`` answer, docs/solver.md "Hints") is ``best``, not ``unknown``.
HINT_VERDICTS = ("won", "lost", "unknown", "best")
#: What a proof for the stock of winnable deals came to (``yukon_winnable_proofs_total``):
#: the solver's verdict, or ``failed`` when it could not run.
WINNABLE_VERDICTS = ("won", "lost", "unknown", "failed")


@dataclass(frozen=True, slots=True)
class Live:
    """The figures /metrics reads from their owners when it is scraped."""

    connections: Callable[[], float]
    rooms: Callable[[], float]
    races_running: Callable[[], float]
    results_pending: Callable[[], float]
    db_write_failures: Callable[[], float]
    db_write_retries: Callable[[], float]
    hints_in_progress: Callable[[], float]
    #: The stock of proven-winnable deals (``domain.stock``): held now, and rooms dealt a
    #: deal while it had none for their rules (proven on the spot, or raced unproven).
    winnable_stock: Callable[[], float] = lambda: 0.0
    winnable_unproven: Callable[[], float] = lambda: 0.0


class _Read(Collector):
    """Families whose values are read at scrape time: ``(name, kind, help, read)`` each."""

    def __init__(self, *families: tuple[str, str, str, Callable[[], float]]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        for name, kind, help_text, read in self.families:
            family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            yield family(name, help_text, value=read())

    def describe(self) -> Iterator[Metric]:
        """The names, for the registry's check that no two collectors share one."""
        for name, kind, help_text, _ in self.families:
            family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            yield family(name, help_text, value=0)


class Metrics:
    """What the server counts, in its own registry; ``render`` is the /metrics body.

    Without ``live`` (a server's parts), only the counters and histograms are shown.
    """

    def __init__(self, live: Live | None = None, *, node: str = "") -> None:
        self.registry = registry = CollectorRegistry(auto_describe=False)
        if node:  # a node of a cluster (docs/cluster.md): which one this is
            Info("yukon_node", "This node's id in its cluster.", registry=registry).info(
                {"node": node}
            )
        if live is not None:
            registry.register(
                _Read(
                    ("yukon_connections", "gauge", "Open websocket connections.", live.connections),
                    ("yukon_rooms", "gauge", "Rooms in any state.", live.rooms),
                    (
                        "yukon_races_running",
                        "gauge",
                        "Rooms racing right now.",
                        live.races_running,
                    ),
                    (
                        "yukon_results_pending",
                        "gauge",
                        "Finished races kept in the spool, waiting for the database.",
                        live.results_pending,
                    ),
                )
            )
        self.moves_accepted = Counter(
            "yukon_moves_accepted_total", "Moves and undos accepted.", registry=registry
        )
        self.moves_refused = Counter(
            "yukon_moves_refused_total", "Moves refused.", registry=registry
        )
        self.connections_opened = Counter(
            "yukon_connections_opened_total", "Websocket connections opened.", registry=registry
        )
        #: A cluster's relay (docs/cluster.md): moves this node answered for a player
        #: connected to another node (their frames crossed Redis both ways), frames of its
        #: own clients it relayed to another node, and routes it sent (room affinity).
        #: Shown only by a node: a server alone never counts them.
        cluster = registry if node else None
        self.moves_relayed = Counter(
            "yukon_moves_relayed_total",
            "Moves and undos answered here for a player connected to another node (relayed).",
            registry=cluster,
        )
        self.frames_forwarded = Counter(
            "yukon_frames_forwarded_total",
            "Frames of this node's clients relayed to the node that holds their room.",
            registry=cluster,
        )
        self.routes_sent = Counter(
            "yukon_routes_sent_total",
            "Clients told to reconnect to this node, which holds their room (route).",
            registry=cluster,
        )
        if live is not None:
            registry.register(
                _Read(
                    (
                        "yukon_db_write_failures_total",
                        "counter",
                        "Failed attempts to write a result to the database.",
                        live.db_write_failures,
                    ),
                    (
                        "yukon_db_write_retries_total",
                        "counter",
                        "Result writes tried again after a failure.",
                        live.db_write_retries,
                    ),
                )
            )
        #: Seconds from a move's frame arriving to its answer being queued for the client.
        self.move_ack = Histogram(
            "yukon_move_ack_seconds",
            "Seconds from a move's frame arriving to its answer being queued.",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        if live is not None:
            registry.register(
                _Read(
                    (
                        "yukon_hints_in_progress",
                        "gauge",
                        "Hints being worked out by the solver's process.",
                        live.hints_in_progress,
                    )
                )
            )
        #: Hints the solver worked out, by verdict, counted when the answer goes to its
        #: asker (not for an asker who left first: /metrics is public, and their run is not
        #: marked hinted; answers from a player's cache of the line are not solves).
        self.hint_solves = Counter(
            "yukon_hint_solves_total",
            "Hints the solver worked out and the asker received, by verdict"
            " (not answers from the asker's cache, nor one whose asker left first).",
            ["verdict"],
            registry=registry,
        )
        self._solves = {v: self.hint_solves.labels(v) for v in HINT_VERDICTS}
        #: Hints it could not work out (its process died, or the server closed).
        self.hint_failures = Counter(
            "yukon_hint_failures_total",
            "Hints the solver could not work out (its process died, or the server was closing).",
            registry=registry,
        )
        #: Seconds from the hub asking for a solve to the verdict coming back, for the same
        #: hints as ``hint_solves`` (the time hints at the verdict).
        self.hint_seconds = Histogram(
            "yukon_hint_seconds",
            "Seconds from a hint being asked of the solver to its verdict, for those received.",
            buckets=HINT_BUCKETS,
            registry=registry,
        )

        if live is not None:
            registry.register(
                _Read(
                    (
                        "yukon_winnable_stock",
                        "gauge",
                        "Secret deals proven winnable, kept for the next rooms.",
                        live.winnable_stock,
                    ),
                    (
                        "yukon_winnable_stock_empty_total",
                        "counter",
                        "Rooms that wanted a winnable deal while the stock had none.",
                        live.winnable_unproven,
                    ),
                )
            )
        #: Deals the solver judged for the stock (or a room's, on the spot), by verdict.
        self.winnable_proofs = Counter(
            "yukon_winnable_proofs_total",
            "Deals the solver judged for the stock of winnable deals, by verdict.",
            ["verdict"],
            registry=registry,
        )
        for verdict in WINNABLE_VERDICTS:  # every series from the start, as the hints'
            self.winnable_proofs.labels(verdict)

    def hint_solved(self, verdict: str, seconds: float) -> None:
        """A verdict went to its asker, ``seconds`` after the hub asked for it."""
        self._solves[verdict].inc()
        self.hint_seconds.observe(seconds)

    def render(self) -> bytes:
        """The Prometheus text format, version 0.0.4."""
        return generate_latest(self.registry)

    def value(self, name: str, **labels: str) -> float:
        """One sample's value (0 if there is none): for tests and logs."""
        return self.registry.get_sample_value(name, labels) or 0.0
