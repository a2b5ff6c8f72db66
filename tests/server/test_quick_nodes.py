"""Issue 29's quick race on two hubs wired as two nodes (``test_nodes.Cluster``: the real
bus codec, a fake clock): the cluster's pool as an in-memory stand-in for the Redis hash,
matched by ``pool.match`` as ``server.cluster.quickpool``'s pooler does; the room placed on the
longest waiter's node, the other node's player sent in as a ``join`` of theirs."""

from __future__ import annotations

from typing import Any

from protocol.messages import Countdown, Left, Pool, Quick, Race, Room
from server.cluster.cluster import bus
from server.rooms.effects import Effect, PoolEnter, PoolLeave, QuickInvite, Rate
from server.rooms.pool import PoolConfig, Waiter, match
from server.rooms.quick import GATHER_S

from .test_nodes import Cluster


class Pooled(Cluster):
    """Two nodes and the cluster's pool: entries by player id (rating, wall time, node)."""

    def __init__(self, *nodes: str) -> None:
        super().__init__(*nodes)
        self.pool: dict[int, tuple[float, float, str]] = {}
        self.wall = 1_000_000.0

    def apply(self, node: str, effects: list[Effect]) -> None:
        rest: list[Effect] = []
        for e in effects:
            if isinstance(e, Rate):
                self.apply(
                    node,
                    self.hubs[node].quick_rated(
                        e.player_id, rating=1500.0, usual=None, now=self.now
                    ),
                )
            elif isinstance(e, PoolEnter):
                self.pool[e.player_id] = (e.rating, e.joined, node)
            elif isinstance(e, PoolLeave):
                self.pool.pop(e.player_id, None)
            elif isinstance(e, QuickInvite):
                found = bus.outgoing(node, e)
                assert found is not None
                super().apply(node, rest)
                rest = []
                self.relay(*found)
            else:
                rest.append(e)
        super().apply(node, rest)

    def pooler(self, cfg: PoolConfig) -> None:
        """One round of the pooler: match, take the groups out, place each room."""
        waiters = [Waiter(pid, r, joined) for pid, (r, joined, _) in self.pool.items()]
        for group in match(waiters, cfg, self.wall):
            ids = tuple(w.player for w in group.players)
            gateways = tuple(self.pool.pop(pid)[2] for pid in ids)
            self.relay(gateways[0], bus.QuickSeat(ids, gateways))

    def tick(self, at: float) -> None:
        self.now = at
        for node, hub in self.hubs.items():
            self.apply(node, hub.tick(at))


def kinds(inbox: list[Any]) -> list[str]:
    return [type(m).__name__ for m in inbox]


def test_the_room_is_placed_on_the_longest_waiters_node_and_the_other_is_sent_in() -> None:
    cl = Pooled("A", "B")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob", follow=True)
    cl.send(ann, Quick())
    cl.wall += 1.0
    cl.send(bob, Quick())
    assert sorted(n for _, _, n in cl.pool.values()) == ["A", "B"]
    assert cl.last(ann, Pool).state == "waiting"
    # No node matches on its own: the pooler does.
    cl.tick(cl.now + 10.0)
    assert not [m for m in cl.inbox[bob] if isinstance(m, Room)]
    cl.wall += 6.0
    cl.pooler(PoolConfig())
    assert cl.pool == {}
    bob_room = cl.last(bob, Room)
    assert bob_room.quick and sorted(p.name for p in bob_room.players) == ["ann", "bob"]
    assert cl.owner(bob_room.room) == "A"
    assert "Route" in kinds(cl.inbox[bob])  # bob follows: sent to the room's node
    cl.tick(cl.now + 0.5)  # everyone came: the countdown, then the race (countdown 0 here)
    cl.tick(cl.now + 0.1)
    for who in (ann, bob):
        assert isinstance(cl.last(who, Countdown), Countdown)
        assert isinstance(cl.last(who, Race), Race)


def test_a_room_whose_other_player_left_closes_after_the_gathering_time() -> None:
    cl = Pooled("A", "B")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Quick())
    cl.send(bob, Quick())
    waiters = [Waiter(pid, r, j) for pid, (r, j, _) in cl.pool.items()]
    assert len(match(waiters, PoolConfig(fill_s=0.0), cl.wall)) == 1
    ids = tuple(sorted(cl.pool, key=lambda pid: cl.pool[pid][1]))
    gateways = tuple(cl.pool[pid][2] for pid in ids)
    cl.send(bob, Quick(leave=True))  # bob leaves before the room reaches him
    cl.relay(gateways[0], bus.QuickSeat(ids, gateways))
    room = cl.last(ann, Room)
    assert [p.name for p in room.players] == ["ann"] and room.max_players == 2
    cl.tick(cl.now + GATHER_S)
    assert isinstance(cl.last(ann, Left), Left)
    assert cl.last(ann, Pool).state == "left"
    assert not [m for m in cl.inbox[bob] if isinstance(m, Room)]
