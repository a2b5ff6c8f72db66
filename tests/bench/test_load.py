"""``bench.load``: how ``--nodes`` spreads players and rooms, and a short run of a real
cluster (a smoke test: it checks the figures are there, never what they are)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

from bench.bot import Player, form_room, join_latency, look_up_node, with_node
from bench.haproxy import haproxy_binary
from bench.harness import ServerProcess
from bench.load import DEFAULT_REDIS, node_metrics, node_urls, parse_args

ROOT = Path(__file__).resolve().parents[2]


def test_nodes_spread_each_rooms_members_and_take_turns_hosting() -> None:
    args = parse_args(["--nodes", "3", "--players", "24"])
    urls, owners = node_urls(args, ["ws://a", "ws://b", "ws://c"])
    rooms = [urls[i : i + 4] for i in range(0, 24, 4)]
    hosts = [room[0] for room in rooms]
    assert hosts == ["ws://a", "ws://b", "ws://c"] * 2  # rooms take the nodes in turn
    for r, room in enumerate(rooms):
        assert set(room) == {"ws://a", "ws://b", "ws://c"}  # every room spans the nodes
        assert owners[4 * r : 4 * r + 4] == [r % 3] * 4  # it lives on its host's node
    # Half the players reach their room's node, half are relayed, with 3 nodes as with 2.
    local = sum(urls[i] == urls[i - i % 4] for i in range(24))
    assert local == 12
    args = parse_args(["--nodes", "2", "--players", "8"])
    urls, owners = node_urls(args, ["ws://a", "ws://b"])
    assert urls == ["ws://a", "ws://b", "ws://a", "ws://b", "ws://b", "ws://a", "ws://b", "ws://a"]
    assert owners == [0, 0, 0, 0, 1, 1, 1, 1]


def test_one_server_alone_gets_every_player() -> None:
    args = parse_args(["--players", "8"])
    assert args.nodes == 0 and args.db == "sqlite"
    urls, owners = node_urls(args, ["ws://one"])
    assert urls == ["ws://one"] * 8 and owners == [0] * 8


def test_nodes_take_postgresql_and_refuse_sqlite(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(["--nodes", "2", "--players", "8"])
    assert args.db == "postgresql" and args.redis == DEFAULT_REDIS  # a prefix of its own
    with pytest.raises(SystemExit):
        parse_args(["--nodes", "2", "--db", "sqlite"])
    assert "--nodes needs one database for every node" in capsys.readouterr().err


def needed(what: str, problem: str | None) -> None:
    if problem is not None:
        message = f"{what}: {problem}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def redis_problem() -> str | None:
    import redis

    try:
        redis.Redis.from_url(DEFAULT_REDIS, socket_timeout=5).ping()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def cluster_problem() -> str | None:
    yukon = Path(sys.executable).parent / "yukon"
    found = shutil.which(str(yukon))
    if found is None:
        return f"no yukon command at {yukon}"
    usage = subprocess.run([found, "serve", "--help"], capture_output=True, text=True, timeout=60)
    return None if "--redis" in usage.stdout else "yukon serve has no --redis option yet"


def haproxy_problem() -> str | None:
    return None if haproxy_binary() is not None else "haproxy is not installed"


def short_run(*extra: str, echo: bool = False) -> str:
    """``bench.load`` on a tiny cluster of two nodes, a few seconds: its output."""
    result = subprocess.run(
        [
            *(sys.executable, "-m", "bench.load", "--nodes", "2", "--players", "16"),
            *("--rate", "4", "--duration", "2", "--warmup", "1"),
            *(() if echo else ("--no-echo",)),
            *("--probe-rooms", "8", *extra),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "cluster of 2 (yukon serve --redis" in out, out
    assert re.search(r"players 16/16 connected; .* 0 failures", out), out
    assert "tracebacks" not in out and "problem:" not in out, out
    for line in ("node 1: CPU", "node 2: CPU", "CPU per answered move, every node together"):
        assert line in out, out
    assert re.search(r"sizing, at this run.s mix .* 100,000 racers need \d+ nodes", out), out
    # Every move the players sent was accepted once, as the nodes count it too.
    assert re.search(r"moves over the run .*: none lost or applied twice", out), out
    return out


def test_a_short_run_of_two_nodes_spread_directly_prints_each_node_and_the_relay() -> None:
    needed(f"Redis at {DEFAULT_REDIS}", redis_problem())
    needed("a cluster node", cluster_problem())
    out = short_run("--direct")
    assert "(--direct)" in out and "through HAProxy" not in out, out
    for line in ("room on another node", "the relay adds to a move's answer, p99"):
        assert line in out, out


def test_with_two_nodes_the_echo_run_spreads_the_same_traffic_over_two_echo_servers() -> None:
    """The platform's own cost of the spread (docs/performance.md): with ``--nodes 2`` the
    echo run has two bare echo servers, every player answered, and the summary says what
    a message cost them."""
    needed(f"Redis at {DEFAULT_REDIS}", redis_problem())
    needed("a cluster node", cluster_problem())
    out = short_run("--direct", echo=True)
    echo = out.split("2 echo servers (bench.echo), the players spread over them:")[1]
    assert re.search(r"players 16/16 connected; .* 0 failures", echo), out
    assert re.search(r"the same traffic on 2 bare echo server\(s\): [\d.]+ us of CPU", out), out


def test_a_short_run_of_two_nodes_through_haproxy_follows_the_routes() -> None:
    """The tiny cluster behind the real HAProxy with deploy/haproxy.cfg: the players
    follow their routes; the joins, HAProxy's CPU and the relayed share are printed."""
    needed(f"Redis at {DEFAULT_REDIS}", redis_problem())
    needed("a cluster node", cluster_problem())
    needed("HAProxy", haproxy_problem())
    out = short_run()
    assert "through HAProxy (deploy/haproxy.cfg)" in out, out
    followed = re.search(r"routes +(\d+) followed, (\d+) not followed.*, (\d+) follows failed", out)
    assert followed, out
    # Half the guests of 4 rooms at least reached another node than their room's first
    # (leastconn over 2 nodes), and every route was followed.
    assert int(followed.group(1)) >= 1 and followed.group(3) == "0", out
    for line in (
        "moved by a route: to its room",
        "joins while the rooms form at once",
        "the move adds: to its room",
        "HAProxy CPU per answered move",
        "Redis CPU per answered move",
        "answers relayed (",
        # The probe rooms' guests looked their room's node up and joined there: 8 rooms
        # of 4, 24 joins, none moved by a route.
        "each guest looks its room's node up first, the look-up counted",
        "the look-up (HTTP through HAProxy)",
        "(24 look-ups)",
        "joins that still needed a move: 0 of 24; 0 look-ups named no node",
        "the look-up and any move add to a join (on the room's node), p99",
    ):
        assert line in out, out


