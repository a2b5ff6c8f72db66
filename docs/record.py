"""Record the worked examples (docs/protocol.md Part I, docs/protocol-examples.md) from the server.

Run from the repository root::

    python docs/record.py             # print every example (or name some: 7.1 7.3)
    python docs/record.py --write     # re-record every example into docs/protocol*.md

The quick start's example and sections 7.1 to 7.3 start the server in this process (a
fresh SQLite database in a temporary directory each, a 500 ms countdown, no progress
hold) and play their scenario with real websocket clients. Everything that is random on
a real server is fixed: the registration tokens, room codes, random deals, commitment
salts, the daily secret and the server's wall clock (which starts at a fixed moment and
then runs at the real pace). Section 7.4, a crash, is recorded from the server's room
logic (``server.rooms.Hub``) with a fake clock, since a crash cannot be timed to the
millisecond on a real server: there every frame, time included, is the same on every run.

What differs from run to run (except in 7.4) are the times (``elapsed_ms``, ``time_ms``,
``finished_ms``) and the sizes of the frames that carry them (a msgpack integer takes 1
to 9 bytes). ``tests/test_docs.py`` records everything again and compares it with the
document, times aside (7.4 exactly): a change to what the server sends fails the suite
until the examples are recorded again with ``--write``.

In the document each recording sits between the lines ``<!-- recorded: NAME -->`` and
``<!-- end of recording: NAME -->`` (NAME: ``quick start``, ``7.1`` ... ``7.4``);
``--write`` replaces what is between them and nothing else (the introductions and the
"Points to notice" are written by hand).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import itertools
import json
import os
import re
import secrets
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol import Game
from protocol.messages import decode_client, encode
from server.app import ServeOptions, open_server
from server.domain.records import LiveAction, LiveRace
from server.rooms import Hub, HubConfig
from server.rooms.effects import Authenticate, Journal, Send

DOC = Path(__file__).resolve().parent / "protocol.md"
#: The documents holding recordings: the reference, and its worked examples (section 7).
DOCS = (DOC, DOC.with_name("protocol-examples.md"))
SECTIONS = ("quick start", "7.1", "7.2", "7.3", "7.4", "7.6", "4.26")
SECRET = "worked-example"
#: The server's wall clock when each recording starts.
CLOCK_28 = dt.datetime(2026, 11, 28, 18, tzinfo=dt.UTC).timestamp()
CLOCK_29 = dt.datetime(2026, 11, 29, 18, tzinfo=dt.UTC).timestamp()
TOKENS = {
    "alice": "q4Zt7mPc0vXbW2yLk9sHn3RfJd8aEuGo",
    "bob": "Vh5nQe1uYp6kTz0rMa3cLw8xSb2dNi4F",
    "bob2": "b0bT0ken" + "B" * 24,
    "carol": "caR0lT0ken" + "C" * 22,
    "Dave": "dAv3T0ken" + "D" * 23,
    "erin": "eR1nT0ken" + "E" * 23,
}
#: The random deals a server draws, in order (a shuffle seed each).
SEEDS = (20261128, 20261129, 20261130)
#: How long a client waits for more frames after the last one (there is no progress hold).
QUIET_S = 0.25
#: How long a client waits at most for a frame it expects (a countdown, a commit).
EXPECT_S = 10.0


def pack(message: dict[str, Any]) -> bytes:
    """A client frame as a client would write it: only the fields it means to send."""
    data = msgpack.packb(message)
    assert isinstance(data, bytes)
    decode_client(data)  # a frame the server accepts as well formed
    return data


def show(raw: bytes) -> str:
    return json.dumps(msgpack.unpackb(raw, raw=False), ensure_ascii=False)


def move(seq: int, text: str) -> dict[str, Any]:
    return {"t": "move", "seq": seq, "move": text}


def hex_lines(raw: bytes) -> list[str]:
    return ["    " + " ".join(f"{b:02x}" for b in raw[i : i + 16]) for i in range(0, len(raw), 16)]


class Transcript:
    """The Markdown of one section's steps."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def frame(self, arrow: str, raw: bytes, *, dump: bool = False) -> None:
        self.lines.append(f"{arrow}  ({len(raw)} bytes)")
        self.lines.append(f"  {show(raw)}")
        if dump:
            self.lines.extend(hex_lines(raw))

    def step(self, title: str, body: list[str] | None = None) -> None:
        self.lines += [f"**{title}**", ""]
        if body is not None:
            self.lines += ["```text", *body, "```", ""]

    def text(self) -> str:
        return "\n".join(self.lines).rstrip() + "\n"


