"""The operator's marks on a running hub (issue 40, item 5), on the fake clock: a closed
account's session is told and closed with 4004 and its next hello refused; marked accounts
wait in a lane of their own and meet only each other in the quick-race pool; bots in
theirs."""

from __future__ import annotations

from protocol.messages import PROTOCOL_VERSION, Error, Hello
from server.rooms import HubConfig
from server.rooms.effects import Close
from server.rooms.events import Enforce
from server.rooms.pool import Pool, PoolConfig

from ..test_quick import Pooled
from ..test_rooms import Clients, to


def test_lanes_never_meet() -> None:
    pool = Pool(PoolConfig(min_players=2, max_players=2, fill_s=0.0, max_wait_s=1.0))
    pool.enter(1, 1500, 0.0)
    pool.enter(2, 1500, 0.0, "marked")
    pool.enter(3, 1500, 0.0, "bot")
    assert pool.match(100.0) == []  # a band without limit still keeps lanes apart
    pool.enter(4, 1900, 1.0, "marked")
    [group] = pool.match(100.0)
    assert {w.player for w in group.players} == {2, 4}
    # A mark made while waiting moves the waiter, keeping their place in time.
    pool.enter(1, 1500, 50.0, "bot")
    [group] = pool.match(100.0)
    assert {w.player for w in group.players} == {1, 3}
    assert min(w.joined for w in group.players) == 0.0


def test_a_closed_account_is_closed_now_and_at_its_next_hello() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    ann_id = cl.registry["ann"][0]
    effects = cl.hub.handle(Enforce({}, frozenset({ann_id})), cl.now)
    [error] = [m for m in to(effects, ann) if isinstance(m, Error)]
    assert error.code == "account_closed"
    [close] = [e for e in effects if isinstance(e, Close)]
    assert close.conn == ann and close.code == 4004
    cl.disconnect(ann)
    # The token still names the account: its hello is refused the same way.
    again = cl.connect()
    effects = cl.send(again, Hello(PROTOCOL_VERSION, token=cl.tokens["ann"]))
    codes = [m.code for m in cl.messages(again, Error)]
    assert codes == ["account_closed"] and cl.closed[again].code == 4004
    # Reopened: welcome again.
    cl.hub.handle(Enforce({}, frozenset()), cl.now)
    third = cl.connect()
    cl.send(third, Hello(PROTOCOL_VERSION, token=cl.tokens["ann"]))
    assert [m.TYPE for m in cl.messages(third)][:1] == ["welcome"]


def test_marked_players_meet_only_each_other_in_the_quick_pool() -> None:
    cl = Pooled(HubConfig(quick_max_players=2))
    names = ["ann", "bob", "cy", "dee"]
    conns = {n: cl.hello(n) for n in names}
    ids = {n: cl.registry[n][0] for n in names}
    cl.hub.handle(
        Enforce({ids["ann"]: frozenset({"boost"}), ids["cy"]: frozenset({"engine"})}), cl.now
    )
    for n in names:
        cl.quick(conns[n])
    cl.tick(cl.now + 60)
    seated: dict[str, str | None] = {}
    for n in names:
        room_msgs = [m for m in cl.messages(conns[n]) if getattr(m, "TYPE", "") == "room"]
        seated[n] = room_msgs[-1].room if room_msgs else None
    assert seated["ann"] == seated["cy"] is not None
    assert seated["bob"] == seated["dee"] is not None and seated["bob"] != seated["ann"]
