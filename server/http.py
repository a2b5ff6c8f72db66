"""Plain HTTP on the websocket port: ``/healthz``, ``/metrics`` and ``/leaderboard``.

One port keeps running a server simple: a load balancer's health check, Prometheus and a
browser reach the server where the players do, through the same proxy and firewall rule.
websockets hands us every request that is not an upgrade (``RaceServer.http``); each gets
one response, then the connection closes, so none of this can hold a socket open. A request
with a body (``Content-Length`` other than 0, or ``Transfer-Encoding``) never reaches us:
websockets' parser refuses it and half-closes the connection without a response
(tests/server/test_http.py shows what a client sees).

Everything here is read-only, and the leaderboard keeps the rule the wire protocol keeps
(``leaderboard.py``): a daily deal's game code stays hidden until its day is over, since
whoever knows the code knows the deal.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlencode

import jinja2
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.times import format_ms

from .connection import RaceServer
from .daily import code_public, code_public_at, day_begun, utc_date
from .storage.sql import Board, BoardEntry, describe_error

__all__ = [
    "HttpPages",
    "HttpError",
    "BoardQuery",
    "DailyPage",
    "parse_board_query",
    "render_metrics",
    "render_board_html",
    "board_json",
    "format_time",
    "PAGE_SIZE",
    "METRICS_CONTENT_TYPE",
]

#: Rows on one leaderboard page (the wire protocol's largest page too).
PAGE_SIZE = 50
#: The highest ``?page=``: deep enough for any real board, small enough to keep the
#: offset an ordinary integer for every database.
MAX_PAGE_NUMBER = 999_999
#: The Prometheus text exposition format, version 0.0.4.
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_PATHS = ("/healthz", "/metrics", "/leaderboard")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_BOARD_PARAMS = ("date", "page", "format")
#: The page uses nothing but its own inline style: no script, no outside request.
_CSP = (
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


def _response(
    status: HTTPStatus,
    body: bytes,
    content_type: str,
    *,
    cache: str = "no-store",
    extra: Iterable[tuple[str, str]] = (),
) -> Response:
    """A complete response. websockets closes the connection after any answer that is not
    an upgrade, so ``Connection: close`` tells the client the truth."""
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
            ("X-Content-Type-Options", "nosniff"),
            *extra,
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def _text(status: HTTPStatus, text: str, extra: Iterable[tuple[str, str]] = ()) -> Response:
    return _response(status, (text + "\n").encode(), "text/plain; charset=utf-8", extra=extra)


def _one_line(text: str, limit: int = 300) -> str:
    """Health checkers log the body: keep the reason on one short line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- /metrics -----------------------------------------------------------------------------


def render_metrics(server: RaceServer) -> str:
    """The server's figures in the Prometheus text format (0.0.4), as its own registry
    (``server.metrics``, prometheus_client) writes them: gauges read from their owners at
    scrape time, counters and histograms as the I/O layer and the writer keep them."""
    return server.metrics.render().decode()


# -- /leaderboard ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardQuery:
    """What ``/leaderboard`` was asked for, checked."""

    date: dt.date
    page: int
    format: str


def _single(fields: dict[str, list[str]], key: str) -> str | None:
    values = fields.get(key)
    if values is None:
        return None
    if len(values) > 1:
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{key} is given {len(values)} times; give it once")
    return values[0]


def _shown(value: str) -> str:
    """A bad value quoted back to its sender, shortened so an error stays one line."""
    return repr(value if len(value) <= 40 else value[:40] + "…")


def parse_board_query(query: str, today: dt.date) -> BoardQuery:
    """Check ``?date=YYYY-MM-DD&page=N&format=html|json``; HttpError(400) says what is wrong.

    Unknown parameters are refused rather than ignored, so that a typo such as ``?data=``
    is not silently answered with today's board.
    """
    try:
        fields = parse_qs(query, keep_blank_values=True, max_num_fields=10)
    except ValueError:
        raise HttpError(HTTPStatus.BAD_REQUEST, "too many query parameters") from None
    unknown = sorted(set(fields) - set(_BOARD_PARAMS))
    if unknown:
        raise HttpError(
            HTTPStatus.BAD_REQUEST,
            f"unknown parameter {_shown(unknown[0])}; use date, page and format",
        )
    date = today
    raw_date = _single(fields, "date")
    if raw_date is not None:
        try:
            if not _DATE.fullmatch(raw_date):
                raise ValueError(raw_date)
            date = dt.date.fromisoformat(raw_date)
        except ValueError:
            raise HttpError(
                HTTPStatus.BAD_REQUEST,
                f"date {_shown(raw_date)} is not a day like 2026-11-29 (YYYY-MM-DD)",
            ) from None
    page = 1
    raw_page = _single(fields, "page")
    if raw_page is not None:
        digits = raw_page.isascii() and raw_page.isdigit() and len(raw_page) <= 7
        if not digits or not 1 <= int(raw_page) <= MAX_PAGE_NUMBER:
            raise HttpError(
                HTTPStatus.BAD_REQUEST,
                f"page {_shown(raw_page)} is not a whole number from 1 to {MAX_PAGE_NUMBER}",
            )
        page = int(raw_page)
    fmt = _single(fields, "format")
    fmt = "html" if fmt is None else fmt
    if fmt not in ("html", "json"):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"format {_shown(fmt)} is not html or json")
    return BoardQuery(date, page, fmt)


