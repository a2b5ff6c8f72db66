"""The only module that touches websockets and sockets: bytes in, messages out.

A connection begins as plain HTTP/1.1 (``plainhttp``, h11); a request for a websocket
hands it to websockets' protocol from there on.

An asyncio ``Protocol`` of our own (``Peer``) over websockets' public Sans-I/O layer
(``websockets.server.ServerProtocol``: ``receive_data``, ``events_received``,
``data_to_send``, ``send_binary``, ``send_close``, ``accept``/``send_response``,
``close_expected``), the shape websockets' own guide recommends for integrating it
("Integrate the Sans-I/O layer"). Nothing here subclasses websockets' asyncio internals,
so a minor release of websockets cannot change what this code relies on.

Why not websockets' asyncio server: it runs a handler task per connection, a writer
future per send and an assembler per connection; at thousands of players those cost more
CPU and memory than the rooms themselves (docs/performance.md). Here:

- a whole message goes straight from the read callback to ``Handler.message`` (no queue,
  no task wake-up);
- frames for a client are put into its protocol at once and written with one
  ``transport.write`` per connection when the event that made them has been handled
  (``Listener.hold``/``release``: a message read, a timer), else at the end of the loop
  tick (``Listener._flush``): the answer to a move and the progress of every member of
  its room leave together, without a loop iteration of their own;
- a client whose socket is not keeping up (asyncio's flow control: ``pause_writing``)
  gets its frames queued in an outbox, where a newer ``progress`` replaces one still
  waiting; a queue past ``OUTBOX_LIMIT`` frames, or unsent bytes past
  ``WRITE_BUFFER_LIMIT``, closes that client as too slow (4002);
- one sweep a second (``Listener._sweep``) pings silent clients, closes those that stay
  silent (1011), and drops sockets whose closing handshake or opening handshake did not
  finish in time: no timer or task per connection.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from ssl import SSLContext
from typing import Protocol, cast

from websockets.datastructures import Headers
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import SERVER, Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from protocol.messages import CLOSE_TOO_SLOW, MAX_FRAME

from .frames import binary_frame, unmask
from .plainhttp import PlainHttp, PlainRequest

__all__ = [
    "binary_frame",
    "Handler",
    "Listener",
    "Peer",
    "OUTBOX_LIMIT",
    "WRITE_BUFFER_LIMIT",
    "PING_INTERVAL",
    "PING_TIMEOUT",
    "CLOSE_TIMEOUT",
    "OPEN_TIMEOUT",
]

log = logging.getLogger("yukon.server")

#: Frames a client may leave unread before it is closed as too slow.
OUTBOX_LIMIT = 256

#: Bytes the socket may hold unsent for one client before it is closed as too slow. In
#: normal use it holds at most ``WRITE_HIGH`` and one tick's frames: past that, frames wait
#: in the outbox. What else fills it is written by the protocol on its own, above all a
#: pong for every ping, which a client that sends pings and never reads would pile up
#: without bound (docs/limits.md).
WRITE_BUFFER_LIMIT = 256 * 1024

#: asyncio's flow control: past this many unsent bytes a client's frames wait in its
#: outbox (where progress is coalesced); below a quarter of it they flow again.
WRITE_HIGH = 32 * 1024

#: The longest start of a frame kept here until the rest comes (``Peer._read``): a longer
#: frame in pieces goes to the protocol, whose buffer does not copy what it holds again
#: on every read.
UNREAD_LIMIT = 4096

#: Fragments one message may come in (websockets' own default limit).
MAX_FRAGMENTS = 4096

#: A client the server has heard nothing from for this long is pinged, and closed with
#: 1011 if it still says nothing for as long again (docs/protocol.md, "keepalive").
PING_INTERVAL = 20.0
PING_TIMEOUT = 20.0

#: Seconds a peer has to answer our close (or to close its socket after ours) before the
#: socket is dropped; and to finish its opening handshake (or read an HTTP answer).
CLOSE_TIMEOUT = 5.0
OPEN_TIMEOUT = 10.0

_PROGRESS = object()  # marks where the (coalesced) latest progress goes in an outbox


def _error_response(status: HTTPStatus, text: str) -> Response:
    """A short plain-text answer of the transport's own (the handler gave none, or failed)."""
    body = (text + "\n").encode()
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(body))),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


