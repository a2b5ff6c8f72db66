"""Speed of the rules engine: ``legal_moves()`` and ``play(m)`` + ``undo()``.

Run from the repository root, either way::

    python -m bench.engine
    python bench/engine.py --positions 5000 --seed 7 --rules CT --all-variants

It deals random classic deal numbers (from a fixed seed, so runs are comparable), plays
each one forward a random number (0 to 80) of random legal moves, and keeps the positions
that still have a legal move. For each position it then times, with
``time.perf_counter_ns``, a batch of repeated ``legal_moves()`` calls and a batch of
repeated ``play(m)`` + ``undo()`` pairs for one random legal move ``m``. Each batch is run
a few times and the fastest is kept (as ``timeit`` does), with the garbage collector off.
The figures are the median, 90th and 99th percentile over positions.

This is a measurement, not a test: it never fails on timing and always exits 0.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass

if __package__ in (None, ""):  # run as ``python bench/engine.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol import Game, Rules
from protocol.codes import MAX_DEAL

#: Targets for the medians, in microseconds.
TARGET_LEGAL_US = 10.0
TARGET_PLAY_UNDO_US = 7.0

#: Random moves played from each deal before a position is measured: 0..MAX_WALK.
MAX_WALK = 80


@dataclass(slots=True)
class Sample:
    game: Game
    move: str
    legal_count: int


@dataclass(slots=True)
class Result:
    rules: str
    positions: int
    discarded: int
    legal_counts: list[int]
    legal_us: list[float]
    play_undo_us: list[float]
    seconds: float


def cpu_model() -> str:
    """The CPU's name from /proc/cpuinfo where there is one, else what platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, sep, value = line.partition(":")
                if sep and key.strip() in ("model name", "Hardware", "Processor", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def build_positions(count: int, seed: int, rules: Rules) -> tuple[list[Sample], int]:
    """``count`` positions reached by random play, each with a random legal move to time.

    Returns the samples and how many walks were thrown away for ending with no legal move.
    """
    rng = random.Random(seed)
    samples: list[Sample] = []
    discarded = 0
    while len(samples) < count:
        game = Game.from_deal(rng.randrange(MAX_DEAL + 1), rules)
        legal = sorted(game.legal_moves())
        for _ in range(rng.randint(0, MAX_WALK)):
            if not legal:
                break
            game.play(rng.choice(legal))
            legal = sorted(game.legal_moves())
        if not legal:
            discarded += 1
            if discarded > 10 * count + 100:  # cannot happen with real rules; never hang
                break
            continue
        samples.append(Sample(game, rng.choice(legal), len(legal)))
    return samples, discarded


def time_legal_moves(game: Game, repeat: int, rounds: int) -> float:
    """Microseconds per ``legal_moves()`` call: the fastest of ``rounds`` batches."""
    legal_moves = game.legal_moves
    calls = range(repeat)
    clock = time.perf_counter_ns
    best = math.inf
    for _ in range(rounds):
        start = clock()
        for _ in calls:
            legal_moves()
        best = min(best, clock() - start)
    return best / repeat / 1000


def time_play_undo(game: Game, move: str, repeat: int, rounds: int) -> float:
    """Microseconds per ``play(move)`` + ``undo()`` pair: the fastest of ``rounds`` batches."""
    play = game.play
    undo = game.undo
    calls = range(repeat)
    clock = time.perf_counter_ns
    best = math.inf
    for _ in range(rounds):
        start = clock()
        for _ in calls:
            play(move)
            undo()
        best = min(best, clock() - start)
    return best / repeat / 1000


def run(rules: Rules, count: int, seed: int, repeat: int, rounds: int, progress: bool) -> Result:
    started = time.perf_counter()
    if progress:
        print(f"  [{rules}] building {count} positions ...", file=sys.stderr, flush=True)
    samples, discarded = build_positions(count, seed, rules)
    legal_us: list[float] = []
    play_undo_us: list[float] = []
    step = max(1, len(samples) // 4)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i, sample in enumerate(samples):
            if progress and i and i % step == 0:
                print(
                    f"  [{rules}] timed {i}/{len(samples)} positions", file=sys.stderr, flush=True
                )
            legal_us.append(time_legal_moves(sample.game, repeat, rounds))
            before = sample.game.position()
            play_undo_us.append(time_play_undo(sample.game, sample.move, repeat, rounds))
            if sample.game.position() != before:  # a report, not a test: say it and go on
                print(
                    f"  warning: play({sample.move}) + undo() changed the position {before}",
                    file=sys.stderr,
                )
    finally:
        if gc_was_enabled:
            gc.enable()
    return Result(
        rules=str(rules),
        positions=len(samples),
        discarded=discarded,
        legal_counts=[s.legal_count for s in samples],
        legal_us=sorted(legal_us),
        play_undo_us=sorted(play_undo_us),
        seconds=time.perf_counter() - started,
    )


def verdict(median: float, target: float) -> str:
    return "met" if median <= target else "MISSED"


def report(result: Result) -> None:
    counts = result.legal_counts
    print(
        f"rules {result.rules}: {result.positions} positions"
        f" (stuck walks discarded: {result.discarded}),"
        f" legal moves per position: median {statistics.median(counts):g},"
        f" max {max(counts)}; {result.seconds:.1f} s"
    )
    print(f"  {'':20} {'median':>9} {'p90':>9} {'p99':>9}   target")
    for name, values, target in (
        ("legal_moves()", result.legal_us, TARGET_LEGAL_US),
        ("play(m) + undo()", result.play_undo_us, TARGET_PLAY_UNDO_US),
    ):
        median = statistics.median(values)
        print(
            f"  {name:20} {median:6.2f} us {percentile(values, 90):6.2f} us"
            f" {percentile(values, 99):6.2f} us   median <= {target:g} us:"
            f" {verdict(median, target)}"
        )


def rules_arg(text: str) -> Rules:
    try:
        return Rules.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine",
        description="Time the Yukon rules engine's legal_moves() and play() + undo().",
    )
    parser.add_argument(
        "--positions", type=int, default=2000, metavar="N", help="positions (default 2000)"
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    parser.add_argument(
        "--rules",
        type=rules_arg,
        default=Rules.parse("C"),
        metavar="C",
        help="rules field of a game code, e.g. C, RT, MEGT (default C)",
    )
    parser.add_argument(
        "--all-variants",
        action="store_true",
        help="also time each variant C R S A M briefly (with the options of --rules)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=50,
        metavar="K",
        help="calls per timed batch (default 50; 5 batches per position, fastest kept)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.repeat < 1:
        parser.error("--positions and --repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rules: Rules = args.rules
    progress = not args.quiet
    rounds = 5
    python = f"{platform.python_version()} ({platform.python_implementation()})"
    print("Yukon rules engine benchmark")
    print(f"python  {python} on {platform.system()} {platform.machine()}")
    print(f"cpu     {cpu_model()}")
    print(
        f"setup   seed {args.seed}; random deals, each walked 0..{MAX_WALK} random legal moves;"
        f" {args.repeat} calls x {rounds} batches per position, fastest batch kept, gc off"
    )
    print()
    report(run(rules, args.positions, args.seed, args.repeat, rounds, progress))
    if args.all_variants:
        brief = max(200, args.positions // 4)
        options = str(rules)[1:]
        for letter in "CRSAM":
            variant_rules = Rules.parse(letter + options)
            print()
            report(run(variant_rules, brief, args.seed, args.repeat, rounds, progress))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