def test_a_short_run_without_the_look_up_joins_where_haproxy_puts_each_guest() -> None:
    """``--no-lookup``: the probe rooms' guests join wherever HAProxy put them; those that
    reached the other node are moved by a route, and the summary says how many."""
    needed(f"Redis at {DEFAULT_REDIS}", redis_problem())
    needed("a cluster node", cluster_problem())
    needed("HAProxy", haproxy_problem())
    out = short_run("--no-lookup")
    assert "no look-up (--no-lookup)" in out and "the look-up (HTTP" not in out, out
    moved = re.search(r"joins that still needed a move: (\d+) of 24\n", out)
    assert moved, out
    if int(moved.group(1)) == 0:
        # Leastconn's own choice: when every racer followed its room to one node (the hosts
        # reached the same node), each probe room's members all reach the other, emptier
        # one, and no join needs a move (CI, 2026-12-06). Then one node has no racing room.
        assert re.search(r"node \d: CPU +\d+ % of a core, 0 moves answered in its rooms", out), out
    else:
        assert "the move adds to a join (on the room's node), p99" in out, out


# -- following a route (docs/protocol.md 4.25), against a real server ----------------------


def test_with_node_adds_or_replaces_the_node_parameter() -> None:
    assert with_node("ws://127.0.0.1:8765", "node2") == "ws://127.0.0.1:8765/?node=node2"
    assert with_node("ws://h:1/?node=node1", "node3") == "ws://h:1/?node=node3"
    assert with_node("ws://h:1/play?x=1&node=a", "b") == "ws://h:1/play?x=1&node=b"


