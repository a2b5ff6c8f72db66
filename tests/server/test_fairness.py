"""Secret deals stay secret: what a cheat with docs/rules.md can and cannot do.

A numbered deal (a 7-letter code) is one of 26^7, few enough to search: the shuffle is
public, and the first draws of Fisher-Yates fix the last cards dealt, which are face up in
every runner's first view. ``bench.deals.cheat`` is that search, written as a cheat would
write it. It finds a numbered deal from its view; it finds nothing for the deals a real server
draws for a random race and for the daily, which are 128-bit seeds behind SHA-256, and
whose revealed codes check against the commitments sent before the start.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from bench.deals import cheat
from protocol import Game, GameCode
from protocol.codes import MAX_DEAL
from protocol.commitment import check_commitment
from protocol.messages import (
    Board,
    BoardPage,
    Daily,
    DailyDeal,
    Race,
    Rematch,
    Resign,
    Result,
    Room,
)
from protocol.shuffle import SEED_BYTES

from .wire import open_client, room_with, running_server, start_race

#: How many numbered deals the cheat tries here: enough to show the method, quick to run.
SEARCHED = 1_000_000
NOON = dt.datetime(2026, 11, 29, 12, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0


@pytest.mark.slow
def test_the_cheat_finds_a_numbered_deal_from_its_first_view() -> None:
    """Why a 7-letter code can never be a secret: its first view gives it away."""
    secret = 654_321
    view = Game.from_deal(secret).view()
    assert list(cheat(view, SEARCHED)) == [secret]


async def test_a_random_race_is_a_seeded_deal_committed_to_before_the_start(
    db_url: str, tmp_path: Path
) -> None:
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        room = await room_with(ann, bob, rules="C")
        assert room.code is None and room.commitment is not None and room.salt is None
        views = {r.view for r in await start_race(ann, bob)}
        assert len(views) == 1
        [view] = views
        for client in (ann, bob):
            await client.send(Resign())
        results = [await c.expect(Result) for c in (ann, bob)]
        finished = [await c.expect(Room, state="finished") for c in (ann, bob)]

        # Before the result, nothing anyone got named the code or the salt.
        code, salt = results[0].code, results[0].salt
        assert code is not None and salt is not None
        for client in (ann, bob):
            before = client.frames[: client.frames.index(results[0])]
            assert not any(code in repr(m) or salt in repr(m) for m in before)
            assert all(m.commitment == room.commitment for m in before if isinstance(m, Room))

        # At the end: a seeded code, which checks against the commitment and deals the view.
        assert {(r.code, r.salt) for r in results} == {(code, salt)}
        assert {(f.code, f.salt, f.commitment) for f in finished} == {(code, salt, room.commitment)}
        parsed = GameCode.parse(code)
        assert parsed.seeded and len(parsed.deal_text) == 26 and len(parsed.deal) == SEED_BYTES
        assert check_commitment(room.commitment, code, salt)
        assert Game.from_code(code).view() == view

        # The cheat's search comes back empty: the deal is no 7-letter code's.
        assert list(cheat(view, SEARCHED)) == []
        # Brute force over seeds instead: 2^128 of them. At a billion seeds a second on a
        # million machines, that is about 10^16 years.
        assert 2 ** (8 * SEED_BYTES) // (10**9 * 10**6 * 86_400 * 365) > 10**16
        assert (MAX_DEAL + 1) < 2**33  # the space the cheat above searches whole in minutes

        # A rematch is a new secret deal, with a new commitment.
        await ann.send(Rematch())
        again = await bob.expect(Room, state="lobby")
        assert again.code is None and again.commitment not in (None, room.commitment)
        await ann.ws.close()
        await bob.ws.close()


async def test_the_daily_is_seeded_and_committed_to_all_day(db_url: str, tmp_path: Path) -> None:
    clock = [NOON]
    async with running_server(db_url, tmp_path, wall_clock=lambda: clock[0]) as server:
        await server.boards.dailies.get(dt.date(2026, 11, 29))  # chosen, as ahead of a day
        dave = await open_client(server, "dave")
        await dave.send(Board(kind="daily"))
        board = await dave.expect(BoardPage)
        assert board.code is None and board.salt is None and board.commitment is not None

        await dave.send(Daily())
        deal = await dave.expect(DailyDeal)
        race = await dave.expect(Race)
        room = await dave.expect(Room)
        assert deal.commitment == room.commitment == board.commitment
        await dave.send(Resign())
        result = await dave.expect(Result)
        assert (result.code, result.salt) == (None, None)  # the day is not over
        assert list(cheat(race.view, SEARCHED)) == []

        clock[0] += DAY  # the day is over: its code and salt are revealed, and they check
        await dave.send(Board(kind="daily", date="2026-11-29"))
        past = await dave.expect(BoardPage)
        assert past.code is not None and past.salt is not None
        assert past.commitment == board.commitment
        assert check_commitment(past.commitment, past.code, past.salt)
        parsed = GameCode.parse(past.code)
        assert parsed.seeded
        assert Game.from_code(parsed).view() == race.view
        await dave.ws.close()
