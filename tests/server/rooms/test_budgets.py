"""The budgets an attacker found open (issue 40, item 8), on the hub's fake clock: room
codes that name no room cost the address a guess, and past the budget a code is not even
looked up; new connections per address are bounded in time; daily attempts per player
and per address too. Each at its edge, and each window passing."""

from __future__ import annotations

from protocol.messages import PROTOCOL_VERSION, Create, Daily, Hello, Join, Resign, Watch
from protocol.messages import Room as RoomMsg
from server.rooms import HubConfig
from server.rooms.effects import Close

from ..test_rooms import Clients, codes_of, kinds


def test_guessing_room_codes_costs_the_address() -> None:
    cl = Clients(HubConfig(max_room_misses_per_address=3, room_miss_window_s=60.0))
    host = cl.connect(address="192.0.2.9")
    cl.send(host, Hello(PROTOCOL_VERSION, "host"))
    cl.send(host, Create())
    code = cl.messages(host, RoomMsg)[-1].room
    guesser = cl.connect(address="192.0.2.1")
    cl.send(guesser, Hello(PROTOCOL_VERSION, "guess"))
    for attempt in ("QQQQQ", "WWWWW", "ZZZZZ"):
        cl.send(guesser, Join(attempt))
    assert codes_of(cl, guesser) == ["no_such_room"] * 3
    # The budget is spent: even the right code is not looked up, nor is watching one.
    cl.send(guesser, Join(code))
    cl.send(guesser, Watch(code))
    assert codes_of(cl, guesser)[3:] == ["too_many_guesses", "too_many_guesses"]
    # Another address, and another connection of the same address, count apart and alike.
    again = cl.connect(address="192.0.2.1")
    cl.send(again, Hello(PROTOCOL_VERSION, "guess2"))
    cl.send(again, Join(code))
    assert codes_of(cl, again) == ["too_many_guesses"]
    friend = cl.connect(address="198.51.100.7")
    cl.send(friend, Hello(PROTOCOL_VERSION, "friend"))
    assert "room" in kinds(cl.send(friend, Join(code)), friend)
    # Once the window has passed, the address may look codes up again.
    cl.tick(cl.now + 60.0)
    assert "room" in kinds(cl.send(again, Join(code)), again)


def test_new_connections_per_address_are_bounded_in_time() -> None:
    cl = Clients(HubConfig(max_opens_per_address=3, opens_window_s=10.0))
    hub = cl.hub
    assert all(hub.connect(n, 0.0, address="192.0.2.1") == [] for n in (1, 2, 3))
    for n in (1, 2, 3):
        hub.disconnect(n, 0.5)
    [close] = hub.connect(4, 1.0, address="192.0.2.1")  # none open, still too often
    assert isinstance(close, Close) and close.code == 1013
    assert close.reason == "connecting too often from your address"
    assert hub.connect(5, 1.0, address="192.0.2.2") == []
    assert hub.connect(6, 10.0, address="192.0.2.1") == []


def test_daily_attempts_per_player_and_per_address() -> None:
    cl = Clients(
        HubConfig(max_attempts_per_player=2, max_attempts_per_address=3, attempt_window_s=100.0)
    )

    def attempt(conn: int) -> list[str]:
        before = len(codes_of(cl, conn))
        cl.send(conn, Daily())
        out = codes_of(cl, conn)[before:]
        cl.send(conn, Resign())
        return out

    ann = cl.connect(address="192.0.2.1")
    cl.send(ann, Hello(PROTOCOL_VERSION, "ann"))
    assert attempt(ann) == [] and attempt(ann) == []
    assert attempt(ann) == ["too_many_attempts"]
    bob = cl.connect(address="192.0.2.1")
    cl.send(bob, Hello(PROTOCOL_VERSION, "bob"))
    assert attempt(bob) == []
    assert attempt(bob) == ["too_many_attempts"]  # the address's third was bob's first
    cl.tick(cl.now + 100.0)
    assert attempt(ann) == []
