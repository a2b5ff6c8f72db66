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
import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "docs" / "protocol.md"
#: Section 7, the worked examples, on a page of its own (issue 41 item 5).
EXAMPLES = ROOT / "docs" / "protocol-examples.md"
#: The fields that hold times, which differ from one recording to the next.
TIMES = re.compile(r'"(elapsed_ms|time_ms|finished_ms|at|next_daily_ms)": \d+')
#: The times of a replay's actions (``"actions": [[257, "5C>4"], ...]``), which differ too.
ACTION_TIMES = re.compile(r'\[\d+, "')
#: The times of a rating history's points (``"ratings": [[1795..., 1662]]``).
RATING_TIMES = re.compile(r"\[\d{12,}, ")
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
            timed = bool(
                TIMES.search(line) or ACTION_TIMES.search(line) or RATING_TIMES.search(line)
            )
            if timed:
                out[-1] = re.sub(r"\(\d+ bytes\)$", "(N bytes)", out[-1])
            line = ACTION_TIMES.sub('[N, "', TIMES.sub(r'"\1": N', line))
            line = RATING_TIMES.sub("[N, ", line)
        out.append(line)
    return out


def test_worked_examples_show_the_frames_as_they_are() -> None:
    """Every frame in section 7 is its decoded map: its size and any bytes shown are those
    of that map in msgpack (as the server and the recorder write it)."""
    doc = PROTOCOL.read_text(encoding="utf-8") + EXAMPLES.read_text(encoding="utf-8")
    shown = frames(doc)
    assert len(shown) > 150
    for header, decoded, dump in shown:
        data = msgpack.packb(json.loads(decoded))
        assert header.endswith(f"({len(data)} bytes)"), (header, decoded)
        if dump:
            assert bytes.fromhex(" ".join(dump)) == data, (header, decoded)


@pytest.mark.slow
def test_worked_examples_are_what_the_server_sends() -> None:
    """Part I's example and section 7 are recorded from the server (docs/record.py): a
    change to what the server sends fails here until the examples are recorded again,
    with ``python docs/record.py --write``."""
    record = recorder()
    recorded = asyncio.run(record.record())
    doc = PROTOCOL.read_text(encoding="utf-8") + EXAMPLES.read_text(encoding="utf-8")
    assert set(recorded) == {"quick start", "7.1", "7.2", "7.3", "7.4", "7.6", "4.26"}
    for name, text in recorded.items():
        in_doc = record.recorded_in(doc, name)
        if name == "7.4":  # recorded with a fake clock: its times are exact too
            assert in_doc.splitlines() == text.splitlines(), f"section {name} is out of date"
        assert normalised(in_doc) == normalised(text), f"section {name} is out of date"


_NUMBERS = {
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "twenty-one": 21,
    "twenty-two": 22,
}


def test_the_protocol_counts_the_client_types_it_lists() -> None:
    """Issue 28, item 20: section 1.4's count of client types, section 3.3's count and list,
    and the headings of section 3.1 all agree with the code's ``CLIENT_TYPES``."""
    from protocol.messages import CLIENT_TYPES, SERVER_TYPES

    text = PROTOCOL.read_text(encoding="utf-8")
    said = re.search(r"not one of the ([a-z-]+) client types of section 3\.1", text)
    assert said is not None
    assert _NUMBERS[said.group(1)] == len(CLIENT_TYPES)
    listed = re.search(r"\| message types, client → server \((\d+)\) \| (.*) \|", text)
    assert listed is not None
    assert int(listed.group(1)) == len(CLIENT_TYPES)
    assert set(re.findall(r"`(\w+)`", listed.group(2))) == set(CLIENT_TYPES)
    served = re.search(r"\| message types, server → client \((\d+)\) \| (.*) \|", text)
    assert served is not None
    assert int(served.group(1)) == len(SERVER_TYPES)
    assert set(re.findall(r"`(\w+)`", served.group(2))) == set(SERVER_TYPES)
    section = text.split("### 3.1 Client → server", 1)[1].split("### 3.2", 1)[0]
    headed = set()
    for heading in re.findall(r"^#### (.*)$", section, flags=re.M):
        headed |= set(re.findall(r"`(\w+)`", heading.split(":")[0]))
    assert headed == set(CLIENT_TYPES)


def test_the_daily_seed_example_is_what_the_code_computes() -> None:
    """Issue 28, item 20: docs/fairness.md's worked example of a daily deal's seed (key,
    message bytes, candidate numbering, HMAC, seed, code, and which candidate is the day's
    deal) is what ``server.domain.daily`` computes."""
    import base64
    import datetime as dt
    import hashlib
    import hmac

    from protocol import GameCode, Rules
    from server.domain.daily import candidate_code, choose_daily

    text = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    block = text.split("<!-- daily seed example -->", 1)[1].split("<!-- end of", 1)[0]
    lines = [line for line in block.splitlines() if ":" in line and not line.startswith("`")]
    fields = [(k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in lines)]
    head = dict(fields[:3])
    key = re.fullmatch(r'the UTF-8 of "(.*)"', head["key"])
    assert key is not None
    secret = key.group(1).encode()
    date = dt.date.fromisoformat(head["date"])
    rules = Rules.parse(head["rules"])
    candidates: list[dict[str, str]] = []
    for k, v in fields[3:]:
        if k == "candidate":
            candidates.append({})
        if k == "the day's deal":
            chosen = v
        else:
            candidates[-1][k] = v
    assert [int(c["candidate"]) for c in candidates] == list(range(len(candidates)))
    for n, c in enumerate(candidates):
        message = f"yukon-daily:{date.isoformat()}" + (f":{n}" if n else "")
        assert c["message"] == message
        digest = hmac.new(secret, message.encode("ascii"), hashlib.sha256).digest()
        assert c["hmac"] == digest.hex()
        assert c["seed"] == digest[:16].hex()
        code = candidate_code(secret, date, rules, n)
        assert (
            c["code"]
            == str(code)
            == f"YU1-{rules}-" + base64.b32encode(digest[:16]).decode().rstrip("=")
        )
        assert GameCode.parse(c["code"]) == code
    choice = choose_daily(secret, date, rules)
    assert chosen == f"candidate {choice.candidate}, {choice.code}"
    assert choice.candidate == len(candidates) - 1
    assert candidates[-1]["solver"] == "won"
    assert all(c["solver"].startswith("lost") for c in candidates[:-1])
