"""How much one race server carries: simulated players against a real ``yukon serve``.

Run from the repository root::

    python -m bench.load                                  # saturation, SQLite, with echo
    python -m bench.load --players 2000 --rate 1          # 2,000 players, a move a second
    python -m bench.load --db postgresql --players 400 --rate 0 --duration 20

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
slower from one minute to the next.

It prints one block of figures per server and the targets of issue 7. It is a
measurement, not a test: it always exits 0 unless it could not run at all. Every process
it starts is stopped before it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import gc
import math
import multiprocessing as mp
import os
import platform
import random
import re
import resource
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/load.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bench.engine import cpu_model, percentile
from protocol import Game

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432"
START_TIMEOUT = 60.0

#: Targets of issue 7 on the 2-core reference machine.
TARGET_RATIO = 0.6
TARGET_P99_MS = 50.0
TARGET_KIB_PER_PLAYER = 40.0

_packb = msgpack.packb
_unpackb = msgpack.unpackb
#: How every ``progress`` frame starts after its map header (``"t"`` comes first, and
#: then ``"progress"``): the players skip these without unpacking them, as a client
#: that does not show standings would.
_PROGRESS_HEAD = b"\xa1t\xa8progress"


# -- processes ------------------------------------------------------------------------------


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def parse_cpus(text: str) -> set[int]:
    return {int(x) for x in text.split(",") if x.strip()}


def pin(pid: int, cpus: set[int] | None) -> None:
    if cpus:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(pid, cpus & os.sched_getaffinity(0) or cpus)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (and its reaped children), in seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def load_average() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


class ServerProcess:
    """A server in its own process (``yukon serve`` or ``bench.echo``), its log read on a
    thread until it says where it listens. ``kill`` in a ``finally``: nothing is left."""

    def __init__(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        cpus: set[int] | None = None,
        log_path: Path | None = None,
    ) -> None:
        raise_fd_limit()
        self.proc = subprocess.Popen(
            argv,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )
        pin(self.proc.pid, cpus)
        self.lines: list[str] = []
        self.url = ""
        self._log = open(log_path, "a") if log_path else None  # noqa: SIM115
        self._listening = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._listening.wait(START_TIMEOUT):
            self.kill()
            raise RuntimeError("the server did not start:\n" + "".join(self.lines[-30:]))

    @classmethod
    def race_server(
        cls,
        db: str,
        spool: Path,
        *,
        env: dict[str, str] | None = None,
        cpus: set[int] | None = None,
        log_path: Path | None = None,
        profile: Path | None = None,
    ) -> ServerProcess:
        argv = [sys.executable, "-m", "yukon", "serve", "--port", "0", "--db", db]
        wrap = os.environ.get("YUKON_BENCH_WRAP")
        if wrap:  # a script that patches the server, then runs ``yukon.cli.main``
            argv[1:3] = [wrap]
        if profile is not None:  # cProfile writes its file when the server stops (SIGINT)
            argv[1:1] = ["-m", "cProfile", "-o", str(profile)]
        argv += ["--spool", str(spool)]
        # Every player of a bench comes from 127.0.0.1: no per-address limits, unless the
        # caller's ``env`` sets them (the drills of bench/faults.py that test them do).
        unlimited = {
            f"YUKON_MAX_{what}_PER_ADDRESS": "0"
            for what in ("CONNECTIONS", "REGISTRATIONS", "ROOMS")
        }
        return cls(argv, env={**unlimited, **(env or {})}, cpus=cpus, log_path=log_path)

    @classmethod
    def echo_server(cls, *, cpus: set[int] | None = None) -> ServerProcess:
        return cls([sys.executable, "-m", "bench.echo", "--port", "0"], cpus=cpus)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if len(self.lines) > 20_000:
                del self.lines[:10_000]
            if self._log is not None:
                self._log.write(line)
            match = re.search(r"listening on (ws://\S+)", line)
            if match:
                self.url = match.group(1)
                self._listening.set()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(30)
        if self._log is not None:
            with contextlib.suppress(ValueError):
                self._log.flush()

    def tracebacks(self) -> list[str]:
        return [x for x in self.lines if "Traceback" in x]


@contextlib.contextmanager
def database(kind: str, workdir: Path) -> Iterator[str]:
    """A fresh database URL: ``sqlite``, ``postgresql`` (a new database on the local server,
    dropped at the end) or a URL used as it is."""
    if kind == "sqlite":
        yield f"sqlite:///{workdir}/yukon.db"
        return
    if kind != "postgresql":
        yield kind
        return
    name = f"yukon_bench_{secrets.token_hex(4)}"
    admin = f"{DEFAULT_PG}/postgres"
    pg_admin(admin, f'CREATE DATABASE "{name}"')
    try:
        yield f"{DEFAULT_PG}/{name}"
    finally:
        pg_admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_admin(url: str, sql: str) -> None:
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(url, timeout=10)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    # On a thread of its own: the caller may be inside a running event loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()


# -- a simulated player ---------------------------------------------------------------------


class Gone(Exception):
    """The connection ended while the player waited for something."""


@dataclass
class Player:
    """One websocket client that plays like a (fast) person, and keeps what a real client
    keeps to resume: its token and every accepted move and undo of its race."""

    url: str
    name: str
    rng: random.Random
    #: A cluster's bench: this player's node is not its room's (its moves are relayed).
    remote: bool = False
    ws: ClientConnection | None = None
    token: str | None = None
    room: str | None = None
    game: Game | None = None
    state: str = "playing"
    next_seq: int = 1
    #: Accepted moves and undos of the current race, in order: (seq, move or None).
    acked: list[tuple[int, str | None]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    closes: list[int | None] = field(default_factory=list)
    last_room: dict[str, Any] | None = None
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _backlog: list[dict[str, Any]] = field(default_factory=list)
    _news: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None

    async def connect(self, timeout: float = 30.0) -> None:
        self.ws = await connect(
            self.url,
            compression=None,
            open_timeout=timeout,
            ping_interval=None,
            max_size=2**20,
            close_timeout=2,
        )
        self._backlog.clear()
        self._reader = asyncio.create_task(self._read(self.ws))

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for data in ws:
                if data[1:12] == _PROGRESS_HEAD:  # a player here never looks at progress
                    continue
                msg = _unpackb(data, raw=False)
                t = msg.get("t")
                if t == "progress":
                    continue
                seq = msg.get("seq")
                if seq is not None and t in ("accepted", "undone", "refused", "error", "move"):
                    fut = self._waiting.pop(seq, None)
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
                        continue
                if t == "result":
                    self.results.append(msg)
                elif t == "room":
                    self.last_room = msg
                elif t == "error":
                    self.errors.append(msg["code"])
                self._backlog.append(msg)
                if len(self._backlog) > 256:
                    del self._backlog[:128]
                self._news.set()
        except ConnectionClosed as exc:
            self.closes.append(exc.rcvd.code if exc.rcvd else None)
        finally:
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(Gone(self.name))
            self._waiting.clear()
            self._news.set()

    async def send(self, body: dict[str, Any]) -> None:
        assert self.ws is not None
        try:
            await self.ws.send(_packb(body, use_bin_type=True))
        except ConnectionClosed as exc:
            raise Gone(self.name) from exc

    async def expect(self, t: str, timeout: float = 30.0, **match: Any) -> dict[str, Any]:
        """The next (or a waiting) message of type ``t`` whose fields equal ``match``."""
        async with asyncio.timeout(timeout):
            while True:
                for i, msg in enumerate(self._backlog):
                    if msg.get("t") == t and all(msg.get(k) == v for k, v in match.items()):
                        del self._backlog[: i + 1]
                        return msg
                if self._reader is None or self._reader.done():
                    raise Gone(self.name)
                self._news.clear()
                await self._news.wait()

    async def hello(self, timeout: float = 60.0) -> None:
        if self.token is None:
            await self.send({"t": "hello", "v": 1, "name": self.name})
        else:
            await self.send({"t": "hello", "v": 1, "token": self.token})
        welcome = await self.expect("welcome", timeout)
        self.token = welcome["token"]

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 3)
            self.ws.transport.abort()
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await self._reader

    def abort(self) -> None:
        """Drop the connection without a close handshake, as a broken network does."""
        if self.ws is not None:
            self.ws.transport.abort()

    # -- racing ---------------------------------------------------------------------------

    def start_race(self, race: dict[str, Any]) -> None:
        self.game = Game.from_position(race["view"])
        self.state = race["state"]
        self.acked = []
        self.next_seq = race["seq"] + 1

    @property
    def done(self) -> bool:
        return self.state not in ("playing", "stuck")

    async def request(self, body: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        """Send a move or an undo and wait for its answer."""
        seq = body["seq"]
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[seq] = fut
        try:
            await self.send(body)
        except Gone:
            self._waiting.pop(seq, None)
            raise
        async with asyncio.timeout(timeout):
            return await fut

    def next_action(self) -> dict[str, Any] | None:
        """The next move (a random legal one) or undo (when stuck); None when done."""
        if self.game is None or self.done:
            return None
        seq = self.next_seq
        self.next_seq += 1
        legal = self.game.legal_moves()
        if not legal:
            return {"t": "undo", "seq": seq}
        return {"t": "move", "seq": seq, "move": self.rng.choice(legal)}

    def apply(self, body: dict[str, Any], reply: dict[str, Any]) -> bool:
        """Follow the server's answer; True if it was accepted (or undone)."""
        t = reply["t"]
        assert self.game is not None
        if t == "accepted":
            self.game.play(reply["move"], reveal=reply["turned"])
            self.acked.append((reply["seq"], reply["move"]))
            self.state = reply["state"]
            return True
        if t == "undone":
            self.game = Game.from_position(reply["view"])
            self.acked.append((reply["seq"], None))
            self.state = reply["state"]
            return True
        if t == "error" and reply.get("code") == "finished":
            self.state = "finished"
        return False

    async def play_one(self, timeout: float = 30.0) -> tuple[bool, float] | None:
        """Play one action; (accepted, seconds to the answer), or None when done."""
        body = self.next_action()
        if body is None:
            return None
        started = time.perf_counter()
        reply = await self.request(body, timeout)
        took = time.perf_counter() - started
        return self.apply(body, reply), took

    async def resume(self, timeout: float = 60.0) -> dict[str, Any] | None:
        """Reconnect with the token; take the server's race; resend what it lost."""
        await self.connect()
        await self.hello(timeout)
        if self.game is None:
            return None
        race = await self.expect("race", timeout)
        self.game = Game.from_position(race["view"])
        self.state = race["state"]
        lost = [(s, m) for s, m in self.acked if s > race["seq"]]
        self.acked = [(s, m) for s, m in self.acked if s <= race["seq"]]
        for seq, move in lost:
            body: dict[str, Any] = (
                {"t": "move", "seq": seq, "move": move}
                if move is not None
                else {"t": "undo", "seq": seq}
            )
            reply = await self.request(body, timeout)
            if not self.apply(body, reply):
                raise AssertionError(f"{self.name}: resent seq {seq} got {reply}")
        self.next_seq = max(self.next_seq, race["seq"] + 1, (lost[-1][0] + 1) if lost else 0)
        return race


