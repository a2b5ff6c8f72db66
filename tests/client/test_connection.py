"""The connection against scripted servers: hello and tokens, one-line problems, reconnects."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from client.config import Identity, TokenStore
from client.connection import Connection, LinkStatus, describe_close, with_node
from protocol.messages import (
    CLOSE_REPLACED,
    Error,
    Hello,
    Left,
    Message,
    Ready,
    Room,
    RoomPlayer,
    Route,
    Welcome,
    decode_client,
    encode,
)

#: How long a test waits for what it expects before failing. Generous: it only runs out
#: when something is wrong, and a busy 2-core machine can take seconds for a resync.
WAIT = 20.0
Script = Callable[[ServerConnection, int], Awaitable[None]]


class Recorder:
    """The app's side: every status and message, and a way to wait for one."""

    def __init__(self) -> None:
        self.statuses: list[LinkStatus] = []
        self.messages: list[Message] = []
        self.changed = asyncio.Event()

    def link_message(self, message: Message) -> None:
        self.messages.append(message)
        self.changed.set()

    def link_status(self, status: LinkStatus) -> None:
        self.statuses.append(status)
        self.changed.set()

    async def until(self, check: Callable[[], bool]) -> None:
        async def wait() -> None:
            while not check():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), WAIT)

    async def poll(self, check: Callable[[], bool]) -> None:
        """Until ``check``, looking every 10 ms: for what the app is not told."""

        async def wait() -> None:
            while not check():
                await asyncio.sleep(0.01)

        await asyncio.wait_for(wait(), WAIT)

    def saw(self, kind: str, text: str = "") -> bool:
        return any(s.kind == kind and text in s.text for s in self.statuses)


@contextlib.asynccontextmanager
async def scripted(script: Script) -> AsyncIterator[str]:
    """A websocket server playing ``script`` on each connection (numbered from 1)."""
    count = 0

    async def handler(ws: ServerConnection) -> None:
        nonlocal count
        count += 1
        await script(ws, count)

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


async def read_hello(ws: ServerConnection, hellos: list[Hello]) -> Hello:
    hello = decode_client(await ws.recv())
    assert isinstance(hello, Hello)
    hellos.append(hello)
    return hello


def welcome(name: str = "alice", token: str = "T" * 32) -> bytes:
    return encode(Welcome(1, name, token, 60))


@contextlib.asynccontextmanager
async def running(conn: Connection) -> AsyncIterator[None]:
    task = asyncio.create_task(conn.run())
    try:
        yield
    finally:
        await conn.close()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, WAIT)
        task.cancel()


async def test_hello_with_a_name_saves_the_token_and_messages_flow(tmp_path: Path) -> None:
    hellos: list[Hello] = []
    room = Room(
        "K7WQM",
        "player",
        "alice",
        "lobby",
        "C",
        None,
        4,
        True,
        1800,
        (RoomPlayer("alice", True, True),),
        0,
    )

    async def script(ws: ServerConnection, n: int) -> None:
        await read_hello(ws, hellos)
        await ws.send(welcome())
        await ws.send(b"\xc1")  # garbage: ignored, not shown
        await ws.send(encode(room))
        await ws.wait_closed()

    store = TokenStore(tmp_path)
    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice", store=store)
        assert not conn.send(Hello(1))  # not connected yet
        async with running(conn):
            await events.until(lambda: room in events.messages)
            assert conn.online and events.saw("online", "as alice")
            assert isinstance(events.messages[0], Welcome)
    # It follows routes, and sends this server's device id (4.31), kept by the store.
    assert hellos == [Hello(1, "alice", None, follow=True, device=store.device(url))]
    assert store.load(url) == Identity("alice", "T" * 32)
    assert events.statuses[-1].kind == "closed"


