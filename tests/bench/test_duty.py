"""bench.duty runs and prints each case's CPU per chunk (a smoke test: no timing asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_duty_prints_every_case_against_the_one_millisecond_case() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.duty", "--seconds", "0.2", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for case in ("back to back", "1 ms sleep", "three processes", "10 ms sleep"):
        line = next(x for x in out.splitlines() if case in x)
        assert re.search(r"[\d.]+ us per chunk \([\d.]+\); [\d.]+ x the 1 ms case", line), out
