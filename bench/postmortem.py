"""What a post-mortem costs: the solver's judgement of finished runs, lost and won.

Run from the repository root, either way::

    python -m bench.postmortem
    python bench/postmortem.py --lost 200 --won 200 --budget 100000

A post-mortem (``solver.postmortem``, docs/solver.md "Post-mortems") replays a run and
solves positions along it with the hints' node budget. This makes runs as players leave
them, from the Classic deals 1, 2, 3, ... (seeded, so the same runs every time):

* **won**: the solver's winning line of a deal it wins, with detours: before each move,
  one time in ten, a random legal move that is then taken back (``undo``);
* **lost** (not won): the solver's line of a deal for a random number of its moves (none
  when the solver cannot win the deal), then random legal moves, one in ten taken back,
  until the game is stuck or 200 more moves have been played: a player who leaves the
  winning line and wanders until stuck or out of heart. (Random play in Yukon often keeps
  a win in reach, so many such runs end ``open``: the statuses are reported.)

Each run's post-mortem is worked out in this process, one at a time, timed with
``time.perf_counter`` (the server runs the same function in its solver process). It
reports, per kind, the statuses, the time per post-mortem (median, 95th percentile,
worst), the solves per post-mortem and the share ``unknown``.

This is a measurement, not a test: it never fails on the figures and always exits 0.
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import random
import statistics
import sys
import time

if __package__ in (None, ""):  # run as ``python bench/postmortem.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from protocol import Game, GameCode, Rules
from solver import search, solve
from solver.postmortem import ROUNDS, TOTAL_FACTOR, postmortem

#: How many random moves a lost run plays after leaving the solver's line, at most.
WANDER = 200


def won_run(line: tuple[str, ...], code: str, rng: random.Random) -> list[str]:
    game = Game.from_code(code)
    run: list[str] = []
    for move in line:
        if rng.random() < 0.1:
            detour = rng.choice(game.legal_moves())
            run += [detour, "undo"]
        game.play(move)
        run.append(move)
    return run


def lost_run(line: tuple[str, ...], code: str, rng: random.Random) -> list[str] | None:
    game = Game.from_code(code)
    run: list[str] = []
    for move in line[: rng.randrange(len(line))] if line else ():
        game.play(move)
        run.append(move)
    for _ in range(WANDER):
        moves = game.legal_moves()
        if not moves or game.is_won():
            break
        if run and run[-1] != "undo" and game.can_undo() and rng.random() < 0.1:
            game.undo()
            run.append("undo")
            continue
        move = rng.choice(moves)
        game.play(move)
        run.append(move)
    return None if game.is_won() else run


def runs(lost: int, won: int, budget: int, seed: int) -> tuple[list[tuple[str, list[str]]], ...]:
    """``lost`` runs that did not win and ``won`` that did, as (code, actions)."""
    rng = random.Random(seed)
    out_lost: list[tuple[str, list[str]]] = []
    out_won: list[tuple[str, list[str]]] = []
    deal = 0
    while len(out_lost) < lost or len(out_won) < won:
        deal += 1
        code = str(GameCode(Rules.parse("C"), deal))
        solution = solve(Game.from_code(code), budget_nodes=budget)
        line = solution.moves if solution.verdict == "won" else ()
        if line and len(out_won) < won and deal % 2 == 0:
            out_won.append((code, won_run(line, code, rng)))
        elif len(out_lost) < lost:
            run = lost_run(line, code, rng)
            if run is not None:
                out_lost.append((code, run))
    return out_lost, out_won


def measure(kind: str, samples: list[tuple[str, list[str]]], budget: int) -> None:
    times: list[float] = []
    cpu: list[float] = []
    solves: list[int] = []
    statuses: collections.Counter[str] = collections.Counter()
    for code, run in samples:
        started = time.perf_counter()
        cpu0 = time.process_time()
        answer = postmortem(code, run, budget_nodes=budget)
        times.append(1000 * (time.perf_counter() - started))
        cpu.append(1000 * (time.process_time() - cpu0))
        solves.append(answer.solves)
        statuses[answer.status] += 1
    times.sort()
    cpu.sort()
    n = len(times)
    shown = "  ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    print(
        f"{kind:<5} {n:4d} runs  {shown}\n"
        f"      unknown {statuses['unknown'] / n:5.1%}  time ms: median"
        f" {statistics.median(times):7.1f}  p95 {percentile(times, 95):7.1f}"
        f"  max {times[-1]:7.1f}  solves: median {statistics.median(solves):g}"
        f"  max {max(solves)}  actions: median {statistics.median(len(r) for _, r in samples):g}\n"
        f"      CPU time ms (this process; the wall time above includes waiting on a shared"
        f" machine): median {statistics.median(cpu):7.1f}  p95 {percentile(cpu, 95):7.1f}"
        f"  max {cpu[-1]:7.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.postmortem", description="Time the solver's post-mortems."
    )
    parser.add_argument("--lost", type=int, default=200, metavar="N", help="runs not won")
    parser.add_argument("--won", type=int, default=200, metavar="N", help="runs won")
    parser.add_argument("--budget", type=int, default=100_000, metavar="NODES")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--pure-python",
        action="store_true",
        help="run the Python search even where the C one is built (as a server without it)",
    )
    parser.add_argument(
        "--without-sleep-sets",
        action="store_true",
        help="the complete searches without sleep sets and frozen blocks (as before them)",
    )
    args = parser.parse_args(argv)
    if args.pure_python:
        search._CORE = None
    if args.without_sleep_sets:
        search._SLEEP_SETS = False
    print("Yukon post-mortem benchmark")
    print(f"python  {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores; one process")
    print(
        f"search  {search.search_implementation()}"
        f"{'' if search._SLEEP_SETS else ', without sleep sets'};"
        f" budget {args.budget:,} positions a solve,"
        f" then {', '.join(f'{r}x' for r in ROUNDS[1:])} for what it leaves undecided,"
        f" {TOTAL_FACTOR}x in all"
    )
    lost, won = runs(args.lost, args.won, args.budget, args.seed)
    print(f"setup   {len(lost)} lost and {len(won)} won runs of Classic deals, seed {args.seed}")
    print()
    measure("lost", lost, args.budget)
    measure("won", won, args.budget)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
