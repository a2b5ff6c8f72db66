"""The solver benchmarks run and print their figures (small sizes: a smoke test, no timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_bench_solver_reports_verdicts_and_an_interval() -> None:
    out = run("bench.solver", "--deals", "4", "--budget", "5", "--quiet")
    assert "(C deals 1 to 4)" in out, out
    for word in ("won", "lost", "unknown", "median", "Wilson", "targets"):
        assert word in out, out


def test_bench_daily_reports_candidates_and_par() -> None:
    out = run("bench.daily", "--days", "2", "--first", "2027-03-01")
    assert "candidates tried per date:" in out
    assert "par " in out and "time " in out


def test_bench_hints_reports_each_budget() -> None:
    out = run("bench.hints", "--positions", "5", "--budgets", "1000,2000")
    assert "1,000  won" in out and "2,000  won" in out, out


def test_bench_postmortem_reports_lost_and_won_runs() -> None:
    out = run("bench.postmortem", "--lost", "3", "--won", "2")
    assert "lost     3 runs" in out and "won      2 runs  won 2" in out, out
    assert "unknown" in out and "median" in out and "p95" in out, out


def test_bench_deals_reports_both_shuffles_and_the_cheats_search() -> None:
    out = run("bench.deals", "--deals", "200", "--search", "2000", "--rounds", "1")
    for words in ("numbered (SplitMix64)", "seeded (SHA-256, rejection)", "found deal 1999"):
        assert words in out, out
    assert "True" in out


def test_bench_lazy_foundations_compares_verdicts_on_small_positions() -> None:
    out = run("bench.lazy_foundations", "--small", "40", "--seed", "3")
    assert "small positions compared" in out and "strict wrong on" in out, out
    assert "DISAGREE" not in out, out
