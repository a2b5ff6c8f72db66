"""bench.winnability runs, resumes from its checkpoint and checks its kept lines (small
sizes: a smoke test, no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.solver import interval
from bench.winnability import deal_code
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
