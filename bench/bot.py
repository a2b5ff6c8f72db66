"""The benchmarks' simulated player: one websocket client that plays like a (fast) person
and keeps what a real client keeps to resume (its token, every accepted move), written
from docs/protocol.md like any outside client; and the steps that put players in rooms.

Used by ``bench.load``, ``bench.faults`` and ``bench.cluster_drill`` (and their tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from client.closed import parse_room_state
from client.connection import ROUTE_LIMIT, ROUTE_WINDOW
from protocol import Game
from protocol.messages import Hello, Welcome, decode_server, encode

_packb = msgpack.packb
_unpackb = msgpack.unpackb
#: How every ``progress`` frame starts after its map header (``"t"`` comes first, and
#: then ``"progress"``): the players skip these without unpacking them, as a client
#: that does not show standings would.
_PROGRESS_HEAD = b"\xa1t\xa8progress"


# -- a client that records ------------------------------------------------------------------


class Recorder:
    """A client that keeps every frame the server sent it, in order: what the drills and
    the tests (``tests/server/wire.py``'s ``Client``) read back. ``timeout``: how long a
    frame that must come may take (a resume waiting for a takeover wants more)."""

    timeout: float = 15.0

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[Any] = []
        self.raw: list[bytes] = []

    async def send(self, message: Any) -> None:
        await self.ws.send(encode(message))

    async def recv(self) -> Any:
        data = await asyncio.wait_for(self.ws.recv(), self.timeout)
        assert isinstance(data, bytes), "the server sends binary frames only"
        self.raw.append(data)
        message = decode_server(data)
        self.frames.append(message)
        return message

    async def expect(self, kind: type, **match: Any) -> Any:
        """Read until a message of ``kind`` whose fields equal ``match``; return it."""
        while True:
            message = await self.recv()
            if isinstance(message, kind) and all(
                getattr(message, k) == v for k, v in match.items()
            ):
                return message

    async def hello(self, name: str) -> Welcome:
        await self.send(Hello(1, name))
        welcome: Welcome = await self.expect(Welcome)
        return welcome


# -- a simulated player ---------------------------------------------------------------------


class Gone(Exception):
    """The connection ended while the player waited for something."""


#: The answer a player gives itself to a move it sent before moving to another node, when
#: the race it resumed there already has the move (its real answer went with the old
#: connection): counted as accepted, not played again (the race's view has it).
APPLIED = "applied-before-follow"


def with_node(url: str, node: str) -> str:
    """``url`` with the query parameter ``node=<node>``, replacing any ``node`` there."""
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "node"]
    query.append(("node", node))
    path = parts.path or "/"
    return urllib.parse.urlunsplit(parts._replace(path=path, query=urllib.parse.urlencode(query)))


#: How long a look-up of a room's node may take before the player connects without it
#: (the terminal client's and the browser page's limit).
LOOKUP_TIMEOUT = 5.0


async def look_up_node(
    url: str, room: str, *, local_addr: str | None = None, timeout: float = LOOKUP_TIMEOUT
) -> str | None:
    """As an invite link's page and ``yukon play LINK`` do (docs/protocol.md 4.25): ``GET
    /r/ROOM?format=json&for=join`` of the server at ``url`` (its ws:// address: through HAProxy
    with ``--nodes``), from ``local_addr``, and the node it names (read as the terminal
    client reads it, ``client.closed``); None on any failure, or when it names none."""
    parts = urllib.parse.urlsplit(url)
    path = f"{parts.path.rstrip('/')}/r/{room}?format=json&for=join"
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: application/json\r\n"
        "Connection: close\r\n\r\n"
    )
    writer = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(
                parts.hostname,
                parts.port or 80,
                local_addr=(local_addr, 0) if local_addr is not None else None,
            )
            writer.write(request.encode())
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            status, *headers = head.split("\r\n")
            if status.split(" ")[1:2] != ["200"]:
                return None
            length = next(
                (
                    int(h.split(":", 1)[1])
                    for h in headers
                    if h.lower().startswith("content-length:")
                ),
                None,
            )
            body = await (reader.readexactly(length) if length is not None else reader.read())
        state = parse_room_state(json.loads(body))
    except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError):
        return None
    finally:
        if writer is not None:
            writer.transport.abort()
    return state.node if state is not None else None


@dataclass
class Player:
    """One websocket client that plays like a (fast) person, and keeps what a real client
    keeps to resume: its token and every accepted move and undo of its race."""

    url: str
    name: str
    rng: random.Random
    ws: ClientConnection | None = None
    token: str | None = None
    room: str | None = None
    game: Game | None = None
    state: str = "playing"
    next_seq: int = 1
    #: Accepted moves and undos of the current race, in order: (seq, move or None).
    acked: list[tuple[int, str | None]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    closes: list[int | None] = field(default_factory=list)
    last_room: dict[str, Any] | None = None
    #: Creates refused ``unavailable`` and sent again (a cluster node out of room codes).
    create_retries: int = 0
    #: With ``--nodes``: the node this player's room lives on is not the one it reached,
    #: so every answer comes through the relay.
    remote: bool = False
    #: This client follows ``route`` (docs/protocol.md 4.25): its hello says ``follow``,
    #: and on ``route`` it reconnects with ``?node=<id>`` and resumes there.
    follow: bool = False
    #: The loopback address its connections come from (None: the system's choice):
    #: through a load balancer that holds one address to a number of connections.
    local_addr: str | None = None
    #: The node its URL asks for (``?node=``): the last ``route`` it followed.
    node: str | None = None
    follows: int = 0
    #: Each follow's seconds: from the join to the route (nan: not after a join), opening
    #: the new connection, its hello to the welcome (and a race's resync).
    follow_steps: list[tuple[float, float, float]] = field(default_factory=list)
    #: Routes not followed, the relay serving the player: to the node it had just
    #: followed (the balancer ignored ``node``, 4.25), or past ROUTE_LIMIT a minute.
    routes_ignored: int = 0
    #: Moves and undos this player sent (each ``seq`` once), sent again after a resume or
    #: a follow, and answered ``accepted``/``undone`` (a lost one sent again counts once).
    sent: int = 0
    resent: int = 0
    accepted_total: int = 0
    #: It said ``ready`` in its room's lobby: after a follow, a lobby that shows it not
    #: ready (the ``ready`` went through the old connection and was lost) hears it again.
    want_ready: bool = False
    ready_again: int = 0
    _rooms_seen: int = 0
    #: A join being measured: when it was sent, when its first ``room`` came (what the
    #: player sees: it is in its room and may act), whether a ``route`` moved it to the
    #: room's node, and when it was there (welcomed, its resume's ``room`` or ``race``).
    join_sent: float | None = None
    join_room_at: float | None = None
    join_followed: bool = False
    join_on_node_at: float | None = None
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    #: Moves and undos sent and not answered yet, by ``seq`` (resent after a follow).
    _pending: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Clear while the player moves to another node: what it sends waits for the move.
    _settled: asyncio.Event = field(default_factory=asyncio.Event)
    _follow_failed: BaseException | None = None
    #: A route is being followed: a second one is not (the first decides).
    _following: bool = False
    _route_at: float = 0.0
    _routed: list[float] = field(default_factory=list)
    _follow_task: asyncio.Task[None] | None = None
    _backlog: list[dict[str, Any]] = field(default_factory=list)
    _news: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self._settled.set()

    @property
    def current_url(self) -> str:
        """The URL, with ``?node=`` naming the node it followed a route to."""
        return self.url if self.node is None else with_node(self.url, self.node)

    async def connect(self, timeout: float = 30.0, *, keep_backlog: bool = False) -> None:
        self.ws = await self._open(timeout)
        if not keep_backlog:
            self._backlog.clear()
        self._reader = asyncio.create_task(self._read(self.ws))

    async def _open(self, timeout: float) -> ClientConnection:
        extra: dict[str, Any] = {}
        if self.local_addr is not None:
            extra["local_addr"] = (self.local_addr, 0)
        return await connect(
            self.current_url,
            compression=None,
            open_timeout=timeout,
            ping_interval=None,
            max_size=2**20,
            close_timeout=2,
            **extra,
        )

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for data in ws:
                if data[1:12] == _PROGRESS_HEAD:  # progress: never looked at
                    continue
                # A connection a followed route replaced: only the answers to moves sent
                # on it before the switch count (the room's node may answer them on the
                # new one instead, Nodes.late); the new connection's resync says the rest.
                replaced = ws is not self.ws
                msg = _unpackb(data, raw=False)
                t = msg.get("t")
                if t == "progress":
                    continue
                if t == "route":
                    if not self.follow or replaced:
                        continue
                    if msg["node"] == self.node or self._following:
                        # The balancer ignored ?node= (4.25), or a route came while the
                        # player was still moving (nodes that disagree): the relay serves.
                        self.routes_ignored += 1
                        continue
                    # As the terminal client: at most ROUTE_LIMIT routes a ROUTE_WINDOW,
                    # past it the relay serves (nodes that disagree must not bounce it).
                    now = time.monotonic()
                    self._routed = [x for x in self._routed if x > now - ROUTE_WINDOW]
                    if len(self._routed) >= ROUTE_LIMIT:
                        self.routes_ignored += 1
                        continue
                    self._routed.append(now)
                    self._begin_follow(ws, msg)
                    continue
                seq = msg.get("seq")
                if seq is not None and t in ("accepted", "undone", "refused", "error", "move"):
                    fut = self._waiting.pop(seq, None)
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
                        continue
                if replaced:
                    continue
                if t == "result":
                    self.results.append(msg)
                elif t == "room":
                    self.last_room = msg
                    self._rooms_seen += 1
                    if self.join_sent is not None and self.join_room_at is None:
                        self.join_room_at = time.perf_counter()
                elif t == "error":
                    self.errors.append(msg["code"])
                self._backlog.append(msg)
                if len(self._backlog) > 256:
                    del self._backlog[:128]
                self._news.set()
        except ConnectionClosed as exc:
            if ws is self.ws:  # not the one a route replaced (closed 4001 by its gateway)
                self.closes.append(exc.rcvd.code if exc.rcvd else None)
        finally:
            if ws is self.ws and not self._following:
                self._fail_waiting()
            self._news.set()

    def _fail_waiting(self) -> None:
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(Gone(self.name))
        self._waiting.clear()
        self._pending.clear()

    # -- following a route (docs/protocol.md 4.25) --------------------------------------------

    def _begin_follow(self, old: ClientConnection, route: dict[str, Any]) -> None:
        """On ``route``: open a connection to the room's node while this one goes on
        serving (docs/protocol.md 4.25, make before break)."""
        self._following = True
        self._route_at = time.perf_counter()
        if self.join_sent is not None:  # the join's player moves to the room's node
            self.join_followed = True
        self._follow_task = asyncio.create_task(self._follow(old, str(route["node"])))

    async def _follow(self, old: ClientConnection, node: str, timeout: float = 60.0) -> None:
        """Open a connection with ``?node=<node>`` while the old one serves on; once it is
        open, hold what is to be sent, switch, say hello with the token (and ``follow``)
        and resume as after any reconnect (the race's ``seq`` says which moves the server
        has, the rest are sent again); then close the old one (1000). Nothing is sent
        on the old one after the hello on the new one, so the room's node has all of it
        before, or serves what is still relayed as the player's (``Nodes.late``)."""
        try:
            t1 = time.perf_counter()
            self.node = node
            new = await self._open(timeout)
            t2 = time.perf_counter()
            self._settled.clear()  # held from here to the welcome: a round trip
            self.ws = new
            self._backlog.clear()  # the resume's welcome, room and race say it all again
            self._reader = asyncio.create_task(self._read(new))
            seen = self._rooms_seen
            await self._hello_now(timeout)
            if self.game is not None:
                await self._resync(timeout, now=True)
            elif self.want_ready:
                await self._ready_again(seen, timeout)
            if self.join_sent is not None:
                self.join_on_node_at = time.perf_counter()
            self.follows += 1
            joined = self._route_at - self.join_sent if self.join_sent is not None else math.nan
            self.follow_steps.append((joined, t2 - t1, time.perf_counter() - t2))
        except BaseException as exc:
            self._follow_failed = exc
            self.errors.append(f"follow: {type(exc).__name__}: {exc}")
            self._fail_waiting()
            if self.ws is not None:
                self.ws.transport.abort()
            if not isinstance(exc, Exception):
                raise
        finally:
            self._following = False
            self._settled.set()
            self._news.set()
            await self._close_old(old)

    async def _ready_again(self, seen: int, timeout: float) -> None:
        """After a follow into a lobby: the resume's ``room`` says whether the player is
        ready; a ``ready`` it sent that went with the old connection is said again."""
        async with asyncio.timeout(timeout):
            while self._rooms_seen == seen:
                if self._reader is None or self._reader.done():
                    raise Gone(self.name)
                self._news.clear()
                await self._news.wait()
        room = self.last_room or {}
        me = [x for x in room.get("players", []) if x.get("name") == self.name]
        if room.get("state") == "lobby" and me and not me[0].get("ready"):
            self.ready_again += 1
            await self._send_now({"t": "ready", "ready": True})

    @staticmethod
    async def _close_old(old: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(old.close(1000), 5)
        old.transport.abort()

    async def moved(self) -> None:
        """Wait until a route being followed is done; Gone if it failed."""
        task = self._follow_task
        if task is not None and not task.done():
            await asyncio.wait([task])
        if self._follow_failed is not None:
            raise Gone(f"{self.name}: {self._follow_failed}")

    async def settled(self) -> None:
        """Wait until a move to the room's node in progress is over; Gone if it failed."""
        if not self._settled.is_set():
            await self._settled.wait()
        if self._follow_failed is not None:
            raise Gone(f"{self.name}: {self._follow_failed}")

    async def send(self, body: dict[str, Any]) -> None:
        await self.settled()
        await self._send_now(body)

    async def _send_now(self, body: dict[str, Any]) -> None:
        assert self.ws is not None
        try:
            await self.ws.send(_packb(body, use_bin_type=True))
        except ConnectionClosed as exc:
            raise Gone(self.name) from exc

    async def expect(
        self, t: str | tuple[str, ...], timeout: float = 30.0, **match: Any
    ) -> dict[str, Any]:
        """The next (or a waiting) message of type ``t`` (or of one of the types ``t``)
        whose fields equal ``match``."""
        types = (t,) if isinstance(t, str) else t
        async with asyncio.timeout(timeout):
            while True:
                for i, msg in enumerate(self._backlog):
                    if msg.get("t") in types and all(msg.get(k) == v for k, v in match.items()):
                        del self._backlog[: i + 1]
                        return msg
                if self._follow_failed is not None:
                    raise Gone(f"{self.name}: {self._follow_failed}")
                gone = self._reader is None or self._reader.done()
                if gone and self._settled.is_set():
                    raise Gone(self.name)
                self._news.clear()
                await self._news.wait()

    async def hello(self, timeout: float = 60.0) -> None:
        await self.settled()
        await self._hello_now(timeout)

    async def _hello_now(self, timeout: float) -> None:
        body: dict[str, Any] = {"t": "hello", "v": 1}
        if self.token is None:
            body["name"] = self.name
        else:
            body["token"] = self.token
        if self.follow:
            body["follow"] = True
        await self._send_now(body)
        welcome = await self.expect("welcome", timeout)
        self.token = welcome["token"]

    async def close(self) -> None:
        if self._follow_task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._follow_task, 10)
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 3)
            self.ws.transport.abort()
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await self._reader

    def abort(self) -> None:
        """Drop the connection without a close handshake, as a broken network does."""
        if self.ws is not None:
            self.ws.transport.abort()

    # -- racing ---------------------------------------------------------------------------

    def start_race(self, race: dict[str, Any]) -> None:
        self.want_ready = False
        self.game = Game.from_position(race["view"])
        self.state = race["state"]
        self.acked = []
        self.next_seq = race["seq"] + 1

    @property
    def done(self) -> bool:
        return self.state not in ("playing", "stuck")

    async def request(
        self, body: dict[str, Any], timeout: float = 30.0, *, now: bool = False
    ) -> dict[str, Any]:
        """Send a move or an undo and wait for its answer (``now``: without waiting for a
        move to another node, which is what sends it)."""
        seq = body["seq"]
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[seq] = fut
        self._pending[seq] = body
        try:
            await (self._send_now(body) if now else self.send(body))
        except Gone:
            self._waiting.pop(seq, None)
            self._pending.pop(seq, None)
            raise
        try:
            async with asyncio.timeout(timeout):
                return await fut
        finally:
            self._pending.pop(seq, None)

    def next_action(self) -> dict[str, Any] | None:
        """The next move (a random legal one) or undo (when stuck); None when done."""
        if self.game is None or self.done:
            return None
        seq = self.next_seq
        self.next_seq += 1
        self.sent += 1
        legal = self.game.legal_moves()
        if not legal:
            return {"t": "undo", "seq": seq}
        return {"t": "move", "seq": seq, "move": self.rng.choice(legal)}

    def apply(self, body: dict[str, Any], reply: dict[str, Any]) -> bool:
        """Follow the server's answer; True if it was accepted (or undone)."""
        t = reply["t"]
        assert self.game is not None
        if t == "accepted":
            self.game.play(reply["move"], reveal=reply["turned"])
            self.acked.append((reply["seq"], reply["move"]))
            self.state = reply["state"]
            self.accepted_total += 1
            return True
        if t == "undone":
            self.game = Game.from_position(reply["view"])
            self.acked.append((reply["seq"], None))
            self.state = reply["state"]
            self.accepted_total += 1
            return True
        if t == APPLIED:  # in the race's seq when the player resumed: its view has it
            self.acked.append((body["seq"], body.get("move")))
            self.accepted_total += 1
            return True
        if t == "error" and reply.get("code") == "finished":
            self.state = "finished"
        return False

    async def play_one(self, timeout: float = 30.0) -> tuple[bool, float] | None:
        """Play one action; (accepted, seconds to the answer), or None when done."""
        body = self.next_action()
        if body is None:
            return None
        started = time.perf_counter()
        reply = await self.request(body, timeout)
        took = time.perf_counter() - started
        return self.apply(body, reply), took

    async def resume(self, timeout: float = 60.0) -> dict[str, Any] | None:
        """Reconnect with the token; take the server's race; resend what it lost."""
        await self.connect()
        await self.hello(timeout)
        if self.game is None:
            return None
        return await self._resync(timeout)

    async def _resync(self, timeout: float, *, now: bool = False) -> dict[str, Any]:
        """After a hello that resumed: the server's ``race`` replaces the player's view;
        accepted moves past its ``seq`` are sent again (it lost them), and so are those
        still waiting for an answer (``_pending``: sent on the old connection); one
        waiting whose ``seq`` the race has was applied, and is answered ``APPLIED``
        here (its answer went with the old connection; the view has the move)."""
        race = await self.expect("race", timeout)
        self.game = Game.from_position(race["view"])
        self.state = race["state"]
        lost = [(s, m) for s, m in self.acked if s > race["seq"]]
        self.acked = [(s, m) for s, m in self.acked if s <= race["seq"]]
        self.accepted_total -= len(lost)  # counted again when the resend is accepted
        waiting = sorted(self._pending.items())
        for seq, move in lost:
            body: dict[str, Any] = (
                {"t": "move", "seq": seq, "move": move}
                if move is not None
                else {"t": "undo", "seq": seq}
            )
            self.resent += 1
            reply = await self.request(body, timeout, now=now)
            if not self.apply(body, reply):
                raise AssertionError(f"{self.name}: resent seq {seq} got {reply}")
        for seq, body in waiting:
            if seq <= race["seq"]:
                fut = self._waiting.pop(seq, None)
                if fut is not None and not fut.done():
                    fut.set_result({"t": APPLIED, "seq": seq})
            else:  # its answer comes here, to the request still waiting for it
                self.resent += 1
                await self._send_now(body)
        last_sent = max([race["seq"]] + [s for s, _ in lost] + [s for s, _ in waiting])
        self.next_seq = max(self.next_seq, last_sent + 1)
        return race


