"""The server as ``yukon serve`` wires it: storage, the daily deal, leaderboards, outages."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bench.tcp_proxy import TcpProxy
from protocol import Game, Rules
from protocol.messages import (
    Accepted,
    Board,
    BoardPage,
    Daily,
    DailyDeal,
    Error,
    Hello,
    History,
    HistoryPage,
    MoveMsg,
    Race,
    Resign,
    Result,
    Welcome,
)
from server.app import ServeOptions, open_server
from server.domain.daily import choose_daily, utc_date
from server.rooms import HubConfig

from .wire import open_client, room_with, running_server, start_race, winning_line

DAY = 86_400.0
NOON = dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC).timestamp()


class Clock:
    """A wall clock the test moves forward, a day at a time."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


async def test_the_daily_deal_first_attempt_counts_later_ones_are_practice(
    db_url: str, tmp_path: Path
) -> None:
    clock = Clock(NOON)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        today = utc_date(NOON)
        code = (await server.boards.dailies.get(today)).code
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")

        await ann.send(Daily())
        deal = await ann.expect(DailyDeal)
        assert (deal.date, deal.attempt, deal.practice, deal.rules) == ("2026-11-29", 1, False, "C")
        assert deal.par == (await server.boards.dailies.get(today)).par
        race = await ann.expect(Race)
        assert race.view == Game.from_code(code).view() and race.elapsed_ms < 1000
        game = Game.from_position(race.view)
        move = sorted(game.legal_moves())[0]
        await ann.send(MoveMsg(1, move))
        await ann.expect(Accepted, seq=1)
        await ann.send(Resign())
        result = await ann.expect(Result)
        assert result.code is None  # the day is not over: the deal stays secret
        assert [(r.name, r.outcome, r.moves) for r in result.ranks] == [("ann", "resigned", 1)]

        await ann.send(Daily())  # again, from the finished attempt's room
        again = await ann.expect(DailyDeal)
        assert (again.attempt, again.practice) == (2, True)
        await ann.expect(Race)
        await ann.send(Resign())
        await ann.expect(Result)

        await bob.send(Daily())
        await bob.expect(Race)
        await bob.send(Resign())
        await bob.expect(Result)

        await ann.send(Board("daily"))
        page = await ann.expect(BoardPage)
        assert (page.date, page.code, page.total, page.par) == ("2026-11-29", None, 2, deal.par)
        # Two first attempts (ann's practice is not on the board), in board order.
        assert {(r.name, r.moves) for r in page.rows} == {("ann", 1), ("bob", 0)}
        # (equal non-wins: the longer time first, issue 28)
        keys = [(-r.foundations, -r.score, -r.time_ms) for r in page.rows]
        assert keys == sorted(keys)
        # Equal keys share a rank (both may resign within the same millisecond).
        assert [r.rank for r in page.rows] == ([1, 1] if keys[0] == keys[1] else [1, 2])
        assert page.you is not None and page.you.name == "ann"
        ann_rank = page.you.rank
        # Asking for today's code's board must not confirm the code either.
        await ann.send(Board("deal", code=str(code)))
        assert (await ann.expect(BoardPage)).total == 0

        await ann.send(History())
        history = await ann.expect(HistoryPage)
        assert (history.games, history.wins, history.best_time_ms) == (2, 0, None)
        assert [(h.practice, h.code, h.date) for h in history.rows] == [
            (True, None, "2026-11-29"),
            (False, None, "2026-11-29"),
        ]

        clock.now += DAY  # the day is over: its code is revealed
        await bob.send(Board("daily", date="2026-11-29"))
        page = await bob.expect(BoardPage)
        assert page.code == str(code)
        assert page.you is not None and page.you.rank in (1, 3 - ann_rank)
        await bob.send(Board("deal", code=str(code)))
        assert (await bob.expect(BoardPage)).total == 2
        await ann.send(History())
        assert {h.code for h in (await ann.expect(HistoryPage)).rows} == {str(code)}
        await bob.send(Board("daily", date="29/11/2026"))
        assert (await bob.expect(Error)).code == "bad_field"
        for c in (ann, bob):
            await c.ws.close()


