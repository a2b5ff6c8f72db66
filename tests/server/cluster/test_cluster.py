"""A cluster of real ``yukon serve --redis`` processes on one PostgreSQL and one Redis.

Each test starts its nodes as subprocesses on port 0, with a PostgreSQL database of its
own (created and dropped here) and a Redis key prefix of its own, and plays through real
websockets (docs/cluster.md). Without PostgreSQL or Redis the tests are skipped, except
under ``CI=true``, where that is a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.tcp_proxy import TcpProxy
from protocol.messages import (
    Accepted,
    Create,
    Error,
    Ghost,
    Hello,
    Join,
    MoveMsg,
    Progress,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    Start,
    Watch,
    Welcome,
)
from server.storage.models import LiveActionRow, LiveRaceRow
from server.storage.sql import SqlStore

from ..wire import Client, winning_line

REDIS = os.environ.get("YUKON_TEST_REDIS", "redis://127.0.0.1:6379/0")
TIMEOUT = 20.0
#: How long a node may take to start listening: on a loaded machine (two test workers on
#: two cores, say) a fresh process's imports and migrations can take well over 20 s, and
#: how long it takes is not what any test here is about.
START_TIMEOUT = 60.0


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix of this test's own on the test Redis; its keys are deleted after."""
    import redis

    client = redis.Redis.from_url(REDIS, socket_connect_timeout=2)
    try:
        client.ping()
    except Exception as exc:
        message = f"Redis at {REDIS} is unreachable: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    prefix = f"yukon-test-{secrets.token_hex(4)}:"
    try:
        yield prefix
    finally:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
        client.close()


class Node:
    """``yukon serve --redis`` in its own process, its log read on a thread."""

    def __init__(
        self,
        db: str,
        spool: Path,
        prefix: str,
        name: str,
        *,
        redis: str = REDIS,
        env: dict[str, str] | None = None,
    ) -> None:
        env = {
            **os.environ,
            "YUKON_RESUME_WINDOW": "30",
            "YUKON_MSG_RATE": "500",
            "YUKON_MSG_BURST": "500",
            **(env or {}),
        }
        self.name = name
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "yukon",
                "serve",
                "--port",
                "0",
                "--db",
                db,
                "--spool",
                str(spool),
                "--redis",
                redis,
                "--redis-prefix",
                prefix,
                "--node-id",
                name,
                "--solver-processes",
                "0",
            ],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self.listening = threading.Event()
        self.url = ""
        threading.Thread(target=self._read, daemon=True).start()

    def wait(self) -> Node:
        if not self.listening.wait(START_TIMEOUT):
            self.proc.kill()
            raise AssertionError(f"node {self.name} did not start:\n" + "".join(self.lines))
        return self

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            match = re.search(r"listening on (ws://\S+)", line)
            if match:
                self.url = match.group(1)
                self.listening.set()

    async def started(self) -> Node:
        """``wait`` off the event loop (the loop may be running a proxy for the node)."""
        return await asyncio.to_thread(self.wait)

    def log(self) -> str:
        return "".join(self.lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)


@contextlib.asynccontextmanager
async def cluster(
    db: str,
    tmp_path: Path,
    prefix: str,
    names: tuple[str, ...],
    env: dict[str, str] | None = None,
    **redis: str,
) -> AsyncIterator[dict[str, Node]]:
    nodes: dict[str, Node] = {}
    try:
        for name in names:  # one by one: the first migrates the fresh database
            spool = tmp_path / f"spool-{name}.jsonl"
            nodes[name] = Node(db, spool, prefix, name, env=env, **redis).wait()
        yield nodes
    finally:
        for node in nodes.values():
            node.kill()
            print(f"--- node {node.name}\n{node.log()}")  # shown if the test fails


class Player(Client):
    """A test client with a roomier timeout: a resume may wait for a takeover."""

    timeout = TIMEOUT


def urlopen_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return str(reply.read().decode()).strip()


async def hello(url: str, name: str | None = None, token: str | None = None) -> Player:
    player = Player(await connect(url))
    await player.send(Hello(1, name=name, token=token))
    await player.expect(Welcome)
    return player


def token_of(player: Player) -> str:
    welcome = next(f for f in player.frames if isinstance(f, Welcome))
    return str(welcome.token)


async def closed_code(player: Player) -> int | None:
    """The close code the server sent, or None when the connection just broke."""
    try:
        while True:
            await asyncio.wait_for(player.ws.recv(), TIMEOUT)
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else None
    finally:
        player.ws.transport.abort()


async def all_ready(host: Player, players: int) -> None:
    """Read the host's room messages until every one of ``players`` is ready (a guest's
    ready goes through the relay: it may arrive after the host's next frame)."""
    while True:
        room = await host.expect(Room)
        if len(room.players) == players and all(p.ready for p in room.players):
            return