async def form_room(
    players: list[Player],
    *,
    code: str | None = None,
    time_limit: int = 7200,
    undo: bool = True,
    timeout: float = 60.0,
) -> str:
    """The first player creates a room, the others join and get ready; the host starts it
    and every player gets its race."""
    host, guests = players[0], players[1:]
    create: dict[str, Any] = {
        "t": "create",
        "max_players": max(2, len(players)),
        "time_limit": time_limit,
        "undo": undo,
    }
    if code is not None:
        create["code"] = code
    await host.send(create)
    room = (await host.expect("room", timeout))["room"]
    for p in (host, *guests):
        p.room = room
    for g in guests:
        await g.send({"t": "join", "room": room})
        await g.expect("room", timeout)
        await g.send({"t": "ready", "ready": True})
    deadline = time.monotonic() + timeout
    while True:  # wait until the host sees everyone ready
        msg = await host.expect("room", max(0.1, deadline - time.monotonic()))
        if len(msg["players"]) == len(players) and all(x["ready"] for x in msg["players"]):
            break
    await host.send({"t": "start"})
    for p in players:
        p.start_race(await p.expect("race", timeout))
    return room


# -- worker processes -----------------------------------------------------------------------


@dataclass
class WorkerJob:
    index: int
    url: str
    names: list[str]
    rate: float
    room_size: int
    echo: bool
    cpus: set[int] | None
    seed: int
    connect_concurrency: int = 32
    #: A cluster (``--nodes``): every node's URL. In room ``g`` player ``i`` connects to
    #: node ``(g + i) % nodes``, so rooms spread over the nodes and most players of a room
    #: reach it through another node (the relay).
    urls: list[str] = field(default_factory=list)


