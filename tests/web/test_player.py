"""Ratings in the browser (docs/protocol.md 4.27), in real Chromium through Playwright: a
rated room from the lobby, the rating beside the names and its change in the results, the
player screen with its chart (drawn as the server draws /players/NAME), and that page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.domain import pairs
from server.pages.http import rating_chart

from .test_app import Player, server_at, shot

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_rated_race_and_a_player_page_with_its_chart(
    browser: Any, tmp_path: Path, artifacts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A race of a test is seconds long: let a short run count (the rule that a run under
    # 3 moves or 10 s moves nobody is tests/server/domain/test_pairs.py's).
    monkeypatch.setattr(pairs, "MIN_MOVES", 0)
    monkeypatch.setattr(pairs, "MIN_TIME_MS", 0)
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        await alice.page.wait_for_selector("#my-standing >> text=no rating yet")
        await alice.page.check("#rated")  # a fresh secret deal: a rated room takes no code
        await alice.page.click("#create")
        await alice.until(lambda: alice.of("room"), "the room")
        room = alice.of("room")[-1]
        assert room["rated"] is True
        assert [f for f in alice.sent if f["t"] == "create"][-1]["rated"] is True
        await alice.page.wait_for_selector(".room-info >> text=rated")

        bob = await Player.open(browser, base, "bob", f"/r/{room['room']}")
        await bob.until(lambda: bob.of("room"), "bob in the room")
        await bob.page.click("#ready")
        await alice.page.wait_for_selector("text=Everyone is ready")
        await alice.page.click("#start")
        for p in (alice, bob):
            await p.until(lambda p=p: p.of("race"), f"{p.name}'s race")
        await bob.page.keyboard.press("r")
        await bob.page.keyboard.press("y")
        await bob.until(lambda: bob.of("progress"), "bob's resignation")
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        ranks = alice.of("result")[-1]["ranks"]
        assert all(r["rating"] is not None and r["rating_change"] is not None for r in ranks)
        mine = next(r for r in ranks if r["name"] == "alice")
        change = mine["rating_change"]
        shown = f"{mine['rating']} " + (
            f"+{change}" if change > 0 else f"−{-change}" if change < 0 else "±0"
        )
        await alice.page.wait_for_selector(f"table >> text={shown}")
        await shot(alice, artifacts, "rated-results")

        # alice's own page, from her name in the results: the rating and its chart.
        await alice.page.click("td.name a.who >> text=alice")
        # (one point: a line of no length, there but not "visible")
        await alice.page.wait_for_selector("#player-chart svg.chart polyline", state="attached")
        await alice.until(lambda: alice.of("player_page"), "the player page")
        page = [f for f in alice.received if f["t"] == "player_page"][-1]
        assert page["name"] == "alice" and page["rating"] == mine["rating"]
        chart = rating_chart(tuple((t, r) for t, r in page["ratings"]))
        assert chart is not None
        points = await alice.page.get_attribute("#player-chart polyline", "points")
        assert points is not None
        drawn = [tuple(float(v) for v in p.split(",")) for p in points.split()]
        wanted = [tuple(float(v) for v in p.split(",")) for p in chart.points.split()]
        assert drawn == wanted
        text = await alice.page.locator("#player-rating").inner_text()
        assert f"{mine['rating']}?" in text and "provisional" in text
        assert await alice.page.locator("#report").count() == 0  # my own page: no Report
        await shot(alice, artifacts, "player-screen")
        await alice.page.keyboard.press("Escape")
        await alice.page.wait_for_selector("#headline")

        # bob's page has Report: about our race (docs/protocol.md 4.33).
        await alice.page.click("td.name a.who >> text=bob")
        await alice.page.wait_for_selector("#player-title >> text=bob")
        await alice.page.click("#report")
        await alice.until(lambda: alice.of("reported"), "the report's answer")
        sent = [f for f in alice.sent if f["t"] == "report"][-1]
        assert sent["player"] == "bob"
        answer = alice.of("reported")[-1]
        assert answer == {"t": "reported", "player": "bob", "race": page_race(alice)}
        await alice.page.wait_for_selector("text=your report of bob is with the server's operators")
        await alice.page.click("#report")
        await alice.page.wait_for_selector("text=is with the operators already")
        await alice.page.keyboard.press("Escape")
        await alice.page.wait_for_selector("#headline")

        # The server's own page for the same player: the same chart, as inline SVG.
        await bob.page.goto(f"{base}/players/Alice")
        svg = bob.page.locator("svg.chart polyline")
        assert await svg.get_attribute("points") == chart.points
        assert f"{mine['rating']}?" in await bob.page.locator(".deal").inner_text()
        await bob.page.screenshot(path=str(artifacts / "web-player-page.png"))
        for p in (alice, bob):
            await p.close()


def page_race(p: Player) -> str:
    """The race of the last result the player got."""
    return str(p.of("result")[-1]["race"])