async def test_a_restart_keeps_the_daily_deal_and_the_players(db_url: str, tmp_path: Path) -> None:
    options = ServeOptions(port=0, db=db_url, spool=tmp_path / "spool.jsonl")
    date = dt.date(2026, 11, 29)
    # The default options: the solver runs in a worker process.
    async with open_server(options) as first:
        code = (await first.boards.dailies.get(date)).code
        ann = await open_client(first, "ann")
        token = ann.frames[0].token
        await ann.ws.close()
    async with open_server(options) as second:
        assert (await second.boards.dailies.get(date)).code == code
        assert (await second.boards.dailies.get(date + dt.timedelta(days=1))).code != code
        again = await open_client(second)
        await again.send(Hello(1, token=token))
        assert (await again.recv()).name == "ann"
        taken = await open_client(second)
        await taken.send(Hello(1, "ANN"))
        assert (await taken.recv()).code == "name_taken"
        for c in (again, taken):
            await c.ws.close()
    configured = ServeOptions(port=0, db=db_url, spool=tmp_path / "s.jsonl", daily_secret="s3")
    # A day nobody has chosen yet, and never the real today or tomorrow: a server chooses
    # those in the background as it starts (on the real 2026-12-06, date + 7 days, the
    # first server's choice with its own secret raced this one).
    later = date - dt.timedelta(days=7)
    async with open_server(configured) as third:
        # A day once chosen stays chosen; new days follow the new secret.
        assert (await third.boards.dailies.get(date)).code == code
        chosen = await third.boards.dailies.get(later)
        assert replace(chosen, salt=None) == choose_daily(b"s3", later, Rules.parse("C"))


async def test_every_stored_result_replays_to_the_same_result(db_url: str, tmp_path: Path) -> None:
    """The stored moves of each result, played through the engine, give that result."""
    code, line = winning_line()
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=code)
        await start_race(ann, bob)
        for seq, move in enumerate(line, start=1):
            await ann.send(MoveMsg(seq, move))
            await ann.expect(Accepted, seq=seq)
        for seq, move in enumerate(line[:30], start=1):
            await bob.send(MoveMsg(seq, move))
            await bob.expect(Accepted, seq=seq)
        await bob.send(Resign())
        await ann.expect(Result)
        stored = await server.store.stored_results()
        for c in (ann, bob):
            await c.ws.close()
    assert len(stored) == 2
    for result in stored:
        game = Game.from_code(result.code)
        for action in result.actions:
            if action == "undo":
                game.undo()
            else:
                game.play(action)
        assert game.move_count == result.moves
        assert game.score == result.score
        assert game.cards_on_foundations == result.foundations
        assert game.is_won() == (result.outcome == "won")