async def test_a_saved_token_is_used_and_a_different_name_is_a_new_player(tmp_path: Path) -> None:
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        hello = await read_hello(ws, hellos)
        await ws.send(welcome("Bob", hello.token or "B" * 32))
        await ws.wait_closed()

    store = TokenStore(tmp_path)
    async with scripted(script) as url:
        store.save(url, Identity("Bob", "saved-token"))
        for name in (None, "BOB", "robin"):
            recorder = Recorder()
            async with running(Connection(url, recorder, name=name, store=store)):
                await recorder.until(lambda r=recorder: r.saw("online"))
    assert [(h.name, h.token) for h in hellos] == [
        (None, "saved-token"),
        (None, "saved-token"),  # the same name, in another case: still the token
        ("robin", None),
    ]


async def test_an_unknown_token_falls_back_to_the_name(tmp_path: Path) -> None:
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        hello = await read_hello(ws, hellos)
        assert hello.token == "old"
        await ws.send(encode(Error("bad_token", "unknown token")))
        await read_hello(ws, hellos)
        await ws.send(welcome("alice", "N" * 32))
        await ws.wait_closed()

    store = TokenStore(tmp_path)
    events = Recorder()
    async with scripted(script) as url:
        store.save(url, Identity("alice", "old"))
        async with running(Connection(url, events, name="alice", store=store)):
            await events.until(lambda: events.saw("online"))
    assert [(h.name, h.token) for h in hellos] == [(None, "old"), ("alice", None)]
    assert store.load(url) == Identity("alice", "N" * 32)


async def test_a_taken_name_waits_for_another(tmp_path: Path) -> None:
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        hello = await read_hello(ws, hellos)
        if hello.name == "alice":
            await ws.send(encode(Error("name_taken", "the name 'alice' is taken")))
            await ws.wait_closed()
            return
        await ws.send(welcome(hello.name or "?"))
        await ws.wait_closed()

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice", store=TokenStore(tmp_path))
        async with running(conn):
            await events.until(lambda: events.saw("need_name"))
            assert events.statuses[-1].text.startswith("the name 'alice' is taken on 127.0.0.1:")
            conn.login("alicia")
            await events.until(lambda: events.saw("online", "as alicia"))
    assert [h.name for h in hellos] == ["alice", "alicia"]


async def test_no_token_and_no_name_asks_for_a_name_once_the_server_answers(
    tmp_path: Path,
) -> None:
    """Issue 42: the first time on a server, its websocket is opened first (nothing is
    said on it), so that a name is asked only where a server answers."""
    connections = 0
    said: list[object] = []

    async def script(ws: ServerConnection, n: int) -> None:
        nonlocal connections
        connections += 1
        with contextlib.suppress(Exception):
            said.append(await ws.recv())

    events = Recorder()
    async with (
        scripted(script) as url,
        running(Connection(url, events, store=TokenStore(tmp_path))),
    ):
        await events.until(lambda: events.saw("need_name", "first time on"))
        await asyncio.sleep(0.05)
    assert connections == 1 and said == []


