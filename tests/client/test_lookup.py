"""``yukon play LINK`` looks the invite link's room up and connects to its node.

The answer of ``/r/CODE?format=json`` is read with its ``node`` (docs/protocol.md 1.6),
and anything that is not a node id is none (the client then connects as before). Then the
real app, as ``yukon play LINK`` makes it, on two real nodes of one cluster behind the real
HAProxy running deploy/haproxy.cfg (tests/test_deploy.py's ``affinity_cluster``): its one
connection goes to the room's node (``?node=``), where the proxy alone would have sent it
to the other node, and its join needs no ``route`` (4.25).
"""

from __future__ import annotations

from pathlib import Path

from client.closed import parse_room_state
from protocol.messages import Create, Hello, Room, Welcome
from tests.test_deploy import affinity_cluster, deploy_redis, metric, migrated

from ..server.wire import Client
from .helpers import until
from .test_invite_app import invited

__all__ = ["deploy_redis"]  # a fixture these tests use


def test_the_answer_names_the_open_rooms_node_and_nothing_else_is_one() -> None:
    def node(data: object) -> str | None:
        state = parse_room_state(data)
        assert state is not None
        return state.node

    answer = {"room": "XSLP6", "open": True, "node": "node-2.eu_1", "last_race": None}
    assert node(answer) == "node-2.eu_1"
    assert node({**answer, "node": None}) is None  # alone
    assert node({"room": "XSLP6", "open": True, "last_race": None}) is None  # an older server
    assert node({**answer, "open": False}) is None  # closed: nowhere to go
    for bad in ("", "n" * 65, "node 2", "node/../x", "nöde", 7, ["node1"]):
        assert node({**answer, "node": bad}) is None, bad
    assert node({**answer, "node": "n" * 64}) == "n" * 64


async def test_an_invite_link_connects_to_the_rooms_node_and_joins_with_no_route(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    from websockets.asyncio.client import connect

    from client.connection import Connection

    db = migrated(fresh_postgres, tmp_path)
    with affinity_cluster(db, deploy_redis, tmp_path) as (lb, (port1, log1), (port2, log2)):
        ann = Client(await connect(lb + "?node=node1"))
        await ann.send(Hello(1, name="ann", follow=True))
        await ann.expect(Welcome)
        await ann.send(Create())
        room = (await ann.expect(Room)).room
        link = lb.replace("ws://", "http://").rstrip("/") + f"/r/{room}"
        app = invited(link, tmp_path, "carol")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.current_mode == "room", "the room")
            assert app.session.room is not None and app.session.room.you == "player"
            connection = app.link
            assert isinstance(connection, Connection)
            assert connection.node == "node1" and connection.routes == 0
            # One connection, to node1; leastconn alone would have picked node2 (none open).
            assert metric(port1, "yukon_connections_opened_total") == 2
            assert metric(port2, "yukon_connections_opened_total") == 0
            assert metric(port1, "yukon_routes_sent_total") == 0
            while len((joined := await ann.expect(Room)).players) < 2:
                pass  # the host sees carol come in
            assert [p.name for p in joined.players] == ["ann", "carol"]
        await ann.ws.close()
    assert "Traceback" not in log1.rest() + log2.rest()
