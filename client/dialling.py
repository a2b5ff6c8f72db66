"""Where a connection dials and what it says: the URL a followed ``route`` asks for, a
close code or a socket error in words, and the TLS of a pinned server (its context and a
certificate's fingerprint). Split out of ``connection.py``, which uses them; no sockets.
"""

from __future__ import annotations

import hashlib
import ssl
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from protocol.messages import CLOSE_TOO_SLOW

__all__ = ["describe_close", "describe_os_error", "fingerprint", "unverified", "with_node"]


def describe_close(code: int | None, reason: str) -> str:
    """A close code in words."""
    why = f": {reason}" if reason else ""
    if code == 1001:
        return "the server is going away (shutting down or restarting)"
    if code == 1012:
        return "the server is restarting"
    if code == 1013:
        return "the server is full just now"
    if code == 1008:
        return f"the server closed the connection{why or ' (policy)'}"
    if code == 1011:
        return f"the server closed the connection with code 1011{why}"
    if code == CLOSE_TOO_SLOW:
        return "the server closed the connection: this client fell behind"
    if code in (None, 1005, 1006):
        return "the connection was lost"
    return f"the server closed the connection with code {code}{why}"


def unverified() -> ssl.SSLContext:
    """TLS without a check of the certificate: for a pinned server, whose certificate is
    compared with the pin before anything is sent, and to read a new one's fingerprint."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def fingerprint(ssl_object: object) -> str:
    """The SHA-256 fingerprint of the peer's certificate, as OpenSSL writes it."""
    der = (
        ssl_object.getpeercert(binary_form=True) if isinstance(ssl_object, ssl.SSLObject) else None
    )
    if not der:
        return ""
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def describe_os_error(exc: BaseException, where: str) -> str:
    if isinstance(exc, ConnectionRefusedError):
        # Said plainly: a newcomer's first mistake is an address with no server behind it.
        return f"nothing answers at {where}: connection refused (is a server running there?)"
    if isinstance(exc, TimeoutError):
        return f"no answer from {where}"
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"cannot reach {where}: {text}"


def with_node(url: str, node: str | None) -> str:
    """``url`` with its query parameter ``node`` set to ``node`` (or removed: None), the
    rest of the URL as it was: where a client that follows a ``route`` connects."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "node"]
    if node is not None:
        query.append(("node", node))
    return urlunsplit(parts._replace(query=urlencode(query)))
