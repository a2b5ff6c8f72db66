"""Issue 42, item 2: the browser client and the pages served here, for a screen reader and
a keyboard. axe-core (WCAG 2.0/2.1 A and AA, from the ``axe-playwright-python`` package,
as tests/web/test_dailydeck.py) finds nothing on any screen a player meets, at a phone's
size and a desktop's; every control the keyboard reaches shows the page's focus ring.
Chromium through Playwright, against a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_app import Player, create_room, server_at, start_alone, winning_line

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


@pytest.mark.parametrize(("size", "phone"), SIZES, ids=IDS)
async def test_every_screen_a_player_meets_has_no_axe_violations(
    browser: Any, tmp_path: Path, size: dict[str, int], phone: bool
) -> None:
    """Every screen, in the order a player meets them: the name box (at ``/`` and at an
    invite link), the lobby, the keys, the boards, the archive, the player's and the
    history's pages, a room waiting, the countdown, the race (a card held, a question
    asked), watching, the results with their post-mortem, a replay, and the pages the
    server renders itself. Each one's violations are kept, so one run names them all."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    device = {"viewport": size, "has_touch": phone, "is_mobile": phone}

    async def audit(page: Any, screen: str) -> None:
        got = await violations(page)
        if got:
            found[screen] = got

    async with server_at(tmp_path, countdown_s=4.0) as server:
        base = f"http://127.0.0.1:{server.port}"
        first = await browser.new_context(**device)
        page = await first.new_page()
        await page.goto(base + "/")
        await page.wait_for_selector("#ask-name")
        await audit(page, "name")
        alice = await Player.open(browser, base, "alice", **device)
        page = alice.page
        await page.wait_for_selector("#new-room")
        await audit(page, "lobby")
        # The audit sees what it must: an image without a text is a violation.
        await page.evaluate("() => document.querySelector('#app').append(new Image(8, 8))")
        assert "image-alt" in [rule for rule, _ in await violations(page)]
        await page.evaluate("() => document.querySelector('#app > img').remove()")
        await page.keyboard.press("?")
        await page.wait_for_selector("dialog[open] #close-help")
        await audit(page, "help")
        await page.keyboard.press("Escape")
        await page.click("#boards")
        await page.wait_for_selector("#board-title >> text=player")
        await audit(page, "leaderboards")
        await page.keyboard.press("r")
        await page.wait_for_selector("#board-title >> text=Archive of")
        await page.wait_for_selector(".screen.boards >> text=nobody on this board yet")
        await audit(page, "daily archive")
        await page.click("#back")
        await page.click("#my-page")
        await page.wait_for_selector("#player-title >> text=alice")
        await audit(page, "player page")
        await page.click("#back")
        await page.click("#history")
        await page.wait_for_selector(".screen.history")
        await audit(page, "history")
        await page.click("#back")
        room = await create_room(alice)
        await page.wait_for_selector("#invite")
        await audit(page, "room waiting")

        # bob opens the invite link: its name box, then the room.
        other = await first.new_page()
        await other.goto(f"{base}/r/{room}")
        await other.wait_for_selector("#ask-name")
        await audit(other, "invite link")
        await first.close()
        bob = await Player.open(browser, base, "bob", f"/r/{room}", **device)
        await bob.until(lambda: bob.of("room"), "bob in the room")
        await bob.page.wait_for_selector("#ready")
        await audit(bob.page, "room, joined by the invite link")
        await bob.page.click("#ready")
        await page.wait_for_selector("text=Everyone is ready")
        await page.click("#start")
        await page.wait_for_selector(".countdown:not([hidden])")
        await audit(page, "countdown")
        await page.wait_for_selector(".board .pc.up", timeout=10_000)
        await audit(page, "race board")
        line = winning_line()
        for move in line[:6]:
            assert (await alice.play_keys(move))["t"] == "accepted", move
        await page.keyboard.press("1")
        await page.wait_for_selector(".pc.held")
        await audit(page, "race board, a card held")
        await page.keyboard.press("Escape")

        carol = await Player.open(browser, base, "carol", f"/r/{room}", **device)
        await carol.page.wait_for_selector(".screen.watch .standings li")
        await audit(carol.page, "watch")

        await page.keyboard.press("r")
        await page.wait_for_selector("dialog[open] #yes")
        await audit(page, "confirm")
        await page.keyboard.press("y")
        await bob.page.keyboard.press("r")
        await bob.page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        await page.wait_for_selector("#results-pm")
        await page.wait_for_function(
            "() => !document.querySelector('#results-pm').textContent.includes('working')"
        )
        await audit(page, "results and post-mortem")
        await page.click('button[aria-label="replay alice\'s run"]')
        await page.wait_for_selector("#replay-title >> text=alice's run")
        await audit(page, "replay")
        await page.click("#back")

        for path, screen in (
            ("/leaderboard", "/leaderboard"),
            ("/players/alice", "/players/alice"),
            ("/r/QQQQQ", "/r/ (no such room)"),
        ):
            await page.goto(base + path)
            await audit(page, screen)
        for p in (alice, bob, carol):
            await p.close()
    assert found == {}


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


