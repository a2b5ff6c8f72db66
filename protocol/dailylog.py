"""The daily's log: a hash chain of each day's commitment and every later change to a board.

A commitment (``protocol.commitment``) proves that one race's deal was never switched, but
only to the players who saw it before the start. The daily's log extends that to the whole
archive: every day's entry carries the hash of the entry before it, so an operator who
wanted to swap a past day's deal, or quietly drop a result from a past board, would have to
rewrite every later entry, and every client that verified the chain once keeps its head and
notices (docs/protocol.md 4.29).

An entry is a JSON object with exactly these keys:

- ``n``: its place in the chain, from 0;
- ``kind``: ``day`` (a day's deal was chosen: ``body`` holds its ``commitment`` and ``rules``)
  or ``board`` (a past board changed: ``body`` names the ``action``, such as ``void`` or
  ``mark``, and the ``player`` or ``race`` it touched, never why);
- ``date``: the day it is about, ``YYYY-MM-DD``;
- ``at``: when it was appended, ISO 8601 UTC to the second (``2026-12-07T00:00:03Z``);
- ``body``: an object whose values are strings, integers or null;
- ``prev``: the ``hash`` of entry ``n - 1``, or 64 zeros for entry 0;
- ``hash``: the lower-case hex SHA-256 of the entry's canonical form without ``hash``.

The canonical form is the JSON text with keys sorted, no spaces, ASCII only (``\\uXXXX``
escapes), and no floats anywhere, so that a client in any language (the web client in
JavaScript) computes the same bytes. Pure code: the server appends, the clients verify.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GENESIS",
    "ChainCheck",
    "EntryKind",
    "Head",
    "LogEntry",
    "canonical",
    "entry_hash",
    "make_entry",
    "verify_chain",
]

#: The ``prev`` of entry 0.
GENESIS = "0" * 64
_HEX64 = re.compile(r"[0-9a-f]{64}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_ORDER = ("n", "kind", "date", "at", "body", "prev", "hash")
_KEYS = frozenset(_ORDER)


class EntryKind(enum.StrEnum):
    """What an entry records."""

    #: A day's deal was chosen; its commitment is public from now on.
    DAY = "day"
    #: A past board changed (a void, a mark and their undos): appended, never edited.
    BOARD = "board"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One entry of the chain, as stored and as served."""

    n: int
    kind: EntryKind
    date: str
    at: str
    body: Mapping[str, str | int | None]
    prev: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        """The entry as the JSON object of the module docstring."""
        return {
            "n": self.n,
            "kind": self.kind.value,
            "date": self.date,
            "at": self.at,
            "body": dict(self.body),
            "prev": self.prev,
            "hash": self.hash,
        }


@dataclass(frozen=True, slots=True)
class Head:
    """The last entry a client verified: enough to tell whether a later chain extends it."""

    n: int
    hash: str


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """What ``verify_chain`` found: ``ok`` with the chain's head, or the first bad entry."""

    ok: bool
    #: The last entry of a good chain (None for an empty one or a bad one).
    head: Head | None
    #: Why the chain is bad, naming the entry (empty when ok).
    problem: str = ""
    #: Whether the chain is good and extends the head the caller gave (a good chain
    #: extends no head at all).
    extends: bool = True


