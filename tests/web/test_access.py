"""Issue 42, item 2, the basics on the pages served here: axe-core (WCAG 2.0/2.1 A and AA)
finds nothing on the race board (its foundations were `aria-prohibited-attr`: a label on
an element without a role) nor on ``/leaderboard`` (its date field had only a hidden
label), at a desktop's size and a phone's; and the lobby's archive date field shows a
focus ring when the keyboard reaches it. Chromium through Playwright, axe-core from the
``axe-playwright-python`` package (as tests/web/test_dailydeck.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_app import Player, server_at, start_alone

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIZES = [({"width": 390, "height": 844}, True), ({"width": 1280, "height": 800}, False)]
IDS = ["390x844", "desktop"]
#: The rules of the issue's audit: WCAG 2.0 and 2.1, levels A and AA.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


async def violations(page: Any) -> list[tuple[str, list[str]]]:
    """axe-core's WCAG A/AA violations on the page: each rule and the elements it names."""
    from axe_playwright_python.async_playwright import Axe

    results = await Axe().run(
        page,
        options={"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]},
    )
    return [
        (v["id"], [",".join(n["target"]) for n in v["nodes"]])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize(("size", "phone"), SIZES, ids=IDS)
async def test_the_race_board_and_the_leaderboard_have_no_axe_violations(
    browser: Any, tmp_path: Path, size: dict[str, int], phone: bool
) -> None:
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(
            browser, base, "alice", viewport=size, has_touch=phone, is_mobile=phone
        )
        await start_alone(alice)
        assert await violations(alice.page) == []
        # Every foundation is a pile with a name (a list of its top card).
        founds = await alice.page.eval_on_selector_all(
            ".board .slot.found", "els => els.map(e => [e.getAttribute('role'), e.ariaLabel])"
        )
        assert [role for role, _ in founds] == ["list"] * 4, founds
        assert all(label and "foundation" in label for _, label in founds), founds
        await alice.page.goto(f"{base}/leaderboard")
        assert await violations(alice.page) == []
        label = await alice.page.evaluate(
            "() => document.querySelector('#date').labels[0].textContent"
        )
        assert label == "Day"
        await alice.close()


async def test_the_archive_date_field_shows_a_focus_ring(browser: Any, tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        alice = await Player.open(browser, f"http://127.0.0.1:{server.port}", "alice")
        page = alice.page
        await page.wait_for_selector("#archive-date")
        ring_of = (
            "e => { const s = getComputedStyle(e);"
            " return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor]; }"
        )
        # The keyboard's ways there: back from its button (Chromium then focuses the
        # year inside the field, and the field was not :focus-visible: no ring), and on
        # from the field before it.
        for start, key in (("#archive-play", "Shift+Tab"), ("#archive-date", None)):
            await page.focus(start)
            if key is None:
                await page.keyboard.press("Shift+Tab")
                key = "Tab"
            await page.keyboard.press(key)
            assert await page.evaluate("() => document.activeElement.id") == "archive-date"
            ring = await page.eval_on_selector("#archive-date", ring_of)
            assert ring[0] != "none" and ring[1] >= 2, (start, ring)
        # The same ring as the other fields' (client.css: the accent colour).
        await page.focus("#room-code")
        other = await page.eval_on_selector("#room-code", ring_of)
        assert ring == other
        await alice.close()
