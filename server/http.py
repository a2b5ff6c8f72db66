"""Plain HTTP on the websocket port: ``/healthz``, ``/metrics`` and ``/leaderboard``.

One port keeps running a server simple: a load balancer's health check, Prometheus and a
browser reach the server where the players do, through the same proxy and firewall rule.
websockets hands us every request that is not an upgrade (``RaceServer.http``); each gets
one response, then the connection closes, so none of this can hold a socket open.

Everything here is read-only, and the leaderboard keeps the rule the wire protocol keeps
(``leaderboard.py``): a daily deal's game code stays hidden until its day is over, since
whoever knows the code knows the deal.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlencode

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


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


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


_STYLE = """
:root{color-scheme:light dark;--bg:#f3f1ea;--card:#fffdf8;--ink:#1d2320;--muted:#687069;
--line:#e6e1d5;--chip:#efebe1;--hover:#f8f5ee;--accent:#1b6b47;--accent-ink:#fff;
--gold:#e2b93b;--silver:#c3cad2;--bronze:#d29a68;--won-bg:#dcf1e4;--won:#17603d;
--other-bg:#ecebe6;--other:#545a55;--late-bg:#fbecd0;--late:#8a5a00;--gone-bg:#f7dedb;
--gone:#9b2c22;--live-bg:#e2f0ff;--live:#1d5b9c;--shadow:0 1px 2px rgba(40,35,20,.05),
0 10px 30px rgba(40,35,20,.06)}
@media (prefers-color-scheme:dark){:root{--bg:#101412;--card:#181d1a;--ink:#e7e9e4;
--muted:#99a29b;--line:#28302b;--chip:#222a25;--hover:#1d2420;--accent:#5cc08e;
--accent-ink:#0b1a12;--won-bg:#173526;--won:#8fdcb2;--other-bg:#262c28;--other:#b4bbb5;
--late-bg:#3a2e12;--late:#f0c66b;--gone-bg:#3b1d1a;--gone:#f0a39a;--live-bg:#15283d;
--live:#8cc2f5;--shadow:none}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:900px;margin:0 auto;padding:40px 20px 56px}
a{color:var(--accent)}
.eyebrow{margin:0;font-size:.78rem;font-weight:700;letter-spacing:.14em;
text-transform:uppercase;color:var(--accent)}
.eyebrow .suits{letter-spacing:.2em;margin-right:.5em}
.suits .red{color:#c0392b}
h1{margin:.25em 0 .35em;font-size:clamp(1.7rem,4.5vw,2.5rem);line-height:1.15;
letter-spacing:-.01em}
.deal{margin:0;color:var(--muted)}
code{font:600 .92em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
background:var(--chip);padding:.15em .45em;border-radius:6px;color:var(--ink)}
code.hash{font-size:.75em;word-break:break-all}
.pill{display:inline-block;padding:.2em .7em;border-radius:999px;font-size:.85rem;
font-weight:700;letter-spacing:.02em;background:var(--live-bg);color:var(--live);
vertical-align:middle;margin-left:.35em}
nav.days{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;
gap:10px;margin:28px 0 14px}
nav.days form{display:flex;gap:8px;align-items:center}
.btn,button,input[type=date]{font:inherit;font-size:.92rem;color:var(--ink);
background:var(--card);border:1px solid var(--line);border-radius:10px;padding:7px 14px;
text-decoration:none;line-height:1.3;display:inline-block}
.btn:hover,button:hover{border-color:var(--accent);color:var(--accent)}
.btn.off{visibility:hidden}
button{cursor:pointer;background:var(--accent);border-color:var(--accent);
color:var(--accent-ink);font-weight:600}
button:hover{filter:brightness(1.08);color:var(--accent-ink)}
.summary{margin:0 0 10px;color:var(--muted);font-size:.92rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:16px;
box-shadow:var(--shadow);overflow:hidden}
.scroll{overflow-x:auto}
table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
th{padding:12px 14px;text-align:left;font-size:.72rem;font-weight:700;letter-spacing:.08em;
text-transform:uppercase;color:var(--muted);border-bottom:1px solid var(--line);
white-space:nowrap}
td{padding:11px 14px;border-bottom:1px solid var(--line);vertical-align:middle}
tbody tr:last-child td{border-bottom:0}
tbody tr:hover{background:var(--hover)}
.num{text-align:right;white-space:nowrap}
td.rank{width:3.2rem}
.rank span{display:inline-grid;place-items:center;min-width:30px;height:30px;padding:0 6px;
border-radius:999px;font-weight:700;font-size:.85rem;background:var(--chip)}
tr.r1 .rank span{background:var(--gold);color:#2b2100}
tr.r2 .rank span{background:var(--silver);color:#1d242b}
tr.r3 .rank span{background:var(--bronze);color:#2b1600}
td.name{font-weight:600;overflow-wrap:anywhere;min-width:7rem}
.badge{display:inline-block;padding:.15em .65em;border-radius:999px;font-size:.78rem;
font-weight:700;background:var(--other-bg);color:var(--other);white-space:nowrap}
.badge.won{background:var(--won-bg);color:var(--won)}
.badge.timeout,.badge.stuck{background:var(--late-bg);color:var(--late)}
.badge.abandoned{background:var(--gone-bg);color:var(--gone)}
.cards{color:var(--muted);font-size:.85rem;margin-left:.45em;white-space:nowrap}
.time{font-weight:600}
.empty{padding:48px 20px;text-align:center;color:var(--muted)}
.empty strong{display:block;color:var(--ink);font-size:1.1rem;margin-bottom:4px}
nav.pages{display:flex;align-items:center;justify-content:space-between;gap:10px;
margin:14px 0 0;color:var(--muted);font-size:.92rem}
footer{margin-top:32px;color:var(--muted);font-size:.85rem}
footer p{margin:.3em 0}
@media (max-width:600px){main{padding:24px 10px 40px}table{font-size:.86rem}
th,td{padding:9px 5px}th{font-size:.6rem;letter-spacing:.02em}td.rank{width:auto}
th:first-child,td:first-child{padding-left:10px}th:last-child,td:last-child{padding-right:10px}
.rank span{min-width:24px;height:24px;font-size:.74rem}td.name{min-width:4.6rem}
.time{font-weight:600}.badge{font-size:.68rem;padding:.1em .45em}
.cards{display:block;margin:2px 0 0;font-size:.72rem}
nav.days{justify-content:center}nav.days .btn{flex:1;text-align:center}
nav.days .btn.off{display:none}nav.days form{order:-1;width:100%;justify-content:center}}
"""


def _row_html(e: BoardEntry) -> str:
    outcome = _esc(e.outcome)
    cards = "" if e.outcome == "won" else f'<span class="cards">{e.foundations}/52 cards</span>'
    rank_class = f' class="r{e.rank}"' if e.rank <= 3 else ""
    return (
        f"<tr{rank_class}>"
        f'<td class="rank"><span>{e.rank}</span></td>'
        f'<td class="name"><bdi>{_esc(e.name)}</bdi></td>'
        f'<td><span class="badge {outcome}">{outcome}</span>{cards}</td>'
        f'<td class="num time">{format_time(e.time_ms)}</td>'
        f'<td class="num">{e.moves}</td>'
        f'<td class="num">{e.score}</td>'
        f'<td class="num">{e.undos}</td>'
        "</tr>"
    )


def render_board_html(page: DailyPage) -> str:
    """The page as a standalone HTML document: inline style, no script, every stored text
    escaped (player names are whatever players typed)."""
    date, today = page.date, page.today
    is_today = date == today
    title = f"Daily deal, {date.isoformat()}"
    if page.code is not None:
        deal = f"Deal <code>{_esc(page.code)}</code>"
    elif date > today:
        deal = "This day has not begun."
    elif not page.dealt and date < today:
        deal = "There was no daily deal on this day."
    else:
        public = dt.datetime.fromtimestamp(page.public_at, dt.UTC)
        when = f"{public:%H:%M} UTC on {_short_date(public.date())}"
        deal = (
            f"The deal's code stays secret until {when},"
            " once no attempt of the day can still be running."
        )
    if page.par is not None:
        deal += f" Par: {page.par} moves (the solver's win without wasted moves)."
    if page.commitment is not None:
        deal += f'<br>Commitment: <code class="hash">{_esc(page.commitment)}</code>'
        deal += (
            " (SHA-256 of the code, a colon and a salt, both shown once the code is public)"
            if page.salt is None
            else f', salt <code class="hash">{_esc(page.salt)}</code>:'
            " SHA-256 of the code, a colon and the salt gives the commitment"
        )
    live = ' <span class="pill">today</span>' if is_today else ""

    # The arrows never lead past today: nothing about a day shows before it begins.
    previous = min(date - dt.timedelta(days=1), today) if date > dt.date.min else None
    following = date + dt.timedelta(days=1) if date < today else None
    prev_link = (
        f'<a class="btn" rel="prev" href="{_esc(_href(previous))}">'
        f"&larr; {_esc(_short_date(previous))}</a>"
        if previous is not None
        else '<span class="btn off">&larr;</span>'
    )
    if following is not None:
        next_link = (
            f'<a class="btn" rel="next" href="{_esc(_href(following))}">'
            f"{_esc(_short_date(following))} &rarr;</a>"
        )
    elif date > today:
        next_link = f'<a class="btn" href="{_esc(_href(today))}">Today &rarr;</a>'
    else:
        next_link = '<span class="btn off">&rarr;</span>'

    picker = (
        '<form method="get" action="/leaderboard">'
        '<label for="date" hidden>Day</label>'
        f'<input type="date" id="date" name="date" value="{date.isoformat()}"'
        f' max="{today.isoformat()}" required>'
        "<button>Show</button></form>"
    )

    summary = ""
    if page.total:
        players = "player" if page.total == 1 else "players"
        summary = f"{page.total} {players}"
        if page.pages > 1:
            summary += f" &middot; page {page.page} of {page.pages}"

    if page.rows:
        body = (
            '<div class="scroll"><table><thead><tr>'
            '<th class="rank">Rank</th><th>Player</th><th>Outcome</th>'
            '<th class="num">Time</th><th class="num">Moves</th><th class="num">Score</th>'
            '<th class="num">Undos</th></tr></thead><tbody>'
            + "".join(_row_html(e) for e in page.rows)
            + "</tbody>"
            "</table></div>"
        )
    elif page.total:
        body = (
            f'<div class="empty"><strong>Page {page.page} is empty.</strong>'
            f"This day's board has {page.pages} page{'s' if page.pages > 1 else ''}: "
            f'<a href="{_esc(_href(date))}">back to the top</a>.</div>'
        )
    elif date > today:
        body = '<div class="empty"><strong>This day has not begun.</strong>Come back then.</div>'
    elif is_today:
        body = (
            '<div class="empty"><strong>No results yet today.</strong>'
            "Be the first to finish today's deal.</div>"
        )
    else:
        body = (
            '<div class="empty"><strong>No results for this day.</strong>'
            "Nobody finished this day's deal.</div>"
        )

    pager = ""
    if page.pages > 1:
        newer = (
            f'<a class="btn" href="{_esc(_href(date, min(page.page - 1, page.pages)))}">'
            f"&larr; Previous {PAGE_SIZE}</a>"
            if page.page > 1
            else '<span class="btn off">&larr;</span>'
        )
        rest = min(PAGE_SIZE, page.total - page.page * PAGE_SIZE)
        older = (
            f'<a class="btn" href="{_esc(_href(date, page.page + 1))}">Next {rest} &rarr;</a>'
            if rest > 0
            else '<span class="btn off">&rarr;</span>'
        )
        pager = (
            f'<nav class="pages" aria-label="Pages">{newer}'
            f"<span>Page {page.page} of {page.pages}</span>{older}</nav>"
        )

    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{_esc(title)} &middot; Yukon Race</title>
<link rel="icon" href="data:,">
<style>{_STYLE}</style>
</head>
<body>
<main>
<header>
<p class="eyebrow"><span class="suits" aria-hidden="true">&spades;<span class="red">&hearts;\
</span>&clubs;<span class="red">&diams;</span></span>Yukon Race &middot; daily deal</p>
<h1>{_esc(_long_date(date))}{live}</h1>
<p class="deal">{deal}</p>
</header>
<nav class="days" aria-label="Days">{prev_link}{picker}{next_link}</nav>
{f'<p class="summary">{summary}</p>' if summary else ""}
<section class="card">{body}</section>
{pager}
<footer>
<p>Only each player's first attempt counts. Winners rank by time, then moves; everyone
else after them by cards on the foundations, then score, then time. Days change at
00:00 UTC.</p>
<p><a href="{_esc(_href(date, page.page, "json"))}">This page as JSON</a></p>
</footer>
</main>
</body>
</html>
"""


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
        return _text(HTTPStatus.OK, "ok")

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