async def test_nothing_answering_is_said_and_no_name_is_asked(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    events = Recorder()
    url = f"ws://127.0.0.1:{port}"
    async with running(Connection(url, events, store=TokenStore(tmp_path), backoff=(0.05,))):
        await events.until(lambda: events.saw("retrying", "nothing answers at"))
        await events.until(lambda: sum(s.kind == "retrying" for s in events.statuses) > 3)
    assert not events.saw("need_name")
    assert events.saw("retrying", f"nothing answers at 127.0.0.1:{port}: connection refused")


async def test_a_wrong_protocol_version_stops_for_good() -> None:
    async def script(ws: ServerConnection, n: int) -> None:
        await ws.recv()
        await ws.send(encode(Error("version", "this server speaks protocol version 2, not 1")))
        await ws.close(4000, "unsupported protocol version")

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice")
        await asyncio.wait_for(conn.run(), WAIT)  # returns: no retry
    assert events.statuses[-1] == LinkStatus(
        "failed", "wrong protocol version: this server speaks protocol version 2, not 1"
    )


async def test_a_close_by_the_server_is_told_and_the_token_resumes() -> None:
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        await read_hello(ws, hellos)
        await ws.send(welcome())
        if n == 1:
            await ws.close(1008, "too many messages")
            return
        await ws.wait_closed()

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice", backoff=(0.05,))
        async with running(conn):
            await events.until(lambda: len([s for s in events.statuses if s.kind == "online"]) == 2)
    assert events.saw("retrying", "the server closed the connection: too many messages; retrying")
    assert [(h.name, h.token) for h in hellos] == [("alice", None), (None, "T" * 32)]


async def test_replaced_by_another_connection_stops() -> None:
    async def script(ws: ServerConnection, n: int) -> None:
        await ws.recv()
        await ws.send(welcome())
        await ws.close(4001, "replaced by a newer connection")

    events = Recorder()
    async with scripted(script) as url:
        await asyncio.wait_for(Connection(url, events, name="alice").run(), WAIT)
    assert events.statuses[-1].kind == "failed"
    assert "connected again from somewhere else" in events.statuses[-1].text


async def test_an_http_server_that_is_not_ours() -> None:
    async def http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(http, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    events = Recorder()
    conn = Connection(f"ws://127.0.0.1:{port}", events, name="alice", backoff=(10.0,))
    async with server, running(conn):
        await events.until(lambda: events.saw("retrying", "not a Yukon race server"))
    assert events.saw("retrying", f"127.0.0.1:{port} is not a Yukon race server (HTTP 404)")


async def test_an_address_that_is_not_a_websocket_url_fails_at_once() -> None:
    events = Recorder()
    await asyncio.wait_for(Connection("http://example.org", events, name="x").run(), WAIT)
    assert events.statuses[-1].kind == "failed"
    assert "is not a websocket address" in events.statuses[-1].text


def test_close_codes_in_words() -> None:
    assert describe_close(1001, "") == "the server is going away (shutting down or restarting)"
    assert describe_close(1006, "") == "the connection was lost"
    assert (
        describe_close(4002, "too slow")
        == "the server closed the connection: this client fell behind"
    )
    assert describe_close(1011, "keepalive ping timeout") == (
        "the server closed the connection with code 1011: keepalive ping timeout"
    )
    assert describe_close(4999, "") == "the server closed the connection with code 4999"


async def test_a_private_server_without_the_password_asks_for_it() -> None:
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        hello = await read_hello(ws, hellos)
        if hello.password != "sesame":
            await ws.send(encode(Error("password", "this server is private")))
            await ws.close(1008, "wrong password")
            return
        await ws.send(welcome())
        await ws.wait_closed()

    events = Recorder()
    async with scripted(script) as url:
        connection = Connection(url, events, name="alice")
        async with running(connection):
            await events.until(lambda: events.saw("need_password"))
            assert events.statuses[-1].text.endswith("is private and the password is missing")
            connection.use_password("sesame")
            await events.until(lambda: events.saw("online"))
        events = Recorder()
        async with running(Connection(url, events, name="alice", password="sesame")):
            await events.until(lambda: events.saw("online"))
    assert [h.password for h in hellos] == [None, "sesame", "sesame"]


def test_with_node_sets_the_node_parameter_and_keeps_the_rest() -> None:
    assert with_node("ws://h:8765", "n2") == "ws://h:8765?node=n2"
    assert with_node("ws://h:8765/", "n2") == "ws://h:8765/?node=n2"
    assert with_node("wss://h/yukon/?a=1&node=n1", "n3") == "wss://h/yukon/?a=1&node=n3"
    assert with_node("ws://h/?node=n1&a=1", None) == "ws://h/?a=1"


async def test_a_route_moves_the_connection_to_the_rooms_node_at_once() -> None:
    """On ``route`` the client opens a connection with ``?node=`` at once (no backoff),
    says hello with its token, and the app gets the resync from there; the old connection
    serves on until then (what it brings is shown), and is closed (1000) after."""
    hellos: list[Hello] = []
    paths: list[str] = []
    closes: list[int | None] = []
    room = Room("K7WQM", "player", "ann", "lobby", "C", None, 4, True, 1800, (), 0)

    async def script(ws: ServerConnection, n: int) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        hello = await read_hello(ws, hellos)
        await ws.send(welcome("alice", hello.token or "T" * 32))
        if n == 1:
            await ws.send(encode(room))
            await ws.send(encode(Route("node-2", "K7WQM")))
            await ws.send(encode(Error("relayed", "sent after the route: still shown")))
        else:
            await ws.send(
                encode(Room("K7WQM", "player", "ann", "lobby", "C", None, 4, True, 1800, (), 1))
            )
        await ws.wait_closed()
        closes.append(ws.close_code)

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url + "/", events, name="alice", backoff=(30.0,))
        async with running(conn):
            await events.until(lambda: len(hellos) == 2 and conn.online)
            await events.until(lambda: sum(isinstance(m, Room) for m in events.messages) == 2)
            assert conn.node == "node-2" and conn.routes == 1
            await events.poll(lambda: closes == [1000])  # the old one, once welcomed
    assert paths == ["/", "/?node=node-2"]
    assert hellos[1] == Hello(1, None, "T" * 32, follow=True)
    assert not any(isinstance(m, Route) for m in events.messages)
    assert any(isinstance(m, Error) and m.code == "relayed" for m in events.messages)
    assert sum(isinstance(m, Welcome) for m in events.messages) == 2
    assert not events.saw("retrying") and not events.saw("connecting", "moving")


async def test_the_old_connection_serves_until_the_rooms_node_welcomes_the_client() -> None:
    """Make before break: the app never sees the client offline. From the hello on the
    new connection to its welcome what the app sends waits (nothing goes on the old one
    after that hello, 4.25), then goes through the new one."""
    got: dict[int, list[str]] = {1: [], 2: []}
    release = asyncio.Event()
    hellos = 0

    async def script(ws: ServerConnection, n: int) -> None:
        nonlocal hellos
        await read_hello(ws, [])
        hellos += 1
        if n == 2:
            await release.wait()  # the room's node is slow to welcome
        await ws.send(welcome())
        if n == 1:
            await ws.send(encode(Route("node-2", "K7WQM")))
        with contextlib.suppress(Exception):
            async for data in ws:
                msg = decode_client(data)
                got[n].append(type(msg).__name__)

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice", backoff=(30.0,))
        async with running(conn):
            await events.poll(lambda: conn.routes == 1 and hellos == 2)
            # The hello is on its way on the new connection: what the app sends now
            # waits for its welcome (nothing goes on the old one after the hello).
            assert conn.online and conn.send(Ready(True))
            await asyncio.sleep(0.2)
            assert got == {1: [], 2: []}
            release.set()
            await events.until(lambda: sum(isinstance(m, Welcome) for m in events.messages) == 2)
            await events.poll(lambda: got[2] == ["Ready"])
            assert conn.online and conn.send(Ready(False))
            await events.poll(lambda: got[2] == ["Ready", "Ready"])
    assert got[1] == []
    assert [s.kind for s in events.statuses].count("online") == 1


async def test_a_routed_node_that_cannot_be_reached_leaves_the_client_where_it_is() -> None:
    """The routed node is gone (the balancer answers 503): the client stays on its
    connection, relayed, and its next reconnect uses the plain address."""
    paths: list[str] = []
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        await read_hello(ws, hellos)
        await ws.send(welcome())
        if n == 1:
            await ws.send(encode(Route("gone", "K7WQM")))
            await asyncio.sleep(0.5)
            await ws.send(encode(Left("K7WQM")))
            await ws.close(1012, "restarting")
        await ws.wait_closed()

    async def refuse(connection: ServerConnection, request: Any) -> Any:
        if "node=gone" in request.path:
            return connection.respond(503, "no server is available\n")
        return None

    events = Recorder()
    async with serve(_counting(script), "127.0.0.1", 0, process_request=refuse) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        conn = Connection(f"ws://127.0.0.1:{port}", events, name="alice", backoff=(0.05,))
        async with running(conn):
            await events.until(lambda: any(isinstance(m, Left) for m in events.messages))
            await events.until(lambda: len(hellos) == 2)
            assert conn.node is None and conn.routes == 1
    assert paths == ["/", "/"]  # the 503 was refused before the handler ran


def _counting(script: Script) -> Callable[[ServerConnection], Awaitable[None]]:
    count = 0

    async def handler(ws: ServerConnection) -> None:
        nonlocal count
        count += 1
        await script(ws, count)

    return handler


async def test_routes_that_bounce_are_followed_three_times_a_minute_at_most() -> None:
    """Nodes that disagree on where a room lives (a takeover under way) may route a client
    back and forth: it follows three routes a minute, then stays, relayed."""
    paths: list[str] = []

    async def script(ws: ServerConnection, n: int) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        await read_hello(ws, [])
        await ws.send(welcome())
        await ws.send(encode(Route("n1" if n % 2 else "n2", "K7WQM")))
        if n == 4:
            await ws.send(encode(Left("K7WQM")))  # read by the client that stayed
        await ws.wait_closed()

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice", backoff=(30.0,))
        async with running(conn):
            await events.until(lambda: any(isinstance(m, Left) for m in events.messages))
            assert len(paths) == 4 and conn.routes == 3
    assert paths == ["/", "/?node=n1", "/?node=n2", "/?node=n1"]


async def test_a_route_whose_node_refuses_the_token_leaves_the_identity_alone(
    tmp_path: Path,
) -> None:
    """The room's node answers the follow's hello with ``bad_token``: the client stays on
    its connection (relayed); it neither registers its name there nor forgets its token."""
    hellos: list[Hello] = []

    async def script(ws: ServerConnection, n: int) -> None:
        hello = await read_hello(ws, hellos)
        if n == 2:
            await ws.send(encode(Error("bad_token", "unknown token")))
            with contextlib.suppress(Exception):
                await read_hello(ws, hellos)  # (a second hello would be a registration)
            return
        await ws.send(welcome("alice", hello.token or "T" * 32))
        await ws.send(encode(Route("node-2", "K7WQM")))
        await asyncio.sleep(0.5)
        await ws.send(encode(Left("K7WQM")))
        await ws.wait_closed()

    store = TokenStore(tmp_path)
    events = Recorder()
    async with scripted(script) as url:
        store.save(url, Identity("alice", "T" * 32))
        conn = Connection(url, events, name="alice", store=store, backoff=(30.0,))
        async with running(conn):
            await events.until(lambda: any(isinstance(m, Left) for m in events.messages))
            assert conn.online and conn.node is None and conn.routes == 1
    assert [(h.name, h.token) for h in hellos] == [(None, "T" * 32), (None, "T" * 32)]
    saved = store.load(url, "alice")
    assert saved is not None and saved.token == "T" * 32


async def test_an_old_connection_replaced_by_a_follow_that_failed_is_not_another_window() -> None:
    """The room's node took the follow's hello (so the old connection's node closes it,
    4001) but its welcome never came: that 4001 is the client's own doing, not another
    window's connection, so it connects again instead of stopping for good."""
    paths: list[str] = []
    hello_on_node = asyncio.Event()

    async def script(ws: ServerConnection, n: int) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        await read_hello(ws, [])
        if n == 2:
            hello_on_node.set()
            await asyncio.sleep(0.3)
            await ws.close(1011, "gone")
            return
        await ws.send(welcome())
        if n == 1:
            await ws.send(encode(Route("node-2", "K7WQM")))
            await hello_on_node.wait()
            await ws.close(CLOSE_REPLACED, "replaced by a newer connection")
            return
        await ws.wait_closed()

    events = Recorder()
    async with scripted(script) as url:
        conn = Connection(url, events, name="alice", backoff=(0.05,))
        async with running(conn):
            await events.until(lambda: len(paths) == 3 and conn.online)
    assert not events.saw("failed")
    assert paths[:2] == ["/", "/?node=node-2"]
