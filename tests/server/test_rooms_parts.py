"""The parts of the hub (server/rooms/), each built alone on a ``Shared`` state.

``test_rooms.py`` drives them all through ``Hub``; these show that a part needs nothing
but the shared state and what it is given, and can be tested so.
"""

from __future__ import annotations

from protocol.messages import PROTOCOL_VERSION, Error, Hello
from server.rooms.config import HubConfig
from server.rooms.effects import Close, Send
from server.rooms.password import Password
from server.rooms.play import Play
from server.rooms.shared import Shared
from server.rooms.state import CLOSE_POLICY, _Conn


def test_the_password_lets_the_right_one_on_and_refuses_a_wrong_one() -> None:
    shared = Shared(HubConfig(password="sesame"), lambda: 0.0)
    passed: list[int] = []
    password = Password(shared, lambda c, msg, now: passed.append(c.id))
    for conn, key, given in ((1, "10.0.0.1", "sesame"), (2, "10.0.0.2", "guess")):
        c = shared.conns[conn] = _Conn(conn, 0.0, 40.0, 0.0, key=key)
        password.turn(c, Hello(PROTOCOL_VERSION, name="ann", password=given), 0.0)
    assert passed == [1]
    [send, close] = shared.flush()
    assert isinstance(send, Send) and send.conn == 2
    assert isinstance(send.message, Error) and send.message.code == "password"
    assert close == Close(2, CLOSE_POLICY, "wrong password")
    assert shared.out == []


def test_play_draws_room_codes_that_no_room_and_no_daily_attempt_holds() -> None:
    shared = Shared(HubConfig(max_rooms=3), lambda: 0.0)
    codes = iter(["AAAAA", "BBBBB", "CCCCC"])
    play = Play(
        shared,
        random_deal=lambda: 1,
        new_salt=lambda: "5a17" * 8,
        new_room_code=lambda: next(codes),
        boot="test",
    )
    shared.daily_rooms.update({1: "AAAAA", 2: "BBBBB"})
    assert not play.rooms_full()
    assert play.free_room_code() == "CCCCC"
    shared.daily_rooms[3] = "CCCCC"
    assert play.rooms_full()
