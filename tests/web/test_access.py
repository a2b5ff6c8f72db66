"""Issue 42, item 2: the browser client and the pages served here, for a screen reader and
a keyboard. axe-core (WCAG 2.0/2.1 A and AA, from the ``axe-playwright-python`` package,
as tests/web/test_dailydeck.py) finds nothing on any screen a player meets, at a phone's
size and a desktop's; every control the keyboard reaches shows the page's focus ring.
Chromium through Playwright, against a real server."""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from protocol import Game

from .test_app import (
    CODE,
    RANK_WORDS,
    SUIT_WORDS,
    Player,
    create_room,
    server_at,
    start_alone,
    winning_line,
)

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


RANKS = "A23456789TJQK"
#: Counts in words up to twenty, in figures beyond (a column can hold 24 cards).
COUNT = [
    "no",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


def count(n: int, what: str) -> str:
    return f"{COUNT[n] if n < len(COUNT) else n} {what}{'' if n == 1 else 's'}"


def card_words(card: str) -> str:
    return f"{RANK_WORDS[card[0].upper()]} of {SUIT_WORDS[card[1].upper()]}"


def board_names(game: Game, held: set[str] = frozenset()) -> list[tuple[str, str]]:
    """What a screen reader should find on the board for ``game``, in order: each pile (a
    list) and what is in it (its items), by role and name, worked out here from the
    engine's position, not from the page's code."""
    marks = lambda c: ", held" if c in held else ""  # noqa: E731
    want: list[tuple[str, str]] = []
    for suit, height in zip("SHDC", game.foundation_heights(), strict=True):
        if not height:
            want.append(("list", f"{SUIT_WORDS[suit]} foundation, empty"))
            continue
        top = RANKS[height - 1] + suit
        want.append(("list", f"{SUIT_WORDS[suit]} foundation, up to {RANK_WORDS[top[0]]}"))
        want.append(("listitem", f"{card_words(top)}, on the {SUIT_WORDS[suit]} foundation"))
    for n in range(1, 8):
        cards = game.column(n)
        down = sum(c.islower() for c in cards)
        up = len(cards) - down
        parts = [count(down, "card") + " face down"] if down else []
        parts += [count(up, "card") + " face up"] if up else []
        want.append(("list", f"column {n}: {', '.join(parts)}" if cards else f"column {n}: empty"))
        if down:
            want.append(("listitem", count(down, "card") + " face down"))
        want += [
            ("listitem", f"{card_words(c)}, column {n}, face up{marks(c)}") for c in cards[down:]
        ]
    return want


async def board_tree(page: Any) -> list[tuple[str, str]]:
    """The board's piles and cards as the browser's accessibility tree has them
    (Playwright's ARIA snapshot of the board), by role and name."""
    snap = await page.locator(".board").aria_snapshot()
    return [
        # A name with a colon in it comes YAML-quoted: '- list "column 1: ..."'.
        (m[1], m[2])
        for m in re.finditer(r'^\s*- \'?(list|listitem) "([^"]*)"', snap, re.M)
    ]


async def test_every_card_and_pile_has_a_name(browser: Any, tmp_path: Path) -> None:
    """On a real race board, move after move: every card and pile is in the accessibility
    tree under the name the issue asks for ("seven of hearts, column 2, face up"; "three
    cards face down"; "hearts foundation, up to five"), a held card says so, and
    ``get_by_role`` finds each by that name."""
    line = winning_line()
    async with server_at(tmp_path) as server:
        alice = await Player.open(browser, f"http://127.0.0.1:{server.port}", "alice")
        page = alice.page
        await start_alone(alice)
        game = Game.from_code(CODE)
        assert await board_tree(page) == board_names(game)
        assert await page.get_by_role("listitem", name="three cards face down").count() == 1
        assert await page.get_by_role("list", name="hearts foundation, empty").count() == 1
        assert await page.get_by_role("listitem", name="seven of hearts, column 1, face up").count()
        for move in line[:14]:
            assert (await alice.play_keys(move))["t"] == "accepted", move
            game.play(move)
            assert await board_tree(page) == board_names(game), move
        assert any(h for h in game.foundation_heights())
        # A held card, with the cards lying on it: each says it is held.
        n = next(n for n in range(1, 8) if sum(c.isupper() for c in game.column(n)) > 1)
        await page.keyboard.press(str(n))
        await page.keyboard.press("ArrowUp")
        up = [c for c in game.column(n) if c.isupper()]
        await page.wait_for_selector(f'.pc.held[data-card="{up[-2]}"]')
        assert await board_tree(page) == board_names(game, set(up[-2:]))
        await page.keyboard.press("Escape")
        # What names a face-down card is only its count: nothing of the card itself.
        html = await page.evaluate("() => document.querySelector('.board').outerHTML")
        hidden = [c.upper() for n in range(1, 8) for c in game.column(n) if c.islower()]
        assert not any(card_words(c) in html for c in hidden)
        await alice.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("size", "phone"), SIZES, ids=IDS)
