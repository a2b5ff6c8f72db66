"""Plain HTTP on the websocket port: the browser client (``/``, ``/r/ROOM``, ``/static/``),
``/healthz``, ``/metrics``, ``/leaderboard`` and a player's page (``/players/NAME``).

One port keeps running a server simple: a load balancer's health check, Prometheus and a
browser reach the server where the players do, through the same proxy and firewall rule.
The transport hands us every request that is not a websocket upgrade
(``RaceServer.http``), read whole by h11 (``server.runtime.plainhttp``: keep-alive,
pipelining, bodies read and dropped, bad requests answered there), one at a time per
connection; each gets one response (docs/protocol.md 1.6).

Everything here is read-only, and the leaderboard keeps the rule the wire protocol keeps
(``leaderboard.py``): a daily deal's game code stays hidden until its day is over, since
whoever knows the code knows the deal.

This module routes a request to its area and runs the handlers; what each area shows is
drawn in its own module: ``boards`` (``/leaderboard``, ``/metrics``), ``players``
(``/players/NAME``), ``invites`` (``/r/CODE``), ``static`` (the browser client's page and
files) and ``common`` (responses, errors, templates). The names callers import from here
are re-exported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import logging
import re
from collections.abc import Awaitable, Mapping
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote

from websockets.http11 import Request, Response

from protocol.messages import MAX_RACE_ID, Error

from ..domain.daily import code_public, code_public_at, day_begun, next_daily_ms, utc_date
from ..domain.records import Standing
from ..domain.replays import message_json
from ..rooms import ROOM_ALPHABET
from ..runtime.connection import Peer
from ..runtime.executor import RaceServer
from ..runtime.limits import address_key
from ..storage import dailylog
from ..storage.sql import Board, RoomRace, describe_error
from .boards import (
    METRICS_CONTENT_TYPE,
    PAGE_SIZE,
    BoardQuery,
    DailyPage,
    board_json,
    parse_board_query,
    render_board_html,
    render_metrics,
)
from .common import (
    PAGE_CSP,
    PLAYER_PREFIX,
    REPLAY_PREFIX,
    HttpError,
    format_time,
    json_reply,
    one_line,
    page_reply,
    reply,
    shown,
    text_reply,
)
from .dailylog import daily_log_json, render_daily_log_html
from .invites import render_room_html, room_json
from .players import player_json, rating_chart, render_player_html
from .static import CONTENT_TYPES, IMMUTABLE, STATIC, StaticFile, WebClient

T = TypeVar("T")

log = logging.getLogger("yukon.http")

__all__ = [
    "CONTENT_TYPES",
    "IMMUTABLE",
    "METRICS_CONTENT_TYPE",
    "PAGE_SIZE",
    "BoardQuery",
    "DailyPage",
    "HttpError",
    "HttpPages",
    "StaticFile",
    "WebClient",
    "board_json",
    "format_time",
    "parse_board_query",
    "rating_chart",
    "render_board_html",
    "render_metrics",
]

#: Post-mortems one address may have asked for over HTTP and not yet had answered.
POSTMORTEMS_PER_ADDRESS = 2
_PATHS = ("/healthz", "/metrics", "/leaderboard", "/daily/log")
#: ``/r/<room code>``: an invite link, the client page, which then joins that room.
_INVITE = re.compile(r"/r/(.*)")  # anything under /r/: a player's page, even a bad one
_ROOM_CODE = re.compile(f"[{ROOM_ALPHABET}]{{5}}", re.IGNORECASE)
_NOT_FOUND = "try / (the game), /leaderboard, /daily/log, /healthz or /metrics"
#: The status of each error a replay or a post-mortem can get over HTTP.
_REPLAY_STATUS = {
    "no_such_race": HTTPStatus.NOT_FOUND,
    "no_such_player": HTTPStatus.NOT_FOUND,
    "not_public": HTTPStatus.FORBIDDEN,
    "race_running": HTTPStatus.CONFLICT,
    "unavailable": HTTPStatus.SERVICE_UNAVAILABLE,
}


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
                    request.headers.get("Accept-Encoding"),
                    key=address_key(self.server.address(connection, request)),
                )
            web = self._web_route(path)
            if (
                web is None
                and path not in _PATHS
                and not path.startswith((REPLAY_PREFIX, PLAYER_PREFIX))
            ):
                raise HttpError(HTTPStatus.NOT_FOUND, f"no page at {shown(path)}; {_NOT_FOUND}")
            if request.method not in ("GET", "HEAD"):
                raise HttpError(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    f"{request.method} is not allowed here; only GET (and HEAD)",
                    allow="GET, HEAD",
                )
            if web is not None:
                return self.web.respond(
                    web,
                    request.headers.get("If-None-Match"),
                    request.headers.get("Accept-Encoding"),
                )
            if path == "/healthz":
                return await self.healthz()
            if path == "/metrics":
                return self.metrics()
            if path.startswith(REPLAY_PREFIX):
                return await self.replay(
                    path,
                    query,
                    request.headers.get("If-None-Match"),
                    request.headers.get("Accept-Encoding"),
                    key=address_key(self.server.address(connection, request)),
                )
            if path.startswith(PLAYER_PREFIX):
                return await self.player(path, query)
            if path == "/daily/log":
                return await self.daily_log(query)
            return await self.leaderboard(query)
        except HttpError as exc:
            extra = [("Allow", exc.allow)] if exc.allow else []
            return text_reply(exc.status, one_line(exc.text), extra)

    def _web_route(self, path: str) -> str | None:
        """The client file a path names (``""``: the page, ``WebClient.INVITE``: the page
        at an invite link), None if it names none.

        Only a table lookup: the path is compared with the names read at start, so no
        ``..``, encoded dot, NUL or long path can reach anything else. A malformed invite
        link is a 404 that says what a room code looks like.
        """
        if path == "/":
            return ""
        if path.startswith(STATIC):
            version, _, name = path[len(STATIC) :].partition("/")
            if version == self.web.version and name in self.web.files:
                return name
            raise HttpError(
                HTTPStatus.NOT_FOUND,
                f"no file at {shown(path)}: this server's client files are under"
                f" {STATIC}{self.web.version}/ (reload the page)",
            )
        return None

    async def invite(
        self,
        raw: str,
        query: str,
        if_none_match: str | None,
        accept_encoding: str | None = None,
        *,
        key: str = "",
    ) -> Response:
        """``/r/CODE``, a room's invite link (docs/protocol.md 1.6). An open room: the
        client's page, which joins it. A closed one (or a malformed code): a page that says
        so and shows the room's last race, with a replay link per runner, before any name
        is asked (issue 28, item 5); ``?format=json`` says the same to other clients."""
        asked = parse_qs(query)
        fmt = "json" if asked.get("format") == ["json"] else "html"
        #: An invite-only room's key (docs/protocol.md 4.32): without it the room is closed.
        invite = next(iter(asked.get("k", [])), None)
        if _ROOM_CODE.fullmatch(raw) is None:
            text = (
                f"no room code {shown(raw)}: an invite link is /r/ and the room's 5"
                f" characters from {ROOM_ALPHABET}"
            )
            if fmt == "json":
                return json_reply(HTTPStatus.NOT_FOUND, {"error": "no_such_room", "text": text})
            return page_reply(HTTPStatus.NOT_FOUND, render_room_html(None, None, text))
        code = raw.upper()
        guesses, now = self.server.hub.room_guesses, self.server.listener.loop.time()
        wait = guesses.retry_after(key, now) if key else 0.0
        if wait > 0:  # guessing codes costs here as it does on the websocket (5.5)
            text = (
                "too many room codes that name no room from your address:"
                f" try again in {max(1, round(wait))} s"
            )
            if fmt == "json":
                return json_reply(
                    HTTPStatus.TOO_MANY_REQUESTS, {"error": "too_many_guesses", "text": text}
                )
            return page_reply(HTTPStatus.TOO_MANY_REQUESTS, render_room_html(None, None, text))
        if fmt == "html":
            is_open, _ = await self._room_node(code, invite)
            if is_open:
                return self.web.respond(WebClient.INVITE, if_none_match, accept_encoding)
            if key:
                guesses.add(key, now)
            return page_reply(
                HTTPStatus.NOT_FOUND, render_room_html(code, await self._last_race(code), None)
            )
        if parse_qs(query).get("for") == ["join"]:
            # A client about to join looks the room's node up (4.25): an open room's last
            # race is not asked of the database, which was most of the look-up's time.
            is_open, node = await self._room_node(code, invite)
            last = None if is_open else await self._last_race(code)
        else:
            # Both questions at once: the slower of the directory and the database.
            (is_open, node), last = await asyncio.gather(
                self._room_node(code, invite), self._last_race(code)
            )
        if not is_open and key:
            guesses.add(key, now)
        return json_reply(HTTPStatus.OK, room_json(code, is_open, last, node))

    async def _room_node(self, code: str, invite: str | None) -> tuple[bool, str | None]:
        """Whether a node holds an ordinary room with this code, and which (the id that
        ``?node=`` routes by): this server's hub, or on a cluster the directory's owner of
        the code (``Node.owner``). When the directory cannot say, the room counts as open
        (the client's page then learns it from the websocket) and its node is unknown
        (None: the client connects anywhere, as before). Alone, the node is None too:
        there is nowhere else to go. An invite-only room here is open only with its key
        (``invite``); one on another node is known to the directory by its code alone,
        so its page says open, and its own node refuses a join without the key.)"""
        if self.server.hub.room_open(code, invite):
            return True, self.server.node.node or None
        if self.server.hub.has_room(code):  # here, and invite-only: closed without its key
            return False, None
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
            return text_reply(
                HTTPStatus.SERVICE_UNAVAILABLE,
                f"database did not answer within {self.ping_timeout:g} s",
            )
        except Exception as exc:
            return text_reply(
                HTTPStatus.SERVICE_UNAVAILABLE,
                one_line(f"database unavailable: {describe_error(exc)}"),
            )
        node = self.server.hub.node
        return text_reply(HTTPStatus.OK, f"ok node {node}" if node else "ok")

    def metrics(self) -> Response:
        return reply(HTTPStatus.OK, self.server.metrics.render(), METRICS_CONTENT_TYPE)

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
            return reply(HTTPStatus.OK, body, "application/json; charset=utf-8", cache="no-cache")
        return reply(
            HTTPStatus.OK,
            render_board_html(page).encode(),
            "text/html; charset=utf-8",
            cache="no-cache",
            extra=[("Content-Security-Policy", PAGE_CSP), ("Referrer-Policy", "no-referrer")],
        )

    async def daily_log(self, query: str) -> Response:
        """The daily's log (docs/protocol.md 4.29): append-only, but it grows, so browsers
        always ask again (``no-cache``)."""
        fmt = parse_qs(query, max_num_fields=10).get("format", ["html"])
        if len(fmt) != 1 or fmt[0] not in ("html", "json"):
            raise HttpError(HTTPStatus.BAD_REQUEST, "format is html or json, given once")
        entries = await self._database(dailylog.entries(self.server.store.engine), "the log")
        if fmt[0] == "json":
            body = json.dumps(daily_log_json(entries), separators=(",", ":")).encode()
            return reply(HTTPStatus.OK, body, "application/json; charset=utf-8", cache="no-cache")
        return reply(
            HTTPStatus.OK,
            render_daily_log_html(entries).encode(),
            "text/html; charset=utf-8",
            cache="no-cache",
            extra=[("Content-Security-Policy", PAGE_CSP), ("Referrer-Policy", "no-referrer")],
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
                    return json_reply(exc.status, {"error": "unavailable", "text": exc.text})
                raise
        if stats is None:
            text = f"no player is called {shown(name)}"
            if as_json:
                return json_reply(HTTPStatus.NOT_FOUND, {"error": "unknown_player", "text": text})
            raise HttpError(HTTPStatus.NOT_FOUND, text)
        if as_json:
            return json_reply(HTTPStatus.OK, player_json(stats))
        return page_reply(HTTPStatus.OK, render_player_html(stats))

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
        self,
        path: str,
        query: str,
        if_none_match: str | None = None,
        accept_encoding: str | None = None,
        *,
        key: str = "",
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
            return self.web.respond(WebClient.REPLAY, if_none_match, accept_encoding)
        replays = self.server.replays
        if what == "postmortem":
            # The server's 16 post-mortems are shared with every player: one address may
            # hold at most POSTMORTEMS_PER_ADDRESS of them (docs/protocol.md 5.5).
            held = self._postmortems.get(key, 0)
            if key and held >= POSTMORTEMS_PER_ADDRESS:
                text = f"{held} post-mortems from your address are being worked out: wait for them"
                body = json.dumps({"error": "too_many_queries", "text": text}).encode()
                return reply(HTTPStatus.TOO_MANY_REQUESTS, body, "application/json; charset=utf-8")
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
        return reply(status, body, "application/json; charset=utf-8", cache="no-cache")