@dataclass(frozen=True, slots=True)
class DailyPage:
    """One page of a day's board, with what may be shown of it already decided."""

    date: dt.date
    today: dt.date
    #: The day's game code, or None while it is secret (``daily.code_public``) or there
    #: was no deal.
    code: str | None
    total: int
    page: int
    rows: tuple[BoardEntry, ...]
    #: The length of the solver's winning line without wasted moves; None: not chosen yet.
    par: int | None = None
    #: SHA-256 of "<code>:<salt>", public from the day's start (None before commitments).
    commitment: str | None = None
    #: The salt, revealed with the code.
    salt: str | None = None
    #: A deal was chosen for the day (a past day may have had none: the server was off).
    dealt: bool = False
    #: When the day's code becomes public (wall time; ``daily.code_public_at``).
    public_at: float = 0.0

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))


def format_time(time_ms: int) -> str:
    """``0:51.7``: the terminal client's format (``protocol.times``), so a time reads alike."""
    return format_ms(time_ms)


def _row_json(e: BoardEntry) -> dict[str, Any]:
    # Not the player id: it is internal, and the board is public.
    return {
        "rank": e.rank,
        "name": e.name,
        "outcome": e.outcome,
        "time_ms": e.time_ms,
        "moves": e.moves,
        "score": e.score,
        "foundations": e.foundations,
        "undos": e.undos,
    }


def board_json(page: DailyPage) -> dict[str, Any]:
    """The page as JSON data: the same rows and the same secrecy as the HTML page."""
    return {
        "date": page.date.isoformat(),
        "code": page.code,
        "par": page.par,
        "commitment": page.commitment,
        "salt": page.salt,
        "total": page.total,
        "page": page.page,
        "pages": page.pages,
        "per_page": PAGE_SIZE,
        "rows": [_row_json(e) for e in page.rows],
    }


def _href(date: dt.date, page: int = 1, fmt: str = "html") -> str:
    params: dict[str, str] = {"date": date.isoformat()}
    if page > 1:
        params["page"] = str(page)
    if fmt != "html":
        params["format"] = fmt
    return "/leaderboard?" + urlencode(params)


def _long_date(date: dt.date) -> str:
    return f"{date:%A} {date.day} {date:%B %Y}"


def _short_date(date: dt.date) -> str:
    return f"{date.day} {date:%b}"


#: The server's pages (``server/templates``): autoescaped, so a value shows as text unless
#: a template marks it safe, and none does. Blocks and their lines are trimmed so that the
#: templates can be laid out readably and still give compact HTML.
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("server", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)


def render_board_html(page: DailyPage) -> str:
    """The page as a standalone HTML document (``templates/leaderboard.html``): inline
    style, no script, every stored text escaped (player names are whatever players typed)."""
    date, today = page.date, page.today
    public = dt.datetime.fromtimestamp(page.public_at, dt.UTC)
    return _TEMPLATES.get_template("leaderboard.html").render(
        page=page,
        public_at=f"{public:%H:%M} UTC on {_short_date(public.date())}",
        # The arrows never lead past today: nothing about a day shows before it begins.
        previous=min(date - dt.timedelta(days=1), today) if date > dt.date.min else None,
        following=date + dt.timedelta(days=1) if date < today else None,
        newer=min(page.page - 1, page.pages),
        rest=min(PAGE_SIZE, page.total - page.page * PAGE_SIZE),
        per_page=PAGE_SIZE,
        href=_href,
        time=format_time,
        long_date=_long_date,
        short_date=_short_date,
    )


# -- the handler ---------------------------------------------------------------------------


