"""``/leaderboard`` (a day's board, HTML or JSON, with the daily's countdown and its
archive board: issue 29) and ``/metrics``' text: what the pages show, decided and drawn.

The leaderboard keeps the rule the wire protocol keeps (``server/domain/leaderboard.py``): a
daily deal's game code stays hidden until its day is over, since whoever knows the code
knows the deal (``daily.code_public``, decided by ``HttpPages.leaderboard``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode

from ..domain.records import Standing
from ..storage.sql import BoardEntry
from .common import TEMPLATES, HttpError, format_time, player_href, short_date, shown

if TYPE_CHECKING:
    from ..runtime.executor import RaceServer

#: Rows on one leaderboard page (the wire protocol's largest page too).
PAGE_SIZE = 50
#: The highest ``?page=``: deep enough for any real board, small enough to keep the
#: offset an ordinary integer for every database.
MAX_PAGE_NUMBER = 999_999
#: The Prometheus text exposition format, version 0.0.4.
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_BOARD_PARAMS = ("date", "page", "format")


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
            f"unknown parameter {shown(unknown[0])}; use date, page and format",
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
                f"date {shown(raw_date)} is not a day like 2026-11-29 (YYYY-MM-DD)",
            ) from None
    page = 1
    raw_page = _single(fields, "page")
    if raw_page is not None:
        digits = raw_page.isascii() and raw_page.isdigit() and len(raw_page) <= 7
        if not digits or not 1 <= int(raw_page) <= MAX_PAGE_NUMBER:
            raise HttpError(
                HTTPStatus.BAD_REQUEST,
                f"page {shown(raw_page)} is not a whole number from 1 to {MAX_PAGE_NUMBER}",
            )
        page = int(raw_page)
    fmt = _single(fields, "format")
    fmt = "html" if fmt is None else fmt
    if fmt not in ("html", "json"):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"format {shown(fmt)} is not html or json")
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


def _public_at(wall: float) -> str:
    """When a day's code goes public, as the page says it: a moment after the last day a
    date can hold (that of 9999-12-31) has no calendar date, so it is said in words."""
    try:
        public = dt.datetime.fromtimestamp(wall, dt.UTC)
    except (OverflowError, ValueError, OSError):
        return "after the last day this calendar holds"
    return f"{public:%H:%M} UTC on {short_date(public.date())}"


def render_board_html(page: DailyPage) -> str:
    """The page as a standalone HTML document (``templates/leaderboard.html``): inline
    style, no script, every stored text escaped (player names are whatever players typed)."""
    date, today = page.date, page.today
    return TEMPLATES.get_template("leaderboard.html").render(
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
        short_date=short_date,
        player_href=player_href,
    )
