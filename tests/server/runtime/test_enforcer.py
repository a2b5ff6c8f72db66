"""A mark or a close made with ``yukon mod``'s store takes effect on every running server
of one database within seconds, with no message between them (issue 40, item 5): two and
three servers on one database (as a cluster's nodes are), real sockets, SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from protocol.messages import PROTOCOL_VERSION, Error, Hello, Welcome
from server.storage.moderation import ModerationStore

from ..wire import open_client, running_server


async def test_a_close_reaches_the_sockets_of_every_server(db_url: str, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with (
        running_server(db_url, tmp_path / "a") as one,
        running_server(db_url, tmp_path / "b") as two,
    ):
        ann = await open_client(one)
        welcome = await ann.hello("ann")
        mod = ModerationStore(one.store.engine)
        # ann's second device, on the other server, with her token.
        elsewhere = await open_client(two)
        await elsewhere.send(Hello(PROTOCOL_VERSION, token=welcome.token))
        await elsewhere.expect(Welcome)
        started = time.monotonic()
        await mod.set_state(action="close", name="ann", reason="asked to", operator="olga", now=0.0)
        for client in (ann, elsewhere):
            error = await client.expect(Error)
            assert error.code == "account_closed"
            try:
                await asyncio.wait_for(client.ws.recv(), 5)
            except ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 4004
        assert time.monotonic() - started < 5.0


async def test_a_mark_reaches_the_pool_of_each_of_three_servers(
    db_url: str, tmp_path: Path
) -> None:
    """issue 40's proof: a mark made once is applied by every server of the database (a
    cluster's nodes each read it so): on each of three, two players already connected
    before the mark press quick race and are not paired, the marked one waiting in a lane
    of their own; after the unmark they are paired at once."""
    from protocol.messages import Pool, Quick, Room

    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    async with (
        running_server(db_url, tmp_path / "a") as one,
        running_server(db_url, tmp_path / "b") as two,
        running_server(db_url, tmp_path / "c") as three,
    ):
        ann, bob = await open_client(one), await open_client(one)
        tokens = {"ann": (await ann.hello("ann")).token, "bob": (await bob.hello("bob")).token}
        pairs = []
        for server in (one, two, three):
            seats = []
            for name in ("ann", "bob"):
                client = await open_client(server)
                await client.send(Hello(PROTOCOL_VERSION, token=tokens[name]))
                await client.expect(Welcome)
                seats.append(client)
            pairs.append(seats)
        mod = ModerationStore(one.store.engine)
        await mod.mark(name="ann", kind="engine", reason="test", operator="olga", now=0.0)
        await asyncio.sleep(1.0)  # the servers poll every 0.2 s in tests (2 s by default)
        for a, b in pairs:
            await a.send(Quick())
            await b.send(Quick())
            await a.expect(Pool, state="waiting")
            await b.expect(Pool, state="waiting")
        await asyncio.sleep(1.5)  # room enough for a pairing, which would come at once
        for a, b in pairs:
            assert not [m for m in a.frames + b.frames if isinstance(m, Room)]
        await mod.unmark(name="ann", kind="engine", reason="appeal", operator="olga", now=1.0)
        for a, _ in pairs:  # the next read puts ann back in the humans' lane: paired
            room: Room = await a.expect(Room)
            assert room.quick and {p.name for p in room.players} == {"ann", "bob"}
