"""The quick race in the terminal client (issue 29): ``pool`` in the session, the lines
a waiting player reads, ``yukon play --quick`` entering the pool once welcomed."""

from __future__ import annotations

from client.quick import pool_lines
from client.state import Session
from protocol.messages import Pool, Quick, Room, Welcome


def test_what_a_waiting_player_reads() -> None:
    alone = Pool("waiting", 1, 0, 20_000, 75, "most races start 18:00-22:00 UTC")
    lines = pool_lines(alone, 10.0, 12.0)
    assert lines[0].startswith("Nobody else waits yet") and "no bots" in lines[0]
    assert lines[1] == "Others usually play then: most races start 18:00-22:00 UTC."
    assert lines[2] == "Waited 0:02 of 0:20, matched within ±125 of your rating."
    crowd = Pool("waiting", 3, 19_000, 20_000, 550)
    assert pool_lines(crowd, 0.0, 1.5) == [
        "3 players waiting (you included).",
        "Waited 0:20 of 0:20, matched any rating.",
    ]
    assert pool_lines(Pool("left", 0, 0, 20_000, 75), 0.0, 0.0) == []
    assert pool_lines(None, 0.0, 0.0) == []


def test_the_session_keeps_the_pool_until_a_quick_room_or_leaving() -> None:
    s = Session()
    assert s.quick_race() == [Quick(leave=False)]
    s.receive(Pool("waiting", 2, 0, 20_000, 75), 5.0)
    assert s.pool is not None and s.pool_at == 5.0
    assert s.quick_race() == [Quick(leave=True)]
    s.receive(Pool("left", 1, 0, 20_000, 75), 6.0)
    assert s.pool is None
    s.receive(Pool("waiting", 2, 0, 20_000, 75), 7.0)
    room = Room("QK7RM", "player", "bob", "lobby", "C", None, 2, True, 1800, (), 0, quick=True)
    s.receive(room, 8.0)
    assert s.pool is None and s.room is not None and s.room.quick


def test_play_quick_enters_the_pool_once_welcomed_unless_back_in_a_room() -> None:
    s = Session(quick=True)
    assert s.receive(Welcome(1, "alice", "t" * 32, 60), 0.0) == [Quick()]
    assert s.receive(Welcome(1, "alice", "t" * 32, 60), 1.0) == []  # once
    back = Session(quick=True)
    assert back.receive(Welcome(1, "alice", "t" * 32, 60, room="K7WQM"), 0.0) == []
