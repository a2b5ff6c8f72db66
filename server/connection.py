"""The only module that touches websockets: frames in, effects out.

Each connection gets a reader (this handler) and a writer task fed by an ``Outbox``. The
hub's effects are applied without awaiting any socket, so a slow or stalled client only
ever fills its own outbox: progress updates waiting in it are coalesced to the latest, and
an outbox that still overflows closes that client with ``CLOSE_TOO_SLOW``.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from concurrent.futures import ProcessPoolExecutor
from ssl import SSLContext
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import Event, State

from protocol.messages import (
    CLOSE_TOO_SLOW,
    MAX_FRAME,
    NODE_ID_CHARS,
    Error,
    Ghost,
    HintAnswer,
    Message,
    Progress,
    Replay,
    Route,
    encode,
)
from solver import Solution, solve

from .daily import NoWinnableDealError, utc_date
from .effects import (
    Authenticate,
    BeginDaily,
    Close,
    Effect,
    Examine,
    Forget,
    Journal,
    LiveRace,
    Persist,
    Query,
    Rate,
    Send,
    Solve,
)
from .leaderboard import Leaderboards
from .limits import Network, client_address
from .metrics import Live, Metrics
from .ratings import DEFAULT_RATING
from .relay import RelayDown
from .replays import Replays
from .rooms.pool import usual_window

if TYPE_CHECKING:
    from .cluster import Cluster
from .rooms import Hub
from .storage.journal import JournalWriter
from .storage.spool import ResultWriter
from .storage.sql import NameTakenError, SqlStore
from .workers import real_stderr, solver_pool

__all__ = ["RaceServer", "OUTBOX_LIMIT"]

log = logging.getLogger("yukon.server")

_UNAVAILABLE: dict[str, Any] = {
    "code": "unavailable",
    "text": "the server cannot reach its database just now; try again shortly",
}
_BUSY = Error(
    "unavailable", "the server is answering too many requests just now; try again shortly"
)

#: Frames a client may leave unread before it is closed as too slow.
OUTBOX_LIMIT = 256

#: Bytes the socket may hold unsent for one client before it is closed as too slow. In
#: normal use it holds at most websockets' write limit (32 KiB) and one frame: the outbox
#: writes only to an empty buffer or after a drain. What else fills it is written by
#: websockets on its own, above all a pong for every ping, which a client that sends
#: pings and never reads would pile up without bound (docs/limits.md).
WRITE_BUFFER_LIMIT = 256 * 1024

#: Board and history requests being answered at once, for every client together, and
#: how many more may wait for their turn (beyond: ``unavailable``). The database's pool
#: holds more connections than this, so a hello or a result always finds one free
#: however many reads are asked for: they never queue behind leaderboard reads.
QUERY_CONCURRENCY = 4
QUERY_QUEUE = 64
#: How long the quick-race pool keeps "when others usually play" before reading it again.
USUAL_S = 600.0

#: Fragments one message may come in (websockets' own default limit).
MAX_FRAGMENTS = 4096

#: A client the server has heard nothing from for this long is pinged, and closed with
#: 1011 if it still says nothing for as long again (docs/protocol.md, "keepalive").
PING_INTERVAL = 20.0
PING_TIMEOUT = 20.0

_PROGRESS = object()  # marks where the (coalesced) latest progress goes in an outbox

#: The start of YU1-C-AAAAAAB: the worker's first job, to load the solver (``_warm_hints``).
_WARM_UP = (
    "C ---- 7H/9s6HQSAD9H8S/4h9c2H4CKC3HTS/8djsjd2S6S6D3C3D/8h5h5dahKD7SQCAS2C"
    "/5ckh7d6ctdJCACQD4S9D/jh3s4dkstcth8C5SQH2D7C"
)


class Outbox:
    """Frames waiting for one client, written by one task, never blocking anyone else.

    A frame for a client with nothing waiting and an empty socket buffer is written at
    once, without waking the writer task: most frames go this way, and the task's wake-up
    and websockets' ``send`` machinery cost more than the write itself (bench/load.py).
    Everything else waits in order for the writer, which honours flow control.
    """

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.items: deque[bytes | object] = deque()
        #: The progress queued at ``_PROGRESS`` in ``items``.
        self.progress: bytes | None = None
        self.wakeup = asyncio.Event()
        self.closing: tuple[int, str] | None = None
        #: The writer task is between taking a frame and having written it.
        self.sending = False

    def put(self, data: bytes, *, is_progress: bool) -> bool:
        """Queue a frame; False if the client has fallen too far behind.

        Only the latest progress matters: a newer one replaces one still waiting, and goes
        after everything queued before it (docs/protocol.md, section 4.11).
        """
        if self.closing is not None:
            return True
        if not self.items and not self.sending and self._write_now(data):
            return True
        if is_progress:
            if self.progress is not None:
                self.items.remove(_PROGRESS)
            self.items.append(_PROGRESS)
            self.progress = data
        else:
            self.items.append(data)
        self.wakeup.set()
        return len(self.items) <= OUTBOX_LIMIT

    def _write_now(self, data: bytes) -> bool:
        """Hand a frame to the socket if it is open and keeping up; False: queue it."""
        ws = self.ws
        transport = ws.transport
        if (
            ws.protocol.state is not State.OPEN
            or transport.is_closing()
            or transport.get_write_buffer_size()
        ):
            return False
        ws.protocol.send_binary(data)
        ws.send_data()
        return True

    def discard(self) -> None:
        """Forget what is queued (a client that stopped reading, or is gone)."""
        self.progress = None
        self.items.clear()

    def close(self, code: int, reason: str) -> None:
        """Close after the frames already queued (an error's text reaches the client first)."""
        if self.closing is None:
            self.closing = (code, reason)
        self.wakeup.set()

    async def run(self) -> None:
        ws = self.ws
        try:
            while True:
                await self.wakeup.wait()
                self.wakeup.clear()
                while self.items:
                    item = self.items.popleft()
                    if item is _PROGRESS:
                        item, self.progress = self.progress, None
                    assert isinstance(item, bytes)
                    self.sending = True
                    await ws.send(item)
                    self.sending = False
                if self.closing is not None:
                    await ws.close(*self.closing)
                    return
        except ConnectionClosed:
            return


class _Connection(ServerConnection):
    """A websocket connection that hands each whole message to the hub as it arrives.

    websockets' own path queues a message and wakes the handler's task to read it: a
    future, two coroutines and a loop callback per message, which at thousands of moves a
    second cost more CPU than the hub itself, and a waiting future per idle connection that
    lives just long enough (about a second at one move a second) to be copied through the
    collector's middle generation, whose passes were the server's p99 (docs/performance.md).
    Here the protocol callback assembles the message and calls ``deliver`` directly; the
    handler only waits for the close.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Takes each message once the handler is ready (``attach``).
        self.deliver: Callable[[bytes | str], None] | None = None
        #: Data frames that arrived before ``attach`` (with the handshake, say): kept as
        #: they are until the connection is open and can answer or close.
        self.early: list[Frame] = []
        #: A fragmented message being put together, and whether it is text.
        self.fragments: list[bytes] | None = None
        self.fragmented_text = False
        #: Nothing more is read from this client (``stop``).
        self.stopped = False
        #: When a frame of any kind last came in, and when the last unanswered ping went.
        self.heard = self.loop.time()
        self.pinged: float | None = None
        #: Done once the closing handshake has begun (either side, or a protocol error):
        #: the handler then returns, and websockets' close waits ``close_timeout`` at most
        #: for the peer before dropping the socket. Waiting for the socket to be gone
        #: instead would keep a peer that never answers the close for good.
        self.ending: asyncio.Future[None] = self.loop.create_future()
        #: Called for each ping or pong from the client (``attach``): the flood bucket.
        self.on_control: Callable[[], None] | None = None
        #: Unsent bytes beyond which the client is closed as too slow (``send_data``).
        self.write_buffer_limit = WRITE_BUFFER_LIMIT
        self.overflowed = False

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._note_ending()

    def eof_received(self) -> None:
        super().eof_received()
        self._note_ending()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # leaves the protocol CLOSED
        self._note_ending()

    def send_data(self) -> None:
        """Write what the protocol has to send; close a client whose unsent bytes pass
        ``write_buffer_limit`` (it is not reading), as an outbox that overflows is."""
        super().send_data()
        if (
            not self.overflowed
            and self.protocol.state is State.OPEN  # not a plain HTTP answer (a page)
            and self.transport.get_write_buffer_size() > self.write_buffer_limit
        ):
            self.overflowed = True
            self.logger.warning("a client is not reading (write buffer full); closing it")
            # Nothing more is read, so nothing more is answered: the buffer stops growing;
            # websockets' close timeout then drops the socket.
            self._fail(CLOSE_TOO_SLOW, "too slow: not reading")

    def _note_ending(self) -> None:
        if self.protocol.state in (State.CLOSING, State.CLOSED) and not self.ending.done():
            self.ending.set_result(None)

    def check_alive(self, now: float, interval: float, timeout: float) -> None:
        """Ping a client that has been silent for ``interval``; close one that stayed
        silent ``timeout`` after its ping.

        Why not websockets' own keepalive: it runs a task per connection and pings every
        connection every interval, active or not; 2,000 clients that connected together
        then send 2,000 pings in a burst every 20 s, which held the event loop for over
        100 ms (docs/performance.md). Here one sweep (``RaceServer._keepalive``) pings only
        the silent ones, and a client that moves never needs a ping at all.
        """
        if self.protocol.state is not State.OPEN:
            return
        if self.pinged is not None:
            if self.heard >= self.pinged:
                self.pinged = None
            elif now - self.pinged >= timeout:
                self._fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                return
        if self.pinged is None and now - self.heard >= interval:
            self.pinged = now
            self.protocol.send_ping(b"")
            self.send_data()

    def attach(
        self, deliver: Callable[[bytes | str], None], control: Callable[[], None] | None = None
    ) -> None:
        """From now on, messages go to ``deliver``, those already here first, and each ping
        or pong is reported to ``control``."""
        early, self.early = self.early, []
        self.deliver = deliver
        self.on_control = control
        for frame in early:
            self.process_event(frame)

    def process_event(self, event: Event) -> None:
        if isinstance(event, Frame):
            self.heard = self.loop.time()
            if (
                event.opcode in (Opcode.PING, Opcode.PONG)
                and self.on_control is not None
                and not self.stopped
            ):
                self.on_control()
        if (
            self.request is None  # the handshake
            or not isinstance(event, Frame)
            or event.opcode not in (Opcode.BINARY, Opcode.TEXT, Opcode.CONT)
        ):
            super().process_event(event)
            return
        if self.stopped:
            return
        if self.deliver is None:
            self.early.append(event)
            return
        # The protocol layer has checked the order of fragments and the whole message's
        # size against max_size; what is left is to put fragments together.
        if event.opcode is Opcode.CONT:
            assert self.fragments is not None
            self.fragments.append(bytes(event.data))
            if len(self.fragments) > MAX_FRAGMENTS:
                self._fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                return
            if not event.fin:
                return
            data, text = b"".join(self.fragments), self.fragmented_text
            self.fragments = None
        elif not event.fin:
            self.fragments = [bytes(event.data)]
            self.fragmented_text = event.opcode is Opcode.TEXT
            return
        else:
            data = event.data if type(event.data) is bytes else bytes(event.data)
            text = event.opcode is Opcode.TEXT
        if not text:
            self.deliver(data)
            return
        try:
            message = data.decode()
        except UnicodeDecodeError:
            self._fail(CloseCode.INVALID_DATA, "a text frame that is not UTF-8")
            return
        self.deliver(message)

    def stop(self) -> None:
        """Read nothing more from this client (it is being closed)."""
        self.stopped = True
        self.early = []
        self.fragments = None

    def fail_now(self, code: int, reason: str) -> None:
        """Close at once and read nothing more: websockets stops parsing what arrives
        (so no more pongs), and drops the socket if the close is not answered in time."""
        self._fail(code, reason)

    def _fail(self, code: int, reason: str) -> None:
        """Close at once, as websockets does on a protocol error."""
        self.stop()
        if self.protocol.state is State.OPEN:
            self.protocol.fail(code, reason)
            self.send_data()
        self._note_ending()


def _asked(ws: ServerConnection) -> str:
    """The node a client's URL asks for (``?node=ID``: a route it followed, docs/protocol.md
    4.25), or "". Only a hint: a node serves whoever reaches it."""
    if ws.request is None:
        return ""
    query = urlsplit(ws.request.path).query
    if "node=" not in query:
        return ""
    asked = parse_qs(query).get("node", [""])[-1]
    return asked if len(asked) <= 64 and NODE_ID_CHARS.issuperset(asked) else ""


class RaceServer:
    """Runs a ``Hub`` behind a websocket server and carries out its effects."""

    def __init__(
        self,
        hub: Hub,
        store: SqlStore,
        writer: ResultWriter,
        boards: Leaderboards,
        journal: JournalWriter | None = None,
    ) -> None:
        self.hub = hub
        self.store = store
        self.writer = writer
        self.boards = boards
        self.journal = journal
        #: Replays and post-mortems of stored runs (``server.replays``).
        self.replays = Replays(store, boards, budget_nodes=hub.config.hint_budget_nodes)
        self.metrics = Metrics(
            Live(
                connections=lambda: self.hub.connections,
                rooms=lambda: self.hub.rooms,
                races_running=lambda: self.hub.races_running,
                results_pending=lambda: self.writer.pending,
                db_write_failures=lambda: self.writer.failures,
                db_write_retries=lambda: self.writer.retries,
                hints_in_progress=lambda: self.hints_in_progress,
            ),
            node=hub.node,
        )
        #: Set on SIGTERM: clients are told the server is restarting (1012), not leaving.
        self.closing_for_restart = False
        #: Answers plain HTTP requests on the websocket port (``server.http``); None: only
        #: websocket upgrades are served.
        self.http: Callable[[ServerConnection, Request], Awaitable[Response | None]] | None = None
        self._ids = itertools.count(1)
        self._outboxes: dict[int, Outbox] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._sweep: asyncio.TimerHandle | None = None
        #: Keepalive (``_Connection.check_alive``); tests shorten them.
        self.ping_interval = PING_INTERVAL
        self.ping_timeout = PING_TIMEOUT
        self._tasks: set[asyncio.Task[None]] = set()
        #: The solver's process for hints: started when first needed, stopped by ``close``.
        #: A process, not a thread: the solver (in Python or C) holds the GIL while it runs.
        self._hint_pool: ProcessPoolExecutor | None = None
        self._hint_tasks: set[asyncio.Task[None]] = set()
        self._hints_closed = False
        self.server: Server | None = None
        #: Proxies whose ``X-Forwarded-For`` names the client's address (``limits``).
        self.trusted_proxies: tuple[Network, ...] = ()
        #: Unsent bytes per client before it is closed as too slow; tests lower it.
        self.write_buffer_limit = WRITE_BUFFER_LIMIT
        #: Board and history reads (``_query``): at most ``QUERY_CONCURRENCY`` at once.
        self._reads = asyncio.Semaphore(QUERY_CONCURRENCY)
        self._reads_waiting = 0
        self.query_queue = QUERY_QUEUE
        #: A node of a cluster: relays guests' frames and the hub's cluster effects
        #: (``server.cluster``, docs/cluster.md). None: a server alone.
        self.cluster: Cluster | None = None
        #: When others usually play (``pool.usual_window``), and when it was read (issue 29).
        self._usual: tuple[float, str | None] | None = None

    async def start(self, host: str, port: int, *, ssl: SSLContext | None = None) -> Server:
        """Listen on ``host:port`` (port 0 picks a free one); with ``ssl``, wss:// only."""
        self.server = await serve(
            self.handler,
            host,
            port,
            ssl=ssl,
            max_size=MAX_FRAME,
            compression=None,
            process_request=self._process_request,
            create_connection=_Connection,
            ping_interval=None,  # one sweep for every client instead (_Connection.check_alive)
            ping_timeout=None,
            close_timeout=5,
        )
        self._sweep = asyncio.get_running_loop().call_later(self._sweep_period(), self._keepalive)
        return self.server

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """Plain HTTP (no websocket upgrade) goes to ``self.http``; upgrades go on."""
        if request.headers.get("Upgrade", "").lower() == "websocket" or self.http is None:
            return None
        return await self.http(connection, request)

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = next(iter(self.server.sockets)).getsockname()[1]
        return port

    @property
    def hints_in_progress(self) -> int:
        """Hints being worked out in the solver's process now (for ``/metrics``)."""
        return len(self._hint_tasks)

    async def close(self, code: int = 1001, reason: str = "server shutting down") -> None:
        """Stop listening, close every client with ``code`` (1001 going away, or 1012 for a
        restart), then finish storage work: nothing accepted is left unwritten."""
        if self.server is not None:
            self.server.close(close_connections=False)
            for box in list(self._outboxes.values()):
                box.close(code, reason)
            await self.server.wait_closed()
        self._close_hints()
        self.replays.close()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._timer is not None:
            self._timer.cancel()
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None

    def _keepalive(self) -> None:
        """Once a second: every client's keepalive check (``_Connection.check_alive``)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for box in list(self._outboxes.values()):
            ws = box.ws
            if isinstance(ws, _Connection):
                ws.check_alive(now, self.ping_interval, self.ping_timeout)
        self._sweep = loop.call_later(self._sweep_period(), self._keepalive)

    def _sweep_period(self) -> float:
        return min(1.0, self.ping_interval / 4, self.ping_timeout / 4)

    async def handler(self, ws: ServerConnection) -> None:
        loop = asyncio.get_running_loop()
        conn = next(self._ids)
        outbox = Outbox(ws)
        self._outboxes[conn] = outbox
        writer = asyncio.create_task(outbox.run())
        log.debug("conn %d open from %s", conn, ws.remote_address)
        self._apply(
            self.hub.connect(conn, loop.time(), address=self._address(ws), asked=_asked(ws))
        )
        self.metrics.connections_opened.inc()
        assert isinstance(ws, _Connection)
        ws.write_buffer_limit = self.write_buffer_limit

        def deliver(frame: bytes | str) -> None:
            arrived = loop.time()
            try:
                effects = self.hub.receive(conn, frame, arrived)
                self._apply(effects)
            except Exception:  # a bug, not bad input: this client only, as websockets would
                log.exception("conn %d: the server failed on a message", conn)
                ws.stop()
                outbox.discard()
                outbox.close(CloseCode.INTERNAL_ERROR, "internal error")
                return
            self.count_moves(effects, conn, arrived, loop.time())

        def control() -> None:
            self._apply(self.hub.control(conn, loop.time()))

        try:
            ws.attach(deliver, control)
            await ws.ending
        finally:
            self._outboxes.pop(conn, None)
            outbox.discard()
            self._apply(self.hub.disconnect(conn, loop.time()))
            writer.cancel()
            log.debug("conn %d closed (%s)", conn, ws.close_code)

    def _address(self, ws: ServerConnection) -> str:
        """The client's address: the peer's, or the one a trusted proxy forwards."""
        peer = ws.remote_address
        address = str(peer[0]) if peer else ""
        if not self.trusted_proxies or ws.request is None:
            return address
        forwarded = ws.request.headers.get_all("X-Forwarded-For")
        return client_address(address, forwarded, self.trusted_proxies)

    def count_moves(self, effects: list[Effect], conn: int, arrived: float, done: float) -> None:
        """Count the answer to a move (of ``conn``) in ``effects``, and how long it took.
        A guest's move (a cluster's relay) is counted by its room's owner, which answers
        it, so the node's figures hold every move its races accepted."""
        for e in effects:
            if isinstance(e, Send) and e.conn == conn:
                kind = e.message.TYPE
                if kind in ("accepted", "undone"):
                    self.metrics.moves_accepted.inc()
                elif kind == "refused":
                    self.metrics.moves_refused.inc()
                else:
                    continue
                if conn < 0:  # a guest's: the frame and its answer crossed the relay
                    self.metrics.moves_relayed.inc()
                self.metrics.move_ack.observe(done - arrived)
                return

    def apply(self, effects: Iterable[Effect]) -> None:
        """Carry out effects that did not come from a frame (a restored race's)."""
        self._apply(effects)

    def _apply(self, effects: Iterable[Effect]) -> None:
        encoded: dict[int, bytes] = {}
        for effect in effects:
            if isinstance(effect, Send):
                box = self._outboxes.get(effect.conn)
                key = id(effect.message)
                if box is None:
                    if effect.conn < 0 and self.cluster is not None:  # a guest: relayed
                        data = encoded.get(key)
                        if data is None:
                            data = encoded[key] = encode(effect.message)
                        progress = isinstance(effect.message, Progress)
                        if isinstance(effect.message, Route):
                            self.metrics.routes_sent.inc()
                        self.cluster.to_guest(effect.conn, key, data, progress=progress)
                    continue
                data = encoded.get(key)
                if data is None:
                    data = encoded[key] = encode(effect.message)
                if not box.put(data, is_progress=isinstance(effect.message, Progress)):
                    log.warning("conn %d is not reading; closing it", effect.conn)
                    box.discard()
                    box.close(CLOSE_TOO_SLOW, "too slow: not reading")
            elif isinstance(effect, Close):
                box = self._outboxes.get(effect.conn)
                if box is None:
                    if effect.conn < 0 and self.cluster is not None:
                        self.cluster.close_guest(effect.conn, effect.code, effect.reason)
                    continue
                if effect.at_once and isinstance(box.ws, _Connection):
                    box.discard()
                    box.closing = (effect.code, effect.reason)  # the writer only ends
                    box.wakeup.set()
                    box.ws.fail_now(effect.code, effect.reason)
                else:
                    box.close(effect.code, effect.reason)
            elif isinstance(effect, Persist):
                self._spawn(self._persist(effect))
            elif isinstance(effect, Authenticate):
                self._spawn(self._authenticate(effect))
            elif isinstance(effect, BeginDaily):
                self._spawn(self._begin_daily(effect))
            elif isinstance(effect, Query):
                self._spawn(self._query(effect))
            elif isinstance(effect, Forget):
                self._spawn(self._forget(effect))
            elif isinstance(effect, Rate):
                self._spawn(self._rate(effect))
            elif isinstance(effect, Solve):
                self._spawn_hint(self._solve(effect))
            elif isinstance(effect, Examine):
                self._spawn(self._examine(effect))
            elif isinstance(effect, Journal):
                if isinstance(effect.entry, LiveRace) and effect.entry.hints:
                    self._warm_hints()  # a race with hints begins: start the solver now
                if self.journal is not None:
                    self.journal.add(effect.entry)
            elif self.cluster is not None:  # Locate, Handover, Forward, Detach, Release,
                # PasswordFailed
                self.cluster.effect(effect)
        if self.cluster is not None:
            self.cluster.flush_guests()
        self._schedule()

    def deliver(self, conn: int, data: bytes, *, progress: bool) -> None:
        """A frame the owner of this connection's room sent it (a cluster's relay)."""
        box = self._outboxes.get(conn)
        if box is not None and not box.put(data, is_progress=progress):
            log.warning("conn %d is not reading; closing it", conn)
            box.discard()
            box.close(CLOSE_TOO_SLOW, "too slow: not reading")

    def keep(self, task: asyncio.Task[None]) -> None:
        """Hold on to a task until it is done (``close`` waits for it)."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def _persist(self, effect: Persist) -> None:
        """Results are announced only once committed; the writer retries through outages."""
        record = effect.record
        try:
            ratings = await self.writer.write(record)
        except Exception:  # refused for good: logged and set aside by the writer
            return
        self._apply(self.hub.committed(record.race_id, self._now(), ratings))

    async def _authenticate(self, effect: Authenticate) -> None:
        hub = self.hub
        new = False
        away: tuple[str, str] | None = None
        try:
            if effect.name is not None:
                identity = await self.store.register_player(name=effect.name, now=time.time())
                new = True
            else:
                assert effect.token is not None
                found = await self.store.find_player(token=effect.token)
                if found is None:
                    self._apply(
                        hub.hello_refused(
                            effect.conn,
                            code="bad_token",
                            text="unknown token: say hello with your name to register",
                            now=self._now(),
                        )
                    )
                    return
                identity = found
            standing = (
                await self.store.standings([identity.player_id], today=utc_date(self.boards.wall()))
            )[identity.player_id]
            if self.cluster is not None:
                away = await self.cluster.locate_player(
                    identity.player_id, effect.conn, resume=effect.token is not None
                )
        except RelayDown:
            self._apply(
                hub.hello_refused(
                    effect.conn,
                    code="unavailable",
                    text="the cluster's directory is unreachable, so your room cannot be"
                    " found just now; try again shortly",
                    now=self._now(),
                )
            )
            return
        except NameTakenError:
            self._apply(
                hub.hello_refused(
                    effect.conn,
                    code="name_taken",
                    text=f"the name {effect.name!r} (or one that looks like it) is taken:"
                    " choose another, or, if it is yours, open your name's link from a"
                    " device that has it",
                    now=self._now(),
                )
            )
            return
        except Exception as exc:
            log.warning("hello: database unavailable (%s)", type(exc).__name__)
            self._apply(hub.hello_refused(effect.conn, **_UNAVAILABLE, now=self._now()))
            return
        self._apply(
            hub.authenticated(
                effect.conn,
                player_id=identity.player_id,
                name=identity.name,
                token=identity.token,
                now=self._now(),
                registered=identity.created,
                new=new,
                away=away[0] if away is not None else None,
                away_room=away[1] if away is not None else None,
                standing=standing,
            )
        )

    async def _forget(self, effect: Forget) -> None:
        try:
            await self.store.forget_player(player_id=effect.player_id)
        except Exception as exc:  # the name stays taken; nothing else depends on it
            log.warning("could not forget player %d (%s)", effect.player_id, type(exc).__name__)

    async def _begin_daily(self, effect: BeginDaily) -> None:
        # The day's deal first (chosen once a day, usually ahead of time: ``server.daily``),
        # then the attempt's number, so an attempt is never used up on a deal not dealt.
        try:
            if effect.archive:
                # A past day from the archive: the deal stored for it, never a new choice
                # (a day the server has no deal for was never a daily).
                stored = await self.boards.dailies.stored(effect.date)
                if stored is None:
                    self._apply(
                        self.hub.daily_refused(
                            effect.player_id,
                            code="not_archived",
                            text=f"this server had no daily deal on {effect.date}",
                            now=self._now(),
                        )
                    )
                    return
                choice = stored
            else:
                choice = await self.boards.dailies.get(effect.date)
            attempt = await self.store.begin_daily(
                player_id=effect.player_id, date=effect.date, now=time.time()
            )
        except NoWinnableDealError as exc:
            log.error("daily: %s", exc)
            self._apply(
                self.hub.daily_refused(
                    effect.player_id,
                    code="unavailable",
                    text="no daily deal today: the solver proved no candidate winnable",
                    now=self._now(),
                )
            )
            return
        except Exception as exc:
            log.warning("daily: database unavailable (%s)", type(exc).__name__)
            self._apply(self.hub.daily_refused(effect.player_id, **_UNAVAILABLE, now=self._now()))
            return
        self._apply(
            self.hub.daily_begun(
                effect.player_id,
                date=effect.date,
                attempt=attempt,
                deal=choice.code,
                par=choice.par,
                salt=choice.salt,
                archive=effect.archive,
                now=self._now(),
            )
        )

    # -- hints: the solver in a worker process ------------------------------------------------

    def _hint_executor(self) -> ProcessPoolExecutor | None:
        """The solver's process pool (one worker), started on first use; None once closed."""
        if self._hints_closed:
            return None
        if self._hint_pool is None:
            with real_stderr():
                self._hint_pool = solver_pool(1)
        return self._hint_pool

    def _warm_hints(self) -> None:
        """Start the worker and load the solver in it, so the first hint is not slow."""
        try:
            pool = self._hint_executor()
            if pool is not None:
                with real_stderr():
                    warm = pool.submit(solve, _WARM_UP, budget_nodes=1)
                warm.add_done_callback(lambda f: f.cancelled() or f.exception())
        except Exception as exc:  # the first hint will try again, and report it
            log.warning("hint: cannot start the solver's process (%s)", exc)

    def _spawn_hint(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._hint_tasks.add(task)
        task.add_done_callback(self._hint_tasks.discard)

    async def _solve(self, effect: Solve) -> None:
        """Work a hint out off the event loop, then hand the verdict to the hub."""
        pool = None
        started = time.perf_counter()
        try:
            pool = self._hint_executor()
            if pool is None:
                raise RuntimeError("the server is closing")
            job = functools.partial(solve, effect.position, budget_nodes=effect.budget_nodes)
            with real_stderr():  # the worker process starts here, on first use
                answer = asyncio.get_running_loop().run_in_executor(pool, job)
            solution: Solution = await answer
        except Exception as exc:  # the worker died (BrokenProcessPool), or we are closing
            log.warning("hint: the solver failed (%s)", type(exc).__name__)
            self.metrics.hint_failures.inc()
            if pool is not None and pool is self._hint_pool:
                self._hint_pool = None  # a broken pool stays broken: the next hint starts anew
                pool.shutdown(wait=False, cancel_futures=True)
            self._apply(self.hub.hint_failed(effect.player_id, effect.request, now=self._now()))
            return
        effects = self.hub.hint_ready(
            effect.player_id,
            effect.request,
            verdict=solution.verdict,
            moves=solution.best,  # the winning line, or an unknown's best guess
            now=self._now(),
        )
        # Counted (verdict and time) only when the answer goes out, which marks the run as
        # hinted: a player who asks and drops must not read the verdict on the public
        # /metrics while their run is not marked.
        sent = [
            e.message for e in effects if isinstance(e, Send) and isinstance(e.message, HintAnswer)
        ]
        if sent:
            verdict = "best" if sent[0].verdict == "best" else solution.verdict
            self.metrics.hint_solved(verdict, time.perf_counter() - started)
        self._apply(effects)

    def _close_hints(self) -> None:
        """No more hints: forget those on their way and stop the worker (a solve already
        running ends within its node budget)."""
        self._hints_closed = True
        for task in list(self._hint_tasks):
            task.cancel()
        if self._hint_pool is not None:
            self._hint_pool.shutdown(wait=False, cancel_futures=True)
            self._hint_pool = None

    async def _query(self, effect: Query) -> None:
        """Answer a board or history request, ``QUERY_CONCURRENCY`` at most at once.

        Reads wait for their turn here, not in the database's pool: a flood of them would
        otherwise take every pooled connection, and hellos and results would wait behind
        them (or fail on the pool's timeout). Past ``query_queue`` waiting, a read is
        refused at once (``unavailable``) rather than kept, with its memory, in a queue.
        """
        reply: Message
        if self._reads.locked() and self._reads_waiting >= self.query_queue:
            reply = _BUSY
        else:
            self._reads_waiting += 1
            try:
                await self._reads.acquire()
            finally:
                self._reads_waiting -= 1
            try:
                if isinstance(effect.message, Ghost):
                    found = await self.replays.ghost(effect.message, effect.player_id)
                    self._apply(self.hub.ghost_answered(effect.conn, found, self._now()))
                    return
                if isinstance(effect.message, Replay):
                    reply = await self.replays.replay(effect.message)
                else:
                    reply = await self.boards.answer(effect.message, effect.player_id)
            except Exception as exc:
                log.warning("query: database unavailable (%s)", type(exc).__name__)
                reply = Error(**_UNAVAILABLE)
            finally:
                self._reads.release()
        self._apply(self.hub.query_answered(effect.conn, reply, self._now()))

    async def _rate(self, effect: Rate) -> None:
        """A player enters the quick-race pool (issue 29): their rating, and when others
        usually play (read again at most every ``USUAL_S``)."""
        rating: float | None
        try:
            found = await self.store.current_ratings([effect.player_id])
            rating = found.get(effect.player_id, (DEFAULT_RATING, 0.0))[0]
            now = time.time()
            if self._usual is None or self._usual[0] + USUAL_S <= now:
                self._usual = (now, usual_window(await self.store.race_hours(now=now)))
        except Exception as exc:
            log.warning("quick: database unavailable (%s)", type(exc).__name__)
            rating = None
        usual = self._usual[1] if self._usual is not None else None
        hub = self.hub
        self._apply(hub.quick_rated(effect.player_id, rating=rating, usual=usual, now=self._now()))

    async def _examine(self, effect: Examine) -> None:
        """A post-mortem (``server.replays``: storage, then the solver's process)."""
        m = effect.message
        reply = await self.replays.postmortem(m.race, m.player)
        self._apply(self.hub.postmortem_answered(effect.conn, reply, self._now()))

    def _schedule(self) -> None:
        deadline = self.hub.next_deadline()
        if self._timer is not None:
            if deadline is not None and self._timer.when() == deadline:
                return
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            self._timer = asyncio.get_running_loop().call_at(deadline, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self._apply(self.hub.tick(asyncio.get_running_loop().time()))