class RouteInjector:
    """A websocket proxy on loopback in front of a real ``yukon serve`` (a server alone,
    which never sends ``route``): it passes frames both ways and, by the test's rules,
    swallows a frame or sends the player a ``route`` of its own, as a cluster's room node
    would, so that the player's follow runs against the real server's resume.

    ``client_rules[(conn, type)] = node``: that client frame is swallowed (lost with its
    connection, as a relayed frame in flight can be) and ``route`` to ``node`` sent.
    ``server_rules[(conn, type)] = (node, drop)``: after (or, with ``drop``, instead of)
    that server frame, ``route`` to ``node``. Each rule fires once; ``conn`` counts the
    connections in the order they reach the proxy, from 0."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.paths: list[str] = []
        self.hellos: list[dict[str, Any]] = []
        self.closes: dict[int, int | None] = {}
        #: Connections whose proxying is over (the client or the server closed it).
        self.ended: set[int] = set()
        self.client_rules: dict[tuple[int, str], str] = {}
        self.server_rules: dict[tuple[int, str], tuple[str, bool]] = {}
        self.room = ""
        self.port = 0

    async def handler(self, ws: Any) -> None:
        from websockets.asyncio.client import connect

        conn = len(self.paths)
        self.paths.append(ws.request.path)
        async with connect(self.upstream, compression=None) as up:

            async def route(node: str) -> None:
                await ws.send(msgpack.packb({"t": "route", "node": node, "room": self.room}))

            async def from_client() -> None:
                async for data in ws:
                    msg = msgpack.unpackb(data, raw=False)
                    if msg.get("t") == "hello":
                        self.hellos.append(msg)
                    node = self.client_rules.pop((conn, msg.get("t")), None)
                    if node is not None:
                        await route(node)
                        continue
                    await up.send(data)
                self.closes[conn] = ws.close_code
                await up.close()

            async def from_server() -> None:
                async for data in up:
                    msg = msgpack.unpackb(data, raw=False)
                    if msg.get("t") == "room":
                        self.room = msg["room"]
                    rule = self.server_rules.pop((conn, msg.get("t")), None)
                    if rule is None or not rule[1]:
                        await ws.send(data)
                    if rule is not None:
                        await route(rule[0])

            tasks = [asyncio.create_task(from_client()), asyncio.create_task(from_server())]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.ended.add(conn)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        from websockets.asyncio.server import serve

        async with serve(self.handler, "127.0.0.1", 0, compression=None) as server:
            self.port = server.sockets[0].getsockname()[1]
            yield f"ws://127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("follow")
    server = ServerProcess.race_server(f"sqlite:///{tmp}/yukon.db", tmp / "spool.jsonl")
    try:
        yield server
    finally:
        server.kill()


def test_a_joiner_follows_its_route_and_its_lost_ready_is_said_again(
    alone: ServerProcess,
) -> None:
    """Two guests join through the proxy: one is routed right after its join's ``room``,
    the other's ``ready`` is lost with its old connection (swallowed) as the route comes.
    Both open a connection with ``?node=`` while the old one serves on, resume there with
    their token and ``follow``, and the old one ends (the client closes it, or the server
    closes it as replaced, whichever comes first); the second sees itself not ready and
    says it again; the room starts. Their joins are measured as moved, the host's not at
    all."""
    proxy = RouteInjector(alone.url)

    async def scenario() -> list[Player]:
        async with proxy.running() as url:
            host, g1, g2 = (
                Player(url, f"fw{secrets.token_hex(3)}{i}", random.Random(i), follow=True)
                for i in range(3)
            )
            for p in (host, g1, g2):
                await p.connect()
                await p.hello()
            proxy.server_rules[(1, "room")] = ("node2", False)  # after g1's join's room
            proxy.client_rules[(2, "ready")] = "node3"  # g2's ready lost, then the route
            await form_room([host, g1, g2], timeout=30)
            for p in (host, g1, g2):
                played = await p.play_one(30)
                assert played is not None and played[0]
            players = [host, g1, g2]
            for p in players:
                await p.close()
            return players

    host, g1, g2 = asyncio.run(scenario())
    assert (g1.follows, g1.node, g2.follows, g2.node) == (1, "node2", 1, "node3")
    assert host.follows == 0 and host.node is None
    # g2's ready was lost: its lobby showed it not ready. (g1's may have gone through the
    # old connection before the resume, or been dropped with it: either is the contract.)
    assert g2.ready_again == 1
    assert sorted(proxy.paths[3:]) == ["/?node=node2", "/?node=node3"]
    assert {1, 2} <= proxy.ended
    for hello in proxy.hellos:
        assert hello["follow"] is True
    assert [h.get("token") for h in proxy.hellos[3:]] in (
        [g1.token, g2.token],
        [g2.token, g1.token],
    )
    assert join_latency(host) is None  # the host created the room: no join
    for g in (g1, g2):
        measured = join_latency(g)
        assert measured is not None and measured[2]  # moved by a route
        assert 0 < measured[0] <= measured[1]  # its room, then on the room's node


def test_a_move_on_its_way_during_a_follow_is_neither_lost_nor_played_twice(
    alone: ServerProcess,
) -> None:
    """A racer moves through the proxy. Its next move's answer is lost (the server has
    the move) and a route comes: the resumed race's seq has it, so it is not sent again.
    The move after is lost itself before the server sees it, and a route comes: the
    resumed race lacks it, so it is sent again and answered on the new connection. A
    route to the node just followed is ignored. The server's count of accepted moves is
    the player's."""
    proxy = RouteInjector(alone.url)

    async def scenario() -> tuple[Player, int]:
        before = node_metrics(alone.url).get("yukon_moves_accepted_total", 0.0)
        async with proxy.running() as url:
            p = Player(url, f"fm{secrets.token_hex(3)}", random.Random(7), follow=True)
            await p.connect()
            await p.hello()
            await form_room([p], timeout=30)
            for _ in range(3):
                assert await p.play_one(30) is not None
            for t in ("accepted", "undone"):
                proxy.server_rules[(0, t)] = ("node2", True)  # answer lost, then route
            played = await p.play_one(30)
            assert played is not None and played[0]
            assert p.follows == 1 and p.resent == 0
            for t in ("move", "undo"):
                proxy.client_rules[(1, t)] = "node3"  # the move lost, then route
            played = await p.play_one(30)
            assert played is not None and played[0]
            assert p.follows == 2 and p.resent == 1
            for t in ("accepted", "undone"):
                proxy.server_rules[(2, t)] = ("node3", False)  # where it is already
            for _ in range(2):
                assert await p.play_one(30) is not None
            await p.close()
        after = node_metrics(alone.url).get("yukon_moves_accepted_total", 0.0)
        return p, round(after - before)

    p, accepted_by_server = asyncio.run(scenario())
    assert p.routes_ignored == 1 and p.follows == 2
    assert proxy.paths == ["/", "/?node=node2", "/?node=node3"]
    seqs = [s for s, _ in p.acked]
    assert seqs == sorted(set(seqs)) == list(range(1, len(seqs) + 1))
    assert p.sent == p.accepted_total == len(seqs) == 7
    assert accepted_by_server == 7


def test_the_look_up_reads_the_rooms_node_and_any_failure_is_none(alone: ServerProcess) -> None:
    """``look_up_node`` asks ``/r/CODE?format=json`` as an invite link does: a server alone
    names no node, nor does a closed room; a port nobody answers on gives None, not an
    error. (The cluster's node, through HAProxy: the short runs above.)"""

    async def scenario() -> list[str | None]:
        host = Player(alone.url, f"lk{secrets.token_hex(3)}", random.Random(1))
        await host.connect()
        await host.hello()
        await host.send({"t": "create"})
        room = (await host.expect("room"))["room"]
        found = [await look_up_node(alone.url, room), await look_up_node(alone.url, "23456")]
        with socket.socket() as s:  # a port that was free a moment ago: refused
            s.bind(("127.0.0.1", 0))
            nobody = s.getsockname()[1]
        found.append(await look_up_node(f"ws://127.0.0.1:{nobody}/", room, timeout=5))
        await host.close()
        return found

    assert asyncio.run(scenario()) == [None, None, None]
