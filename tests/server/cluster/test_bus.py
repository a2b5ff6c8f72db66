"""``server.cluster.bus``: the messages between nodes, their codec and its refusals.

A node drops what it cannot read (another version, an unknown type, a field out of
bounds, garbage) with ``BusError``: the relay logs one line, never a traceback.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgpack
import pytest

from protocol.messages import MAX_FRAME
from server.cluster.cluster import bus
from server.domain.records import Standing
from server.domain.streaks import Streak
from server.rooms.effects import Detach, Forward, Handover, Journal, Locate, Release

MESSAGES: list[Any] = [
    bus.Attach("node-1", 7, 42, "ann", "tok", 1_700_000_000.5, "10.0.0.1", b"\x81\xa1t", True),
    bus.Attach("n", 1, 1, "bob", "t", 0.0, "", None),
    bus.Attach(
        "n",
        2,
        3,
        "cyd",
        "t",
        0.0,
        "",
        None,
        rating=1612,
        provisional=False,
        streak_day=dt.date(2026, 12, 2).toordinal(),
        streak_run=4,
        streak_best=9,
    ),
    bus.Frame("node-1", 7, b"\x81\xa1t\xa4move"),
    bus.Frame("node-1", 7, "a text frame"),
    bus.DetachMsg("node-1", 7),
    bus.Deliver((7, 8, 9), b"\x81\xa1t\xa8progress", True),
    bus.Shut(-3, 4001, "replaced by a newer connection"),
    bus.Home(7, None),
    bus.Home(7, b"\x81"),
    bus.Kick(7),
    bus.PasswordFail("10.0.0.0"),
    bus.QuickSeat((7, 3, 12), ("a", "b", "a")),
    bus.QuickJoin(3, "QK7RM"),
    bus.QuickJoin(3, ""),
]


@pytest.mark.parametrize("message", MESSAGES, ids=repr)
def test_every_message_round_trips(message: Any) -> None:
    data = bus.encode(message)
    assert msgpack.unpackb(data)["v"] == bus.BUS_VERSION
    assert bus.decode(data) == message


def test_every_type_is_covered() -> None:
    assert {type(m) for m in MESSAGES} == set(bus.TYPES.values())


@pytest.mark.parametrize(
    "body",
    [
        {"t": "kick", "v": 2, "conn": 1},  # another version
        {"t": "kick", "conn": 1},  # none
        {"t": "teleport", "v": 1},  # unknown type
        {"t": "kick", "v": 1},  # a field missing
        {"t": "kick", "v": 1, "conn": "7"},  # of the wrong kind
        {"t": "deliver", "v": 1, "conns": [1], "data": "text", "progress": False},
        {"t": "frame", "v": 1, "gateway": "n", "conn": 1, "frame": b"x" * (MAX_FRAME * 4 + 1)},
        [1, 2, 3],  # not a map (the positional lists of before)
    ],
    ids=repr,
)
def test_what_a_node_cannot_read_is_a_bus_error(body: Any) -> None:
    with pytest.raises(bus.BusError):
        bus.decode(msgpack.packb(body, use_bin_type=True))


def test_garbage_is_a_bus_error() -> None:
    with pytest.raises(bus.BusError):
        bus.decode(b"\xc1\xc1")


def test_outgoing_names_the_node_each_effect_is_for() -> None:
    handover = Handover("B", 7, 42, "ann", "tok", 1.5, "10.0.0.1", b"j", follow=True)
    assert bus.outgoing("A", handover) == (
        "B",
        bus.Attach("A", 7, 42, "ann", "tok", 1.5, "10.0.0.1", b"j", True),
    )
    assert bus.outgoing("A", Forward("B", 7, b"m")) == ("B", bus.Frame("A", 7, b"m"))
    assert bus.outgoing("A", Detach("B", 7)) == ("B", bus.DetachMsg("A", 7))
    assert bus.outgoing("A", Release("B", 7, None)) == ("B", bus.Home(7, None))
    assert bus.outgoing("A", Locate(7, "ABCDE", b"j")) is None  # the directory's
    assert bus.outgoing("A", Journal(object())) is None  # type: ignore[arg-type]


def test_an_attach_carries_the_players_standing_and_an_older_nodes_reads_as_none() -> None:
    """The gateway's rating, provisional flag and streak go with the guest (the owner shows
    the rating in the room); an ``attach`` of a node from before these fields decodes,
    as a player with no rating and no streak, and a node from before reads the new one
    (it ignores fields it does not know)."""
    streak = Streak(dt.date(2026, 12, 2), 4, 9)
    standing = Standing(1612, False, streak)
    handover = Handover("B", 7, 42, "ann", "tok", 1.5, "10.0.0.1", None, standing=standing)
    _, attach = bus.outgoing("A", handover)  # type: ignore[misc]
    assert isinstance(attach, bus.Attach)
    decoded = bus.decode(bus.encode(attach))
    assert decoded == attach and decoded.standing == standing

    body = msgpack.unpackb(bus.encode(attach))
    new_fields = ("rating", "provisional", "streak_day", "streak_run", "streak_best")
    older = {k: v for k, v in body.items() if k not in new_fields}
    was = bus.decode(msgpack.packb(older, use_bin_type=True))
    assert isinstance(was, bus.Attach) and was.player == 42
    assert was.standing == Standing()
    # A field this node does not know (as these were to an older one) is ignored.
    later = bus.decode(msgpack.packb({**body, "future": [1, 2]}, use_bin_type=True))
    assert later == attach


@pytest.mark.parametrize(
    "bad", [{"rating": "1500"}, {"streak_day": 0}, {"streak_run": -1}, {"provisional": 1}]
)
def test_an_attachs_standing_out_of_bounds_is_a_bus_error(bad: dict[str, Any]) -> None:
    attach = bus.Attach("n", 1, 1, "bob", "t", 0.0, "", None)
    body = {**msgpack.unpackb(bus.encode(attach)), **bad}
    with pytest.raises(bus.BusError):
        bus.decode(msgpack.packb(body, use_bin_type=True))
