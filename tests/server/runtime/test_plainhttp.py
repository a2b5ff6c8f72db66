"""Plain HTTP/1.1 on the websocket port (``server.runtime.plainhttp``, h11): a connection
kept alive for several requests, pipelined requests answered in order, a websocket opened
on a fresh connection and after plain requests on the same one, and bad, huge or slow
requests bounded, each answered (or dropped) without a traceback. A real ``Listener`` on a
loopback socket, raw bytes as a client sends them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from bench.frames import NoHandler
from server.runtime import plainhttp
from server.runtime.connection import Listener, Peer

TIMEOUT = 5.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class Pages:
    """An HTTP handler that says which request it answers (``/slow`` waits for ``go``),
    and counts them."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.go = asyncio.Event()

    async def __call__(self, peer: Peer, request: Request) -> Response | None:
        self.seen.append(request.path)
        if request.path == "/slow":
            await self.go.wait()
        if request.path == "/boom":
            raise RuntimeError("a bug in a page")
        if request.path == "/none":
            return None
        body = f"{request.method} {request.path}\n".encode()
        headers = Headers(
            [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("Content-Length", str(len(body))),
                ("Connection", "close"),  # the transport decides: this is dropped
            ]
        )
        return Response(HTTPStatus.OK.value, "OK", headers, body)


@contextlib.asynccontextmanager
async def listening(**options: Any) -> AsyncIterator[tuple[Listener, Pages]]:
    pages = Pages()
    listener = Listener(NoHandler(), http=pages, **options)
    await listener.start("127.0.0.1", 0)
    try:
        yield listener, pages
    finally:
        pages.go.set()
        await listener.close(1001, "bye")


async def read_answer(reader: asyncio.StreamReader, *, head_only: bool = False) -> Answer:
    """One answer, read by its ``Content-Length`` (the connection stays open)."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
    status_line, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = 0 if head_only else int(headers.get("content-length", "0"))
    body = await asyncio.wait_for(reader.readexactly(length), TIMEOUT)
    return Answer(int(status_line.split(" ")[1]), headers, body)


def get(path: str, *extra: str, method: str = "GET") -> bytes:
    lines = "".join(f"{h}\r\n" for h in extra)
    return f"{method} {path} HTTP/1.1\r\nHost: x\r\n{lines}\r\n".encode()


async def closed(reader: asyncio.StreamReader) -> bytes:
    """What comes before the server's end of the connection closes."""
    return await asyncio.wait_for(reader.read(), TIMEOUT)


async def test_one_connection_answers_several_requests_in_turn() -> None:
    async with listening() as (listener, pages):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        for i in range(5):
            writer.write(get(f"/page{i}"))
            answer = await read_answer(reader)
            assert answer.status == 200 and answer.body == f"GET /page{i}\n".encode()
            assert "connection" not in answer.headers  # kept alive: the handler's close dropped
        # HEAD: the status and headers, no body, and the connection still serves.
        writer.write(get("/x", method="HEAD") + get("/after"))
        head = await read_answer(reader, head_only=True)
        assert head.status == 200 and head.headers["content-length"] == "8"
        assert (await read_answer(reader)).body == b"GET /after\n"
        # The client asks to close: the answer says so, and the server closes.
        writer.write(get("/last", "Connection: close"))
        last = await read_answer(reader)
        assert last.headers["connection"] == "close" and last.body == b"GET /last\n"
        assert await closed(reader) == b""
        writer.close()
        assert pages.seen == [*(f"/page{i}" for i in range(5)), "/x", "/after", "/last"]
        assert listener.peers == {} or await _gone(listener)


async def _gone(listener: Listener) -> bool:
    async with asyncio.timeout(TIMEOUT):
        while listener.peers:
            await asyncio.sleep(0.01)
    return True


async def test_pipelined_requests_are_answered_in_order() -> None:
    """Issue 42's "two pipelined GETs in one packet get no answer at all": now each is
    answered, in the order sent, even when the first takes longer than the rest."""
    async with listening() as (listener, pages):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(get("/slow") + get("/a") + get("/b", method="HEAD") + get("/c"))
        await asyncio.sleep(0.05)
        assert pages.seen == ["/slow"]  # one at a time: the rest wait their turn
        pages.go.set()
        bodies = [(await read_answer(reader)).body for _ in range(2)]
        head = await read_answer(reader, head_only=True)
        bodies.append((await read_answer(reader)).body)
        assert bodies == [b"GET /slow\n", b"GET /a\n", b"GET /c\n"] and head.status == 200
        assert pages.seen == ["/slow", "/a", "/b", "/c"]
        writer.close()


async def test_many_pipelined_requests_stop_the_reading_not_the_server() -> None:
    """Requests sent faster than they are answered wait in h11's buffer; past
    ``MAX_PIPELINED`` bytes the socket is not read until the answer is out, and every
    request is still answered, in order."""
    async with listening() as (listener, pages):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        n = 2 * plainhttp.MAX_PIPELINED // len(get("/slow")) + 10
        writer.write(get("/slow") + b"".join(get(f"/{i}") for i in range(n)))
        await asyncio.sleep(0.05)
        peer = next(iter(listener.peers))
        assert peer.plain is not None and peer.plain.paused
        pages.go.set()
        assert (await read_answer(reader)).body == b"GET /slow\n"
        for i in range(min(n, plainhttp.MAX_REQUESTS - 1)):
            assert (await read_answer(reader)).body == f"GET /{i}\n".encode()
        writer.close()


