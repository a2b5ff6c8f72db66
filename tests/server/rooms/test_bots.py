"""BOT accounts (issue 40, item 3) on the hub's fake clock: registered by ``hello.bot``,
shown as bots in rooms and results, kept out of rooms that do not take them and out of
the humans' lane of the quick-race pool; and the half rating of a bot's games."""

from __future__ import annotations

from protocol.messages import (
    PROTOCOL_VERSION,
    Create,
    Error,
    Hello,
    Join,
    Leave,
    Ready,
    Resign,
    Result,
    Welcome,
)
from protocol.messages import Room as RoomMsg
from server.domain.ratings import Rating, Runner, rate_race
from server.rooms import HubConfig

from ..test_quick import Pooled
from ..test_rooms import Clients, start


def _bot(cl: Clients, name: str) -> int:
    conn = cl.connect()
    cl.send(conn, Hello(PROTOCOL_VERSION, name, bot=True))
    assert cl.last(conn, Welcome).bot is True
    return conn


def test_a_bot_joins_only_rooms_that_take_bots_and_shows_as_one() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    robo = _bot(cl, "robo")
    assert cl.last(ann, Welcome).bot is False
    cl.send(ann, Create())
    plain = cl.last(ann, RoomMsg)
    assert plain.bots is False
    cl.send(robo, Join(plain.room))
    [refused] = cl.messages(robo, Error)
    assert refused.code == "no_bots"
    cl.send(ann, Leave())
    cl.send(ann, Create(bots=True))
    open_room = cl.last(ann, RoomMsg)
    assert open_room.bots is True
    cl.send(robo, Join(open_room.room))
    seen = cl.last(ann, RoomMsg)
    assert [(p.name, p.bot) for p in seen.players] == [("ann", False), ("robo", True)]
    cl.send(robo, Ready())
    start(cl, ann)
    cl.tick(cl.now + 1)
    cl.send(robo, Resign())
    cl.send(ann, Resign())
    cl.commit(1)
    result = cl.last(ann, Result)
    assert {r.name: r.bot for r in result.ranks} == {"ann": False, "robo": True}


def test_a_bot_s_own_room_takes_humans_and_bots() -> None:
    cl = Clients()
    robo = _bot(cl, "robo")
    cl.send(robo, Create())
    room = cl.last(robo, RoomMsg)
    assert room.bots is True
    ann = cl.hello("ann")
    cl.send(ann, Join(room.room))
    assert [p.name for p in cl.last(ann, RoomMsg).players] == ["robo", "ann"]


def test_bots_wait_apart_from_humans_in_the_quick_pool() -> None:
    cl = Pooled(HubConfig(quick_max_players=2))
    ann, bob = cl.hello("ann"), cl.hello("bob")
    r1, r2 = _bot(cl, "robo1"), _bot(cl, "robo2")
    for conn in (ann, r1, bob, r2):
        cl.quick(conn)
    cl.tick(cl.now + 60)
    rooms = {c: cl.last(c, RoomMsg).room for c in (ann, bob, r1, r2)}
    assert rooms[ann] == rooms[bob] and rooms[r1] == rooms[r2] and rooms[ann] != rooms[r1]


def test_a_bot_moves_a_human_s_rating_by_half() -> None:
    human, bot = Runner(1, Rating(), 1), Runner(2, Rating(), 2)
    full = rate_race([human, Runner(2, Rating(), 2, bot=False)])[0].after
    half = rate_race([human, Runner(2, Rating(), 2, bot=True)])[0].after
    gained = full.rating - 1500
    assert gained > 0 and abs((half.rating - 1500) - gained / 2) < 1e-9
    # The bot's own rating moves in full.
    assert (
        rate_race([human, bot])[1].after
        == rate_race([human, Runner(2, Rating(), 2, bot=True)])[1].after
    )
