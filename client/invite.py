"""Invite links, pure: a room's link from the server the client dialled, and back.

A room's invite link is ``http(s)://HOST:PORT/r/ROOMCODE``: the page the race server
serves there opens the room in a browser, and ``yukon play`` takes the same link. Both
directions live here, as plain functions of strings, so that the screens (which show
the link) and the command line (which reads one) agree, and each is tested alone:

* ``invite_link``: the link of a room on the server at ``ws(s)://HOST:PORT[/PREFIX]``:
  ``ws`` becomes ``http``, ``wss`` ``https``; the host, port and any path prefix (a
  server behind a reverse proxy at ``/yukon``) stay; user and password never go in.
* ``parse_target``: what ``yukon play`` was given, as the websocket address to dial and,
  for an invite link, the room to go to. A link may be written ``http``, ``https``,
  ``ws`` or ``wss``; without a scheme it is plain (``ws``), as a server's address is.
* ``name_link``: a player's name as a link, ``http(s)://HOST:PORT/#token=TOKEN``, to
  take the name to another device (docs/protocol.md 4.2); ``parse_target`` reads its
  token back (the fragment is never sent to a server, so it stays out of logs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, unquote, urlsplit

__all__ = [
    "ROOM_ALPHABET",
    "ROOM_CODE_LENGTH",
    "LinkError",
    "Target",
    "invite_link",
    "name_link",
    "normalize_room",
    "parse_target",
    "replay_link",
]

#: The characters of a room code (docs/protocol.md 4.3: no 0, O, 1 or I). The server
#: draws codes from its own copy (``server.rooms.state``), which the client may not
#: import; a test checks that the two are the same.
ROOM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ROOM_CODE_LENGTH = 5

#: The scheme of a room's page for each websocket scheme, and back.
_PAGE_SCHEME = {"ws": "http", "wss": "https"}
_SOCKET_SCHEME = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
#: A link's path: any prefix, then ``/r/`` and the code (one path segment), then at most
#: one slash.
_ROOM_PATH = re.compile(r"^(?P<prefix>.*)/r/(?P<code>[^/]*)/?$")


class LinkError(ValueError):
    """An address ``yukon play`` cannot use; the message is the one line the user sees."""


@dataclass(frozen=True)
class Target:
    """Where ``yukon play`` goes: the websocket address to dial and, when it was given
    an invite link, the room code to join (or watch)."""

    url: str
    room: str | None = None
    #: A name's link (``#token=``): the player's secret token on that server.
    token: str | None = None
    #: An invite-only room's key (the link's ``?k=``, docs/protocol.md 4.32).
    key: str | None = None


def normalize_room(text: str) -> str | None:
    """A room code as the server spells it (upper case), or None if ``text`` is none."""
    code = text.strip().upper()
    if len(code) == ROOM_CODE_LENGTH and all(c in ROOM_ALPHABET for c in code):
        return code
    return None


def _netloc(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host  # an IPv6 literal
    return shown if port is None else f"{shown}:{port}"


def invite_link(server_url: str, room: str, key: str | None = None) -> str:
    """The invite link of ``room`` on the server the client dialled at ``server_url``
    (``ws://`` or ``wss://``).

    ``ws://race.example:8765`` and room ``K7WQM`` give ``http://race.example:8765/r/K7WQM``;
    ``wss://example.org/yukon/`` gives ``https://example.org/yukon/r/K7WQM``. A user and
    password in the address are left out: the link is made to be passed around. An
    invite-only room's ``key`` goes in as ``?k=KEY`` (docs/protocol.md 4.32).
    """
    parts = urlsplit(server_url.strip())
    scheme = _PAGE_SCHEME.get(parts.scheme.lower())
    if scheme is None or not parts.hostname:
        raise ValueError(f"{server_url!r} is not a ws:// or wss:// address")
    prefix = parts.path.rstrip("/")
    link = f"{scheme}://{_netloc(parts.hostname, parts.port)}{prefix}/r/{room}"
    return link if key is None else f"{link}?k={quote(key, safe='')}"


def name_link(server_url: str, token: str) -> str:
    """The link that takes a player's name to another device: the server's page with the
    token in the fragment (``http://race.example:8765/#token=...``). A browser opening it
    keeps the token for that server; ``yukon play LINK`` does the same."""
    base = invite_link(server_url, "X").removesuffix("/r/X")
    return f"{base}/#token={quote(token, safe='')}"


def _fragment_token(fragment: str) -> str | None:
    """The ``token`` of a link's fragment (``token=...``), if it has one."""
    for part in fragment.split("&"):
        key, sep, value = part.partition("=")
        if sep and key == "token" and value:
            return unquote(value)
    return None


def replay_link(server_url: str, race: str, player: str) -> str:
    """The link of one run's replay, ``/replay/<race>/<player>`` on the same server as an
    invite link (docs/protocol.md 1.6): a browser opens it and plays the run. Both parts
    are percent-encoded UTF-8."""
    base = invite_link(server_url, "X").removesuffix("/r/X")
    return f"{base}/replay/{quote(race, safe='')}/{quote(player, safe='')}"


def parse_target(text: str) -> Target:
    """What ``yukon play`` was given: a server's address, or a room's invite link.

    * ``ws://HOST:PORT`` or ``wss://HOST:PORT`` (any path): a server, dialled as written;
      without a scheme, ``ws://`` is put in front (a plain connection).
    * ``http(s)://HOST:PORT[/PREFIX]/r/ROOMCODE``, or the same with ``ws``/``wss`` or no
      scheme: an invite link; the server is ``ws(s)://HOST:PORT[/PREFIX]/`` (``https`` and
      ``wss`` are TLS) and the room is ROOMCODE, in any case. A query or fragment after
      the link is ignored, but for an invite-only room's key (``?k=KEY``) and a name's link:
    * ``http(s)://HOST:PORT[/PREFIX]/#token=TOKEN`` (``name_link``): that server, and the
      token of a name to use there (also after a room's link).

    * ``http(s)://HOST:PORT[/PREFIX][/]``, the server's page (what a browser opens): that
      server, dialled as ``ws(s)://HOST:PORT[/PREFIX]``.

    Raises ``LinkError`` (one line) for any other scheme, a room code that cannot be one,
    a missing host or a bad port.
    """
    given = text.strip()
    if not given:
        raise LinkError("no address given")
    raw = given if "://" in given else "ws://" + given
    try:
        parts = urlsplit(raw)
    except ValueError:  # such as an IPv6 address without its closing bracket
        raise LinkError(f"{given}: not an address") from None
    scheme = parts.scheme.lower()
    socket_scheme = _SOCKET_SCHEME.get(scheme)
    if socket_scheme is None:
        raise LinkError(
            f"{given}: a {scheme}:// address is not one yukon play can use; give a server"
            " (ws:// or wss://) or a room's invite link (http:// or https://)"
        )
    if not parts.hostname:
        raise LinkError(f"{given}: no host in the address")
    try:
        parts.port  # noqa: B018 (urlsplit checks the port only when it is read)
    except ValueError:
        raise LinkError(f"{given}: the port is not a number from 0 to 65535") from None
    token = _fragment_token(parts.fragment)
    match = _ROOM_PATH.match(parts.path)
    if match is None and token is not None:
        path = parts.path.rstrip("/")
        return Target(f"{socket_scheme}://{parts.netloc}{path}/", None, token)
    if match is None:
        if scheme in ("http", "https") and "/r/" in parts.path + "/":
            raise LinkError(
                f"{given} is not a room's invite link ({scheme}://HOST:PORT/r/ROOMCODE)"
            )
        if scheme in ("http", "https"):
            # The server's page, the address the README gives for a browser: the same
            # server's websocket (``http`` is ``ws``, ``https`` is ``wss``), any path
            # prefix kept; a query or fragment is the page's, not the server's.
            return Target(f"{socket_scheme}://{parts.netloc}{parts.path.rstrip('/')}")
        return Target(raw)
    room = normalize_room(match["code"])
    if room is None:
        raise LinkError(
            f"{given}: {match['code']!r} is not a room code ({ROOM_CODE_LENGTH} letters and"
            " digits such as K7WQM, without 0, O, 1 or I)"
        )
    key = next(iter(parse_qs(parts.query).get("k", [])), None)
    return Target(f"{socket_scheme}://{parts.netloc}{match['prefix']}/", room, token, key)