async def form_room(
    players: list[Player],
    *,
    code: str | None = None,
    time_limit: int = 7200,
    undo: bool = True,
    timeout: float = 60.0,
) -> str:
    """The first player creates a room, the others join and get ready; the host starts it
    and every player gets its race."""
    host, guests = players[0], players[1:]
    create: dict[str, Any] = {
        "t": "create",
        "max_players": max(2, len(players)),
        "time_limit": time_limit,
        "undo": undo,
    }
    if code is not None:
        create["code"] = code
    deadline = time.monotonic() + timeout
    while True:
        await host.send(create)
        answer = await host.expect(("room", "error"), max(0.1, deadline - time.monotonic()))
        if answer["t"] == "room":
            break
        # A cluster node whose pool of reserved room codes ran dry says ``unavailable``:
        # a client tries again, and so does this one, counting it (the bench prints it).
        if answer["code"] != "unavailable" or time.monotonic() > deadline:
            raise RuntimeError(f"{host.name}: create refused: {answer}")
        host.create_retries += 1
        await asyncio.sleep(0.2 + host.rng.random() * 0.3)
    room = answer["room"]
    for p in (host, *guests):
        p.room = room
    for g in guests:
        # Measured: from the join to its room on the node the guest ends on (after a
        # route, the room of its resume there), set by the player's reader.
        g.join_room_at, g.join_on_node_at, g.join_followed = None, None, False
        g.join_sent = time.perf_counter()
        await g.send({"t": "join", "room": room})
        async with stuck(g, "its room after join"):
            await g.expect("room", timeout)
        g.want_ready = True
        await g.send({"t": "ready", "ready": True})
    deadline = time.monotonic() + timeout
    async with stuck(host, "every member ready"):
        while guests:  # wait until the host sees everyone ready (alone: it is)
            msg = await host.expect("room", max(0.1, deadline - time.monotonic()))
            if len(msg["players"]) == len(players) and all(x["ready"] for x in msg["players"]):
                break
    await host.send({"t": "start"})
    for p in players:
        async with stuck(p, "its race"):
            p.start_race(await p.expect("race", timeout))
    return room


