"""An invite link's room looked up before connecting: ``/r/CODE?format=json`` names the
room's node (docs/protocol.md 1.6, 4.25), and a join made there needs no ``route``.

Two real nodes of one cluster (one PostgreSQL database, one Redis) behind the real HAProxy
running deploy/haproxy.cfg (tests/test_deploy.py's ``affinity_cluster``): the JSON names
the node that holds the open room, asked of either node or of the proxy, and null once
the room is closed; a client that connects with that node's id and joins is served by the
room's node from its first frame, where without the look-up the proxy would have sent it
to the other node (leastconn), and the join would have been relayed and routed. (A server
alone names no node: tests/server/pages/test_http.py.)
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from protocol.messages import (
    Accepted,
    Create,
    Hello,
    Join,
    Leave,
    Left,
    MoveMsg,
    Race,
    Ready,
    Room,
    Route,
    Start,
    Welcome,
)
from tests.test_deploy import affinity_cluster, deploy_redis, metric, migrated

from .wire import Client, winning_line

__all__ = ["deploy_redis"]  # a fixture these tests use

WAIT = 20.0


def room_json(base: str, room: str) -> dict[str, Any]:
    """``GET /r/ROOM?format=json`` of ``base`` (``http://host:port``)."""
    with urllib.request.urlopen(f"{base}/r/{room}?format=json", timeout=WAIT) as reply:
        data: dict[str, Any] = json.loads(reply.read())
        return data


async def player(url: str, name: str) -> Client:
    """A wire client that says hello (with ``follow``, as ours do) at ``url``."""
    client = Client(await connect(url))
    await client.send(Hello(1, name=name, follow=True))
    await client.expect(Welcome)
    return client


async def test_the_room_json_names_the_open_rooms_node_on_every_node_and_null_once_closed(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    """Asked of the room's node, of the other node or of the proxy: the same node; once
    the room is closed (its key deleted by its node), none."""
    db = migrated(fresh_postgres, tmp_path)
    with affinity_cluster(db, deploy_redis, tmp_path) as (lb, (port1, log1), (port2, log2)):
        ann = await player(lb + "?node=node1", "ann")
        await ann.send(Create())
        room = (await ann.expect(Room)).room
        lb_http = lb.replace("ws://", "http://").rstrip("/")
        for base in (f"http://127.0.0.1:{port1}", f"http://127.0.0.1:{port2}", lb_http):
            data = await asyncio.to_thread(room_json, base, room)
            assert (data["room"], data["open"], data["node"]) == (room, True, "node1"), base
        # A code no node holds: closed, no node.
        other = "23456" if room != "23456" else "23457"
        data = await asyncio.to_thread(room_json, f"http://127.0.0.1:{port2}", other)
        assert (data["open"], data["node"]) == (False, None)
        # Everyone leaves at once: the room closes, and its node deletes its key at its
        # next renewal (a second), not leaving it to the lease (5 s) or, for a room closed
        # within a second of being made, to its reserved code's 30 s.
        await ann.send(Leave())
        await ann.expect(Left)
        deadline = time.monotonic() + 10
        for port in (port1, port2):
            base = f"http://127.0.0.1:{port}"
            while (data := await asyncio.to_thread(room_json, base, room))["open"]:
                assert data["node"] == "node1"
                assert time.monotonic() < deadline, "the closed room's key was not deleted"
                await asyncio.sleep(0.25)
            assert data["node"] is None, base
        await ann.ws.close()
    assert "Traceback" not in log1.rest() + log2.rest()


async def test_a_join_after_the_look_up_lands_on_the_rooms_node_with_no_route(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    """As the invite link's page and ``yukon play LINK`` do: look the room up through the
    proxy, connect with ``?node=``, join. The proxy would have sent bob to node2 (it has
    fewer connections); the look-up sends him to node1, which holds the room: no
    ``route``, nothing relayed, one connection."""
    db = migrated(fresh_postgres, tmp_path)
    code, line = winning_line()
    fast = ("--msg-rate", "500", "--msg-burst", "500")
    with affinity_cluster(db, deploy_redis, tmp_path, *fast) as (lb, (port1, log1), (port2, log2)):
        ann = await player(lb + "?node=node1", "ann")
        await ann.send(Create(code=code))
        room = (await ann.expect(Room)).room
        lb_http = lb.replace("ws://", "http://").rstrip("/")
        node = (await asyncio.to_thread(room_json, lb_http, room))["node"]
        assert node == "node1"
        bob = await player(f"{lb}?node={node}", "bob")
        await bob.send(Join(room))
        joined = await bob.expect(Room)
        assert joined.room == room and joined.you == "player"
        await bob.send(Ready(True))
        while True:  # until ann sees bob ready
            players = (await ann.expect(Room)).players
            if len(players) == 2 and all(p.ready for p in players):
                break
        await ann.send(Start())
        await bob.expect(Race)
        for seq, move in enumerate(line[:6], start=1):
            await bob.send(MoveMsg(seq, move))
            await bob.expect(Accepted, seq=seq)
        assert not any(isinstance(f, Route) for f in bob.frames)
        assert metric(port1, "yukon_connections_opened_total") == 2  # ann and bob, once each
        assert metric(port2, "yukon_connections_opened_total") == 0
        assert metric(port1, "yukon_routes_sent_total") == 0
        assert metric(port1, "yukon_moves_relayed_total") == 0
        assert metric(port2, "yukon_frames_forwarded_total") == 0
        for c in (ann, bob):
            await c.ws.close()
    assert "Traceback" not in log1.rest() + log2.rest()


async def test_a_follower_who_resumes_on_the_rooms_node_is_its_session_in_the_directory(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    """Bob joins through node2 and follows the route to node1, where his hello is served
    from memory (his guest session was there): the directory's ``session:`` key names his
    session on node1 now, not the gateway's on node2 (it did before), so that a later
    hello of his on a node that does not remember him closes the right one (one session
    per player, docs/cluster.md). A later hello on node2 closes it (4001) either way:
    node2 remembers where bob went and hands him over."""
    import redis

    db = migrated(fresh_postgres, tmp_path)
    redis_url, prefix = deploy_redis
    with affinity_cluster(db, deploy_redis, tmp_path) as (lb, (_, log1), (_, log2)):
        ann = await player(lb + "?node=node1", "ann")
        await ann.send(Create())
        room = (await ann.expect(Room)).room
        bob = await player(lb + "?node=node2", "bob")
        token = next(f for f in bob.frames if isinstance(f, Welcome)).token
        await bob.send(Join(room))
        route = await bob.expect(Route)
        assert route.node == "node1"
        moved = Client(await connect(f"{lb}?node={route.node}"))
        await moved.send(Hello(1, token=token, follow=True))
        await moved.expect(Welcome)
        await moved.expect(Room)
        await bob.ws.close()

        def sessions() -> dict[str, str]:
            client = redis.Redis.from_url(redis_url, decode_responses=True)
            try:
                return {
                    str(k): str(v)
                    for k in client.scan_iter(match=f"{prefix}session:*")
                    if (v := client.get(k)) is not None
                }
            finally:
                client.close()

        # ann's and bob's: both on node1 now (noted just after the welcome, off the loop).
        deadline = time.monotonic() + 5
        seen = sessions()
        while not all(v.startswith("node1 ") for v in seen.values()):
            assert time.monotonic() < deadline, seen
            await asyncio.sleep(0.05)
            seen = sessions()
        assert len(seen) == 2, seen
        # Bob leaves the room and says hello on node2 again (another tab, say): his
        # session on node1 is the older one, and is closed (4001).
        await moved.send(Leave())
        await moved.expect(Left)
        newer = Client(await connect(f"{lb}?node=node2"))
        await newer.send(Hello(1, token=token, follow=True))
        await newer.expect(Welcome)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await moved.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
        for c in (ann, newer):
            await c.ws.close()
    assert "Traceback" not in log1.rest() + log2.rest()