@dataclass
class WorkerReport:
    index: int
    connected: int = 0
    latencies: list[float] = field(default_factory=list)
    #: The latencies of players whose room lives on another node (relayed).
    remote: list[float] = field(default_factory=list)
    accepted: int = 0
    refused: int = 0
    failures: int = 0
    cpu_s: float = 0.0
    problems: list[str] = field(default_factory=list)


def worker_main(job: WorkerJob, pipe: Any) -> None:
    pin(0, job.cpus)
    raise_fd_limit()
    try:
        asyncio.run(_worker(job, pipe))
    except BaseException as exc:  # the parent must always hear back
        with contextlib.suppress(Exception):
            pipe.send(("failed", f"{type(exc).__name__}: {exc}"))


async def _worker(job: WorkerJob, pipe: Any) -> None:
    loop = asyncio.get_running_loop()
    rng = random.Random(job.seed)
    players = [Player(job.url, n, random.Random(rng.random())) for n in job.names]
    if len(job.urls) > 1:
        for k, p in enumerate(players):
            g, i = divmod(k, job.room_size)
            g += job.index * 7919  # rooms of each worker start on another node
            p.url = job.urls[(g + i) % len(job.urls)]
            p.remote = p.url != job.urls[g % len(job.urls)]
    report = WorkerReport(job.index)
    gate = asyncio.Semaphore(job.connect_concurrency)

    async def arrive(p: Player) -> None:
        async with gate:
            for attempt in range(5):
                try:
                    await p.connect()
                    break
                except (OSError, InvalidHandshake, TimeoutError):
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.2 * (attempt + 1))
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
        formed = await asyncio.gather(
            *(form_room(g, timeout=120) for g in groups if len(g) == job.room_size),
            return_exceptions=True,
        )
        bad = [o for o in formed if isinstance(o, BaseException)]
        if bad:
            report.problems.append(f"{len(bad)} rooms did not start: {bad[0]!r}")
    # What was built so far lives until the end: keep it out of every collection, and
    # collect rarely, as the server does (server.app): a player process's collector
    # pausing its loop for tens of milliseconds would show up as the server's latency.
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    pipe.send(("racing", None))
    begin, end, stop = await loop.run_in_executor(None, pipe.recv)
    cpu_before = os.times()
    await asyncio.gather(*(_play(p, job, begin, end, stop, report) for p in players))
    cpu_after = os.times()
    report.cpu_s = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    pipe.send(("report", report))
    await asyncio.gather(*(p.close() for p in players), return_exceptions=True)


