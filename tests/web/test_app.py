"""The browser client in headless Chromium against a real server on a loopback port.

Players are browser contexts (each its own storage, so its own token) that click, drag,
double-click and type as a person does; every websocket frame a page receives is recorded
and decoded with Python's msgpack, so the tests can hold what the page was told against
what it shows, and against what it must never be told (a face-down card). Every wait is
for a condition, bounded in time; figures (first paint) are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from bench.tcp_proxy import TcpProxy
from client.app import YukonApp
from client.config import TokenStore
from protocol import Game
from protocol.messages import Create, MoveMsg, Race, Resign, Result, Room, Start
from server.app import ServeOptions, open_server
from server.rooms import HubConfig
from server.runtime.executor import RaceServer
from solver import solve

from ..client.helpers import keys_for, racing, until
from ..server.wire import open_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

CODE = "YU1-C-AAAAAAB"
WAIT = 10.0
#: Where a card is taken: its top strip, the part a card lying on it leaves visible.
GRIP = {"x": 8, "y": 5}
CARD = re.compile(r"[A2-9TJQK][SHDC]")
#: Fields that name rooms, players and codes rather than cards.
NOT_CARDS = {"t", "room", "host", "name", "token", "code", "commitment", "salt", "date", "text"}
RANK_WORDS = dict(
    zip(
        "A23456789TJQK",
        [
            "ace",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "jack",
            "queen",
            "king",
        ],
        strict=True,
    )
)
SUIT_WORDS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
GLYPHS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def winning_line(code: str = CODE) -> list[str]:
    """The solver's winning line for ``code`` (docs/solver.md), worked out here."""
    solution = solve(code, budget_nodes=2_000_000)
    assert solution.verdict == "won"
    return list(solution.moves)


@contextlib.asynccontextmanager
async def server_at(
    tmp_path: Path, countdown_s: float = 0.2, **config: Any
) -> AsyncIterator[RaceServer]:
    """The server as ``yukon serve`` wires it (as tests/server/wire.py does), on port 0,
    with a short countdown (``countdown_s``; long enough to see, for a test of the
    countdown's screen) and ``config`` (a password, say) on top. The resume window is the
    default 60 s, not wire.py's 5 s: a page reload or a cut connection resumes, and a
    loaded machine can stretch either past 5 s."""
    hub = HubConfig(
        countdown_s=countdown_s,
        resume_window_s=60.0,
        bucket_capacity=200,
        bucket_rate=100,
        max_connections_per_address=0,
        max_registrations_per_address=0,
        max_rooms_per_address=0,
        max_opens_per_address=0,
        max_room_misses_per_address=0,
        max_attempts_per_player=0,
        max_attempts_per_address=0,
        **config,
    )
    options = ServeOptions(
        host="127.0.0.1",
        port=0,
        db=f"sqlite:///{tmp_path}/web.db",
        spool=tmp_path / "spool.jsonl",
        hub=hub,
        solver_processes=0,
    )
    async with open_server(options) as server:
        yield server


def decode(payload: Any) -> Any:
    if isinstance(payload, str):
        return {"t": "(text)", "text": payload}
    return msgpack.unpackb(payload, raw=False)


