"""Guessing room codes through invite links costs the address the same budget as ``join``
(429 past it, the code not looked up), over real sockets (issue 40, item 8)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from protocol.messages import Error, Join

from ..wire import open_client, running_server
from .test_http import fetch


async def test_invite_links_spend_the_guesses_join_spends(tmp_path: Path) -> None:
    limits = {"max_room_misses_per_address": 3}
    async with running_server(f"sqlite:///{tmp_path}/y.db", tmp_path, config=limits) as server:
        for code in ("QQQQQ", "WWWWW"):
            reply = await fetch(server, f"/r/{code}?format=json&for=join")
            assert reply.status == 200 and reply.json()["open"] is False
        page = await fetch(server, "/r/ZZZZZ")
        assert page.status == 404  # the third guess: the closed room's page
        over = await fetch(server, "/r/KKKKK?format=json")
        assert over.status == 429 and over.json()["error"] == "too_many_guesses"
        assert "try again in" in over.json()["text"]
        html = await fetch(server, "/r/KKKKK")
        assert html.status == 429 and "too many room codes" in html.text
        # The websocket's join from the same address is over budget too.
        ann = await open_client(server, "ann")
        await ann.send(Join("QQQQQ"))
        error = await ann.expect(Error)
        assert error.code == "too_many_guesses"
        # A malformed code is not a guess of a room at all.
        assert (await fetch(server, "/r/xx")).status == 404
        await ann.ws.close()


async def test_one_address_holds_at_most_two_post_mortems_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_server(f"sqlite:///{tmp_path}/y.db", tmp_path) as server:
        release = asyncio.Event()
        asked = 0

        async def slow(race: str, player: str) -> Error:
            nonlocal asked
            asked += 1
            await release.wait()
            return Error("no_such_race", "no such race")

        monkeypatch.setattr(server.replays, "postmortem", slow)
        path = "/replay/r1/ann/postmortem?format=json"
        held = [asyncio.create_task(fetch(server, path)) for _ in range(2)]
        for _ in range(500):  # bounded: 5 s at most
            if asked == 2:
                break
            await asyncio.sleep(0.01)
        assert asked == 2
        third = await fetch(server, path)
        assert third.status == 429 and third.json()["error"] == "too_many_queries"
        release.set()
        assert [r.status for r in await asyncio.gather(*held)] == [404, 404]
        # Answered: the address may ask again.
        assert (await fetch(server, path)).status == 404
