"""The daily's archive and the countdown (issue 29, items 4 and 5; docs/protocol.md 4.28):
a past day's deal played as practice, on its own archive board and never on the day's
daily board nor its deal board; refused for a day whose code is still secret."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from protocol import Game
from protocol.messages import (
    Accepted,
    Board,
    BoardPage,
    Daily,
    DailyDeal,
    Error,
    Hello,
    MoveMsg,
    Race,
    Resign,
    Result,
    Room,
    Welcome,
)
from server.domain.daily import next_daily_ms, parse_archive_date, utc_date

from .pages.test_http import board_rows, fetch
from .test_app import DAY, NOON, Clock
from .test_restart import until_journaled
from .wire import Client, open_client, running_server

MIDNIGHT = dt.datetime(2026, 11, 30, tzinfo=dt.UTC).timestamp()


def test_next_daily_ms_counts_to_the_next_utc_midnight() -> None:
    assert next_daily_ms(NOON) == 12 * 3600 * 1000
    assert next_daily_ms(MIDNIGHT - 0.25) == 250
    assert next_daily_ms(MIDNIGHT) == 24 * 3600 * 1000  # a new day begins: a whole day


def test_a_day_is_in_the_archive_once_its_code_is_public() -> None:
    day = dt.date(2026, 11, 29)
    # Today, and the next day before 00:35 UTC (an attempt may still run): not yet.
    assert isinstance(parse_archive_date("2026-11-29", NOON), str)
    assert isinstance(parse_archive_date("2026-11-29", MIDNIGHT + 34 * 60), str)
    assert parse_archive_date("2026-11-29", MIDNIGHT + 35 * 60) == day
    assert isinstance(parse_archive_date("2026-12-25", NOON + 2 * DAY), str)  # the future
    assert isinstance(parse_archive_date("29/11/2026", NOON + DAY), str)
    assert isinstance(parse_archive_date(None, NOON + DAY), str)


async def _play_out(client: Client, *, moves: int) -> Result:
    """Play ``moves`` legal moves of the race just dealt, then resign; the stored result."""
    race = client.frames[-1] if isinstance(client.frames[-1], Race) else await client.expect(Race)
    game = Game.from_position(race.view)
    for seq in range(1, moves + 1):
        move = sorted(game.legal_moves())[0]
        await client.send(MoveMsg(seq, move))
        accepted = await client.expect(Accepted, seq=seq)
        game.play(accepted.move, reveal=accepted.turned)
    await client.send(Resign())
    result: Result = await client.expect(Result)
    return result


async def test_archive_runs_never_reach_the_days_board(db_url: str, tmp_path: Path) -> None:
    clock = Clock(NOON)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        today = utc_date(NOON)
        choice = await server.boards.dailies.get(today)
        ann, bob = await open_client(server), await open_client(server)
        await ann.send(Hello(1, "ann"))
        welcome = await ann.expect(Welcome)
        assert welcome.next_daily_ms == 12 * 3600 * 1000  # from the server's clock
        await bob.hello("bob")

        # Today's deal is not in the archive: refused before anything is numbered or dealt.
        for date in ("2026-11-29", "2026-11-30", "not a date"):
            await ann.send(Daily(date=date))
            error = await ann.expect(Error)
            assert error.code == "not_archived"
        # Its archive board says nothing of it, not even its par or commitment.
        await ann.send(Board("archive", date="2026-11-29"))
        empty = await ann.expect(BoardPage)
        assert (empty.total, empty.code, empty.par, empty.commitment) == (0, None, None, None)

        await ann.send(Daily())  # ann's counted attempt, today
        counted = await ann.expect(DailyDeal)
        assert (counted.archive, counted.practice, counted.next_daily_ms) == (
            False,
            False,
            12 * 3600 * 1000,
        )
        await ann.send(Resign())
        await ann.expect(Result)

        clock.now += DAY  # the next day: 2026-11-29's code is public, it is in the archive
        # A day the server has no deal for was never a daily: not in the archive.
        await bob.send(Daily(date="2026-01-01"))
        assert (await bob.expect(Error)).code == "not_archived"
        await bob.send(Daily(date="2026-11-29"))
        deal = await bob.expect(DailyDeal)
        assert (deal.date, deal.archive, deal.practice) == ("2026-11-29", True, True)
        assert deal.commitment == choice.commitment and deal.par == choice.par
        assert deal.next_daily_ms == 12 * 3600 * 1000
        race = await bob.expect(Race)
        room = await bob.expect(Room)
        assert room.code == str(choice.code)  # the day's code is public: no secret here
        assert race.view == Game.from_code(choice.code).view()  # the day's very deal
        bob.frames.append(race)
        result = await _play_out(bob, moves=2)
        assert result.code == str(choice.code)
        # ann plays it again from the archive too: her counted run stays as it was.
        await ann.send(Daily(date="2026-11-29"))
        again = await ann.expect(DailyDeal)
        assert (again.archive, again.practice, again.attempt) == (True, True, 2)
        await _play_out(ann, moves=3)

        await bob.send(Board("daily", date="2026-11-29"))
        daily = await bob.expect(BoardPage)
        assert [(r.name, r.moves) for r in daily.rows] == [("ann", 0)]
        assert daily.you is None and daily.next_daily_ms == 12 * 3600 * 1000
        await bob.send(Board("deal", code=str(choice.code)))
        deal_board = await bob.expect(BoardPage)
        assert [(r.name, r.moves) for r in deal_board.rows] == [("ann", 0)]
        await bob.send(Board("archive", date="2026-11-29"))
        archive = await bob.expect(BoardPage)
        assert archive.kind == "archive" and archive.code == str(choice.code)
        assert (archive.par, archive.commitment, archive.salt) == (
            choice.par,
            choice.commitment,
            choice.salt,
        )
        assert sorted((r.name, r.moves) for r in archive.rows) == [("ann", 3), ("bob", 2)]
        assert archive.you is not None and archive.you.name == "bob"
        # The stored rows say so too: practice, archive, and never in deal_bests.
        board = await server.store.daily_board(date=today)
        assert [e.name for e in board.rows] == ["ann"]

        # A day's archive board needs its date.
        await bob.send(Board("archive"))
        assert (await bob.expect(Error)).code == "bad_field"

        # /leaderboard: the day's rows are the counted ones; its archive board apart,
        # marked practice, with the link that plays the day in the browser's archive.
        page = await fetch(server, "/leaderboard?date=2026-11-29")
        html = page.text
        day_part, _, archive_part = html.partition('<section class="card archive"')
        assert [r[1] for r in board_rows(day_part)] == ["ann"]
        assert sorted((r[1], r[4]) for r in board_rows(archive_part)) == [
            ("ann", "3"),
            ("bob", "2"),
        ]
        assert 'href="/#archive=2026-11-29"' in html and "practice" in archive_part
        assert "Next daily deal in <strong>12 h 00 min</strong>" in html
        data = (await fetch(server, "/leaderboard?date=2026-11-29&format=json")).json()
        assert [r["name"] for r in data["rows"]] == ["ann"]
        assert data["next_daily_ms"] == 12 * 3600 * 1000
        assert data["archive"]["play"] == "/#archive=2026-11-29"
        assert sorted(r["name"] for r in data["archive"]["rows"]) == ["ann", "bob"]
        # Today is not in the archive: no link, no archive board, nothing of its deal.
        now = (await fetch(server, "/leaderboard?format=json")).json()
        assert now["archive"] is None and now["code"] is None
        assert "#archive=" not in (await fetch(server, "/leaderboard")).text
        for c in (ann, bob):
            await c.ws.close()


async def test_an_archive_run_survives_a_restart_as_one(db_url: str, tmp_path: Path) -> None:
    """Rebuilt from the journal, an archive run is still one: not cut as a daily attempt
    of a day whose code is public would be (its day is long over), and its result goes to
    the archive board only."""
    clock = Clock(NOON + DAY)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with running_server(db_url, tmp_path / "a", wall_clock=clock) as first:
        await first.boards.dailies.get(dt.date(2026, 11, 29))
        ann = await open_client(first)
        await ann.send(Hello(1, "ann"))
        token = (await ann.expect(Welcome)).token
        await ann.send(Daily(date="2026-11-29"))
        assert (await ann.expect(DailyDeal)).archive
        race = await ann.expect(Race)
        game = Game.from_position(race.view)
        move = sorted(game.legal_moves())[0]
        await ann.send(MoveMsg(1, move))
        accepted = await ann.expect(Accepted, seq=1)
        game.play(accepted.move, reveal=accepted.turned)
        # As tests/server/test_restart.py does: the restart comes once the race and its
        # move are in the journal (written in groups, a moment later).
        await until_journaled(db_url)
        first.closing_for_restart = True  # type: ignore[attr-defined]
    async with running_server(db_url, tmp_path / "b", wall_clock=clock) as second:
        ann = await open_client(second)
        await ann.send(Hello(1, token=token))
        assert (await ann.expect(Welcome)).room is not None
        back = await ann.expect(Race)
        assert back.state == "playing" and back.moves == 1  # not cut at the code's publication
        move = sorted(game.legal_moves())[0]
        await ann.send(MoveMsg(2, move))
        await ann.expect(Accepted, seq=2)
        await ann.send(Resign())
        result = await ann.expect(Result)
        assert [r.moves for r in result.ranks] == [2]
        archive = await second.store.archive_board(date=dt.date(2026, 11, 29))
        assert [(e.name, e.moves) for e in archive.rows] == [("ann", 2)]
        daily = await second.store.daily_board(date=dt.date(2026, 11, 29))
        assert daily.total == 0
        await ann.ws.close()
