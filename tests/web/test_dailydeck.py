"""Issue 29 in the browser (docs/protocol.md 4.28): the four-colour deck and suits as
letters, readable (axe-core's colour-contrast rule in Chromium, both modes, on a phone and
a desktop), kept per player; the countdown from the server's clock in a browser whose own
clock is wrong; a past day played from the archive, from the lobby and from the
/leaderboard page's link.

axe-core comes from the ``axe-playwright-python`` package (the ``test`` extra), which
ships ``axe.min.js``: injected into the page by Playwright, it needs nothing of the page's
CSP."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.runtime.executor import RaceServer

from ..server.wire import running_server
from .test_app import CODE, Player, shot, start_alone

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: The server's clock in these tests: 18:00 UTC, so the next daily is 6 h away.
EVENING = dt.datetime(2026, 11, 29, 18, tzinfo=dt.UTC).timestamp()
#: The browser's own clock is this far off (5 h 13 min 17 s fast): the countdown ignores it.
SKEW_MS = (5 * 3600 + 13 * 60 + 17) * 1000
#: Every Date in the page runs SKEW_MS ahead; performance.now() is left as it is.
SKEWED_CLOCK = """
(() => {
  const Real = Date, skew = SKEW;
  class Skewed extends Real {
    constructor(...a) { if (a.length) super(...a); else super(Real.now() + skew); }
    static now() { return Real.now() + skew; }
  }
  globalThis.Date = Skewed;
})();
""".replace("SKEW", str(SKEW_MS))


@contextlib.asynccontextmanager
async def server_at_evening(tmp_path: Path) -> AsyncIterator[RaceServer]:
    """A server (as tests/server/wire.py starts one) whose wall clock starts at
    ``EVENING`` and runs at the real pace."""
    started = time.time()
    wall = lambda: EVENING + (time.time() - started)  # noqa: E731
    async with running_server(f"sqlite:///{tmp_path}/web.db", tmp_path, wall_clock=wall) as srv:
        yield srv


async def contrast(page: Any) -> tuple[list[Any], int]:
    """axe-core's colour-contrast rule on the page: its violations, and how many nodes
    passed (so that a check that looked at nothing cannot pass)."""
    from axe_playwright_python.async_playwright import Axe

    results = await Axe().run(
        page,
        options={
            "runOnly": {"type": "rule", "values": ["color-contrast"]},
            "resultTypes": ["violations", "passes"],
        },
    )
    raw = results.response
    passed = sum(len(r["nodes"]) for r in raw["passes"])
    return raw["violations"], passed


async def card_inks(page: Any) -> dict[str, str]:
    """The computed colour of a face-up card of each suit on the board."""
    inks: dict[str, str] = await page.evaluate(
        "() => Object.fromEntries(['S','H','D','C'].map(s => {"
        " const el = document.querySelector(`.board .pc.up.s-${s}`)"
        "   ?? document.querySelector(`.deck-sample .s-${s}`);"
        " return [s, el ? getComputedStyle(el).color : null]; }))"
    )
    return inks


BLACK, RED = "rgb(29, 35, 32)", "rgb(192, 57, 43)"
BLUE, GREEN = "rgb(26, 79, 194)", "rgb(23, 115, 58)"


@pytest.mark.parametrize(
    ("size", "phone"),
    [({"width": 390, "height": 844}, True), ({"width": 1280, "height": 800}, False)],
    ids=["390x844", "desktop"],
)
async def test_the_four_colour_deck_and_letters_are_readable_and_kept(
    browser: Any, tmp_path: Path, artifacts: Path, size: dict[str, int], phone: bool
) -> None:
    async with server_at_evening(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(
            browser, base, "alice", viewport=size, has_touch=phone, is_mobile=phone
        )
        page = alice.page
        tag = "phone" if phone else "desktop"
        # The usual deck first: two colours, symbols.
        await start_alone(alice, CODE)
        inks = await card_inks(page)
        assert inks["H"] == RED and inks["D"] == RED and inks["C"] == BLACK, inks
        violations, passed = await contrast(page)
        assert violations == [] and passed > 10, violations
        await page.keyboard.press("r")  # resign, then back to the lobby
        await page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        await page.keyboard.press("l")
        await page.wait_for_selector("#deck-box")

        # Four colours and letters, chosen in the lobby: the board follows at once.
        await page.check("#deck-four")
        await page.check("#deck-letters")
        assert re.sub(r"\s", "", await page.locator(".deck-sample").inner_text()) == "SHDC"
        await shot(alice, artifacts, f"lobby-deck-{tag}")
        await start_alone(alice, CODE)
        inks = await card_inks(page)
        assert (inks["S"] or BLACK) == BLACK and inks["H"] == RED, inks
        assert inks["D"] in (BLUE, None) and inks["C"] in (GREEN, None), inks
        assert BLUE in inks.values() or GREEN in inks.values(), inks  # one shows at least
        pips = await page.locator(".board .pc.up .pip").all_inner_texts()
        assert pips and set(pips) <= set("SHDC"), pips
        # The cards' names for a screen reader do not change: "seven of spades, column 5,
        # face up" (tests/web/test_access.py), whatever the pips show.
        labels = await page.locator(".board .pc.up").evaluate_all(
            "els => els.map(e => e.getAttribute('aria-label'))"
        )
        assert all(
            re.fullmatch(r"\w+ of (spades|hearts|diamonds|clubs), column \d, face up", x)
            for x in labels
        ), labels
        violations, passed = await contrast(page)
        assert violations == [] and passed > 10, violations
        await shot(alice, artifacts, f"four-colour-{tag}")

        # Kept for this player in this browser: a reload brings the same deck back.
        await page.reload()
        await page.wait_for_selector(".board .pc.up.s-S")
        assert await page.evaluate("document.documentElement.className") == (
            "four-colour suit-letters"
        )
        saved = await page.evaluate("localStorage.getItem('yukon.deck.alice')")
        assert saved == '{"four":true,"letters":true}'
        # The dark colour scheme keeps the cards' faces, so their contrast too.
        await page.emulate_media(color_scheme="dark")
        violations, passed = await contrast(page)
        assert violations == [] and passed > 10, violations
        await shot(alice, artifacts, f"four-colour-{tag}-dark")
        await alice.close()


async def test_the_countdown_follows_the_server_s_clock_not_the_browser_s(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    async with server_at_evening(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        await context.add_init_script(SKEWED_CLOCK)
        page = await context.new_page()
        # The page's clock is off by hours: a countdown made from it would say about
        # 6 h minus the skew, or count to the browser's own midnight.
        await page.goto(base + "/")
        assert abs(await page.evaluate("Date.now()") - time.time() * 1000 - SKEW_MS) < 60_000
        await page.fill("#ask-name", "carol")
        await page.press("#ask-name", "Enter")
        line = page.locator("#next-daily")
        await line.wait_for()
        text = await line.inner_text()
        # 6 h by the server's clock, less the moment the test took: 5:59:xx or 6:00:00.
        assert re.fullmatch(r"Next daily deal in (5:59:\d\d|6:00:00)", text), text
        # It counts down on the page's own monotonic clock.
        await page.wait_for_function(
            "t => document.querySelector('#next-daily').textContent !== t", arg=text
        )
        await context.close()


async def test_a_past_day_from_the_archive_in_the_browser(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    async with server_at_evening(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        yesterday = dt.date(2026, 11, 28)
        choice = await server.boards.dailies.get(yesterday)  # a past day with its deal
        alice = await Player.open(browser, base, "alice")
        page = alice.page
        # From the lobby: the day, then "Play that day".
        await page.fill("#archive-date", yesterday.isoformat())
        await page.click("#archive-play")
        await alice.until(lambda: alice.of("daily_deal"), "the archive's deal")
        deal = alice.of("daily_deal")[-1]
        assert (deal["date"], deal["archive"], deal["practice"]) == ("2026-11-28", True, True)
        await page.wait_for_selector(".race-head >> text=(archive, practice)")
        room = alice.of("room")[-1]
        assert room["code"] == str(choice.code)  # public: nothing of today's is shown
        # The day is checked against the daily's log (docs/protocol.md 4.29), whose head
        # the browser keeps.
        await page.wait_for_selector(".status >> text=2026-11-28 checked: in the daily's log")
        head = await page.evaluate("JSON.parse(localStorage.getItem('yukon.dailylog.head'))")
        assert head["n"] >= 0 and len(head["hash"]) == 64
        await page.keyboard.press("r")
        await page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        await page.wait_for_selector("text=from the archive: practice")
        # Its board is the day's archive board, where alice is; the day's board is not.
        await page.keyboard.press("b")
        await page.wait_for_selector("#board-title >> text=Archive of 2026-11-28")
        await page.wait_for_selector("table >> text=alice")
        await page.wait_for_selector("#boards-next-daily >> text=Next daily deal in")
        await shot(alice, artifacts, "archive-board")
        await page.keyboard.press("r")  # the day's own board: nobody counted
        await page.wait_for_selector("#board-title >> text=Daily deal 2026-11-28")
        await page.wait_for_selector("text=nobody on this board yet")
        await alice.close()

        # /leaderboard's link opens the browser at #archive=DAY: bob plays it at once.
        bob = await Player.open(browser, base, "bob", f"/#archive={yesterday.isoformat()}")
        await bob.until(lambda: bob.of("daily_deal"), "the archive's deal")
        assert bob.of("daily_deal")[-1]["archive"] is True
        assert "#archive" not in bob.page.url
        await bob.close()
