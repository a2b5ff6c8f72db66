"""A mark or a close made with ``yukon mod``'s store takes effect on every running server
of one database within seconds, with no message between them (issue 40, item 5): two
servers on one database, real sockets, SQLite and PostgreSQL."""

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
