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

**Two phases: an estimate, not only bounds.** ``--sample K`` adds a second phase once the
first has solved its ``--deals``: a uniform random sample of ``K`` of the deals phase one
left unknown (the ``K`` unknown indexes first in an order seeded by ``--sample-seed``:
SHA-256 of ``<seed>:<rules>:<salt>:<index>``, so the sample is the same on every run and
mostly the same when ``--deals`` grows) is solved again with a long budget,
``--sample-seconds`` of CPU time a deal (``time.process_time``: the load of the machine
does not decide verdicts) and optionally ``--sample-nodes``. The combined estimate is
``p = (W1 + U1 Ws / S) / N`` with a stratified 95 % interval (``two_phase``; sample deals
still undecided after the long budget are counted both ways, scaled by the unknown
share). Phase two checkpoints to ``--sample-checkpoint`` (default: the checkpoint's name
with ``.sample-<seed>`` before its end), so it resumes too. docs/solver.md, "Two phases".

This is a measurement, not a test: it never fails on the figures and always exits 0
(``--check`` exits 1 if a kept line does not win).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass

if __package__ in (None, ""):  # run as ``python bench/winnability.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from bench.solver import Z95, interval, wilson
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


#: One deal to solve: index, rules, salt, budget in positions, budget in seconds (or None),
#: keep every ``keep``-th line, and whether the seconds are CPU time (phase two) or wall.
Task = tuple[int, str, str, int, float | None, int, bool]


