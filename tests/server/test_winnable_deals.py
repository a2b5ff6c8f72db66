"""Winnable deals through a real server (issue 40, item 4): its stock fills in the
background on the solver's stock lane; a rated room and a quick race are dealt deals the
solver calls won once their codes are revealed; ``winnable: false`` gives a plain random
deal, not one of the stock's; ``/metrics`` shows the stock."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protocol import Game
from protocol.messages import Create, Leave, Left, Pool, Quick, Race, Resign, Result, Room
from server.runtime.executor import RaceServer
from solver import solve

from .wire import Client, open_client, room_with, running_server, start_race

CONFIG = {"winnable_stock": 4, "quick_fill_s": 0.2}


async def stocked(server: RaceServer, size: int) -> None:
    """Until the stock holds ``size`` proven deals (it fills from the server's start)."""
    for _ in range(500):
        if server.hub.winnable_stock.size() >= size:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the stock holds {server.hub.winnable_stock.size()}, not {size}")


def solved(code: str) -> str:
    """What the solver says of a revealed deal, with the daily's budget (the stock's)."""
    return solve(Game.from_code(code), budget_nodes=100_000).verdict


async def resign_all(*players: Client) -> Result:
    for p in players:
        await p.send(Resign())
    results = [await p.expect(Result) for p in players]
    return results[0]


async def test_rated_and_quick_races_are_dealt_deals_the_solver_calls_won(
    db_url: str, tmp_path: Path
) -> None:
    async with running_server(db_url, tmp_path, config=CONFIG) as server:
        await stocked(server, 4)
        assert server.metrics.value("yukon_winnable_stock") == 4
        assert server.metrics.value("yukon_winnable_proofs_total", verdict="won") >= 4
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")

        room = await room_with(ann, bob, rated=True)
        assert room.rated and room.winnable and room.code is None
        await start_race(ann, bob)
        result = await resign_all(ann, bob)
        assert result.code is not None and solved(result.code) == "won"
        for p in (ann, bob):
            await p.send(Leave())
            await p.expect(Left)

        await ann.send(Quick())
        await ann.expect(Pool)
        await bob.send(Quick())
        quick: Room = await ann.expect(Room, quick=True)
        assert quick.rated and quick.winnable and quick.code is None
        for p in (ann, bob):
            await p.expect(Race)
        result = await resign_all(ann, bob)
        assert result.code is not None and solved(result.code) == "won"
        assert server.hub.winnable_stock.figures.drawn == 2
        await stocked(server, 4)  # refilled


async def test_winnable_false_is_a_plain_random_deal(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path, config=CONFIG) as server:
        await stocked(server, 4)
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        room = await room_with(ann, bob, winnable=False)
        assert not room.winnable and room.commitment is not None and room.code is None
        assert server.hub.winnable_stock.figures.drawn == 0  # not the stock's
        await start_race(ann, bob)
        result = await resign_all(ann, bob)
        assert result.code is not None and result.salt is not None
        # And a room left to its default takes one of the stock's.
        await ann.send(Leave())
        await ann.expect(Left)
        await ann.send(Create())
        assert (await ann.expect(Room)).winnable
        assert server.hub.winnable_stock.figures.drawn == 1
