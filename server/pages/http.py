"""Plain HTTP on the websocket port: the browser client (``/``, ``/r/ROOM``, ``/static/``),
``/healthz``, ``/metrics``, ``/leaderboard`` and a player's page (``/players/NAME``).

One port keeps running a server simple: a load balancer's health check, Prometheus and a
browser reach the server where the players do, through the same proxy and firewall rule.
websockets hands us every request that is not an upgrade (``RaceServer.http``); each gets
one response, then the connection closes, so none of this can hold a socket open. A request
with a body (``Content-Length`` other than 0, or ``Transfer-Encoding``) never reaches us:
websockets' parser refuses it and half-closes the connection without a response
(tests/server/pages/test_http.py shows what a client sees).

Everything here is read-only, and the leaderboard keeps the rule the wire protocol keeps
(``leaderboard.py``): a daily deal's game code stays hidden until its day is over, since
whoever knows the code knows the deal.

The browser client (``server/pages/web/``: plain ES modules and a stylesheet) is read from the
package once, when the pages are built (``WebClient``), and answered from memory: a
request's path is only ever looked up in that table, never joined onto a path on disk.
Its files live under ``/static/<version>/``, where the version is a hash of them all, so
a browser may keep them for good (``immutable``) and a new server's files get new URLs;
the page itself is revalidated each time (``no-cache``).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import datetime as dt
import email.utils
import functools
import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote, unquote, urlencode

import jinja2
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.dailylog import LogEntry
from protocol.messages import MAX_RACE_ID, Error
from protocol.times import format_ms

from ..domain.daily import code_public, code_public_at, day_begun, next_daily_ms, utc_date
from ..domain.leaderboard import player_page
from ..domain.records import Standing
from ..domain.replays import message_json
from ..rooms import ROOM_ALPHABET
from ..runtime.connection import Peer
from ..runtime.executor import RaceServer
from ..runtime.limits import address_key, client_address
from ..storage import dailylog
from ..storage.ratings import PlayerStats
from ..storage.sql import Board, BoardEntry, RoomRace, describe_error

T = TypeVar("T")

log = logging.getLogger("yukon.http")

__all__ = [
    "HttpPages",
    "WebClient",
    "StaticFile",
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

#: Post-mortems one address may have asked for over HTTP and not yet had answered.
POSTMORTEMS_PER_ADDRESS = 2
_PATHS = ("/healthz", "/metrics", "/leaderboard", "/daily/log")
#: ``/r/<room code>``: an invite link, the client page, which then joins that room.
_INVITE = re.compile(r"/r/(.*)")  # anything under /r/: a player's page, even a bad one
_ROOM_CODE = re.compile(f"[{ROOM_ALPHABET}]{{5}}", re.IGNORECASE)
_STATIC = "/static/"
_NOT_FOUND = "try / (the game), /leaderboard, /daily/log, /healthz or /metrics"
#: The client's file types, by ending. Only these files of ``server/pages/web`` are served;
#: others there (a vendored library's licence, the script that fetched it) are not.
CONTENT_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_WEB_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*")
#: What a browser may keep without asking again: the URL changes when the file does.
IMMUTABLE = "public, max-age=31536000, immutable"
#: ``/replay/<race>/<player>`` and ``/replay/<race>/<player>/postmortem`` (``replay``).
REPLAY_PREFIX = "/replay/"
#: ``/players/<name>``: a player's page (``player``, docs/protocol.md 4.27).
PLAYER_PREFIX = "/players/"
#: The status of each error a replay or a post-mortem can get over HTTP.
_REPLAY_STATUS = {
    "no_such_race": HTTPStatus.NOT_FOUND,
    "no_such_player": HTTPStatus.NOT_FOUND,
    "not_public": HTTPStatus.FORBIDDEN,
    "race_running": HTTPStatus.CONFLICT,
    "unavailable": HTTPStatus.SERVICE_UNAVAILABLE,
}
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
    (``server.runtime.metrics``, prometheus_client) writes them: gauges read from their owners at
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
    #: Each row's player's rating and streak, by player id (docs/protocol.md 4.27).
    standings: Mapping[int, Standing] = dataclasses.field(default_factory=dict)
    # -- dailydeck (issue 29): the countdown and the archive -------------------------------
    #: Milliseconds until the next daily (00:00 UTC) by the server's clock.
    next_daily_ms: int = 0
    #: The day is in the archive (its code is public and it had a deal): it can be played
    #: as practice at ``/#archive=YYYY-MM-DD``, and has an archive board.
    archived: bool = False
    #: The top of its archive board (each player's best practice run from the archive).
    archive_rows: tuple[BoardEntry, ...] = ()
    archive_total: int = 0

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))


def format_time(time_ms: int) -> str:
    """``0:51.7``: the terminal client's format (``protocol.times``), so a time reads alike."""
    return format_ms(time_ms)


