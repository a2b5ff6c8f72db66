"""Plain HTTP/1.1 on the websocket port, one connection at a time: h11 reads the requests
and writes the answers, so that a connection stays open for the next request.

Why: a browser's first visit fetches the page and a dozen modules; when every answer
closed its connection (websockets answers one request and closes), each file cost a new
TCP connection, and with TLS a new handshake, on a phone's link (issue 42, item 1). h11 is
a Sans-I/O HTTP/1.1 library like websockets' own layer: bytes in, events out, nothing of
its own on the event loop. It reads keep-alive, pipelining, bodies and chunked framing
correctly, which a parser written here would have to get right on every hostile input.

Every connection starts here (``Peer``): a request that asks for a websocket (``Upgrade:
websocket``) is handed back to the peer with the bytes after it, and websockets'
``ServerProtocol`` takes the connection from that request on
(``server.runtime.connection``, the one module that touches websockets); any other
request goes to the peer's handler, and its answer comes back through ``respond``.

Requests are answered one at a time, in the order they came (pipelining: RFC 9112 9.3):
a request that comes while another is handled waits in h11's buffer, and past
``MAX_PIPELINED`` bytes waiting the socket stops being read until the answer is out.
Bounds: ``MAX_HEAD`` bytes of request line and headers (431), ``MAX_TARGET`` of target
(414), ``MAX_HEADERS`` header lines (431), ``MAX_BODY`` of body (413: no page takes one,
but a body must be read to find the next request), ``MAX_REQUESTS`` per connection (the
last answer says ``Connection: close``), ``IDLE_TIMEOUT`` between requests. A request h11
cannot read gets a short plain-text error (400, or the status h11 suggests) and the
connection closes; nothing is logged beyond a debug line, since a bad request is the
client's and says nothing about the server.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
from dataclasses import dataclass
from http import HTTPStatus
from typing import Protocol

import h11

__all__ = [
    "IDLE_TIMEOUT",
    "MAX_BODY",
    "MAX_HEAD",
    "MAX_HEADERS",
    "MAX_PIPELINED",
    "MAX_REQUESTS",
    "MAX_TARGET",
    "PlainHttp",
    "PlainRequest",
]

log = logging.getLogger("yukon.http")

#: Seconds a kept-alive connection may wait for its next request before it is closed. A
#: page's files are asked for within a second of the page; a player who opens the
#: leaderboard a minute later pays one new connection, and the server holds no idle
#: socket per visitor for long.
IDLE_TIMEOUT = 15.0
#: Requests one connection may make; its last answer says ``Connection: close``.
MAX_REQUESTS = 100
#: Bytes of request line and headers (h11's ``max_incomplete_event_size``).
MAX_HEAD = 16 * 1024
#: The longest request target, as websockets allowed (its line limit, 8 KiB).
MAX_TARGET = 8 * 1024
#: Header lines one request may have, as websockets allowed.
MAX_HEADERS = 128
#: Bytes of body read (and dropped) before the connection is closed with a 413.
MAX_BODY = 16 * 1024
#: Bytes of later (pipelined) requests held while one is answered before the socket stops
#: being read.
MAX_PIPELINED = 64 * 1024

#: A status's plain-text reason, for the errors answered here.
_ERRORS = {
    400: "Bad Request: this is not an HTTP/1.1 request the server can read",
    413: "Content Too Large: no page here takes a request body",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    501: "Not Implemented: that transfer coding",
    505: "HTTP Version Not Supported",
}


@dataclass(frozen=True, slots=True)
class PlainRequest:
    """One request read whole (its body, if any, read and dropped)."""

    method: str
    target: str
    #: The headers as they came, names in the client's case.
    headers: list[tuple[str, str]]
    #: "1.1" or "1.0".
    http_version: str


class Owner(Protocol):
    """What a connection's HTTP hands on (``connection.Peer``)."""

    def http_request(self, request: PlainRequest) -> None:
        """Answer ``request`` (later, with ``PlainHttp.respond``)."""

    def http_upgrade(self, request: PlainRequest, rest: bytes) -> None:
        """``request`` asks for a websocket: the connection is websockets' from it on;
        ``rest`` came after it."""


