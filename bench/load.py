"""How much one race server carries: simulated players against a real ``yukon serve``.

Run from the repository root::

    python -m bench.load                                  # saturation, SQLite, with echo
    python -m bench.load --players 2000 --rate 1          # 2,000 players, a move a second
    python -m bench.load --db postgresql --players 400 --rate 0 --duration 20
    python -m bench.load --nodes 3 --players 600 --rate 2 --no-echo  # a cluster of 3
    python -m bench.load --nodes 3 --players 960 --rate 1 --no-echo --direct  # no HAProxy

The server runs as its own process (``python -m yukon serve --port 0``, the flood limit
raised with ``YUKON_MSG_RATE``/``YUKON_MSG_BURST``), pinned to ``--server-cpus`` (CPU 0);
the simulated players run in ``--procs`` worker processes pinned to ``--client-cpus``
(CPU 1), each worker driving many asyncio websocket clients. On a 2-core machine that
gives the server one core of its own and the players the other; the database (SQLite in
the server's process, or the PostgreSQL server, which is not pinned) shares what it must.

A run, for each server measured:

1. start the server on a fresh database (SQLite in a temporary directory, or a new
   PostgreSQL database ``yukon_bench_<random>`` that is dropped at the end), read its RSS
   from ``/proc/<pid>/status``;
2. connect every player and say hello (each one registers a name); read the RSS again:
   ``(after - before) / players`` is the memory per idle connected player;
3. put the players in rooms of 4 (the host creates, three join and get ready, the host
   starts) and wait for every race to start;
4. every player plays legal moves chosen at random from its own view of its game (the
   engine on the ``race`` view, face-down cards as ``??``, kept in step with each
   ``accepted``), one at a time: at ``--rate`` moves per second each (0: the next move as
   soon as the previous one is answered, i.e. saturation). A stuck player sends ``undo``.
   After ``--warmup`` seconds, for ``--duration`` seconds, every answer (``accepted``,
   ``undone``, ``refused``) is counted and its latency (send to answer, on the player's
   side) kept.

With ``--echo`` (the default) the same players first run the same traffic (the same
``move`` frames at the same rate, no rooms) against ``bench.echo``, started and pinned the
same way, and the race server's throughput is also given as a ratio of the echo server's,
and as the ratio of the two servers' CPU per message (the echo run is often limited by
the players' core rather than the echo server's). ``--rounds N`` repeats the pair N times,
echo then race, and gives the median ratios: the same machine can run 30 % faster or
slower from one minute to the next. With ``--nodes N`` the echo run has N echo servers,
pinned as the nodes are, the players spread over them: what spreading the same traffic
over N processes costs the machine itself, the floor of the cluster's "N nodes over one"
(docs/performance.md, "What the machine charges for three processes").

With ``--nodes N`` the server is a cluster (docs/cluster.md): N ``yukon serve --redis``
nodes, started one after the other on one fresh PostgreSQL database and the Redis at
``--redis`` under a key prefix of the run's own (``--redis-prefix``, its keys deleted at
the end), every node pinned to ``--server-cpus``, each named as a server of
``deploy/haproxy.cfg`` (``--node-id node1``, ``node2``...). By default the players reach
them as real clients do: through the real ``haproxy`` running the shipped config, only
its addresses changed to loopback (``bench.haproxy``), pinned to ``--lb-cpus`` (the
players' CPU unless told), each player from a loopback address of its own (the config
holds one address to 64 connections). Every player's hello says ``follow``; a guest whose
join reached another node than its room's is told ``route`` by the room's node, closes
that connection, reconnects at once with ``?node=<id>`` (which the config sends to that
node) and resumes there (docs/protocol.md 4.25): the race's ``seq`` says which of its
moves the node has, the rest are sent again, none played twice; a route to the node it
just followed, or past the terminal client's three a minute, is not followed (the relay
serves it). ``--no-follow`` keeps the players where HAProxy put them (a client written
from the older docs). The probe rooms' guests (``--probe-rooms``: the joins the targets
use) join as an invite link does: each looks the room's node up first (``GET
/r/CODE?format=json&for=join`` through HAProxy, from its own loopback address), connects
with ``?node=`` that node, says hello and joins, so its join needs no route; the
look-up's time counts in the join's. ``--no-lookup`` keeps today's join for comparison:
connected where HAProxy put it, the join relayed, then routed. ``--direct`` skips
HAProxy: player ``i``, member ``j`` of room ``r``, connects to node ``(r + j) mod N``,
so rooms live on every node and each room's members are spread over the nodes (half the
answers relayed, the relay's worst case).

Besides the figures above a cluster run prints each node's CPU per move answered in its
rooms and how many of those it relayed (both from the nodes' own /metrics:
``yukon_moves_accepted_total``, ``yukon_moves_refused_total``,
``yukon_moves_relayed_total``), the latency of local and relayed players and the
difference (what the relay adds), Redis's CPU, and what the measured CPU per move means
for sizing a cluster (``show_capacity``). Through HAProxy it also prints HAProxy's own
CPU per answered move, the routes followed, the join latency of the guests a route moved
(from ``join`` sent to the ``room`` on the room's node, after the follow) against those
whose join reached the room's node at once, and a moved join's steps; with the look-up,
the look-ups' latency, every probe join with its look-up counted against a join on the
room's node without it, and how many joins still needed a move; and over the whole
run, the moves the players sent and saw accepted against the nodes' count of accepted
moves (equal when none is lost or applied twice). Rooms form ``--form-concurrency`` at a
time per player process (people arrive over time).

It prints one block of figures per server and the targets of issue 7. It is a
measurement, not a test: it always exits 0 unless it could not run at all. Every process
it starts is stopped before it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import math
import multiprocessing as mp
import os
import platform
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/load.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from websockets.exceptions import InvalidHandshake

from bench.bot import Gone, Player, form_room, join_latency, look_up_node, stuck
from bench.engine import cpu_model, percentile
from bench.haproxy import Balancer, server_names
from bench.harness import (
    START_TIMEOUT,
    ServerProcess,
    cpu_seconds,
    database,
    load_average,
    parse_cpus,
    pin,
    raise_fd_limit,
    rss_kib,
)
from client.connection import ROUTE_LIMIT

#: The Redis ``--nodes`` uses unless told; each run's keys and channels have a prefix of
#: their own (``yukon-bench-<pid>-<random>:``), deleted at the end.
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"

#: Targets of issue 7 on the 2-core reference machine.
TARGET_RATIO = 0.6
TARGET_P99_MS = 50.0
TARGET_KIB_PER_PLAYER = 40.0

# -- worker processes -----------------------------------------------------------------------


@dataclass
class WorkerJob:
    index: int
    #: Each player's server (a node of the cluster, with ``--nodes``), in ``names`` order.
    urls: list[str]
    names: list[str]
    rate: float
    room_size: int
    echo: bool
    cpus: set[int] | None
    seed: int
    connect_concurrency: int = 32
    #: Rooms forming at once in this worker (their joins measured): people arrive over
    #: time, not 240 rooms in the same millisecond.
    form_concurrency: int = 16
    #: Through the load balancer: the players follow ``route`` (4.25), and player ``i``
    #: connects from its own loopback address ``local_addrs[i]``.
    follow: bool = False
    local_addrs: list[str] = field(default_factory=list)
    #: Probe rooms this worker forms, one every ``1 / probe_rate`` seconds from the end of
    #: the measured window (so their work is not in its CPU figures) while the racers race
    #: on: their joins are what a player joining a room of a busy cluster waits.
    probe_rooms: int = 0
    probe_rate: float = 0.0
    #: The probe rooms' guests join as an invite link does: they look the room's node up
    #: over HTTP through the balancer first, and connect there (``?node=``).
    lookup: bool = False


@dataclass
class WorkerReport:
    index: int
    connected: int = 0
    latencies: list[float] = field(default_factory=list)
    accepted: int = 0
    refused: int = 0
    failures: int = 0
    cpu_s: float = 0.0
    problems: list[str] = field(default_factory=list)
    #: The latencies of players whose room is on the node they reached, and of the others.
    local_latencies: list[float] = field(default_factory=list)
    remote_latencies: list[float] = field(default_factory=list)
    create_retries: int = 0
    #: Players whose connection the server closed with 1012 (a cluster node dropped their
    #: room: taken over, or fenced) before the report; the bench's players do not resume.
    closed_1012: int = 0
    #: Guests' joins while the rooms form (``form_concurrency`` at once), seconds from
    #: ``join``: those a ``route`` moved to the room's node, to their being there
    #: (``join_followed``) and to their first ``room`` (``join_followed_seen``), and those
    #: that reached the room's node at once (to their ``room``).
    join_followed: list[float] = field(default_factory=list)
    join_followed_seen: list[float] = field(default_factory=list)
    join_direct: list[float] = field(default_factory=list)
    #: The same for the probe rooms, formed at a steady pace while the others race. With
    #: the look-up, a moved join's seconds count its look-up too; ``probe_direct`` is
    #: the join itself on the room's node (from ``join``, the look-up not counted: what a
    #: join costs with no affinity to pay for).
    probe_followed: list[float] = field(default_factory=list)
    probe_followed_seen: list[float] = field(default_factory=list)
    probe_direct: list[float] = field(default_factory=list)
    #: With the look-up: every probe join's seconds from the look-up's start to its first
    #: ``room`` and to its being on the room's node; each look-up's seconds; look-ups
    #: that named no node (failed, or null: the guest connected anywhere).
    probe_looked_seen: list[float] = field(default_factory=list)
    probe_looked: list[float] = field(default_factory=list)
    probe_lookups: list[float] = field(default_factory=list)
    probe_no_node: int = 0
    #: Routes followed and not followed (Player.routes_ignored), follows that failed, and
    #: each follow's steps (``Player.follow_steps``).
    follows: int = 0
    follow_steps: list[tuple[float, float, float]] = field(default_factory=list)
    routes_ignored: int = 0
    follow_failures: int = 0
    ready_again: int = 0
    #: Over the whole run (not only the window): moves and undos sent (each seq once),
    #: sent again (a resume or a follow), and accepted as the players count them.
    sent: int = 0
    resent: int = 0
    accepted_total: int = 0
    #: Players whose accepted seqs are not strictly increasing (a move applied twice).
    doubled: int = 0


def worker_main(job: WorkerJob, pipe: Any) -> None:
    pin(0, job.cpus)
    raise_fd_limit()
    try:
        asyncio.run(_worker(job, pipe))
    except BaseException as exc:  # the parent must always hear back
        with contextlib.suppress(Exception):
            pipe.send(("failed", f"{type(exc).__name__}: {exc}"))


async def connect_patiently(p: Player) -> None:
    """Connect, trying again up to five times with a growing pause, as a client does: a
    loaded node or HAProxy (503 for a moment) may refuse a connection now and then."""
    for attempt in range(5):
        try:
            await p.connect()
            return
        except (OSError, InvalidHandshake, TimeoutError):
            if attempt == 4:
                raise
            await asyncio.sleep(0.2 * (attempt + 1))


async def _worker(job: WorkerJob, pipe: Any) -> None:
    loop = asyncio.get_running_loop()
    rng = random.Random(job.seed)
    players = [
        Player(url, n, random.Random(rng.random()), follow=job.follow)
        for url, n in zip(job.urls, job.names, strict=True)
    ]
    for p, addr in zip(players, job.local_addrs, strict=False):
        p.local_addr = addr
    for i, p in enumerate(players):  # the room's host (its first member) reached its node
        p.remote = job.urls[i] != job.urls[i - i % job.room_size]
    report = WorkerReport(job.index)
    gate = asyncio.Semaphore(job.connect_concurrency)

    async def arrive(p: Player) -> None:
        async with gate:
            await connect_patiently(p)
            if not job.echo:
                await p.hello(120)

    outcome = await asyncio.gather(*(arrive(p) for p in players), return_exceptions=True)
    bad = [o for o in outcome if isinstance(o, BaseException)]
    report.connected = len(players) - len(bad)
    if bad:
        report.problems.append(f"{len(bad)} players could not connect: {bad[0]!r}")
    pipe.send(("connected", report.connected))
    # The parent reads the server's memory now, then says go.
    await loop.run_in_executor(None, pipe.recv)
    if not job.echo:
        groups = [players[i : i + job.room_size] for i in range(0, len(players), job.room_size)]
        forming = asyncio.Semaphore(job.form_concurrency)

        async def form(group: list[Player]) -> str:
            async with forming:
                return await form_room(group, timeout=120)

        formed = await asyncio.gather(
            *(form(g) for g in groups if len(g) == job.room_size),
            return_exceptions=True,
        )
        bad = [o for o in formed if isinstance(o, BaseException)]
        if bad:
            report.problems.append(f"{len(bad)} rooms did not start: {bad[0]!r}")
        report.create_retries = sum(p.create_retries for p in players)
        for p in players:
            joined = join_latency(p)
            keep_join(joined, report.join_followed_seen, report.join_followed, report.join_direct)
    # What was built so far lives until the end: keep it out of every collection, and
    # collect rarely, as the server does (server.app): a player process's collector
    # pausing its loop for tens of milliseconds would show up as the server's latency.
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    pipe.send(("racing", None))
    begin, end, stop = await loop.run_in_executor(None, pipe.recv)
    cpu_before = os.times()
    probing = asyncio.create_task(_probe(job, end, report))
    await asyncio.gather(*(_play(p, job, begin, end, stop, report) for p in players))
    cpu_after = os.times()
    await probing
    report.closed_1012 = sum(1 for p in players if 1012 in p.closes)
    for p in players:
        report.follows += p.follows
        report.follow_steps += p.follow_steps
        report.ready_again += p.ready_again
        report.routes_ignored += p.routes_ignored
        report.follow_failures += p._follow_failed is not None
        report.sent += p.sent
        report.resent += p.resent
        report.accepted_total += p.accepted_total
        seqs = [s for s, _ in p.acked]
        report.doubled += any(b <= a for a, b in itertools.pairwise(seqs))
    report.cpu_s = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    pipe.send(("report", report))
    await asyncio.gather(*(p.close() for p in players), return_exceptions=True)


def keep_join(
    joined: tuple[float, float, bool] | None,
    followed_seen: list[float],
    followed: list[float],
    direct: list[float],
) -> None:
    """File a join's seconds (``join_latency``) by whether a route moved it."""
    if joined is None:
        return
    seen, on_node, moved = joined
    if moved:
        followed_seen.append(seen)
        followed.append(on_node)
    else:
        direct.append(seen)