class Player:
    """One person at one browser: a context of its own and every frame its page got."""

    def __init__(self, context: Any, page: Any, name: str) -> None:
        self.context = context
        self.page = page
        self.name = name
        self.received: list[Any] = []
        self.sent: list[Any] = []
        page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        ws.on("framereceived", lambda p: self.received.append(decode(p)))
        ws.on("framesent", lambda p: self.sent.append(decode(p)))

    @classmethod
    async def open(
        cls,
        browser: Any,
        base: str,
        name: str,
        path: str = "/",
        *,
        welcome: bool = True,
        **options: Any,
    ) -> Player:
        """A new browser at ``base + path`` that registers ``name`` on the first visit."""
        options.setdefault("viewport", {"width": 1280, "height": 800})
        context = await browser.new_context(**options)
        context.set_default_timeout(WAIT * 1000)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        # The page's CSP must refuse nothing the client does (a refusal logs an error).
        page.on(
            "console",
            lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
        )
        player = cls(context, page, name)
        player.errors = errors
        await page.goto(base + path)
        await page.fill("#ask-name", name)
        await page.press("#ask-name", "Enter")
        if welcome:
            await player.until(lambda: player.of("welcome"), "welcome")
        return player

    async def close(self) -> None:
        assert self.errors == [], self.errors
        await self.context.close()

    async def until(self, check: Callable[[], object], what: str, timeout: float = WAIT) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not check():
            if loop.time() > deadline:
                raise AssertionError(f"{self.name}: timed out waiting for {what}")
            await asyncio.sleep(0.02)

    def of(self, kind: str) -> list[Any]:
        return [f for f in self.received if f["t"] == kind]

    def answers(self) -> int:
        return sum(f["t"] in ("accepted", "refused", "undone") for f in self.received)

    async def status(self) -> str:
        return str(await self.page.locator(".status").inner_text())

    async def columns(self) -> list[list[str]]:
        """The face-up cards the page shows in each column, bottom to top."""
        got: list[list[str]] = await self.page.evaluate(
            "() => [...document.querySelectorAll('.cols .col')].map(c =>"
            " [...c.querySelectorAll('.pc.up')].map(e => e.dataset.card))"
        )
        return got

    async def answered(self, before: int, move: str) -> Any:
        """The answer to ``move``, once the page has drawn it (the board's ``data-seq``)."""
        await self.until(lambda: self.answers() > before, f"the answer to {move}")
        answer = [f for f in self.received if f["t"] in ("accepted", "refused", "undone")][-1]
        await self.page.wait_for_function(
            "(seq) => Number(document.querySelector('.board')?.dataset.seq) >= seq",
            arg=answer["seq"],
        )
        return answer

    def card(self, card: str) -> Any:
        return self.page.locator(f'.board .pc.up[data-card="{card}"]')

    def dest(self, dest: str, card: str) -> Any:
        if dest == "F":
            return self.page.locator(f'.slot.found[data-suit="{card[1]}"]')
        return self.page.locator(f'.col[data-dest="{dest}"]')

    async def play_keys(self, move: str) -> Any:
        """``move`` with the keyboard alone: the terminal client's keys."""
        card, dest = move.split(">")
        cols = await self.columns()
        n = next(i + 1 for i, c in enumerate(cols) if card in c)
        up = cols[n - 1]
        keys = [str(n), *["ArrowUp"] * (len(up) - 1 - up.index(card)), "f" if dest == "F" else dest]
        before = self.answers()
        for key in keys:
            await self.page.keyboard.press(key)
        return await self.answered(before, move)

    async def play_drag(self, move: str) -> Any:
        card, dest = move.split(">")
        before = self.answers()
        await self.card(card).drag_to(self.dest(dest, card), source_position=GRIP)
        return await self.answered(before, move)

    async def play_clicks(self, move: str) -> Any:
        card, dest = move.split(">")
        before = self.answers()
        await self.card(card).click(position=GRIP)
        # Held: the card (with what lies on it) is marked, and its legal places light up.
        await self.page.wait_for_selector(f'.pc.held[data-card="{card}"]')
        await self.page.wait_for_selector(".dest")
        await self.dest(dest, card).click(position=GRIP)
        return await self.answered(before, move)

    async def play_taps(self, move: str) -> Any:
        """``move`` on a touch screen: tap the card, then its place."""
        card, dest = move.split(">")
        before = self.answers()
        await self.card(card).tap(position=GRIP)
        await self.dest(dest, card).tap(position=GRIP)
        return await self.answered(before, move)

    async def play_double(self, move: str) -> Any:
        card, _ = move.split(">")
        before = self.answers()
        await self.card(card).dblclick(position=GRIP)
        return await self.answered(before, move)


async def create_room(player: Player, code: str = CODE, *, hints: bool = False) -> str:
    rooms = len(player.of("room"))
    await player.page.fill("#code", code)
    if hints:
        await player.page.check("#hints")
    await player.page.click("#create")
    await player.until(lambda: len(player.of("room")) > rooms, "the room")
    return str(player.of("room")[-1]["room"])


async def start_alone(player: Player, code: str = CODE, *, hints: bool = False) -> str:
    room = await create_room(player, code, hints=hints)
    races = len(player.of("race"))
    await player.page.click("#start")
    await player.until(lambda: len(player.of("race")) > races, "the race")
    await player.page.wait_for_selector(".board .pc.up")
    return room


def hidden_cards(game: Game) -> set[str]:
    """The cards face down in ``game`` (which knows them all)."""
    shown = set(CARD.findall(game.view()))
    every = {r + s for r in "A23456789TJQK" for s in "SHDC"}
    home = {
        "A23456789TJQK"[i] + suit
        for suit, height in zip("SHDC", game.foundation_heights(), strict=True)
        for i in range(height)
    }
    return every - shown - home


def strings(value: Any, key: str = "") -> list[str]:
    """Every string in a decoded frame outside the fields that name no card."""
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in NOT_CARDS for s in strings(v, k)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v, key)]
    return [value] if isinstance(value, str) else []


