"""The daily's log: entries chain, any edit or rewrite is caught, bad input is a bad chain."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.dailylog import (
    GENESIS,
    EntryKind,
    Head,
    LogEntry,
    canonical,
    entry_hash,
    make_entry,
    verify_chain,
)

COMMIT = "ab" * 32


def _chain(days: int) -> list[LogEntry]:
    entries: list[LogEntry] = []
    for day in range(days):
        previous = entries[-1] if entries else None
        date = f"2026-12-{day + 1:02d}"
        entries.append(
            make_entry(
                previous,
                EntryKind.DAY,
                date,
                f"{date}T00:00:0{day % 10}Z",
                {"commitment": COMMIT, "rules": "C"},
            )
        )
    return entries


def _json(entries: list[LogEntry]) -> list[dict[str, Any]]:
    return [e.to_json() for e in entries]


def test_the_vector_other_languages_check_against() -> None:
    # The web client's JavaScript is tested against these same bytes and hash.
    first = make_entry(
        None,
        EntryKind.DAY,
        "2026-12-07",
        "2026-12-07T00:00:03Z",
        {"commitment": COMMIT, "rules": "C"},
    )
    unsigned = (
        '{"at":"2026-12-07T00:00:03Z","body":{"commitment":"' + COMMIT + '","rules":"C"},'
        '"date":"2026-12-07","kind":"day","n":0,"prev":"' + GENESIS + '"}'
    )
    assert first.hash == hashlib.sha256(unsigned.encode()).hexdigest()
    assert first.prev == GENESIS and first.n == 0


def test_a_chain_verifies_and_names_its_head() -> None:
    entries = _chain(5)
    check = verify_chain(_json(entries))
    assert check.ok and check.extends
    assert check.head == Head(4, entries[-1].hash)
    assert entries[3].prev == entries[2].hash


def test_an_empty_chain_is_good_but_extends_no_head() -> None:
    assert verify_chain([]).ok
    assert not verify_chain([], Head(0, "0" * 64)).extends


def test_an_edited_entry_is_caught() -> None:
    served = _json(_chain(4))
    served[1]["body"]["commitment"] = "cd" * 32
    check = verify_chain(served)
    assert not check.ok and "entry 1" in check.problem and "edited" in check.problem


def test_a_rewritten_past_is_caught_by_the_head_a_client_kept() -> None:
    entries = _chain(4)
    kept = verify_chain(_json(entries)).head
    assert kept is not None
    # The operator rebuilds the chain from day 2 with another commitment: it verifies on
    # its own, but no longer extends the head the client kept.
    forged = entries[:2]
    forged.append(
        make_entry(
            forged[-1],
            EntryKind.DAY,
            "2026-12-03",
            "2026-12-03T00:00:02Z",
            {"commitment": "ee" * 32, "rules": "C"},
        )
    )
    forged.append(
        make_entry(
            forged[-1],
            EntryKind.DAY,
            "2026-12-04",
            "2026-12-04T00:00:03Z",
            {"commitment": COMMIT, "rules": "C"},
        )
    )
    check = verify_chain(_json(forged), kept)
    assert check.ok and not check.extends and "does not extend" in check.problem
    # A longer honest chain does extend it.
    longer = [
        *entries,
        make_entry(
            entries[-1],
            EntryKind.BOARD,
            "2026-12-02",
            "2026-12-05T10:00:00Z",
            {"action": "void", "race": 17},
        ),
    ]
    assert verify_chain(_json(longer), kept).extends
    # A shorter one (the last entries dropped) does not.
    assert not verify_chain(_json(entries[:2]), kept).extends


def test_a_dropped_entry_is_caught() -> None:
    served = _json(_chain(4))
    del served[2]
    check = verify_chain(served)
    assert not check.ok and "follows entry 1" in check.problem


@pytest.mark.parametrize(
    "breakage",
    [
        lambda e: e.pop("hash"),
        lambda e: e.update(n=True),
        lambda e: e.update(kind="swap"),
        lambda e: e.update(date="7 Dec"),
        lambda e: e.update(at=1.5),
        lambda e: e.update(body=[1]),
        lambda e: e["body"].update(x=1.5),
        lambda e: e.update(prev=None),
        lambda e: e.update(hash="XYZ"),
        lambda e: e.update(extra=1),
    ],
)
def test_malformed_entries_are_a_bad_chain_never_an_exception(breakage: Any) -> None:
    served = _json(_chain(3))
    breakage(served[1])
    assert not verify_chain(served).ok


def test_not_even_objects() -> None:
    for served in ([1, 2], ["x"], [None], [{"n": 0}]):
        assert not verify_chain(served).ok


def test_floats_have_no_canonical_form() -> None:
    with pytest.raises(ValueError):
        canonical({"a": 1.0})
    with pytest.raises(ValueError):
        make_entry(None, EntryKind.DAY, "2026-12-07", "2026-12-07T00:00:00Z", {"x": 0.5})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        make_entry(None, EntryKind.DAY, "12/07", "2026-12-07T00:00:00Z", {})


@given(
    st.lists(
        st.dictionaries(
            st.text(max_size=8),
            st.one_of(st.none(), st.integers(), st.text(max_size=20)),
            max_size=4,
        ),
        min_size=1,
        max_size=6,
    ),
    st.data(),
)
def test_any_single_change_is_caught(bodies: list[dict[str, Any]], data: st.DataObject) -> None:
    entries: list[LogEntry] = []
    for body in bodies:
        entries.append(
            make_entry(
                entries[-1] if entries else None,
                EntryKind.BOARD,
                "2026-12-07",
                "2026-12-07T00:00:00Z",
                body,
            )
        )
    served = _json(entries)
    assert verify_chain(served).ok
    i = data.draw(st.integers(0, len(served) - 1))
    changed = copy.deepcopy(served)
    changed[i]["body"]["\u00e9"] = "tampered"
    if served[i]["body"].get("\u00e9") != "tampered":
        assert not verify_chain(changed).ok
    assert entry_hash(0, "day", "2026-12-07", "2026-12-07T00:00:00Z", {}, GENESIS) != entry_hash(
        1, "day", "2026-12-07", "2026-12-07T00:00:00Z", {}, GENESIS
    )
