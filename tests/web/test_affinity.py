"""The browser client on a cluster: it reaches its room's node (room affinity).

Two real nodes of one cluster behind the real HAProxy with deploy/haproxy.cfg
(tests/test_deploy.py's ``affinity_cluster``), and Debian's Chromium: alice's page reaches
one node and makes a room there. Then, docs/protocol.md 4.25:

- bob types the room's code in the lobby of a page that reached the other node
  (leastconn): his join goes through the relay, he is told where the room lives
  (``route``), and moves there on his own: one more websocket, with ``?node=``, and
  nothing for bob to do;
- or bob opens the room's invite link: the page looks the room's node up
  (``/r/CODE?format=json``) and its one websocket goes there, with no ``route``.

Either way his moves are then the room's node's own, none relayed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_deploy import affinity_cluster, deploy_redis, metric, migrated

from .test_app import CODE, Player, create_room, winning_line

__all__ = ["deploy_redis"]  # a fixture these tests use


class Watched(Player):
    """A player whose page this test opens itself (to watch its requests from the start);
    ``close`` checks the page's errors, as ``Player.open``'s players do."""

    errors: list[str]


pytestmark = pytest.mark.asyncio(loop_scope="module")


@contextlib.asynccontextmanager
async def alices_room(
    browser: Any, fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> AsyncIterator[tuple[str, dict[str, int], str, str, Player, str]]:
    """Two nodes behind HAProxy, and alice's page with a room on one of them: the pages'
    base URL, each node's port, the room's node and the other, alice, the room's code."""
    db = migrated(fresh_postgres, tmp_path)
    fast = ("--msg-rate", "500", "--msg-burst", "500")
    with affinity_cluster(db, deploy_redis, tmp_path, *fast) as (lb, (port1, _), (port2, _)):
        base = lb.replace("ws://", "http://").rstrip("/")
        ports = {"node1": port1, "node2": port2}
        alice = await Player.open(browser, base, "alice")
        room = await create_room(alice, CODE)
        (owner,) = [n for n, p in ports.items() if metric(p, "yukon_connections") == 1]
        (other,) = [n for n in ports if n != owner]
        yield base, ports, owner, other, alice, room


async def race_on_the_owner(alice: Player, bob: Player, owner_port: int) -> None:
    """bob readies, alice starts, bob makes six moves of a winning line: every one
    accepted, none relayed (the room's node answers them itself)."""
    await bob.page.click("#ready")
    await alice.page.wait_for_selector("text=Everyone is ready")
    await alice.page.click("#start")
    await bob.until(lambda: bob.of("race"), "bob's race")
    await bob.page.wait_for_selector(".board .pc.up")
    for move in winning_line()[:6]:
        assert (await bob.play_keys(move))["t"] == "accepted", move
    assert metric(owner_port, "yukon_moves_relayed_total") == 0


async def test_a_browser_that_joins_by_code_follows_its_room_to_the_node_that_holds_it(
    browser: Any, fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    async with alices_room(browser, fresh_postgres, deploy_redis, tmp_path) as (
        base,
        ports,
        owner,
        other,
        alice,
        room,
    ):
        urls: list[str] = []
        bob = await Player.open(browser, base, "bob")
        bob.page.on("websocket", lambda ws: urls.append(ws.url))
        await bob.page.fill("#room-code", room.lower())
        await bob.page.keyboard.press("Enter")
        await bob.until(lambda: any(f.get("you") == "player" for f in bob.of("room")), "the room")
        # leastconn sent bob's page to the other node, which relayed his join: routed.
        await bob.until(lambda: bob.of("route"), "the route")
        await bob.until(lambda: len(bob.of("welcome")) == 2, "the welcome there")
        assert bob.of("route")[-1] == {"t": "route", "node": owner, "room": room}
        assert urls and urls[-1].endswith(f"/?node={owner}")
        assert metric(ports[owner], "yukon_routes_sent_total") == 1
        await bob.until(lambda: metric(ports[owner], "yukon_connections") == 2, "bob at home")
        # The old socket is closed once the new one is welcomed (make before break).
        await bob.until(lambda: metric(ports[other], "yukon_connections") == 0, "the old one shut")

        await race_on_the_owner(alice, bob, ports[owner])
        status = await bob.status()
        assert "moving" not in status and "lost" not in status, status
        for p in (alice, bob):
            await p.close()


async def test_an_invite_links_page_connects_to_the_rooms_node_and_needs_no_route(
    browser: Any, fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    async with alices_room(browser, fresh_postgres, deploy_redis, tmp_path) as (
        base,
        ports,
        owner,
        other,
        alice,
        room,
    ):
        urls: list[str] = []
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        page = await context.new_page()
        page.on("websocket", lambda ws: urls.append(ws.url))
        bob = Watched(context, page, "bob")
        bob.errors = []
        page.on("pageerror", lambda e: bob.errors.append(str(e)))
        # The page's CSP must refuse nothing, the look-up included (connect-src 'self').
        page.on(
            "console",
            lambda m: bob.errors.append(m.text) if "Content Security Policy" in m.text else None,
        )
        looked_up: list[str] = []
        page.on("request", lambda r: looked_up.append(r.url) if "format=json" in r.url else None)
        await page.goto(f"{base}/r/{room}")
        await page.fill("#ask-name", "bob")
        await page.press("#ask-name", "Enter")
        await bob.until(lambda: any(f.get("you") == "player" for f in bob.of("room")), "the room")
        # The page asked where the room is, and its one websocket went there.
        assert looked_up == [f"{base}/r/{room}?format=json&for=join"]
        assert urls == [f"{base.replace('http://', 'ws://')}/?node={owner}"]
        assert bob.of("route") == [] and len(bob.of("welcome")) == 1
        assert metric(ports[owner], "yukon_routes_sent_total") == 0
        assert metric(ports[owner], "yukon_connections") == 2
        assert metric(ports[other], "yukon_connections_opened_total") == 0

        await race_on_the_owner(alice, bob, ports[owner])
        assert metric(ports[other], "yukon_frames_forwarded_total") == 0
        for p in (alice, bob):
            await p.close()
