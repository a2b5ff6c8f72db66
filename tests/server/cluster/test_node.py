"""``server.cluster.node``: a server without ``--redis`` is a cluster of one (``Alone``), carried
out by the same executor paths as a node of a cluster; real server, real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol.messages import Error, Join, encode
from server.cluster.node import Alone
from server.rooms.effects import Locate
from server.runtime.executor import RaceServer

from ..wire import open_client, running_server


@pytest.fixture
async def server(db_url: str, tmp_path: Path) -> AsyncIterator[RaceServer]:
    async with running_server(db_url, tmp_path) as srv:
        yield srv


async def test_a_server_alone_is_a_cluster_of_one(server: RaceServer) -> None:
    node = server.node
    assert isinstance(node, Alone) and node.node == ""
    assert await node.owner("ABCDE") is None  # a room it does not hold is nowhere
    assert await node.lock("daily:2026-12-03:C") is True  # nobody else chooses the day
    assert await node.locate_player(1, 1, resume=True) is None  # their room is here


async def test_a_locate_on_a_server_alone_finds_the_room_nowhere(server: RaceServer) -> None:
    """The directory of a cluster of one is the node itself: a ``Locate`` is answered at
    once with "nowhere", and the join it carried is refused as any unknown room is."""
    alice = await open_client(server, "alice")
    [conn] = server._peers
    server.apply([Locate(conn, "ZZZZZ", encode(Join("ZZZZZ")))])
    refused = await alice.expect(Error)
    assert refused.code == "no_such_room"
    await alice.ws.close()
