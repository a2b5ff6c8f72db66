"""The friend with an invite link (issue 28), in headless Chromium against a real server.

The whole path a friend takes, on a phone-sized page (390x844, touch): the invite link's
first screen (what this is, the name's limit, no "connecting…" before anything connects),
the room, a race to a win the server finishes (every card face up: Finish), waiting for the
others with nothing left to undo, the results, a replay, a rematch a guest asks for, and
"race this run" from the results straight out of the finished room. A screenshot of each
screen goes to the artifacts. Then the smaller dead ends of the issue, one test each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from protocol import Game

from .test_app import CODE, WAIT, Player, create_room, server_at, shot, winning_line

pytestmark = pytest.mark.asyncio(loop_scope="module")

PHONE = {"width": 390, "height": 844}


async def phone(browser: Any, base: str, name: str, path: str = "/") -> Player:
    """A phone's browser at ``base + path``; no name typed yet."""
    context = await browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.set_default_timeout(WAIT * 1000)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    player = Player(context, page, name)
    player.errors = errors  # type: ignore[attr-defined]
    await page.goto(base + path)
    return player


async def fits(player: Player, selector: str) -> None:
    """Every element matching ``selector`` lies inside the phone's width."""
    boxes = await player.page.evaluate(
        "(sel) => [...document.querySelectorAll(sel)].filter(e => e.offsetParent)"
        ".map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })",
        selector,
    )
    assert boxes, selector
    assert all(left >= 0 and right <= PHONE["width"] + 0.5 for left, right in boxes), (
        selector,
        boxes,
    )


async def bottom(player: Player, selector: str) -> float:
    box = await player.page.locator(selector).bounding_box()
    assert box is not None, selector
    return float(box["y"] + box["height"])


