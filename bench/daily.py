"""How long the server takes to choose a winnable daily deal, and how many candidates it tries.

Run from the repository root::

    python -m bench.daily
    python -m bench.daily --days 365 --secret 'some secret' --rules C

For ``--days`` consecutive dates from ``--first`` it runs ``server.domain.daily.choose_daily``
(the server's own rule: the first candidate the solver proves won within
``DAILY_BUDGET_NODES`` positions) in this process, and reports how many candidates each
date needed, the time per date (median, 95th percentile, max) and the par of the chosen
deals. The server does this once a day per rules, ahead of time, in a worker process.

A measurement, not a test: it always exits 0.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import platform
import statistics
import sys
import time

if __package__ in (None, ""):  # run as ``python bench/daily.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from protocol import Rules
from server.domain.daily import DAILY_BUDGET_NODES, choose_daily


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.daily", description="Time the choice of winnable daily deals."
    )
    parser.add_argument("--days", type=int, default=100, help="how many dates (default 100)")
    parser.add_argument(
        "--first",
        type=dt.date.fromisoformat,
        default=dt.date(2027, 1, 1),
        help="first date, YYYY-MM-DD (default 2027-01-01)",
    )
    parser.add_argument("--secret", default="bench", help="the daily secret (default 'bench')")
    parser.add_argument("--rules", default="C", help="rules of the daily deal (default C)")
    parser.add_argument(
        "--budget",
        type=int,
        default=DAILY_BUDGET_NODES,
        help=f"positions per candidate (default {DAILY_BUDGET_NODES}, the server's)",
    )
    args = parser.parse_args(argv)
    if args.days < 1 or args.budget < 1:
        parser.error("--days and --budget must be at least 1")
    rules = Rules.parse(args.rules)
    print("Yukon daily-deal choice benchmark")
    print(f"python  {platform.python_version()} on {platform.system()} {platform.machine()}")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores; one process")
    print(
        f"setup   {args.days} dates from {args.first}, rules {rules}, secret {args.secret!r},"
        f" {args.budget} positions per candidate"
    )
    seconds: list[float] = []
    candidates: collections.Counter[int] = collections.Counter()
    pars: list[int] = []
    nodes: list[int] = []
    for i in range(args.days):
        date = args.first + dt.timedelta(days=i)
        t0 = time.perf_counter()
        choice = choose_daily(args.secret.encode(), date, rules, args.budget)
        seconds.append(time.perf_counter() - t0)
        candidates[choice.candidate + 1] += 1
        pars.append(choice.par)
        nodes.append(choice.nodes)
        if (i + 1) % max(1, args.days // 10) == 0:
            print(f"  {i + 1}/{args.days} dates", file=sys.stderr, flush=True)
    print()
    print("candidates tried per date:")
    for tried in sorted(candidates):
        share = candidates[tried] / args.days
        print(f"  {tried:3d}   {candidates[tried]:5d} dates  {share:6.1%}")
    ms = sorted(s * 1000 for s in seconds)
    print(
        f"time        median {statistics.median(ms):.1f} ms, 95th percentile"
        f" {percentile(ms, 95):.1f} ms, max {ms[-1]:.1f} ms"
    )
    print(f"positions   median {statistics.median(nodes):.0f}, max {max(nodes)}")
    print(f"par         median {statistics.median(pars):.0f} moves, {min(pars)} to {max(pars)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
