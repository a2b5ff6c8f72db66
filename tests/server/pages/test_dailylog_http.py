"""``/daily/log``: the daily's log served as JSON (what both clients verify) and as a page,
over a real socket, with each day the server chose in it (docs/protocol.md 4.29)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from protocol.dailylog import verify_chain
from server.pages.dailylog import daily_log_json, render_daily_log_html

from ..wire import running_server
from .test_http import NOON, TODAY, Clock, fetch


async def test_the_log_holds_each_day_the_server_chose(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path, wall_clock=Clock(NOON)) as server:
        today = await server.boards.dailies.get(TODAY)
        yesterday = await server.boards.dailies.get(TODAY - dt.timedelta(days=1))
        reply = await fetch(server, "/daily/log?format=json")
        assert reply.headers["content-type"].startswith("application/json")
        assert reply.headers["cache-control"] == "no-cache"
        served = reply.json()
        check = verify_chain(served["entries"])
        assert check.ok and check.head is not None
        assert served["head"] == {"n": check.head.n, "hash": check.head.hash}
        days = {e["date"]: e["body"]["commitment"] for e in served["entries"]}
        assert days[TODAY.isoformat()] == today.commitment
        assert days[(TODAY - dt.timedelta(days=1)).isoformat()] == yesterday.commitment
        # The server chooses the next day ahead: its entry may be there before the day
        # begins (a salted commitment tells nothing of the deal), and no day is twice.
        assert len(served["entries"]) == len(days) <= 3
        # The page shows the same, and never the codes or salts.
        page = await fetch(server, "/daily/log")
        assert page.status == 200 and page.headers["content-type"].startswith("text/html")
        assert str(today.commitment) in page.text and str(today.code) not in page.text
        assert str(today.salt) not in page.text


def test_an_empty_log_says_when_its_first_entry_comes() -> None:
    assert daily_log_json([]) == {"entries": [], "head": None}
    assert "the first entry comes with the first daily deal" in render_daily_log_html([])


async def test_a_bad_format_is_a_clear_400(tmp_path: Path) -> None:
    async with running_server(f"sqlite:///{tmp_path}/y.db", tmp_path) as server:
        bad = await fetch(server, "/daily/log?format=xml")
        assert bad.status == 400 and "format is html or json" in bad.text
        twice = await fetch(server, "/daily/log?format=json&format=html")
        assert twice.status == 400
        post = await fetch(server, "/daily/log", method="POST")
        assert post.status == 405
