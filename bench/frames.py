"""Speed of the transport's own per-frame paths against websockets' (issue 27).

Run from the repository root::

    python -m bench.frames

Times, with ``timeit`` (the fastest of 5 batches), a move's frame (a masked binary frame,
as a client sends it) read by ``server.runtime.connection.Peer`` both ways: through websockets'
Sans-I/O protocol (``Peer._parse``: ``receive_data`` + ``events_received``, what every
frame took before) and straight from the bytes (``Peer._read``); and a 120-byte
``progress`` framed by websockets' ``send_binary`` (once per member before) and by
``binary_frame`` (once per room now). The peers are real ones over a transport that only
records its writes, opened by a real handshake (``handshaken``, which
tests/server/runtime/test_connection.py uses too); the handler does nothing.

This is a measurement, not a test: it never fails on timing and always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import timeit
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/frames.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from protocol.messages import MoveMsg, encode
from server.runtime.connection import Handler, Listener, Peer, binary_frame

N = 100_000


class FakeTransport(asyncio.Transport):
    """The socket under a ``Peer``, without a kernel: keeps each ``write`` in ``writes``
    (tests read them; the timings here write nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        pass

    def abort(self) -> None:
        self.closed = True


class NoHandler:
    """A ``connection.Handler`` that does nothing with what the transport hands over."""

    def opened(self, peer: Peer) -> None: ...
    def message(self, peer: Peer, data: bytes | str) -> None: ...
    def control(self, peer: Peer) -> None: ...
    def closed(self, peer: Peer) -> None: ...


def opened(handler: Handler) -> tuple[Peer, FakeTransport, ClientProtocol, bytes]:
    """A ``Peer`` (telling ``handler``) on a ``FakeTransport``, and a client's protocol
    with its opening request, not yet sent to the peer."""
    peer = Peer(Listener(handler))
    transport = FakeTransport()
    peer.connection_made(transport)
    client = ClientProtocol(parse_uri("ws://x"))
    client.send_request(client.connect())
    return peer, transport, client, b"".join(client.data_to_send())


def handshaken(handler: Handler) -> tuple[Peer, FakeTransport, ClientProtocol]:
    """A ``Peer`` opened by a real handshake (so it reads frames itself, ``Peer._read``),
    and the client's protocol that sent it, open too; the handshake's writes are read."""
    peer, transport, client, request = opened(handler)
    peer.data_received(request)
    client.receive_data(b"".join(transport.writes))
    client.events_received()  # the handshake's answer
    transport.writes.clear()
    assert client.state is State.OPEN and peer.direct
    return peer, transport, client


def _best(work: Any, calls: int) -> float:
    """Microseconds a call, the fastest of 5 batches of ``calls``."""
    return min(timeit.repeat(work, number=calls, repeat=5)) / calls * 1e6


async def _main(calls: int) -> None:
    frame = Frame(Opcode.BINARY, encode(MoveMsg(256, "AD>5"))).serialize(mask=True, extensions=[])
    for direct in (False, True):
        peer, _, _ = handshaken(NoHandler())
        peer.direct = direct  # opened by the handshake: True; False reads as before

        def read(peer: Peer = peer, direct: bool = direct) -> None:
            listener = peer.listener
            listener.holding += 1  # as data_received does: frames wait for the event's end
            if direct:
                peer._read(frame)
            else:
                peer._parse(frame)
            listener.holding -= 1

        how = "straight from the bytes (Peer._read)" if direct else "websockets' protocol"
        print(f"read a move's frame ({len(frame)} bytes), {how}: {_best(read, calls):.2f} us")
    protocol = ServerProtocol(state=State.OPEN)
    data = b"x" * 120

    def framed_by_websockets() -> None:
        protocol.send_binary(data)
        protocol.data_to_send()

    took = _best(framed_by_websockets, calls)
    print(f"frame a 120-byte progress, websockets' send_binary: {took:.2f} us")
    print(f"frame it with binary_frame: {_best(lambda: binary_frame(data), calls):.2f} us")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.frames", description=__doc__)
    parser.add_argument("--calls", type=int, default=N, help=f"calls a batch ({N})")
    args = parser.parse_args(argv)
    asyncio.run(_main(args.calls))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