def _text(value: bytes) -> str:
    return value.decode("latin-1")


def _send(conn: h11.Connection, head: h11.Response, body: bytes) -> bytes:
    """One whole answer's bytes: its head, its body (if any), its end."""
    parts = [conn.send(head)]
    if body:
        parts.append(conn.send(h11.Data(data=body)))
    parts.append(conn.send(h11.EndOfMessage()))
    return b"".join(p for p in parts if p)


class PlainHttp:
    """One connection's HTTP/1.1: h11's state, the request being answered, the bounds.

    It writes to the socket itself: until a websocket opens, nothing else does.
    """

    __slots__ = (
        "busy",
        "close_timeout",
        "closing",
        "conn",
        "deadline",
        "done",
        "ended",
        "held",
        "owner",
        "paused",
        "request",
        "served",
        "since",
        "transport",
    )

    def __init__(
        self, owner: Owner, transport: asyncio.Transport, now: float, close_timeout: float
    ) -> None:
        self.owner = owner
        self.transport = transport
        #: Seconds a client has to close its side after ours (``connection.CLOSE_TIMEOUT``).
        self.close_timeout = close_timeout
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        #: A request is being answered (``respond`` comes next).
        self.busy = False
        #: Requests answered.
        self.served = 0
        #: When the connection began waiting for its next request.
        self.since = now
        #: Bytes received while busy (pipelined requests), and whether reading stopped.
        self.held = 0
        self.paused = False
        #: Nothing more is read or answered (closed, errored or upgraded).
        self.done = False
        #: The server is shutting down: the answer being made is the last.
        self.closing = False
        #: The request being read or answered.
        self.request: PlainRequest | None = None
        #: The client has closed its side (it may still read the answer).
        self.ended = False
        #: When the socket is dropped if the client has not closed it (after ``end``).
        self.deadline: float | None = None

    # -- reading ---------------------------------------------------------------------------

    def receive(self, data: bytes) -> None:
        """Bytes from the socket (``b""``: the client closed its side)."""
        if not data:
            self.ended = True
        if self.done:
            return
        self.conn.receive_data(data)
        if self.busy:
            self.held += len(data)
            if self.held > MAX_PIPELINED:
                self._pause()
            return
        self._next()

    def _pause(self) -> None:
        if not self.paused and not self.transport.is_closing():
            self.paused = True
            self.transport.pause_reading()

    def _next(self) -> None:
        """Read events until a request is whole (it goes to the owner) or more bytes are
        needed."""
        conn = self.conn
        while not self.busy and not self.done:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                log.debug("a bad HTTP request: %s", exc)
                self._fail(exc.error_status_hint)
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                if not self._start(event):
                    return
            elif isinstance(event, h11.Data):
                self.held += len(event.data)
                if self.held > MAX_BODY:
                    self._fail(413)
                    return
            elif isinstance(event, h11.EndOfMessage):
                request = self.request
                assert request is not None
                self.busy = True
                # What came after this request (pipelined ones) waits; bounded.
                self.held = len(conn.trailing_data[0])
                if self.held > MAX_PIPELINED:
                    self._pause()
                self.owner.http_request(request)
            elif isinstance(event, h11.ConnectionClosed):
                self.end()
                return

    def _start(self, event: h11.Request) -> bool:
        """A request's head: checked, kept until its body has been read; a websocket
        upgrade handed over at once. False: nothing more is to be read here."""
        if event.http_version not in (b"1.1", b"1.0"):
            self._fail(505)
            return False
        target = _text(event.target)
        if len(target) > MAX_TARGET:
            self._fail(414)
            return False
        headers = [(_text(name), _text(value)) for name, value in event.headers.raw_items()]
        # h11 bounds a head that comes in pieces; one that came whole is measured here.
        size = len(target) + sum(len(n) + len(v) + 4 for n, v in headers)
        if len(headers) > MAX_HEADERS or size > MAX_HEAD:
            self._fail(431)
            return False
        request = PlainRequest(_text(event.method), target, headers, _text(event.http_version))
        if any(
            name == b"upgrade" and b"websocket" in value.lower() for name, value in event.headers
        ):
            self.done = True
            self.owner.http_upgrade(request, self.conn.trailing_data[0])
            return False
        self.request = request
        self.held = 0
        return True

    # -- answering -------------------------------------------------------------------------

    def respond(
        self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes, now: float
    ) -> None:
        """The answer to the request being answered; then the next request, if one is
        waiting, or the connection closes (``Connection: close``, the last one allowed,
        or the client asked)."""
        if self.done or not self.busy:
            return
        conn = self.conn
        self.served += 1
        last = self.served >= MAX_REQUESTS or self.closing
        fields = [(n, v) for n, v in headers if n.lower() != "connection"]
        if last:
            fields.append(("Connection", "close"))
        method = self.request.method if self.request is not None else "GET"
        if method == "HEAD" or status in (204, 304):
            body = b""
        try:
            head = h11.Response(
                status_code=status,
                headers=[(n.encode("latin-1"), v.encode("latin-1")) for n, v in fields],
                reason=(reason or HTTPStatus(status).phrase).encode("latin-1"),
            )
            data = _send(conn, head, body)
        except (h11.LocalProtocolError, UnicodeEncodeError) as exc:
            log.warning("an HTTP answer could not be sent (%s); closing", exc)
            self.done = True
            self.transport.abort()
            return
        self._write(data)
        if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
            self.end()  # h11 says the connection closes (MUST_CLOSE), or it errored
            return
        conn.start_next_cycle()
        self.busy, self.since = False, now
        if self.paused:
            self.paused = False
            if not self.transport.is_closing():
                self.transport.resume_reading()
        self.held = 0
        self._next()

    def _fail(self, status: int) -> None:
        """Answer a request that cannot be read with ``status`` and close; if an answer
        cannot be sent any more, just close."""
        self.done = True
        conn = self.conn
        if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            status = status if status in _ERRORS else 400
            text = (_ERRORS[status] + "\n").encode()
            try:
                head = h11.Response(
                    status_code=status,
                    reason=HTTPStatus(status).phrase.encode(),
                    headers=[
                        ("Date", email.utils.formatdate(usegmt=True)),
                        ("Content-Type", "text/plain; charset=utf-8"),
                        ("Content-Length", str(len(text))),
                        ("Connection", "close"),
                    ],
                )
                data = _send(conn, head, text)
                self._write(data)
            except h11.LocalProtocolError:  # pragma: no cover (h11's state says it may)
                pass
        self.end()

    # -- the socket ------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    def end(self) -> None:
        """Close the connection after what was written: half-close it (the client reads
        the answer, then closes; a pipelined request it sent meanwhile does not turn the
        close into a reset that could lose the answer), and drop it if the client does not
        close in time (``check``)."""
        self.done = True
        transport = self.transport
        if self.deadline is not None or transport.is_closing():
            return
        self.deadline = asyncio.get_running_loop().time() + self.close_timeout
        if self.paused:  # read (and drop) what comes, so that the client's end is seen
            self.paused = False
            transport.resume_reading()
        if self.ended or not transport.can_write_eof():
            transport.close()
            return
        try:
            transport.write_eof()
        except Exception:  # pragma: no cover (uvloop may raise RuntimeError)
            transport.close()

    # -- time ------------------------------------------------------------------------------

    def check(self, now: float, first: float) -> None:
        """Once a second (``Peer.check``): drop a socket whose client did not close it
        after ``end``, and close one that has waited too long for a request: ``first``
        seconds for its first (dropped: it never said anything), ``IDLE_TIMEOUT`` between
        later ones (closed cleanly). Never while an answer is being made."""
        if self.deadline is not None:
            if now >= self.deadline:
                self.transport.abort()
            return
        if self.busy or self.done:
            return
        if now - self.since < (first if self.served == 0 else IDLE_TIMEOUT):
            return
        if self.served:
            self.end()
        else:
            self.done = True
            self.transport.abort()

    def shut(self) -> None:
        """The server is shutting down: close now unless an answer is being made (that
        answer is then the connection's last)."""
        self.closing = True
        if not self.busy:
            self.end()