async def play(player: Player, moves: list[str], first: int = 1) -> list[tuple[int, str]]:
    acked = []
    for seq, move in enumerate(moves, start=first):
        await player.send(MoveMsg(seq, move))
        reply = await player.expect(Accepted, seq=seq)
        assert reply.move == move
        acked.append((seq, move))
    return acked


async def resume(url: str, token: str, acked: list[tuple[int, str]]) -> tuple[Player, Race]:
    """Reconnect with the token, and resend every acknowledged move the server lost. A
    1012 (come back: the room's node went away) is answered as the client does: again."""
    for _ in range(10):
        try:
            return await resume_once(url, token, acked)
        except ConnectionClosed as exc:
            if exc.rcvd is None or exc.rcvd.code != 1012:
                raise
            await asyncio.sleep(0.2)
    raise AssertionError("ten 1012s in a row")


async def resume_once(url: str, token: str, acked: list[tuple[int, str]]) -> tuple[Player, Race]:
    player = await hello(url, token=token)
    race: Race = await player.expect(Race)
    for seq, move in acked:
        if seq > race.seq:
            await player.send(MoveMsg(seq, move))
            reply = await player.expect(Accepted, seq=seq)
            assert reply.move == move
    return player, race


async def lobby_of_two(host: Player, guest: Player, code: str, **create: Any) -> Room:
    """``host`` creates a room on deal ``code``; ``guest`` joins it and is ready."""
    await host.send(Create(code=code, **create))
    room: Room = await host.expect(Room)
    await guest.send(Join(room.room))
    await guest.expect(Room, room=room.room)
    await guest.send(Ready(True))
    await all_ready(host, 2)
    return room


async def start(host: Player, *others: Player) -> None:
    """The host starts the race; everyone gets their ``race``."""
    await host.send(Start())
    for p in (host, *others):
        await p.expect(Race)


async def journaled(db: str, moves: int) -> None:
    """Wait (bounded) until ``live_actions`` holds ``moves`` rows."""
    store = SqlStore(db)
    try:
        for _ in range(200):
            async with store.engine.connect() as conn:
                count = (
                    await conn.execute(select(func.count()).select_from(LiveActionRow))
                ).scalar_one()
            if count >= moves:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"the journal did not reach {moves} actions")
    finally:
        await store.close()


async def stored_results(db: str, code: str) -> list[Any]:
    store = SqlStore(db)
    try:
        return list(await store.stored_results(code=code))
    finally:
        await store.close()


