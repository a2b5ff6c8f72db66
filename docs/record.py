"""Record the worked example of docs/protocol.md section 7.3 from the real server.

Run from the repository root::

    python docs/record.py > /tmp/7.3.md

It starts the server in this process (a fresh SQLite database in a temporary directory,
a fixed daily secret, the server's clock fixed at 29 November 2026, 18:00 UTC, fixed room
codes and tokens so the transcript reads well), plays the scenario of section 7.3 with
two real websocket clients, restarts the server a day later, and prints the steps as
Markdown, each frame as its decoded map with its size. Times (``elapsed_ms``,
``time_ms``, ``finished_ms``) are real and differ from run to run; everything else is
the same every time. Paste the output over the steps of section 7.3.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol import Game
from protocol.messages import decode_client
from server import daily
from server.app import ServeOptions, open_server
from server.rooms import HubConfig
from server.storage import sql

SECRET = "worked-example"
NOON_29 = dt.datetime(2026, 11, 29, 18, tzinfo=dt.UTC).timestamp()
TOKENS = {"Dave": "dAv3T0ken" + "D" * 23, "erin": "eR1nT0ken" + "E" * 23}
#: How long a client waits for more frames after the last one (a progress is held 50 ms).
QUIET_S = 0.4
#: A pause between steps, so that the race clocks move a little.
PAUSE_S = 0.15

out: list[str] = []


def pack(message: dict[str, Any]) -> bytes:
    """A client frame as a client would write it: only the fields it means to send."""
    data = msgpack.packb(message)
    assert isinstance(data, bytes)
    decode_client(data)  # a frame the server accepts as well formed
    return data


def show(raw: bytes) -> str:
    return json.dumps(msgpack.unpackb(raw, raw=False), ensure_ascii=False)


class Player:
    def __init__(self, name: str, ws: ClientConnection) -> None:
        self.name = name
        self.ws = ws

    async def send(self, message: dict[str, Any]) -> list[tuple[str, Any]]:
        """Send, print it, and print every frame that arrives until the line is quiet."""
        data = pack(message)
        out.append(f"{self.name.lower()} → server  ({len(data)} bytes)")
        out.append(f"  {show(data)}")
        await self.ws.send(data)
        return await self.frames()

    async def frames(self, *, printed: bool = True) -> list[tuple[str, Any]]:
        got: list[tuple[str, Any]] = []
        while True:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), QUIET_S)
            except TimeoutError:
                return got
            assert isinstance(raw, bytes)
            decoded = msgpack.unpackb(raw, raw=False)
            got.append((decoded["t"], decoded))
            if printed:
                out.append(f"server → {self.name.lower()}  ({len(raw)} bytes)")
                out.append(f"  {show(raw)}")


def step(title: str) -> None:
    out.append(f"**{title}**")
    out.append("")


def block(lines_before: int) -> None:
    """Wrap the lines printed since ``lines_before`` in a text block."""
    body = out[lines_before:]
    del out[lines_before:]
    out.extend(["```text", *body, "```", ""])


async def quiet_step(title: str, run: Callable[[], Any]) -> Any:
    step(title)
    mark = len(out)
    result = await run()
    block(mark)
    await asyncio.sleep(PAUSE_S)
    return result


def first_move(view: str) -> str:
    return sorted(Game.from_position(view).legal_moves())[0]


async def main() -> None:
    # Every registration draws a token, also one refused as name_taken (erin's "dave").
    tokens: Iterator[str] = iter([TOKENS["Dave"], "unused" * 5 + "XX", TOKENS["erin"]])
    sql.secrets.token_urlsafe = lambda _n=24: next(tokens)  # type: ignore[assignment]
    # The daily deal's commitment salt, fixed too (any 32 hex digits read as well).
    daily.secrets.token_hex = lambda _n=16: "5a17" * 8  # type: ignore[assignment]
    rooms = (f"D4LY{i}" for i in itertools.count(1))
    # The server's wall clock starts at NOON_29 and runs at the real pace from there.
    started = time.time()
    clock = [NOON_29]
    with tempfile.TemporaryDirectory() as tmp:
        options = ServeOptions(
            port=0,
            db=f"sqlite:///{tmp}/example.db",
            spool=Path(tmp) / "spool.jsonl",
            daily_secret=SECRET,
            # No progress hold, as in every example of section 7: each move's progress
            # at once, to every member (section 4.11 says what the hold changes).
            hub=HubConfig(countdown_s=0.5, progress_hold_s=0),
            solver_processes=0,
        )
        hub_options = {
            "wall_clock": lambda: clock[0] + time.time() - started,
            "new_room_code": lambda: next(rooms),
        }
        async with open_server(options, hub_options=hub_options) as server:
            await server.boards.dailies.get(dt.date(2026, 11, 29))  # chosen ahead, as usual
            url = f"ws://127.0.0.1:{server.port}"
            async with connect(url, compression=None) as dws, connect(url, compression=None) as ews:
                dave, erin = Player("Dave", dws), Player("erin", ews)
                await quiet_step(
                    "Step 1. dave connects and registers his name",
                    lambda: dave.send({"t": "hello", "v": 1, "name": "Dave"}),
                )
                await quiet_step(
                    "Step 2. erin tries the name dave: it is registered (case does not matter)",
                    lambda: erin.send({"t": "hello", "v": 1, "name": "dave"}),
                )

                async def step3() -> None:
                    for m in (
                        {"t": "hello", "v": 1, "name": "erin"},
                        {"t": "board", "kind": "daily"},
                    ):
                        data = pack(m)
                        out.append(f"erin → server  ({len(data)} bytes)")
                        out.append(f"  {show(data)}")
                        await erin.ws.send(data)
                    await erin.frames()

                await quiet_step(
                    "Step 3. erin says hello as erin and, without waiting for the welcome,"
                    " asks for a board",
                    step3,
                )
                got = await quiet_step(
                    "Step 4. dave asks for the daily deal: no countdown, his clock starts now",
                    lambda: dave.send({"t": "daily"}),
                )
                view = next(m for t, m in got if t == "race")["view"]
                move = first_move(view)
                await quiet_step(
                    f"Step 5. dave plays {move}",
                    lambda: dave.send({"t": "move", "seq": 1, "move": move}),
                )
                await quiet_step(
                    "Step 6. dave takes it back (allowed in a daily attempt, and counted)",
                    lambda: dave.send({"t": "undo", "seq": 2}),
                )
                await quiet_step(
                    f"Step 7. dave plays {move}",
                    lambda: dave.send({"t": "move", "seq": 3, "move": move}),
                )
                await quiet_step(
                    "Step 8. dave resigns: the result comes after the commit, with the code"
                    " still hidden",
                    lambda: dave.send({"t": "resign"}),
                )
                await quiet_step(
                    "Step 9. dave asks for a rematch: a daily deal has none",
                    lambda: dave.send({"t": "rematch"}),
                )
                await quiet_step(
                    "Step 10. dave asks for the daily again: he leaves the finished room and"
                    " gets attempt 2, practice",
                    lambda: dave.send({"t": "daily"}),
                )
                await quiet_step(
                    "Step 11. dave resigns at once", lambda: dave.send({"t": "resign"})
                )

                # Erin's counted attempt, not shown: two moves, then she resigns.
                await erin.ws.send(pack({"t": "daily"}))
                got = await erin.frames(printed=False)
                game = Game.from_position(next(m for t, m in got if t == "race")["view"])
                for seq in (1, 2):
                    m = sorted(game.legal_moves())[0]
                    await erin.ws.send(pack({"t": "move", "seq": seq, "move": m}))
                    for t, msg in await erin.frames(printed=False):
                        if t == "accepted":
                            game.play(m, reveal=msg.get("turned"))
                await erin.ws.send(pack({"t": "resign"}))
                await erin.frames(printed=False)
                step(
                    "Step 12. erin plays her first (counted) attempt: two moves, then she"
                    " resigns (frames not shown: the same kinds as in Dave's steps 4 to 8,"
                    " in a room `D4LY3`)"
                )

                await quiet_step(
                    "Step 13. dave asks for today's daily board",
                    lambda: dave.send({"t": "board", "kind": "daily"}),
                )
                await quiet_step(
                    "Step 14. dave asks for his history", lambda: dave.send({"t": "history"})
                )
                await quiet_step(
                    "Step 15. a deal board needs a game code",
                    lambda: erin.send({"t": "board", "kind": "deal"}),
                )
            step("Step 16. everyone closes; the server stops (frames not shown)")

        clock[0] += 86400.0
        async with open_server(options, hub_options=hub_options) as server:
            url = f"ws://127.0.0.1:{server.port}"
            async with connect(url, compression=None) as dws:
                dave = Player("Dave", dws)
                await quiet_step(
                    "Step 17. the next day, on a restarted server: dave says hello with his token",
                    lambda: dave.send({"t": "hello", "v": 1, "token": TOKENS["Dave"]}),
                )
                got = await quiet_step(
                    "Step 18. yesterday's daily board, one row around dave: the game code is"
                    " shown now",
                    lambda: dave.send(
                        {
                            "t": "board",
                            "kind": "daily",
                            "date": "2026-11-29",
                            "limit": 1,
                            "around": True,
                        }
                    ),
                )
                code = next(m for t, m in got if t == "board_page")["code"]
                await quiet_step(
                    "Step 19. the deal board of that code: each player's best counted result",
                    lambda: dave.send({"t": "board", "kind": "deal", "code": code}),
                )
                await quiet_step(
                    "Step 20. his newest result in the history: the code is shown now too",
                    lambda: dave.send({"t": "history", "limit": 1}),
                )
        step("Step 21. dave closes (frames not shown)")
    print("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    asyncio.run(main())