def keep_probe_join(
    joined: tuple[float, float, bool] | None, lookup_s: float | None, report: WorkerReport
) -> None:
    """File a probe room's join: as ``keep_join`` does, and after a look-up (``lookup_s``
    seconds) also the whole of it, the look-up counted, to its room and to its being on
    the room's node; a join a route still moved counts its look-up too."""
    if joined is None:
        return
    if lookup_s is None:
        keep_join(joined, report.probe_followed_seen, report.probe_followed, report.probe_direct)
        return
    seen, on_node, moved = joined
    report.probe_lookups.append(lookup_s)
    report.probe_looked_seen.append(lookup_s + seen)
    report.probe_looked.append(lookup_s + on_node)
    if moved:
        report.probe_followed_seen.append(lookup_s + seen)
        report.probe_followed.append(lookup_s + on_node)
    else:
        report.probe_direct.append(seen)


async def _probe(job: WorkerJob, start_at: float, report: WorkerReport) -> None:
    """Form ``job.probe_rooms`` rooms, one every ``1 / job.probe_rate`` seconds from
    ``start_at`` (monotonic), of new players, and measure their guests' joins; then they
    leave. The host connects, says hello and creates the room. Its guests, with
    ``job.lookup``, join as an invite link does: each looks the room's node up through
    the load balancer (``look_up_node``), connects there (``?node=``), says hello and
    joins; the look-up counts in the join's seconds. Without it, they connect and say
    hello first (as someone who opens the client, then types a code), and each lands
    where the load balancer puts it (a route may move it)."""
    if job.echo or not job.probe_rooms or job.probe_rate <= 0:
        return
    rng = random.Random(job.seed + 1)
    base = job.names[0].rsplit("-", 1)[0] if job.names else "probe"

    async def one(k: int) -> None:
        at = start_at + k / job.probe_rate
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        group = [
            Player(
                job.urls[0],
                f"{base}-p{job.index}x{k}x{j}",
                random.Random(rng.random()),
                follow=job.follow,
                local_addr=f"127.101.{job.index % 250}.{1 + (k * job.room_size + j) % 250}"
                if job.local_addrs
                else None,
            )
            for j in range(job.room_size)
        ]
        host, guests = group[0], group[1:]
        looked: dict[str, float] = {}  # each guest's look-up, seconds
        try:
            for p in group if not job.lookup else [host]:
                await connect_patiently(p)
                await p.hello(60)
            await host.send({"t": "create", "max_players": job.room_size})
            answer = await host.expect(("room", "error"), 60)
            if answer["t"] != "room":
                raise RuntimeError(f"probe create refused: {answer}")
            for g in guests:
                if job.lookup:
                    began = time.perf_counter()
                    g.node = await look_up_node(g.url, answer["room"], local_addr=g.local_addr)
                    looked[g.name] = time.perf_counter() - began
                    report.probe_no_node += g.node is None
                    await connect_patiently(g)
                    await g.hello(60)
                g.join_room_at, g.join_on_node_at, g.join_followed = None, None, False
                g.join_sent = time.perf_counter()
                await g.send({"t": "join", "room": answer["room"]})
                async with stuck(g, "its room after join"):
                    await g.expect("room", 60)
            # A route comes right after the join's room (4.25): give it time to come,
            # then wait for each move to the room's node to be over.
            await asyncio.sleep(0.5)
            for g in guests:
                await g.moved()
                keep_probe_join(join_latency(g), looked.get(g.name), report)
        except (Gone, RuntimeError, OSError, InvalidHandshake, TimeoutError) as exc:
            if len(report.problems) < 5:
                report.problems.append(f"probe room {k}: {type(exc).__name__} {exc}")
        finally:
            for p in group:  # they leave, as people do: the room closes at once
                with contextlib.suppress(Exception):
                    await p.send({"t": "leave"})
            await asyncio.gather(*(p.close() for p in group), return_exceptions=True)

    await asyncio.gather(*(one(k) for k in range(job.probe_rooms)))


