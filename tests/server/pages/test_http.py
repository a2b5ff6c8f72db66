"""Plain HTTP on the websocket port: /healthz, /metrics and the public daily leaderboard.

Every test talks to a real server (``running_server``) over a raw socket, the way a load
balancer, Prometheus or a browser would; the leaderboard is also opened in headless
Chromium when it is installed (and must be, under ``CI=true``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from html import unescape as html_unescape
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bench.tcp_proxy import TcpProxy
from client.state import format_ms
from protocol import Game
from protocol.commitment import check_commitment
from protocol.messages import (
    Accepted,
    Board,
    BoardPage,
    Create,
    Daily,
    Hello,
    History,
    HistoryPage,
    Leave,
    Left,
    MoveMsg,
    PlayerPage,
    Race,
    Refused,
    Resign,
    Result,
    Room,
    Undo,
    Undone,
    Welcome,
)
from protocol.messages import Player as PlayerMsg
from server.app import ServeOptions, open_server
from server.domain.daily import code_public_at
from server.domain.records import PlayerResult, RaceRecord
from server.pages.http import PAGE_SIZE, DailyPage, HttpPages, format_time, render_board_html
from server.rooms import HubConfig
from server.runtime.executor import RaceServer
from server.storage.sql import BoardEntry

from ..wire import open_client, room_with, running_server, start_race, winning_line

NOON = dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0
TODAY = dt.date(2026, 11, 29)
#: The end of TODAY: 00:00 UTC on 30 November.
MIDNIGHT = dt.datetime(2026, 11, 30, tzinfo=dt.UTC).timestamp()
TIMEOUT = 10.0


class Clock:
    """A wall clock the test moves forward."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


async def fetch(server: RaceServer, path: str, method: str = "GET") -> Reply:
    """One HTTP/1.1 request on its own connection, which it asks the server to close after
    the answer (``Connection: close``; else the server keeps it open for the next)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n"
            "User-Agent: yukon-test\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), TIMEOUT)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    version, status, _ = status_line.split(" ", 2)
    assert version == "HTTP/1.1"
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    assert int(headers["content-length"]) == len(body)
    return Reply(int(status), headers, body)


def metric_values(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and labels, as prometheus_client reads it."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def add_daily_results(
    server: RaceServer, date: dt.date, results: list[tuple[Any, ...]]
) -> None:
    """Store first attempts at ``date``'s deal directly, as finished races would be:
    ``(name, outcome, time_ms, moves, score, foundations)`` each."""
    code = str((await server.boards.dailies.get(date)).code)
    start = dt.datetime.combine(date, dt.time(12), dt.UTC).timestamp()
    for i, (name, outcome, time_ms, moves, score, foundations) in enumerate(results):
        player = await server.store.register_player(name=name, now=start)
        result = PlayerResult(
            player.player_id, name, 1, outcome, time_ms, moves, score, foundations, 0, False, ()
        )
        record = RaceRecord(
            f"http-test-{date}-{i}",
            i,
            None,
            code,
            "C",
            date,
            start,
            start + time_ms / 1000,
            (result,),
        )
        await server.store.record_race(record)


async def play_daily(server: RaceServer, name: str, moves: int) -> None:
    """A player's first daily attempt through the websocket: ``moves`` moves, then resign."""
    client = await open_client(server, name)
    await client.send(Daily())
    await client.expect(Race)
    # the test may know every card
    game = Game.from_code((await server.boards.dailies.get(TODAY)).code)
    for seq in range(1, moves + 1):
        move = sorted(game.legal_moves())[0]
        game.play(move)
        await client.send(MoveMsg(seq, move))
        await client.expect(Accepted, seq=seq)
    await client.send(Resign())
    await client.expect(Result)
    await client.ws.close()


