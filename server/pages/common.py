"""What every page of ``server/pages`` answers with: a response's headers, an error as one
line of text, the server's own HTML pages (templates, their Content-Security-Policy) and
the few names and formats the areas share (``http.py`` routes to them)."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import jinja2
from websockets.datastructures import Headers
from websockets.http11 import Response

from protocol.times import format_ms

#: ``/replay/<race>/<player>`` and ``/replay/<race>/<player>/postmortem`` (``replay``).
REPLAY_PREFIX = "/replay/"
#: ``/players/<name>``: a player's page (``player``, docs/protocol.md 4.27).
PLAYER_PREFIX = "/players/"

#: The page uses nothing but its own inline style: no script, no outside request.
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


class HttpError(Exception):
    """A request we answer with an error status and a one-line plain-text reason."""

    def __init__(self, status: HTTPStatus, text: str, *, allow: str | None = None) -> None:
        super().__init__(text)
        self.status = status
        self.text = text
        self.allow = allow


def reply(
    status: HTTPStatus,
    body: bytes,
    content_type: str,
    *,
    cache: str = "no-store",
    extra: Iterable[tuple[str, str]] = (),
) -> Response:
    """A complete response (``Content-Length``: the connection is kept alive for the next
    request, ``server.runtime.plainhttp``)."""
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
            ("X-Content-Type-Options", "nosniff"),
            *extra,
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def text_reply(status: HTTPStatus, text: str, extra: Iterable[tuple[str, str]] = ()) -> Response:
    return reply(status, (text + "\n").encode(), "text/plain; charset=utf-8", extra=extra)


def one_line(text: str, limit: int = 300) -> str:
    """Health checkers log the body: keep the reason on one short line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def shown(value: str) -> str:
    """A bad value quoted back to its sender, shortened so an error stays one line."""
    return repr(value if len(value) <= 40 else value[:40] + "…")


def format_time(time_ms: int) -> str:
    """``0:51.7``: the terminal client's format (``protocol.times``), so a time reads alike."""
    return format_ms(time_ms)


def player_href(name: str) -> str:
    """A player's page: ``/players/`` and the name, percent-encoded UTF-8."""
    return PLAYER_PREFIX + quote(name, safe="")


def short_date(date: dt.date) -> str:
    return f"{date.day} {date:%b}"


#: The server's pages (``server/pages/templates``): autoescaped, so a value shows as text unless
#: a template marks it safe, and none does. Blocks and their lines are trimmed so that the
#: templates can be laid out readably and still give compact HTML.
TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("server.pages", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)


def page_reply(status: HTTPStatus, html: str) -> Response:
    """One of the server's own HTML pages (not the client's): inline style, no script."""
    return reply(
        status,
        html.encode(),
        "text/html; charset=utf-8",
        cache="no-cache",
        extra=[("Content-Security-Policy", PAGE_CSP), ("Referrer-Policy", "no-referrer")],
    )


def json_reply(status: HTTPStatus, data: dict[str, Any]) -> Response:
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return reply(status, body, "application/json; charset=utf-8", cache="no-cache")
