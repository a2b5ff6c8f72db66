"""The browser client's replays (docs/protocol.md 4.22) in headless Chromium.

A run crafted to throw a won deal away (as tests/server/domain/test_replays.py does) is opened
from the results, stepped through and checked position by position against the engine,
played at 16x, and judged by the post-mortem; its shared link plays in a fresh browser
that never registered a name; a running race and today's daily are refused with the
server's text, and nothing of their deal reaches the page.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from protocol import Game

from ..server.domain.test_replays import DEAL, LOSING_AFTER, LOSING_MOVE, solver_line
from .test_app import CODE, WAIT, Player, check_fairness, hidden_cards, server_at, shot, start_alone

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def shown(page: Any) -> tuple[int, list[list[str]], list[str]]:
    """The replay's position: its action number, the columns (face-up cards, "??" for a
    back) and the foundations' top cards."""
    await page.wait_for_function("() => document.querySelector('#replay-pos .figs')")
    figs = await page.locator("#replay-pos .figs").inner_text()
    cols: list[list[str]] = await page.evaluate(
        "() => [...document.querySelectorAll('.cols .col')].map(c =>"
        " [...c.querySelectorAll('.pc')].map(e => e.dataset.card ?? '??'))"
    )
    tops: list[str] = await page.evaluate(
        "() => [...document.querySelectorAll('.found-top')].map(e => e.dataset.card)"
    )
    return int(figs.split()[1]), cols, tops


async def no_cards(page: Any, code: str) -> None:
    """The page shows no card at all and not the code: a refused replay draws nothing."""
    html: str = await page.evaluate("() => document.documentElement.outerHTML")
    assert "data-card" not in html and 'class="pc' not in html and code not in html


def expected(game: Game) -> tuple[list[list[str]], list[str]]:
    """The runner's view of ``game``: face-down cards as "??"."""
    text = game.view().split(" ")[2]
    cols = [[c[i : i + 2] for i in range(0, len(c), 2)] for c in text.split("/")]
    tops = [
        "A23456789TJQK"[h - 1] + s
        for s, h in zip("SHDC", game.foundation_heights(), strict=True)
        if h
    ]
    return cols, tops


