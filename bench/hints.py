"""What a hint costs: the solver on positions met in play, for a few node budgets.

Run from the repository root, either way::

    python -m bench.hints
    python bench/hints.py --positions 300 --budgets 5000,10000,20000,50000

A hint solves the player's current position with a fixed node budget
(``HubConfig.hint_budget_nodes``, docs/solver.md "Hints"). This takes ``--positions``
positions of the Classic deals 1, 2, 3, ...: each deal played from its start by random legal
moves to a depth drawn from 0, 5, 15, 30 and 60 (seeded, so the same positions every run;
random play loses often, so many of them are lost), and solves each with every budget, one
at a time in this process, timing it with ``time.perf_counter``. It reports, per budget,
the verdicts, how many of the undecided ones still get a move (``best``: the first move
towards the most advanced position the search reached, as a hint answers them) and how
many hints get no move at all though the position was not proven lost (``no move``), and
the time per hint (median, 90th, 95th and 99th percentile, and the worst). The budget
should answer well under a second for nearly every position. ``--rules`` takes the
positions from deals of other rules; ``--slowest K`` lists the K slowest positions.

This is a measurement, not a test: it never fails on the figures and always exits 0.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time

if __package__ in (None, ""):  # run as ``python bench/hints.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from protocol import Game, GameCode, Rules
from solver import search, solve

DEPTHS = (0, 5, 15, 30, 60)


def positions(count: int, seed: int, rules: str = "C") -> list[str]:
    """Full positions (every card known, as the server has them) met in random play."""
    rng = random.Random(seed)
    out: list[str] = []
    deal = 0
    while len(out) < count:
        deal += 1
        game = Game.from_code(GameCode(Rules.parse(rules), deal))
        for _ in range(rng.choice(DEPTHS)):
            moves = game.legal_moves()
            if not moves or game.is_won():
                break
            game.play(rng.choice(moves))
        if not game.is_won():
            out.append(game.position())
    return out


def measure(samples: list[str], budget: int, slowest: int = 0) -> None:
    timed: list[tuple[float, str, str, int]] = []
    cpu: list[float] = []
    verdicts = {"won": 0, "lost": 0, "unknown": 0}
    best = 0
    for position in samples:
        started = time.perf_counter()
        cpu0 = time.process_time()
        solution = solve(position, budget_nodes=budget)
        cpu.append(1000 * (time.process_time() - cpu0))
        timed.append((time.perf_counter() - started, position, solution.verdict, solution.nodes))
        verdicts[solution.verdict] += 1
        best += solution.verdict == "unknown" and bool(solution.best)
    n = len(timed)
    ms = sorted(1000 * t for t, _, _, _ in timed)
    none = verdicts["unknown"] - best
    print(
        f"{budget:>9,}  won {verdicts['won']:4d}  lost {verdicts['lost']:4d}"
        f"  unknown {verdicts['unknown']:3d} ({verdicts['unknown'] / n:5.1%}: best {best},"
        f" no move {none}, {none / n:4.1%})"
        f"  median {statistics.median(ms):6.1f}  p90 {percentile(ms, 90):6.1f}"
        f"  p95 {percentile(ms, 95):6.1f}  p99 {percentile(ms, 99):6.1f}  max {ms[-1]:6.1f}"
    )
    cpu.sort()
    print(
        f"{'':>9}  CPU time of this process, ms: median {statistics.median(cpu):6.1f}"
        f"  p95 {percentile(cpu, 95):6.1f}  p99 {percentile(cpu, 99):6.1f}  max {cpu[-1]:6.1f}"
    )
    for t, position, verdict, nodes in sorted(timed, reverse=True)[:slowest]:
        print(f"           {1000 * t:7.1f} ms  {verdict:<7} {nodes:>9,} nodes  {position}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.hints", description="Time the solver as hints use it."
    )
    parser.add_argument("--positions", type=int, default=300, metavar="N")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--rules", default="C", help="rules of the deals (default C)")
    parser.add_argument("--slowest", type=int, default=0, metavar="K", help="list the K slowest")
    parser.add_argument(
        "--budgets",
        default="20000,50000,100000,200000,500000",
        metavar="B,B",
        help="node budgets to compare (default 20000,50000,100000,200000,500000)",
    )
    parser.add_argument(
        "--pure-python",
        action="store_true",
        help="run the Python search even where the C one is built (as a server without it)",
    )
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.pure_python:
        search._CORE = None
    print("Yukon hint benchmark")
    print(f"python  {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores; one process")
    print(f"search  {search.search_implementation()}")
    samples = positions(args.positions, args.seed, str(Rules.parse(args.rules)))
    print(
        f"setup   {len(samples)} positions of {args.rules} deals from random play"
        f" (depths {DEPTHS}), seed {args.seed}"
    )
    print()
    print("   budget  verdicts                                   time per hint, ms")
    for budget in budgets:
        measure(samples, budget, args.slowest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
