"""bench.winnability runs, resumes from its checkpoint and checks its kept lines (small
sizes: a smoke test, no timing); its two-phase estimate is the arithmetic it claims."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bench.solver import Z95, interval, wilson
from bench.winnability import deal_code, draw_sample, plan, two_phase
from protocol import GameCode

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.winnability", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_deals_are_fresh_seeded_deals_the_same_on_every_run() -> None:
    code = deal_code("C", 0)
    assert code == deal_code("C", 0) != deal_code("C", 1) != deal_code("R", 1)
    assert GameCode.parse(code).seeded


def test_the_interval_counts_the_unknown_deals_both_ways() -> None:
    low, high = interval(80, 10, 100)
    low_all_lost, _ = interval(80, 0, 100)
    _, high_all_won = interval(90, 0, 100)
    assert (low, high) == (low_all_lost, high_all_won)
    assert low < 0.8 < 0.9 < high


def test_a_run_resumes_from_its_checkpoint_and_replays_its_lines(tmp_path: Path) -> None:
    checkpoint = str(tmp_path / "C.jsonl")
    args = ["--rules", "C", "--budget-nodes", "20000", "--checkpoint", checkpoint]
    first = run(*args, "--deals", "3", "--keep-lines", "1")
    assert first.returncode == 0, first.stderr
    for word in ("won", "lost", "unknown", "95% interval", "dead-end test", "load average"):
        assert word in first.stdout, first.stdout
    lines = Path(checkpoint).read_text().splitlines()
    assert json.loads(lines[0])["budget_nodes"] == 20000 and len(lines) == 4
    again = run(*args, "--deals", "4", "--keep-lines", "1")
    assert again.returncode == 0, again.stderr
    assert "4 deals, 3 already in the checkpoint" in again.stdout, again.stdout
    assert "deals       4 seeded C deals" in again.stdout, again.stdout
    assert len(Path(checkpoint).read_text().splitlines()) == 5
    checked = run(*args, "--check")
    assert checked.returncode == 0 and "0 failed" in checked.stdout, checked.stdout
    shown = run("--table", checkpoint)
    assert shown.returncode == 0 and "| C | 20,000 | 4 |" in shown.stdout, shown.stdout
    other = run("--rules", "C", "--budget-nodes", "1000", "--checkpoint", checkpoint)
    assert other.returncode != 0 and "other settings" in other.stderr


def test_the_deals_a_budget_left_unknown_are_solved_again_with_another(tmp_path: Path) -> None:
    small = str(tmp_path / "small.jsonl")
    first = run("--rules", "C", "--deals", "12", "--budget-nodes", "300", "--checkpoint", small)
    assert first.returncode == 0, first.stderr
    rows = [json.loads(x) for x in Path(small).read_text().splitlines()[1:]]
    unknown = sorted(r["index"] for r in rows if r["verdict"] == "unknown")
    assert unknown, "300 positions leave some of the first 12 deals undecided"
    big = str(tmp_path / "big.jsonl")
    again = run(
        "--rules",
        "C",
        "--deals",
        "12",
        "--budget-nodes",
        "100000",
        "--unknown-from",
        small,
        "--checkpoint",
        big,
    )
    assert again.returncode == 0, again.stderr
    assert f"the {len(unknown)} that {small} left unknown" in again.stdout, again.stdout
    assert "95% interval" not in again.stdout  # a subset: no estimate for the rules
    redone = [json.loads(x) for x in Path(big).read_text().splitlines()[1:]]
    assert sorted(r["index"] for r in redone) == unknown
    assert sum(r["verdict"] != "unknown" for r in redone) > 0
    other = run("--rules", "R", "--deals", "12", "--unknown-from", small)
    assert other.returncode != 0 and "holds C deals" in other.stderr


# -- the two-phase estimate ---------------------------------------------------------------


def test_with_no_unknowns_the_estimate_is_the_wilson_interval_of_the_deals() -> None:
    estimate = two_phase(1000, 880, 0, 0, 0, 0)
    assert estimate.point == 0.88 and estimate.undecided == 0
    assert (estimate.low, estimate.high) == wilson(880, 1000)


def test_with_nothing_sampled_the_unknowns_are_counted_both_ways() -> None:
    estimate = two_phase(1000, 880, 30, 0, 0, 0)
    assert estimate.point is None and estimate.undecided == 0.03
    assert (estimate.low, estimate.high) == interval(880, 30, 1000)


def test_a_sample_left_all_undecided_gives_the_bounds_of_phase_one() -> None:
    estimate = two_phase(1000, 880, 30, 10, 0, 10)
    low, high = interval(880, 30, 1000)
    assert estimate.low == pytest.approx(low) and estimate.high == pytest.approx(high)
    assert estimate.undecided == pytest.approx(0.03)
    assert estimate.point == 0.88  # the formula counts undecided sample deals lost


def test_sampling_every_unknown_and_deciding_it_is_solving_every_deal() -> None:
    estimate = two_phase(1000, 880, 30, 30, 12, 0)
    low, high = wilson(892, 1000)
    assert estimate.point == pytest.approx(0.892)
    assert estimate.low == pytest.approx(low) and estimate.high == pytest.approx(high)


def test_the_point_is_the_stratified_formula_inside_a_narrower_interval() -> None:
    estimate = two_phase(4000, 3531, 106, 20, 5, 2)
    assert estimate.point is not None
    assert estimate.point == pytest.approx((3531 + 106 * 5 / 20) / 4000)
    assert estimate.low < estimate.point < estimate.high
    assert estimate.undecided == pytest.approx(106 / 4000 * 2 / 20)
    bounds = interval(3531, 106, 4000)
    assert bounds[0] < estimate.low and estimate.high < bounds[1]


def test_the_unknowns_term_is_the_issues_figure() -> None:
    """Issue 43: at 2 % unknown, resolving 200 of them adds about +-0.14 % (q = 1/2)."""
    n, unknown, sampled = 10**7, 2 * 10**5, 200
    estimate = two_phase(n, n * 88 // 100, unknown, sampled, 100, 0)
    p = estimate.point
    assert p is not None
    binomial = Z95 * math.sqrt(p * (1 - p) / n)
    added = math.sqrt(estimate.sampling**2 - binomial**2)
    assert added == pytest.approx(Z95 * 0.02 * math.sqrt(0.25 / 200), rel=0.01)
    assert round(added, 4) == 0.0014


@pytest.mark.parametrize(
    "args",
    [(0, 0, 0, 0, 0, 0), (10, 8, 3, 0, 0, 0), (10, 5, 2, 3, 0, 0), (10, 5, 2, 2, 2, 1)],
)
def test_impossible_counts_are_refused(args: tuple[int, int, int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        two_phase(*args)


def test_a_plan_meets_its_target_at_the_least_cost() -> None:
    p, u, q, share, t1, t2 = 0.89, 0.025, 0.2, 0.0, 0.16, 300.0
    cost = plan(0.002, p, u, q, share, t1, t2)
    assert cost is not None and 0 < cost.sample <= u * cost.deals + 1
    half = Z95 * math.sqrt(p * (1 - p) / cost.deals + u * u * q * (1 - q) / cost.sample)
    assert half <= 0.002 * 1.001
    for factor in (0.7, 1.4):  # another split of the same precision costs more
        s = cost.sample * factor
        rest = (0.002 / Z95) ** 2 - u * u * q * (1 - q) / s
        other = p * (1 - p) / rest * t1 + s * t2
        assert other > cost.cpu_hours * 3600 * 0.999
    assert plan(0.002, p, u, q, 0.2, t1, t2) is None  # 0.5 % undecided width: out of reach
    alone = plan(0.005, p, 0.0, 0.0, 0.0, t1, t2)
    assert alone is not None and alone.sample == 0
    assert alone.deals == math.ceil(Z95**2 * p * (1 - p) / 0.005**2)


def test_the_sample_is_seeded_and_uniform() -> None:
    unknown = list(range(0, 100, 10))
    first = draw_sample(unknown, 3, "C", "salt", 7)
    assert first == draw_sample(reversed(unknown), 3, "C", "salt", 7)
    assert len(first) == 3 and set(first) <= set(unknown)
    assert draw_sample(unknown, 30, "C", "salt", 7) == unknown
    grown = draw_sample([*unknown, 1000, 1010], 3, "C", "salt", 7)
    assert len(set(grown) & set(first)) >= 1  # more deals: the sample changes only in part
    counts = dict.fromkeys(unknown, 0)
    for seed in range(300):
        for i in draw_sample(unknown, 3, "C", "salt", seed):
            counts[i] += 1
    assert all(50 <= c <= 130 for c in counts.values()), counts  # 90 expected each


def test_two_phases_run_resume_and_combine(tmp_path: Path) -> None:
    checkpoint = str(tmp_path / "C.jsonl")
    args = ["--rules", "C", "--deals", "12", "--budget-nodes", "300", "--checkpoint", checkpoint]
    sample = ["--sample", "3", "--sample-seed", "5", "--sample-seconds", "0.5"]
    first = run(*args, *sample, "--every", "0")
    assert first.returncode == 0, first.stderr
    for word in ("phase one", "phase two", "3 of the", "estimate    p = ", "load average"):
        assert word in first.stdout, first.stdout
    assert "phase two [####################] 3/3" in first.stderr and "ETA" in first.stderr
    rows = Path(tmp_path / "C.sample-5.jsonl").read_text().splitlines()
    assert json.loads(rows[0])["sample_seed"] == 5 and len(rows) == 4
    again = run(*args, *sample)
    assert again.returncode == 0, again.stderr
    assert "3 sample deals, 3 already in" in again.stdout, again.stdout
    assert first.stdout.split("estimate")[1][:80] == again.stdout.split("estimate")[1][:80]
    checked = run(*args, *sample, "--check")
    assert checked.returncode == 0 and checked.stdout.count("0 failed") == 2, checked.stdout
    wrong = run(*args, "--sample", "3", "--sample-seed", "5", "--sample-seconds", "9")
    assert wrong.returncode != 0 and "other settings" in wrong.stderr