def _row_json(
    e: BoardEntry, standing: Standing | None = None, today: dt.date | None = None
) -> dict[str, Any]:
    # Not the player id: it is internal, and the board is public.
    shown = {} if standing is None or today is None else _standing_json(standing, today)
    return shown | {
        "rank": e.rank,
        "name": e.name,
        "outcome": e.outcome,
        "time_ms": e.time_ms,
        "moves": e.moves,
        "score": e.score,
        "foundations": e.foundations,
        "undos": e.undos,
        "race": e.race,
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
        "rows": [_row_json(e, page.standings.get(e.player_id), page.today) for e in page.rows],
        **archive_json(page),
    }


def _standing_json(standing: Standing, today: dt.date) -> dict[str, Any]:
    return {"rating": standing.rating, "streak": standing.streak.current(today)}


def player_href(name: str) -> str:
    """A player's page: ``/players/`` and the name, percent-encoded UTF-8."""
    return PLAYER_PREFIX + quote(name, safe="")


# -- dailydeck (issue 29): the countdown and the archive on /leaderboard -----------------------


def archive_href(date: dt.date) -> str:
    """The browser client's address that plays ``date``'s deal from the archive."""
    return f"/#archive={date.isoformat()}"


def archive_json(page: DailyPage) -> dict[str, Any]:
    """The page's countdown and archive, as JSON (docs/protocol.md 1.6 and 4.28)."""
    return {
        "next_daily_ms": page.next_daily_ms,
        "archive": {
            "play": archive_href(page.date),
            "total": page.archive_total,
            "rows": [_row_json(e) for e in page.archive_rows],
        }
        if page.archived
        else None,
    }