class Handler(Protocol):
    """What the transport tells the server (``server.runtime.executor.RaceServer``)."""

    def opened(self, peer: Peer) -> None:
        """A websocket is open (its request is ``peer.request``, only now); ``peer.conn``
        is set."""

    def message(self, peer: Peer, data: bytes | str) -> None:
        """One whole message from ``peer``."""

    def control(self, peer: Peer) -> None:
        """A ping or a pong from ``peer`` (the flood bucket counts them)."""

    def closed(self, peer: Peer) -> None:
        """An opened ``peer``'s socket is gone."""


#: Answers a plain HTTP request (no websocket upgrade) on the same port (``server.pages.http``).
HttpHandler = Callable[["Peer", Request], Awaitable[Response | None]]


class Peer(asyncio.Protocol):
    """One client's socket: the websocket protocol, its outbox and its keepalive.

    Slotted, and its outbox made only when the client falls behind: thousands of idle
    players each hold one (docs/performance.md, memory per idle player).
    """

    __slots__ = (
        "listener",
        "protocol",
        "transport",
        "conn",
        "request",
        "remote_address",
        "fragments",
        "fragmented_text",
        "stopped",
        "made",
        "heard",
        "pinged",
        "queue",
        "progress",
        "paused",
        "closing",
        "dirty",
        "out",
        "direct",
        "unread",
        "deadline",
        "write_buffer_limit",
        "overflowed",
        "http_task",
        "plain",
    )

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        loop = listener.loop
        self.protocol = ServerProtocol(max_size=MAX_FRAME)
        self.transport: asyncio.Transport | None = None
        #: The hub's id for this connection, set when the websocket opens.
        self.conn = 0
        self.request: Request | None = None
        #: The socket's address, as the kernel has it (``peername``).
        self.remote_address: tuple[str, int] | None = None
        #: A fragmented message being put together, and whether it is text.
        self.fragments: list[bytes] | None = None
        self.fragmented_text = False
        #: Nothing more is read from this client (``fail``).
        self.stopped = False
        #: When a frame of any kind last came in (or the socket opened), and when the last
        #: unanswered ping went.
        self.made = self.heard = loop.time()
        self.pinged: float | None = None
        #: Frames waiting while the socket does not keep up (asyncio's ``pause_writing``);
        #: ``_PROGRESS`` marks where the latest progress (``progress``) goes. None: empty.
        self.queue: deque[bytes | object] | None = None
        self.progress: bytes | None = None
        self.paused = False
        #: A close asked for after the frames still queued (code, reason).
        self.closing: tuple[int, str] | None = None
        #: The protocol holds bytes to write at the end of this tick (``Listener._flush``).
        self.dirty = False
        #: Bytes to write at the end of this tick, in order: frames framed here
        #: (``send_frame``) and what the protocol had written before them. None: nothing.
        self.out: list[bytes] | None = None
        #: Whole unfragmented data frames are read here (``_read``), everything else by
        #: the protocol; ``unread``: the start of a frame not yet whole.
        self.direct = False
        self.unread = b""
        #: When the socket is dropped if the peer has not closed it (``close_expected``).
        self.deadline: float | None = None
        #: Unsent bytes beyond which the client is closed as too slow; tests lower it.
        self.write_buffer_limit = listener.write_buffer_limit
        self.overflowed = False
        self.http_task: asyncio.Task[None] | None = None
        #: Plain HTTP/1.1 (h11) until a request asks for a websocket (``http_upgrade``);
        #: None from then on, and from the start when the listener answers no HTTP.
        self.plain: PlainHttp | None = None

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)
        transport.set_write_buffer_limits(high=WRITE_HIGH)
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple):
            self.remote_address = (str(peer[0]), int(peer[1]))
        listener = self.listener
        listener.peers[self] = None
        listener.ending.add(self)  # until its handshake is done
        if listener.http is not None:
            self.plain = PlainHttp(self, transport, self.made, listener.close_timeout)

    def data_received(self, data: bytes) -> None:
        listener = self.listener
        heard = self.heard
        listener.holding += 1
        try:
            if self.direct:
                self._read(data)
            elif self.plain is not None:
                self.plain.receive(data)
            else:
                self._feed(data)
            if self.heard != heard:  # the peers stay in the order they were last heard from
                peers = listener.peers
                if peers.pop(self, 0) is None:
                    peers[self] = None
            self._wrote()
        finally:
            listener.release()

    def eof_received(self) -> bool | None:
        plain = self.plain
        if plain is not None and not plain.done:
            # A client may send its last request and close its side at once: it still
            # reads the answer, and ``PlainHttp.end`` closes the socket after it.
            plain.receive(b"")
            return self.transport is None or self.transport.get_extra_info("sslcontext") is None
        if plain is None:  # else websockets never saw a byte: nothing to tell it
            self.protocol.receive_eof()
            self._wrote()
        return None  # plain TCP: asyncio closes the socket

    def connection_lost(self, exc: Exception | None) -> None:
        if self.plain is None:
            self.protocol.receive_eof()  # leaves the protocol CLOSED
            self.protocol.data_to_send()
        self.queue = self.progress = None
        self.out = None
        self.listener.lost(self)
        if self.http_task is not None:
            self.http_task.cancel()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._drain()

    # -- reading ------------------------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        """Bytes for the websocket protocol, from its opening request on."""
        opening = self.protocol.state is State.CONNECTING
        self._parse(data)
        if (
            opening
            and self.protocol.state is State.OPEN
            and not self.stopped
            and data.endswith(b"\r\n\r\n")
            and not self.protocol.extensions
        ):
            # The opening request ended with this read, so the protocol holds
            # no byte of a frame: frames can be read here from the next byte on.
            self.direct = True

    def _parse(self, data: bytes) -> None:
        """Hand ``data`` to the protocol and handle what it makes of it."""
        protocol = self.protocol
        protocol.receive_data(data)
        for event in protocol.events_received():
            if isinstance(event, Frame):
                self._frame(event)
            else:
                self._request(event)

    def _read(self, data: bytes) -> None:
        """Read whole, unfragmented, masked data frames straight from ``data``; hand the
        protocol every other frame (ping, pong, close), and, from the first frame that is
        not of those kinds (a fragment, a reserved bit or opcode, a frame past
        ``MAX_FRAME``), every byte from there on: it answers those as it would have.

        Why: a move is one small binary frame, and websockets' parser (a generator, a
        ``Frame``, a stream reader) cost about 6 us of the server's CPU per frame
        (docs/performance.md); this reads one in about 1 us. The protocol sees a valid
        stream all the same: the request, then the control frames, each whole and in
        order (RFC 6455 5.4 lets control frames come between messages).
        """
        if self.unread:
            data = self.unread + data
            self.unread = b""
        end = len(data)
        at = 0
        while at < end:
            if end - at < 2:
                self.unread = data[at:]  # the rest of this frame comes later
                return
            head1, head2 = data[at], data[at + 1]
            opcode = head1 & 0x0F
            if (
                not (head2 & 0x80)  # unmasked
                or (head1 & 0xF0) != 0x80  # a fragment, or a reserved bit
                or (opcode != 2 and opcode != 1 and opcode < 8)  # continuation, reserved
            ):
                break  # the protocol reads it, and answers as the RFC says
            n = head2 & 0x7F
            start = at + (6 if n < 126 else 8 if n == 126 else 14)  # the head, its mask
            if end < start:
                self.unread = data[at:]
                return
            if n == 126:
                n = int.from_bytes(data[at + 2 : at + 4], "big")
            elif n == 127:
                n = int.from_bytes(data[at + 2 : at + 10], "big")
            if n > MAX_FRAME:
                break
            if end - start < n:
                if start + n - at > UNREAD_LIMIT:
                    break  # a long message in pieces: the protocol's buffer does better
                self.unread = data[at:]  # the rest of this frame comes later
                return
            if opcode >= 8:  # ping, pong, close: the protocol's
                self._parse(data[at : start + n])
                at = start + n
                if self.protocol.state is not State.OPEN or self.stopped:
                    break  # closing: the protocol reads whatever comes now
                continue
            self.heard = self.listener.loop.time()
            self._message(unmask(data[start : start + n], data[start - 4 : start]), opcode == 1)
            at = start + n
            if self.stopped or self.protocol.state is not State.OPEN:
                break
        else:
            return
        self.direct = False
        self.unread = b""
        if at < end:
            self._parse(data[at:])

    def _request(self, event: object) -> None:
        """The opening request, accepted at once (nothing to await); websockets answers
        one that is no upgrade, or a bad one, with an error and closes. Plain HTTP never
        comes here but on a listener without an HTTP handler (``PlainHttp`` reads it)."""
        if not isinstance(event, Request) or self.protocol.state is not State.CONNECTING:
            return
        self.request = event
        listener = self.listener
        response = self.protocol.accept(event)
        if response.status_code == 101 and listener.closing:
            response = self.protocol.reject(
                HTTPStatus.SERVICE_UNAVAILABLE, "Server is shutting down.\n"
            )
        response.headers["Server"] = SERVER
        self.protocol.send_response(response)
        if response.status_code == 101:  # the protocol is OPEN
            listener.opened(self)

    # -- plain HTTP (``PlainHttp``'s owner) ------------------------------------------------

    def http_request(self, request: PlainRequest) -> None:
        """A whole request that is no upgrade: to the listener's HTTP handler, on a task of
        its own (a page may wait on the database)."""
        handler = self.listener.http
        assert handler is not None
        self.http_task = self.listener.loop.create_task(self._http(request, handler))

    async def _http(self, plain: PlainRequest, handler: HttpHandler) -> None:
        request = Request(
            plain.target, Headers(plain.headers), plain.method, f"HTTP/{plain.http_version}"
        )
        try:
            response = await handler(self, request)
            if response is None:  # nothing to answer
                response = _error_response(HTTPStatus.NOT_FOUND, "Not Found")
        except Exception:
            log.exception("an HTTP request failed")
            response = _error_response(
                HTTPStatus.INTERNAL_SERVER_ERROR, "the server failed on this request"
            )
        if self.plain is not None and self.transport is not None:
            headers = [*response.headers.raw_items(), ("Server", SERVER)]
            body = bytes(response.body)
            self.plain.respond(
                response.status_code,
                response.reason_phrase,
                headers,
                body,
                self.listener.loop.time(),
            )

    def http_upgrade(self, request: PlainRequest, rest: bytes) -> None:
        """A request for a websocket: websockets' protocol reads it (as the client sent it:
        the same method, target, version and headers) and everything after it."""
        self.plain = None
        head = Request(
            request.target, Headers(request.headers), request.method, "HTTP/1.1"
        ).serialize()
        if request.http_version != "1.1":  # websockets answers HTTP/1.0 with its 400
            version = f" HTTP/{request.http_version}\r\n".encode()
            head = head.replace(b" HTTP/1.1\r\n", version, 1)
        self._feed(head + rest)
        self._wrote()

    def shut(self) -> None:
        """Shutting down, no websocket here: drop the socket, or close it after its answer."""
        if self.plain is not None:
            self.plain.shut()
        elif self.transport is not None:
            self.transport.abort()

    def _frame(self, frame: Frame) -> None:
        self.heard = self.listener.loop.time()
        opcode = frame.opcode
        if opcode is Opcode.PING or opcode is Opcode.PONG:
            if not self.stopped:
                self.listener.handler.control(self)
            return
        if opcode is Opcode.CLOSE or self.stopped:
            return
        # The protocol has checked the order of fragments and the whole message's size
        # against max_size; what is left is to put fragments together.
        if opcode is Opcode.CONT:
            fragments = self.fragments
            assert fragments is not None
            fragments.append(bytes(frame.data))
            if len(fragments) > MAX_FRAGMENTS:
                self.fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                return
            if not frame.fin:
                return
            data, text = b"".join(fragments), self.fragmented_text
            self.fragments = None
        elif not frame.fin:
            self.fragments = [bytes(frame.data)]
            self.fragmented_text = opcode is Opcode.TEXT
            return
        else:
            data = frame.data if type(frame.data) is bytes else bytes(frame.data)
            text = opcode is Opcode.TEXT
        self._message(data, text)

    def _message(self, data: bytes, text: bool) -> None:
        """A whole message: to the handler (a text one as ``str``, if it is UTF-8)."""
        if not text:
            self.listener.handler.message(self, data)
            return
        try:
            message = data.decode()
        except UnicodeDecodeError:
            self.fail(CloseCode.INVALID_DATA, "a text frame that is not UTF-8")
            return
        self.listener.handler.message(self, message)

    # -- writing ------------------------------------------------------------------------------

    def send(self, data: bytes, *, is_progress: bool) -> bool:
        """Send ``data`` as a binary message; False if the client has fallen too far behind
        (``send_frame``)."""
        return self.send_frame(binary_frame(data), is_progress=is_progress)

    def send_frame(self, frame: bytes, *, is_progress: bool) -> bool:
        """Send a binary message already framed (``binary_frame``); False if the client
        has fallen too far behind.

        A frame for a client that keeps up is put after what the protocol has written so
        far and leaves with the rest of this tick's (``Listener._flush``). Otherwise it
        waits in order; only the latest progress matters: a newer one replaces one still
        waiting, and goes after everything queued before it (docs/protocol.md, 4.11).
        """
        if self.closing is not None or self.stopped:
            return True
        queue = self.queue
        if queue is None:
            if not self.paused:
                self._put(frame)
                return True
            queue = self.queue = deque()
        if is_progress:
            if self.progress is not None:
                queue.remove(_PROGRESS)
            queue.append(_PROGRESS)
            self.progress = frame
        else:
            queue.append(frame)
        return len(queue) <= OUTBOX_LIMIT

    def _put(self, frame: bytes) -> None:
        """Write ``frame`` at the end of this tick, after what the protocol has written so
        far (a handshake's answer, a pong): the order of the bytes is the order they were
        made in. Nothing once the websocket is closing (the protocol's own rule)."""
        protocol = self.protocol
        if protocol.state is not State.OPEN:
            return
        before = protocol.data_to_send()
        out = self.out
        if out is None:
            before.append(frame)
            self.out = before
        else:
            out += before
            out.append(frame)
        self._dirty()

    def discard(self) -> None:
        """Forget what is queued (a client that stopped reading, or is gone)."""
        self.queue = self.progress = None

    def close(self, code: int, reason: str) -> None:
        """Close after the frames already queued (an error's text reaches the client first)."""
        if self.closing is None:
            self.closing = (code, reason)
        if self.queue is None:
            self._send_close()

    def fail(self, code: int, reason: str) -> None:
        """Close at once and read nothing more: queued frames are dropped, what arrives is
        no longer parsed (so no more pongs), and the socket is dropped if the peer does not
        close it in time."""
        self.stopped = True
        self.fragments = None
        self.discard()
        if self.protocol.state is State.OPEN:
            self.protocol.fail(code, reason)
            self._dirty()

    def _send_close(self) -> None:
        if self.closing is not None and self.protocol.state is State.OPEN:
            self.protocol.send_close(*self.closing)
            self._dirty()

    def _drain(self) -> None:
        """The socket keeps up again: hand it what waited, then the close asked for."""
        queue, self.queue = self.queue, None
        if queue is not None:
            for item in queue:
                if item is _PROGRESS:
                    item, self.progress = self.progress, None
                assert isinstance(item, bytes)
                self._put(item)
        if self.closing is not None:
            self._send_close()

    def ping(self) -> None:
        self.pinged = self.listener.loop.time()
        self.protocol.send_ping(b"")
        self._dirty()

    def _dirty(self) -> None:
        if not self.dirty:
            self.dirty = True
            self.listener.dirty(self)

    def _wrote(self) -> None:
        """After the protocol was fed: what it has to write (a pong, a close, an answer),
        and whether the socket is to close, are seen to at the end of the tick."""
        self._dirty()

    def flush(self) -> None:
        """Write what the protocol has to send in one call; close a client whose unsent
        bytes pass ``write_buffer_limit`` (it is not reading)."""
        self.dirty = False
        transport = self.transport
        writes = self.protocol.data_to_send()
        out = self.out
        if out is not None:
            self.out = None
            if writes:
                out += writes
            writes = out
        if transport is None or transport.is_closing():
            return
        eof = False
        if writes and not writes[-1]:
            writes.pop()
            eof = True
        if len(writes) == 1:
            transport.write(writes[0])
        elif writes:
            transport.write(b"".join(writes))
        if eof:
            # Half-close the TCP connection when possible (not with TLS); the peer then
            # closes its side. Else close the socket, after what is buffered.
            if transport.can_write_eof():
                try:
                    transport.write_eof()
                except Exception:  # pragma: no cover (uvloop may raise RuntimeError)
                    transport.close()
            else:
                transport.close()
        if self.deadline is None and self.protocol.close_expected():
            self.deadline = self.listener.loop.time() + self.listener.close_timeout
            self.listener.ending.add(self)
        if (
            not self.overflowed
            and self.protocol.state is State.OPEN  # not a plain HTTP answer (a page)
            and transport.get_write_buffer_size() > self.write_buffer_limit
        ):
            self.overflowed = True
            log.warning("a client is not reading (write buffer full); closing it")
            # Nothing more is read, so nothing more is answered: the buffer stops growing;
            # the close timeout then drops the socket.
            self.fail(CLOSE_TOO_SLOW, "too slow: not reading")

    # -- keepalive ----------------------------------------------------------------------------

    def check(self, now: float, interval: float, timeout: float) -> None:
        """Drop a socket past its deadline, ping a client silent for ``interval``, close
        one still silent ``timeout`` after its ping (``Listener._sweep``, once a second,
        for the peers it may concern).

        Why not websockets' own keepalive: it runs a task per connection and pings every
        connection every interval, active or not; 2,000 clients that connected together
        then send 2,000 pings in a burst every 20 s, which held the event loop for over
        100 ms (docs/performance.md). Here only the silent ones are pinged, and a client
        that moves never needs a ping at all.
        """
        state = self.protocol.state
        if self.deadline is not None:
            if now >= self.deadline and self.transport is not None:
                self.transport.abort()
            return
        if state is State.CONNECTING:
            if self.plain is not None:
                self.plain.check(now, OPEN_TIMEOUT)
            elif now - self.made >= OPEN_TIMEOUT:
                assert self.transport is not None
                self.transport.abort()
            return
        if state is not State.OPEN:
            return
        if self.pinged is not None:
            if self.heard >= self.pinged:
                self.pinged = None
            elif now - self.pinged >= timeout:
                self.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                return
        if self.pinged is None and now - self.heard >= interval:
            self.ping()


