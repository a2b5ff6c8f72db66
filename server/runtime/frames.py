"""Websocket frames written and unmasked by hand (RFC 6455 5.2, 5.3), for the hot paths of
``server.runtime.connection``: plain bytes arithmetic, no websockets import."""

from __future__ import annotations

import struct

__all__ = ["binary_frame", "unmask"]

_HEAD16 = struct.Struct("!BBH")
_HEAD64 = struct.Struct("!BBQ")


def binary_frame(data: bytes) -> bytes:
    """``data`` as one whole binary message in a server's frame (RFC 6455, 5.2: FIN,
    opcode 2, unmasked, no extension): the bytes websockets' ``send_binary`` writes for it.

    Why not ``send_binary``: a room's progress goes to every member, and websockets frames
    it again for each of them (a ``Frame``, its checks, a ``BytesIO``): framed here once
    per message, the same bytes go to every peer (``Peer.send_frame``). The server
    negotiates no extension (``ServerProtocol`` is made without any, so no compression
    changes a frame's bytes); tests compare these bytes with websockets' own.
    """
    n = len(data)
    if n < 126:
        return bytes((0x82, n)) + data
    if n < 65536:
        return _HEAD16.pack(0x82, 126, n) + data
    return _HEAD64.pack(0x82, 127, n) + data


def unmask(payload: bytes, mask: bytes) -> bytes:
    """A client's payload, unmasked (RFC 6455 5.3): XOR with the 4-byte mask repeated, as
    one big integer operation (a few hundred nanoseconds for a move's frame)."""
    n = len(payload)
    if not n:
        return payload
    key = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")
