"""Issue 29's quick race on a cluster of three real nodes (PostgreSQL and Redis): one pool
for the whole cluster, the room placed on one node, its players from the other nodes
sent there (relayed, as a ``join`` of theirs would be), one race, one stored result."""

from __future__ import annotations

from pathlib import Path

from protocol.messages import Countdown, Pool, Quick, Race, Resign, Result, Room

from .test_cluster import cluster, hello, redis_prefix, stored_results

__all__ = ["redis_prefix"]  # the fixture, used by name

ENV = {"YUKON_QUICK_FILL": "8", "YUKON_QUICK_WAIT": "20"}  # a full room forms at once


async def test_four_players_on_three_nodes_press_quick_race_and_race_one_room(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b", "c"), ENV) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        bob = await hello(nodes["b"].url, "bob")
        cy = await hello(nodes["c"].url, "cy")
        dan = await hello(nodes["b"].url, "dan")
        await ann.send(Quick())
        first: Pool = await ann.expect(Pool)
        assert first.state == "waiting" and first.max_wait_ms == 20_000
        for p in (bob, cy, dan):
            await p.send(Quick())
        rooms = [await p.expect(Room, quick=True) for p in (ann, bob, cy, dan)]
        assert len({r.room for r in rooms}) == 1, "one room for the four"
        assert sorted(p.name for p in rooms[0].players) == ["ann"], "placed on ann's node"
        for p in (ann, bob, cy, dan):
            await p.expect(Countdown)
            race: Race = await p.expect(Race)
            assert race.state == "playing"
        started: Room = await ann.expect(Room, state="racing")
        assert sorted(p.name for p in started.players) == ["ann", "bob", "cy", "dan"]
        assert started.quick and started.code is None and started.commitment
        # Every node counted the cluster's pool: someone was told more than one waits.
        assert any(
            isinstance(f, Pool) and f.waiting > 1 for p in (ann, bob, cy, dan) for f in p.frames
        )
        for p in (ann, bob, cy, dan):
            await p.send(Resign())
        results = [await p.expect(Result) for p in (ann, bob, cy, dan)]
        assert all(r == results[0] for r in results)
        code = results[0].code
        assert "quick race: room" in nodes["a"].log()
    stored = await stored_results(fresh_postgres, code)
    assert sorted(r.outcome for r in stored) == ["resigned"] * 4


async def test_a_player_alone_on_a_cluster_waits_and_leaves(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b"), ENV) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        await ann.send(Quick())
        waiting: Pool = await ann.expect(Pool)
        assert (waiting.state, waiting.waiting) == ("waiting", 1)
        await ann.send(Quick(leave=True))
        left: Pool = await ann.expect(Pool, state="left")
        assert left.waiting in (0, 1)  # the cluster's count may lag its last round
        bob = await hello(nodes["b"].url, "bob")
        await bob.send(Quick())
        alone: Pool = await bob.expect(Pool)
        assert alone.waiting == 1  # ann left: bob is not paired with anyone
