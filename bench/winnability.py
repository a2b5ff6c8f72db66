"""What share of Yukon deals can be won: the solver on fresh seeded deals, resumable.

Run from the repository root, either way::

    python -m bench.winnability --rules C --deals 1000
    python bench/winnability.py --rules R --deals 20000 --budget-nodes 10000000 \\
        --checkpoint /tmp/win-R.jsonl

It solves ``--deals`` deals of the rules ``--rules``, each a *seeded* deal (rules.md
section 2) whose 16-byte seed is the first 16 bytes of SHA-256 of
``<salt>:<rules>:<index>`` for the indexes 0, 1, 2, ...: fresh deals, none of them the
numbered deals the solver was tuned on, and the same ones on every run and machine. Each
gets the same stated budget, ``--budget-nodes`` positions (a count: the verdicts do not
depend on the machine or its load) and optionally ``--budget-seconds`` too.

It reports the deals won (each with a line that the solver replayed through the engine),
lost (proven; with the proof method: the dead-end test at the start, or a complete
search), and unknown (the budget ran out), and the share of winnable deals with its 95 %
Wilson interval, counting the unknown deals both ways: the lower bound counts them lost,
the upper bound won, so the interval holds whatever they turn out to be.

**Resumable.** With ``--checkpoint FILE`` every finished deal is appended to FILE (JSON
lines; the first line states the rules, budget and salt), and a later run with the same
FILE skips the deals already there, so a long run continues across sessions (a run with
another budget or salt on the same file is refused). ``--deals`` may grow between runs.
One deal in ``--keep-lines`` (default 10) keeps its winning line in the file;
``--check`` replays those lines through a fresh engine from each deal's code and
reports any that do not win. Progress goes to stderr every ``--every`` seconds.
``--table FILE...`` prints one Markdown table row per checkpoint file (the table in
docs/solver.md), solving nothing.

**What the budget left undecided.** ``--unknown-from FILE`` solves only the deals that the
checkpoint FILE (same rules and salt, usually a smaller budget) left unknown, with this
run's budget: what those deals turn out to be, and how many positions they take
(docs/solver.md, "What the unknown deals are"). Use another ``--checkpoint`` for it.

This is a measurement, not a test: it never fails on the figures and always exits 0
(``--check`` exits 1 if a kept line does not win).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

if __package__ in (None, ""):  # run as ``python bench/winnability.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from bench.solver import Z95, interval
from protocol import Game, GameCode, Rules
from solver import search_implementation, solve

#: The salt of the seeds (change it for another sample of deals).
SALT = "yukon-winnability-1"
DEFAULT_BUDGET_NODES = 10_000_000


@dataclass(frozen=True, slots=True)
class Deal:
    """One solved deal, as a line of the checkpoint file."""

    index: int
    code: str
    verdict: str
    #: For a lost deal: ``dead-end`` (the dead-end test proves the deal itself lost) or
    #: ``search`` (the complete search ran out of positions); else empty.
    method: str
    nodes: int
    seconds: float
    moves: int
    #: The winning line, kept for one deal in ``--keep-lines`` (else empty).
    line: tuple[str, ...] = ()


def deal_code(rules: str, index: int, salt: str = SALT) -> str:
    """The game code of deal ``index``: seeded by SHA-256 of ``salt:rules:index``."""
    seed = hashlib.sha256(f"{salt}:{rules}:{index}".encode()).digest()[:16]
    return str(GameCode(Rules.parse(rules), seed))


def solve_one(task: tuple[int, str, str, int, float | None, int]) -> Deal:
    index, rules, salt, nodes, seconds, keep = task
    code = deal_code(rules, index, salt)
    solution = solve(
        Game.from_code(code),
        budget_nodes=nodes,
        budget_seconds=seconds,
        clock=time.perf_counter,
    )
    method = ""
    if solution.verdict == "lost":
        # No node searched: the start itself failed the dead-end test (docs/solver.md).
        method = "dead-end" if solution.nodes == 0 else "search"
    line = solution.moves if keep and index % keep == 0 else ()
    return Deal(
        index,
        code,
        solution.verdict,
        method,
        solution.nodes,
        round(solution.seconds, 4),
        len(solution.moves),
        line,
    )


def read_checkpoint(path: str, header: dict[str, object]) -> dict[int, Deal]:
    """The deals already in ``path`` (none if it does not exist); ``SystemExit`` if it was
    written with other settings."""
    done: dict[int, Deal] = {}
    if not os.path.exists(path):
        return done
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        if not first:
            return done
        theirs = json.loads(first)
        if theirs != header:
            raise SystemExit(f"{path} was written with other settings: {theirs}, not {header}")
        for text in f:
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill: that deal is solved again
            row["line"] = tuple(row.get("line", ()))
            deal = Deal(**row)
            done[deal.index] = deal
    return done


def unknown_indexes(path: str, rules: str, salt: str) -> list[int]:
    """The indexes of the deals that the checkpoint ``path`` left unknown (``SystemExit``
    if it holds other rules or another salt)."""
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
    if header.get("rules") != rules or header.get("salt") != salt:
        raise SystemExit(f"{path} holds {header.get('rules')} deals of salt {header.get('salt')!r}")
    deals = read_checkpoint(path, header).values()
    return sorted(d.index for d in deals if d.verdict == "unknown")


def report(
    deals: list[Deal], args: argparse.Namespace, cpu: float, subset: str | None = None
) -> None:
    n = len(deals)
    if not n:
        print("no deals")
        return
    won = sum(d.verdict == "won" for d in deals)
    lost = [d for d in deals if d.verdict == "lost"]
    unknown = n - won - len(lost)
    dead = sum(d.method == "dead-end" for d in lost)
    times = sorted(d.seconds for d in deals)
    low, high = interval(won, unknown, n)
    print()
    if subset:
        print(f"deals       {n} seeded {args.rules} deals: {subset} (salt {args.salt!r})")
    else:
        print(
            f"deals       {n} seeded {args.rules} deals (indexes 0 to {n - 1}, salt {args.salt!r})"
        )
    print(f"won         {won:6d}  {won / n:7.2%}   (a line the engine replays)")
    print(
        f"lost        {len(lost):6d}  {len(lost) / n:7.2%}   (proven: {dead} by the dead-end test"
        f" at the start, {len(lost) - dead} by a complete search)"
    )
    print(f"unknown     {unknown:6d}  {unknown / n:7.2%}   (budget ran out)")
    print(
        f"time        median {1000 * times[n // 2]:.1f} ms, p95 {1000 * percentile(times, 95):.1f}"
        f" ms, max {times[-1]:.2f} s; {sum(times):.1f} s solving in all"
        f" ({sum(times) / n:.3f} s a deal)"
    )
    if cpu:
        print(f"this run    {cpu:.1f} s of CPU in this process")
    if subset:
        return  # a chosen subset: no estimate for the rules as a whole
    decided = won + len(lost)
    point = f"{won / decided:.2%} of the decided deals" if decided else "n/a"
    print(
        f"winnable    {point}; 95% interval {low:.2%} to {high:.2%}"
        f" (half-width {(high - low) / 2:.2%}; Wilson, unknowns counted lost for the"
        " lower bound and won for the upper)"
    )
    p = won / n
    for target in (0.002, 0.005):
        if unknown / n / 2 >= target:
            print(f"for +-{target:.1%}  impossible at this budget: the unknowns alone are wider")
            continue
        need = (Z95 * Z95 * p * (1 - p)) / (target - unknown / n / 2) ** 2
        print(
            f"for +-{target:.1%}  about {need:,.0f} deals at these rates"
            f" (about {need * sum(times) / n / 3600:.1f} hours of solving at this run's speed)"
        )


def check(deals: list[Deal]) -> int:
    """Replay every kept line through a fresh engine from its deal's code."""
    kept = [d for d in deals if d.line]
    bad = 0
    for d in kept:
        game = Game.from_code(d.code)
        try:
            for move in d.line:
                game.play(move)
        except ValueError:
            bad += 1
            print(f"  {d.code}: the line does not replay")
            continue
        if not game.is_won():
            bad += 1
            print(f"  {d.code}: the line does not win")
    print(f"check       {len(kept)} kept winning lines replayed in the engine: {bad} failed")
    return bad


