"""The only module that touches websockets: frames in, effects out.

Each connection gets a reader (this handler) and a writer task fed by an ``Outbox``. The
hub's effects are applied without awaiting any socket, so a slow or stalled client only
ever fills its own outbox: progress updates waiting in it are coalesced to the latest, and
an outbox that still overflows closes that client with ``CLOSE_TOO_SLOW``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from ssl import SSLContext
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol.messages import CLOSE_TOO_SLOW, MAX_FRAME, Error, Message, Progress, encode

from .effects import Authenticate, BeginDaily, Close, Effect, Journal, Persist, Query, Send
from .leaderboard import Leaderboards
from .metrics import Metrics
from .rooms import Hub
from .storage.journal import JournalWriter
from .storage.spool import ResultWriter
from .storage.sql import NameTakenError, SqlStore

__all__ = ["RaceServer", "OUTBOX_LIMIT"]

log = logging.getLogger("yukon.server")

_UNAVAILABLE: dict[str, Any] = {
    "code": "unavailable",
    "text": "the server cannot reach its database just now; try again shortly",
}

#: Frames a client may leave unread before it is closed as too slow.
OUTBOX_LIMIT = 256

_PROGRESS = object()  # marks where the (coalesced) latest progress goes in an outbox


class Outbox:
    """Frames waiting for one client, written by one task, never blocking anyone else."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.items: deque[bytes | object] = deque()
        self.progress: bytes | None = None
        self.wakeup = asyncio.Event()
        self.closing: tuple[int, str] | None = None

    def put(self, data: bytes, *, is_progress: bool) -> bool:
        """Queue a frame; False if the client has fallen too far behind."""
        if self.closing is not None:
            return True
        if is_progress:
            # Only the latest progress matters; it goes after everything queued before it.
            if self.progress is not None:
                self.items.remove(_PROGRESS)
            self.items.append(_PROGRESS)
            self.progress = data
        else:
            self.items.append(data)
        self.wakeup.set()
        return len(self.items) <= OUTBOX_LIMIT

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
                    await ws.send(item)
                if self.closing is not None:
                    await ws.close(*self.closing)
                    return
        except ConnectionClosed:
            return


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
        self.metrics = Metrics()
        #: Set on SIGTERM: clients are told the server is restarting (1012), not leaving.
        self.closing_for_restart = False
        #: Answers plain HTTP requests on the websocket port (``server.http``); None: only
        #: websocket upgrades are served.
        self.http: Callable[[ServerConnection, Request], Awaitable[Response | None]] | None = None
        self._ids = itertools.count(1)
        self._outboxes: dict[int, Outbox] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.server: Server | None = None

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
            max_queue=16,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=5,
        )
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

    async def close(self, code: int = 1001, reason: str = "server shutting down") -> None:
        """Stop listening, close every client with ``code`` (1001 going away, or 1012 for a
        restart), then finish storage work: nothing accepted is left unwritten."""
        if self.server is not None:
            self.server.close(close_connections=False)
            for box in list(self._outboxes.values()):
                box.close(code, reason)
            await self.server.wait_closed()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._timer is not None:
            self._timer.cancel()

    async def handler(self, ws: ServerConnection) -> None:
        loop = asyncio.get_running_loop()
        conn = next(self._ids)
        outbox = Outbox(ws)
        self._outboxes[conn] = outbox
        writer = asyncio.create_task(outbox.run())
        log.debug("conn %d open from %s", conn, ws.remote_address)
        peer = ws.remote_address
        self._apply(self.hub.connect(conn, loop.time(), address=str(peer[0]) if peer else ""))
        self.metrics.connections_opened += 1
        try:
            async for frame in ws:
                arrived = loop.time()
                effects = self.hub.receive(conn, frame, arrived)
                self._apply(effects)
                self._count_moves(effects, conn, arrived, loop.time())
        except ConnectionClosed:
            pass
        finally:
            self._outboxes.pop(conn, None)
            self._apply(self.hub.disconnect(conn, loop.time()))
            writer.cancel()
            log.debug("conn %d closed (%s)", conn, ws.close_code)

    def _count_moves(self, effects: list[Effect], conn: int, arrived: float, done: float) -> None:
        for e in effects:
            if isinstance(e, Send) and e.conn == conn:
                kind = e.message.TYPE
                if kind in ("accepted", "undone"):
                    self.metrics.moves_accepted += 1
                elif kind == "refused":
                    self.metrics.moves_refused += 1
                else:
                    continue
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
                if box is None:
                    continue
                key = id(effect.message)
                data = encoded.get(key)
                if data is None:
                    data = encoded[key] = encode(effect.message)
                if not box.put(data, is_progress=isinstance(effect.message, Progress)):
                    log.warning("conn %d is not reading; closing it", effect.conn)
                    box.items.clear()
                    box.close(CLOSE_TOO_SLOW, "too slow: not reading")
            elif isinstance(effect, Close):
                box = self._outboxes.get(effect.conn)
                if box is not None:
                    box.close(effect.code, effect.reason)
            elif isinstance(effect, Persist):
                self._spawn(self._persist(effect))
            elif isinstance(effect, Authenticate):
                self._spawn(self._authenticate(effect))
            elif isinstance(effect, BeginDaily):
                self._spawn(self._begin_daily(effect))
            elif isinstance(effect, Query):
                self._spawn(self._query(effect))
            elif isinstance(effect, Journal) and self.journal is not None:
                self.journal.add(effect.entry)
        self._schedule()

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
            await self.writer.write(record)
        except Exception:  # refused for good: logged and set aside by the writer
            return
        self._apply(self.hub.committed(record.race_id, self._now()))

    async def _authenticate(self, effect: Authenticate) -> None:
        hub = self.hub
        try:
            if effect.name is not None:
                identity = await self.store.register_player(name=effect.name, now=time.time())
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
        except NameTakenError:
            self._apply(
                hub.hello_refused(
                    effect.conn,
                    code="name_taken",
                    text=f"the name {effect.name!r} is taken; choose another,"
                    " or say hello with your token",
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
            )
        )

    async def _begin_daily(self, effect: BeginDaily) -> None:
        try:
            attempt = await self.store.begin_daily(
                player_id=effect.player_id, date=effect.date, now=time.time()
            )
        except Exception as exc:
            log.warning("daily: database unavailable (%s)", type(exc).__name__)
            self._apply(self.hub.daily_refused(effect.player_id, **_UNAVAILABLE, now=self._now()))
            return
        self._apply(
            self.hub.daily_begun(
                effect.player_id, date=effect.date, attempt=attempt, now=self._now()
            )
        )

    async def _query(self, effect: Query) -> None:
        reply: Message
        try:
            reply = await self.boards.answer(effect.message, effect.player_id)
        except Exception as exc:
            log.warning("query: database unavailable (%s)", type(exc).__name__)
            reply = Error(**_UNAVAILABLE)
        self._apply([Send(effect.conn, reply)])

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
