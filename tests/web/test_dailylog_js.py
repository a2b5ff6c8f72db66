"""``server/pages/web/dailylog.js`` checks the daily's log exactly as ``protocol/dailylog.py``
does: the same canonical bytes (non-ASCII, escapes, nested keys), the same verdict on good,
edited, rewritten, truncated and malformed chains, and a past day found and checked
against the head the browser kept."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from protocol.dailylog import EntryKind, Head, LogEntry, canonical, make_entry, verify_chain

from .node import HERE, run_node

CHECK = HERE / "dailylog_check.mjs"


def _chain(n: int, rng: random.Random) -> list[LogEntry]:
    out: list[LogEntry] = []
    for i in range(n):
        date = f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}"
        if rng.random() < 0.7:
            body: dict[str, str | int | None] = {
                "commitment": f"{rng.getrandbits(256):064x}",
                "rules": rng.choice(["C", "CT", "R"]),
            }
            kind = EntryKind.DAY
        else:
            body = {
                "action": rng.choice(["void", "mark", "unmark"]),
                "player": "Zoë ☃ 😀",
                "race": rng.randrange(10**9),
                "note": None,
            }
            kind = EntryKind.BOARD
        out.append(
            make_entry(out[-1] if out else None, kind, date, f"{date}T00:00:0{i % 10}Z", body)
        )
    return out


def test_the_browser_agrees_with_the_server() -> None:
    rng = random.Random(40)
    chains: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    for size in (0, 1, 2, 7, 30):
        served = [e.to_json() for e in _chain(size, rng)]
        variants: list[tuple[list[Any], Head | None]] = [(served, None)]
        if size >= 2:
            edited = copy.deepcopy(served)
            edited[1]["body"]["x"] = "y"
            dropped = copy.deepcopy(served)
            del dropped[0]
            rewired = copy.deepcopy(served)
            rewired[-1]["prev"] = "f" * 64
            variants += [
                (edited, None),
                (dropped, None),
                (rewired, None),
                (served, Head(1, served[1]["hash"])),
                (served, Head(1, "a" * 64)),
                (served[:1], Head(1, served[1]["hash"])),
            ]
        malformed = [*copy.deepcopy(served), {"n": size}] if size else [[1]]
        variants.append((malformed, None))
        for entries, head in variants:
            chains.append(
                {
                    "entries": entries,
                    "head": None if head is None else {"n": head.n, "hash": head.hash},
                }
            )
            check = verify_chain(entries, head)
            expected.append(
                {
                    "ok": check.ok,
                    "extends": check.extends,
                    "head": None
                    if check.head is None
                    else {"n": check.head.n, "hash": check.head.hash},
                    "problem": bool(check.problem),
                }
            )
    values: list[Any] = [
        {"b": [1, "é", None], "a": {"z": '\u2028\n\t\x01\x7f/\\"', "y": -3}},
        "😀",
        True,
        2**40,
    ]
    got = run_node(CHECK, {"chains": chains, "canonical": values, "days": []})
    # The verdicts agree; the texts may say it in other words.
    assert [{**c, "problem": bool(c["problem"])} for c in got["chains"]] == expected
    assert got["canonical"] == [canonical(v).decode() for v in values]


def test_a_past_day_is_checked_against_the_head_the_browser_kept() -> None:
    entries = _chain(5, random.Random(7))
    served = {"entries": [e.to_json() for e in entries]}
    day = next(e for e in entries if e.kind is EntryKind.DAY)
    forged = copy.deepcopy(served)
    forged["entries"][day.n]["body"]["commitment"] = "0" * 64
    # A forger who recomputes every hash from the changed entry on: a good chain on its
    # own, which no longer extends the head this browser kept.
    rebuilt: list[LogEntry] = list(entries[: day.n])
    for e in entries[day.n :]:
        body = dict(e.body)
        if e.n == day.n:
            body["commitment"] = "0" * 64
        rebuilt.append(make_entry(rebuilt[-1] if rebuilt else None, e.kind, e.date, e.at, body))
    good = day.body["commitment"]
    days = [
        {"date": day.date, "commitment": good, "served": served},
        {"date": day.date, "commitment": "1" * 64, "served": served},
        {"date": "1999-01-01", "commitment": good, "served": served},
        {"date": day.date, "commitment": good, "served": forged},
        {
            "date": day.date,
            "commitment": "0" * 64,
            "served": {"entries": [x.to_json() for x in rebuilt]},
        },
        {"date": day.date, "commitment": good, "served": "fail"},
        {"date": day.date, "commitment": good, "served": served},
    ]
    got = run_node(CHECK, {"chains": [], "canonical": [], "days": days})["days"]
    assert got[0]["good"] and "chain intact" in got[0]["text"]
    assert not got[1]["good"] and "NOT the one" in got[1]["text"]
    assert not got[2]["good"] and "not in the daily's log" in got[2]["text"]
    assert not got[3]["good"] and "edited" in got[3]["text"]
    assert not got[4]["good"] and got[4]["text"].startswith("WARNING")
    assert "does not extend" in got[4]["text"]
    assert not got[5]["good"] and "could not be fetched" in got[5]["text"]
    assert got[6]["good"]  # the kept head was never replaced by the forged chain's
    assert json.dumps(got)  # plain JSON all the way
