"""How often each fair-play rule flags simulated humans and bots (issue 40, docs/fairplay.md).

Run from the repository root::

    python -m bench.fairplay [--humans 10000] [--bots 1000] [--history 2000] [--seed 40]
                             [--cv 0.25] [--window-cv 0.10]

Humans of varied pace: each run's intervals are log-normal, its median drawn from 0.7 to
4 s and its sigma (of the log) from 0.35 to 0.8; 60 to 180 thinking moves, then a closing
stretch of 10 to 30 quick sends home once every card is face up (marked, as the server
marks it); one run in ten has a resume (an outage of 5 to 30 s, 1 to 4 moves resent a few
ms apart, marked). The pace rule compares with ``--history`` other human runs of the
same generator (the stored runs of the rule set). Bots of five kinds:

* ``fixed``: one interval for the whole run (20 to 800 ms);
* ``jittered``: a base (200 to 1,500 ms) plus or minus up to 20 % uniform jitter;
* ``humanlike``: human log-normal delays, the choice superhuman (a short solver line) -
  timing alone cannot see it;
* ``burst``: human-like think pauses, then 3 to 8 moves 10 to 40 ms apart;
* ``replay``: a recorded human run's intervals replayed as they were.

Prints, per kind, the share of runs flagged by any rule and by each rule.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from server.domain.signals import DEFAULT_THRESHOLDS, Thresholds, compute, judge

RULES = ("cv", "window_cv", "fast", "pace")


@dataclass
class Run:
    """One simulated run: its intervals and the markers the server would set."""

    intervals: list[int]
    resent: set[int] = field(default_factory=set)
    after_resume: set[int] = field(default_factory=set)
    face_up_from: int | None = None

    def times(self) -> list[int]:
        """The action times, the first at 0."""
        out = [0]
        for x in self.intervals:
            out.append(out[-1] + x)
        return out


def lognormal_intervals(rng: random.Random, n: int) -> list[int]:
    """``n`` human thinking intervals: log-normal, median 0.7-4 s, sigma 0.35-0.8."""
    median = rng.uniform(700, 4_000)
    sigma = rng.uniform(0.35, 0.8)
    return [max(1, int(median * rng.lognormvariate(0, sigma))) for _ in range(n)]


def human(rng: random.Random) -> Run:
    """A human run: thinking moves, maybe a resume, then the quick closing stretch."""
    run = Run(lognormal_intervals(rng, rng.randint(60, 180)))
    if rng.random() < 0.1:
        at = rng.randint(5, len(run.intervals) - 5)
        resent = [rng.randint(2, 10) for _ in range(rng.randint(1, 4))]
        outage = rng.randint(5_000, 30_000)
        run.intervals[at:at] = [outage, *resent]
        # Interval i ends at action i + 1: the outage ends at the first resent action.
        first = at + 1
        run.resent = set(range(first, first + len(resent) + 1))
        run.after_resume = {first + len(resent) + 1}
    run.face_up_from = len(run.intervals) + 1
    run.intervals += [rng.randint(150, 400) for _ in range(rng.randint(10, 30))]
    return run


def fixed(rng: random.Random) -> Run:
    """A bot at one interval."""
    pace = rng.randint(20, 800)
    return Run([pace] * rng.randint(60, 150))


def jittered(rng: random.Random) -> Run:
    """A bot at a base interval with uniform jitter of up to 20 %."""
    base = rng.uniform(200, 1_500)
    return Run([int(base * rng.uniform(0.8, 1.2)) for _ in range(rng.randint(60, 150))])


def humanlike(rng: random.Random) -> Run:
    """Human delays on a solver's short line: fewer moves, timing indistinguishable."""
    return Run(lognormal_intervals(rng, rng.randint(60, 100)))


def burst(rng: random.Random) -> Run:
    """Think pauses, then a few moves at machine speed."""
    out: list[int] = []
    while len(out) < 100:
        out.append(int(rng.uniform(1_500, 6_000)))
        out += [rng.randint(10, 40) for _ in range(rng.randint(3, 8))]
    return Run(out)


def bench(humans: int, bots: int, history: int, seed: int, thresholds: Thresholds) -> list[str]:
    """The table's lines: kind, runs, judged, flagged by any rule, by each rule."""
    rng = random.Random(seed)
    past = [human(rng) for _ in range(history)]
    paces = sorted(compute(r.times(), thresholds=thresholds).pace for r in past)
    recorded = [r for r in past if r.face_up_from is not None and not r.resent]

    def replay(rng: random.Random) -> Run:
        source = rng.choice(recorded)
        return Run(list(source.intervals), face_up_from=source.face_up_from)

    kinds: list[tuple[str, int, Callable[[random.Random], Run]]] = [
        ("human", humans, human),
        ("fixed", bots, fixed),
        ("jittered", bots, jittered),
        ("humanlike", bots, humanlike),
        ("burst", bots, burst),
        ("replay", bots, replay),
    ]
    head = f"{'kind':<10} {'runs':>6} {'judged':>6} {'flagged':>8}" + "".join(
        f" {r:>9}" for r in RULES
    )
    lines = [head]
    for name, count, make in kinds:
        judged = flagged = 0
        by_rule = dict.fromkeys(RULES, 0)
        for _ in range(count):
            run = make(rng)
            signals = compute(
                run.times(),
                resent=run.resent,
                after_resume=run.after_resume,
                face_up_from=run.face_up_from,
                human_paces=paces,
                thresholds=thresholds,
            )
            judged += len(signals.intervals) >= thresholds.min_intervals
            fired = {f.rule for f in judge(signals, thresholds)}
            flagged += bool(fired)
            for r in fired:
                by_rule[r] += 1
        pct = [100 * by_rule[r] / max(1, count) for r in RULES]
        lines.append(
            f"{name:<10} {count:>6} {judged:>6} {100 * flagged / max(1, count):>7.2f}%"
            + "".join(f" {p:>8.2f}%" for p in pct)
        )
    return lines


def main() -> None:
    """Parse the options, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--humans", type=int, default=10_000)
    parser.add_argument("--bots", type=int, default=1_000)
    parser.add_argument("--history", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--cv", type=float, default=DEFAULT_THRESHOLDS.cv_below)
    parser.add_argument("--window-cv", type=float, default=DEFAULT_THRESHOLDS.window_cv_below)
    args = parser.parse_args()
    t = replace(DEFAULT_THRESHOLDS, cv_below=args.cv, window_cv_below=args.window_cv)
    print(
        f"thresholds: cv<{t.cv_below} window_cv({t.window})<{t.window_cv_below} "
        f"fast(<{t.fast_ms} ms)>={t.fast_count_at_least} pace>p{t.pace_percentile_above} "
        f"(history {args.history}, needs {t.pace_min_history}) min_intervals={t.min_intervals}"
    )
    for line in bench(args.humans, args.bots, args.history, args.seed, t):
        print(line)


if __name__ == "__main__":
    main()