async def test_the_friend_s_whole_path_on_a_phone(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    line = winning_line()
    # How far the line goes before no card is face down: from there, Finish.
    game = Game.from_code(CODE)
    upto = 0
    while "??" in game.view():
        game.play(line[upto])
        upto += 1
    assert upto < len(line)
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        room = await create_room(alice)

        # The invite's first screen: what this is, a leaderboard, the name's limit; nothing
        # connects before there is a name, so nothing says "connecting".
        bob = await phone(browser, base, "bob", f"/r/{room}")
        await bob.page.wait_for_selector("#ask-name")
        assert await bob.page.locator("header.top").is_visible()
        assert "yukon race" in (await bob.page.locator("header.top").inner_text()).lower()
        assert await bob.page.locator(".top-links a").is_visible()
        assert "connecting" not in await bob.page.locator("#app").inner_text()
        assert f"invited to room {room}" in await bob.page.locator(".ask").inner_text()
        await bob.page.wait_for_selector("#ask-count >> text=1-20 characters")
        # A blank name is refused with a word; the count shows as the name is typed.
        await bob.page.fill("#ask-name", "   ")
        await bob.page.locator(".ask button[type=submit]").tap()
        await bob.page.wait_for_selector(".problem >> text=type a name")
        assert bob.sent == []
        await bob.page.fill("#ask-name", "Bob of the very long name")
        await bob.page.wait_for_selector("#ask-count.bad >> text=25/20: 5 too many")
        await shot(bob, artifacts, "friend-1-name")
        await bob.page.fill("#ask-name", "bob")
        await bob.page.wait_for_selector("#ask-count >> text=3/20")
        await bob.page.locator(".ask button[type=submit]").tap()
        await bob.until(lambda: bob.of("room"), "bob in the room")
        assert bob.of("room")[-1]["you"] == "player"

        # The room on the phone: the invite box fits, and no button names a key.
        await bob.page.wait_for_selector("#ready")
        await fits(bob, ".invite, .invite input, #copy")
        assert await bob.page.locator("#ready").inner_text() == "Ready"
        await shot(bob, artifacts, "friend-2-room")
        await bob.page.locator("#ready").tap()
        await alice.page.wait_for_selector("text=Everyone is ready")
        await alice.page.click("#start")
        await bob.until(lambda: bob.of("race"), "bob's race")
        await bob.page.wait_for_selector(".board .pc.up")
        assert "?" not in await bob.status()  # "? shows every key": not on a touch screen

        # The race: taps, then (for speed) keys; the actions stay above the standings.
        assert (await bob.play_taps(line[0]))["t"] == "accepted"
        assert (await alice.play_drag(line[0]))["t"] == "accepted"
        for move in line[1:upto]:
            if move == line[upto // 2]:
                assert await bob.page.locator("#finish").is_hidden()
                await shot(bob, artifacts, "friend-3-race")
            assert (await bob.play_keys(move))["t"] == "accepted", move
        for sel in ("#undo", "#resign"):
            assert await bottom(bob, sel) <= PHONE["height"], sel
            assert await bottom(bob, sel) < await bottom(bob, ".standings")
        for sel in ("#undo", "#resign", "#finish"):
            assert "(" not in await bob.page.locator(sel).inner_text()
        # Every card face up: Finish, and the server plays the rest, checked.
        await bob.page.wait_for_selector("#finish")
        await shot(bob, artifacts, "friend-4-finish")
        accepted = len(bob.of("accepted"))
        await bob.page.locator("#finish").tap()
        await bob.until(lambda: bob.of("race")[-1]["state"] == "won", "the finished win")
        finish = next(f for f in bob.sent if f["t"] == "finish")
        assert finish["seq"] == upto + 1
        assert len(bob.of("accepted")) == accepted  # one `race`, not a move at a time
        assert bob.of("race")[-1]["moves"] > upto

        # Won while alice races on: no Undo or Hint, but "waiting for the others".
        await bob.page.wait_for_selector("#waiting >> text=waiting for the others (alice)")
        assert await bob.page.locator("#undo").is_hidden()
        assert await bob.page.locator("#hint").is_hidden()
        assert await bob.page.locator("#finish").is_hidden()
        await shot(bob, artifacts, "friend-5-waiting")
        await alice.page.click("#resign")
        await alice.page.click("dialog #yes")
        await bob.until(lambda: bob.of("result"), "bob's result")
        result = bob.of("result")[-1]
        me = next(r for r in result["ranks"] if r["name"] == "bob")
        assert me["rank"] == 1 and me["outcome"] == "won"
        await bob.page.wait_for_selector("#headline >> text=You won in")
        assert (await bob.page.locator("#headline").inner_text()).startswith("You won in")
        assert ", #1 of 2" in await bob.page.locator("#headline").inner_text()
        await alice.page.wait_for_selector("#headline >> text=You finished #2 of 2 (resigned)")
        # The results fit: the replay column is on the screen; everyone may ask a rematch.
        await bob.page.wait_for_selector("#rematch")
        await alice.page.wait_for_selector("#rematch")
        await fits(bob, "table, td button")
        await shot(bob, artifacts, "friend-6-results")

        # A replay from the results (bob's own run, finished moves and all), and back.
        await tap_until(
            bob.page,
            bob.page.locator('button[aria-label="replay bob\'s run"]').tap,
            lambda s: bob.page.wait_for_selector(
                "#replay-title >> text=bob's run", timeout=s * 1000
            ),
            "the replay's button",
        )
        await shot(bob, artifacts, "friend-7-replay")
        await bob.page.keyboard.press("Escape")
        await bob.page.wait_for_selector("#headline")

        # bob, a guest, asks for the rematch: both are in the room's lobby again.
        await bob.page.locator("#rematch").tap()
        for p in (alice, bob):
            await p.until(lambda p=p: p.of("room")[-1]["state"] == "lobby", "the rematch")
        await bob.page.wait_for_selector("#ready")
        status = await bob.status()
        assert "rematch" in status and "not ready" not in status, status
        await shot(bob, artifacts, "friend-8-rematch")
        await bob.page.locator("#ready").tap()
        await alice.page.wait_for_selector("text=Everyone is ready")
        await alice.page.click("#start")
        await bob.until(lambda: len(bob.of("race")) >= 3, "the second race")
        await alice.page.wait_for_selector(".board .pc.up")
        second = Game.from_position(alice.of("race")[-1]["view"]).legal_moves()[0]
        assert (await alice.play_keys(second))["t"] == "accepted"
        for p in (alice, bob):
            await p.page.locator("#resign").click()
            await p.page.click("dialog #yes")
        await bob.until(lambda: len(bob.of("result")) == 2, "the second result")
        await bob.page.wait_for_selector("#headline >> text=of 2 (resigned)")

        # "Race this run" from the results' replay: out of the finished room, into a ghost.
        await bob.page.locator('button[aria-label="replay alice\'s run"]').tap()
        await bob.page.wait_for_selector("#replay-title >> text=alice's run")
        errors = len(bob.of("error"))
        await bob.page.locator("#replay-race").tap()
        await bob.until(lambda: bob.of("room")[-1].get("ghost") == "alice", "the ghost room")
        assert bob.of("error")[errors:] == []  # no "you are in room ...; leave it first"
        assert bob.of("left")[-1]["room"] == room
        await bob.page.wait_for_selector("text=Racing alice's run as a ghost")
        await bob.page.wait_for_selector(".status >> text=alice's run as a ghost: start when")
        # A room of one: no "players at most", no invite to pass on.
        room_text = await bob.page.locator(".room").inner_text()
        assert "players at most" not in room_text and "Others join" not in room_text
        await shot(bob, artifacts, "friend-9-ghost")
        assert bob.page.url == f"{base}/"
        await alice.close()
        await bob.close()


async def finished_alone(player: Player) -> str:
    """``player`` races alone and resigns: they sit on the results of a finished room."""
    room = await create_room(player)
    await player.page.click("#start")
    await player.until(lambda: player.of("race"), "the race")
    await player.page.wait_for_selector(".board .pc.up")
    await player.page.keyboard.press("r")
    await player.page.keyboard.press("y")
    await player.until(lambda: player.of("result"), "the result")
    await player.page.wait_for_selector("#headline")
    return room


async def test_an_invite_opened_from_a_finished_room_joins(browser: Any, tmp_path: Path) -> None:
    """Issue 28, items 1 and 4: an invite link opened while sitting on a finished room's
    results joins the invite's room (the address stays its link); a reload of the invite
    mid-race resumes without a join and without a word of error."""
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        room = await create_room(alice)
        bob = await Player.open(browser, base, "bob")
        old = await finished_alone(bob)
        await bob.page.goto(f"{base}/r/{room}")
        await bob.until(
            lambda: bob.of("room") and bob.of("room")[-1]["room"] == room, "bob in alice's room"
        )
        assert bob.of("room")[-1]["you"] == "player"
        assert bob.of("left")[-1]["room"] == old  # the server left the finished room on the way
        await bob.page.wait_for_selector(f"#room-title >> text=Room {room}")
        assert bob.page.url == f"{base}/r/{room}"
        assert old != room
        await bob.page.click("#ready")
        await alice.page.wait_for_selector("text=Everyone is ready")
        await alice.page.click("#start")
        await bob.until(lambda: bob.of("race"), "bob's race")
        await bob.page.wait_for_selector(".board .pc.up")
        # A reload of the invite mid-race: back in the race, no join, nothing red.
        joins = sum(f["t"] == "join" for f in bob.sent)
        errors = len(bob.of("error"))
        races = len(bob.of("race"))
        await bob.page.reload()
        await bob.until(lambda: len(bob.of("race")) == races + 1, "the race again")
        await bob.page.wait_for_selector(".board .pc.up")
        assert sum(f["t"] == "join" for f in bob.sent) == joins
        assert len(bob.of("error")) == errors
        assert await bob.page.locator(".status.error").count() == 0
        assert bob.page.url == f"{base}/r/{room}"
        await alice.close()
        await bob.close()


async def test_race_this_run_from_a_shared_replay_asks_a_name_first(
    browser: Any, tmp_path: Path
) -> None:
    """Issue 28, item 2: "race this run" on a replay link, in a browser with no name yet,
    asks for a name, then opens the ghost room (no stale 'not connected')."""
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        await finished_alone(alice)
        race = alice.of("result")[-1]["race"]
        bob = await phone(browser, base, "bob", f"/replay/{race}/alice")
        await bob.page.wait_for_selector("#replay-title >> text=alice's run")
        await bob.page.locator("#replay-race").tap()
        await bob.page.wait_for_selector("#ask-name")
        assert "not connected" not in await bob.status()
        await bob.page.fill("#ask-name", "bob")
        await bob.page.locator(".ask button[type=submit]").tap()
        await bob.until(lambda: bob.of("room"), "the ghost room")
        assert bob.of("room")[-1]["ghost"] == "alice"
        assert [f["t"] for f in bob.sent][:2] == ["hello", "ghost"]
        await bob.page.wait_for_selector("text=Racing alice's run as a ghost")
        assert "not connected" not in await bob.status()
        await alice.close()
        await bob.close()


async def test_a_name_goes_to_another_device_by_its_link(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    """Issue 28, item 13: the lobby shows the name's link (#token=...); a browser with no
    name that opens it plays as that name; one with a name of its own is asked first. The
    fragment leaves the address bar at once."""
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        await alice.page.click("#name-link")
        await alice.page.wait_for_selector("dialog >> text=Anyone with this link is you")
        link = await alice.page.input_value("#name-link-url")
        token = alice.of("welcome")[-1]["token"]
        assert link == f"{base}/#token={token}"
        await shot(alice, artifacts, "name-link")
        await alice.page.keyboard.press("Escape")

        # A phone with no name here: straight in as alice, the token out of the address.
        other = await phone(browser, base, "alice", link.removeprefix(base))
        await other.until(lambda: other.of("welcome"), "the welcome")
        assert other.of("welcome")[-1]["name"] == "alice"
        assert "token" not in other.page.url and other.page.url == f"{base}/"
        await other.page.wait_for_selector("#new-room")
        await other.context.close()

        # A browser that is carol here: asked; "no" keeps carol, "yes" makes it alice.
        carol = await Player.open(browser, base, "carol")
        await carol.page.goto(link)
        await carol.page.wait_for_selector("dialog >> text=plays as carol here now")
        assert "token" not in carol.page.url
        await carol.page.click("dialog #no")
        await carol.page.wait_for_selector("#new-room")
        assert [f["name"] for f in carol.of("welcome")] == ["carol"]
        await carol.page.goto(link)
        await carol.page.click("dialog #yes")
        await carol.until(lambda: len(carol.of("welcome")) == 2, "alice's welcome")
        assert carol.of("welcome")[-1]["name"] == "alice"
        await carol.page.reload()
        await carol.until(lambda: len(carol.of("welcome")) == 3, "alice's welcome again")
        assert carol.of("welcome")[-1]["name"] == "alice"
        await alice.close()
        await carol.close()


async def touch(cdp: Any, kind: str, x: float = 0, y: float = 0) -> None:
    points = [] if kind == "touchEnd" else [{"x": x, "y": y, "id": 1}]
    await cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


#: What the page saw of each tap, by target, for the helpers below and a failure's message:
#: pointers, mouse events made of touches, clicks and long presses (passive listeners, so
#: that watching changes nothing of how a touch is handled).
WATCH_TAPS = """() => {
  if (window.taps) return;
  window.taps = [];
  const kinds = ["pointerdown", "pointerup", "pointercancel", "mousedown", "mouseup"];
  for (const kind of [...kinds, "click", "contextmenu"])
    document.addEventListener(
      kind,
      (e) => window.taps.push(`${kind} ${e.target.id || e.target.tagName}`),
      { capture: true, passive: true },
    );
}"""


async def tap_until(
    page: Any,
    tap: Callable[[], Awaitable[object]],
    wait: Callable[[float], Awaitable[object]],
    what: str,
) -> None:
    """Tap (``tap``) until ``wait`` (given how many seconds it may wait) sees what the tap does.
    Under load, Chromium's emulated touch now and then makes no click at all of a tap (CI: the
    first tap after a drag, on Undo; a loaded run here: a results row's replay; never in 200
    drags and taps in a row on a loaded machine here). A page cannot act on a click it is
    never given: such a tap is made again, at most twice. A tap whose click reached the page
    and came to nothing is the page's fault and fails at once. The failure says what the
    page saw of each tap."""
    await page.evaluate(WATCH_TAPS)
    trails: list[list[str]] = []
    for _ in range(3):
        before = await page.evaluate("() => window.taps.length")
        await tap()
        try:
            await wait(WAIT / 3)
            return
        except (AssertionError, PlaywrightTimeout):
            trails.append((await page.evaluate("() => window.taps"))[before:])
        if any(seen.startswith("click ") for seen in trails[-1]):
            break
    raise AssertionError(f"{what}: no tap was taken; the page saw, tap by tap: {trails}")


async def touch_tap(cdp: Any, page: Any, selector: str) -> None:
    """A finger's tap on ``selector``'s middle: down, 60 ms, up."""
    box = await page.locator(selector).bounding_box()
    assert box is not None, selector
    await touch(cdp, "touchStart", box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await asyncio.sleep(0.06)
    await touch(cdp, "touchEnd")


async def test_the_first_tap_after_a_touch_drag_is_not_lost(browser: Any, tmp_path: Path) -> None:
    """Issue 28, item 16, checked with a real touch sequence (CDP touchStart, touchMoves a
    frame apart, touchEnd; then a tap of a finger's length on Undo): the first tap after a
    drag reaches its button every time."""
    line = winning_line()
    card, dest = line[0].split(">")
    async with server_at(tmp_path) as server:
        context = await browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
        context.set_default_timeout(WAIT * 1000)
        page = await context.new_page()
        p = Player(context, page, "alice")
        p.errors = []  # type: ignore[attr-defined]
        await page.goto(f"http://127.0.0.1:{server.port}/")
        await page.fill("#ask-name", "alice")
        await page.press("#ask-name", "Enter")
        # The welcome first, as a person sees the lobby before tapping in it: under load a
        # click on Create before the page had its welcome made no room (CI, 2026-12-06).
        await p.until(lambda: p.of("welcome"), "welcome")
        await page.wait_for_selector("#new-room")
        await create_room(p)
        await page.click("#start")
        await p.until(lambda: p.of("race"), "the race")
        await page.wait_for_selector(".board .pc.up")
        cdp = await context.new_cdp_session(page)
        for n in range(1, 6):
            src = await p.card(card).bounding_box()
            dst = await p.dest(dest, card).bounding_box()
            assert src is not None and dst is not None
            x0, y0 = src["x"] + 8, src["y"] + 5
            x1, y1 = dst["x"] + dst["width"] / 2, dst["y"] + 8
            before = p.answers()
            await touch(cdp, "touchStart", x0, y0)
            for k in range(1, 11):
                await touch(cdp, "touchMove", x0 + (x1 - x0) * k / 10, y0 + (y1 - y0) * k / 10)
                await asyncio.sleep(0.016)
            await touch(cdp, "touchEnd")
            answer = await p.answered(before, line[0])
            assert answer["t"] == "accepted"
            # The tap comes once the page shows the move, as a person's would: a tap that
            # spans the screen's redraw for this very answer is another matter (the button
            # is drawn anew under the finger), not the first tap after a drag.
            await page.wait_for_function(
                "(s) => Number(document.querySelector('.board')?.dataset.seq) >= s",
                arg=answer["seq"],
            )
            await page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r(0)))")
            await tap_until(
                page,
                lambda: touch_tap(cdp, page, "#undo"),
                # One undo for each accepted drag: this one's too.
                lambda s: p.until(
                    lambda: len(p.of("undone")) == len(p.of("accepted")), "the undo", s
                ),
                f"the first tap after drag {n}",
            )
            await page.wait_for_selector(f'.board .pc.up[data-card="{card}"]')
            await page.wait_for_function(
                "(s) => Number(document.querySelector('.board')?.dataset.seq) >= s",
                arg=p.of("undone")[-1]["seq"],
            )
        await context.close()


async def one_line(player: Player, selector: str) -> None:
    """Every element matching ``selector`` shows its text on one line (a long name is cut
    with an ellipsis, not wrapped): its text's line boxes all share one top."""
    lines = await player.page.evaluate(
        "(sel) => [...document.querySelectorAll(sel)].filter(e => e.offsetParent).map(e => {"
        " const r = document.createRange(); r.selectNodeContents(e);"
        " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; })",
        selector,
    )
    assert lines and all(n == 1 for n in lines), (selector, lines)


async def test_long_names_on_a_phone_stay_on_one_line(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    """Issue 28, item 15: names of 20 characters neither wrap nor push the table's replay
    column off a 390 px screen, in the room, the standings and the results."""
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "Alexandrina Longname")
        room = await create_room(alice)
        bob = await phone(browser, base, "Bartholomew the 3rd!", f"/r/{room}")
        await bob.page.fill("#ask-name", bob.name)
        await bob.page.locator(".ask button[type=submit]").tap()
        await bob.page.wait_for_selector("#ready")
        await one_line(bob, ".players .pname")
        await bob.page.locator("#ready").tap()
        await alice.page.wait_for_selector("text=Everyone is ready")
        await alice.page.click("#start")
        await bob.until(lambda: bob.of("race"), "bob's race")
        await bob.page.wait_for_selector(".standings .pname")
        await one_line(bob, ".standings .pname")
        await fits(bob, ".standings li")
        for p in (alice, bob):
            await p.page.locator("#resign").click()
            await p.page.click("dialog #yes")
        await bob.until(lambda: bob.of("result"), "the result")
        await bob.page.wait_for_selector("#headline")
        await one_line(bob, "td.name")
        await fits(bob, "table, td button")
        await shot(bob, artifacts, "friend-long-names")
        await alice.close()
        await bob.close()