async def test_a_websocket_opens_on_a_fresh_connection_and_after_plain_requests() -> None:
    async with listening() as (listener, _):
        async with connect(f"ws://127.0.0.1:{listener.port}") as ws:
            await ws.ping()
        # The same connection: two pages, then the upgrade (a browser opens a fresh one
        # for a websocket, but nothing forbids this).
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(get("/one") + get("/two"))
        assert (await read_answer(reader)).body == b"GET /one\n"
        assert (await read_answer(reader)).body == b"GET /two\n"
        writer.write(
            get(
                "/",
                "Upgrade: websocket",
                "Connection: Upgrade",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Version: 13",
            )
        )
        switched = await read_answer(reader, head_only=True)
        assert switched.status == 101
        assert switched.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        # A masked ping: the websocket protocol answers it with a pong.
        writer.write(bytes([0x89, 0x80]) + b"\x01\x02\x03\x04")
        pong = await asyncio.wait_for(reader.readexactly(2), TIMEOUT)
        assert pong == bytes([0x8A, 0x00])
        writer.close()


async def test_the_last_request_allowed_closes_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plainhttp, "MAX_REQUESTS", 3)
    async with listening() as (listener, pages):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(b"".join(get(f"/{i}") for i in range(5)))
        answers = [await read_answer(reader) for _ in range(3)]
        assert [a.body for a in answers] == [b"GET /0\n", b"GET /1\n", b"GET /2\n"]
        assert answers[-1].headers["connection"] == "close"
        assert "connection" not in answers[0].headers
        assert await closed(reader) == b""  # the 4th and 5th are never read
        assert pages.seen == ["/0", "/1", "/2"]
        writer.close()


async def test_an_idle_connection_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``IDLE_TIMEOUT`` after its last answer, a kept-alive connection is closed (cleanly:
    the client reads an end, not a reset); one that never sends a request is dropped after
    ``OPEN_TIMEOUT``, as before."""
    monkeypatch.setattr(plainhttp, "IDLE_TIMEOUT", 0.2)
    async with listening(ping_interval=0.4, ping_timeout=0.4) as (listener, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(get("/x"))
        await read_answer(reader)
        assert await closed(reader) == b""
        writer.close()
        await _gone(listener)


async def test_bad_and_huge_requests_get_an_error_and_a_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    head = plainhttp.MAX_HEAD
    cases = {
        b"GARBAGE\r\n\r\n": 400,
        b"GET /x HTTP/1.1\r\n\r\n": 400,  # HTTP/1.1 without Host
        b"GET /x HTTP/2.0\r\nHost: x\r\n\r\n": 505,
        b"GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n": 400,
        b"GET /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n": 501,
        b"GET /" + b"a" * (plainhttp.MAX_TARGET + 1) + b" HTTP/1.1\r\nHost: x\r\n\r\n": 414,
        get("/x", *["X-A: b"] * (plainhttp.MAX_HEADERS + 1)): 431,
        get("/x", "X-Big: " + "a" * head): 431,  # a head that came whole
        b"GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (2 * head): 431,  # in pieces
        get("/x", "Content-Length: 100000", method="POST") + b"a" * 100_000: 413,
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 60: 400,  # TLS hello
    }
    async with listening() as (listener, pages):
        for raw, status in cases.items():
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(raw)
            data = await closed(reader)
            assert data.startswith(f"HTTP/1.1 {status} ".encode()), (raw[:60], data[:80])
            assert b"\r\nConnection: close\r\n" in data
            writer.close()
        # A request with a body is read (and its body dropped), then answered.
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(get("/body", "Content-Length: 5", method="POST") + b"hello" + get("/next"))
        assert (await read_answer(reader)).body == b"POST /body\n"
        assert (await read_answer(reader)).body == b"GET /next\n"
        writer.write(get("/chunked", "Transfer-Encoding: chunked") + b"3\r\nabc\r\n0\r\n\r\n")
        assert (await read_answer(reader)).body == b"GET /chunked\n"
        # A page that fails is a 500 (logged: it is the server's bug), one with nothing
        # to say a 404; the connection serves on.
        writer.write(get("/boom") + get("/none") + get("/fine"))
        assert (await read_answer(reader)).status == 500
        assert (await read_answer(reader)).status == 404
        assert (await read_answer(reader)).body == b"GET /fine\n"
        writer.close()
        assert pages.seen == ["/body", "/next", "/chunked", "/boom", "/none", "/fine"]
    # No traceback but the page's own bug; a bad request is logged at debug level only.
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert [str(r.exc_info[1]) for r in tracebacks if r.exc_info] == ["a bug in a page"]
    assert all(r.levelno < logging.WARNING for r in caplog.records if r.name == "yukon.http")


async def test_a_client_that_sends_and_half_closes_still_reads_its_answer() -> None:
    async with listening() as (listener, pages):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(get("/slow") + get("/then"))
        writer.write_eof()
        await asyncio.sleep(0.05)
        pages.go.set()
        data = await closed(reader)
        assert data.count(b"HTTP/1.1 200 OK\r\n") == 2 and data.endswith(b"GET /then\n")
        writer.close()
        await _gone(listener)


async def test_shutting_down_closes_idle_connections_and_ends_busy_ones() -> None:
    async with listening() as (listener, pages):
        idle_r, idle_w = await asyncio.open_connection("127.0.0.1", listener.port)
        idle_w.write(get("/x"))
        await read_answer(idle_r)
        busy_r, busy_w = await asyncio.open_connection("127.0.0.1", listener.port)
        busy_w.write(get("/slow"))
        await asyncio.sleep(0.05)
        closing = asyncio.create_task(listener.close(1001, "bye"))
        assert await closed(idle_r) == b""
        pages.go.set()
        last = await read_answer(busy_r)
        assert last.body == b"GET /slow\n" and last.headers["connection"] == "close"
        assert await closed(busy_r) == b""
        for w in (idle_w, busy_w):
            w.close()
        await asyncio.wait_for(closing, TIMEOUT)
