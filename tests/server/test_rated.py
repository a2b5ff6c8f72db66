"""Ratings and streaks through a real server (docs/protocol.md 4.27): a rated room's
result carries each runner's new rating and its change, committed first; names show
their ratings in rooms and on boards; ``player`` answers a player's page; the daily
streak comes from the server's clock, across midnight, over a missed day, and the same on
a second device."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from protocol.messages import (
    Board,
    BoardPage,
    Daily,
    DailyDeal,
    Error,
    Hello,
    MoveMsg,
    Player,
    PlayerPage,
    Race,
    Resign,
    Result,
    Room,
    Welcome,
)
from server.domain.daily import utc_date

from .test_app import DAY, NOON, Clock
from .wire import open_client, room_with, running_server, start_race


async def test_a_rated_room_rates_its_runners(db_url: str, tmp_path: Path) -> None:
    async with running_server(db_url, tmp_path) as server:
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        assert ann.frames[0].rating is None and ann.frames[0].provisional
        room = await room_with(ann, bob, rated=True)
        assert room.rated and [p.rating for p in room.players] == [None]
        await start_race(ann, bob)
        await ann.send(Resign())
        await ann.expect(Room)
        await bob.send(Resign())  # bob played on longer: bob ranks first (or ties)
        result = await ann.expect(Result)
        [first, second] = result.ranks
        # Both runs were under 3 moves and 10 s: nobody's rating moves (docs/ratings.md,
        # "Rating farming"; the rules at their edges: tests/server/domain/test_pairs.py).
        assert (first.rating, second.rating) == (1500, 1500)
        assert (first.rating_change, second.rating_change) == (0, 0)
        # The result is committed: nothing was rated, nothing is stored.
        assert await server.store.current_ratings([1, 2]) == {}
        after = await ann.expect(Room, state="finished")
        assert {p.name for p in after.players} == {first.name, second.name}

        await ann.send(Player(first.name.upper()))
        page = await ann.expect(PlayerPage)
        assert (page.name, page.rating, page.provisional, page.races, page.wins) == (
            first.name,
            None,
            True,
            1,
            0,
        )
        assert not page.ratings
        await ann.send(Player("nobody"))
        assert (await ann.expect(Error)).code == "unknown_player"

        # A second device of bob's (his token) is welcomed.
        again = await open_client(server)
        await again.send(Hello(1, token=bob.frames[0].token))
        welcome = await again.expect(Welcome)
        # (the server's players keep the result's 1500, the default, until they leave)
        assert (welcome.rating, welcome.provisional) in ((None, True), (1500, True))

        # An unrated room: no change, the ratings stay shown.
        await ann.send(Player("ann"))
        before = await ann.expect(PlayerPage)
        carol = await open_client(server, "carol")
        room = await room_with(carol, again)
        assert not room.rated
        await start_race(carol, again)
        await carol.send(Resign())
        await again.send(Resign())
        result = await carol.expect(Result)
        assert [r.rating_change for r in result.ranks] == [None, None]
        await ann.send(Player("ann"))
        assert (await ann.expect(PlayerPage)).ratings == before.ratings
        for c in (ann, bob, carol, again):
            await c.ws.close()


async def win_the_daily(server: object, client: object, date: dt.date) -> None:
    choice = await server.boards.dailies.get(date)  # type: ignore[attr-defined]
    await client.send(Daily())  # type: ignore[attr-defined]
    deal = await client.expect(DailyDeal)  # type: ignore[attr-defined]
    assert not deal.practice
    await client.expect(Race)  # type: ignore[attr-defined]
    for seq, move in enumerate(choice.line, start=1):
        await client.send(MoveMsg(seq, move))  # type: ignore[attr-defined]
    result = await client.expect(Result)  # type: ignore[attr-defined]
    assert result.ranks[0].outcome == "won"


async def test_streaks_by_the_servers_clock_on_every_device(db_url: str, tmp_path: Path) -> None:
    clock = Clock(NOON)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        ann = await open_client(server, "ann")
        assert (ann.frames[0].streak, ann.frames[0].best_streak) == (0, 0)
        token = ann.frames[0].token
        await win_the_daily(server, ann, utc_date(clock.now))

        async def on_a_new_device() -> tuple[object, tuple[int, int]]:
            """The same player on another client (its token): the old one is replaced."""
            other = await open_client(server)
            await other.send(Hello(1, token=token))
            welcome = await other.expect(Welcome)
            return other, (welcome.streak, welcome.best_streak)

        ann, streak = await on_a_new_device()
        assert streak == (1, 1)
        await ann.send(Board("daily"))  # type: ignore[attr-defined]
        page = await ann.expect(BoardPage)  # type: ignore[attr-defined]
        assert page.you is not None and (page.you.streak, page.you.rating) == (1, None)

        clock.now += DAY - 60  # a minute before the next midnight
        ann, streak = await on_a_new_device()
        assert streak == (1, 1)
        clock.now += 120  # past midnight: the new day is not won yet; the streak lives
        ann, streak = await on_a_new_device()
        assert streak == (1, 1)
        await win_the_daily(server, ann, utc_date(clock.now))
        # Said from memory (the player is still connected) and from storage alike.
        ann, streak = await on_a_new_device()
        assert streak == (2, 2)
        await ann.send(Player("ann"))  # type: ignore[attr-defined]
        page2 = await ann.expect(PlayerPage)  # type: ignore[attr-defined]
        assert (page2.streak, page2.best_streak) == (2, 2)

        clock.now += 2 * DAY  # a whole day missed: broken, the best kept
        ann, streak = await on_a_new_device()
        assert streak == (0, 2)
        await ann.send(Player("ann"))  # type: ignore[attr-defined]
        assert (await ann.expect(PlayerPage)).streak == 0  # type: ignore[attr-defined]
        stored = await server.store.standings([1], today=utc_date(clock.now))
        assert (stored[1].streak.current(utc_date(clock.now)), stored[1].streak.best) == (0, 2)
        await ann.ws.close()