def table(paths: list[str]) -> None:
    """One Markdown row per checkpoint file: what it holds, whatever ``--deals`` was."""
    print(
        "| rules | budget | deals | won | lost (dead end, search) | unknown"
        " | winnable (95 % interval) | half-width | solving time |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for path in paths:
        with open(path, encoding="utf-8") as f:
            header = json.loads(f.readline())
        deals = list(read_checkpoint(path, header).values())
        n = len(deals)
        won = sum(d.verdict == "won" for d in deals)
        lost = [d for d in deals if d.verdict == "lost"]
        dead = sum(d.method == "dead-end" for d in lost)
        unknown = n - won - len(lost)
        low, high = interval(won, unknown, n)
        budget = f"{int(str(header['budget_nodes'])):,}"
        print(
            f"| {header['rules']} | {budget} | {n:,} | {won / n:.2%} | {len(lost) / n:.2%}"
            f" ({dead}, {len(lost) - dead}) | {unknown / n:.2%} | {low:.2%} to {high:.2%}"
            f" | {(high - low) / 2:.2%} | {sum(d.seconds for d in deals):,.0f} s |"
        )


def rules_arg(text: str) -> str:
    try:
        return str(Rules.parse(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.winnability",
        description="Solve fresh seeded deals and estimate the share of winnable deals.",
    )
    parser.add_argument("--rules", type=rules_arg, default="C", metavar="C")
    parser.add_argument("--deals", type=int, default=1000, metavar="N")
    parser.add_argument("--budget-nodes", type=int, default=DEFAULT_BUDGET_NODES, metavar="NODES")
    parser.add_argument(
        "--budget-seconds",
        type=float,
        default=None,
        metavar="S",
        help="also cap each deal's time (then the verdicts depend on the machine)",
    )
    parser.add_argument("--salt", default=SALT)
    parser.add_argument("--checkpoint", metavar="FILE", help="append each deal; resume from it")
    parser.add_argument("--jobs", type=int, default=1, metavar="J")
    parser.add_argument("--keep-lines", type=int, default=10, metavar="K")
    parser.add_argument("--every", type=float, default=60.0, metavar="S", help="progress period")
    parser.add_argument(
        "--check", action="store_true", help="replay the kept lines of the checkpoint only"
    )
    parser.add_argument("--table", nargs="+", metavar="FILE", help="a table of checkpoints")
    parser.add_argument(
        "--unknown-from",
        metavar="FILE",
        help="solve only the deals (below --deals) that this checkpoint left unknown",
    )
    args = parser.parse_args(argv)
    if args.table:
        table(args.table)
        return 0
    if args.deals < 1 or args.jobs < 1 or args.budget_nodes < 1:
        parser.error("--deals, --jobs and --budget-nodes must be at least 1")
    header: dict[str, object] = {
        "rules": args.rules,
        "salt": args.salt,
        "budget_nodes": args.budget_nodes,
        "budget_seconds": args.budget_seconds,
    }
    done = read_checkpoint(args.checkpoint, header) if args.checkpoint else {}
    if args.check:
        return 1 if check(sorted(done.values(), key=lambda d: d.index)) else 0
    print("Yukon winnability")
    print(f"python  {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores; {args.jobs} job(s)")
    print(f"search  {search_implementation()}")
    seconds = f" and {args.budget_seconds:g} s" if args.budget_seconds else ""
    print(f"budget  {args.budget_nodes:,} positions{seconds} a deal")
    wanted = list(range(args.deals))
    subset = None
    if args.unknown_from:
        wanted = [
            i for i in unknown_indexes(args.unknown_from, args.rules, args.salt) if i < args.deals
        ]
        subset = f"the {len(wanted)} that {args.unknown_from} left unknown"
    todo = [i for i in wanted if i not in done]
    print(f"setup   {len(wanted)} deals, {len(wanted) - len(todo)} already in the checkpoint")
    tasks = [
        (i, args.rules, args.salt, args.budget_nodes, args.budget_seconds, args.keep_lines)
        for i in todo
    ]
    out = None
    if args.checkpoint:
        fresh = not os.path.exists(args.checkpoint) or os.path.getsize(args.checkpoint) == 0
        out = open(args.checkpoint, "a", encoding="utf-8")  # noqa: SIM115
        if fresh:
            out.write(json.dumps(header) + "\n")
            out.flush()
    started = time.perf_counter()
    cpu0 = time.process_time()
    last = started
    solved = 0
    try:
        results: Iterator[Deal]
        pool = None
        if args.jobs == 1:
            results = map(solve_one, tasks)
        else:
            pool = multiprocessing.Pool(args.jobs)
            results = pool.imap_unordered(solve_one, tasks, chunksize=4)
        for deal in results:
            done[deal.index] = deal
            solved += 1
            if out:
                out.write(json.dumps(asdict(deal)) + "\n")
                out.flush()
            now = time.perf_counter()
            if now - last >= args.every or solved == len(tasks):
                last = now
                counts = [sum(d.verdict == v for d in done.values()) for v in ("won", "lost")]
                unknown = len(done) - sum(counts)
                rate = solved / (now - started)
                left = (len(tasks) - solved) / rate if rate else 0.0
                low, high = interval(counts[0], unknown, len(done))
                print(
                    f"  {len(done)}/{len(wanted)}: won {counts[0]}, lost {counts[1]},"
                    f" unknown {unknown}; {low:.2%} to {high:.2%};"
                    f" {rate:.2f} deals/s, about {left / 60:.0f} min left",
                    file=sys.stderr,
                    flush=True,
                )
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if out:
            out.close()
    cpu = time.process_time() - cpu0 if args.jobs == 1 else 0.0
    chosen = set(wanted)
    deals = sorted((d for d in done.values() if d.index in chosen), key=lambda d: d.index)
    report(deals, args, cpu, subset)
    load = os.getloadavg()
    print(
        f"machine     load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f};"
        f" wall {time.perf_counter() - started:.1f} s for {solved} deals solved now"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