@contextlib.asynccontextmanager
async def stuck(p: Player, what: str) -> AsyncIterator[None]:
    """A wait of ``p`` for ``what`` that times out says who waited for what, and where
    the player was: a room that does not start is a finding, not a bare TimeoutError."""
    try:
        yield
    except TimeoutError:
        room = p.last_room or {}
        members = [
            (x.get("name"), x.get("ready"), x.get("connected")) for x in room.get("players", [])
        ]
        raise RuntimeError(
            f"{p.name} waited in vain for {what} (room {p.room}, follows {p.follows},"
            f" node {p.node}, errors {p.errors[-3:]}, closes {p.closes[-3:]}; last room:"
            f" {room.get('state')} {members})"
        ) from None


def join_latency(p: Player) -> tuple[float, float, bool] | None:
    """The last join's seconds from ``join`` to its first ``room`` (the player is in its
    room and may act: what it sees), and to its being on the room's node (a route
    followed: welcomed there and resumed; else the same), and whether a ``route`` moved
    it; None if it was not measured. Ends the join's measuring."""
    sent, seen, followed = p.join_sent, p.join_room_at, p.join_followed
    on_node = p.join_on_node_at if followed else seen
    p.join_sent = p.join_room_at = p.join_on_node_at = None
    if sent is None or seen is None or on_node is None:
        return None
    return seen - sent, on_node - sent, followed