async def test_a_run_replayed_from_the_results_and_its_shared_link(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    line = solver_line()
    lost = Game.from_code(DEAL)
    for move in line[:LOSING_AFTER]:
        lost.play(move)
    plan = [*line[:LOSING_AFTER], LOSING_MOVE]
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        await start_alone(alice, DEAL)
        for move in plan:
            assert (await alice.play_keys(move))["t"] == "accepted", move
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        race = alice.of("result")[-1]["race"]
        # The results say the post-mortem of my run, asked over the websocket.
        await alice.page.wait_for_selector(
            f"#results-pm >> text=After move {LOSING_AFTER + 1}, {LOSING_MOVE}, no win was left"
        )
        assert [f["t"] for f in alice.sent].count("postmortem") == 1
        # The results' row opens the replay; the address bar becomes the run's link.
        await alice.page.click('button[aria-label="replay alice\'s run"]')
        await alice.page.wait_for_selector("#replay-title >> text=alice's run")
        assert alice.page.url == f"{base}/replay/{race}/alice"
        await alice.page.wait_for_selector(f"#postmortem >> text=After move {LOSING_AFTER + 1}")
        pm = await alice.page.locator("#postmortem").inner_text()
        assert f"{LOSING_MOVE}, no win was left" in pm and "instead wins" in pm
        # Step forward through every action: each position is the engine's view.
        game = Game.from_code(DEAL)
        for k in range(len(plan) + 1):
            if k:
                game.play(plan[k - 1])
            got = await shown(alice.page)
            assert got == (k, *expected(game)), k
            now = alice.page.locator(f"#replay-moves li.now[data-k='{k}']")
            assert await now.count() == (k > 0)
            await alice.page.keyboard.press("ArrowRight")
        await shot(alice, artifacts, "replay-desktop")
        # Back, start, end, a move number, the losing move (its better move lit).
        await alice.page.keyboard.press("ArrowLeft")
        assert (await shown(alice.page))[0] == len(plan) - 1
        await alice.page.click("#replay-start")
        assert (await shown(alice.page))[0] == 0
        await alice.page.click("#replay-end")
        assert (await shown(alice.page))[0] == len(plan)
        await alice.page.keyboard.press("g")
        await alice.page.keyboard.type("5")
        await alice.page.keyboard.press("Enter")
        assert (await shown(alice.page))[0] == 5
        await alice.page.click("#replay-losing")
        assert (await shown(alice.page))[0] == LOSING_AFTER
        await alice.page.wait_for_selector(".board .hinted")
        await alice.page.wait_for_selector(f"#replay-pos >> text=next: {LOSING_MOVE}")
        # Play at 16x from the start: it runs to the end by itself.
        await alice.page.click("#replay-start")
        await alice.page.click("#replay-speed")
        await alice.page.click("#replay-speed")
        assert await alice.page.locator("#replay-speed").inner_text() == "16x"
        await alice.page.keyboard.press(" ")
        await alice.page.wait_for_selector("#replay-play >> text=pause")
        await alice.page.wait_for_selector(
            f"#replay-pos .figs >> text=move {len(plan)} of", timeout=WAIT * 1000
        )
        await alice.page.wait_for_selector("#replay-play >> text=play")
        # Escape goes back to the results; the history's row and the deal board's row
        # open the same run, and Escape goes back to them.
        await alice.page.keyboard.press("Escape")
        await alice.page.wait_for_selector("h1 >> text=Results")
        assert alice.page.url.endswith("/r/" + alice.of("room")[-1]["room"])
        for key, title in (("h", "Your races"), ("b", "Leaderboards")):
            await alice.page.keyboard.press(key)
            await alice.page.wait_for_selector(f"h1 >> text={title}")
            await alice.page.click('button[aria-label="replay alice\'s run"]')
            await alice.page.wait_for_selector("#replay-title >> text=alice's run")
            await alice.page.wait_for_selector("#postmortem >> text=instead wins")
            await alice.page.keyboard.press("Escape")
            await alice.page.wait_for_selector(f"h1 >> text={title}")
            await alice.page.keyboard.press("Escape")
            await alice.page.wait_for_selector("h1 >> text=Results")

        # The shared link, in a fresh browser that has no name on this server.
        context = await browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(f"{base}/replay/{race}/alice")
        await page.wait_for_selector("#replay-title >> text=alice's run")
        await page.click("#replay-end")
        assert await shown(page) == (len(plan), *expected(game))
        await page.wait_for_selector("#postmortem >> text=instead wins")
        await page.screenshot(path=str(artifacts / "web-replay-phone.png"))
        boxes = await page.evaluate(
            "() => [...document.querySelectorAll('.cols .col')]"
            ".map(c => c.getBoundingClientRect().right)"
        )
        assert max(boxes) <= 390
        # Escape: no name yet, so the name is asked (then the lobby).
        await page.keyboard.press("Escape")
        await page.wait_for_selector("#ask-name")
        assert errors == []
        await context.close()
        await alice.close()


async def test_a_running_race_and_today_s_daily_are_refused(browser: Any, tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        # Today's daily: played and over, its code still secret, so its run is refused.
        today = dt.datetime.now(dt.UTC).date()
        choice = await server.boards.dailies.get(today)
        daily = Game.from_code(str(choice.code))
        await alice.page.keyboard.press("d")
        await alice.page.wait_for_selector("dialog >> text=your one attempt that counts")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("daily_deal"), "the daily deal")
        await alice.page.wait_for_selector(".board .pc.up")
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        race = alice.of("result")[-1]["race"]
        # The results' post-mortem is refused as the replay is: said there, not as an error.
        await alice.page.wait_for_selector("#results-pm >> text=are shown from")
        assert "error" not in (await alice.page.locator(".status").get_attribute("class") or "")
        bodies: list[str] = []

        async def body(response: Any) -> None:
            if "/replay/" in response.url and "format=json" in response.url:
                bodies.append(await response.text())

        alice.page.on("response", body)
        await alice.page.click('button[aria-label="replay alice\'s run"]')
        await alice.page.wait_for_selector("#replay-refused")
        text = await alice.page.locator("#replay-refused").inner_text()
        assert "00:35" in text or "public" in text, text
        secret = hidden_cards(daily)
        await no_cards(alice.page, str(choice.code))
        assert check_fairness(alice.received, str(choice.code)) > 0
        assert not alice.of("replay_page")
        await alice.until(lambda: bodies, "the refusal")
        for b in bodies:
            named = set(re.findall(r"\b[A2-9TJQK][SHDC]\b", b))
            assert str(choice.code) not in b and not named & secret, b
        # A race still running (bob races on): refused as running.
        await alice.page.keyboard.press("Escape")
        await alice.page.keyboard.press("l")
        bob = await Player.open(browser, base, "bob")
        await start_alone(bob)
        [race_id] = [r.uid for r in server.hub._rooms.values() if r.uid and r.uid != race]
        await alice.page.goto(f"{base}/replay/{race_id}/bob")
        await alice.page.wait_for_selector("#replay-refused >> text=running")
        await no_cards(alice.page, CODE)
        await bob.close()
        await alice.close()