async def _play(
    p: Player,
    job: WorkerJob,
    begin: float,
    end: float,
    stop: float,
    report: WorkerReport,
) -> None:
    """Move at ``job.rate`` (0: back to back) from now until ``stop``; count what is
    answered between ``begin`` and ``end`` (monotonic clock, shared by the processes)."""
    if p.ws is None or (not job.echo and p.game is None):
        return
    period = 1.0 / job.rate if job.rate > 0 else 0.0
    next_at = time.monotonic() + p.rng.random() * period
    seq = 0
    while True:
        now = time.monotonic()
        if now >= stop:
            return
        if period:
            if next_at > now:
                await asyncio.sleep(next_at - now)
            next_at = max(next_at + period, time.monotonic() - period)
        try:
            if job.echo:
                seq += 1
                body = {"t": "move", "seq": seq, "move": "7S>4"}
                started = time.perf_counter()
                await p.request(body, 30)
                took, ok = time.perf_counter() - started, True
            else:
                played = await p.play_one(30)
                if played is None:  # won: this player has nothing left to do
                    return
                ok, took = played
        except (Gone, TimeoutError) as exc:
            report.failures += 1
            if len(report.problems) < 5:
                report.problems.append(f"{p.name}: {type(exc).__name__} {exc}")
            return
        answered = time.monotonic()
        if begin <= answered < end:
            report.latencies.append(took)
            # A follower whose route was ignored (the balancer kept it) stays relayed.
            remote = p.remote or p.routes_ignored > 0
            (report.remote_latencies if remote else report.local_latencies).append(took)
            if ok:
                report.accepted += 1
            else:
                report.refused += 1


# -- one measured run ----------------------------------------------------------------------


#: The nodes' count of the moves and undos a room's node answered to a player connected
#: to another node (relayed; /metrics). A node without it: the bench says so.
RELAYED_METRIC = "yukon_moves_relayed_total"
ANSWERED_METRICS = ("yukon_moves_accepted_total", "yukon_moves_refused_total")


def node_metrics(url: str, timeout: float = 10.0) -> dict[str, float]:
    """A node's /metrics (``url``: its ws:// address), asked of the node itself: each
    sample by its name (with its labels, as written)."""
    http = "http://" + url.split("://", 1)[1].rstrip("/") + "/metrics"
    with urllib.request.urlopen(http, timeout=timeout) as response:
        text = response.read().decode()
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                samples[name] = float(value)
    return samples


def loopback_source(i: int) -> str:
    """Player ``i``'s own loopback address (127.100.0.1, 127.100.0.2, ...): through the
    load balancer, which holds one address to 64 connections, the players come from
    addresses of their own, as people do."""
    return f"127.100.{i // 250}.{1 + i % 250}"


@dataclass
class NodeFigures:
    """One node of a cluster (``--nodes``) over the window."""

    cpu: float  # share of a core
    rss_racing_kib: int
    answered: int  # moves answered in rooms that live on this node (its own count)
    window_s: float
    #: Of those, answered to a player connected to another node (None: not counted).
    relayed: int | None = None

    @property
    def cpu_us_per_move(self) -> float:
        """This node's CPU per move answered in its own rooms; its relaying for players it
        is the gateway of (and theirs for its players) is in it too."""
        return 1e6 * self.cpu * self.window_s / self.answered if self.answered else math.nan


@dataclass
class RunFigures:
    label: str
    players: int
    connected: int
    rss_before_kib: int
    rss_idle_kib: int
    rss_racing_kib: int
    window_s: float
    accepted: int
    refused: int
    failures: int
    latencies: list[float]
    server_cpu: float
    client_cpu: float
    load_before: str
    load_after: str
    problems: list[str]
    #: With ``--nodes``: the latencies of players whose room is on the node they reached
    #: and of those relayed, each node's figures, and the Redis server's CPU (a share of a
    #: core) over the window.
    local_latencies: list[float] = field(default_factory=list)
    remote_latencies: list[float] = field(default_factory=list)
    nodes: list[NodeFigures] = field(default_factory=list)
    redis_cpu: float | None = None
    #: The Redis server's commands over the window: calls and microseconds, by name.
    redis_commands: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Rooms' creates refused ``unavailable`` and sent again while the rooms formed.
    create_retries: int = 0
    #: Players closed with 1012 during the run (their room dropped by its node).
    closed_1012: int = 0
    #: With ``--nodes``, from the nodes' logs: races taken over from another node, rooms
    #: fenced by the database, and nodes judged gone (``server.cluster.cluster``'s log lines).
    takeovers: int = 0
    fenced: int = 0
    judged_gone: int = 0
    #: Times a node's heartbeat thread withheld its heartbeat, its loop stalled past the
    #: watchdog's limit (``server.cluster.heartbeat``; none on code without that thread).
    withheld: int = 0
    #: Through the load balancer (``--nodes`` without ``--direct``): its process's CPU
    #: (a share of a core) over the window, whether the players followed routes, their
    #: joins (seconds, as ``WorkerReport``'s: while the rooms form, and the probe rooms'
    #: at a steady pace), routes followed and ignored, follows that failed.
    balancer_cpu: float | None = None
    follow: bool = False
    join_followed: list[float] = field(default_factory=list)
    join_followed_seen: list[float] = field(default_factory=list)
    join_direct: list[float] = field(default_factory=list)
    probe_rooms: int = 0
    probe_rate: float = 0.0
    probe_followed: list[float] = field(default_factory=list)
    probe_followed_seen: list[float] = field(default_factory=list)
    probe_direct: list[float] = field(default_factory=list)
    #: The probe rooms' guests looked their room's node up first (``WorkerReport``'s
    #: fields of the same names); False: ``--no-lookup``.
    lookup: bool = False
    probe_looked_seen: list[float] = field(default_factory=list)
    probe_looked: list[float] = field(default_factory=list)
    probe_lookups: list[float] = field(default_factory=list)
    probe_no_node: int = 0
    follows: int = 0
    follow_steps: list[tuple[float, float, float]] = field(default_factory=list)
    routes_ignored: int = 0
    follow_failures: int = 0
    #: Followers whose lobby showed them not ready after the follow: ``ready`` sent again.
    ready_again: int = 0
    #: Over the whole run: moves sent by the players (each seq once), sent again, accepted
    #: as the players count them and as the nodes count them (/metrics, every node; None
    #: for a server alone), and players with a seq accepted twice.
    sent: int = 0
    resent: int = 0
    accepted_total: int = 0
    nodes_accepted_total: int | None = None
    doubled: int = 0

    @property
    def relayed(self) -> int | None:
        """Answers relayed over the window, as the nodes count them (None: not counted)."""
        counts = [n.relayed for n in self.nodes]
        if not counts or any(c is None for c in counts):
            return None
        return sum(c for c in counts if c is not None)

    @property
    def relayed_share(self) -> float | None:
        relayed, answered = self.relayed, sum(n.answered for n in self.nodes)
        return None if relayed is None or not answered else relayed / answered

    @property
    def per_second(self) -> float:
        return self.accepted / self.window_s

    @property
    def cpu_us_per_move(self) -> float:
        """The server's CPU per answered move: unlike moves per second, it does not depend
        on whether the players' core or the server's was the one that ran out. For a
        cluster: every node's CPU together, per move answered anywhere."""
        answered = self.accepted + self.refused
        return 1e6 * self.server_cpu * self.window_s / answered if answered else math.nan

    @property
    def kib_per_player(self) -> float:
        return (self.rss_idle_kib - self.rss_before_kib) / max(1, self.connected)

    def latency_ms(self, p: float) -> float:
        values = sorted(self.latencies)
        return 1000 * percentile(values, p) if values else math.nan


