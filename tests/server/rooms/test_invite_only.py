"""Invite-only rooms (issue 40 item 8; docs/protocol.md 4.32): a room created with
``invite_only`` lets in only a ``join`` or ``watch`` with its key, which ``room`` gives its
members; without it, or with a wrong one, the room is answered exactly as one that does
not exist (and the miss counts against the address's guesses); a race rebuilt after a
restart keeps the key."""

from __future__ import annotations

from protocol.messages import PROTOCOL_VERSION, Create, Hello, Join, Ready, Room, Watch
from server.domain.records import LiveRace
from server.rooms import HubConfig

from ..test_rooms import Clients, error_codes, start, to


def created(cl: Clients, host: int, **create: object) -> Room:
    [room] = [m for m in to(cl.send(host, Create(**create)), host) if isinstance(m, Room)]  # type: ignore[arg-type]
    return room


def test_only_the_key_lets_anyone_in_and_a_wrong_one_reads_as_no_room() -> None:
    cl = Clients(HubConfig(max_room_misses_per_address=3))
    ann = cl.hello("ann")
    room = created(cl, ann, invite_only=True)
    assert room.key is not None and len(room.key) == 12
    bob = cl.connect(address="203.0.113.9")
    cl.send(bob, Hello(PROTOCOL_VERSION, "bob"))
    cl.names[bob] = "bob"
    refused = to(cl.send(bob, Join(room.room)), bob)
    missing = to(cl.send(bob, Join("ZZZZZ")), bob)
    assert [m.code for m in refused] == [m.code for m in missing] == ["no_such_room"]
    assert error_codes(cl.send(bob, Watch(room.room, key="x" * 12)), bob) == ["no_such_room"]
    # Three misses: the address's budget is spent, even for the right key.
    assert error_codes(cl.send(bob, Join(room.room, key=room.key)), bob) == ["too_many_guesses"]
    cy = cl.hello("cy")
    assert error_codes(cl.send(cy, Join(room.room, key=room.key)), cy) == []
    seen = [m for m in to(cl.send(cy, Ready()), cy) if isinstance(m, Room)][-1]
    assert seen.key == room.key  # every member can pass the link on


def test_an_open_room_has_no_key_and_ignores_one() -> None:
    cl = Clients()
    ann, bob = cl.hello("ann"), cl.hello("bob")
    room = created(cl, ann)
    assert room.key is None
    assert error_codes(cl.send(bob, Join(room.room, key="anything-at-all")), bob) == []


def test_a_rebuilt_race_stays_invite_only() -> None:
    cl = Clients()
    ann, bob = cl.hello("ann"), cl.hello("bob")
    cl.hello("cy")  # registered before the restart, in no room
    room = created(cl, ann, invite_only=True)
    cl.send(bob, Join(room.room, key=room.key))
    cl.send(bob, Ready())
    start(cl, ann)
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    assert live.invite_key == room.key
    after = Clients()
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    after.hub.restore(live, [], alive_ms=1_000, now=after.now)
    cy, _ = after.resume("cy")
    assert error_codes(after.send(cy, Watch(room.room)), cy) == ["no_such_room"]
    assert error_codes(after.send(cy, Watch(room.room, key=room.key)), cy) == []
