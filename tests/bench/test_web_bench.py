"""``bench.web`` runs and prints its figures (two loads, one throttled round: a smoke test,
no timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..web.conftest import chromium_path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_web_reports_paint_times() -> None:
    chromium = chromium_path()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.web",
            "--loads",
            "2",
            "--rounds",
            "1",
            "--chromium",
            chromium,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for words in ("client:", "first paint", "first screen drawn", "files cached", "throttled:"):
        assert words in result.stdout, result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("  http")]
    assert {(r[0], r[1], r[2]) for r in rows} == {
        (link, page, visit)
        for link in ("http", "https")
        for page in ("lobby", "invite")
        for visit in ("first", "repeat")
    }, result.stdout
