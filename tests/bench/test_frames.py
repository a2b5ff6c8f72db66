"""``bench.frames``: runs, and times both ways of reading and of framing."""

from __future__ import annotations

import pytest

from bench.frames import main


def test_it_times_both_ways(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--calls", "50"]) == 0
    out = capsys.readouterr().out
    assert "websockets' protocol" in out and "Peer._read" in out
    assert "send_binary" in out and "binary_frame" in out