async def test_every_screen_a_player_meets_has_no_axe_violations(
    browser: Any, tmp_path: Path, size: dict[str, int], phone: bool, scheme: str
) -> None:
    """Every screen, in the order a player meets them: the name box (at ``/`` and at an
    invite link), the lobby, the keys, the boards, the archive, the player's and the
    history's pages, the name's link, waiting in the quick pool, a room waiting, the
    countdown, the race (a card held, a question asked), watching, the results with
    their post-mortem, a replay, and the pages the server renders itself; in the light
    scheme and the dark. Each one's violations are kept, so one run names them all."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    device = {"viewport": size, "has_touch": phone, "is_mobile": phone, "color_scheme": scheme}

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
        await page.click("#name-link")
        await page.wait_for_selector("dialog[open] #name-link-url")
        await audit(page, "your name's link")
        await page.click("#name-link-close")
        await page.click("#quick")
        await page.wait_for_selector("#quick-leave:visible")
        await audit(page, "quick race, waiting in the pool")
        await page.click("#quick-leave")
        await page.wait_for_selector("#quick-leave", state="hidden")
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
            if path == "/leaderboard":  # its date field's label is one the tree sees
                label = await page.evaluate(
                    "() => document.querySelector('#date').labels[0].textContent"
                )
                assert label == "Day"
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


def contrast(one: str, two: str) -> float:
    """WCAG's contrast ratio of two ``rgb(...)`` colours."""

    def lum(colour: str) -> float:
        parts = [float(x) / 255 for x in re.findall(r"[\d.]+", colour)[:3]]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in parts)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((lum(one), lum(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def ringless(found: dict[str, list[Any]], accent: str) -> list[Any]:
    """The controls whose ring is missing or is not the page's: 3 px of the accent."""
    return [
        k
        for k, (_, _, style, width, colour) in found.items()
        if style in ("none", "auto") or width < 3 or colour != accent
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_every_control_shows_a_focus_ring(browser: Any, tmp_path: Path, scheme: str) -> None:
    """Tab through each screen: every control it reaches (links, buttons, text, date and
    check boxes, lists, the board, a dialog's and a table's buttons) has the page's ring,
    3 px of the accent colour; every kind of control is met at least once."""
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice", color_scheme=scheme)
        page = alice.page
        await page.wait_for_selector("#new-room")
        accent = await page.evaluate(
            "() => { const e = document.createElement('i'); e.style.color = 'var(--accent)';"
            " document.body.append(e); const c = getComputedStyle(e).color; e.remove();"
            " return c; }"
        )
        # The ring stands out from the page (WCAG 1.4.11: 3:1 for what shows a state).
        page_bg = await page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert contrast(accent, page_bg) >= 3, (accent, page_bg)
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


async def test_a_whole_race_by_keyboard_alone(browser: Any, tmp_path: Path) -> None:
    """No mouse, no touch, no ``fill``: a name typed, the deal's code reached with Tab and
    typed, the room made with Enter, started with s, every move of a winning line with the
    terminal client's keys (1-7, ↑, a column's key or f), the results read, the lobby again
    with l; a held card is said on the status line (and so to a screen reader); the keys
    are in the page's help, which ? opens and Esc closes."""
    line = winning_line()
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        page = await context.new_page()
        alice = Player(context, page, "alice")
        alice.errors = []
        page.on("pageerror", lambda e: alice.errors.append(str(e)))
        await page.goto(base + "/")
        await page.wait_for_selector("#ask-name")
        assert await page.evaluate("() => document.activeElement.id") == "ask-name"
        await page.keyboard.type("alice")
        await page.keyboard.press("Enter")
        await alice.until(lambda: alice.of("welcome"), "welcome")
        await page.wait_for_selector("#new-room")
        # The help lists the keys of a race.
        await page.keyboard.press("?")
        keys = await page.locator("dialog[open] dl.keys").inner_text()
        for key in ("1-7", "↑ ↓ k j", "Enter, Space", "Tab, Shift+Tab", "u", "r"):
            assert key in keys, key
        await page.keyboard.press("Escape")
        assert await page.locator("dialog[open]").count() == 0
        for _ in range(40):
            await page.keyboard.press("Tab")
            if await page.evaluate("() => document.activeElement.id") == "code":
                break
        await page.keyboard.type(CODE)
        await page.keyboard.press("Enter")
        await alice.until(lambda: alice.of("room"), "the room")
        await page.wait_for_selector("#start")
        await page.keyboard.press("s")
        await alice.until(lambda: alice.of("race"), "the race")
        await page.wait_for_selector(".board .pc.up")
        # The board has the focus: the keys go to it, and what it says tells them.
        assert await page.evaluate("() => document.activeElement.classList.contains('board')")
        from playwright.async_api import expect  # here: without Playwright, a skip

        board = page.get_by_role("region", name="Your board")
        await expect(board).to_have_accessible_description(re.compile(r"^1 to 7: hold"))
        await page.keyboard.press("2")
        await page.wait_for_selector(".status >> text=holding eight of spades (column 2)")
        await page.keyboard.press("ArrowUp")
        await page.wait_for_selector(
            ".status >> text=holding nine of hearts (column 2) with 1 card on it"
        )
        await page.keyboard.press("Escape")
        for move in line[:-1]:
            answer = await alice.play_keys(move)
            assert answer["t"] == "accepted", (move, answer)
        # The last card home: the results may replace the board before it is redrawn.
        card, _ = line[-1].split(">")
        n = next(i + 1 for i, c in enumerate(await alice.columns()) if card in c)
        await page.keyboard.press(str(n))
        await page.keyboard.press("f")
        await alice.until(lambda: len(alice.of("accepted")) == len(line), "the last move")
        assert alice.of("accepted")[-1]["state"] == "won"
        await alice.until(lambda: alice.of("result"), "the result")
        await page.wait_for_selector("#headline >> text=You won")
        # Enter on a focused button presses it (it is not the race's tap): Tab to Lobby.
        for _ in range(20):
            await page.keyboard.press("Tab")
            if await page.evaluate("() => document.activeElement.id") == "lobby":
                break
        await page.keyboard.press("Enter")
        await page.wait_for_selector("#new-room")
        sent = [f["t"] for f in alice.sent]
        assert sent.count("move") == len(line) and "create" in sent and "start" in sent
        assert alice.errors == []
        await context.close()


#: Every text the polite live region is given, with when (ms): a screen reader's ear.
LISTEN = """() => {
  window.heard = [];
  const region = document.getElementById('live');
  new MutationObserver(() => window.heard.push([performance.now(), region.textContent]))
    .observe(region, {childList: true, characterData: true, subtree: true});
}"""


async def test_the_live_region_tells_what_a_sighted_player_sees(
    browser: Any, tmp_path: Path
) -> None:
    """alice races bob, listening to her page's polite live region: she hears the
    countdown, a refusal with the server's reason, bob's milestones (13 and 26 cards home,
    then his win), and the results' headline; never two announcements within a second, so
    bob's quick moves and her own never flood it."""
    line = winning_line()
    async with server_at(tmp_path, countdown_s=3.5) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        page = alice.page
        assert await page.get_attribute("#live", "aria-live") == "polite"
        await page.evaluate(LISTEN)
        room = await create_room(alice)
        bob = await Player.open(browser, base, "bob", f"/r/{room}")
        await bob.page.wait_for_selector("#ready")
        await bob.page.click("#ready")
        await page.wait_for_selector("text=Everyone is ready")
        await page.click("#start")
        await page.wait_for_selector(".board .pc.up", timeout=15_000)
        await bob.page.wait_for_selector(".board .pc.up")

        async def heard() -> list[tuple[float, str]]:
            return [(t, text) for t, text in await page.evaluate("() => window.heard")]

        async def hears(words: str) -> None:
            for _ in range(100):
                if any(words in text for _, text in await heard()):
                    return
                await asyncio.sleep(0.05)
            raise AssertionError((words, await heard()))

        await hears("the race starts in 1")
        counts = {t for _, t in await heard() if "the race starts in" in t}
        assert len(counts) >= 2, counts
        # A refusal, with the server's own reason.
        start = Game.from_code(CODE)
        wrong = next(
            f"{start.column(1)[-1]}>{d}"
            for d in range(2, 8)
            if f"{start.column(1)[-1]}>{d}" not in start.legal_moves()
        )
        answer = await alice.play_keys(wrong)
        assert answer["t"] == "refused"
        await hears(answer["reason"])
        # bob's race, as fast as his page answers: his milestones reach alice.
        for move in line[:-1]:
            assert (await bob.play_keys(move))["t"] == "accepted", move
        card, _ = line[-1].split(">")
        n = next(i + 1 for i, c in enumerate(await bob.columns()) if card in c)
        await bob.page.keyboard.press(str(n))
        await bob.page.keyboard.press("f")
        await hears("bob: 13 cards home")
        await hears("bob: 26 cards home")
        await hears("bob: 39 cards home")
        await hears("bob: won, 52 cards home")
        # alice resigns: the results' headline is told.
        await page.keyboard.press("r")
        await page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        await hears("You finished #2 of 2")
        times = [t for t, _ in await heard()]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= 990, gaps
        print(f"\nlive region: {len(times)} announcements; bob's race {len(line)} moves")
        await alice.close()
        await bob.close()


#: The page's background and ink, and every element that moves: its transitions and
#: animations that last (a duration above zero).
LOOK = """() => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  const body = getComputedStyle(document.body);
  const moving = [...document.querySelectorAll('*')].filter((e) => {
    const s = getComputedStyle(e);
    const long = (v) => v.split(',').some((d) => parseFloat(d) > 0);
    return long(s.transitionDuration) || (s.animationName !== 'none' && long(s.animationDuration));
  }).map((e) => e.className || e.tagName);
  return {bg: lum(rgb(body.backgroundColor)), ink: lum(rgb(body.color)), moving,
          fill: getComputedStyle(document.querySelector('.standings .fill')).transitionDuration};
}"""


async def test_reduced_motion_and_a_dark_scheme_are_honoured(browser: Any, tmp_path: Path) -> None:
    """On a race board (its buttons fade, its standings' bars grow): by default they move;
    with ``prefers-reduced-motion: reduce`` nothing on the page has a transition or an
    animation; ``prefers-color-scheme: dark`` gives a dark page with light ink (axe's
    contrast over every screen in it: test_every_screen_..._no_axe_violations[dark])."""
    async with server_at(tmp_path) as server:
        alice = await Player.open(browser, f"http://127.0.0.1:{server.port}", "alice")
        page = alice.page
        await start_alone(alice)
        await page.emulate_media(reduced_motion="no-preference", color_scheme="light")
        plain = await page.evaluate(LOOK)
        assert plain["moving"] and plain["fill"] == "0.4s", plain
        assert plain["bg"] > 0.8 and plain["ink"] < 0.2, plain
        await page.emulate_media(reduced_motion="reduce", color_scheme="dark")
        still = await page.evaluate(LOOK)
        assert still["moving"] == [] and still["fill"] == "0s", still
        assert still["bg"] < 0.1 and still["ink"] > 0.8, still
        # The board's places lit for a move follow the scheme: a dark well, not a light one.
        await page.keyboard.press("1")
        well = await page.evaluate(
            "() => getComputedStyle(document.querySelector('.col.dest')).getPropertyValue('--well')"
        )
        assert well.strip() == "#1f4a33", well
        await page.keyboard.press("Escape")
        await alice.close()
