"""Which pairs of a rated race count, and how (issue 40 item 4, docs/ratings.md "Rating
farming"). Pure: storage gives the runs and how many counted races each pair already has
in the last 24 hours, and keeps the decision with the race, so that ``yukon db
recompute-ratings`` replays the decision instead of deciding again.

The rules, each with its threshold:

- a runner whose run was under ``MIN_MOVES`` accepted moves or under ``MIN_TIME_MS``
  moves nobody's rating: none of their pairs counts (``short``);
- the same two players count at most ``PAIR_LIMIT`` rated races between them in
  ``PAIR_WINDOW_S``; past it their pair does not count (``limit``);
- in a rated race nobody won, two runners equal on foundations draw as a rating pair
  (``draw``), whatever their ranks (the ranks and the boards stay as they are);
- two runners from one address (``shared_address``) go to the review queue; their pair
  stops counting (``linked``) only with a second link (``LINK_DEVICE``: one device id;
  ``LINK_REGISTERED``: both names registered from that address within ``LINK_WINDOW_S``
  of each other): a shared address alone is no proof (a home, a campus, a carrier's NAT).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MIN_MOVES",
    "MIN_TIME_MS",
    "PAIR_LIMIT",
    "PAIR_WINDOW_S",
    "Run",
    "Pair",
    "decide",
    "link",
    "shared_address",
    "LINK_DEVICE",
    "LINK_REGISTERED",
    "LINK_WINDOW_S",
    "short",
    "SANDBAG_WINDOW",
    "SANDBAG_WARN",
    "SANDBAG_REPORT",
    "quick_resign",
    "sandbag_counts",
]

#: A run of fewer accepted moves than this moves nobody's rating.
MIN_MOVES = 3
#: A run shorter than this (ms on the race clock) moves nobody's rating.
MIN_TIME_MS = 10_000
#: The most rated races two players count between them in ``PAIR_WINDOW_S``.
PAIR_LIMIT = 10
PAIR_WINDOW_S = 24 * 3600
#: Two names registered from one address within this many seconds are linked.
LINK_WINDOW_S = 24 * 3600
LINK_DEVICE = "device"
LINK_REGISTERED = "registered"


@dataclass(frozen=True, slots=True)
class Run:
    """What the rules read of one runner's run."""

    player_id: int
    moves: int
    time_ms: int
    outcome: str
    foundations: int
    #: The runner's address key and device id at the race's start ("" for none).
    address: str = ""
    device: str = ""


@dataclass(frozen=True, slots=True)
class Pair:
    """One pair of a rated race, lower id first, as decided when the race was committed:
    ``reason`` is ``"counted"``, ``"draw"`` (counted, as a draw), ``"short"``,
    ``"limit"``, ``"linked"``, or (decided by storage) ``"marked"`` and ``"unproven"``
    (not counted)."""

    a: int
    b: int
    reason: str

    @property
    def counts(self) -> bool:
        return self.reason in ("counted", "draw")


def short(run: Run) -> bool:
    """Is the run too short to move anyone's rating?"""
    return run.moves < MIN_MOVES or run.time_ms < MIN_TIME_MS


def shared_address(runs: Sequence[Run]) -> list[tuple[Run, Run]]:
    """The pairs of runners (lower id first) who came from one address."""
    ordered = sorted(runs, key=lambda r: r.player_id)
    return [
        (x, y)
        for i, x in enumerate(ordered)
        for y in ordered[i + 1 :]
        if x.address and x.address == y.address
    ]


def link(x: Run, y: Run, registered: Mapping[int, tuple[str | None, float]]) -> str | None:
    """The second link between two runners of one address, if any: one device id, or
    both names registered from this address within ``LINK_WINDOW_S`` of each other
    (``registered``: each player's registration address key and wall time)."""
    if x.device and x.device == y.device:
        return LINK_DEVICE
    rx, ry = registered.get(x.player_id), registered.get(y.player_id)
    if (
        rx is not None
        and ry is not None
        and rx[0] == ry[0] == x.address
        and abs(rx[1] - ry[1]) <= LINK_WINDOW_S
    ):
        return LINK_REGISTERED
    return None


def decide(
    runs: Sequence[Run],
    counted_before: Mapping[tuple[int, int], int],
    linked: Collection[tuple[int, int]] = (),
) -> list[Pair]:
    """Every pair of the race (in id order) with its decision; ``counted_before``: how
    many rated races each pair ``(lower id, higher id)`` counted in the last
    ``PAIR_WINDOW_S`` before this one (absent: none); ``linked``: the pairs of one
    address with a second link (``link``)."""
    ordered = sorted(runs, key=lambda r: r.player_id)
    nobody_won = all(r.outcome != "won" for r in ordered)
    pairs: list[Pair] = []
    for i, x in enumerate(ordered):
        for y in ordered[i + 1 :]:
            if short(x) or short(y):
                reason = "short"
            elif (x.player_id, y.player_id) in linked:
                reason = "linked"
            elif counted_before.get((x.player_id, y.player_id), 0) >= PAIR_LIMIT:
                reason = "limit"
            elif nobody_won and x.foundations == y.foundations:
                reason = "draw"
            else:
                reason = "counted"
            pairs.append(Pair(x.player_id, y.player_id, reason))
    return pairs


#: The sandbag watch: over a player's last ``SANDBAG_WINDOW`` rated results, quick
#: resigns (``short`` runs resigned) to the same opponent (one ranked above them) warn at
#: ``SANDBAG_WARN`` and report at ``SANDBAG_REPORT`` (a ``review_queue`` row).
SANDBAG_WINDOW = 7
SANDBAG_WARN = 3
SANDBAG_REPORT = 4


def quick_resign(run: Run) -> bool:
    """A resign within 10 s or 3 moves: what the sandbag watch counts."""
    return run.outcome == "resigned" and short(run)


def sandbag_counts(recent: Sequence[tuple[bool, frozenset[int]]]) -> dict[int, int]:
    """Quick resigns by opponent over a player's recent rated results (newest first, the
    first ``SANDBAG_WINDOW`` read): each ``(quick resign, who ranked above them)``."""
    counts: dict[int, int] = {}
    for quick, above in recent[:SANDBAG_WINDOW]:
        if quick:
            for opponent in above:
                counts[opponent] = counts.get(opponent, 0) + 1
    return counts