def countdown_text(ms: int) -> str:
    """``5 h 12 min``: how long until the next daily, as the page says it (no script
    counts it down: it is the server's clock at the moment the page was made)."""
    minutes = -(-ms // 60_000)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


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


#: The server's pages (``server/pages/templates``): autoescaped, so a value shows as text unless
#: a template marks it safe, and none does. Blocks and their lines are trimmed so that the
#: templates can be laid out readably and still give compact HTML.
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("server.pages", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)


def _public_at(wall: float) -> str:
    """When a day's code goes public, as the page says it: a moment after the last day a
    date can hold (that of 9999-12-31) has no calendar date, so it is said in words."""
    try:
        public = dt.datetime.fromtimestamp(wall, dt.UTC)
    except (OverflowError, ValueError, OSError):
        return "after the last day this calendar holds"
    return f"{public:%H:%M} UTC on {_short_date(public.date())}"


def room_json(
    code: str, is_open: bool, last: RoomRace | None, node: str | None = None
) -> dict[str, Any]:
    """``/r/CODE?format=json`` (docs/protocol.md 1.6). ``node``: the node that holds the
    open room, the value ``?node=`` routes by, so that a client joins there at once
    (4.25); None on a server alone, for a closed room, or when the directory cannot say."""
    race: dict[str, Any] | None = None
    if last is not None:
        race = {
            "race": last.race,
            "code": last.code,
            "finished_ms": round(last.finished_at.timestamp() * 1000),
            "results": [
                {
                    "rank": r.rank,
                    "name": r.name,
                    "outcome": r.outcome,
                    "time_ms": r.time_ms,
                    "moves": r.moves,
                    "score": r.score,
                    "foundations": r.foundations,
                    "hinted": r.hinted,
                }
                for r in last.results
            ],
        }
    return {"room": code, "open": is_open, "node": node if is_open else None, "last_race": race}


def render_room_html(code: str | None, last: RoomRace | None, bad: str | None) -> str:
    """A closed room's page (``templates/room.html``): its last race, each runner's
    replay a link; or, with ``bad``, a malformed invite link's. No script, names escaped."""
    return _TEMPLATES.get_template("room.html").render(
        code=code,
        last=last,
        bad=bad,
        time=format_time,
        replay=lambda race, name: REPLAY_PREFIX + quote(race, safe="") + "/" + quote(name, safe=""),
        finished=(
            None if last is None else f"{last.finished_at.astimezone(dt.UTC):%d %b %Y, %H:%M} UTC"
        ),
    )


def _page(status: HTTPStatus, html: str) -> Response:
    """One of the server's own HTML pages (not the client's): inline style, no script."""
    return _response(
        status,
        html.encode(),
        "text/html; charset=utf-8",
        cache="no-cache",
        extra=[("Content-Security-Policy", _CSP), ("Referrer-Policy", "no-referrer")],
    )


def _json(status: HTTPStatus, data: dict[str, Any]) -> Response:
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return _response(status, body, "application/json; charset=utf-8", cache="no-cache")


def render_board_html(page: DailyPage) -> str:
    """The page as a standalone HTML document (``templates/leaderboard.html``): inline
    style, no script, every stored text escaped (player names are whatever players typed)."""
    date, today = page.date, page.today
    return _TEMPLATES.get_template("leaderboard.html").render(
        page=page,
        countdown=countdown_text(page.next_daily_ms),
        archive_href=archive_href,
        public_at=_public_at(page.public_at),
        # The arrows never lead past today: nothing about a day shows before it begins.
        # (Nor past the first or last day a date can hold: issue 28, item 19.)
        previous=min(date - dt.timedelta(days=1), today) if date > dt.date.min else None,
        following=date + dt.timedelta(days=1) if date < min(today, dt.date.max) else None,
        newer=min(page.page - 1, page.pages),
        rest=min(PAGE_SIZE, page.total - page.page * PAGE_SIZE),
        per_page=PAGE_SIZE,
        href=_href,
        time=format_time,
        long_date=_long_date,
        short_date=_short_date,
        player_href=player_href,
    )


# -- a player's page (docs/protocol.md 4.27) ---------------------------------------------------

#: The chart's drawing box, in SVG user units (it scales to the page's width).
CHART_W, CHART_H, CHART_PAD = 600, 160, 12


@dataclass(frozen=True, slots=True)
class RatingChart:
    """A rating history drawn as an SVG polyline: numbers only, so nothing a player typed
    goes into the drawing."""

    points: str
    low: int
    high: int
    first_ms: int
    last_ms: int
    last_x: float
    last_y: float


def rating_chart(ratings: tuple[tuple[int, int], ...]) -> RatingChart | None:
    """The history's points in the chart's box (oldest at the left, evenly spaced by race,
    so a burst of races in one evening does not squash into a line); None without any."""
    if not ratings:
        return None
    values = [r for _, r in ratings]
    low, high = min(values), max(values)
    span = max(high - low, 50)  # a flat history still draws as a line, mid-height
    mid = (high + low) / 2
    inner_w, inner_h = CHART_W - 2 * CHART_PAD, CHART_H - 2 * CHART_PAD
    n = len(values)
    xy = []
    for i, v in enumerate(values):
        x = CHART_PAD + (inner_w * i / (n - 1) if n > 1 else inner_w / 2)
        y = CHART_PAD + inner_h * (0.5 - (v - mid) / span)
        xy.append((round(x, 1), round(y, 1)))
    return RatingChart(
        points=" ".join(f"{x},{y}" for x, y in xy),
        low=low,
        high=high,
        first_ms=ratings[0][0],
        last_ms=ratings[-1][0],
        last_x=xy[-1][0],
        last_y=xy[-1][1],
    )


def player_json(stats: PlayerStats) -> dict[str, Any]:
    """``/players/NAME?format=json``: the fields of ``player_page``."""
    data = message_json(player_page(stats))
    return data


def render_player_html(stats: PlayerStats) -> str:
    """A player's page (``templates/player.html``): rating, its chart as inline SVG,
    races, wins, best times, the daily streak. No script; the name is escaped."""

    def day(ms: int) -> str:
        return _short_date(dt.datetime.fromtimestamp(ms / 1000, dt.UTC).date())

    return _TEMPLATES.get_template("player.html").render(
        p=stats,
        chart=rating_chart(stats.ratings),
        width=CHART_W,
        height=CHART_H,
        day=day,
        time=format_time,
        json_href=player_href(stats.name) + "?format=json",
    )


# -- /daily/log (docs/protocol.md 4.29) ------------------------------------------------------


def daily_log_json(entries: Sequence[LogEntry]) -> dict[str, Any]:
    """``/daily/log?format=json``: every entry, entry 0 first, and the head."""
    head = {"n": entries[-1].n, "hash": entries[-1].hash} if entries else None
    return {"entries": [e.to_json() for e in entries], "head": head}


def render_daily_log_html(entries: Sequence[LogEntry]) -> str:
    """The log as a page (``templates/dailylog.html``), newest first; no script."""
    return _TEMPLATES.get_template("dailylog.html").render(
        entries=list(reversed(entries)), count=len(entries)
    )


# -- the handler ---------------------------------------------------------------------------


class HttpPages:
    """Answers plain HTTP requests for a ``RaceServer``; install as ``server.pages.http``.

    It reads the server's parts when asked rather than copying them, so the figures are
    always the live ones.
    """

    def __init__(
        self,
        server: RaceServer,
        *,
        ping_timeout: float = 2.0,
        query_timeout: float = 5.0,
        web: WebClient | None = None,
    ) -> None:
        self.server = server
        #: The browser client, read once (the package's files unless a test gives others).
        self.web = web if web is not None else WebClient.packaged()
        #: A health check must answer quickly even when the database hangs: a probe that
        #: times out tells an operator less than a 503 with a reason.
        self.ping_timeout = ping_timeout
        #: A browser should hear "unavailable" rather than wait on a stalled database.
        self.query_timeout = query_timeout
        #: Post-mortems asked over HTTP and not yet answered, by address key.
        self._postmortems: dict[str, int] = {}

    async def __call__(self, connection: Peer, request: Request) -> Response | None:
        """One response per request (a websocket upgrade never comes here: see
        ``connection.Peer._request``). ``HEAD`` gets ``GET``'s status and headers without
        the body: link previews and uptime probes send it."""
        response = await self._get(connection, request)
        if request.method == "HEAD":
            return Response(response.status_code, response.reason_phrase, response.headers, b"")
        return response

    async def _get(self, connection: Peer, request: Request) -> Response:
        # Origin-form ("/path?query") is all a browser, a probe or Prometheus sends.
        path, _, query = request.path.partition("?")
        try:
            invite = _INVITE.fullmatch(path)
            if invite is not None:
                if request.method not in ("GET", "HEAD"):
                    raise HttpError(
                        HTTPStatus.METHOD_NOT_ALLOWED,
                        f"{request.method} is not allowed here; only GET (and HEAD)",
                        allow="GET, HEAD",
                    )
                return await self.invite(
                    invite.group(1),
                    query,
                    request.headers.get("If-None-Match"),
                    key=address_key(self._address(connection, request)),
                )
            web = self._web_route(path)
            if (
                web is None
                and path not in _PATHS
                and not path.startswith((REPLAY_PREFIX, PLAYER_PREFIX))
            ):
                raise HttpError(HTTPStatus.NOT_FOUND, f"no page at {_shown(path)}; {_NOT_FOUND}")
            if request.method not in ("GET", "HEAD"):
                raise HttpError(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    f"{request.method} is not allowed here; only GET (and HEAD)",
                    allow="GET, HEAD",
                )
            if web is not None:
                return self.web.respond(web, request.headers.get("If-None-Match"))
            if path == "/healthz":
                return await self.healthz()
            if path == "/metrics":
                return self.metrics()
            if path.startswith(REPLAY_PREFIX):
                return await self.replay(
                    path,
                    query,
                    request.headers.get("If-None-Match"),
                    key=address_key(self._address(connection, request)),
                )
            if path.startswith(PLAYER_PREFIX):
                return await self.player(path, query)
            if path == "/daily/log":
                return await self.daily_log(query)
            return await self.leaderboard(query)
        except HttpError as exc:
            extra = [("Allow", exc.allow)] if exc.allow else []
            return _text(exc.status, _one_line(exc.text), extra)

    def _web_route(self, path: str) -> str | None:
        """The client file a path names (``""``: the page, ``WebClient.INVITE``: the page
        at an invite link), None if it names none.

        Only a table lookup: the path is compared with the names read at start, so no
        ``..``, encoded dot, NUL or long path can reach anything else. A malformed invite
        link is a 404 that says what a room code looks like.
        """
        if path == "/":
            return ""
        if path.startswith(_STATIC):
            version, _, name = path[len(_STATIC) :].partition("/")
            if version == self.web.version and name in self.web.files:
                return name
            raise HttpError(
                HTTPStatus.NOT_FOUND,
                f"no file at {_shown(path)}: this server's client files are under"
                f" {_STATIC}{self.web.version}/ (reload the page)",
            )
        return None

    def _address(self, connection: Peer, request: Request) -> str:
        """The client's address, as the websocket side counts it (a trusted proxy's
        forwarded one behind a proxy)."""
        address = connection.remote_address[0] if connection.remote_address else ""
        proxies = self.server.trusted_proxies
        if not proxies:
            return address
        return client_address(address, request.headers.get_all("X-Forwarded-For"), proxies)

    async def invite(
        self, raw: str, query: str, if_none_match: str | None, *, key: str = ""
    ) -> Response:
        """``/r/CODE``, a room's invite link (docs/protocol.md 1.6). An open room: the
        client's page, which joins it. A closed one (or a malformed code): a page that says
        so and shows the room's last race, with a replay link per runner, before any name
        is asked (issue 28, item 5); ``?format=json`` says the same to other clients."""
        fmt = "json" if parse_qs(query).get("format") == ["json"] else "html"
        if _ROOM_CODE.fullmatch(raw) is None:
            text = (
                f"no room code {_shown(raw)}: an invite link is /r/ and the room's 5"
                f" characters from {ROOM_ALPHABET}"
            )
            if fmt == "json":
                return _json(HTTPStatus.NOT_FOUND, {"error": "no_such_room", "text": text})
            return _page(HTTPStatus.NOT_FOUND, render_room_html(None, None, text))
        code = raw.upper()
        hub, now = self.server.hub, self.server.listener.loop.time()
        wait = hub.guess_wait(key, now)
        if wait > 0:  # guessing codes costs here as it does on the websocket (5.5)
            text = (
                "too many room codes that name no room from your address:"
                f" try again in {max(1, round(wait))} s"
            )
            if fmt == "json":
                return _json(
                    HTTPStatus.TOO_MANY_REQUESTS, {"error": "too_many_guesses", "text": text}
                )
            return _page(HTTPStatus.TOO_MANY_REQUESTS, render_room_html(None, None, text))
        if fmt == "html":
            is_open, _ = await self._room_node(code)
            if is_open:
                return self.web.respond(WebClient.INVITE, if_none_match)
            hub.room_missed(key, now)
            return _page(
                HTTPStatus.NOT_FOUND, render_room_html(code, await self._last_race(code), None)
            )
        if parse_qs(query).get("for") == ["join"]:
            # A client about to join looks the room's node up (4.25): an open room's last
            # race is not asked of the database, which was most of the look-up's time.
            is_open, node = await self._room_node(code)
            last = None if is_open else await self._last_race(code)
        else:
            # Both questions at once: the slower of the directory and the database.
            (is_open, node), last = await asyncio.gather(
                self._room_node(code), self._last_race(code)
            )
        if not is_open:
            hub.room_missed(key, now)
        return _json(HTTPStatus.OK, room_json(code, is_open, last, node))

    async def _room_node(self, code: str) -> tuple[bool, str | None]:
        """Whether a node holds an ordinary room with this code, and which (the id that
        ``?node=`` routes by): this server's hub, or on a cluster the directory's owner of
        the code (``Node.owner``). When the directory cannot say, the room counts as open
        (the client's page then learns it from the websocket) and its node is unknown
        (None: the client connects anywhere, as before). Alone, the node is None too:
        there is nowhere else to go."""
        if self.server.hub.room_open(code):
            return True, self.server.node.node or None
        try:
            owner = await asyncio.wait_for(self.server.node.owner(code), self.query_timeout)
        except Exception as exc:
            log.info("/r/%s: the directory did not answer (%s)", code, describe_error(exc))
            return True, None
        return owner is not None, owner or None

    async def _last_race(self, code: str) -> RoomRace | None:
        """The room code's newest stored race, or None (also when the database does not
        answer in time: the page still says whether the room is open)."""
        try:
            return await asyncio.wait_for(
                self.server.store.last_room_race(room=code), self.query_timeout
            )
        except Exception as exc:
            log.info("/r/%s: no last race (%s)", code, describe_error(exc))
            return None

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
            board, choice = await self._leaderboard_query(
                asyncio.gather(
                    self.server.store.daily_board(
                        date=q.date, offset=(q.page - 1) * PAGE_SIZE, limit=PAGE_SIZE
                    ),
                    boards.dailies.stored(q.date),
                )
            )
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
            standings=await self._standings(board, today),
        )
        page = await self._countdown_and_archive(page, wall)
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

    async def daily_log(self, query: str) -> Response:
        """The daily's log: append-only, so a browser may keep a copy, but always asks
        again (``no-cache``) since it grows."""
        fmt = _single(parse_qs(query, max_num_fields=10), "format") or "html"
        if fmt not in ("html", "json"):
            raise HttpError(HTTPStatus.BAD_REQUEST, "format is html or json")
        entries = await self._database(dailylog.entries(self.server.store.engine), "the log")
        if fmt == "json":
            body = json.dumps(daily_log_json(entries), separators=(",", ":")).encode()
            return _response(
                HTTPStatus.OK, body, "application/json; charset=utf-8", cache="no-cache"
            )
        return _response(
            HTTPStatus.OK,
            render_daily_log_html(entries).encode(),
            "text/html; charset=utf-8",
            cache="no-cache",
            extra=[("Content-Security-Policy", _CSP), ("Referrer-Policy", "no-referrer")],
        )

    async def _standings(self, board: Board, today: dt.date) -> Mapping[int, Standing]:
        """The rows' players' ratings and streaks; none when the database cannot say
        (the board itself was read: it still shows)."""
        ids = [e.player_id for e in board.rows]
        try:
            return await asyncio.wait_for(
                self.server.store.standings(ids, today=today), self.query_timeout
            )
        except Exception as exc:
            log.warning("leaderboard: no ratings or streaks (%s)", describe_error(exc))
            return {}

    async def player(self, path: str, query: str) -> Response:
        """``/players/<name>``: a player's page, HTML or (``?format=json``) the fields of
        ``player_page``; an unknown name is a 404 (JSON: ``unknown_player``)."""
        fmt = parse_qs(query).get("format", ["html"])
        as_json = fmt == ["json"]
        try:
            name = unquote(path[len(PLAYER_PREFIX) :], errors="strict")
        except UnicodeDecodeError:
            name = ""
        stats = None
        if name and len(name) <= 64 and "/" not in name:
            try:
                stats = await self._database(
                    self.server.boards.player_stats(name), "the player's page"
                )
            except HttpError as exc:
                if as_json:
                    return _json(exc.status, {"error": "unavailable", "text": exc.text})
                raise
        if stats is None:
            text = f"no player is called {_shown(name)}"
            if as_json:
                return _json(HTTPStatus.NOT_FOUND, {"error": "unknown_player", "text": text})
            raise HttpError(HTTPStatus.NOT_FOUND, text)
        if as_json:
            return _json(HTTPStatus.OK, player_json(stats))
        return _page(HTTPStatus.OK, render_player_html(stats))

    async def _leaderboard_query(self, work: Awaitable[T]) -> T:
        """``/leaderboard``'s database work (``_database``)."""
        return await self._database(work, "the leaderboard")

    async def _database(self, work: Awaitable[T], what: str) -> T:
        """A page's database work within ``query_timeout``; a database that fails or is
        too slow is a 503 that says so ("``what`` is unavailable: the database ...")."""
        try:
            return await asyncio.wait_for(work, self.query_timeout)
        except Exception as exc:
            reason = "timed out" if isinstance(exc, TimeoutError) else describe_error(exc)
            raise HttpError(
                HTTPStatus.SERVICE_UNAVAILABLE, f"{what} is unavailable: the database {reason}"
            ) from None

    async def _countdown_and_archive(self, page: DailyPage, wall: float) -> DailyPage:
        """The countdown to the next daily, and for a day in the archive (its code public,
        a deal stored) the top of its archive board (issue 29; docs/protocol.md 4.28)."""
        page = dataclasses.replace(page, next_daily_ms=next_daily_ms(wall))
        if page.code is None or not page.dealt:
            return page
        archive = await self._leaderboard_query(
            self.server.store.archive_board(date=page.date, limit=PAGE_SIZE)
        )
        return dataclasses.replace(
            page, archived=True, archive_rows=archive.rows, archive_total=archive.total
        )

    async def replay(
        self, path: str, query: str, if_none_match: str | None = None, *, key: str = ""
    ) -> Response:
        """``/replay/<race>/<player>[/postmortem]?format=json``: a run's replay (every
        action) or its post-mortem as JSON, the wire's ``replay_page`` and
        ``postmortem_answer`` fields; an error as ``{"error": code, "text": ...}``.
        Without ``?format=json``, ``/replay/<race>/<player>`` is the browser client's page
        (a link a player shares), which fetches the JSON and plays the run."""
        parts = path[len(REPLAY_PREFIX) :].split("/")
        what = "replay"
        if len(parts) == 3 and parts[2] == "postmortem":
            what = "postmortem"
            parts = parts[:2]
        try:
            race, player = (unquote(part, errors="strict") for part in parts)
        except (ValueError, UnicodeDecodeError):
            raise HttpError(
                HTTPStatus.NOT_FOUND,
                "a replay is /replay/<race>/<player>, or /replay/<race>/<player>/postmortem",
            ) from None
        if not race or not player or len(race) > MAX_RACE_ID or len(player) > 64:
            raise HttpError(HTTPStatus.NOT_FOUND, "no such race or player")
        if parse_qs(query).get("format") != ["json"]:
            if what == "postmortem":
                raise HttpError(HTTPStatus.NOT_FOUND, "a post-mortem is only JSON: ?format=json")
            # The page for people: the browser client, which opens this run's replay.
            return self.web.respond(WebClient.REPLAY, if_none_match)
        replays = self.server.replays
        if what == "postmortem":
            # The server's 16 post-mortems are shared with every player: one address may
            # hold at most POSTMORTEMS_PER_ADDRESS of them (docs/protocol.md 5.5).
            held = self._postmortems.get(key, 0)
            if key and held >= POSTMORTEMS_PER_ADDRESS:
                text = f"{held} post-mortems from your address are being worked out: wait for them"
                body = json.dumps({"error": "too_many_queries", "text": text}).encode()
                return _response(
                    HTTPStatus.TOO_MANY_REQUESTS, body, "application/json; charset=utf-8"
                )
            self._postmortems[key] = held + 1
            try:
                answer = await replays.postmortem(race, player)
            finally:
                left = self._postmortems.get(key, 1) - 1
                if left > 0:
                    self._postmortems[key] = left
                else:
                    self._postmortems.pop(key, None)
        else:
            answer = await replays.replay_whole(race, player)
        if isinstance(answer, Error):
            data: dict[str, Any] = {"error": answer.code, "text": answer.text}
            status = _REPLAY_STATUS.get(answer.code, HTTPStatus.SERVICE_UNAVAILABLE)
        else:
            data, status = message_json(answer), HTTPStatus.OK
        body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
        return _response(status, body, "application/json; charset=utf-8", cache="no-cache")


