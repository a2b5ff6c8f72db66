"""``/daily/log``: the daily's log as JSON (what both clients verify) and as a page
(docs/protocol.md 4.29). The entries are the store's; this module only shows them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.dailylog import LogEntry

from .common import TEMPLATES

__all__ = ["daily_log_json", "render_daily_log_html"]


def daily_log_json(entries: Sequence[LogEntry]) -> dict[str, Any]:
    """``/daily/log?format=json``: every entry, entry 0 first, and the head."""
    head = {"n": entries[-1].n, "hash": entries[-1].hash} if entries else None
    return {"entries": [e.to_json() for e in entries], "head": head}


def render_daily_log_html(entries: Sequence[LogEntry]) -> str:
    """The log as a page (``templates/dailylog.html``), newest first; no script."""
    return TEMPLATES.get_template("dailylog.html").render(
        entries=list(reversed(entries)), count=len(entries)
    )