async def test_four_players_on_three_nodes_race_one_room_and_a_spectator_watches(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b", "c")) as nodes:
        for name, node in nodes.items():
            assert f"node {name} of a cluster" in node.log()
            http = node.url.replace("ws://", "http://")
            health = await asyncio.to_thread(urlopen_text, f"{http}/healthz")
            assert health == f"ok node {name}"
            metrics = await asyncio.to_thread(urlopen_text, f"{http}/metrics")
            assert f'yukon_node_info{{node="{name}"}} 1.0' in metrics
        ann = await hello(nodes["a"].url, "ann")
        bob = await hello(nodes["b"].url, "bob")
        cy = await hello(nodes["c"].url, "cy")
        dan = await hello(nodes["b"].url, "dan")
        eve = await hello(nodes["c"].url, "eve")
        await ann.send(Create(code=code, max_players=4))
        room: Room = await ann.expect(Room)
        for p in (bob, cy, dan):
            await p.send(Join(room.room))
            await p.expect(Room, room=room.room)
            await p.send(Ready(True))
        await all_ready(ann, 4)
        await eve.send(Watch(room.room))
        watched: Room = await eve.expect(Room, you="spectator")
        assert [p.name for p in watched.players] == ["ann", "bob", "cy", "dan"]
        await ann.expect(Room, spectators=1)
        await ann.send(Start())
        for p in (ann, bob, cy, dan):
            await p.expect(Race)

        await play(ann, line)
        await play(bob, line)  # the same deal: bob wins second
        await cy.send(Resign())
        await dan.send(Resign())
        results = [await p.expect(Result) for p in (ann, bob, cy, dan, eve)]
        ranks = [(r.name, r.rank, r.outcome) for r in results[0].ranks]
        assert ranks[:2] == [("ann", 1, "won"), ("bob", 2, "won")]
        assert sorted(r[0] for r in ranks[2:]) == ["cy", "dan"]
        assert all(r == results[0] for r in results)  # every node relayed the same result
        # The owner counts every move its race accepted, relayed ones (bob's) too.
        for name, moves in (("a", 2 * len(line)), ("b", 0), ("c", 0)):
            http = nodes[name].url.replace("ws://", "http://")
            metrics = await asyncio.to_thread(urlopen_text, f"{http}/metrics")
            assert f"yukon_moves_accepted_total {float(moves)}" in metrics, name

    stored = await stored_results(fresh_postgres, code)
    assert sorted(r.outcome for r in stored) == ["resigned", "resigned", "won", "won"]
    assert all(r.actions == tuple(line) for r in stored if r.outcome == "won")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
async def test_kill_9_of_the_owner_mid_race_every_player_resumes_through_another_node(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str, sig: signal.Signals
) -> None:
    """SIGKILL: no goodbye, no last journal group. SIGTERM: the owner writes what it has,
    closes its clients with 1012 and leaves; the others take its races at once."""
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b", "c")) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        bob = await hello(nodes["b"].url, "bob")
        cy = await hello(nodes["c"].url, "cy")  # a spectator, on the third node
        tokens = {"ann": token_of(ann), "bob": token_of(bob), "cy": token_of(cy)}
        room = await lobby_of_two(ann, bob, code)
        await cy.send(Watch(room.room))
        await cy.expect(Room, you="spectator")
        await ann.expect(Room, spectators=1)
        await start(ann, bob)
        half = len(line) // 2
        ann_acked = await play(ann, line[:half])
        bob_acked = await play(bob, line[:10])
        last = ann.frames[-1]
        await journaled(fresh_postgres, 1)

        bob_closed = asyncio.create_task(closed_code(bob))
        cy_closed = asyncio.create_task(closed_code(cy))
        killed = time.monotonic()
        ann_closed = asyncio.create_task(closed_code(ann))
        nodes["a"].proc.send_signal(sig)
        await asyncio.to_thread(nodes["a"].proc.wait, TIMEOUT)
        assert await ann_closed == (1012 if sig is signal.SIGTERM else None)
        # bob's node notices the owner is gone and sends him off to resume (1012).
        assert await bob_closed == 1012
        assert await cy_closed == 1012

        ann2, race = await resume(nodes["b"].url, tokens["ann"], ann_acked)
        bob2, _ = await resume(nodes["c"].url, tokens["bob"], bob_acked)
        resumed = time.monotonic() - killed
        assert resumed < 10.0, f"resumed {resumed:.1f} s after the owner died"
        # The time the owner was away is not charged.
        assert race.elapsed_ms < last.elapsed_ms + 10_000
        assert "taken over from node a" in nodes["b"].log() + nodes["c"].log()
        # The spectator watches on: the new owner seated them again from the directory.
        cy2 = await hello(nodes["b"].url, token=tokens["cy"])
        welcome = next(f for f in cy2.frames if isinstance(f, Welcome))
        assert welcome.room == room.room
        watching: Room = await cy2.expect(Room, you="spectator")
        assert watching.state == "racing"

        await play(ann2, line[half:], first=half + 1)
        await bob2.send(Resign())
        result: Result = await ann2.expect(Result)
        assert [(r.name, r.outcome) for r in result.ranks] == [
            ("ann", "won"),
            ("bob", "resigned"),
        ]
        assert await cy2.expect(Result) == result

    stored = await stored_results(fresh_postgres, code)
    won = next(r for r in stored if r.outcome == "won")
    assert won.actions == tuple(line)  # every accepted move kept, none twice
    bob_run = next(r for r in stored if r.outcome == "resigned")
    assert bob_run.actions[:10] == tuple(line[:10])


async def test_a_lobby_whose_node_was_killed_is_adopted_and_its_players_resume_into_it(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """A room with no race has no journal: its owner keeps a snapshot in the directory,
    and another node adopts it; an invite link to it still works."""
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b", "c")) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        bob = await hello(nodes["b"].url, "bob")
        tokens = {"ann": token_of(ann), "bob": token_of(bob)}
        room = await lobby_of_two(ann, bob, code, max_players=3)
        await asyncio.sleep(1.5)  # a renewal writes the snapshot (once a second)

        bob_closed = asyncio.create_task(closed_code(bob))
        killed = time.monotonic()
        nodes["a"].kill()
        assert await bob_closed == 1012
        ann2 = await hello(nodes["c"].url, token=tokens["ann"])
        bob2 = await hello(nodes["b"].url, token=tokens["bob"])
        back: Room = await ann2.expect(Room, room=room.room)
        assert time.monotonic() - killed < 10.0
        assert (back.state, back.code, back.max_players) == ("lobby", code, 3)
        assert [p.name for p in back.players] == ["ann", "bob"]
        assert "lobby taken over from node a" in nodes["b"].log() + nodes["c"].log()
        await bob2.expect(Room, room=room.room)
        dee = await hello(nodes["b"].url, "dee")  # the invite link's code still works
        await dee.send(Watch(room.room))
        await dee.expect(Room, you="spectator")
        await all_ready(ann2, 2)
        await start(ann2, bob2)
        await play(ann2, line)
        await bob2.send(Resign())
        result: Result = await ann2.expect(Result)
        assert [(r.name, r.outcome) for r in result.ranks] == [("ann", "won"), ("bob", "resigned")]


async def test_a_node_restarted_at_once_under_its_own_id_takes_its_former_races_back(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """A supervisor (docker's restart policy) brings a crashed node back under the same
    id before its heartbeat lapses: nobody judged it dead, so it must take its races."""
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b")) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        await ann.send(Create(code=code))
        await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(Race)
        acked = await play(ann, line[:10])
        await journaled(fresh_postgres, 1)
        # "At once" is before a's heartbeat lapses (3 s), which a loaded machine's start of
        # a process can outlast: b is stopped (SIGSTOP) while a is brought back, so nobody
        # can judge a dead in between, however long the start takes.
        nodes["b"].proc.send_signal(signal.SIGSTOP)
        try:
            nodes["a"].kill()
            again = Node(fresh_postgres, tmp_path / "spool-a2.jsonl", redis_prefix, "a")
            nodes["a2"] = await again.started()
        finally:
            nodes["b"].proc.send_signal(signal.SIGCONT)
        assert "taken over from node a" in again.log()
        ann2, race = await resume(again.url, token_of(ann), acked)
        assert race.seq <= len(acked)
        await play(ann2, line[len(acked) :], first=len(acked) + 1)
        result: Result = await ann2.expect(Result)
        assert [(r.name, r.outcome) for r in result.ranks] == [("ann", "won")]
    stored = await stored_results(fresh_postgres, code)
    assert [r.actions for r in stored] == [tuple(line)]


async def test_a_ghost_race_taken_over_from_a_dead_node_races_its_ghost_on(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b")) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        await ann.send(Create(code=code, max_players=2))
        await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(Race)
        await play(ann, line[:20])
        await ann.send(Resign())
        done: Result = await ann.expect(Result)
        cy = await hello(nodes["a"].url, "cy")
        await cy.send(Ghost(done.race, "ann"))
        lobby: Room = await cy.expect(Room)
        assert lobby.ghost == "ann"
        await cy.send(Start())
        await cy.expect(Race)
        acked = await play(cy, line[:3])
        await journaled(fresh_postgres, 3)  # cy's 3 (ann's race is stored, not live)

        nodes["a"].kill()
        again, _ = await resume(nodes["b"].url, token_of(cy), acked)
        room = next(f for f in again.frames if isinstance(f, Room))
        assert (room.ghost, room.state) == ("ann", "racing")
        progress: Progress = await again.expect(Progress)
        assert progress.ghost is not None and progress.ghost.name == "ann"
        await again.send(Resign())
        result: Result = await again.expect(Result)
        assert result.ghost is not None and result.ghost.name == "ann"


def kill_channel(prefix: str, node: str) -> int:
    """Cut node ``node``'s channel (its pub/sub connection, named by the relay): what
    is published to it until it listens again is lost. Returns how many were cut."""
    import redis

    client = redis.Redis.from_url(REDIS)
    try:
        ids = [c["id"] for c in client.client_list() if c.get("name") == f"{prefix}sub:{node}"]
        for cid in ids:
            client.client_kill_filter(_id=cid)
        return len(ids)
    finally:
        client.close()


async def test_a_node_whose_channel_broke_sends_the_sessions_it_relays_to_resume(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """Pub/sub keeps nothing: a frame relayed while a channel is down is lost. Both ends
    of a relayed session are closed with 1012 instead, and the client resumes."""
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b")) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        bob = await hello(nodes["b"].url, "bob")
        tokens = {"ann": token_of(ann), "bob": token_of(bob)}
        await lobby_of_two(ann, bob, code)
        await start(ann, bob)
        bob_acked = await play(bob, line[:5])

        for node in ("a", "b"):  # the owner's channel, then the gateway's
            closed = asyncio.create_task(closed_code(bob))
            assert await asyncio.to_thread(kill_channel, redis_prefix, node) == 1
            assert await closed == 1012
            assert "listening again" in nodes[node].log()
            bob, _ = await resume(nodes["b"].url, tokens["bob"], bob_acked)
            bob_acked += await play(
                bob, line[len(bob_acked) : len(bob_acked) + 5], first=len(bob_acked) + 1
            )

        await ann.send(Resign())  # ann, on the owner itself, was never relayed nor closed
        await play(bob, line[len(bob_acked) :], first=len(bob_acked) + 1)
        result: Result = await bob.expect(Result)
        assert [(r.name, r.outcome) for r in result.ranks] == [("bob", "won"), ("ann", "resigned")]

    stored = await stored_results(fresh_postgres, code)
    won = next(r for r in stored if r.outcome == "won")
    assert won.actions == tuple(line)  # every accepted move kept, none twice


async def test_a_node_whose_lease_lapsed_while_redis_was_away_for_it_writes_nothing(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """Node a reaches Redis through a proxy the test cuts: its lease lapses, node b takes
    the race over (epoch 2), and a, still racing its own client, is fenced by the
    database: the move it accepts then is not journaled, it drops the room, and the
    client resumes on b and resends it."""
    code, line = winning_line()
    host, port = REDIS.split("//", 1)[1].split("/", 1)[0].split(":")
    proxy = TcpProxy(host, int(port))
    await proxy.start()
    db_n = REDIS.rsplit("/", 1)[1]
    via_proxy = f"redis://127.0.0.1:{proxy.port}/{db_n}"
    try:
        nodes: dict[str, Node] = {}
        try:
            nodes["a"] = await Node(
                fresh_postgres, tmp_path / "a.jsonl", redis_prefix, "a", redis=via_proxy
            ).started()
            nodes["b"] = await Node(
                fresh_postgres, tmp_path / "b.jsonl", redis_prefix, "b"
            ).started()
            ann = await hello(nodes["a"].url, "ann")
            token = token_of(ann)
            await ann.send(Create(code=code))
            await ann.expect(Room)
            await ann.send(Start())
            await ann.expect(Race)
            acked = await play(ann, line[:5])
            await journaled(fresh_postgres, 5)

            await proxy.cut()  # a cannot reach Redis; b can
            store = SqlStore(fresh_postgres)
            try:
                for _ in range(200):  # b takes the race over once a's heartbeat lapses
                    async with store.engine.connect() as conn:
                        row = (await conn.execute(select(LiveRaceRow))).one()
                    if row.owner == "b":
                        break
                    await asyncio.sleep(0.05)
                assert (row.owner, row.epoch) == ("b", 2)
                # a still races its client: it accepts the move, but may not journal it.
                closing = asyncio.create_task(closed_code(ann))
                await ann.send(MoveMsg(6, line[5]))
                assert await closing == 1012  # fenced: a drops the room
                async with store.engine.connect() as conn:
                    seqs = (await conn.execute(select(LiveActionRow.seq))).scalars().all()
                assert sorted(s for s in seqs if s is not None) == [1, 2, 3, 4, 5]
            finally:
                await store.close()
            assert "fenced by the database" in nodes["a"].log()
            ann_accepted = [f for f in ann.frames if isinstance(f, Accepted)]
            if ann_accepted and ann_accepted[-1].seq == 6:
                acked.append((6, line[5]))

            ann2, _ = await resume(nodes["b"].url, token, acked)
            await play(ann2, line[len(acked) :], first=len(acked) + 1)
            await ann2.expect(Result)
        finally:
            for node in nodes.values():
                node.kill()
                print(f"--- node {node.name}\n{node.log()}")
    finally:
        await proxy.cut()

    stored = await stored_results(fresh_postgres, code)
    assert [r.actions for r in stored] == [tuple(line)]


async def test_three_nodes_starting_together_choose_the_daily_deal_once(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    nodes = [
        Node(fresh_postgres, tmp_path / f"{n}.jsonl", redis_prefix, n) for n in ("a", "b", "c")
    ]
    try:
        for node in nodes:
            node.wait()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            chosen = [line for n in nodes for line in n.lines if "daily deal for" in line]
            if len([x for x in chosen if "chosen" in x]) >= 2:  # today and tomorrow
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # time for a second choice, if the lock let one through
        chosen = [line for n in nodes for line in n.lines if "chosen:" in line]
        dates = [re.search(r"daily deal for (\S+) chosen", x).group(1) for x in chosen]  # type: ignore[union-attr]
        assert sorted(dates) == sorted(set(dates)) and len(dates) == 2, chosen
        # One of them migrated the fresh database; the others found it done (the lock).
        migrated = [n.name for n in nodes if "migrated from empty" in n.log()]
        assert len(migrated) == 1, migrated
        assert all("is at migration" in n.log() for n in nodes if n.name not in migrated)
    finally:
        for node in nodes:
            node.kill()


async def test_with_redis_away_nodes_race_their_own_rooms_refuse_the_rest_and_recover(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """Both nodes reach Redis through one proxy the test cuts: a Redis outage for all.
    a's race goes on; what needs the directory is refused with ``unavailable``; no node
    takes a room over; once Redis is back, rooms open and join across nodes again."""
    code, line = winning_line()
    host, port = REDIS.split("//", 1)[1].split("/", 1)[0].split(":")
    proxy = TcpProxy(host, int(port))
    await proxy.start()
    via_proxy = f"redis://127.0.0.1:{proxy.port}/{REDIS.rsplit('/', 1)[1]}"
    nodes: dict[str, Node] = {}
    try:
        for name in ("a", "b"):
            nodes[name] = await Node(
                fresh_postgres, tmp_path / f"{name}.jsonl", redis_prefix, name, redis=via_proxy
            ).started()
        ann = await hello(nodes["a"].url, "ann")
        bob = await hello(nodes["b"].url, "bob")
        await ann.send(Create(code=code))
        room: Room = await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(Race)
        half = len(line) // 2
        await play(ann, line[:5])

        await proxy.cut()
        await asyncio.sleep(4.0)  # past every heartbeat and lease's TTL
        await play(ann, line[5:half], first=6)  # a's own room races on
        await bob.send(Join(room.room))
        refused = await bob.expect(Error)
        assert refused.code == "unavailable" and "directory" in refused.text
        await bob.send(Create())
        refused = await bob.expect(Error)
        assert refused.code == "unavailable"

        await proxy.restore()
        for _ in range(100):  # b's relay reconnects within a few seconds
            await bob.send(Create())
            reply = await bob.expect((Room, Error))
            if isinstance(reply, Room):
                break
            await asyncio.sleep(0.2)
        assert isinstance(reply, Room)
        await play(ann, line[half:], first=half + 1)
        result: Result = await ann.expect(Result)
        assert result.ranks[0].outcome == "won"
        await asyncio.sleep(2.0)
        logs = nodes["a"].log() + nodes["b"].log()
        assert "taken over" not in logs and "fenced" not in logs
    finally:
        for node in nodes.values():
            node.kill()
            print(f"--- node {node.name}\n{node.log()}")
        await proxy.cut()
    stored = await stored_results(fresh_postgres, code)
    assert [r.actions for r in stored] == [tuple(line)]


def haproxy_config(port: int, nodes: list[Node]) -> str:
    """deploy/haproxy.cfg for this machine: listening on ``port``, balancing ``nodes``
    (no Docker DNS)."""
    text = (Path(__file__).resolve().parents[3] / "deploy" / "haproxy.cfg").read_text()
    text = re.sub(r"resolvers docker\n(    .*\n)+", "", text)
    text = text.replace(" resolvers docker init-addr last,libc,none", "")
    text = text.replace("bind :8765", f"bind 127.0.0.1:{port}")
    text = re.sub(r"maxconn \d+", "maxconn 4000", text)  # within this machine's fd limit
    servers = "".join(f"    server {n.name} {n.url.removeprefix('ws://')}\n" for n in nodes)
    return re.sub(r"(    server node\d .*\n)+", servers, text)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_through_haproxy_players_race_and_resume_after_the_owner_is_killed(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """The deployment's own HAProxy configuration in front of three nodes: players reach
    whichever node it picks, race, and resume through it after kill -9 of the owner."""
    import shutil

    import redis

    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("haproxy is not installed")
        pytest.skip("haproxy is not installed")
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b", "c")) as nodes:
        port = free_port()
        cfg = tmp_path / "haproxy.cfg"
        cfg.write_text(haproxy_config(port, list(nodes.values())))
        lb = subprocess.Popen([haproxy, "-db", "-f", str(cfg)], stderr=subprocess.DEVNULL)
        try:
            url = f"ws://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    ann = await hello(url, "ann")
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            bob = await hello(url, "bob")
            tokens = {"ann": token_of(ann), "bob": token_of(bob)}
            room = await lobby_of_two(ann, bob, code)
            await start(ann, bob)
            acked = {"ann": await play(ann, line[:20]), "bob": await play(bob, line[:7])}
            await journaled(fresh_postgres, 1)

            r = redis.Redis.from_url(REDIS)
            owner = r.get(f"{redis_prefix}room:{room.room}")
            r.close()
            assert owner is not None
            killed = time.monotonic()
            nodes[owner.decode()].kill()
            for p in (ann, bob):
                p.ws.transport.abort()
            # Through the load balancer again: it skips the dead node (redispatch).
            ann2, _ = await resume(url, tokens["ann"], acked["ann"])
            bob2, _ = await resume(url, tokens["bob"], acked["bob"])
            assert time.monotonic() - killed < 10.0
            await play(ann2, line[20:], first=21)
            await bob2.send(Resign())
            result: Result = await ann2.expect(Result)
            assert [(x.name, x.outcome) for x in result.ranks] == [
                ("ann", "won"),
                ("bob", "resigned"),
            ]
            # The load balancer holds an address to 64 connections over all the nodes
            # (each node counts only its own): ann2 and bob2, 62 more, then 429.
            more = [await connect(url) for _ in range(62)]
            with pytest.raises(InvalidStatus) as refused:
                await connect(url)
            assert refused.value.response.status_code == 429
            await more.pop().close()
            await asyncio.sleep(0.2)
            more.append(await connect(url))  # one closed: one may open
            for ws in more:
                await ws.close()
        finally:
            lb.kill()
            lb.wait(TIMEOUT)
    stored = await stored_results(fresh_postgres, code)
    assert next(x for x in stored if x.outcome == "won").actions == tuple(line)


async def test_wrong_passwords_through_one_node_delay_the_address_on_the_others(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    env = {"YUKON_PASSWORD": "hunter2"}
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b"), env=env) as nodes:
        await asyncio.sleep(1.5)  # a sweep: each node knows the other (``Cluster.others``)
        for _ in range(3):  # three are free
            guess = Player(await connect(nodes["a"].url))
            await guess.send(Hello(1, name="mallory", password="guess"))
            refused: Error = await guess.expect(Error)
            assert refused.code == "password"
            await guess.ws.close()
        # The fourth costs the address 2 s: its answer, and any check of it meanwhile.
        fourth = Player(await connect(nodes["a"].url))
        await fourth.send(Hello(1, name="mallory", password="guess"))
        await asyncio.sleep(0.3)  # judged on a, and told to b
        began = time.monotonic()
        right = Player(await connect(nodes["b"].url))
        await right.send(Hello(1, name="mallory", password="hunter2"))
        await right.expect(Welcome)
        waited = time.monotonic() - began
        assert waited >= 1.0, f"node b judged the address at once ({waited:.2f} s)"
        assert (await fourth.expect(Error)).code == "password"


async def test_a_player_who_says_hello_on_another_node_loses_the_older_connection(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """In the lobby (no room to route through): the newer session's node closes the older
    one on its node with 4001, as a server alone does."""
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b")) as nodes:
        ann = await hello(nodes["a"].url, "ann")
        closing = asyncio.create_task(closed_code(ann))
        ann2 = await hello(nodes["b"].url, token=token_of(ann))
        assert await closing == 4001
        await ann2.send(Create())
        await ann2.expect(Room)


class LoopNode:
    """A node run in this process, on a thread and an event loop of its own
    (``open_server``, the wiring ``yukon serve`` runs), so that a test can stall its loop
    while its heartbeat thread, the other nodes and the test's clients go on."""

    def __init__(self, db: str, spool: Path, prefix: str, name: str) -> None:
        from server.app import ServeOptions
        from server.rooms import HubConfig

        self.name = name
        self.options = ServeOptions(
            port=0,
            db=db,
            spool=spool,
            redis=REDIS,
            redis_prefix=prefix,
            node=name,
            solver_processes=0,
            hub=HubConfig(resume_window_s=30, bucket_capacity=500, bucket_rate=500),
        )
        self.url = ""
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: Any = None
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name=f"node {name}", daemon=True)

    async def started(self) -> LoopNode:
        self._thread.start()
        if not await asyncio.to_thread(self._ready.wait, TIMEOUT):
            raise AssertionError(f"node {self.name} did not start")
        if self.error is not None:
            raise self.error
        return self

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self.error = exc
            self._ready.set()

    async def _serve(self) -> None:
        from server.app import open_server

        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with open_server(self.options) as server:
            self.server = server
            self.url = f"ws://127.0.0.1:{server.port}"
            self._ready.set()
            await self._stop.wait()

    def stall(self, seconds: float, *, busy: bool) -> threading.Event:
        """Stall the node's loop for ``seconds``: ``busy``, running Python all along (an
        overloaded process: the GIL is handed over only at switch intervals); otherwise
        asleep (a process stuck in a call). The event is set when the stall ends."""
        done = threading.Event()

        def block() -> None:
            end = time.monotonic() + seconds
            if busy:
                while time.monotonic() < end:
                    sum(i * i for i in range(10_000))
            else:
                time.sleep(seconds)
            done.set()

        assert self.loop is not None
        self.loop.call_soon_threadsafe(block)
        return done

    async def close(self) -> None:
        if self.loop is not None and self._stop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
        await asyncio.to_thread(self._thread.join, TIMEOUT)


async def live_race(db: str) -> tuple[str, int]:
    store = SqlStore(db)
    try:
        async with store.engine.connect() as conn:
            row = (await conn.execute(select(LiveRaceRow))).one()
        return row.owner, row.epoch
    finally:
        await store.close()


async def test_a_stalled_node_keeps_its_races_and_one_stuck_past_the_limit_is_taken_over(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Node a runs in this process; its loop is stalled twice. First busy for 5 s (longer
    than the heartbeat's 3 s TTL): the heartbeat thread keeps its heartbeat and leases,
    node b takes nothing over, and the race goes on, a move sent during the stall answered
    after it. Then asleep for 9 s (stuck, past the 4 s stall limit): the thread withholds
    the heartbeat, b takes the race over within 10 s of the stall's start, a drops the
    room when it runs again, and both players resume on b and finish the race."""
    import logging

    import redis

    caplog.set_level(logging.INFO)
    code, line = winning_line()
    r = redis.Redis.from_url(REDIS)
    a = await LoopNode(fresh_postgres, tmp_path / "a.jsonl", redis_prefix, "a").started()
    b = await Node(fresh_postgres, tmp_path / "b.jsonl", redis_prefix, "b").started()
    try:
        ann = await hello(a.url, "ann")
        bob = await hello(b.url, "bob")  # relayed to a, the room's owner
        tokens = {"ann": token_of(ann), "bob": token_of(bob)}
        room = await lobby_of_two(ann, bob, code)
        await start(ann, bob)
        ann_acked = await play(ann, line[:10])
        bob_acked = await play(bob, line[:5])
        await journaled(fresh_postgres, 1)
        node_key, room_key = f"{redis_prefix}node:a", f"{redis_prefix}room:{room.room}"

        # 1. Busy for 5 s: a slow node, not a dead one.
        done = a.stall(5.0, busy=True)
        await ann.send(MoveMsg(11, line[10]))  # answered once the loop runs again
        gaps = []
        while not done.is_set():
            if r.get(node_key) is None or r.get(room_key) != b"a":
                gaps.append(round(time.monotonic(), 2))
            await asyncio.sleep(0.1)
        reply = await ann.expect(Accepted, seq=11)
        assert reply.move == line[10]
        ann_acked.append((11, line[10]))
        await asyncio.sleep(2.5)  # b's sweeps would have found a lapse by now
        assert gaps == [], f"a's heartbeat or lease lapsed at {gaps}"
        assert await live_race(fresh_postgres) == ("a", 1)
        assert "taken over" not in b.log()
        ann_acked += await play(ann, line[11:20], first=12)
        bob_acked += await play(bob, line[5:8], first=6)
        # Past the 4 s stall limit the thread withheld the heartbeat for the last second
        # of the stall; its TTL bridged that (docs/cluster.md, "Leases").

        # 2. Asleep for 9 s: stuck past the stall limit, taken over like a dead node.
        bob_closed = asyncio.create_task(closed_code(bob))
        ann_closed = asyncio.create_task(closed_code(ann))
        stalled = time.monotonic()
        done = a.stall(9.0, busy=False)
        while await live_race(fresh_postgres) != ("b", 2):
            assert time.monotonic() - stalled < 10.0, "not taken over within 10 s"
            await asyncio.sleep(0.1)
        taken = time.monotonic() - stalled
        assert not done.is_set()
        assert caplog.text.count("heartbeat is withheld") >= 1
        for _ in range(100):  # b logs the takeover just after its transaction committed
            if "taken over from node a" in b.log():
                break
            await asyncio.sleep(0.05)
        assert "taken over from node a" in b.log()
        assert await bob_closed == 1012  # b closes the sessions it relayed to a
        assert await ann_closed == 1012  # a, awake, drops the room it lost
        assert "lost to another node" in caplog.text
        ann2, _ = await resume(b.url, tokens["ann"], ann_acked)
        bob2, _ = await resume(b.url, tokens["bob"], bob_acked)
        await play(ann2, line[20:], first=21)
        await bob2.send(Resign())
        result: Result = await ann2.expect(Result)
        assert [(x.name, x.outcome) for x in result.ranks] == [
            ("ann", "won"),
            ("bob", "resigned"),
        ]
        print(f"taken over {taken:.1f} s after the stall began")
    finally:
        await a.close()
        b.kill()
        print(f"--- node b\n{b.log()}")
        r.close()
    stored = await stored_results(fresh_postgres, code)
    assert next(x for x in stored if x.outcome == "won").actions == tuple(line)
    assert next(x for x in stored if x.outcome == "resigned").actions[:8] == tuple(line[:8])


async def test_a_player_a_node_still_remembers_is_sent_to_the_room_they_joined_elsewhere(
    fresh_postgres: str, tmp_path: Path, redis_prefix: str
) -> None:
    """Node a remembers dan, who left it in no room (his place kept for the resume
    window); he says hello on b and races there, his connection drops, and he comes back
    through a. a must not resume its stale session (no room, no race: the drill of
    bench/cluster_drill.py lost a player so), but send him to his race on b."""
    code, line = winning_line()
    async with cluster(fresh_postgres, tmp_path, redis_prefix, ("a", "b")) as nodes:
        dan = await hello(nodes["a"].url, "dan")
        token = token_of(dan)
        await dan.ws.close()  # a keeps dan, in no room, for the resume window
        ann = await hello(nodes["b"].url, "ann")
        dan = await hello(nodes["b"].url, token=token)
        room = await lobby_of_two(ann, dan, code)
        await start(ann, dan)
        acked = await play(dan, line[:5])
        dan.ws.transport.abort()

        dan2, race = await resume(nodes["a"].url, token, acked)
        welcome = next(f for f in dan2.frames if isinstance(f, Welcome))
        assert welcome.room == room.room
        assert race.seq == 5
        await play(dan2, line[5:8], first=6)
        await dan2.send(Resign())
        await ann.send(Resign())
        result: Result = await ann.expect(Result)
        assert sorted(x.name for x in result.ranks) == ["ann", "dan"]


async def test_a_join_locates_its_room_and_its_nodes_heartbeat_in_one_call(
    redis_prefix: str,
) -> None:
    """``Relay.locate``: the room's owner and whether that node has a heartbeat, in one
    round trip (a join's look-up); None for a room nobody holds."""
    from server.cluster.relay import Relay

    relay = Relay(REDIS, "n1", prefix=redis_prefix, on_message=lambda _: None)
    try:
        client = relay.client
        assert await relay.locate("ABCDE") is None
        await client.set(relay.key("room", "ABCDE"), "n2")
        assert await relay.locate("ABCDE") == ("n2", False)  # n2 has no heartbeat
        await client.set(relay.key("node", "n2"), "n2")
        assert await relay.locate("ABCDE") == ("n2", True)
    finally:
        await relay.client.aclose()