class Listener:
    """The listening socket and every peer of it, websocket or plain HTTP."""

    def __init__(
        self,
        handler: Handler,
        *,
        http: HttpHandler | None = None,
        write_buffer_limit: int = WRITE_BUFFER_LIMIT,
        ping_interval: float = PING_INTERVAL,
        ping_timeout: float = PING_TIMEOUT,
        close_timeout: float = CLOSE_TIMEOUT,
    ) -> None:
        self.handler = handler
        self.http = http
        self.loop = asyncio.get_running_loop()
        #: Every peer, in the order it was last heard from (the oldest first), so that a
        #: sweep looks only at the silent ones; and those still in their opening
        #: handshake or closing, whose deadlines a sweep checks.
        self.peers: dict[Peer, None] = {}
        self.ending: set[Peer] = set()
        self.write_buffer_limit = write_buffer_limit
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.close_timeout = close_timeout
        self.server: asyncio.Server | None = None
        self.closing = False
        self._dirty: list[Peer] = []
        self._flushing = False
        #: Events being handled (``hold``): their frames are written when the last ends.
        self.holding = 0
        self._sweeper: asyncio.TimerHandle | None = None
        self._empty = asyncio.Event()
        self._ids = 0

    async def start(self, host: str, port: int, *, ssl: SSLContext | None = None) -> None:
        """Listen on ``host:port`` (port 0 picks a free one); with ``ssl``, wss:// only."""
        self.server = await self.loop.create_server(lambda: Peer(self), host, port, ssl=ssl)
        self._sweeper = self.loop.call_later(self._sweep_period(), self._sweep)

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    def opened(self, peer: Peer) -> None:
        self._ids += 1
        peer.conn = self._ids
        self.ending.discard(peer)
        self.handler.opened(peer)
        peer.request = None  # read by ``opened`` only: its headers are not kept per player

    def lost(self, peer: Peer) -> None:
        self.peers.pop(peer, None)
        self.ending.discard(peer)
        if peer.conn:
            self.handler.closed(peer)
        if self.closing and not self.peers:
            self._empty.set()

    def dirty(self, peer: Peer) -> None:
        """``peer`` has bytes to write: written once the events being handled are (or, if
        none is, at the end of the loop tick)."""
        self._dirty.append(peer)
        if not self.holding and not self._flushing:
            self._flushing = True
            self.loop.call_soon(self._flush)

    def hold(self) -> None:
        """An event is being handled (a message, a timer): what it sends waits for
        ``release``, so that each peer gets one write for all of it."""
        self.holding += 1

    def release(self) -> None:
        self.holding -= 1
        if not self.holding and self._dirty:
            self._flush()

    def _flush(self) -> None:
        self._flushing = False
        while self._dirty:  # a flush may dirty a peer again (a failed one's close frame)
            dirty, self._dirty = self._dirty, []
            for peer in dirty:
                peer.flush()

    def _sweep(self) -> None:
        """Once a second: the peers closing or opening, and the silent ones. A sweep of
        every peer cost as much CPU as a hundred moves at 2,000 players; the peers are
        kept in the order they were last heard from, so the sweep stops at the first one
        heard from within ``ping_interval`` (those pinged and still silent come before)."""
        now = self.loop.time()
        interval, timeout = self.ping_interval, self.ping_timeout
        quiet = now - interval
        silent = []
        for peer in self.peers:
            if peer.heard > quiet:
                break
            silent.append(peer)
        for peer in (*self.ending, *silent):
            peer.check(now, interval, timeout)
        self._sweeper = self.loop.call_later(self._sweep_period(), self._sweep)

    def _sweep_period(self) -> float:
        return min(1.0, self.ping_interval / 4, self.ping_timeout / 4)

    async def close(self, code: int, reason: str) -> None:
        """Stop listening, close every websocket with ``code`` after what is queued for
        it, and wait until every socket is gone (a peer that does not answer its close is
        dropped after ``close_timeout``)."""
        self.closing = True
        if self.server is not None:
            self.server.close()
        for peer in list(self.peers):
            state = peer.protocol.state
            if state is State.OPEN:
                peer.close(code, reason)
            elif state is State.CONNECTING:
                peer.shut()
        if self.peers:
            try:
                await asyncio.wait_for(self._empty.wait(), self.close_timeout + 1.0)
            except TimeoutError:
                for peer in list(self.peers):
                    if peer.transport is not None:
                        peer.transport.abort()
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
