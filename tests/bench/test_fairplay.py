"""bench.fairplay prints its table: every kind and rule; bots flagged, few humans."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.fairplay import RULES, bench
from server.domain.signals import DEFAULT_THRESHOLDS

ROOT = Path(__file__).resolve().parents[2]


def test_bench_flags_the_machine_bots_and_few_humans() -> None:
    lines = bench(humans=300, bots=40, history=300, seed=7, thresholds=DEFAULT_THRESHOLDS)
    assert lines[0].split()[4:] == list(RULES)
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"human", "fixed", "jittered", "humanlike", "burst", "replay"}
    for bot in ("fixed", "jittered", "burst"):
        assert rows[bot][3] == "100.00%", lines
    assert float(rows["human"][3].rstrip("%")) < 2.0, lines


def test_bench_fairplay_runs_as_a_command() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.fairplay",
            "--humans",
            "50",
            "--bots",
            "5",
            "--history",
            "50",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("thresholds: cv<0.25 window_cv(14)<0.1 ")
    assert "replay" in result.stdout