class HttpPages:
    """Answers plain HTTP requests for a ``RaceServer``; install as ``server.http``.

    It reads the server's parts when asked rather than copying them, so the figures are
    always the live ones.
    """

    def __init__(
        self, server: RaceServer, *, ping_timeout: float = 2.0, query_timeout: float = 5.0
    ) -> None:
        self.server = server
        #: A health check must answer quickly even when the database hangs: a probe that
        #: times out tells an operator less than a 503 with a reason.
        self.ping_timeout = ping_timeout
        #: A browser should hear "unavailable" rather than wait on a stalled database.
        self.query_timeout = query_timeout

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        """One response per request; None (the websocket's own answer) for ``/``."""
        # Origin-form ("/path?query") is all a browser, a probe or Prometheus sends.
        path, _, query = request.path.partition("?")
        if path == "/":
            # The websocket endpoint: websockets explains that it wants an upgrade (426).
            return None
        try:
            if path not in _PATHS:
                raise HttpError(
                    HTTPStatus.NOT_FOUND,
                    f"no page at {_shown(path)}; try /leaderboard, /healthz or /metrics",
                )
            if request.method != "GET":
                raise HttpError(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    f"{request.method} is not allowed here; only GET",
                    allow="GET",
                )
            if path == "/healthz":
                return await self.healthz()
            if path == "/metrics":
                return self.metrics()
            return await self.leaderboard(query)
        except HttpError as exc:
            extra = [("Allow", exc.allow)] if exc.allow else []
            return _text(exc.status, _one_line(exc.text), extra)

    async def healthz(self) -> Response:
        """200 "ok" only when the database answers: a server without its database cannot
        register anyone or announce any result, so it should not get new players."""
        try:
            await asyncio.wait_for(self.server.store.ping(), self.ping_timeout)
        except TimeoutError:
            return _text(
                HTTPStatus.SERVICE_UNAVAILABLE,
                f"database did not answer within {self.ping_timeout:g} s",
            )
        except Exception as exc:
            return _text(
                HTTPStatus.SERVICE_UNAVAILABLE,
                _one_line(f"database unavailable: {describe_error(exc)}"),
            )
        node = self.server.hub.node
        return _text(HTTPStatus.OK, f"ok node {node}" if node else "ok")

    def metrics(self) -> Response:
        return _response(HTTPStatus.OK, self.server.metrics.render(), METRICS_CONTENT_TYPE)

    async def leaderboard(self, query: str) -> Response:
        boards = self.server.boards
        wall = boards.wall()
        today = utc_date(wall)
        q = parse_board_query(query, today)
        if day_begun(q.date, wall):
            try:
                board, choice = await asyncio.wait_for(
                    asyncio.gather(
                        self.server.store.daily_board(
                            date=q.date, offset=(q.page - 1) * PAGE_SIZE, limit=PAGE_SIZE
                        ),
                        boards.dailies.stored(q.date),
                    ),
                    self.query_timeout,
                )
            except Exception as exc:
                reason = "timed out" if isinstance(exc, TimeoutError) else describe_error(exc)
                raise HttpError(
                    HTTPStatus.SERVICE_UNAVAILABLE,
                    f"the leaderboard is unavailable: the database {reason}",
                ) from None
        else:  # nothing about a day shows before it begins: not its par, not its deal
            board, choice = Board(0, 0, (), None), None
        # The same rule as Leaderboards and the rooms: ``daily.code_public``. The day's
        # commitment is public from its start, its salt with its code.
        code = str(choice.code) if choice is not None and code_public(q.date, wall) else None
        par = choice.par if choice is not None else None
        page = DailyPage(
            q.date,
            today,
            code,
            board.total,
            q.page,
            board.rows,
            par,
            commitment=choice.commitment if choice is not None else None,
            salt=choice.salt if choice is not None and code is not None else None,
            dealt=choice is not None,
            public_at=code_public_at(q.date),
        )
        # Not even a past day is final: a result kept in the spool through an outage
        # reaches its day's board late. So browsers ask again each time.
        if q.format == "json":
            body = json.dumps(board_json(page), separators=(",", ":")).encode()
            return _response(
                HTTPStatus.OK, body, "application/json; charset=utf-8", cache="no-cache"
            )
        return _response(
            HTTPStatus.OK,
            render_board_html(page).encode(),
            "text/html; charset=utf-8",
            cache="no-cache",
            extra=[("Content-Security-Policy", _CSP), ("Referrer-Policy", "no-referrer")],
        )