def solve_one(task: Task) -> Deal:
    index, rules, salt, nodes, seconds, keep, cpu_clock = task
    code = deal_code(rules, index, salt)
    solution = solve(
        Game.from_code(code),
        budget_nodes=nodes,
        budget_seconds=seconds,
        clock=time.process_time if cpu_clock else time.perf_counter,
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


@dataclass(frozen=True, slots=True)
class Estimate:
    """The two-phase estimate of the winnable share and its 95 % interval (``two_phase``)."""

    #: ``(W1 + U1 Ws / S) / N`` (sample deals still undecided counted lost); None when
    #: unknowns were left and none was sampled (no estimate of them: bounds only).
    point: float | None
    low: float
    high: float
    #: The half-width that sampling alone gives at ``point`` (0 when ``point`` is None).
    sampling: float
    #: ``U1 / N * Us / S``: the width that the sample's undecided deals add, counted both
    #: ways (the whole unknown share when nothing was sampled).
    undecided: float


def _wilson_share(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's interval of a share ``p`` measured on ``n`` (possibly effective) trials."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def two_phase(
    n: int,
    won: int,
    unknown: int,
    sampled: int,
    sample_won: int,
    sample_undecided: int,
    z: float = Z95,
) -> Estimate:
    """Combine phase one (``won`` won and ``unknown`` unknown of ``n`` deals) with a uniform
    random sample of ``sampled`` of its unknowns (``sample_won`` won, ``sample_undecided``
    still undecided after the long budget, the rest proven lost).

    Two-phase (double) sampling for stratification (Cochran, *Sampling Techniques*, 3rd ed.,
    section 12.2): phase one sorts the deals into won, lost and unknown; the unknown
    stratum's winnable share ``q`` is estimated from the sample, ``p = w + u q`` with ``w =
    won / n`` and ``u = unknown / n``. Its variance is the binomial variance of ``n`` deals
    plus the sample's variance scaled by the unknown share (with the finite-population
    correction: sampling every unknown leaves no sampling error in that stratum)::

        V = p (1 - p) / n + u^2 q (1 - q) / S (1 - S / U1)

    The sample's undecided deals are counted both ways: the low end takes ``q = Ws / S``,
    the high end ``q = (Ws + Us) / S``; each end is Wilson's bound at its ``p`` on the
    effective size ``p (1 - p) / V`` (``n`` when ``V`` is 0), so that with no unknowns, or
    every unknown sampled and decided, it is exactly the Wilson interval of ``n`` decided
    deals, and with nothing sampled (or nothing of the sample decided) exactly
    ``bench.solver.interval``: the unknowns counted both ways.
    """
    if n < 1 or won < 0 or unknown < 0 or won + unknown > n:
        raise ValueError(f"phase one must have 0 <= won + unknown <= n >= 1: {won}, {unknown}, {n}")
    if not 0 <= sampled <= unknown or sample_won < 0 or sample_undecided < 0:
        raise ValueError(f"the sample must be 0 <= S <= U1 with counts >= 0: {sampled}, {unknown}")
    if sample_won + sample_undecided > sampled:
        raise ValueError(f"{sample_won} won + {sample_undecided} undecided > {sampled} sampled")
    w = won / n
    u = unknown / n
    if not unknown:
        low, high = wilson(won, n, z)
        return Estimate(w, low, high, (high - low) / 2, 0.0)
    if not sampled:
        low, high = interval(won, unknown, n)
        return Estimate(None, low, high, 0.0, u)

    def end(q: float) -> tuple[float, float, float]:
        p = w + u * q
        variance = p * (1 - p) / n + u * u * q * (1 - q) / sampled * (1 - sampled / unknown)
        effective = p * (1 - p) / variance if variance > 0 else float(n)
        low, high = _wilson_share(p, effective, z)
        return p, low, high

    point, low, sampling_high = end(sample_won / sampled)
    _, _, high = end((sample_won + sample_undecided) / sampled)
    return Estimate(point, low, high, (sampling_high - low) / 2, u * sample_undecided / sampled)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a target half-width costs at measured rates (``plan``): deals in each phase."""

    deals: int
    sample: int
    cpu_hours: float


def plan(
    target: float,
    p: float,
    u: float,
    q: float,
    undecided: float,
    seconds_one: float,
    seconds_two: float,
    z: float = Z95,
) -> Plan | None:
    """The cheapest ``N`` and ``S`` whose interval would be ``target`` wide each way.

    ``p``, ``u`` (phase one's unknown share), ``q`` (the unknowns' winnable share) and
    ``undecided`` (the share of the sample the long budget leaves undecided) as measured;
    ``seconds_one`` and ``seconds_two`` the CPU seconds a deal of each phase. The undecided
    sample deals add ``u undecided`` to the width whatever ``S`` is, so a target of half
    that or less is out of reach at this long budget (None). Otherwise the sampling part
    must be ``z^2 (p (1 - p) / N + u^2 q (1 - q) / S) <= (target - u undecided / 2)^2``
    (no finite-population correction: an overestimate); the cost ``N seconds_one + S
    seconds_two`` is least at Neyman's allocation, ``S / N = sqrt(b t1 / (a t2))`` with
    ``a = p (1 - p)`` and ``b = u^2 q (1 - q)``, unless that asks for more than every
    unknown (then ``S = u N``).
    """
    room = target - u * undecided / 2
    if room <= 0:
        return None
    c = room * room / (z * z)
    a = p * (1 - p)
    b = u * u * q * (1 - q)
    if a == 0 and b == 0:
        return Plan(1, 0, seconds_one / 3600)
    t1, t2 = max(seconds_one, 1e-9), max(seconds_two, 1e-9)
    total = math.sqrt(a * t1) + math.sqrt(b * t2)
    deals = total * math.sqrt(a / t1) / c
    sample = total * math.sqrt(b / t2) / c
    if sample > u * deals:
        deals = (a + b / u) / c if u else a / c
        sample = u * deals
    deals_n, sample_n = math.ceil(deals), math.ceil(sample)
    return Plan(deals_n, sample_n, (deals_n * seconds_one + sample_n * seconds_two) / 3600)


def sample_order(index: int, rules: str, salt: str, seed: int) -> bytes:
    """The place of deal ``index`` in the seeded random order that phase two samples in."""
    return hashlib.sha256(f"{seed}:{rules}:{salt}:{index}".encode()).digest()


def draw_sample(unknown: Iterable[int], size: int, rules: str, salt: str, seed: int) -> list[int]:
    """A uniform random sample of ``size`` of the ``unknown`` indexes (all of them if fewer):
    the first in the seeded order, so each subset of that size is equally likely."""
    ranked = sorted(unknown, key=lambda i: sample_order(i, rules, salt, seed))
    return sorted(ranked[:size])


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


def progress_bar(done: int, total: int, width: int = 20) -> str:
    """``[#####...............]``: ``done`` of ``total`` as a bar of ``width`` cells."""
    filled = width * done // total if total else width
    return "[" + "#" * filled + "." * (width - filled) + "]"


def run_tasks(
    tasks: list[Task],
    jobs: int,
    path: str | None,
    header: dict[str, object],
    done: dict[int, Deal],
    wanted: int,
    every: float,
    label: str,
) -> tuple[int, float]:
    """Solve ``tasks`` (into ``done``, appended to the checkpoint ``path``), with a progress
    line on stderr every ``every`` seconds: a bar, the counts so far and an ETA. Returns
    the deals solved and the CPU seconds of this process (0 with several jobs)."""
    out = None
    if path:
        fresh = not os.path.exists(path) or os.path.getsize(path) == 0
        out = open(path, "a", encoding="utf-8")  # noqa: SIM115
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
        if jobs == 1:
            results = map(solve_one, tasks)
        else:
            pool = multiprocessing.Pool(jobs)
            results = pool.imap_unordered(
                solve_one, tasks, chunksize=4 if len(tasks) > 8 * jobs else 1
            )
        for deal in results:
            done[deal.index] = deal
            solved += 1
            if out:
                out.write(json.dumps(asdict(deal)) + "\n")
                out.flush()
            now = time.perf_counter()
            if now - last >= every or solved == len(tasks):
                last = now
                counts = [sum(d.verdict == v for d in done.values()) for v in ("won", "lost")]
                unknown = len(done) - sum(counts)
                rate = solved / (now - started)
                left = (len(tasks) - solved) / rate if rate else 0.0
                eta = time.strftime("%H:%M", time.gmtime(time.time() + left))
                print(
                    f"  {label} {progress_bar(wanted - len(tasks) + solved, wanted)}"
                    f" {wanted - len(tasks) + solved}/{wanted}: won {counts[0]},"
                    f" lost {counts[1]}, unknown {unknown}; {rate:.3f} deals/s,"
                    f" ETA {eta} UTC (about {left / 60:.0f} min left)",
                    file=sys.stderr,
                    flush=True,
                )
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if out:
            out.close()
    return solved, (time.process_time() - cpu0 if jobs == 1 else 0.0)


def sample_path(checkpoint: str, seed: int) -> str:
    """Phase two's default checkpoint beside phase one's: ``C.jsonl`` -> ``C.sample-1.jsonl``."""
    root, ext = os.path.splitext(checkpoint)
    return f"{root}.sample-{seed}{ext or '.jsonl'}"


def report_two_phase(
    deals: list[Deal], sample: list[Deal], wanted: int, args: argparse.Namespace
) -> Estimate:
    """Print phase two and the combined estimate (phase one is ``report``'s)."""
    n = len(deals)
    won = sum(d.verdict == "won" for d in deals)
    unknown = sum(d.verdict == "unknown" for d in deals)
    s = len(sample)
    sample_won = [d for d in sample if d.verdict == "won"]
    sample_lost = [d for d in sample if d.verdict == "lost"]
    undecided = [d for d in sample if d.verdict == "unknown"]
    estimate = two_phase(n, won, unknown, s, len(sample_won), len(undecided))
    nodes = f" and {args.sample_nodes:,} positions" if args.sample_nodes else ""
    times = sorted(d.seconds for d in sample)
    print()
    print(
        f"phase two   {s} of the {unknown} unknown deals (asked {wanted}; uniform, sample seed"
        f" {args.sample_seed}) at {args.sample_seconds:g} s of CPU{nodes} a deal"
    )
    if s:
        dead = sum(d.method == "dead-end" for d in sample_lost)
        print(
            f"            won {len(sample_won)}, lost {len(sample_lost)} ({dead} by the dead-end"
            f" test, {len(sample_lost) - dead} by a complete search), undecided {len(undecided)};"
            f" {sum(times):.1f} s of CPU solving, median {times[s // 2]:.1f} s,"
            f" max {times[-1]:.1f} s"
        )
        for verdict, group in (
            ("won", sample_won),
            ("lost", sample_lost),
            ("undecided", undecided),
        ):
            if group:
                print(f"            {verdict}: " + " ".join(str(d.index) for d in group))
    point = "n/a (nothing sampled)" if estimate.point is None else f"{estimate.point:.2%}"
    print(
        f"estimate    p = (W1 + U1 Ws/S) / N = {point}; 95% interval {estimate.low:.2%} to"
        f" {estimate.high:.2%} (half-width {(estimate.high - estimate.low) / 2:.2%}: sampling"
        f" +-{estimate.sampling:.2%}, undecided sample deals {estimate.undecided:.2%} counted"
        " both ways)"
    )
    if s:
        seconds_one = sum(d.seconds for d in deals) / n
        seconds_two = sum(times) / s
        q = len(sample_won) / s
        share = len(undecided) / s
        p = estimate.point if estimate.point is not None else won / n
        for target in (0.002, 0.005):
            cost = plan(target, p, unknown / n, q, share, seconds_one, seconds_two)
            if cost is None:
                print(
                    f"for +-{target:.1%}  out of reach at this long budget: its undecided sample"
                    f" deals alone make the interval {estimate.undecided:.2%} wider"
                )
                continue
            print(
                f"for +-{target:.1%}  about {cost.deals:,} deals and a sample of {cost.sample:,}"
                f" at these rates ({seconds_one:.3f} s a deal, {seconds_two:.1f} s a sample deal):"
                f" about {cost.cpu_hours:,.1f} CPU hours"
            )
    return estimate


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
    parser.add_argument(
        "--sample", type=int, default=0, metavar="K", help="phase two: K of the unknowns"
    )
    parser.add_argument("--sample-seed", type=int, default=1, metavar="SEED")
    parser.add_argument(
        "--sample-seconds", type=float, default=300.0, metavar="S", help="CPU s a sample deal"
    )
    parser.add_argument("--sample-nodes", type=int, default=None, metavar="NODES")
    parser.add_argument("--sample-checkpoint", metavar="FILE", help="phase two's checkpoint")
    args = parser.parse_args(argv)
    if args.table:
        table(args.table)
        return 0
    if args.deals < 1 or args.jobs < 1 or args.budget_nodes < 1:
        parser.error("--deals, --jobs and --budget-nodes must be at least 1")
    if args.sample < 0 or args.sample_seconds <= 0:
        parser.error("--sample must be at least 0 and --sample-seconds above 0")
    if args.sample and args.unknown_from:
        parser.error("--sample estimates the rules as a whole: not with --unknown-from")
    header: dict[str, object] = {
        "rules": args.rules,
        "salt": args.salt,
        "budget_nodes": args.budget_nodes,
        "budget_seconds": args.budget_seconds,
    }
    done = read_checkpoint(args.checkpoint, header) if args.checkpoint else {}
    if args.check:
        bad = check(sorted(done.values(), key=lambda d: d.index))
        if args.sample and args.checkpoint:
            path = args.sample_checkpoint or sample_path(args.checkpoint, args.sample_seed)
            sample_done = read_checkpoint(path, sample_header(header, args))
            bad += check(sorted(sample_done.values(), key=lambda d: d.index))
        return 1 if bad else 0
    started = time.perf_counter()
    print("Yukon winnability")
    print(f"python  {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores (nproc); {args.jobs} job(s)")
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
    tasks: list[Task] = [
        (i, args.rules, args.salt, args.budget_nodes, args.budget_seconds, args.keep_lines, False)
        for i in todo
    ]
    solved, cpu = run_tasks(
        tasks, args.jobs, args.checkpoint, header, done, len(wanted), args.every, "phase one"
    )
    chosen = set(wanted)
    deals = sorted((d for d in done.values() if d.index in chosen), key=lambda d: d.index)
    if args.sample:
        print()
        print("phase one")
    report(deals, args, cpu, subset)
    if args.sample:
        unknown = [d.index for d in deals if d.verdict == "unknown"]
        picked = draw_sample(unknown, args.sample, args.rules, args.salt, args.sample_seed)
        path = args.sample_checkpoint or (
            sample_path(args.checkpoint, args.sample_seed) if args.checkpoint else None
        )
        s_header = sample_header(header, args)
        s_done = read_checkpoint(path, s_header) if path else {}
        s_tasks: list[Task] = [
            (i, args.rules, args.salt, args.sample_nodes or 1 << 62, args.sample_seconds, 1, True)
            for i in picked
            if i not in s_done
        ]
        print(
            f"\nsetup   phase two: {len(picked)} sample deals, {len(picked) - len(s_tasks)} already"
            f" in {path}"
            if path
            else f"\nsetup   phase two: {len(picked)} sample deals"
        )
        s_solved, _ = run_tasks(
            s_tasks, args.jobs, path, s_header, s_done, len(picked), args.every, "phase two"
        )
        solved += s_solved
        sample = [s_done[i] for i in picked]
        report_two_phase(deals, sample, args.sample, args)
    load = os.getloadavg()
    print(
        f"machine     {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}"
        f" {load[2]:.2f}; wall {time.perf_counter() - started:.1f} s for {solved} deals solved now"
    )
    return 0


def sample_header(header: dict[str, object], args: argparse.Namespace) -> dict[str, object]:
    """Phase two's checkpoint header: phase one's settings and the sample's."""
    return {
        "phase": 2,
        "phase_one": header,
        "sample_seed": args.sample_seed,
        "sample_seconds": args.sample_seconds,
        "sample_nodes": args.sample_nodes,
        "clock": "process_time",
    }


if __name__ == "__main__":
    raise SystemExit(main())