class Player:
    """One websocket client; ``label`` is how the transcript names it."""

    def __init__(self, label: str, ws: ClientConnection) -> None:
        self.label = label
        self.ws = ws
        self.open = True

    async def frames(self, expect: str | None, dump: bool) -> list[tuple[str, bytes | str]]:
        """Every frame until the line is quiet (after a frame of type ``expect``, if given)."""
        got: list[tuple[str, bytes | str]] = []
        waiting = expect
        while self.open:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), EXPECT_S if waiting else QUIET_S)
            except TimeoutError:
                assert waiting is None, f"{self.label}: no {waiting} came"
                return got
            except ConnectionClosed:
                self.open = False
                got.append(("closed", self.closed_line()))
                return got
            assert isinstance(raw, bytes)
            kind = msgpack.unpackb(raw, raw=False)["t"]
            if kind == waiting:
                waiting = None
            got.append((kind, raw))
        return got

    def closed_line(self) -> str:
        code, reason = self.ws.close_code, self.ws.close_reason
        return f"server → {self.label}  [connection closed: code {code}, reason {reason!r}]"


class Scene:
    """Clients of one server run; each exchange prints what every client received."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.players: list[Player] = []
        self.t = Transcript()
        self.last: dict[str, dict[str, Any]] = {}

    async def join(self, label: str) -> Player:
        ws = await connect(self.url, compression=None, max_size=2**20)
        player = Player(label, ws)
        self.players.append(player)
        return player

    async def exchange(
        self,
        sender: Player | None,
        messages: list[dict[str, Any]],
        *,
        expect: dict[Player, str] | None = None,
        dump: bool = False,
        shown: bool = True,
    ) -> list[str]:
        """Send ``messages`` (none: just listen), then collect every client's frames.

        The sender's frames come first, then the others' in the order they connected
        (the order between clients means nothing). ``expect`` names, per client, a frame
        that is sure to come but may take a while (the race after a countdown, a result
        after the database commit).
        """
        lines: list[str] = []
        if sender is not None:
            for message in messages:
                data = pack(message)
                lines.append(f"{sender.label} → server  ({len(data)} bytes)")
                lines.append(f"  {show(data)}")
                if dump:
                    lines.extend(hex_lines(data))
                await sender.ws.send(data)
        order = [p for p in self.players if p is sender] + [
            p for p in self.players if p is not sender
        ]
        expect = expect or {}
        listening = [p for p in order if p.open]
        got = await asyncio.gather(*(p.frames(expect.get(p), dump) for p in listening))
        for player, frames in zip(listening, got, strict=True):
            for kind, raw in frames:
                if isinstance(raw, str):
                    lines.append(raw)
                    continue
                self.last[f"{player.label}:{kind}"] = msgpack.unpackb(raw, raw=False)
                lines.append(f"server → {player.label}  ({len(raw)} bytes)")
                lines.append(f"  {show(raw)}")
                if dump:
                    lines.extend(hex_lines(raw))
        return lines if shown else []

    async def step(
        self,
        title: str,
        sender: Player | None,
        *messages: dict[str, Any],
        expect: dict[Player, str] | None = None,
        dump: bool = False,
    ) -> None:
        self.t.step(title, await self.exchange(sender, list(messages), expect=expect, dump=dump))

    async def quietly(
        self, sender: Player, *messages: dict[str, Any], expect: str | None = None
    ) -> None:
        await self.exchange(sender, list(messages), expect={sender: expect} if expect else None)

    async def close(self, *players: Player) -> list[str]:
        """The clients close their connections (the close code is the server's answer)."""
        lines: list[str] = []
        for player in players:
            await player.ws.close()
            player.open = False
            lines.append(player.closed_line())
        return lines


@contextlib.contextmanager
def fixed(tokens: list[str]) -> Iterator[None]:
    """Registration tokens in this order, and a fixed daily commitment salt."""
    issued = iter(tokens)
    saved = secrets.token_urlsafe, secrets.token_hex
    secrets.token_urlsafe = lambda _n=24: next(issued)  # type: ignore[assignment]
    secrets.token_hex = lambda _n=16: "5a17" * 8  # type: ignore[assignment]
    try:
        yield
    finally:
        secrets.token_urlsafe, secrets.token_hex = saved


@contextlib.asynccontextmanager
async def server(
    tmp: str,
    rooms: Iterator[str],
    clock: list[float],
    db: str = "example",
    hub: HubConfig | None = None,
) -> Any:
    options = ServeOptions(
        port=0,
        host="127.0.0.1",
        db=f"sqlite:///{tmp}/{db}.db",
        spool=Path(tmp) / "spool.jsonl",
        daily_secret=SECRET,
        # No progress hold, as in every example of section 7: each move's progress at
        # once, to every member (section 4.11 says what the hold changes).
        hub=hub or HubConfig(countdown_s=0.5, progress_hold_s=0),
        solver_processes=0,
    )
    started = time.time()
    seeds = iter(SEEDS)
    salts = (f"{n:032x}" for n in itertools.count(0xC0FFEE))
    hub_options = {
        # The wall clock starts at clock[0] and runs at the real pace from there.
        "wall_clock": lambda: clock[0] + time.time() - started,
        "new_room_code": lambda: next(rooms),
        "random_deal": lambda: next(seeds),
        "new_salt": lambda: next(salts),
        # The stock of winnable deals (section 4.34) proves the same seeds first (each is
        # won), so a room dealt from it races the deal the examples were written for.
        "stock_seed": lambda: next(stock),
        "boot_id": "5eed0b007000",  # race ids (``result.race``) too
    }
    stock = itertools.chain(SEEDS, itertools.count(SEEDS[-1] + 1))
    async with open_server(options, hub_options=hub_options) as running:
        # Filled before the first scene, so that every room is dealt from it.
        for _ in range(1000):
            if running.hub.winnable_stock.size("C") >= options.hub.winnable_stock:
                break
            await asyncio.sleep(0.01)
        yield running


# -- the quick start (Part I) ----------------------------------------------------------------


async def record_quick_start() -> str:
    with fixed([TOKENS["alice"]]), tempfile.TemporaryDirectory() as tmp:
        async with server(tmp, iter(["K7WQM"]), [CLOCK_28]) as srv:
            s = Scene(f"ws://127.0.0.1:{srv.port}")
            alice = await s.join("alice")
            await s.step(
                "1. hello: register a name, get a token",
                alice,
                {"t": "hello", "v": 1, "name": "alice"},
                expect={alice: "welcome"},
            )
            await s.step(
                "2. create: a room for the deal YU1-C-AAAAAAB; alice is its host",
                alice,
                {"t": "create", "code": "YU1-C-AAAAAAB"},
            )
            await s.step(
                "3. start: a host alone may start; the countdown (500 ms here, 3 s by"
                " default), then the race",
                alice,
                {"t": "start"},
                expect={alice: "progress"},
            )
            await s.step("4. move: the first move of the race, seq 1", alice, move(1, "7H>2"))
            await s.step(
                "5. resign: the race is over; the result comes once it is stored",
                alice,
                {"t": "resign"},
                expect={alice: "room"},
            )
            await s.close(alice)
    return s.t.text()


# -- 7.1 -----------------------------------------------------------------------------------


async def record_7_1() -> str:
    with fixed([TOKENS["alice"], TOKENS["bob"]]), tempfile.TemporaryDirectory() as tmp:
        async with server(tmp, iter(["K7WQM"]), [CLOCK_28]) as srv:
            s = Scene(f"ws://127.0.0.1:{srv.port}")
            alice = await s.join("alice")
            await s.step(
                "Step 1. alice connects and says hello",
                alice,
                {"t": "hello", "v": 1, "name": "alice"},
                dump=True,
                expect={alice: "welcome"},
            )
            bob = await s.join("bob")
            await s.step(
                "Step 2. bob connects and says hello (no token: a new player)",
                bob,
                {"t": "hello", "v": 1, "name": "bob", "token": None},
                dump=True,
                expect={bob: "welcome"},
            )
            await s.step(
                "Step 3. alice creates a room for the game code YU1-C-AAAAAAB",
                alice,
                {
                    "t": "create",
                    "code": "YU1-C-AAAAAAB",
                    "max_players": 2,
                    "undo": True,
                    "time_limit": 600,
                },
                dump=True,
            )
            await s.step(
                "Step 4. bob joins, typing the room code in lower case",
                bob,
                {"t": "join", "room": "k7wqm"},
            )
            await s.step("Step 5. bob tries to start: only the host may", bob, {"t": "start"})
            await s.step("Step 6. bob is ready", bob, {"t": "ready", "ready": True})
            await s.step(
                "Step 7. alice (host) starts: the countdown (500 ms on this server) begins",
                alice,
                {"t": "start"},
            )
            await s.step(
                "Step 8. 500 ms after the countdown message the race begins",
                None,
                expect={alice: "progress", bob: "progress"},
            )

            await s.step(
                "Step 9. alice plays 7h>2 (lower case is accepted; the reply is canonical)",
                alice,
                move(1, "7h>2"),
                dump=True,
            )
            await s.step("Step 10. bob tries an illegal move", bob, move(1, "9D>2"))
            await s.step(
                "Step 11. bob plays 6H>7, which turns up a card in column 2", bob, move(2, "6H>7")
            )
            await s.step(
                "Step 12. bob resends seq 2 (as after a lost reply): the identical answer,"
                " nothing played",
                bob,
                move(2, "6H>7"),
            )
            await s.step(
                "Step 13. alice plays KD>1 (turns up a card in column 5)", alice, move(2, "KD>1")
            )
            await s.step(
                "Step 14. alice plays AH>F (10 for the foundation + 5 for the flip)",
                alice,
                move(3, "AH>F"),
            )
            await s.step("Step 15. alice takes it back", alice, {"t": "undo", "seq": 4})
            await s.step(
                "Step 16. bob sends something that is not a move, numbered 5 (seq need only"
                " increase)",
                bob,
                move(5, "7S-4"),
            )
            await s.step(
                "Step 17. bob sends seq 4, older than his last (5) and never used: stale_seq",
                bob,
                move(4, "8S>6"),
            )
            await s.step("Step 18. alice plays AH>F again", alice, move(5, "AH>F"))
            await s.step("Step 19. alice tries to leave while still racing", alice, {"t": "leave"})
            await s.step("Step 20. bob resigns", bob, {"t": "resign"})
            await s.step(
                "Step 21. alice resigns: everyone is done; the result follows once the"
                " database has committed the race",
                alice,
                {"t": "resign"},
                expect={alice: "room", bob: "room"},
            )
            await s.step(
                "Step 22. alice (host) asks for a rematch: new random deal, same rules,"
                " ready cleared",
                alice,
                {"t": "rematch"},
            )
            await s.step(
                "Step 23. bob leaves: he gets `left`, alice the new room", bob, {"t": "leave"}
            )
            s.t.step("Step 24. both clients close their connections", await s.close(bob, alice))
    return s.t.text()


# -- 7.2 -----------------------------------------------------------------------------------


async def record_7_2() -> str:
    tokens = [TOKENS["alice"], TOKENS["bob2"], TOKENS["carol"]]
    with fixed(tokens), tempfile.TemporaryDirectory() as tmp:
        async with server(tmp, iter(["P3XRT"]), [CLOCK_28]) as srv:
            s = Scene(f"ws://127.0.0.1:{srv.port}")
            alice, bob = await s.join("alice"), await s.join("bob")
            await s.quietly(alice, {"t": "hello", "v": 1, "name": "alice"}, expect="welcome")
            await s.quietly(bob, {"t": "hello", "v": 1, "name": "bob"}, expect="welcome")
            await s.quietly(alice, {"t": "create", "rules": "C", "max_players": 2})
            await s.quietly(bob, {"t": "join", "room": "P3XRT"}, {"t": "ready", "ready": True})
            await s.exchange(alice, [{"t": "start"}], expect={alice: "progress", bob: "progress"})
            s.t.step(
                'Step 1. Setup, frames not shown: alice creates a room with `{"t": "create",'
                ' "rules": "C", "max_players": 2}` (random deal), bob joins and says ready,'
                " alice starts; the race is running."
            )
            carol = await s.join("carol")
            lines = await s.exchange(
                carol, [{"t": "hello", "v": 1, "name": "carol"}], expect={carol: "welcome"}
            )
            lines += await s.exchange(
                carol, [{"t": "watch", "room": "P3XRT"}], expect={carol: "progress"}
            )
            s.t.step("Step 2. carol connects and watches the race", lines)
            lines = await s.close(bob)
            lines += await s.exchange(None, [], expect={alice: "progress", carol: "progress"})
            s.t.step("Step 3. bob's connection drops (here: his client closes it)", lines)
            bob2 = await s.join("bob#2")
            await s.step(
                "Step 4. bob reconnects and resumes with his token; the others see him"
                " connected again",
                bob2,
                {"t": "hello", "v": 1, "token": TOKENS["bob2"]},
                expect={bob2: "progress"},
            )
            bob3 = await s.join("bob#3")
            await s.step(
                "Step 5. bob opens a third connection with the same token: the second is"
                " closed with 4001",
                bob3,
                {"t": "hello", "v": 1, "token": TOKENS["bob2"]},
                expect={bob3: "progress"},
            )
    return s.t.text()


# -- 7.3 -----------------------------------------------------------------------------------


def first_move(view: str) -> str:
    return sorted(Game.from_position(view).legal_moves())[0]


async def record_7_3() -> str:
    # Every registration draws a token, also one refused as name_taken (erin's "dave").
    tokens = [TOKENS["Dave"], "unused" * 5 + "XX", TOKENS["erin"]]
    clock = [CLOCK_29]
    rooms = (f"D4LY{i}" for i in itertools.count(1))
    with fixed(tokens), tempfile.TemporaryDirectory() as tmp:
        async with server(tmp, rooms, clock) as srv:
            await srv.boards.dailies.get(dt.date(2026, 11, 29))  # chosen ahead, as usual
            s = Scene(f"ws://127.0.0.1:{srv.port}")
            dave, erin = await s.join("dave"), await s.join("erin")
            await s.step(
                "Step 1. dave connects and registers his name",
                dave,
                {"t": "hello", "v": 1, "name": "Dave"},
                expect={dave: "welcome"},
            )
            await s.step(
                "Step 2. erin tries the name dave: it is registered (case does not matter)",
                erin,
                {"t": "hello", "v": 1, "name": "dave"},
                expect={erin: "error"},
            )
            await s.step(
                "Step 3. erin says hello as erin and, without waiting for the welcome,"
                " asks for a board",
                erin,
                {"t": "hello", "v": 1, "name": "erin"},
                {"t": "board", "kind": "daily"},
                expect={erin: "welcome"},
            )
            await s.step(
                "Step 4. dave asks for the daily deal: no countdown, his clock starts now",
                dave,
                {"t": "daily"},
                expect={dave: "progress"},
            )
            move = first_move(s.last["dave:race"]["view"])
            await s.step(f"Step 5. dave plays {move}", dave, {"t": "move", "seq": 1, "move": move})
            await s.step(
                "Step 6. dave takes it back (allowed in a daily attempt, and counted)",
                dave,
                {"t": "undo", "seq": 2},
            )
            await s.step(f"Step 7. dave plays {move}", dave, {"t": "move", "seq": 3, "move": move})
            await s.step(
                "Step 8. dave resigns: the result comes after the commit, with the code"
                " still hidden",
                dave,
                {"t": "resign"},
                expect={dave: "room"},
            )
            await s.step(
                "Step 9. dave asks for a rematch: a daily deal has none", dave, {"t": "rematch"}
            )
            await s.step(
                "Step 10. dave asks for the daily again: he leaves the finished room and"
                " gets attempt 2, practice",
                dave,
                {"t": "daily"},
                expect={dave: "progress"},
            )
            await s.step(
                "Step 11. dave resigns at once", dave, {"t": "resign"}, expect={dave: "room"}
            )

            # Erin's counted attempt, not shown: two moves, then she resigns.
            await s.quietly(erin, {"t": "daily"}, expect="progress")
            game = Game.from_position(s.last["erin:race"]["view"])
            for seq in (1, 2):
                text = sorted(game.legal_moves())[0]
                await s.quietly(erin, {"t": "move", "seq": seq, "move": text}, expect="accepted")
                game.play(text, reveal=s.last["erin:accepted"].get("turned"))
            await s.quietly(erin, {"t": "resign"}, expect="room")
            s.t.step(
                "Step 12. erin plays her first (counted) attempt: two moves, then she"
                " resigns (frames not shown: the same kinds as in Dave's steps 4 to 8,"
                " in a room `D4LY3`)"
            )
            await s.step(
                "Step 13. dave asks for today's daily board",
                dave,
                {"t": "board", "kind": "daily"},
                expect={dave: "board_page"},
            )
            counted = s.last["dave:board_page"]["you"]["race"]  # his counted attempt
            await s.step(
                "Step 14. dave asks for his history",
                dave,
                {"t": "history"},
                expect={dave: "history_page"},
            )
            await s.step(
                "Step 15. a deal board needs a game code",
                erin,
                {"t": "board", "kind": "deal"},
                expect={erin: "error"},
            )
            await s.step(
                "Step 16. dave asks for the replay of his counted attempt: the day's deal is"
                " still secret",
                dave,
                {"t": "replay", "race": counted, "player": "Dave"},
                expect={dave: "error"},
            )
            await s.close(dave, erin)
        s.t.step("Step 17. everyone closes; the server stops (frames not shown)")

        clock[0] += 86400.0
        async with server(tmp, rooms, clock) as srv:
            s2 = Scene(f"ws://127.0.0.1:{srv.port}")
            s2.t = s.t
            dave = await s2.join("dave")
            await s2.step(
                "Step 18. the next day, on a restarted server: dave says hello with his token",
                dave,
                {"t": "hello", "v": 1, "token": TOKENS["Dave"]},
                expect={dave: "welcome"},
            )
            await s2.step(
                "Step 19. yesterday's daily board, one row around dave: the game code is shown now",
                dave,
                {"t": "board", "kind": "daily", "date": "2026-11-29", "limit": 1, "around": True},
                expect={dave: "board_page"},
            )
            code = s2.last["dave:board_page"]["code"]
            await s2.step(
                "Step 20. the deal board of that code: each player's best counted result",
                dave,
                {"t": "board", "kind": "deal", "code": code},
                expect={dave: "board_page"},
            )
            await s2.step(
                "Step 21. his newest result in the history: the code is shown now too",
                dave,
                {"t": "history", "limit": 1},
                expect={dave: "history_page"},
            )
            await s2.step(
                "Step 22. the replay of his counted attempt, shown now that the day is over",
                dave,
                {"t": "replay", "race": counted, "player": "dave"},
                expect={dave: "replay_page"},
            )
            await s2.step(
                "Step 23. and the solver's post-mortem of it",
                dave,
                {"t": "postmortem", "race": counted, "player": "dave"},
                expect={dave: "postmortem_answer"},
            )
            await s2.step(
                "Step 24. dave asks for today's deal from the archive: refused, its code is"
                " still secret",
                dave,
                {"t": "daily", "date": "2026-11-30"},
                expect={dave: "error"},
            )
            await s2.step(
                "Step 25. yesterday's deal from the archive: practice, the code shown",
                dave,
                {"t": "daily", "date": "2026-11-29"},
                expect={dave: "progress"},
            )
            await s2.step(
                "Step 26. dave resigns at once", dave, {"t": "resign"}, expect={dave: "room"}
            )
            await s2.step(
                "Step 27. the day's archive board: his practice run, never on the daily board",
                dave,
                {"t": "board", "kind": "archive", "date": "2026-11-29"},
                expect={dave: "board_page"},
            )
            await s2.close(dave)
        s.t.step("Step 28. dave closes (frames not shown)")
    return s.t.text()


# -- 7.4 -----------------------------------------------------------------------------------


class HubRun:
    """A Hub driven as the server drives it, with a fake clock; storage's answers played
    here (the players and their tokens)."""

    PLAYERS: ClassVar[dict[str, int]] = {"alice": 1, "bob": 2}

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.now = 1000.0
        self.hub = Hub(
            HubConfig(countdown_s=0.5, progress_hold_s=0),
            wall_clock=lambda: CLOCK_28 + self.now,
            new_room_code=lambda: "K7WQM",
            random_deal=lambda: SEEDS[0],
            new_salt=lambda: "c0ffee" * 5 + "00",
            boot_id="c4a5hb007000",
        )
        self.labels: dict[int, str] = {}
        self.journal: list[LiveRace | LiveAction] = []
        self._conns = itertools.count(1)
        self.shown = False

    def run(self, effects: list[Any], lines: list[str]) -> None:
        by_conn: dict[int, list[str]] = {}
        for e in effects:
            if isinstance(e, Authenticate):
                name = e.name or next(n for n, tok in TOKENS.items() if tok == e.token)
                self.run(
                    self.hub.authenticated(
                        e.conn,
                        player_id=self.PLAYERS[name],
                        name=name,
                        token=TOKENS[name],
                        now=self.now,
                        new=e.name is not None,
                    ),
                    lines,
                )
            elif isinstance(e, Journal):
                self.journal.append(e.entry)
            elif isinstance(e, Send):
                raw = encode(e.message)
                label = self.labels[e.conn]
                by_conn.setdefault(e.conn, []).extend(
                    [f"server → {label}  ({len(raw)} bytes)", f"  {show(raw)}"]
                )
        for conn_lines in by_conn.values():
            lines.extend(conn_lines)

    def connect(self, label: str) -> int:
        conn = next(self._conns)
        self.labels[conn] = label
        self.run(self.hub.connect(conn, self.now), [])
        return conn

    def send(self, conn: int, message: dict[str, Any], at: float) -> list[str]:
        self.now = at
        data = pack(message)
        lines = [f"{self.labels[conn]} → server  ({len(data)} bytes)", f"  {show(data)}"]
        self.run(self.hub.receive(conn, data, self.now), lines)
        self.run(self.hub.tick(self.now), lines)
        return lines


def record_7_4() -> str:
    t = Transcript()
    before = HubRun(t)
    alice, bob = before.connect("alice"), before.connect("bob")
    before.send(alice, {"t": "hello", "v": 1, "name": "alice"}, 1000.0)
    before.send(bob, {"t": "hello", "v": 1, "name": "bob"}, 1000.0)
    create = {"t": "create", "code": "YU1-C-AAAAAAB", "max_players": 2, "time_limit": 600}
    before.send(alice, create, 1001.0)
    before.send(bob, {"t": "join", "room": "K7WQM"}, 1002.0)
    before.send(bob, {"t": "ready", "ready": True}, 1003.0)
    before.send(alice, {"t": "start"}, 1004.0)
    begin = 1004.5
    before.now = begin
    before.run(before.hub.tick(begin), [])
    for seq, (text, at_ms) in enumerate(
        [("6H>7", 3100), ("8C>6", 4200), ("7H>6", 5000), ("KD>1", 5600)], start=1
    ):
        before.send(alice, move(seq, text), begin + at_ms / 1000)
    # The crash: the last journal group (seq 3 and 4) never reached the database; the
    # last clock checkpoint was at 5250 ms.
    [live] = [e for e in before.journal if isinstance(e, LiveRace)]
    actions = [e for e in before.journal if isinstance(e, LiveAction) and (e.seq or 0) <= 2]
    after = HubRun(t)
    after.run(after.hub.restore(live, actions, 5250, after.now), [])
    alice = after.connect("alice")
    back = after.now + 3.0
    t.step(
        "Step 1. alice resumes: the race is as the journal had it, seq 2, at 5250 + 3000 ms",
        after.send(alice, {"t": "hello", "v": 1, "token": TOKENS["alice"]}, back),
    )
    t.step(
        "Step 2. alice resends the moves she was told were accepted after seq 2, with their seqs",
        after.send(alice, move(3, "7H>6"), back + 0.125)
        + after.send(alice, move(4, "KD>1"), back + 0.25),
    )
    t.step("Step 3. alice plays on with seq 5", after.send(alice, move(5, "AH>F"), back + 1.5))
    return t.text()


# -- 7.6 -----------------------------------------------------------------------------------


async def record_7_6() -> str:
    """A rated room's race, the ratings in its result and room, and a player's page."""
    with fixed([TOKENS["alice"], TOKENS["bob"]]), tempfile.TemporaryDirectory() as tmp:
        async with server(tmp, iter(["R8TED"]), [CLOCK_29]) as srv:
            s = Scene(f"ws://127.0.0.1:{srv.port}")
            alice, bob = await s.join("alice"), await s.join("bob")
            await s.step(
                "Step 1. alice says hello: no rating yet, no streak",
                alice,
                {"t": "hello", "v": 1, "name": "alice"},
                expect={alice: "welcome"},
            )
            await s.quietly(bob, {"t": "hello", "v": 1, "name": "bob"}, expect="welcome")
            await s.step(
                "Step 2. alice creates a rated room, from rules: a rated room always gets a fresh"
                " secret deal (bob, welcomed like alice, is not shown)",
                alice,
                {"t": "create", "rules": "C", "max_players": 2, "rated": True},
            )
            await s.quietly(bob, {"t": "join", "room": "R8TED"})
            await s.quietly(bob, {"t": "ready", "ready": True})
            await s.quietly(alice, {"t": "start"}, expect="progress")
            for seq, text in enumerate(["AS>F", "7H>1", "9S>2"], start=1):
                await s.quietly(alice, move(seq, text))
            await s.quietly(bob, {"t": "resign"})
            await s.step(
                "Step 3. bob joined, the race ran (alice put a card home), bob resigned;"
                " alice resigns: the result carries each runner's rating and its change, here"
                " 0: both runs were under 10 s, and a run under 3 moves or 10 s moves nobody's"
                " rating (docs/ratings.md, rating farming)",
                alice,
                {"t": "resign"},
                expect={alice: "room", bob: "room"},
            )
            await s.step(
                "Step 4. bob asks for alice's page (any case)",
                bob,
                {"t": "player", "name": "ALICE"},
                # Waited for: the page is a database read, which a loaded machine can
                # make slower than the quiet window (the example then lost its answer).
                expect={bob: "player_page"},
            )
            await s.step(
                "Step 5. and for a name nobody has",
                bob,
                {"t": "player", "name": "zed"},
                expect={bob: "error"},
            )
            await s.close(alice, bob)
    return s.t.text()


# -- 4.26: a quick race ----------------------------------------------------------------------


async def record_4_26() -> str:
    """Two players press Quick race; a third enters and leaves. A room of two forms as
    soon as two wait (``quick_fill_s`` 0 here: 6 s by default, section 4.26)."""
    hub = HubConfig(countdown_s=0.5, progress_hold_s=0, quick_fill_s=0.0)
    tokens = [TOKENS["alice"], TOKENS["bob"], TOKENS["carol"]]
    with fixed(tokens), tempfile.TemporaryDirectory() as tmp:
        async with server(tmp, iter(["QK7RM"]), [CLOCK_29], hub=hub) as srv:
            s = Scene(f"ws://127.0.0.1:{srv.port}")
            alice, bob, carol = await s.join("alice"), await s.join("bob"), await s.join("carol")
            for player in (alice, bob, carol):
                hello = {"t": "hello", "v": 1, "name": player.label}
                await s.quietly(player, hello, expect="welcome")
            await s.step(
                "1. carol enters the pool, alone: she waits (no history yet: `usual` nil)",
                carol,
                {"t": "quick"},
                expect={carol: "pool"},
            )
            await s.step("2. carol leaves the pool", carol, {"t": "quick", "leave": True})
            await s.step("3. alice enters the pool", alice, {"t": "quick"}, expect={alice: "pool"})
            await s.step(
                "4. bob enters: two wait, a room forms at once (no fill time here), its"
                " countdown begins, then the race",
                bob,
                {"t": "quick"},
                expect={alice: "race", bob: "race"},
            )
            await s.close(alice, bob, carol)
    return s.t.text()


# -- the document --------------------------------------------------------------------------

RECORDERS: dict[str, Callable[[], Awaitable[str] | str]] = {
    "quick start": record_quick_start,
    "7.1": record_7_1,
    "7.2": record_7_2,
    "7.3": record_7_3,
    "7.4": record_7_4,
    "7.6": record_7_6,
    "4.26": record_4_26,
}


async def record(sections: tuple[str, ...] = SECTIONS) -> dict[str, str]:
    """The Markdown of each section's steps, recorded now."""
    recorded: dict[str, str] = {}
    for name in sections:
        made = RECORDERS[name]()
        recorded[name] = made if isinstance(made, str) else await made
    return recorded


def region(name: str) -> re.Pattern[str]:
    """The recording of section ``name`` in the document (group 1: what was recorded)."""
    return re.compile(
        rf"^<!-- recorded: {re.escape(name)} -->\n(.*?)^<!-- end of recording: "
        rf"{re.escape(name)} -->$",
        re.S | re.M,
    )


def recorded_in(doc: str, name: str) -> str:
    found = region(name).search(doc)
    assert found, f"docs/protocol.md has no recording of section {name}"
    return found.group(1).strip("\n") + "\n"


def write(recorded: dict[str, str], paths: tuple[Path, ...] = DOCS) -> None:
    """Each recording into the document that holds its region (every region is in one)."""
    left = dict(recorded)
    for path in paths:
        doc = path.read_text(encoding="utf-8")
        for name, text in list(left.items()):
            found = region(name).search(doc)
            if found is None:
                continue
            replacement = f"<!-- recorded: {name} -->\n\n{text}\n<!-- end of recording: {name} -->"
            doc = doc[: found.start()] + replacement + doc[found.end() :]
            del left[name]
        path.write_text(doc, encoding="utf-8")
    assert not left, f"no document records {', '.join(left)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sections", nargs="*", help=f"some of {' '.join(SECTIONS)} (all)")
    parser.add_argument("--write", action="store_true", help="write into docs/protocol.md")
    args = parser.parse_args(argv)
    unknown = set(args.sections) - set(SECTIONS)
    if unknown:
        parser.error(f"no such section: {' '.join(sorted(unknown))}")
    recorded = asyncio.run(record(tuple(args.sections) or SECTIONS))
    if args.write:
        write(recorded)
        print(f"recorded {', '.join(recorded)} into {', '.join(str(p) for p in DOCS)}")
    else:
        for name, text in recorded.items():
            print(f"### {name}\n\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