def canonical(value: Any) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no spaces, ASCII, no floats."""
    _no_floats(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode(
        "ascii"
    )


def _no_floats(value: Any) -> None:
    # Floats print differently from one language to another: they have no canonical form.
    if isinstance(value, float):
        raise ValueError("the daily's log holds no floats")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError("the daily's log has string keys only")
            _no_floats(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _no_floats(item)


def entry_hash(
    n: int, kind: str, date: str, at: str, body: Mapping[str, str | int | None], prev: str
) -> str:
    """The hash of an entry: SHA-256 of its canonical form without ``hash``."""
    unsigned = {"n": n, "kind": kind, "date": date, "at": at, "body": dict(body), "prev": prev}
    return hashlib.sha256(canonical(unsigned)).hexdigest()


def make_entry(
    previous: LogEntry | None,
    kind: EntryKind,
    date: str,
    at: str,
    body: Mapping[str, str | int | None],
) -> LogEntry:
    """The entry that follows ``previous`` (None: the first of the chain)."""
    if not _DATE.fullmatch(date):
        raise ValueError(f"an entry's date is YYYY-MM-DD, not {date!r}")
    if not _AT.fullmatch(at):
        raise ValueError(f"an entry's time is YYYY-MM-DDTHH:MM:SSZ, not {at!r}")
    for key, value in body.items():
        if not isinstance(key, str) or not (value is None or isinstance(value, str | int)):
            raise ValueError(f"an entry's body holds strings, integers and null: {key!r}")
    n = 0 if previous is None else previous.n + 1
    prev = GENESIS if previous is None else previous.hash
    return LogEntry(n, kind, date, at, dict(body), prev, entry_hash(n, kind, date, at, body, prev))


def _problem(index: int, raw: Any, previous: Mapping[str, Any] | None) -> str:
    """Why ``raw`` cannot follow ``previous`` ('' when it can)."""
    if not isinstance(raw, Mapping) or set(raw) != _KEYS:
        return f"entry {index} is not an object with the keys {sorted(_KEYS)}"
    n, kind, date, at, body, prev, digest = (raw[k] for k in _ORDER)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return f"entry {index}: n is not a whole number"
    expected_n = 0 if previous is None else previous["n"] + 1
    if previous is not None and n != expected_n:
        return f"entry {n}: follows entry {previous['n']}"
    if kind not in {k.value for k in EntryKind}:
        return f"entry {n}: unknown kind {kind!r}"
    if not isinstance(date, str) or not _DATE.fullmatch(date):
        return f"entry {n}: bad date"
    if not isinstance(at, str) or not _AT.fullmatch(at):
        return f"entry {n}: bad time"
    if not isinstance(body, Mapping) or not all(
        isinstance(v, str) or v is None or (isinstance(v, int) and not isinstance(v, bool))
        for v in body.values()
    ):
        return f"entry {n}: bad body"
    if not isinstance(prev, str) or not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        return f"entry {n}: bad hash"
    if previous is None and n == 0 and prev != GENESIS:
        return "entry 0 does not start the chain"
    if previous is not None and prev != previous["hash"]:
        return f"entry {n} does not name entry {n - 1}'s hash: the chain was rewritten"
    if entry_hash(n, kind, date, at, body, prev) != digest:
        return f"entry {n}'s hash does not match its contents: it was edited"
    return ""


def verify_chain(entries: Sequence[Any], head: Head | None = None) -> ChainCheck:
    """Check a whole chain as served (entry 0 first), and whether it extends ``head``.

    Takes the decoded JSON as it came, so a client checks exactly what it was sent:
    anything malformed is a bad chain, never an exception.
    """
    previous: Mapping[str, Any] | None = None
    for index, raw in enumerate(entries):
        if previous is None and isinstance(raw, Mapping) and raw.get("n") != 0:
            return ChainCheck(False, None, "the chain does not start at entry 0", False)
        problem = _problem(index, raw, previous)
        if problem:
            return ChainCheck(False, None, problem, False)
        previous = raw
    if previous is None:
        return ChainCheck(True, None, "", head is None)
    last = Head(previous["n"], previous["hash"])
    if head is None:
        return ChainCheck(True, last)
    extends = head.n < len(entries) and entries[head.n]["hash"] == head.hash
    return ChainCheck(True, last, "" if extends else _rewritten(head), extends)


def _rewritten(head: Head) -> str:
    return (
        f"this chain does not extend the one verified before (entry {head.n},"
        f" {head.hash[:12]}...): a past entry was changed"
    )