async def _play(
    p: Player, job: WorkerJob, begin: float, end: float, stop: float, report: WorkerReport
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
            if p.remote:
                report.remote.append(took)
            if ok:
                report.accepted += 1
            else:
                report.refused += 1


# -- one measured run ----------------------------------------------------------------------


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
    #: A cluster's run: latencies of relayed players, and each node's CPU (cores).
    remote: list[float] = field(default_factory=list)
    node_cpu: list[float] = field(default_factory=list)

    def remote_ms(self, p: float) -> float:
        values = sorted(self.remote)
        return 1000 * percentile(values, p) if values else math.nan

    def local_ms(self, p: float) -> float:
        values = sorted(self.latencies)
        for x in self.remote:  # the latencies of players on their room's own node
            values.remove(x)
        return 1000 * percentile(values, p) if values else math.nan

    @property
    def per_second(self) -> float:
        return self.accepted / self.window_s

    @property
    def cpu_us_per_move(self) -> float:
        """The server's CPU per answered move: unlike moves per second, it does not depend
        on whether the players' core or the server's was the one that ran out."""
        answered = self.accepted + self.refused
        return 1e6 * self.server_cpu * self.window_s / answered if answered else math.nan

    @property
    def kib_per_player(self) -> float:
        return (self.rss_idle_kib - self.rss_before_kib) / max(1, self.connected)

    def latency_ms(self, p: float) -> float:
        values = sorted(self.latencies)
        return 1000 * percentile(values, p) if values else math.nan


def measure(
    server: ServerProcess,
    args: argparse.Namespace,
    *,
    echo: bool,
    label: str,
    nodes: list[ServerProcess] | None = None,
) -> RunFigures:
    """One run; with ``nodes`` (a cluster: ``server`` is the first of them), players spread
    over every node, and memory and CPU are their sums."""
    every = nodes or [server]
    ctx = mp.get_context("spawn")
    per = math.ceil(args.players / args.procs / args.room_size) * args.room_size
    run_id = secrets.token_hex(3)
    names = [f"b{run_id}-{i}" for i in range(args.players)]
    pipes, procs = [], []
    time.sleep(0.5)
    rss_before = sum(rss_kib(n.pid) for n in every)
    load_before = load_average()
    try:
        for w in range(args.procs):
            chunk = names[w * per : (w + 1) * per]
            if not chunk:
                continue
            parent, child = ctx.Pipe()
            job = WorkerJob(
                w,
                server.url,
                chunk,
                args.rate,
                args.room_size,
                echo,
                args.client_cpus,
                args.seed * 1000 + w,
                urls=[n.url for n in every] if nodes else [],
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
        rss_idle = sum(rss_kib(n.pid) for n in every)
        for pipe in pipes:
            pipe.send("go")
        gather("racing", 600)
        now = time.monotonic()
        begin = now + args.warmup
        end = begin + args.duration
        stop = end + 0.5
        for pipe in pipes:
            pipe.send((begin, end, stop))
        time.sleep(max(0.0, begin - time.monotonic()))
        cpu0 = [cpu_seconds(n.pid) for n in every]
        time.sleep(max(0.0, end - time.monotonic()))
        cpu1 = [cpu_seconds(n.pid) for n in every]
        rss_racing = sum(rss_kib(n.pid) for n in every)
        load_after = load_average()
        reports: list[WorkerReport] = gather("report", 120 + args.duration)
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
    latencies = [x for r in reports for x in r.latencies]
    return RunFigures(
        label=label,
        players=args.players,
        connected=connected,
        rss_before_kib=rss_before,
        rss_idle_kib=rss_idle,
        rss_racing_kib=rss_racing,
        window_s=args.duration,
        accepted=sum(r.accepted for r in reports),
        refused=sum(r.refused for r in reports),
        failures=sum(r.failures for r in reports),
        latencies=latencies,
        server_cpu=(sum(cpu1) - sum(cpu0)) / args.duration,
        node_cpu=[(b - a) / args.duration for a, b in zip(cpu0, cpu1, strict=True)],
        remote=[x for r in reports for x in r.remote],
        client_cpu=sum(r.cpu_s for r in reports) / (args.duration + args.warmup + 0.5),
        load_before=load_before,
        load_after=load_after,
        problems=[x for r in reports for x in r.problems][:10],
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
    print(
        f"  server RSS                 {f.rss_before_kib / 1024:.1f} MiB empty,"
        f" {f.rss_idle_kib / 1024:.1f} MiB with every player idle,"
        f" {f.rss_racing_kib / 1024:.1f} MiB racing"
    )
    print(f"  memory per idle player     {f.kib_per_player:10.1f} KiB")
    print(
        f"  CPU during the window      server {100 * f.server_cpu:.0f} % of a core,"
        f" players {100 * f.client_cpu:.0f} %"
    )
    print(f"  server CPU per answered move {f.cpu_us_per_move:8.1f} us")
    if len(f.node_cpu) > 1:
        answered = (f.accepted + f.refused) / f.window_s
        shares = ", ".join(f"{100 * c:.0f} %" for c in f.node_cpu)
        per_node = ", ".join(f"{1e6 * c / (answered / len(f.node_cpu)):.1f}" for c in f.node_cpu)
        print(f"  CPU of each node           {shares} of a core")
        print(f"  CPU per answered move, by node (moves shared evenly) {per_node} us")
        print(
            f"  relayed players ({len(f.remote)} answers)  p50 {f.remote_ms(50):7.2f} ms"
            f"   p99 {f.remote_ms(99):7.2f} ms;  on the room's node p50"
            f" {f.local_ms(50):7.2f} ms   p99 {f.local_ms(99):7.2f} ms"
        )
    print(f"  load average               before {f.load_before}, after {f.load_after}")
    for problem in f.problems:
        print(f"  problem: {problem}")


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
        "--db", default="sqlite", help="sqlite (default), postgresql (a fresh local one) or a URL"
    )
    parser.add_argument("--players", type=int, default=200, help="players (default 200)")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="moves per second per player; 0: saturate"
    )
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds (20)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--procs", type=int, default=2, help="player processes (default 2)")
    parser.add_argument("--room-size", type=int, default=4, help="players per room (4)")
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
    parser.add_argument(
        "--nodes",
        type=int,
        default=0,
        help="run the race server as a cluster of this many nodes (docs/cluster.md) on one"
        " Redis (--redis) and the database; 0: a server alone",
    )
    parser.add_argument(
        "--redis", default="redis://127.0.0.1:6379/0", help="the cluster's Redis (--nodes)"
    )
    parser.add_argument("--log", type=Path, help="append the race server's log to this file")
    parser.add_argument(
        "--profile", type=Path, help="run the race server under cProfile, writing this file"
    )
    args = parser.parse_args(argv)
    if args.players % args.room_size:
        parser.error("--players must be a multiple of --room-size")
    args.procs = max(1, min(args.procs, args.players // args.room_size))
    return args


def run_echo(args: argparse.Namespace) -> RunFigures:
    echo = ServerProcess.echo_server(cpus=args.server_cpus)
    try:
        return measure(echo, args, echo=True, label="echo server (bench.echo)")
    finally:
        echo.kill()


def run_race(args: argparse.Namespace) -> tuple[RunFigures, list[str]]:
    """One measured run of ``yukon serve`` on a fresh database; its figures and the
    tracebacks in its log."""
    env = {
        "YUKON_MSG_RATE": "10000",
        "YUKON_MSG_BURST": "10000",
        "YUKON_MAX_CONNECTIONS": str(args.players + 1000),
        "YUKON_MAX_ROOMS": str(args.players),
    }
    with (
        tempfile.TemporaryDirectory(prefix="yukon-load-") as tmp,
        database(args.db, Path(tmp)) as db,
    ):
        if args.nodes:
            return run_cluster(args, db, Path(tmp), env)
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


def run_cluster(
    args: argparse.Namespace, db: str, tmp: Path, env: dict[str, str]
) -> tuple[RunFigures, list[str]]:
    """``args.nodes`` nodes of a cluster on ``db`` and a Redis key prefix of their own."""
    import redis

    prefix = f"yukon-bench-{secrets.token_hex(3)}:"
    nodes: list[ServerProcess] = []
    try:
        for n in range(args.nodes):
            node = ServerProcess.race_server(
                db,
                tmp / f"spool-{n}.jsonl",
                env={
                    **env,
                    "YUKON_REDIS": args.redis,
                    "YUKON_REDIS_PREFIX": prefix,
                    "YUKON_NODE_ID": f"n{n + 1}",
                },
                cpus=args.server_cpus,
                log_path=args.log,
            )
            nodes.append(node)
        label = f"cluster of {args.nodes} node{'s' if args.nodes > 1 else ''} ({args.db}, redis)"
        figures = measure(nodes[0], args, echo=False, label=label, nodes=nodes)
        tracebacks = [t for node in nodes for t in node.tracebacks()]
    finally:
        for node in nodes:
            node.kill()
        client = redis.Redis.from_url(args.redis)
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
        client.close()
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
