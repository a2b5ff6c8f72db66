"""docs/bot_example.py, the bot of docs/bots.md, races on a real server: it registers a
BOT account, opens a room that takes bots, and plays until its race is over."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

from .server.wire import running_server, url

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "bot_example.py"


async def test_the_example_bot_races(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bot_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    bot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bot)
    async with running_server(f"sqlite:///{tmp_path}/y.db", tmp_path) as server:
        outcome = await asyncio.wait_for(bot.run(url(server), "robo", moves=20), 30)
        assert outcome in ("resigned", "won", "stuck")
        [player] = server.hub._shared.players.values()
        assert player.bot and player.name == "robo"