def check_fairness(frames: list[Any], code: str) -> int:
    """Replay a runner's frames on the full deal: no frame may carry a card that was face
    down for that runner when it came (a card an ``accepted`` turns up is its own news).
    Returns how many frames were checked: those up to a ``result`` that names the game
    code. Once the code is out every card is public (anyone can deal it), so what follows
    (a post-mortem's winning line, a replay) may name any card; a daily's result, whose
    code stays nil, ends nothing."""
    game: Game | None = None
    seen: set[str] = set()
    for checked, frame in enumerate(frames, 1):
        kind = frame["t"]
        if kind == "race" and game is None:
            game = Game.from_code(code)
        elif kind == "accepted" and game is not None:
            game.play(frame["move"])
        elif kind == "undone" and game is not None:
            game.undo()
        if game is not None:
            seen |= set(CARD.findall(game.view()))
            secret = hidden_cards(game) - seen
        else:
            secret = {r + s for r in "A23456789TJQK" for s in "SHDC"}
        found = {c for text in strings(frame) for c in CARD.findall(text)}
        assert not found & secret, (frame, found & secret)
        if kind == "result" and frame.get("code"):
            return checked
    return len(frames)


async def dom_shows_no_secret(player: Player, secret: set[str]) -> None:
    """The page's whole DOM (markup, attributes, text) names none of ``secret``."""
    html: str = await player.page.evaluate("() => document.documentElement.outerHTML")
    for card in secret:
        rank = "10" if card[0] == "T" else card[0]
        words = f"{RANK_WORDS[card[0]]} of {SUIT_WORDS[card[1]]}"
        for form in (f'data-card="{card}"', words, f"{rank}{GLYPHS[card[1]]}", f">{card}<"):
            assert form not in html, (card, form)
    assert html.count('class="pc down"') >= 1 or not secret


async def shot(player: Player, artifacts: Path, name: str) -> None:
    await player.page.screenshot(path=str(artifacts / f"web-{name}.png"), full_page=False)