async def test_results_survive_a_database_outage(fresh_postgres: str, tmp_path: Path) -> None:
    """PostgreSQL behind a proxy that the test cuts in the middle of a race."""
    postgres = fresh_postgres
    host_port = postgres.split("@", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    proxy = TcpProxy(host, int(port))
    await proxy.start()
    db = postgres.replace(host_port, f"127.0.0.1:{proxy.port}")
    config = HubConfig(countdown_s=0.2, bucket_capacity=200, bucket_rate=100)
    options = ServeOptions(port=0, db=db, spool=tmp_path / "spool.jsonl", hub=config)
    code, line = winning_line()
    try:
        async with open_server(options) as server:
            ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
            cat, dan = await open_client(server, "cat"), await open_client(server, "dan")
            await room_with(ann, bob, code=code)
            await room_with(cat, dan, code=code)
            await start_race(ann, bob)
            await start_race(cat, dan)

            await proxy.cut()  # the database goes away in the middle of the races
            for seq, move in enumerate(line, start=1):
                await ann.send(MoveMsg(seq, move))
                await ann.expect(Accepted, seq=seq)
            await bob.send(Resign())
            # Both are done, but the result is not stored, so it is not announced.
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(ann.expect(Result), 1.0)
            assert (tmp_path / "spool.jsonl").exists()
            # Meanwhile the other race goes on, and a newcomer is told what is wrong.
            await cat.send(MoveMsg(1, line[0]))
            await cat.expect(Accepted, seq=1)
            eve = await open_client(server)
            await eve.send(Hello(1, "eve"))
            assert (await eve.recv()).code == "unavailable"

            await proxy.restore()  # the database is back: the result is stored, then announced
            result = await asyncio.wait_for(ann.expect(Result), 30)
            assert [(r.name, r.outcome) for r in result.ranks] == [
                ("ann", "won"),
                ("bob", "resigned"),
            ]
            assert (await bob.expect(Result)) == result
            stored = await server.store.stored_results(code=code)
            assert sorted(r.outcome for r in stored) == ["resigned", "won"]
            assert not (tmp_path / "spool.jsonl").exists()
            for c in (ann, bob, cat, dan, eve):
                await c.ws.close()
    finally:
        await proxy.cut()


async def test_a_name_that_looks_like_another_or_shows_nothing_is_refused(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 16, item 7, as a client sees it: look-alikes of a registered name are taken,
    names with nothing visible are invalid; two look-alikes at once give one player."""
    async with running_server(db_url, tmp_path) as server:
        alice = await open_client(server, "Alice")
        client = await open_client(server)
        for lookalike in ("\u0410lice", "\uff21lice", "A1ice", "ALICE", "Alice\u3164"):
            await client.send(Hello(1, lookalike))
            error = await client.expect(Error)
            assert error.code == "name_taken" and "looks like" in error.text
        for invisible in ("\u3164", "\u2800\u2800", "\u115f", "\u0301\u0301"):
            await client.send(Hello(1, invisible))
            error = await client.expect(Error)
            assert (error.code, error.text) == (
                "name_invalid",
                "a name needs at least one visible character",
            )
        names = ["Bob", "B\u043eb", "\uff22ob", "BOB", "B0B"]
        others = [await open_client(server) for _ in names]
        await asyncio.gather(*(c.send(Hello(1, n)) for c, n in zip(others, names, strict=True)))
        answers = [await c.expect((Welcome, Error)) for c in others]
        assert sum(1 for a in answers if isinstance(a, Welcome)) == 1
        assert sum(1 for a in answers if isinstance(a, Error) and a.code == "name_taken") == 4
        for c in [alice, client, *others]:
            await c.ws.close()


async def test_under_a_minimum_age_a_fresh_name_s_daily_is_practice(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 16, item 10: the registration time reaches the hub through storage, on a new
    name and on a token, and a name younger than ``--daily-min-age`` plays practice."""
    options = ServeOptions(
        host="127.0.0.1",
        port=0,
        db=db_url,
        spool=tmp_path / "spool.jsonl",
        hub=HubConfig(countdown_s=0.2, daily_min_age_s=3600.0),
        solver_processes=0,
    )
    async with open_server(options) as server:
        old = await server.store.register_player(name="old", now=time.time() - 2 * 86_400)
        veteran = await open_client(server)
        await veteran.send(Hello(1, token=old.token))
        await veteran.expect(Welcome)
        fresh = await open_client(server, "fresh")
        for client, practice in ((veteran, False), (fresh, True)):
            await client.send(Daily())
            deal = await client.expect(DailyDeal)
            assert (deal.attempt, deal.practice) == (1, practice)
            await client.send(Resign())
            await client.expect(Result)
        board = await server.store.daily_board(date=utc_date(time.time()))
        assert [e.name for e in board.rows] == ["old"]
        for client in (veteran, fresh):
            await client.ws.close()