def node_urls(args: argparse.Namespace, urls: list[str]) -> tuple[list[str], list[int]]:
    """Which node each player connects to, and which node its room lives on.

    Player ``i`` is member ``j = i % room_size`` of room ``r = i // room_size`` and
    connects to node ``(r + j) % N``: the rooms' hosts (who create them, on the node they
    reached) take the nodes in turn, and the members of a room are spread over the nodes
    as a load balancer would spread them: with N nodes, 1 member in N (2 of 4 with 2
    nodes, 2 of 4 with 3) reaches the room's own node, the others are relayed."""
    n = len(urls)
    players = range(args.players)
    node = [(i // args.room_size + i % args.room_size) % n for i in players]
    owner = [(i // args.room_size) % n for i in players]
    return [urls[k] for k in node], owner


def measure(
    servers: ServerProcess | list[ServerProcess],
    args: argparse.Namespace,
    *,
    echo: bool,
    label: str,
    redis_cpu: Callable[[], float] | None = None,
    redis_commands: Callable[[], dict[str, tuple[int, int]]] | None = None,
    balancer: Balancer | None = None,
) -> RunFigures:
    """One run against one server, or against the nodes of a cluster (a list), the
    players spread over them by the bench or, with ``balancer``, connecting through it."""
    cluster = isinstance(servers, list) and not echo  # echo servers have no /metrics
    nodes = servers if isinstance(servers, list) else [servers]
    ctx = mp.get_context("spawn")
    per = math.ceil(args.players / args.procs / args.room_size) * args.room_size
    run_id = secrets.token_hex(3)
    names = [f"b{run_id}-{i}" for i in range(args.players)]
    follow = balancer is not None and args.follow
    # Probe rooms (joins at a steady pace, after the window): through the balancer only.
    probes = args.probe_rooms if balancer is not None and args.probe_rate > 0 else 0
    lookup = probes > 0 and args.lookup
    addrs: list[str] = []
    if balancer is not None:
        urls = [balancer.url] * args.players
        addrs = [loopback_source(i) for i in range(args.players)]
    else:
        urls, _ = node_urls(args, [s.url for s in nodes])

    def counts() -> list[dict[str, float]]:
        return [node_metrics(s.url) for s in nodes] if cluster else []

    def lb_cpu() -> float:
        return cpu_seconds(balancer.pid) if balancer is not None else 0.0

    pipes, procs = [], []
    time.sleep(0.5)
    rss_before = sum(rss_kib(s.pid) for s in nodes)
    load_before = load_average()
    try:
        for w in range(args.procs):
            chunk = slice(w * per, (w + 1) * per)
            if not names[chunk]:
                continue
            parent, child = ctx.Pipe()
            job = WorkerJob(
                w,
                urls[chunk],
                names[chunk],
                args.rate,
                args.room_size,
                echo,
                args.client_cpus,
                args.seed * 1000 + w,
                form_concurrency=max(1, args.form_concurrency),
                follow=follow,
                local_addrs=addrs[chunk],
                probe_rooms=probes // args.procs + (w < probes % args.procs),
                probe_rate=args.probe_rate / args.procs,
                lookup=lookup,
            )
            proc = ctx.Process(target=worker_main, args=(job, child), daemon=True)
            proc.start()
            pipes.append(parent)
            procs.append(proc)

        def gather(kind: str, timeout: float) -> list[Any]:
            out = []
            for pipe in pipes:
                if not pipe.poll(timeout):
                    raise RuntimeError(f"a worker did not report {kind!r} in {timeout:.0f} s")
                got, value = pipe.recv()
                if got != kind:
                    raise RuntimeError(f"a worker {got}: {value}")
                out.append(value)
            return out

        connected = sum(gather("connected", 600))
        time.sleep(1.0)  # let the hellos' garbage settle before reading the RSS
        rss_idle = sum(rss_kib(s.pid) for s in nodes)
        for pipe in pipes:
            pipe.send("go")
        gather("racing", 600)
        now = time.monotonic()
        begin = now + args.warmup
        end = begin + args.duration
        # The racers race on while the probe rooms form (``_probe``), then stop.
        stop = end + 0.5 + (probes / args.probe_rate + 2.0 if probes else 0.0)
        for pipe in pipes:
            pipe.send((begin, end, stop))
        time.sleep(max(0.0, begin - time.monotonic()))
        if cluster and args.profile is not None:  # bench.profiled: the window only
            for s in nodes:
                os.kill(s.pid, signal.SIGUSR1)
        cpu0 = [cpu_seconds(s.pid) for s in nodes]
        redis0 = redis_cpu() if redis_cpu is not None else 0.0
        commands0 = redis_commands() if redis_commands is not None else {}
        lb0 = lb_cpu()
        counts0 = counts()
        time.sleep(max(0.0, end - time.monotonic()))
        cpu1 = [cpu_seconds(s.pid) for s in nodes]
        if cluster and args.profile is not None:
            for s in nodes:
                os.kill(s.pid, signal.SIGUSR2)
        redis1 = redis_cpu() if redis_cpu is not None else 0.0
        commands1 = redis_commands() if redis_commands is not None else {}
        lb1 = lb_cpu()
        counts1 = counts()
        rss_racing = [rss_kib(s.pid) for s in nodes]
        load_after = load_average()
        reports: list[WorkerReport] = gather("report", 120 + args.duration)
        # Every move sent has been answered (or its player stopped): the nodes' totals.
        totals = counts()
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
    latencies = [x for r in reports for x in r.latencies]
    node_cpu = [(b - a) / args.duration for a, b in zip(cpu0, cpu1, strict=True)]
    node_figures = []
    for k in range(len(nodes) if cluster else 0):

        def delta(name: str, k: int = k) -> float:
            return counts1[k].get(name, 0.0) - counts0[k].get(name, 0.0)

        answered = round(sum(delta(name) for name in ANSWERED_METRICS))
        relayed = round(delta(RELAYED_METRIC)) if RELAYED_METRIC in counts1[k] else None
        node_figures.append(
            NodeFigures(node_cpu[k], rss_racing[k], answered, args.duration, relayed)
        )
    return RunFigures(
        label=label,
        players=args.players,
        connected=connected,
        rss_before_kib=rss_before,
        rss_idle_kib=rss_idle,
        rss_racing_kib=sum(rss_racing),
        window_s=args.duration,
        accepted=sum(r.accepted for r in reports),
        refused=sum(r.refused for r in reports),
        failures=sum(r.failures for r in reports),
        latencies=latencies,
        server_cpu=sum(node_cpu),
        client_cpu=sum(r.cpu_s for r in reports) / (args.duration + args.warmup + 0.5),
        load_before=load_before,
        load_after=load_after,
        problems=[x for r in reports for x in r.problems][:10],
        create_retries=sum(r.create_retries for r in reports),
        closed_1012=sum(r.closed_1012 for r in reports),
        local_latencies=[x for r in reports for x in r.local_latencies],
        remote_latencies=[x for r in reports for x in r.remote_latencies],
        nodes=node_figures,
        redis_cpu=(redis1 - redis0) / args.duration if redis_cpu is not None else None,
        redis_commands={
            name: (calls - commands0.get(name, (0, 0))[0], usec - commands0.get(name, (0, 0))[1])
            for name, (calls, usec) in commands1.items()
            if calls > commands0.get(name, (0, 0))[0]
        },
        balancer_cpu=(lb1 - lb0) / args.duration if balancer is not None else None,
        follow=follow,
        join_followed=[x for r in reports for x in r.join_followed],
        join_followed_seen=[x for r in reports for x in r.join_followed_seen],
        join_direct=[x for r in reports for x in r.join_direct],
        probe_rooms=probes,
        probe_rate=args.probe_rate if probes else 0.0,
        probe_followed=[x for r in reports for x in r.probe_followed],
        probe_followed_seen=[x for r in reports for x in r.probe_followed_seen],
        probe_direct=[x for r in reports for x in r.probe_direct],
        lookup=lookup,
        probe_looked_seen=[x for r in reports for x in r.probe_looked_seen],
        probe_looked=[x for r in reports for x in r.probe_looked],
        probe_lookups=[x for r in reports for x in r.probe_lookups],
        probe_no_node=sum(r.probe_no_node for r in reports),
        follows=sum(r.follows for r in reports),
        follow_steps=[x for r in reports for x in r.follow_steps],
        ready_again=sum(r.ready_again for r in reports),
        routes_ignored=sum(r.routes_ignored for r in reports),
        follow_failures=sum(r.follow_failures for r in reports),
        sent=sum(r.sent for r in reports),
        resent=sum(r.resent for r in reports),
        accepted_total=sum(r.accepted_total for r in reports),
        nodes_accepted_total=(
            round(sum(t.get("yukon_moves_accepted_total", 0.0) for t in totals))
            if cluster
            else None
        ),
        doubled=sum(r.doubled for r in reports),
    )


def show(f: RunFigures) -> None:
    print(f"{f.label}:")
    print(
        f"  players {f.connected}/{f.players} connected; answered moves in {f.window_s:g} s:"
        f" {f.accepted} accepted, {f.refused} refused, {f.failures} failures"
    )
    print(f"  accepted moves per second  {f.per_second:10.0f}")
    print(
        f"  move-ack latency           p50 {f.latency_ms(50):7.2f} ms   p99"
        f" {f.latency_ms(99):7.2f} ms   max {f.latency_ms(100):7.2f} ms"
    )
    what = "nodes' RSS together" if f.nodes else "server RSS"
    print(
        f"  {what:26} {f.rss_before_kib / 1024:.1f} MiB empty,"
        f" {f.rss_idle_kib / 1024:.1f} MiB with every player idle,"
        f" {f.rss_racing_kib / 1024:.1f} MiB racing"
    )
    print(f"  memory per idle player     {f.kib_per_player:10.1f} KiB")
    print(
        f"  CPU during the window      server {100 * f.server_cpu:.0f} % of a core,"
        f" players {100 * f.client_cpu:.0f} %"
    )
    print(f"  server CPU per answered move {f.cpu_us_per_move:8.1f} us")
    if f.nodes:
        show_cluster(f)
    print(f"  load average               before {f.load_before}, after {f.load_after}")
    if f.create_retries:
        print(f"  creates refused 'unavailable' and sent again: {f.create_retries}")
    if f.nodes or f.failures or f.closed_1012:
        print(
            f"  players lost               {f.failures} stopped (a move unanswered or"
            f" their connection gone), {f.closed_1012} closed with 1012"
        )
    if f.nodes:
        print(
            f"  takeovers                  {f.takeovers} races taken over, {f.fenced} rooms"
            f" fenced by the database, {f.judged_gone} times a node was judged gone,"
            f" {f.withheld} heartbeats withheld (a loop stalled past the watchdog's limit)"
        )
    for problem in f.problems:
        print(f"  problem: {problem}")


def ms(values: list[float], p: float) -> float:
    """The ``p``-th percentile of ``values`` (seconds, in any order), in milliseconds."""
    return 1000 * percentile(sorted(values), p) if values else math.nan


def show_cluster(f: RunFigures) -> None:
    """Each node, the relay's share and cost in latency, the load balancer, the joins
    that followed a route, the moves counted on both sides, and Redis."""
    for k, node in enumerate(f.nodes):
        relayed = "" if node.relayed is None else f" ({node.relayed} relayed)"
        print(
            f"  node {k + 1}: CPU {100 * node.cpu:3.0f} % of a core, {node.answered} moves"
            f" answered in its rooms{relayed}, {node.cpu_us_per_move:6.1f} us CPU per"
            f" answered move, RSS {node.rss_racing_kib / 1024:.1f} MiB racing"
        )
    share = f.relayed_share
    if share is None:
        print(f"  answers relayed            not counted by these nodes (no {RELAYED_METRIC})")
    else:
        print(f"  answers relayed            {100 * share:.1f} % ({f.relayed}, the nodes' count)")
    local, remote = f.local_latencies, f.remote_latencies
    if f.balancer_cpu is not None and not f.follow:
        print("  which player is relayed     HAProxy's choice, unknown here (--no-follow)")
        local = remote = []
    print(
        f"  room on the player's node  p50 {ms(local, 50):7.2f} ms   p99 {ms(local, 99):7.2f} ms"
        f"   ({len(local)} answers)"
    )
    print(
        f"  room on another node       p50 {ms(remote, 50):7.2f} ms   p99 {ms(remote, 99):7.2f} ms"
        f"   ({len(remote)} answers)"
    )
    print(
        f"  the relay adds             p50 {ms(remote, 50) - ms(local, 50):7.2f} ms"
        f"   p99 {ms(remote, 99) - ms(local, 99):7.2f} ms"
    )
    answered = f.accepted + f.refused
    if f.redis_cpu is not None:
        per_move = 1e6 * f.redis_cpu * f.window_s / answered if answered else math.nan
        print(
            f"  Redis server               CPU {100 * f.redis_cpu:.0f} % of a core,"
            f" {per_move:.1f} us per answered move (every client of that Redis counts)"
        )
        top = sorted(f.redis_commands.items(), key=lambda x: -x[1][1])[:5]
        if top and answered:
            print(
                "  Redis commands' own time   "
                + ", ".join(
                    f"{name} {usec / answered:.2f} us ({calls / f.window_s:.0f}/s)"
                    for name, (calls, usec) in top
                )
                + " per answered move (a script's own calls count in it and by name)"
            )
    if f.balancer_cpu is not None:
        per_move = 1e6 * f.balancer_cpu * f.window_s / answered if answered else math.nan
        print(
            f"  HAProxy                    CPU {100 * f.balancer_cpu:.0f} % of a core,"
            f" {per_move:.1f} us per answered move"
        )
        print(
            f"  routes                     {f.follows} followed, {f.routes_ignored} not followed"
            f" (to the node just followed, or past {ROUTE_LIMIT} a minute),"
            f" {f.follow_failures} follows failed,"
            f" {f.ready_again} lobbies showed a follower not ready (ready said again)"
            + ("" if f.follow else " (the players do not follow: --no-follow)")
        )
        if f.follow_steps:
            steps = [
                ms([x[i] for x in f.follow_steps if not math.isnan(x[i])], 50) for i in range(3)
            ]
            print(
                f"  a moved join's steps, p50  join to route {steps[0]:.2f} ms, connect"
                f" {steps[1]:.2f} ms (the old connection serving on), hello to welcome"
                f" {steps[2]:.2f} ms (sends held)"
            )
        if f.probe_rooms:
            how = (
                "each guest looks its room's node up first, the look-up counted"
                if f.lookup
                else "no look-up (--no-lookup)"
            )
            show_joins(
                f"joins at a steady pace ({f.probe_rooms} rooms of new players,"
                f" {f.probe_rate:g} a second, after the window, the racers racing on;"
                f" {how}):",
                f.probe_followed_seen,
                f.probe_followed,
                f.probe_direct,
            )
            if f.lookup:
                show_lookups(f.probe_lookups, f.probe_looked_seen, f.probe_looked, f.probe_direct)
            moved = len(f.probe_followed)
            print(
                f"    joins that still needed a move: {moved} of"
                f" {moved + len(f.probe_direct)}"
                + (f"; {f.probe_no_node} look-ups named no node" if f.lookup else "")
            )
        show_joins(
            "joins while the rooms form at once (the bench's burst):",
            f.join_followed_seen,
            f.join_followed,
            f.join_direct,
        )
    if f.nodes_accepted_total is not None:
        held = f.nodes_accepted_total == f.accepted_total and not f.doubled
        print(
            f"  moves over the run         {f.sent} sent ({f.resent} sent again after a"
            f" follow), {f.accepted_total} accepted as the players count,"
            f" {f.nodes_accepted_total} as the nodes count; {f.doubled} players with a seq"
            f" accepted twice: " + ("none lost or applied twice" if held else "MISMATCH")
        )


def show_joins(title: str, seen: list[float], on_node: list[float], direct: list[float]) -> None:
    """Joins moved by a route, to their first ``room`` (what the player sees) and to their
    being on the room's node, against those that reached the room's node at once."""
    print(f"  {title}")
    print(
        f"    moved by a route: to its room  p50 {ms(seen, 50):7.2f} ms   p99"
        f" {ms(seen, 99):7.2f} ms; on the room's node p50 {ms(on_node, 50):7.2f} ms   p99"
        f" {ms(on_node, 99):7.2f} ms   ({len(seen)} joins)"
    )
    print(
        f"    on the room's node at once     p50 {ms(direct, 50):7.2f} ms   p99"
        f" {ms(direct, 99):7.2f} ms   ({len(direct)} joins)"
    )
    print(
        f"    the move adds: to its room     p50 {ms(seen, 50) - ms(direct, 50):7.2f} ms   p99"
        f" {ms(seen, 99) - ms(direct, 99):7.2f} ms; on the room's node p50"
        f" {ms(on_node, 50) - ms(direct, 50):7.2f} ms   p99"
        f" {ms(on_node, 99) - ms(direct, 99):7.2f} ms"
    )


def show_lookups(
    lookups: list[float], seen: list[float], on_node: list[float], direct: list[float]
) -> None:
    """The probe joins that looked their room's node up first: the look-ups, every join
    with its look-up, and what that adds to a join made on the room's node."""
    print(
        f"    the look-up (HTTP through HAProxy)  p50 {ms(lookups, 50):7.2f} ms   p99"
        f" {ms(lookups, 99):7.2f} ms   ({len(lookups)} look-ups)"
    )
    print(
        f"    every join, look-up counted: to its room  p50 {ms(seen, 50):7.2f} ms   p99"
        f" {ms(seen, 99):7.2f} ms; on the room's node p50 {ms(on_node, 50):7.2f} ms   p99"
        f" {ms(on_node, 99):7.2f} ms"
    )
    print(
        f"    the look-up and any move add: to its room  p50"
        f" {ms(seen, 50) - ms(direct, 50):7.2f} ms   p99 {ms(seen, 99) - ms(direct, 99):7.2f} ms;"
        f" on the room's node p50 {ms(on_node, 50) - ms(direct, 50):7.2f} ms   p99"
        f" {ms(on_node, 99) - ms(direct, 99):7.2f} ms (against a join on the room's node,"
        " its look-up not counted)"
    )


def join_added(f: RunFigures, p: float, *, seen: bool) -> float:
    """What the move to the room's node adds to a join at percentile ``p``: to its first
    ``room`` (``seen``) or to its being on the room's node; the probe rooms' joins when
    there were any, else those of the rooms formed at once. With the look-up, every
    probe join pays for it (and the few a route still moved, for the move too): what is
    added is then every join, its look-up counted, against a join on the room's node,
    its look-up not counted."""
    if f.probe_rooms and f.lookup:
        looked = f.probe_looked_seen if seen else f.probe_looked
        return ms(looked, p) - ms(f.probe_direct, p)
    if f.probe_rooms:
        moved = f.probe_followed_seen if seen else f.probe_followed
        return ms(moved, p) - ms(f.probe_direct, p)
    moved = f.join_followed_seen if seen else f.join_followed
    return ms(moved, p) - ms(f.join_direct, p)


#: A node is sized to run at this share of its core: the p99 target held at 70-80 % of a
#: core with 2,000 players at a move a second (docs/performance.md).
NODE_BUSY = 0.7
#: What issue 20 sizes the cluster for: concurrent racers, each making a move a second.
TARGET_RACERS = 100_000


def show_capacity(runs: list[RunFigures]) -> None:
    """The cluster's figures over the rounds (medians), and what they mean for sizing."""
    print(f"cluster of {len(runs[0].nodes)}, medians over {len(runs)} runs:")
    us = [f.cpu_us_per_move for f in runs]
    print(f"  CPU per answered move, every node together   {median_of(us)} us")
    for k in range(len(runs[0].nodes)):
        print(f"  node {k + 1}: CPU per answered move in its rooms   ", end="")
        print(f"{median_of([f.nodes[k].cpu_us_per_move for f in runs])} us")

    pct = ms

    for p in (50, 99):
        extra = [pct(f.remote_latencies, p) - pct(f.local_latencies, p) for f in runs]
        if not any(math.isnan(x) for x in extra):
            print(f"  the relay adds to a move's answer, p{p}        {median_of(extra)} ms")
    if all(f.balancer_cpu is not None for f in runs):
        steady = "at a steady pace" if all(f.probe_rooms for f in runs) else "rooms forming"
        adds = "the move adds"
        if all(f.probe_rooms and f.lookup for f in runs):
            adds = "the look-up and any move add"
        for seen, what in ((True, "to its room"), (False, "on the room's node")):
            for p in (50, 99):
                extra = [join_added(f, p, seen=seen) for f in runs]
                if not any(math.isnan(x) for x in extra):
                    print(f"  {adds} to a join ({steady}), {what}, p{p} {median_of(extra)} ms")
        if all(f.probe_rooms for f in runs):
            moved_n = sum(len(f.probe_followed) for f in runs)
            joins_n = moved_n + sum(len(f.probe_direct) for f in runs)
            line = f"  steady joins that still needed a move         {moved_n} of {joins_n}"
            if all(f.lookup for f in runs):
                looked = [x for f in runs for x in f.probe_looked]
                direct = [x for f in runs for x in f.probe_direct]
                lookups = [x for f in runs for x in f.probe_lookups]
                p50, p99 = (ms(looked, p) - ms(direct, p) for p in (50, 99))
                line += (
                    f" ({sum(f.probe_no_node for f in runs)} look-ups named no node); pooled:"
                    f" the look-up p50 / p99 {ms(lookups, 50):.2f} / {ms(lookups, 99):.2f} ms,"
                    f" it and any move add (on the room's node) {p50:.2f} / {p99:.2f} ms"
                )
            print(line)
        if len(runs) > 1 and all(f.probe_rooms and not f.lookup for f in runs):
            # A round's p99 of a few dozen moved joins is its worst one: the rounds'
            # joins pooled say more.
            moved_seen = [x for f in runs for x in f.probe_followed_seen]
            moved = [x for f in runs for x in f.probe_followed]
            direct = [x for f in runs for x in f.probe_direct]
            print(
                f"  the rounds' steady joins pooled ({len(moved)} moved, {len(direct)} not):"
                f" the move adds, p50 / p99: to its room"
                f" {ms(moved_seen, 50) - ms(direct, 50):.2f} /"
                f" {ms(moved_seen, 99) - ms(direct, 99):.2f} ms; on the room's node"
                f" {ms(moved, 50) - ms(direct, 50):.2f} / {ms(moved, 99) - ms(direct, 99):.2f} ms"
            )
        lb = [1e6 * (f.balancer_cpu or 0.0) * f.window_s / (f.accepted + f.refused) for f in runs]
        print(f"  HAProxy CPU per answered move                {median_of(lb)} us")
    redis = [
        1e6 * f.redis_cpu * f.window_s / (f.accepted + f.refused)
        for f in runs
        if f.redis_cpu is not None and f.accepted + f.refused
    ]
    if redis:
        print(f"  Redis CPU per answered move                  {median_of(redis)} us")
    lost = [float(f.failures) for f in runs]
    print(f"  players lost (stopped)                       {median_of(lost)}")
    print("  players closed with 1012                     ", end="")
    print(median_of([float(f.closed_1012) for f in runs]))
    print("  races taken over                             ", end="")
    print(median_of([float(f.takeovers) for f in runs]))
    # The share relayed as the nodes count it; nodes that do not count it: as the players
    # count it (placed by the bench, or a follower whose route was ignored).
    shares = [f.relayed_share for f in runs]
    counted = "the nodes' count"
    if any(x is None for x in shares):
        shares = [len(f.remote_latencies) / max(1, len(f.latencies)) for f in runs]
        counted = "the players' count"
    relayed = [x or 0.0 for x in shares]
    print(f"  answers relayed ({counted})            {median_of([100 * x for x in relayed])} %")
    per_move = statistics.median(us)
    if per_move > 0 and not math.isnan(per_move):
        moves = NODE_BUSY * 1e6 / per_move
        nodes = math.ceil(TARGET_RACERS / moves)
        print(
            f"  sizing, at this run's mix ({100 * statistics.median(relayed):.0f} % of the"
            f" answers relayed): a node (one process, one core) at {100 * NODE_BUSY:.0f} %"
            f" serves {moves:,.0f} moves/s, i.e. {moves:,.0f} racers at a move a second;"
            f" {TARGET_RACERS:,} racers need {nodes} nodes (cores)"
        )


#: Targets of issue 26 (a cluster through HAProxy, 960 players at a move a second): the
#: answers relayed, Redis's CPU per answered move, the nodes 100,000 racers need, and what
#: the move to the room's node adds to a join at p99. (The fifth, CPU per answered move
#: over all nodes at most 1.15 times one node's, compares two runs: docs/performance.md.)
TARGET_RELAYED = 0.05
TARGET_REDIS_US = 5.0
TARGET_NODES = 40
TARGET_JOIN_ADDED_P99_MS = 50.0


def sizing(runs: list[RunFigures]) -> int | None:
    """The nodes 100,000 racers at a move a second need at these runs' median CPU per
    answered move, every node run at NODE_BUSY of its core."""
    per_move = statistics.median(f.cpu_us_per_move for f in runs)
    if not per_move > 0:
        return None
    return math.ceil(TARGET_RACERS / (NODE_BUSY * 1e6 / per_move))


def show_cluster_targets(runs: list[RunFigures], echo_runs: list[RunFigures]) -> None:
    """Issue 26's targets, on the medians of these runs (``echo_runs``: the same traffic
    on as many bare echo servers, the platform's own cost of the spread)."""
    print()
    print("targets (issue 26; medians over the runs):")
    shares = [f.relayed_share for f in runs]
    if all(x is not None for x in shares):
        share = statistics.median(x or 0.0 for x in shares)
        print(
            f"  answers relayed            {100 * share:.1f} %   <= {100 * TARGET_RELAYED:g} %:"
            f" {verdict(share <= TARGET_RELAYED)}"
        )
    redis = [
        1e6 * f.redis_cpu * f.window_s / (f.accepted + f.refused)
        for f in runs
        if f.redis_cpu is not None and f.accepted + f.refused
    ]
    if redis:
        us = statistics.median(redis)
        print(
            f"  Redis CPU per answered move {us:.1f} us   <= {TARGET_REDIS_US:g} us:"
            f" {verdict(us <= TARGET_REDIS_US)}"
        )
    nodes = sizing(runs)
    if nodes is not None:
        print(
            f"  nodes for {TARGET_RACERS:,} racers   {nodes}   <= {TARGET_NODES}:"
            f" {verdict(nodes <= TARGET_NODES)}"
        )
    adds = (
        "the look-up and any move add"
        if all(f.probe_rooms and f.lookup for f in runs)
        else "the move adds"
    )
    for seen, what in ((True, "to its room"), (False, "on the room's node")):
        added = [join_added(f, 99, seen=seen) for f in runs]
        if not any(math.isnan(x) for x in added):
            p99 = statistics.median(added)
            print(
                f"  {adds} to a join ({what}), p99 {p99:.1f} ms"
                f"   <= {TARGET_JOIN_ADDED_P99_MS:g} ms: {verdict(p99 <= TARGET_JOIN_ADDED_P99_MS)}"
            )
    print(
        "  CPU per answered move over all nodes <= 1.15 x one node's: compare this run's"
        " with --nodes 1's (the same command)"
    )
    if echo_runs:
        echo_us = median_of([e.cpu_us_per_move for e in echo_runs])
        print(
            f"  the same traffic on {max(1, len(runs[0].nodes))} bare echo server(s): {echo_us} us"
            " of CPU per message; its ratio to --nodes 1's is what this machine charges any"
            " server for the spread (docs/performance.md)"
        )


def median_of(values: list[float]) -> str:
    """The median, and with more than one value the values it is the median of."""
    text = f"{statistics.median(values):.2f}"
    if len(values) > 1:
        text += f" (median of {', '.join(f'{v:.2f}' for v in values)})"
    return text


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load",
        description="Simulated players against a real race server (and an echo server).",
    )
    parser.add_argument(
        "--db",
        help="sqlite (the default), postgresql (a fresh local one; the default with --nodes)"
        " or a URL",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=0,
        help="run a cluster of this many nodes (yukon serve --redis) on one PostgreSQL"
        " database and Redis, players spread over them; 0 (the default): one server alone",
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="with --nodes: the bench spreads the players over the nodes itself, each"
        " room's members over every node (the relay's worst case), instead of connecting"
        " them through the shipped HAProxy config (deploy/haproxy.cfg) and following the"
        " move to their room's node as the clients do",
    )
    parser.add_argument(
        "--no-follow",
        dest="follow",
        action="store_false",
        help="with --nodes through HAProxy: the players do not follow route (a client"
        " written from the older docs: it stays where HAProxy put it, relayed)",
    )
    parser.add_argument(
        "--no-lookup",
        dest="lookup",
        action="store_false",
        help="with --nodes through HAProxy: the probe rooms' guests connect wherever HAProxy"
        " puts them and join there, relayed and then routed, instead of looking the room's"
        " node up first (/r/CODE?format=json, as an invite link does) and connecting there",
    )
    parser.add_argument(
        "--lb-cpus",
        type=parse_cpus,
        help="the CPUs HAProxy runs on (default: --client-cpus; the nodes keep theirs)",
    )
    parser.add_argument(
        "--redis",
        default=DEFAULT_REDIS,
        help=f"with --nodes: the nodes' Redis (default {DEFAULT_REDIS}); each run's keys"
        " have a prefix of their own, deleted at the end. 'private': a redis-server of"
        " each run's own, so that its CPU is the run's alone",
    )
    parser.add_argument("--players", type=int, default=200, help="players (default 200)")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="moves per second per player; 0: saturate"
    )
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds (20)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--procs", type=int, default=2, help="player processes (default 2)")
    parser.add_argument("--room-size", type=int, default=4, help="players per room (4)")
    parser.add_argument(
        "--form-concurrency",
        type=int,
        default=16,
        help="rooms forming at once in each player process (16): their joins are measured",
    )
    parser.add_argument(
        "--probe-rooms",
        type=int,
        default=100,
        help="with --nodes through HAProxy: rooms of new players formed at a steady pace"
        " after the measured window, while the racers race on (100): their joins are the"
        " join latency the summary's targets use (those of the rooms formed at once are"
        " printed too)",
    )
    parser.add_argument(
        "--probe-rate",
        type=float,
        default=5.0,
        help="probe rooms formed per second, all player processes together (5); 0: none",
    )
    parser.add_argument("--server-cpus", type=parse_cpus, default={0}, help="default 0")
    parser.add_argument("--client-cpus", type=parse_cpus, default={1}, help="default 1")
    parser.add_argument("--no-echo", dest="echo", action="store_false", help="skip the echo run")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="echo and race runs, one after the other, this many times; the ratios given"
        " are the medians (a shared machine drifts between runs)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log", type=Path, help="append the race server's log to this file")
    parser.add_argument(
        "--profile",
        type=Path,
        help="run the race server under cProfile, writing this file; with --nodes each"
        " node profiles its loop's CPU over the measured window only (bench.profiled),"
        " writing FILE with -node<k> before its suffix (FILE itself with one node)",
    )
    args = parser.parse_args(argv)
    if args.nodes < 0:
        parser.error("--nodes must be 0 (one server alone) or more")
    if args.db is None:
        args.db = "postgresql" if args.nodes else "sqlite"
    if args.nodes and args.db == "sqlite":
        parser.error("--nodes needs one database for every node: --db postgresql or a URL")
    if args.players % args.room_size:
        parser.error("--players must be a multiple of --room-size")
    if args.lb_cpus is None:
        args.lb_cpus = args.client_cpus
    args.through_lb = bool(args.nodes) and not args.direct
    if args.through_lb:
        names = server_names()
        if args.nodes > len(names):
            parser.error(
                f"--nodes {args.nodes}: deploy/haproxy.cfg names {len(names)} nodes;"
                " more need --direct"
            )
    args.procs = max(1, min(args.procs, args.players // args.room_size))
    return args


def run_echo(args: argparse.Namespace) -> RunFigures:
    """One measured run of the echo traffic against ``bench.echo``; with ``--nodes N``,
    against N echo servers pinned as the nodes are, the players spread over them as
    ``--direct`` spreads them: what spreading the same traffic over N processes on the
    same cores costs the platform itself (docs/performance.md, "What the machine charges
    for three processes")."""
    servers: list[ServerProcess] = []
    try:
        for _ in range(max(1, args.nodes)):
            servers.append(ServerProcess.echo_server(cpus=args.server_cpus))
        if len(servers) == 1:
            return measure(servers[0], args, echo=True, label="echo server (bench.echo)")
        label = f"{len(servers)} echo servers (bench.echo), the players spread over them"
        return measure(servers, args, echo=True, label=label)
    finally:
        for server in servers:
            server.kill()


def race_env(args: argparse.Namespace) -> dict[str, str]:
    return {
        "YUKON_MSG_RATE": "10000",
        "YUKON_MSG_BURST": "10000",
        "YUKON_MAX_CONNECTIONS": str(args.players + 1000 + 2 * args.room_size * args.probe_rooms),
        "YUKON_MAX_ROOMS": str(args.players + args.probe_rooms),
    }


@contextlib.contextmanager
def private_redis(workdir: Path) -> Iterator[str]:
    """A ``redis-server`` of this run's own on a free loopback port, nothing kept on disk:
    its CPU is then this run's nodes' alone. Stopped at the end."""
    import redis

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            *("redis-server", "--port", str(port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no", "--dir", str(workdir)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                redis.Redis.from_url(url, socket_timeout=1).ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def redis_prefix(
    url: str,
) -> Iterator[tuple[str, Callable[[], float], Callable[[], dict[str, tuple[int, int]]]]]:
    """A key prefix of this run's own in the Redis at ``url`` (the nodes' keys and
    channels all carry it), a reading of the Redis server's CPU time in seconds (INFO
    cpu: every client of that server counts, not only this run's nodes), and one of its
    commands' calls and microseconds so far (INFO commandstats: where that CPU goes). The
    prefix's keys are deleted at the end; nothing else in that Redis is touched."""
    import redis

    prefix = f"yukon-bench-{os.getpid()}-{secrets.token_hex(3)}:"
    client = redis.Redis.from_url(url, socket_timeout=10)
    try:
        client.ping()

        def cpu() -> float:
            info = client.info("cpu")
            return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])

        def commands() -> dict[str, tuple[int, int]]:
            info = client.info("commandstats")
            return {
                name.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"]))
                for name, v in info.items()
            }

        try:
            yield prefix, cpu, commands
        finally:
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            for i in range(0, len(keys), 1000):
                client.delete(*keys[i : i + 1000])
    finally:
        client.close()


def run_cluster(args: argparse.Namespace) -> tuple[RunFigures, list[str]]:
    """One measured run of ``args.nodes`` nodes (``yukon serve --redis``) sharing a fresh
    PostgreSQL database and a Redis key prefix of its own; the figures and the tracebacks
    in the nodes' logs. Every node is pinned to ``--server-cpus``."""
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="yukon-load-"))
        db = stack.enter_context(database(args.db, Path(tmp)))
        url = args.redis
        if url == "private":
            url = stack.enter_context(private_redis(Path(tmp)))
        prefix, redis_cpu, redis_commands = stack.enter_context(redis_prefix(url))
        nodes: list[ServerProcess] = []
        try:
            # One after the other: the first migrates the fresh database before it listens.
            # Node k's id is the name of its server in deploy/haproxy.cfg: the one that
            # ``?node=<id>`` routes to.
            ids = server_names()[: args.nodes] if args.through_lb else []
            ids += [f"node{k + 1}" for k in range(len(ids), args.nodes)]
            for k in range(args.nodes):
                nodes.append(
                    ServerProcess.race_server(
                        db,
                        Path(tmp) / f"spool-{k + 1}.jsonl",
                        env=race_env(args),
                        cpus=args.server_cpus,
                        log_path=args.log,
                        window_profile=node_profile(args.profile, k, args.nodes),
                        extra=(
                            *("--redis", url, "--redis-prefix", prefix),
                            *("--node-id", ids[k]),  # node1, node2...: the logs say
                        ),
                    )
                )
            label = f"cluster of {args.nodes} (yukon serve --redis, {args.db})"
            balancer = None
            if args.through_lb:
                backends = {ids[k]: node.port for k, node in enumerate(nodes)}
                balancer = Balancer(Path(tmp), backends, cpus=args.lb_cpus)
                stack.callback(balancer.stop)
                label += ", through HAProxy (deploy/haproxy.cfg)"
            figures = measure(
                nodes,
                args,
                echo=False,
                label=label,
                redis_cpu=redis_cpu,
                redis_commands=redis_commands,
                balancer=balancer,
            )
            tracebacks = [line for node in nodes for line in node.tracebacks()]
            logs = [line for node in nodes for line in node.lines]
            figures.takeovers = sum(1 for x in logs if "taken over from node" in x)
            figures.fenced = sum(1 for x in logs if "fenced by the database" in x)
            figures.judged_gone = sum(1 for x in logs if re.search(r"node \S+ is gone", x))
            figures.withheld = sum(1 for x in logs if "heartbeat is withheld" in x)
            if balancer is not None:  # a node HAProxy judged down served nobody for a while
                downs = [x for x in balancer.log().splitlines() if " is DOWN" in x]
                figures.problems += [f"haproxy: {x.strip()}" for x in downs[:3]]
        finally:
            for node in nodes:
                node.kill()
    return figures, tracebacks


