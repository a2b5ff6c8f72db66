"""A Yukon Race bot in one file (docs/bots.md): it registers a BOT account, opens a room
that takes bots, starts the race when asked, and plays the first legal move it sees until
its race is over. Uses only the wire (websockets + msgpack) and the pure engine of
``protocol`` to know the legal moves; a real bot would choose better.

    python docs/bot_example.py ws://127.0.0.1:8765 robo
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import msgpack
from websockets.asyncio.client import connect

from protocol import Game


async def run(url: str, name: str, *, moves: int = 1000, start_now: bool = True) -> str:
    """Race once; the room's code is printed so that people (or other bots) can join."""
    async with connect(url) as ws:

        async def send(message: dict[str, Any]) -> None:
            await ws.send(msgpack.packb(message))

        async def recv() -> dict[str, Any]:
            message: dict[str, Any] = msgpack.unpackb(await ws.recv())
            return message

        await send({"t": "hello", "v": 1, "name": name, "bot": True})
        while (m := await recv())["t"] != "welcome":
            if m["t"] == "error":
                raise SystemExit(f"{m['code']}: {m['text']}")
        await send({"t": "create", "bots": True, "max_players": 2})
        room = await recv()
        print("room", room["room"], "(a bot's room takes humans and bots)", flush=True)
        if start_now:
            await send({"t": "start"})
        seq, game = 0, None
        while True:
            m = await recv()
            if m["t"] == "race":
                game = Game.from_position(m["view"])
                seq = m["seq"]
            elif m["t"] == "accepted" and game is not None:
                game.play(m["move"], reveal=m["turned"])
                if m["state"] != "playing":
                    return str(m["state"])
            elif m["t"] == "result":
                return "over"
            else:
                continue
            legal = game.legal_moves() if game is not None else []
            if not legal or seq >= moves:
                seq += 1
                await send({"t": "resign", "seq": seq})  # numbered: resent after a resume
                return "resigned"
            seq += 1
            await send({"t": "move", "seq": seq, "move": legal[0]})


if __name__ == "__main__":
    print(asyncio.run(run(sys.argv[1], sys.argv[2])))