#: The focused element, its kind, name and ring; "body" when no control has the focus,
#: "again" when the first control of this tour (``start``: a new one) has it once more.
FOCUSED = """(start) => {
  const e = document.activeElement;
  if (!e || e === document.body) return "body";
  if (start) window.__ringFirst = e;
  else if (window.__ringFirst === e) return "again";
  const s = getComputedStyle(e);
  const kind = e.tagName.toLowerCase() + (e.tagName === 'INPUT' ? `[${e.type}]` : '')
    + (e.tagName === 'DIV' ? `.${e.className.split(' ')[0]}` : '');
  return [kind, e.id || e.getAttribute('aria-label') || e.textContent.trim().slice(0, 24),
          s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor];
}"""


async def rings(page: Any, limit: int = 90) -> dict[str, list[Any]]:
    """Tab through every control the screen offers, once round: each one reached, by
    kind and name, with its computed outline."""
    got: dict[str, list[Any]] = {}
    started = False
    for _ in range(limit):
        await page.keyboard.press("Tab")
        seen = await page.evaluate(FOCUSED, not started)
        if seen == "again":
            break
        if seen != "body":
            started = True
            got.setdefault(f"{seen[0]} {seen[1]}", seen)
    return got


def ringless(found: dict[str, list[Any]], accent: str) -> list[Any]:
    """The controls whose ring is missing or is not the page's: 3 px of the accent."""
    return [
        k
        for k, (_, _, style, width, colour) in found.items()
        if style in ("none", "auto") or width < 3 or colour != accent
    ]


async def test_every_control_shows_a_focus_ring(browser: Any, tmp_path: Path) -> None:
    """Tab through each screen: every control it reaches (links, buttons, text, date and
    check boxes, lists, the board, a dialog's and a table's buttons) has the page's ring,
    3 px of the accent colour; every kind of control is met at least once."""
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        page = alice.page
        await page.wait_for_selector("#new-room")
        accent = await page.evaluate(
            "() => { const e = document.createElement('i'); e.style.color = 'var(--accent)';"
            " document.body.append(e); const c = getComputedStyle(e).color; e.remove();"
            " return c; }"
        )
        kinds: set[str] = set()
        bad: dict[str, list[Any]] = {}

        async def tour(screen: str) -> None:
            found = await rings(page)
            assert found, screen
            kinds.update(v[0] for v in found.values())
            if missing := ringless(found, accent):
                bad[screen] = [found[k] for k in missing]

        await tour("lobby")
        await page.keyboard.press("Escape")
        await page.evaluate("() => document.activeElement.blur()")
        await page.keyboard.press("?")
        await page.wait_for_selector("dialog[open] #close-help")
        await tour("help")
        await page.keyboard.press("Escape")
        await page.click("#boards")
        await page.wait_for_selector("#board-title >> text=player")
        await tour("leaderboards")
        await page.click("#back")
        await page.click("#my-page")
        await page.wait_for_selector("#player-title")
        await tour("player page")
        await page.click("#back")
        await create_room(alice)
        await tour("room")
        await page.click("#start")
        await page.wait_for_selector(".board .pc.up")
        await tour("race")
        await page.keyboard.press("Escape")
        await page.keyboard.press("r")
        await page.wait_for_selector("dialog[open] #yes")
        await tour("confirm")
        await page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        await page.wait_for_selector("#headline")
        await tour("results")
        assert bad == {}
        for kind in (
            "a",
            "button",
            "input[text]",
            "input[checkbox]",
            "input[date]",
            "select",
            "div.board",
        ):
            assert kind in kinds, (kind, kinds)
        await alice.close()