class PrefixProxy:
    """A reverse proxy that serves the game under ``/yukon/``, as a site might: it strips
    the prefix from each connection's request line and passes the bytes on. One request
    per connection: it asks the server to close after each answer but a websocket's
    (``Connection: close``), so that it need not read the requests after the first."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.port = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        method, path, rest = head.split(b" ", 2)
        if not path.startswith(b"/yukon/"):
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        if b"\r\nupgrade: websocket" not in rest.lower():
            rest = rest[:-2] + b"Connection: close\r\n\r\n"
        up_writer.write(b" ".join((method, path[len(b"/yukon") :], rest)))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


# -- the tests ------------------------------------------------------------------------------


async def test_two_browsers_race_through_an_invite_link(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    line = winning_line()
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        # First paint, from the browser's own timing: a figure, not a test.
        paint = await alice.page.evaluate(
            "() => performance.getEntriesByType('paint').map(e => [e.name, e.startTime])"
        )
        print("\nfirst paint (ms since navigation):", paint)
        await alice.page.wait_for_selector("#new-room")
        await shot(alice, artifacts, "lobby")
        room = await create_room(alice)
        # The room shows its invite link, with a copy button; the address bar is that link.
        invite = await alice.page.input_value("#invite")
        assert invite == f"{base}/r/{room}"
        assert alice.page.url == invite
        await alice.context.grant_permissions(["clipboard-read", "clipboard-write"])
        await alice.page.click("#copy")
        await alice.page.wait_for_selector("text=copied")
        assert await alice.page.evaluate("() => navigator.clipboard.readText()") == invite

        # bob opens the link on a phone and goes straight into the room as a racer.
        bob = await Player.open(
            browser, base, "bob", f"/r/{room.lower()}", viewport={"width": 390, "height": 844}
        )
        await bob.until(lambda: bob.of("room"), "bob in the room")
        assert bob.of("room")[-1]["you"] == "player"
        await bob.page.click("#ready")
        await alice.page.wait_for_selector("text=Everyone is ready")
        await alice.page.click("#start")
        await alice.until(lambda: alice.of("race"), "alice's race")
        await bob.until(lambda: bob.of("race"), "bob's race")
        await alice.page.wait_for_selector(".board .pc.up")
        hidden_at_start = hidden_cards(Game.from_code(CODE))
        await dom_shows_no_secret(alice, hidden_at_start)
        await dom_shows_no_secret(bob, hidden_at_start)

        # alice: drags, clicks, a double-click, then the keyboard for the rest.
        ways = [alice.play_drag, alice.play_drag, alice.play_clicks, alice.play_drag]
        for i, move in enumerate(line):
            if i < len(ways):
                play = ways[i]
            elif move.endswith(">F") and i < 12:
                play = alice.play_double  # AH, 2H, AS, AD: home by a double-click
            elif i in (5, 7):
                play = alice.play_clicks
            else:
                play = alice.play_keys
            answer = await play(move)
            assert answer["t"] == "accepted", (move, answer)
            if i == 20:
                await shot(alice, artifacts, "race-desktop")
                # bob plays a move of his own on the phone, and sees alice ahead.
                bob_game = Game.from_position(bob.of("race")[-1]["view"])
                first = bob_game.legal_moves()[0]
                assert (await bob.play_keys(first))["t"] == "accepted"
                await bob.page.wait_for_selector(".standings li:first-child >> text=alice")
                standings = await bob.page.locator(".standings").inner_text()
                assert standings.index("alice") < standings.index("bob")
                await shot(bob, artifacts, "race-phone")
                game = Game.from_code(CODE)
                for m in line[: i + 1]:
                    game.play(m)
                await dom_shows_no_secret(alice, hidden_cards(game))
        assert alice.of("accepted")[-1]["state"] == "won"
        await alice.page.wait_for_selector("text=you won")

        # bob resigns (confirming); then both see the results.
        await bob.page.click("#resign")
        await bob.page.click("dialog #yes")
        await alice.until(lambda: alice.of("result"), "alice's result")
        await bob.until(lambda: bob.of("result"), "bob's result")
        await alice.page.wait_for_selector("text=You won in")
        await bob.page.wait_for_selector("text=You finished #2 of 2")
        ranks = await bob.page.locator("table").inner_text()
        assert ranks.index("alice") < ranks.index("bob") and "won" in ranks
        await shot(alice, artifacts, "results")
        assert check_fairness(alice.received, CODE) > len(line)
        check_fairness(bob.received, CODE)

        # carol joins the finished room from the lobby's form; alice's m is a rematch.
        carol = await Player.open(browser, base, "carol")
        await carol.page.fill("#room-code", room.lower())
        await carol.page.keyboard.press("Enter")
        await carol.until(lambda: carol.of("room"), "carol in the room")
        await alice.page.keyboard.press("m")
        for p in (alice, bob, carol):
            await p.until(lambda p=p: p.of("room")[-1]["state"] == "lobby", "the rematch")
        await bob.page.wait_for_selector("#ready")
        await carol.page.wait_for_selector("#ready")
        await alice.page.wait_for_selector("text=Waiting for bob and carol to be ready")
        for p in (alice, bob, carol):
            await p.close()


async def test_a_reload_mid_race_resumes(browser: Any, tmp_path: Path) -> None:
    line = winning_line()
    async with server_at(tmp_path) as server:
        alice = await Player.open(browser, f"http://127.0.0.1:{server.port}", "alice")
        await start_alone(alice, hints=True)
        for move in line[:3]:
            await alice.play_keys(move)
        before = await alice.columns()
        await alice.page.reload()
        await alice.until(lambda: len(alice.of("race")) == 2, "the race again")
        resumed = alice.of("race")[-1]
        assert resumed["seq"] == 3 and resumed["moves"] == 3
        await alice.page.wait_for_selector(".board .pc.up")
        assert await alice.columns() == before
        answer = await alice.play_clicks(line[3])
        assert answer["t"] == "accepted" and answer["seq"] == 4
        assert [f["seq"] for f in alice.sent if f["t"] == "move"] == [1, 2, 3, 4]
        # A hint (this room gives them): the next move of a winning line lights up.
        await alice.page.click("#hint")
        await alice.until(lambda: alice.of("hint_answer"), "the hint")
        hint = alice.of("hint_answer")[-1]
        assert hint["verdict"] == "win" and hint["seq"] == 4
        card, dest = hint["move"].split(">")
        await alice.page.wait_for_selector(f'.pc.hinted[data-card="{card}"]')
        await alice.page.wait_for_selector(f".hinted[data-dest='{dest}']")
        assert (await alice.play_keys(hint["move"]))["t"] == "accepted"
        await alice.close()


async def test_a_dropped_connection_resumes_by_itself(browser: Any, tmp_path: Path) -> None:
    line = winning_line()
    async with server_at(tmp_path) as server:
        proxy = TcpProxy("127.0.0.1", server.port)
        await proxy.start()
        try:
            alice = await Player.open(browser, f"http://127.0.0.1:{proxy.port}", "alice")
            await start_alone(alice)
            await alice.play_drag(line[0])
            await proxy.cut()
            await alice.page.wait_for_selector(".link.away")
            # A move played while away waits for the connection, with its seq.
            answers = alice.answers()
            card, dest = line[1].split(">")
            cols = await alice.columns()
            n = next(i + 1 for i, c in enumerate(cols) if card in c)
            up = cols[n - 1]
            for key in [str(n), *["ArrowUp"] * (len(up) - 1 - up.index(card)), dest]:
                await alice.page.keyboard.press(key)
            await alice.page.wait_for_selector(".status >> text=sent again once the connection")
            await proxy.restore()
            await alice.until(lambda: len(alice.of("race")) == 2, "the resync")
            await alice.page.wait_for_selector(".link.online")
            assert alice.of("race")[-1]["seq"] == 1
            # Resent after the resync, under the same seq, and played.
            answer = await alice.answered(answers, line[1])
            assert answer["t"] == "accepted" and answer["seq"] == 2
            assert [f["seq"] for f in alice.sent if f["t"] == "move"] == [1, 2]
            game = Game.from_code(CODE)
            for move in line[:2]:
                game.play(move)
            shown = [game.column(n)[game.face_down_count(n) :] for n in range(1, 8)]
            assert await alice.columns() == shown
            assert (await alice.play_keys(line[2]))["seq"] == 3
            await alice.close()
        finally:
            await proxy.cut()


async def test_a_refusal_the_keyboard_and_a_phone(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    line = winning_line()
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(
            browser,
            base,
            "alice",
            viewport={"width": 390, "height": 844},
            has_touch=True,
            is_mobile=True,
        )
        await start_alone(alice)
        # A refused move (two taps) changes nothing and shows the server's own reason.
        before = await alice.columns()
        start = Game.from_code(CODE)
        wrong = next(
            f"{start.column(1)[-1]}>{d}"
            for d in range(2, 8)
            if f"{start.column(1)[-1]}>{d}" not in start.legal_moves()
        )
        answer = await alice.play_taps(wrong)
        assert answer["t"] == "refused"
        await alice.page.wait_for_selector(f".status.error >> text={answer['reason']}")
        await alice.page.wait_for_selector(f"#live >> text={answer['reason']}", state="attached")
        assert await alice.columns() == before
        # A screen reader reads the board: columns as lists, cards by name, backs as such.
        first = start.column(1)[-1]
        rank = RANK_WORDS[first[0]]
        column = alice.page.get_by_role("list", name="column 1: one card face up")
        assert await column.get_by_role(
            "listitem", name=f"{rank} of {SUIT_WORDS[first[1]]}, column 1, face up"
        ).count()
        # A column's backs are one item, its count (tests/web/test_access.py: every name).
        backs = alice.page.get_by_role("listitem", name=re.compile(r"cards? face down$"))
        assert await backs.count() == 6
        # The keyboard alone: pick, deeper, drop, home; Escape puts a card back.
        await alice.page.keyboard.press("3")
        await alice.page.keyboard.press("Escape")
        assert await alice.page.locator(".pc.held").count() == 0
        assert (await alice.play_taps(line[0]))["t"] == "accepted"
        for move in line[1:24]:
            assert (await alice.play_keys(move))["t"] == "accepted", move
        # All seven columns across the phone, the longest (22 cards) on the screen.
        boxes = await alice.page.evaluate(
            "() => [...document.querySelectorAll('.cols .col')].map(c => {"
            " const r = c.getBoundingClientRect(); const cards = c.querySelectorAll('.pc');"
            " const last = cards.length ? cards[cards.length - 1].getBoundingClientRect() : r;"
            " return [r.left, r.right, last.bottom, cards.length]; })"
        )
        assert len(boxes) == 7
        assert all(left >= 0 and right <= 390 for left, right, _, _ in boxes), boxes
        assert max(n for *_, n in boxes) >= 18
        assert all(bottom <= 844 for _, _, bottom, _ in boxes), boxes
        await shot(alice, artifacts, "race-phone-deep")
        # Undo from the keyboard takes the last move back.
        before = alice.answers()
        await alice.page.keyboard.press("u")
        assert (await alice.answered(before, "undo"))["t"] == "undone"
        await alice.close()


async def test_the_daily_deal_the_boards_and_the_history(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    async with server_at(tmp_path) as server:
        alice = await Player.open(browser, f"http://127.0.0.1:{server.port}", "alice")
        today = dt.datetime.now(dt.UTC).date()
        choice = await server.boards.dailies.get(today)
        # d asks first: the attempt that counts.
        await alice.page.keyboard.press("d")
        await alice.page.wait_for_selector("dialog >> text=your one attempt that counts")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("daily_deal"), "the daily deal")
        deal = alice.of("daily_deal")[-1]
        assert deal["attempt"] == 1 and not deal["practice"] and deal["par"] == choice.par
        await alice.page.wait_for_selector(
            f".race-head >> text=attempt 1 (counts) · par {choice.par}"
        )
        game = Game.from_code(str(choice.code))
        move = game.legal_moves()[0]
        assert (await alice.play_keys(move))["t"] == "accepted"
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        await alice.page.wait_for_selector(
            f"text=attempt 1 (counts for the leaderboard) · par {choice.par} moves"
        )
        await alice.page.wait_for_selector("text=stays secret until 00:35 UTC")
        # b: the day's board, with alice on it.
        await alice.page.keyboard.press("b")
        await alice.page.wait_for_selector(f"#board-title >> text=Daily deal {today.isoformat()}")
        await alice.page.wait_for_selector("table >> text=alice")
        await shot(alice, artifacts, "daily-board")
        await alice.page.keyboard.press("Escape")
        # a second attempt is practice.
        await alice.page.keyboard.press("a")
        await alice.until(lambda: len(alice.of("daily_deal")) == 2, "the second attempt")
        assert alice.of("daily_deal")[-1]["practice"] is True
        await alice.page.wait_for_selector(".race-head >> text=attempt 2 (practice)")
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: len(alice.of("result")) == 2, "the second result")
        await alice.page.keyboard.press("l")
        await alice.page.wait_for_selector("#new-room")

        # A race on a chosen code, then that code's board (typed in) and the history.
        await start_alone(alice)
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: len(alice.of("result")) == 3, "the race's result")
        await alice.page.keyboard.press("l")
        await alice.page.wait_for_selector("#new-room")
        await alice.page.keyboard.press("l")
        await alice.page.wait_for_selector("#board-code")
        await alice.page.keyboard.press("c")
        await alice.page.keyboard.type(CODE.lower())
        await alice.page.keyboard.press("Enter")
        await alice.page.wait_for_selector(f"#board-title >> text=Game code {CODE} · 1 player")
        await alice.page.wait_for_selector("table >> text=alice")
        await alice.page.keyboard.press("Escape")
        await alice.page.keyboard.press("h")
        await alice.page.wait_for_selector("text=3 races · 0 won")
        rows = await alice.page.locator("tbody tr").count()
        assert rows == 3
        history = await alice.page.locator("table").inner_text()
        assert f"daily {today.isoformat()} (practice)" in history and "resigned" in history
        await shot(alice, artifacts, "history")
        await alice.close()


async def test_race_a_run_of_a_board_as_a_ghost(browser: Any, tmp_path: Path) -> None:
    """A board row's Race button opens a ghost room on its deal (protocol 4.23): started,
    the recorded run is in the standings, marked as a ghost, and then in the results."""
    line = winning_line()
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(Race)
        for seq, move in enumerate(line[:3], start=1):
            await ann.send(MoveMsg(seq, move))
            await asyncio.sleep(0.05)
        await ann.send(Resign())
        await ann.expect(Result)
        bob = await Player.open(browser, f"http://127.0.0.1:{server.port}", "bob")
        await bob.page.keyboard.press("l")
        await bob.page.wait_for_selector("#board-code")
        await bob.page.keyboard.press("c")
        await bob.page.keyboard.type(CODE)
        await bob.page.keyboard.press("Enter")
        await bob.page.wait_for_selector("table >> text=ann")
        await bob.page.click("table >> button:has-text('Race')")
        await bob.until(lambda: any(f.get("ghost") == "ann" for f in bob.of("room")), "the room")
        assert bob.sent[-1]["t"] == "ghost" and bob.sent[-1]["player"] == "ann"
        await bob.page.wait_for_selector("text=Racing ann's run as a ghost")
        await bob.page.click("#start")
        await bob.until(lambda: bob.of("race"), "the race")
        await bob.page.wait_for_selector(".standings >> text=ann (ghost)")
        await bob.until(
            lambda: any(
                (f.get("ghost") or {}).get("state") == "resigned" for f in bob.of("progress")
            ),
            "the ghost done",
        )
        await bob.page.keyboard.press("r")
        await bob.page.keyboard.press("y")
        await bob.until(lambda: bob.of("result"), "the result")
        await bob.page.wait_for_selector("table >> text=ann (ghost)")
        # From the replay too: ann's run replayed from the board, r races it.
        await bob.page.keyboard.press("l")
        await bob.page.wait_for_selector("#new-room")
        await bob.page.keyboard.press("l")
        await bob.page.wait_for_selector("#board-code")
        await bob.page.keyboard.press("c")
        await bob.page.keyboard.type(CODE)
        await bob.page.keyboard.press("Enter")
        await bob.page.click('button[aria-label="replay ann\'s run"]')
        await bob.page.wait_for_selector("#replay-title >> text=ann's run")
        rooms = len(bob.of("room"))
        await bob.page.click("#replay-race")
        await bob.until(lambda: len(bob.of("room")) > rooms, "the second ghost room")
        assert bob.of("room")[-1]["ghost"] == "ann"
        await bob.page.wait_for_selector("text=Racing ann's run as a ghost")
        await bob.close()
        await ann.ws.close()


async def test_a_terminal_client_and_a_browser_race(browser: Any, tmp_path: Path) -> None:
    line = winning_line()
    async with server_at(tmp_path) as server:
        alice = await Player.open(browser, f"http://127.0.0.1:{server.port}", "alice")
        room = await create_room(alice)
        app = YukonApp(
            f"ws://127.0.0.1:{server.port}",
            name="terry",
            store=TokenStore(tmp_path / "config"),
            backoff=(0.05,),
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.session.me == "terry", "terry online", WAIT)
            await pilot.click("#room-code")
            await pilot.press(*room, "enter")
            await until(pilot, lambda: app.session.room is not None, "terry in the room", WAIT)
            await pilot.press("space")  # ready
            await alice.page.wait_for_selector("text=Everyone is ready")
            await alice.page.click("#start")
            await until(pilot, lambda: app.session.race is not None, "terry's race", WAIT)
            await alice.until(lambda: alice.of("race"), "alice's race")
            # terry plays two moves by keys, alice three by mouse and keys.
            for move in line[:2]:
                done = racing(app.session).last_seq + 1
                await pilot.press(*keys_for(racing(app.session), move))
                await until(pilot, lambda d=done: racing(app.session).last_seq >= d, move, WAIT)
            for move in line[:3]:
                await alice.play_drag(move)
            await alice.page.wait_for_selector(".standings >> text=terry")
            await until(
                pilot,
                lambda: any(p.name == "alice" and p.moves == 3 for p in app.session.standings()),
                "alice's progress on the terminal",
                WAIT,
            )
            await alice.until(
                lambda: any(
                    p["name"] == "terry" and p["moves"] == 2
                    for f in alice.of("progress")
                    for p in f["players"]
                ),
                "terry's progress in the browser",
            )
            await pilot.press("r", "y")
            await alice.page.click("#resign")
            await alice.page.click("dialog #yes")
            await until(pilot, lambda: app.session.result is not None, "terry's result", WAIT)
            await alice.until(lambda: alice.of("result"), "alice's result")
            names = [r["name"] for r in alice.of("result")[-1]["ranks"]]
            assert sorted(names) == ["alice", "terry"]
            await alice.page.wait_for_selector("table >> text=terry")
        await alice.close()


async def test_options_hints_a_spectator_and_a_checked_secret_deal(
    browser: Any, tmp_path: Path
) -> None:
    async with server_at(tmp_path) as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice")
        # Every option of the form reaches the create: a random Relaxed deal with take-back,
        # no undo, hints, two players, five minutes.
        await alice.page.select_option("#variant", "R")
        await alice.page.check("#opt-t")
        await alice.page.uncheck("#undo")
        await alice.page.check("#hints")
        await alice.page.select_option("#players", "2")
        await alice.page.select_option("#time", "300")
        await alice.page.keyboard.press("Escape")
        await alice.page.click("#create")
        await alice.until(lambda: alice.of("room"), "the room")
        create = next(f for f in alice.sent if f["t"] == "create")
        assert create == {
            "t": "create",
            "rules": "RT",
            "max_players": 2,
            "undo": False,
            "time_limit": 300,
            "hints": True,
        }
        room = alice.of("room")[-1]
        assert room["code"] is None and len(room["commitment"]) == 64
        await alice.page.wait_for_selector(f"text={room['commitment']}")
        await alice.page.click("#start")
        await alice.until(lambda: alice.of("race"), "the race")
        await alice.page.wait_for_selector(".board .pc.up")
        assert await alice.page.locator("#undo").is_hidden()
        # A hint: the server's next move of a winning line lights up, and is played.
        await alice.page.keyboard.press("h")
        await alice.until(lambda: alice.of("hint_answer"), "the hint")
        hint = alice.of("hint_answer")[-1]
        await alice.page.wait_for_selector(".status >> text=hint:")
        if hint["verdict"] == "win":
            await alice.page.wait_for_selector(".pc.hinted")
            assert (await alice.play_keys(hint["move"]))["t"] == "accepted"
        # bob opens the invite link while the race runs: he watches, and sees no card.
        bob = await Player.open(browser, base, "bob", f"/r/{room['room']}")
        await bob.until(
            lambda: bob.of("room") and bob.of("room")[-1]["you"] == "spectator", "watch"
        )
        await bob.page.wait_for_selector(".standings >> text=alice")
        assert await bob.page.locator(".pc").count() == 0
        await bob.page.wait_for_selector("text=nobody's cards")
        await alice.page.keyboard.press("r")
        await alice.page.keyboard.press("y")
        await alice.until(lambda: alice.of("result"), "the result")
        result = alice.of("result")[-1]
        assert result["code"] and result["salt"]
        # The revealed code checks against the commitment (WebCrypto on this page).
        await alice.page.wait_for_selector("#fairness.good >> text=deal checked")
        await bob.page.wait_for_selector("#fairness.good >> text=deal checked")
        await bob.page.wait_for_selector("text=The race is over")
        if hint["verdict"] == "win":
            await alice.page.wait_for_selector("table >> text=(hint)")
        # The SHA-256 a plain-http page falls back on gives WebCrypto's answer.
        version = re.search(r"static/([0-9a-f]+)/", await alice.page.content())
        assert version is not None
        text = f"{result['code']}:{result['salt']}"
        ours = await alice.page.evaluate(
            """async ([url, text]) => { const m = await import(url);
            return [...m.sha256(new TextEncoder().encode(text))]
              .map((b) => b.toString(16).padStart(2, "0")).join(""); }""",
            [f"/static/{version.group(1)}/commit.js", text],
        )
        assert ours == hashlib.sha256(text.encode()).hexdigest() == room["commitment"]
        assert check_fairness(alice.received, result["code"]) > 0
        check_fairness(bob.received, result["code"])  # a spectator: no card at all
        await alice.close()
        await bob.close()


async def test_a_private_server_asks_for_its_password(browser: Any, tmp_path: Path) -> None:
    async with server_at(tmp_path, password="open sesame") as server:
        base = f"http://127.0.0.1:{server.port}"
        alice = await Player.open(browser, base, "alice", welcome=False)
        await alice.page.wait_for_selector("#ask-password")
        await alice.page.fill("#ask-password", "wrong")
        await alice.page.press("#ask-password", "Enter")
        await alice.page.wait_for_selector("text=the password is wrong or missing")
        await alice.page.fill("#ask-password", "open sesame")
        await alice.page.press("#ask-password", "Enter")
        await alice.until(lambda: alice.of("welcome"), "welcome")
        await alice.page.wait_for_selector("#new-room")
        # The next visit needs neither the name nor the password.
        await alice.page.reload()
        await alice.page.wait_for_selector("#new-room")
        # The page may draw the lobby before Playwright hands us the frame: wait for it.
        await alice.until(lambda: len(alice.of("welcome")) == 2, "the welcome after the reload")
        hellos = [f for f in alice.sent if f["t"] == "hello"]
        assert hellos[-1]["password"] == "open sesame" and "token" in hellos[-1]
        # Another browser: a name taken already is asked again, with the server's reason.
        other = await Player.open(browser, base, "Alice", welcome=False)
        await other.page.wait_for_selector("#ask-password")
        await other.page.fill("#ask-password", "open sesame")
        await other.page.press("#ask-password", "Enter")
        await other.until(
            lambda: any(f.get("code") == "name_taken" for f in other.of("error")), "name_taken"
        )
        await other.page.wait_for_selector("#ask-name")
        problem = other.of("error")[-1]["text"]
        await other.page.wait_for_selector(f".problem >> text={problem}")
        await other.page.fill("#ask-name", "bob")
        await other.page.press("#ask-name", "Enter")
        await other.until(lambda: other.of("welcome"), "bob's welcome")
        await other.page.wait_for_selector("#new-room")
        await alice.close()
        await other.close()


async def test_the_game_under_a_proxy_s_path_prefix(browser: Any, tmp_path: Path) -> None:
    """Every URL the page uses is relative to it: under /yukon/ it finds its files, its
    websocket and its invite links there too."""
    async with server_at(tmp_path) as server:
        proxy = PrefixProxy(server.port)
        await proxy.start()
        try:
            base = f"http://127.0.0.1:{proxy.port}/yukon"
            alice = await Player.open(browser, base, "alice", "/")
            room = await create_room(alice)
            invite = await alice.page.input_value("#invite")
            assert invite == f"{base}/r/{room}" == alice.page.url
            link = await alice.page.get_attribute(".top-links a", "href")
            assert link == f"{base}/leaderboard"
            bob = await Player.open(browser, base, "bob", f"/r/{room}")
            await bob.until(lambda: bob.of("room"), "bob in the room")
            assert [p["name"] for p in bob.of("room")[-1]["players"]] == ["alice", "bob"]
            await alice.close()
            await bob.close()
        finally:
            await proxy.close()
