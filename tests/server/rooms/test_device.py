"""``hello.device`` (docs/protocol.md 4.31): a malformed one is refused with ``bad_device``
(try again, not a strike); a good one, and the address, go with the runner into the race
record, for the rating rules' "one address" test, and are sent to nobody."""

from __future__ import annotations

from protocol.messages import PROTOCOL_VERSION, Create, Error, Hello, Join, Ready, Resign, Room
from protocol.messages import Welcome as WelcomeMsg

from ..test_rooms import Clients, start, to

GOOD = "Ab3_-" * 4  # 20 characters


def test_a_malformed_device_is_refused_and_the_hello_may_come_again() -> None:
    cl = Clients()
    conn = cl.connect(address="203.0.113.7")
    # (Over 64 characters is a ``bad_field``, as any over-long field is.)
    for bad in ("short", "has space in it!!", "é" * 20):
        [refusal] = to(cl.send(conn, Hello(PROTOCOL_VERSION, "ann", device=bad)), conn)
        assert isinstance(refusal, Error) and refusal.code == "bad_device"
    [welcome] = to(cl.send(conn, Hello(PROTOCOL_VERSION, "ann", device=GOOD)), conn)
    assert isinstance(welcome, WelcomeMsg)


def test_the_device_and_address_go_with_the_runner_into_the_record_and_nowhere_else() -> None:
    cl = Clients()
    conns = {}
    for name, address, device in (("ann", "203.0.113.7", GOOD), ("bob", "203.0.113.7", None)):
        conn = cl.connect(address=address)
        [welcome] = to(cl.send(conn, Hello(PROTOCOL_VERSION, name, device=device)), conn)
        assert isinstance(welcome, WelcomeMsg)
        cl.names[conn] = name
        conns[name] = conn
    [room] = [m for m in to(cl.send(conns["ann"], Create()), conns["ann"]) if isinstance(m, Room)]
    cl.send(conns["bob"], Join(room.room))
    cl.send(conns["bob"], Ready())
    start(cl, conns["ann"])
    cl.send(conns["ann"], Resign(), at=cl.race_start + 1)
    cl.send(conns["bob"], Resign(), at=cl.race_start + 2)
    [record] = cl.persisted
    runs = {r.name: r for r in record.results}
    assert (runs["ann"].address, runs["ann"].device) == ("203.0.113.7", GOOD)
    assert (runs["bob"].address, runs["bob"].device) == ("203.0.113.7", "")
    assert not any(GOOD in repr(m) or "203.0.113.7" in repr(m) for m in cl.all_messages())
