"""The terminal client's check of the daily's log (docs/protocol.md 4.29).

When a past daily is played from the archive, the client fetches ``/daily/log`` from the
server it is connected to, verifies the whole chain (``protocol.dailylog``), finds the
day's entry and compares its commitment with the one the server sent for the run. It keeps
the head it verified per server (``dailylog_heads.json`` in the config directory) and, the
next time, requires the new chain to extend it: an operator who swapped a past day's deal
or quietly changed a past board would have had to rewrite the chain, which this shows.
A head is only ever replaced by a later one of a chain that extends it.

The question goes over plain HTTP(S) to the address the client dialled, in a thread, with
a timeout; a server that does not answer (an older one) is said so, never fatal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.dailylog import Head, verify_chain

from .config import _read_map, _write_json
from .invite import invite_link

__all__ = ["DayCheck", "HeadMemory", "check_day", "log_url"]

TIMEOUT_S = 5.0
#: The most of the log read: about 300 bytes a day, so decades of days.
MAX_BYTES = 8 << 20


@dataclass(frozen=True)
class DayCheck:
    """What to tell the player: ``good`` only when the chain verified, extends the kept
    head and holds the day with the commitment the run was dealt under."""

    good: bool
    text: str


class HeadMemory:
    """The last verified head of each server's log, kept in a small JSON file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "dailylog_heads.json"

    def load(self, server: str) -> Head | None:
        raw = _read_map(self.path).get(server)
        if (
            isinstance(raw, dict)
            and isinstance(raw.get("n"), int)
            and isinstance(raw.get("hash"), str)
        ):
            return Head(raw["n"], raw["hash"])
        return None

    def save(self, server: str, head: Head) -> None:
        data = _read_map(self.path)
        data[server] = {"n": head.n, "hash": head.hash}
        _write_json(self.directory, self.path, data)


def log_url(server_url: str) -> str:
    """``/daily/log?format=json`` on the server dialled at ``server_url`` (ws:// or wss://)."""
    return invite_link(server_url, "X").removesuffix("/r/X") + "/daily/log?format=json"


def _get(url: str, context: ssl.SSLContext | None) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as response:
        return json.loads(response.read(MAX_BYTES).decode("utf-8"))


def judge(
    served: Any, date: str, commitment: str | None, kept: Head | None
) -> tuple[DayCheck, Head | None]:
    """The verdict on a served log (pure): what to say, and the head to keep (None: keep
    the old one)."""
    entries = served.get("entries") if isinstance(served, dict) else None
    if not isinstance(entries, list):
        return DayCheck(
            False, "the daily's log is not a list of entries: this day is unchecked"
        ), None
    check = verify_chain(entries, kept)
    if not check.ok:
        return DayCheck(False, f"the daily's log is broken: {check.problem}"), None
    if not check.extends:
        return DayCheck(False, f"WARNING: {check.problem}"), None
    day = next((e for e in entries if e["kind"] == "day" and e["date"] == date), None)
    if day is None:
        return DayCheck(
            False, f"{date} is not in the daily's log: this day is unchecked"
        ), check.head
    if commitment is None or day["body"].get("commitment") != commitment:
        return (
            DayCheck(False, f"WARNING: {date}'s deal is NOT the one the daily's log committed to"),
            check.head,
        )
    return DayCheck(
        True, f"{date} checked: in the daily's log (entry {day['n']}), chain intact"
    ), check.head


async def check_day(
    server_url: str,
    date: str,
    commitment: str | None,
    heads: HeadMemory | None,
    *,
    cafile: Path | None = None,
) -> DayCheck:
    """Fetch, verify and judge; keep the new head. Never raises on what a server sends."""
    try:
        url = log_url(server_url)
    except ValueError:
        return DayCheck(False, "this server's address has no web side: the day is unchecked")
    context = None
    if url.startswith("https://"):
        context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    try:
        served = await asyncio.wait_for(asyncio.to_thread(_get, url, context), TIMEOUT_S + 1)
    except (OSError, ValueError, TimeoutError, urllib.error.URLError):
        return DayCheck(False, "the daily's log could not be fetched: this day is unchecked")
    kept = heads.load(server_url) if heads is not None else None
    verdict, head = judge(served, date, commitment, kept)
    if head is not None and heads is not None:
        with contextlib.suppress(OSError):
            heads.save(server_url, head)
    return verdict
