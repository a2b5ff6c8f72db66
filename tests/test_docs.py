"""The examples in the documentation run, so the docs stay true."""

from __future__ import annotations

import asyncio
import doctest
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import msgpack

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "docs" / "protocol.md"
#: The fields that hold times, which differ from one recording to the next.
TIMES = re.compile(r'"(elapsed_ms|time_ms|finished_ms|at)": \d+')
#: The times of a replay's actions (``"actions": [[257, "5C>4"], ...]``), which differ too.
ACTION_TIMES = re.compile(r'\[\d+, "')
HEX = re.compile(r"^    [0-9a-f]{2}( [0-9a-f]{2})*$")


def test_rules_doc_examples_run() -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)  # the examples read tests/data relative to the repository
    try:
        result = doctest.testfile(str(ROOT / "docs" / "rules.md"), module_relative=False)
    finally:
        os.chdir(cwd)
    assert result.attempted > 0
    assert result.failed == 0


def recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_record", ROOT / "docs" / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def frames(text: str) -> list[tuple[str, str, list[str]]]:
    """Each frame of a recording: its header line, its decoded map, its hex dump lines."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.endswith(" bytes)") and " → " in line:
            dump = []
            for more in lines[i + 2 :]:
                if not HEX.match(more):
                    break
                dump.append(more)
            found.append((line, lines[i + 1].strip(), dump))
    return found


def normalised(text: str) -> list[str]:
    """A recording without what varies from run to run: the times, and the sizes and bytes
    of the frames that carry a time (a msgpack integer is 1 to 9 bytes wide)."""
    out: list[str] = []
    timed = False
    for line in text.strip().splitlines():
        if HEX.match(line):
            if not timed:
                out.append(line)
            continue
        if line.startswith("  {"):
            timed = bool(TIMES.search(line) or ACTION_TIMES.search(line))
            if timed:
                out[-1] = re.sub(r"\(\d+ bytes\)$", "(N bytes)", out[-1])
            line = ACTION_TIMES.sub('[N, "', TIMES.sub(r'"\1": N', line))
        out.append(line)
    return out


def test_worked_examples_show_the_frames_as_they_are() -> None:
    """Every frame in section 7 is its decoded map: its size and any bytes shown are those
    of that map in msgpack (as the server and the recorder write it)."""
    doc = PROTOCOL.read_text(encoding="utf-8")
    shown = frames(doc)
    assert len(shown) > 150
    for header, decoded, dump in shown:
        data = msgpack.packb(json.loads(decoded))
        assert header.endswith(f"({len(data)} bytes)"), (header, decoded)
        if dump:
            assert bytes.fromhex(" ".join(dump)) == data, (header, decoded)


def test_worked_examples_are_what_the_server_sends() -> None:
    """Part I's example and section 7 are recorded from the server (docs/record.py): a
    change to what the server sends fails here until the examples are recorded again,
    with ``python docs/record.py --write``."""
    record = recorder()
    recorded = asyncio.run(record.record())
    doc = PROTOCOL.read_text(encoding="utf-8")
    assert set(recorded) == {"quick start", "7.1", "7.2", "7.3", "7.4"}
    for name, text in recorded.items():
        in_doc = record.recorded_in(doc, name)
        if name == "7.4":  # recorded with a fake clock: its times are exact too
            assert in_doc.splitlines() == text.splitlines(), f"section {name} is out of date"
        assert normalised(in_doc) == normalised(text), f"section {name} is out of date"