# -- the browser client -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file of the client as it is served: its bytes, type and entity tag."""

    body: bytes
    content_type: str
    etag: str


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _served(name: str) -> bool:
    return "." in name and "." + name.rpartition(".")[2] in CONTENT_TYPES


def _read_tree(root: Traversable, prefix: str = "") -> dict[str, bytes]:
    """Every file to serve under ``root`` by its relative name (``vendor/msgpack.mjs``),
    read now."""
    files: dict[str, bytes] = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        name = prefix + entry.name
        if entry.is_dir():
            files.update(_read_tree(entry, name + "/"))
        elif _served(name):
            files[name] = entry.read_bytes()
    return files


class WebClient:
    """The browser client: its page and its files, read and built once, served from memory.

    ``files`` maps a relative name to its content. The page is rendered from
    ``templates/client.html`` (the shared ``base.html`` frame and style) with the files'
    URLs in it; its Content-Security-Policy allows scripts and styles from this server
    only, the one inline style by its hash, and websockets back to this server
    (``connect-src 'self'``, which covers ``ws:``/``wss:`` on the page's own host and port).
    """

    #: The modules the page loads, in the order it needs them (``modulepreload``): the
    #: browser then fetches them all at once instead of one import after another.
    ENTRY = "app.js"
    #: ``respond``'s name for the page at an invite link (no file can be called that).
    INVITE = "/r/"
    #: ``respond``'s name for the page at a replay link, ``/replay/<race>/<player>``.
    REPLAY = "/replay/"
    #: Modules loaded only when needed (``import()``: a replay opens, a past day is
    #: checked against the daily's log), not preloaded by the page: a race never needs
    #: them, so the first load does not carry them.
    LAZY = frozenset({"replay.js", "deal.js", "dailylog.js"})

    def __init__(self, files: Mapping[str, bytes]) -> None:
        for name in files:
            if _WEB_NAME.fullmatch(name) is None or not _served(name):
                raise ValueError(
                    f"server/pages/web/{name}: not a client file this server can serve"
                )
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        #: Changes whenever any file does: part of every file's URL.
        self.version = digest.hexdigest()[:16]
        self.files: dict[str, StaticFile] = {
            name: StaticFile(body, CONTENT_TYPES["." + name.rpartition(".")[2]], _etag(body))
            for name, body in files.items()
        }
        modules = sorted(
            n
            for n in files
            if n.endswith((".js", ".mjs")) and n != self.ENTRY and n not in self.LAZY
        )

        def render(root: str) -> str:
            # Every URL relative to the page (``root`` leads back to the server's root
            # from it), so that behind a proxy that serves the game under a path prefix
            # (https://example.org/yukon/) the page still finds its files.
            return _TEMPLATES.get_template("client.html").render(
                root=root,
                static=f"{root}{_STATIC[1:]}{self.version}",
                entry=self.ENTRY,
                modules=modules,
                styles=sorted(n for n in files if n.endswith(".css")),
            )

        html, invite_html, replay_html = render(""), render("../"), render("../../")
        styles = re.findall(r"<style>(.*?)</style>", html, re.S)
        hashes = " ".join(
            "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
            for s in styles
        )
        #: No inline script at all; the one inline style (base.html's) by its hash.
        self.csp = (
            "default-src 'none'; script-src 'self'; "
            f"style-src 'self' {hashes}; connect-src 'self'; img-src 'self' data:; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        #: The page at ``/``, and the same page at ``/r/<room>`` (its URLs one level up).
        self.page = StaticFile(html.encode(), "text/html; charset=utf-8", _etag(html.encode()))
        self.invite_page = StaticFile(
            invite_html.encode(), "text/html; charset=utf-8", _etag(invite_html.encode())
        )
        #: The same page at ``/replay/<race>/<player>`` (its URLs two levels up).
        self.replay_page = StaticFile(
            replay_html.encode(), "text/html; charset=utf-8", _etag(replay_html.encode())
        )

    @classmethod
    def load(cls) -> WebClient:
        """The client shipped in this package (``server/pages/web``, package data)."""
        return cls(_read_tree(resources.files("server.pages") / "web"))

    @staticmethod
    @functools.cache
    def packaged() -> WebClient:
        """``load``, once per process: every server in it serves the same files."""
        return WebClient.load()

    def size(self) -> int:
        """Bytes of every file the client is made of (the page, as ``/`` serves it,
        included)."""
        return len(self.page.body) + sum(len(f.body) for f in self.files.values())

    def initial_size(self) -> int:
        """Bytes a first load fetches: the page and every file but the ``LAZY`` ones."""
        return self.size() - self.lazy_size()

    def lazy_size(self) -> int:
        """Bytes a replay adds when it opens: the ``LAZY`` modules."""
        return sum(len(f.body) for n, f in self.files.items() if n in self.LAZY)

    def respond(self, name: str, if_none_match: str | None) -> Response:
        """The page (``name`` "", or ``INVITE`` at an invite link), or one file; 304 when
        the browser has it already."""
        if name in ("", self.INVITE, self.REPLAY):
            pages = {"": self.page, self.INVITE: self.invite_page, self.REPLAY: self.replay_page}
            item, cache = pages[name], "no-cache"
            extra = [
                ("Content-Security-Policy", self.csp),
                ("Referrer-Policy", "no-referrer"),
                ("ETag", item.etag),
            ]
        else:
            item, cache = self.files[name], IMMUTABLE
            extra = [("ETag", item.etag)]
        if if_none_match is not None and item.etag in (t.strip() for t in if_none_match.split(",")):
            headers = Headers(
                [
                    ("Date", email.utils.formatdate(usegmt=True)),
                    ("Connection", "close"),
                    ("Content-Length", "0"),
                    ("Cache-Control", cache),
                    *extra,
                ]
            )
            return Response(HTTPStatus.NOT_MODIFIED.value, "Not Modified", headers, b"")
        return _response(HTTPStatus.OK, item.body, item.content_type, cache=cache, extra=extra)
