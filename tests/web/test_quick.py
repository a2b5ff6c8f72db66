"""Issue 29's quick race in headless Chromium against a real server: two browsers press
Quick race and race each other, on a deal drawn in secret (its commitment checked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protocol import Game

from .test_app import (
    CARD,
    Player,
    check_fairness,
    dom_shows_no_secret,
    hidden_cards,
    server_at,
    shot,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_two_browsers_press_quick_race_and_race_each_other(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    async with server_at(tmp_path, quick_fill_s=0.5) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        await alice.page.click("#quick")
        await alice.until(lambda: alice.of("pool"), "alice in the pool")
        assert alice.of("pool")[-1]["state"] == "waiting"
        # Alone: the page says nobody else waits, and never pairs her with a made-up player.
        await alice.page.wait_for_selector("#quick-info >> text=Nobody else is waiting yet")
        assert await alice.page.is_visible("#quick-leave")
        await shot(alice, artifacts, "quick-waiting")
        # Leave, and back in.
        await alice.page.click("#quick-leave")
        await alice.until(lambda: alice.of("pool")[-1]["state"] == "left", "alice out")
        await alice.page.wait_for_selector("#quick:visible")
        await alice.page.keyboard.press("q")  # the lobby's key
        await alice.until(lambda: alice.of("pool")[-1]["state"] == "waiting", "alice back")

        bob = await Player.open(browser, base, "bob", viewport={"width": 390, "height": 844})
        await bob.page.click("#quick")
        for p in (alice, bob):
            await p.until(lambda p=p: p.of("race"), f"{p.name}'s race")
            await p.page.wait_for_selector(".board .pc.up")
        room = alice.of("room")[0]
        assert room["quick"] is True and room["code"] is None and room["commitment"]
        assert sorted(pl["name"] for pl in room["players"]) == ["alice", "bob"]
        assert bob.of("room")[0]["room"] == room["room"]
        assert any(f["t"] == "countdown" for f in bob.received)

        # They race: a move each, seen in each other's standings.
        for p in (alice, bob):
            game = Game.from_position(p.of("race")[-1]["view"])
            accepted = await p.play_keys(game.legal_moves()[0])
            assert accepted["t"] == "accepted"
            # The move may turn a card up (the accepted frame names it): it is no secret now.
            await dom_shows_no_secret(p, hidden_cards(game) - set(CARD.findall(str(accepted))))
        await bob.page.wait_for_selector(".standings >> text=alice")
        await alice.page.wait_for_selector(".standings >> text=bob")
        await shot(bob, artifacts, "quick-race-phone")
        for p in (alice, bob):
            await p.page.click("#resign")
            await p.page.click("dialog #yes")
        for p in (alice, bob):
            await p.until(lambda p=p: p.of("result"), f"{p.name}'s result")
        code = alice.of("result")[-1]["code"]
        check_fairness(alice.received, code)
        check_fairness(bob.received, code)
        for p in (alice, bob):
            await p.close()