def board_rows(html: str) -> list[list[str]]:
    """The cells of each table row, tags stripped (entities left as they are)."""
    rows = re.findall(r"<tr(?: class=\"r\d\")?>(.*?)</tr>", html, re.S)
    return [
        [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in rows
        if "<td" in row
    ]


# -- /healthz ---------------------------------------------------------------------------------


async def test_healthz_is_ok_while_the_database_answers(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path) as server:
        reply = await fetch(server, "/healthz")
        assert (reply.status, reply.text) == (200, "ok\n")
        assert reply.headers["content-type"] == "text/plain; charset=utf-8"
        assert reply.headers["cache-control"] == "no-store"
        assert reply.headers["connection"] == "close"


async def test_healthz_is_503_when_the_database_fails_or_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_server(f"sqlite:///{tmp_path}/yukon.db", tmp_path) as server:
        pages = server.http
        assert isinstance(pages, HttpPages)

        async def refused() -> None:
            raise ConnectionRefusedError("connection refused\nsecond line")

        monkeypatch.setattr(server.store, "ping", refused)
        reply = await fetch(server, "/healthz")
        assert reply.status == 503
        assert reply.text == "database unavailable: ConnectionRefusedError: connection refused\n"

        async def hangs() -> None:
            await asyncio.Event().wait()

        monkeypatch.setattr(server.store, "ping", hangs)
        monkeypatch.setattr(pages, "ping_timeout", 0.2)
        began = time.monotonic()
        reply = await fetch(server, "/healthz")
        assert time.monotonic() - began < 1.5
        assert (reply.status, reply.text) == (503, "database did not answer within 0.2 s\n")


async def test_healthz_and_metrics_through_a_database_outage(
    fresh_postgres: str, tmp_path: Path
) -> None:
    """PostgreSQL behind a proxy the test cuts: 503 while it is away, ok once it is back,
    and the result finished meanwhile shows as pending, then as written."""
    host_port = fresh_postgres.split("@", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    proxy = TcpProxy(host, int(port))
    await proxy.start()
    db = fresh_postgres.replace(host_port, f"127.0.0.1:{proxy.port}")
    config = HubConfig(countdown_s=0.2, bucket_capacity=200, bucket_rate=100)
    options = ServeOptions(port=0, db=db, spool=tmp_path / "spool.jsonl", hub=config)
    code, _ = winning_line()
    try:
        async with open_server(options) as server:
            assert (await fetch(server, "/healthz")).status == 200
            ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
            await room_with(ann, bob, code=code)
            await start_race(ann, bob)

            await proxy.cut()
            began = time.monotonic()
            reply = await fetch(server, "/healthz")
            assert time.monotonic() - began < 2.5
            assert reply.status == 503
            assert reply.text.startswith("database ") and reply.text.count("\n") == 1

            await ann.send(Resign())
            await bob.send(Resign())
            for _ in range(100):  # until the writer has failed at least once
                values = metric_values((await fetch(server, "/metrics")).text)
                if values[("yukon_db_write_failures_total", ())] >= 1:
                    break
                await asyncio.sleep(0.05)
            assert values[("yukon_results_pending", ())] == 1
            assert values[("yukon_db_write_failures_total", ())] >= 1
            lb = await fetch(server, "/leaderboard")
            assert lb.status == 503 and "the leaderboard is unavailable" in lb.text

            await proxy.restore()
            await asyncio.wait_for(ann.expect(Result), 30)
            assert (await fetch(server, "/healthz")).text == "ok\n"
            values = metric_values((await fetch(server, "/metrics")).text)
            assert values[("yukon_results_pending", ())] == 0
            assert values[("yukon_db_write_retries_total", ())] >= 1
            for c in (ann, bob):
                await c.ws.close()
    finally:
        await proxy.cut()


# -- /metrics ---------------------------------------------------------------------------------


async def test_metrics_count_a_short_race(db_url: str, tmp_path: Path) -> None:
    code, line = winning_line()
    async with running_server(db_url, tmp_path) as server:
        empty = metric_values((await fetch(server, "/metrics")).text)
        assert empty[("yukon_connections", ())] == 0
        assert empty[("yukon_move_ack_seconds_count", ())] == 0

        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=code)
        await start_race(ann, bob)
        for seq, move in enumerate(line[:3], start=1):  # three accepted moves
            await ann.send(MoveMsg(seq, move))
            await ann.expect(Accepted, seq=seq)
        await ann.send(Undo(4))  # an undo is accepted too
        await ann.expect(Undone, seq=4)
        for seq in (1, 2):  # two refused: the cards are not where the moves need them
            await bob.send(MoveMsg(seq, line[2]))
            await bob.expect(Refused, seq=seq)

        reply = await fetch(server, "/metrics")
        assert reply.status == 200
        assert reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        families = {f.name: f for f in text_string_to_metric_families(reply.text)}
        kinds = {name: f.type for name, f in families.items()}
        assert kinds == {
            "yukon_connections": "gauge",
            "yukon_rooms": "gauge",
            "yukon_races_running": "gauge",
            "yukon_results_pending": "gauge",
            "yukon_moves_accepted": "counter",
            "yukon_moves_refused": "counter",
            "yukon_connections_opened": "counter",
            "yukon_db_write_failures": "counter",
            "yukon_db_write_retries": "counter",
            "yukon_move_ack_seconds": "histogram",
            "yukon_hints_in_progress": "gauge",
            "yukon_hint_solves": "counter",
            "yukon_hint_failures": "counter",
            "yukon_hint_seconds": "histogram",
            "yukon_winnable_stock": "gauge",
            "yukon_winnable_stock_empty": "counter",
            "yukon_winnable_proofs": "counter",
        }
        assert all(f.documentation for f in families.values())
        values = metric_values(reply.text)
        assert values[("yukon_connections", ())] == 2
        assert values[("yukon_rooms", ())] == 1
        assert values[("yukon_races_running", ())] == 1
        assert values[("yukon_results_pending", ())] == 0
        assert values[("yukon_moves_accepted_total", ())] == 4
        assert values[("yukon_moves_refused_total", ())] == 2
        assert values[("yukon_connections_opened_total", ())] == 2  # HTTP requests are not
        assert values[("yukon_db_write_failures_total", ())] == 0
        assert values[("yukon_db_write_retries_total", ())] == 0
        assert values[("yukon_hints_in_progress", ())] == 0
        for verdict in ("won", "lost", "unknown", "best"):  # no hints in this race
            assert values[("yukon_hint_solves_total", (("verdict", verdict),))] == 0
        assert values[("yukon_hint_failures_total", ())] == 0
        assert values[("yukon_hint_seconds_count", ())] == 0

        buckets = [
            (float(labels[0][1]), v)
            for (name, labels), v in values.items()
            if name == "yukon_move_ack_seconds_bucket"
        ]
        assert buckets[-1] == (float("inf"), 6)
        assert [b for b, _ in buckets] == sorted(b for b, _ in buckets)
        counts = [v for _, v in buckets]
        assert counts == sorted(counts)  # cumulative
        assert values[("yukon_move_ack_seconds_count", ())] == 6
        # prometheus_client writes every value as a float ("6.0", not "6"): the same number
        # to a scraper. It writes no ``_created`` samples: they are switched off (metrics.py).
        assert 'yukon_move_ack_seconds_bucket{le="+Inf"} 6.0\n' in reply.text
        assert "_created" not in reply.text
        assert 0 < values[("yukon_move_ack_seconds_sum", ())] < 6 * 1.0

        await ann.send(Resign())
        await bob.send(Resign())
        await ann.expect(Result)
        values = metric_values((await fetch(server, "/metrics")).text)
        assert values[("yukon_races_running", ())] == 0
        for c in (ann, bob):
            await c.ws.close()


async def test_two_servers_in_one_process_count_apart(db_url: str, tmp_path: Path) -> None:
    """Each server has a registry of its own (prometheus_client): what one counts, the other
    does not show, and the second one's metrics do not collide with the first's."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with (
        running_server(f"sqlite:///{tmp_path}/a/yukon.db", tmp_path / "a") as first,
        running_server(db_url, tmp_path / "b") as second,
    ):
        assert first.metrics.registry is not second.metrics.registry
        ann = await open_client(first, "ann")
        one = metric_values((await fetch(first, "/metrics")).text)
        other = metric_values((await fetch(second, "/metrics")).text)
        assert one[("yukon_connections_opened_total", ())] == 1
        assert one[("yukon_connections", ())] == 1
        assert other[("yukon_connections_opened_total", ())] == 0
        assert other[("yukon_connections", ())] == 0
        assert set(one) == set(other)  # the same series on both
        await ann.ws.close()


# -- /leaderboard -----------------------------------------------------------------------------


async def test_the_leaderboard_shows_a_day_and_keeps_today_s_code_secret(
    db_url: str, tmp_path: Path
) -> None:
    clock = Clock(NOON)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        code = str((await server.boards.dailies.get(TODAY)).code)
        await play_daily(server, "ann", moves=2)
        await play_daily(server, "<b>x<b>", moves=1)  # by hello: no / (docs/protocol.md 4.1)
        await play_daily(server, "bob", moves=0)

        page = await fetch(server, "/leaderboard")
        assert page.status == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "default-src 'none'" in page.headers["content-security-policy"]
        html = page.text
        assert code not in html and code.split("-")[-1] not in html
        assert "Sunday 29 November 2026" in html
        assert "stays secret until 00:35 UTC on 30 Nov" in html
        rows = board_rows(html)
        assert sorted(r[1] for r in rows) == ["&lt;b&gt;x&lt;b&gt;", "ann", "bob"]
        ranks = [int(r[0]) for r in rows]
        assert ranks[0] == 1 and ranks == sorted(ranks)  # equal results share a rank
        assert all(r[2].startswith("resigned") for r in rows)
        assert all(re.fullmatch(r"\d+:\d\d\.\d", r[3]) for r in rows)  # as the client: 0:51.7
        assert '<th class="num">Undos</th>' in html
        assert "<b>x<b>" not in html
        assert 'rel="prev" href="/leaderboard?date=2026-11-28"' in html
        assert 'rel="next"' not in html  # no board for tomorrow yet

        data = (await fetch(server, "/leaderboard?format=json")).json()
        assert (data["date"], data["code"], data["total"], data["page"]) == (
            "2026-11-29",
            None,
            3,
            1,
        )
        choice = await server.boards.dailies.get(TODAY)
        par = choice.par
        assert data["par"] == par and f"Par: {par} moves" in html
        # The day's commitment is public from its start; its salt is not.
        assert choice.commitment is not None and choice.salt is not None
        assert (data["commitment"], data["salt"]) == (choice.commitment, None)
        assert choice.commitment in html and choice.salt not in html
        # The same rows as the page, in the same order, with the name as it was typed.
        assert [
            [
                str(r["rank"]),
                r["name"],
                format_ms(r["time_ms"]),
                str(r["moves"]),
                str(r["score"]),
                str(r["undos"]),
            ]
            for r in data["rows"]
        ] == [[html_unescape(r[1]) if i == 1 else r[i] for i in (0, 1, 3, 4, 5, 6)] for r in rows]
        assert {(r["name"], r["moves"]) for r in data["rows"]} == {
            ("ann", 2),
            ("<b>x<b>", 1),
            ("bob", 0),
        }
        assert set(data["rows"][0]) == {
            "rank",
            "name",
            "outcome",
            "time_ms",
            "moves",
            "score",
            "foundations",
            "undos",
            "race",  # the run's race: /replay/<race>/<name> (section 1.6)
            "rating",  # the player's current rating and streak (section 4.27)
            "streak",
        }
        explicit = await fetch(server, "/leaderboard?date=2026-11-29&format=json")
        assert explicit.json() == data
        assert code not in (await fetch(server, "/leaderboard?format=json")).text

        clock.now += DAY  # the day is over: its code may be shown; the new day's may not
        tomorrow = str((await server.boards.dailies.get(TODAY + dt.timedelta(days=1))).code)
        past = await fetch(server, "/leaderboard?date=2026-11-29")
        assert code in past.text and tomorrow not in past.text
        assert 'rel="next" href="/leaderboard?date=2026-11-30"' in past.text
        assert board_rows(past.text) == rows
        data = (await fetch(server, "/leaderboard?date=2026-11-29&format=json")).json()
        assert data["code"] == code
        # The salt comes with the code: anyone can check the commitment of the whole day.
        assert (data["commitment"], data["salt"]) == (choice.commitment, choice.salt)
        assert check_commitment(data["commitment"], data["code"], data["salt"])
        assert choice.salt in past.text
        now = await fetch(server, "/leaderboard")
        assert "Monday 30 November 2026" in now.text and board_rows(now.text) == []
        assert "No results yet today" in now.text and tomorrow not in now.text
        assert (await fetch(server, "/leaderboard?format=json")).json()["code"] is None
        # Nothing about a day shows before it starts: not tomorrow's commitment either.
        later = TODAY + dt.timedelta(days=2)
        await server.boards.dailies.get(later)
        future = (await fetch(server, f"/leaderboard?date={later}&format=json")).json()
        assert future["commitment"] is None and future["code"] is None


async def test_the_leaderboard_pages_by_fifty(db_url: str, tmp_path: Path) -> None:
    clock = Clock(NOON)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        date = TODAY - dt.timedelta(days=1)
        results = [(f"p{i:02d}", "won", 60_000 + i * 1_000, 100 + i, 500, 52) for i in range(53)]
        await add_daily_results(server, date, results)

        first = await fetch(server, "/leaderboard?date=2026-11-28")
        rows = board_rows(first.text)
        assert len(rows) == PAGE_SIZE
        # (then the rating, none, and the streak: section 4.27)
        assert rows[0][:8] == ["1", "p00", "won", "1:00.0", "100", "500", "0", ""]
        assert rows[-1][:2] == ["50", "p49"]
        assert "53 players &middot; page 1 of 2" in first.text
        assert 'href="/leaderboard?date=2026-11-28&amp;page=2"' in first.text

        second = await fetch(server, "/leaderboard?date=2026-11-28&page=2")
        assert [r[:2] for r in board_rows(second.text)] == [
            ["51", "p50"],
            ["52", "p51"],
            ["53", "p52"],
        ]
        assert 'href="/leaderboard?date=2026-11-28"' in second.text  # back to page 1

        data = (await fetch(server, "/leaderboard?date=2026-11-28&page=2&format=json")).json()
        assert (data["total"], data["page"], data["pages"], data["per_page"]) == (53, 2, 2, 50)
        assert [r["name"] for r in data["rows"]] == ["p50", "p51", "p52"]
        assert data["rows"][0]["time_ms"] == 110_000

        beyond = await fetch(server, "/leaderboard?date=2026-11-28&page=3")
        assert beyond.status == 200 and board_rows(beyond.text) == []
        assert "Page 3 is empty" in beyond.text
        assert (await fetch(server, "/leaderboard?date=2026-11-28&page=3&format=json")).json()[
            "rows"
        ] == []


async def test_bad_requests_get_clear_answers(tmp_path: Path) -> None:
    async with running_server(f"sqlite:///{tmp_path}/yukon.db", tmp_path) as server:
        bad = {
            "/leaderboard?date=29/11/2026": "date '29/11/2026' is not a day like 2026-11-29",
            "/leaderboard?date=2026-02-30": "date '2026-02-30' is not a day",
            "/leaderboard?date=20261129": "date '20261129' is not a day",
            "/leaderboard?date=": "date '' is not a day",
            "/leaderboard?page=0": "page '0' is not a whole number from 1",
            "/leaderboard?page=-1": "page '-1' is not a whole number",
            "/leaderboard?page=two": "page 'two' is not a whole number",
            "/leaderboard?page=10000000": "page '10000000' is not a whole number",
            "/leaderboard?format=xml": "format 'xml' is not html or json",
            "/leaderboard?format=": "format '' is not html or json",
            "/leaderboard?page=1000000": "page '1000000' is not a whole number",
            "/leaderboard?page=%D9%A1": "page '١' is not a whole number",
            "/leaderboard?data=2026-11-29": "unknown parameter 'data'",
            "/leaderboard?date=2026-11-29&date=2026-11-28": "date is given 2 times",
        }
        for path, message in bad.items():
            reply = await fetch(server, path)
            assert reply.status == 400, path
            assert reply.headers["content-type"] == "text/plain; charset=utf-8"
            assert reply.text.startswith(message), (path, reply.text)
            assert reply.text.count("\n") == 1

        for path in ("/nope", "/leaderboard/", "/leaderboard.json", "/healthz/x", "/METRICS"):
            reply = await fetch(server, path)
            assert reply.status == 404, path
            assert "try / (the game), /leaderboard, /daily/log, /healthz or /metrics" in reply.text

        for method, path in (
            ("POST", "/leaderboard"),
            ("DELETE", "/metrics"),
            ("PUT", "/healthz"),
        ):
            reply = await fetch(server, path, method)
            assert reply.status == 405, (method, path)
            assert reply.headers["allow"] == "GET, HEAD"
            assert reply.text == f"{method} is not allowed here; only GET (and HEAD)\n"

        # HEAD: GET's status and headers, no body (a link preview, an uptime probe).
        for path in ("/", "/healthz", "/leaderboard", "/nope"):
            # The page may change between two requests (the day's deal is chosen in the
            # background at start, and then the board shows its par): compare a HEAD with
            # the GETs around it, again if those two differ.
            for _ in range(10):
                got = await fetch(server, path)
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(
                    f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
                )
                raw = await asyncio.wait_for(reader.read(), TIMEOUT)
                writer.close()
                again = await fetch(server, path)
                if again.headers.get("content-length") == got.headers.get("content-length"):
                    break
            head, _, body = raw.partition(b"\r\n\r\n")
            assert head.split(b" ")[1] == str(got.status).encode() and body == b"", path
            length = f"content-length: {got.headers['content-length']}".encode()
            assert length in head.lower(), path

        # "/" without an upgrade is the browser client's page (tests/web/test_serving.py).
        assert (await fetch(server, "/")).status == 200


async def _send_raw(server: RaceServer, raw: bytes) -> tuple[bytes, float]:
    """Send ``raw`` on a connection of its own; what came back before the server's end of
    the connection closed, and how long that took."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(raw)
        await writer.drain()
        began = time.monotonic()
        data = await asyncio.wait_for(reader.read(), TIMEOUT)
        return data, time.monotonic() - began
    finally:
        writer.close()


async def test_a_request_with_a_body_is_read_then_answered(tmp_path: Path) -> None:
    """Issue 18, item 3, then issue 42: websockets refused a request with a body without a
    word; h11 (``server.runtime.plainhttp``) reads the body, drops it and answers as it
    would without (405 for another method than GET and HEAD). A request it cannot read is
    a 400 or the status that says why (414, 431, 505), and the connection closes."""
    head = "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n"
    async with running_server(f"sqlite:///{tmp_path}/yukon.db", tmp_path) as server:
        for method, path, extra, body, status in (
            ("POST", "/healthz", "Content-Length: 1\r\n", b"x", b"405"),
            ("GET", "/healthz", "Content-Length: 5\r\n", b"hello", b"200"),
            ("GET", "/leaderboard", "Content-Length: 2\r\n", b"{}", b"200"),
            ("GET", "/healthz", "Transfer-Encoding: chunked\r\n", b"0\r\n\r\n", b"200"),
            ("GET", "/", "Content-Length: 1\r\n", b"x", b"200"),
            ("POST", "/healthz", "Content-Length: 0\r\n", b"", b"405"),
            ("GET", "/healthz", "Content-Length: 0\r\n", b"", b"200"),
        ):
            raw = head.format(method=method, path=path, extra=extra).encode() + body
            data, waited = await _send_raw(server, raw)
            assert data.startswith(b"HTTP/1.1 " + status + b" "), (method, path, extra)
            assert waited < 2.0  # at once, not after a timeout
        data, _ = await _send_raw(server, b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 505 ")
        long_line = b"GET /healthz?" + b"a" * 8192 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        assert (await _send_raw(server, long_line))[0].startswith(b"HTTP/1.1 414 ")
        many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 129 + b"\r\n"
        assert (await _send_raw(server, many))[0].startswith(b"HTTP/1.1 431 ")
        assert (await fetch(server, "/healthz")).text == "ok\n"  # the server is unharmed
        values = metric_values((await fetch(server, "/metrics")).text)
        assert values[("yukon_connections_opened_total", ())] == 0


HOSTILE_NAMES = (
    "<b>x</b>",
    '"><script>alert(1)</script>',
    'it\'s & "q"',
    "{{ 7*7 }} {% raw %}",
    "&amp; <!-- x",
    "</bdi></td></tr></table><img src=x>",
)


def test_names_full_of_html_come_out_as_inert_text() -> None:
    """The page's template (Jinja2, autoescaped) escapes each name, quotes included, and
    never evaluates one: a name that looks like template syntax is shown as typed."""
    rows = tuple(
        BoardEntry(i + 1, i + 1, name, "won", 60_000 + i, 100, 500, 52, 0)
        for i, name in enumerate(HOSTILE_NAMES)
    )
    page = DailyPage(TODAY, TODAY, None, len(rows), 1, rows, 96, dealt=True, public_at=MIDNIGHT)
    html = render_board_html(page)
    cells = [r[1] for r in board_rows(html)]
    assert [html_unescape(c) for c in cells] == list(HOSTILE_NAMES)
    assert "<b>" not in html and "<script>" not in html and "<img" not in html
    assert "<!--" not in html and "{{ 7*7 }} {% raw %}" in cells  # as typed, not run
    for cell in cells:  # escaped for an attribute too: no quote survives
        assert '"' not in cell and "'" not in cell
    assert html.count("<tr") == len(rows) + 1  # the header's row and one per name
    # The frame is the shared base template's: one document, the style inline.
    assert html.startswith('<!doctype html>\n<html lang="en">\n<head>\n')
    assert html.endswith("</main>\n</body>\n</html>\n") and html.count("<style>") == 1


def test_the_templates_are_package_data() -> None:
    """pyproject ships them (``package-data``); a wheel without them would fail here."""
    root = resources.files("server.pages") / "templates"
    assert {"base.html", "leaderboard.html", "style.css"} <= {p.name for p in root.iterdir()}
    pyproject = (Path(__file__).parents[3] / "pyproject.toml").read_text()
    assert '"templates/*.html",\n    "templates/*.css",' in pyproject


@pytest.mark.parametrize(
    ("ms", "shown"),
    [
        (0, "0:00.0"),
        (1_234, "0:01.2"),
        (51_790, "0:51.7"),
        (59_960, "0:59.9"),
        (61_049, "1:01.0"),
        (6_000_000, "1:40:00.0"),
    ],
)
def test_times_show_as_the_client_shows_them(ms: int, shown: str) -> None:
    """One format on the page and in the terminal client: a stopwatch's, tenths cut."""
    assert format_time(ms) == shown == format_ms(ms)


# -- a real browser ---------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.access(name, os.X_OK):
            return name
    return shutil.which("chromium") or shutil.which("chromium-browser")


async def _run_chromium(binary: str, profile: Path, *args: str) -> str:
    """Run headless Chromium to completion without blocking the server's event loop."""
    process = await asyncio.create_subprocess_exec(
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 90)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, err.decode(errors="replace")[-2000:]
    return out.decode()


async def test_the_leaderboard_in_headless_chromium(tmp_path: Path) -> None:
    binary = _chromium()
    if binary is None:
        message = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    clock = Clock(NOON)
    async with running_server(
        f"sqlite:///{tmp_path}/yukon.db", tmp_path, wall_clock=clock
    ) as server:
        await add_daily_results(
            server,
            TODAY,
            [
                ("ann", "won", 312_450, 143, 610, 52),
                ("<b>x</b>", "won", 401_000, 171, 585, 52),
                ("Bjørn", "resigned", 95_300, 41, 210, 17),
                ("cat", "timeout", 900_000, 260, 480, 38),
            ],
        )
        url = f"http://127.0.0.1:{server.port}/leaderboard"
        dom = await _run_chromium(binary, tmp_path / "profile-dom", "--dump-dom", url)
        shot = tmp_path / "leaderboard.png"
        await _run_chromium(
            binary, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1000,800", url
        )
    rows = board_rows(dom)
    assert [r[1] for r in rows] == ["ann", "&lt;b&gt;x&lt;/b&gt;", "cat", "Bjørn"]
    # (then the rating, none, and the daily streak: 1, the day's win; section 4.27)
    assert rows[0] == ["1", "ann", "won", "5:12.4", "143", "610", "0", "", "1"]
    assert rows[2][2] == "timeout38/52 cards"
    assert "<b>x</b>" not in dom  # the browser saw text, not an element
    assert "Sunday 29 November 2026" in dom
    assert str((await server.boards.dailies.get(TODAY)).code) not in dom
    assert shot.stat().st_size > 10_000  # a real rendering, not a blank page
    if target := os.environ.get("YUKON_SCREENSHOT"):
        shutil.copy(shot, target)


# -- the daily's edges: midnight, the future, days without a deal (issue 16, items 8, 12, 13) --


async def test_a_day_s_code_stays_secret_while_an_attempt_of_it_can_still_run(
    db_url: str, tmp_path: Path
) -> None:
    clock = Clock(MIDNIGHT - 60)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        code = str((await server.boards.dailies.get(TODAY)).code)
        ann = await open_client(server, "ann")
        await ann.send(Daily())  # at 23:59, as the attack did
        await ann.expect(Race)
        await ann.send(Resign())
        assert (await ann.expect(Result)).code is None
        unplayed = "YU1-C-AAAAAAC"
        for at in (MIDNIGHT - 1, MIDNIGHT + 1, MIDNIGHT + 1800, code_public_at(TODAY) - 1):
            clock.now = at  # 23:59:59, 00:00:01, 00:30: an attempt begun at 23:59 still runs
            for fmt in ("html", "json"):
                page = await fetch(server, f"/leaderboard?date=2026-11-29&format={fmt}")
                assert code not in page.text, (at, fmt)
            await ann.send(Board("daily", date="2026-11-29"))
            assert (await ann.expect(BoardPage)).code is None
            await ann.send(History())
            assert [r.code for r in (await ann.expect(HistoryPage)).rows] == [None]
            # The deal board of the secret code answers as a code nobody played.
            await ann.send(Board("deal", code=code))
            secret = await ann.expect(BoardPage)
            await ann.send(Board("deal", code=unplayed))
            other = await ann.expect(BoardPage)
            assert secret == dataclasses.replace(other, code=code)
        clock.now = code_public_at(TODAY)  # 00:35: every attempt of the day is over
        assert code in (await fetch(server, "/leaderboard?date=2026-11-29&format=json")).text
        await ann.send(History())
        assert [r.code for r in (await ann.expect(HistoryPage)).rows] == [code]
        await ann.send(Board("deal", code=code))
        assert (await ann.expect(BoardPage)).total == 1
        await ann.ws.close()


async def test_a_deal_board_of_today_s_code_is_that_of_a_code_nobody_played(
    db_url: str, tmp_path: Path
) -> None:
    async with running_server(db_url, tmp_path, wall_clock=Clock(NOON)) as server:
        code = str((await server.boards.dailies.get(TODAY)).code)
        ann = await open_client(server, "ann")
        for request in (
            dict(offset=40),
            dict(around=True, offset=40),
            dict(limit=5),
        ):
            await ann.send(Board("deal", code=code, **request))
            secret = await ann.expect(BoardPage)
            await ann.send(Board("deal", code="YU1-C-AAAAAAC", **request))
            other = await ann.expect(BoardPage)
            assert secret == dataclasses.replace(other, code=code), request
        await ann.ws.close()


async def test_nothing_about_a_day_shows_before_it_begins(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path, wall_clock=Clock(NOON)) as server:
        tomorrow = TODAY + dt.timedelta(days=1)
        chosen = await server.boards.dailies.get(tomorrow)  # chosen ahead, as the server does
        data = (await fetch(server, "/leaderboard?date=2026-11-30&format=json")).json()
        assert (data["par"], data["code"], data["total"]) == (None, None, 0)
        page = (await fetch(server, "/leaderboard?date=2026-12-05")).text
        assert "Par:" not in page and "has not begun" in page and str(chosen.code) not in page
        # Its arrows lead back to today, never to another day after it.
        assert 'rel="prev" href="/leaderboard?date=2026-11-29"' in page
        ann = await open_client(server, "ann")
        await ann.send(Board("daily", date="2026-11-30"))
        board = await ann.expect(BoardPage)
        assert (board.par, board.code, board.total) == (None, None, 0)
        await ann.ws.close()


async def test_a_past_day_without_a_deal_says_so(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path, wall_clock=Clock(NOON)) as server:
        page = (await fetch(server, "/leaderboard?date=2026-11-01")).text
        assert "There was no daily deal on this day" in page
        assert "secret" not in page


async def test_no_date_makes_the_leaderboard_fail(db_url: str, tmp_path: Path) -> None:
    """Issue 28, item 19: ``?date=9999-12-31`` answered 500 with an ``OverflowError``
    traceback (the day after it, and when its code would go public, are past the last day
    a date can hold). Every date a ``date`` can hold gets a page, HTML and JSON; and the
    websocket's ``board`` answers those days too."""
    async with running_server(db_url, tmp_path, wall_clock=Clock(NOON)) as server:
        for day in ("9999-12-31", "9999-12-30", "0001-01-01", "0001-01-02", "2026-11-29"):
            page = await fetch(server, f"/leaderboard?date={day}")
            assert page.status == 200, (day, page.text[:200])
            assert "Traceback" not in page.text
            data = await fetch(server, f"/leaderboard?date={day}&format=json")
            assert data.status == 200, (day, data.text[:200])
            assert data.json()["date"] == day
        late = (await fetch(server, "/leaderboard?date=9999-12-31")).text
        assert "has not begun" in late
        assert 'rel="prev" href="/leaderboard?date=2026-11-29"' in late
        early = (await fetch(server, "/leaderboard?date=0001-01-01")).text
        assert 'rel="prev"' not in early
        assert 'rel="next" href="/leaderboard?date=0001-01-02"' in early
        ann = await open_client(server, "ann")
        for day in ("9999-12-31", "0001-01-01"):
            await ann.send(Board("daily", date=day))
            board = await ann.expect(BoardPage)
            assert (board.date, board.total, board.code) == (day, 0, None)
        await ann.ws.close()


def test_medals_go_to_wins_only() -> None:
    """Issue 28, item 10: the gold "1" went to a resignation on a day nobody won. Medals
    (the classes r1 to r3) mark winning rows only; the ranks are shown as they are."""
    rows = (
        BoardEntry(1, 1, "ann", "won", 60_000, 100, 625, 52, 0),
        BoardEntry(2, 2, "bob", "resigned", 6_000, 3, 10, 1, 0),
        BoardEntry(3, 3, "cy", "timeout", 90_000, 30, 5, 0, 0),
    )
    html = render_board_html(DailyPage(TODAY, TODAY, None, 3, 1, rows, 96, dealt=True))
    assert re.findall(r'<tr class="(r\d)">', html) == ["r1"]
    nobody = render_board_html(DailyPage(TODAY, TODAY, None, 2, 1, rows[1:], 96, dealt=True))
    assert not re.search(r'<tr class="r\d"', nobody)
    assert [r[0] for r in board_rows(nobody)] == ["2", "3"]


async def test_an_invite_link_of_a_closed_room_shows_its_last_race(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 28, item 5: an old invite link after everyone left said only "there is no room
    'XSLP6'", and only after a name was chosen; a bad one was plain text naming /healthz
    and /metrics. Now ``/r/CODE`` of a closed room is a page that says so and shows the
    room's last race with a replay link per runner, and ``?format=json`` says the same."""
    async with running_server(db_url, tmp_path) as server:
        alice, bob = await open_client(server, "alice"), await open_client(server, "<b>bob<b>")
        room = await room_with(alice, bob, code="YU1-C-AAAAAAB")
        code = room.room
        # Open: the client's page (which joins), and JSON saying so, no race yet.
        page = await fetch(server, f"/r/{code.lower()}")
        assert page.status == 200 and "<script" in page.text
        data = (await fetch(server, f"/r/{code}?format=json")).json()
        # A server alone: no node to name (a cluster's is in tests/server/test_lookup.py).
        assert data == {"room": code, "open": True, "node": None, "last_race": None}
        await start_race(alice, bob)
        await alice.send(MoveMsg(1, "6H>7"))
        await alice.expect(Accepted)
        await alice.send(Resign())
        await bob.send(Resign())
        result = await alice.expect(Result)
        # Still open while its members are in it: the last race is there in JSON.
        data = (await fetch(server, f"/r/{code}?format=json")).json()
        assert data["open"] is True and data["last_race"]["race"] == result.race
        # Asked before a join (4.25): the open room alone, its last race not asked for.
        data = (await fetch(server, f"/r/{code}?format=json&for=join")).json()
        assert data == {"room": code, "open": True, "node": None, "last_race": None}
        for client in (alice, bob):
            await client.send(Leave())
            await client.expect(Left)
        # Closed: a 404 page in the site's style with the last race, before any name.
        page = await fetch(server, f"/r/{code}")
        assert page.status == 404
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert f"Room {code} is closed" in page.text
        assert "<script" not in page.text and "/healthz" not in page.text
        assert "/metrics" not in page.text
        assert "&lt;b&gt;bob&lt;b&gt;" in page.text and "<b>bob" not in page.text
        assert f'href="/replay/{result.race}/alice"' in page.text
        assert f'href="/replay/{result.race}/%3Cb%3Ebob%3Cb%3E"' in page.text
        assert [r[1] for r in board_rows(page.text)] == [
            e.name.replace("<", "&lt;").replace(">", "&gt;") for e in result.ranks
        ]
        data = (await fetch(server, f"/r/{code}?format=json")).json()
        assert data["room"] == code and data["open"] is False and data["node"] is None
        assert (await fetch(server, f"/r/{code}?format=json&for=join")).json() == data
        last = data["last_race"]
        assert (last["race"], last["code"]) == (result.race, result.code)
        assert isinstance(last["finished_ms"], int)
        assert last["results"] == [
            {
                "rank": e.rank,
                "name": e.name,
                "outcome": e.outcome,
                "time_ms": e.time_ms,
                "moves": e.moves,
                "score": e.score,
                "foundations": e.foundations,
                "hinted": e.hinted,
            }
            for e in result.ranks
        ]
        # The replay link it shows is the run's.
        replay = (await fetch(server, f"/replay/{result.race}/alice?format=json")).json()
        assert replay["player"] == "alice" and replay["moves"] == 1
        # A code that never had a room: not open, and not said to be closed (issue 42:
        # the server cannot tell "never existed" from "closed before a race").
        other = "23456" if code != "23456" else "23457"
        page = await fetch(server, f"/r/{other}")
        assert page.status == 404 and f"No room {other} is open" in page.text
        assert "is closed" not in page.text and "Everyone has left" not in page.text
        assert "<table" not in page.text
        data = (await fetch(server, f"/r/{other}?format=json")).json()
        assert data == {"room": other, "open": False, "node": None, "last_race": None}
        # A malformed code: the same style of page, saying what a code looks like.
        for bad in ("K0WQM", "K7WQ", ""):
            page = await fetch(server, f"/r/{bad}")
            assert page.status == 404 and "No such room" in page.text
            assert "an invite link is /r/ and the room&#39;s 5 characters" in page.text
            assert "/healthz" not in page.text and "/metrics" not in page.text
            reply = await fetch(server, f"/r/{bad}?format=json")
            assert reply.status == 404 and reply.json()["error"] == "no_such_room"
        await alice.ws.close()
        await bob.ws.close()


async def test_an_invite_only_rooms_link_needs_its_key(db_url: str, tmp_path: Path) -> None:
    """docs/protocol.md 4.32: ``/r/CODE`` of an invite-only room without its ``?k=`` (or
    with another) is a closed room's answer, page and JSON, and a guess; with it, open."""
    async with running_server(db_url, tmp_path) as server:
        alice = await open_client(server, "alice")
        await alice.send(Create(invite_only=True))
        room = await alice.expect(Room)
        assert room.key is not None
        code, key = room.room, room.key
        assert (await fetch(server, f"/r/{code}")).status == 404
        assert (await fetch(server, f"/r/{code}?k=wrong-key-123")).status == 404
        data = (await fetch(server, f"/r/{code}?format=json&for=join")).json()
        assert data["open"] is False and data["node"] is None
        assert (await fetch(server, f"/r/{code}?k={key}")).status == 200
        data = (await fetch(server, f"/r/{code}?format=json&for=join&k={key}")).json()
        assert data == {"room": code, "open": True, "node": None, "last_race": None}


async def test_a_marked_accounts_page_says_only_that(db_url: str, tmp_path: Path) -> None:
    """docs/fairplay.md "The marked account's own page", as HTML and JSON."""
    from server.storage.moderation import ModerationStore

    async with running_server(db_url, tmp_path) as server:
        await open_client(server, "alice")
        await ModerationStore(server.store.engine).mark(
            name="alice", kind="engine", reason="a pasted solver line", operator="olga", now=0.0
        )
        page = await fetch(server, "/players/alice")
        assert page.status == 200 and "This account broke this server's rules." in page.text
        assert "races" not in page.text and "solver" not in page.text
        data = (await fetch(server, "/players/alice?format=json")).json()
        assert data["broke_rules"] is True and data["races"] == 0 and data["rating"] is None


async def test_a_bots_page_wears_its_badge(db_url: str, tmp_path: Path) -> None:
    """docs/bots.md: a BOT account is shown as one on its player page too (both clients
    read ``player_page.bot``; the HTML page shows the badge)."""
    async with running_server(db_url, tmp_path) as server:
        robo = await open_client(server)
        await robo.send(Hello(1, "robo", bot=True))
        await robo.expect(Welcome)
        await robo.send(PlayerMsg("robo"))
        page = await robo.expect(PlayerPage)
        assert page.bot and not page.broke_rules
        html = await fetch(server, "/players/robo")
        assert '<span class="badge bot"' in html.text
        human = await open_client(server, "ann")
        await human.send(PlayerMsg("ann"))
        assert not (await human.expect(PlayerPage)).bot