def node_profile(path: Path | None, k: int, nodes: int) -> Path | None:
    """Where node ``k`` (from 0) of ``nodes`` writes its profile: ``path`` itself for a
    cluster of one, else ``path`` with ``-node<k+1>`` before its suffix."""
    if path is None or nodes == 1:
        return path
    return path.with_name(f"{path.stem}-node{k + 1}{path.suffix}")


def run_race(args: argparse.Namespace) -> tuple[RunFigures, list[str]]:
    """One measured run of ``yukon serve`` on a fresh database; its figures and the
    tracebacks in its log."""
    if args.nodes:
        return run_cluster(args)
    env = race_env(args)
    with (
        tempfile.TemporaryDirectory(prefix="yukon-load-") as tmp,
        database(args.db, Path(tmp)) as db,
    ):
        server = ServerProcess.race_server(
            db,
            Path(tmp) / "spool.jsonl",
            env=env,
            cpus=args.server_cpus,
            log_path=args.log,
            profile=args.profile,
        )
        try:
            figures = measure(
                server, args, echo=False, label=f"race server (yukon serve, {args.db})"
            )
            tracebacks = server.tracebacks()
            if args.profile is not None:
                server.stop(signal.SIGINT, 120)
        finally:
            server.kill()
    return figures, tracebacks


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    raise_fd_limit()
    rate = "saturation (each player's next move as soon as the last is answered)"
    if args.rate:
        rate = f"{args.rate:g} moves per second per player"
    print("Yukon race server load benchmark")
    print(f"python  {platform.python_version()} on {platform.system()} {platform.machine()}")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} CPUs")
    print(
        f"setup   {args.players} players in rooms of {args.room_size}, {rate};"
        f" {args.procs} player processes on CPU {sorted(args.client_cpus)},"
        f" server on CPU {sorted(args.server_cpus)}; db {args.db};"
        f" {args.warmup:g} s warm-up, {args.duration:g} s measured"
    )
    if args.nodes:
        how = (
            f"the players connect through HAProxy (deploy/haproxy.cfg, on CPU"
            f" {sorted(args.lb_cpus)}), each from a loopback address of its own, and "
            + (
                "follow the move to their room's node (route, ?node=)"
                if args.follow
                else "stay where it put them (--no-follow)"
            )
            if args.through_lb
            else f"room r's member j reaches node (r + j) mod {args.nodes} (--direct),"
            " the room lives on its host's node"
        )
        print(
            f"cluster {args.nodes} nodes (yukon serve --redis {args.redis}), every one on CPU"
            f" {sorted(args.server_cpus)}; {how}"
        )
    solver = subprocess.run(["pgrep", "-f", "bench.solver"], capture_output=True, text=True)
    print(
        f"load    {load_average()}"
        + ("; bench.solver IS RUNNING" if solver.stdout.strip() else "; no bench.solver running")
    )
    print()
    pairs: list[tuple[RunFigures | None, RunFigures]] = []
    for round_no in range(1, args.rounds + 1):
        if args.rounds > 1:
            print(f"== round {round_no} of {args.rounds}")
        echo_figures = run_echo(args) if args.echo else None
        if echo_figures is not None:
            show(echo_figures)
            print()
        figures, tracebacks = run_race(args)
        show(figures)
        if tracebacks:
            print(f"  server log: {len(tracebacks)} tracebacks")
        print()
        pairs.append((echo_figures, figures))
    race_us = [f.cpu_us_per_move for _, f in pairs]
    line = f"server CPU per answered move: race {median_of(race_us)} us"
    echo_us = [e.cpu_us_per_move for e, _ in pairs if e is not None]
    if echo_us:
        line += f"; echo {median_of(echo_us)} us"
    print(line)
    if args.nodes:
        show_capacity([f for _, f in pairs])
        show_cluster_targets([f for _, f in pairs], [e for e, _ in pairs if e is not None])
    print()
    print("targets (issue 7):")
    ratios = [
        (f.per_second / e.per_second, e.cpu_us_per_move / f.cpu_us_per_move)
        for e, f in pairs
        if e is not None and e.per_second
    ]
    if ratios:
        by_moves = [r for r, _ in ratios]
        by_cpu = [c for _, c in ratios]
        line = f"  accepted moves/s vs echo   {median_of(by_moves)}"
        if not args.rate:
            met = statistics.median(by_moves) >= TARGET_RATIO
            line += f"   >= {TARGET_RATIO} at saturation: {verdict(met)}"
        print(line)
        # The echo run is often limited by the players' core, not the echo server's: then
        # the ratio above flatters the race server, and CPU per move compares the two
        # servers themselves.
        print(f"  server CPU per move, echo / race {median_of(by_cpu)}   (the same, by CPU)")
    figures = pairs[-1][1]
    p99 = figures.latency_ms(99)
    print(
        f"  move-ack p99               {p99:.1f} ms   <= {TARGET_P99_MS:g} ms"
        f" (the target is for 2000 players at 1/s): {verdict(p99 <= TARGET_P99_MS)}"
    )
    kib = figures.kib_per_player
    print(
        f"  memory per idle player     {kib:.1f} KiB   <= {TARGET_KIB_PER_PLAYER:g} KiB:"
        f" {verdict(kib <= TARGET_KIB_PER_PLAYER)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
