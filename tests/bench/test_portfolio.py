"""bench.portfolio reads a bench.winnability checkpoint and runs its pass on the deals that
can change (small sizes: a smoke test, no timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.portfolio import incomplete_pass
from bench.winnability import deal_code

ROOT = Path(__file__).resolve().parents[2]


def test_the_pass_wins_only_with_a_line_the_engine_replays() -> None:
    wins = 0
    for index in range(6):
        won, used = incomplete_pass(deal_code("C", index), 50_000)
        assert used <= 50_000 + 4_096
        wins += won
    assert wins >= 3  # most deals are won in a few thousand positions


def test_the_bench_compares_the_portfolio_with_the_checkpoint(tmp_path: Path) -> None:
    checkpoint = str(tmp_path / "C.jsonl")
    args = ["--deals", "12", "--budget-nodes", "300", "--checkpoint", checkpoint]
    made = subprocess.run(
        [sys.executable, "-m", "bench.winnability", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    result = subprocess.run(
        [sys.executable, "-m", "bench.portfolio", "--checkpoint", checkpoint, "--share", "0.5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    for word in ("pass 150 positions", "gained", "lost", "with the portfolio"):
        assert word in result.stdout, result.stdout
