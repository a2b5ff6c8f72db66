"""The solver on many deals: how many it wins, proves lost or leaves unknown, and how fast.

Run from the repository root, either way::

    python -m bench.solver
    python bench/solver.py --deals 100 --budget 10 --jobs 2

It solves the deals ``YU1-<rules>-<deal>`` for the deal numbers ``--start`` to
``--start + --deals - 1`` (default: Classic, deals 1 to 1,000), each with a budget of
``--budget`` seconds of ``time.perf_counter`` time, in ``--jobs`` worker processes, and
reports the fractions won, lost and unknown, the median and 95th percentile time per
deal, and an estimate of the share of deals that can be won with its 95 % confidence
interval (Wilson score interval). Unknown deals widen the interval: its lower bound
counts them as lost, its upper bound as won. Every winning line is replayed through the
engine by the solver itself before it is reported.

With ``--jobs`` above 1, deals run in parallel, so each one's time is measured while it
shares the machine; use one job per core at most.

This is a measurement, not a test: it never fails on the figures and always exits 0.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

if __package__ in (None, ""):  # run as ``python bench/solver.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from protocol import Game, GameCode, Rules
from solver import search_implementation, solve

#: Targets from the issue.
TARGET_UNKNOWN = 0.02
TARGET_MEDIAN_S = 0.100
#: The z value of a two-sided 95 % interval.
Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Outcome:
    deal: int
    verdict: str
    seconds: float
    nodes: int
    moves: int


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n``."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def interval(won: int, unknown: int, n: int) -> tuple[float, float]:
    """The 95 % interval of the winnable share, unknowns counted lost (low) and won (high).

    Whatever the unknown deals turn out to be, the share lies within it (at 95 %): the
    one interval ``bench.solver`` and ``bench.winnability`` both report.
    """
    low, _ = wilson(won, n)
    _, high = wilson(won + unknown, n)
    return low, high


def solve_deal(task: tuple[int, str, float]) -> Outcome:
    deal, rules, budget = task
    game = Game.from_code(GameCode(Rules.parse(rules), deal))
    solution = solve(game, budget_seconds=budget, clock=time.perf_counter)
    return Outcome(deal, solution.verdict, solution.seconds, solution.nodes, len(solution.moves))


def report(outcomes: list[Outcome], args: argparse.Namespace, wall: float) -> None:
    n = len(outcomes)
    won = sum(o.verdict == "won" for o in outcomes)
    lost = sum(o.verdict == "lost" for o in outcomes)
    unknown = n - won - lost
    times = sorted(o.seconds for o in outcomes)
    median = statistics.median(times)
    p95 = percentile(times, 95)
    low, high = interval(won, unknown, n)
    decided = won + lost
    print()
    print(f"deals       {n} ({args.rules} deals {args.start} to {args.start + n - 1})")
    print(f"won         {won:5d}  {won / n:7.1%}")
    print(f"lost        {lost:5d}  {lost / n:7.1%}   (proven: every reachable position searched)")
    print(f"unknown     {unknown:5d}  {unknown / n:7.1%}   (budget of {args.budget:g} s ran out)")
    print(f"time        median {median * 1000:.1f} ms, 95th percentile {p95 * 1000:.1f} ms,")
    print(f"            max {times[-1] * 1000:.1f} ms, total {sum(times):.1f} s, wall {wall:.1f} s")
    lines = [o.moves for o in outcomes if o.verdict == "won"]
    if lines:
        print(f"won lines   median {statistics.median(lines):g} moves (with the safe moves)")
    estimate = f"{won / decided:.1%} of the decided deals" if decided else "n/a"
    print(
        f"winnable    {estimate}; 95% interval {low:.1%} to {high:.1%}"
        " (Wilson; unknowns counted as lost for the lower bound, as won for the upper)"
    )
    print()
    unknown_ok = unknown / n <= TARGET_UNKNOWN
    median_ok = median <= TARGET_MEDIAN_S
    print(
        f"targets     unknown <= {TARGET_UNKNOWN:.0%}: {'met' if unknown_ok else 'MISSED'};"
        f" median <= {TARGET_MEDIAN_S * 1000:.0f} ms: {'met' if median_ok else 'MISSED'}"
    )
    if unknown:
        left = " ".join(str(o.deal) for o in outcomes if o.verdict == "unknown")
        print(f"unknown deals: {left}")


def rules_arg(text: str) -> str:
    try:
        return str(Rules.parse(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.solver",
        description="Run the Yukon solver on numbered deals and report what it decides.",
    )
    parser.add_argument(
        "--deals", type=int, default=1000, metavar="N", help="how many deals (default 1000)"
    )
    parser.add_argument(
        "--start", type=int, default=1, metavar="D", help="first deal number (default 1)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds per deal before it counts as unknown (default 10)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="J",
        help="worker processes (default 1; at most one per core)",
    )
    parser.add_argument(
        "--rules",
        type=rules_arg,
        default="C",
        metavar="C",
        help="rules field of the game codes (default C)",
    )
    parser.add_argument(
        "--out", metavar="FILE", help="also write one line per deal: deal verdict ms nodes moves"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.jobs < 1 or args.budget <= 0 or args.start < 0:
        parser.error("--deals and --jobs must be at least 1, --budget positive, --start >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    python = f"{platform.python_version()} ({platform.python_implementation()})"
    print("Yukon solver benchmark")
    print(f"python  {python} on {platform.system()} {platform.machine()}")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores; {args.jobs} job(s)")
    print(f"search  {search_implementation()} (solver.search_implementation())")
    print(
        f"setup   YU1-{args.rules}- deals {args.start}..{args.start + args.deals - 1},"
        f" budget {args.budget:g} s each (time.perf_counter)"
    )
    tasks = [(deal, args.rules, args.budget) for deal in range(args.start, args.start + args.deals)]
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    step = max(1, args.deals // 20)
    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    try:
        results: Iterator[Outcome]
        if args.jobs == 1:
            results = map(solve_deal, tasks)
            pool = None
        else:
            pool = multiprocessing.Pool(args.jobs)
            results = pool.imap_unordered(solve_deal, tasks)
        for outcome in results:
            outcomes.append(outcome)
            if out:
                out.write(
                    f"{outcome.deal} {outcome.verdict} {outcome.seconds * 1000:.1f}"
                    f" {outcome.nodes} {outcome.moves}\n"
                )
                out.flush()
            done = len(outcomes)
            if not args.quiet and (done % step == 0 or done == args.deals):
                counts = {v: sum(o.verdict == v for o in outcomes) for v in ("won", "lost")}
                unknown = done - counts["won"] - counts["lost"]
                print(
                    f"  {done}/{args.deals} deals: won {counts['won']}, lost {counts['lost']},"
                    f" unknown {unknown}; {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if out:
            out.close()
    outcomes.sort(key=lambda o: o.deal)
    report(outcomes, args, time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
