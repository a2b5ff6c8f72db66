"""What the race server survives: fault and bad-input drills against a real ``yukon serve``.

Run from the repository root, one drill at a time (each stops by itself and leaves no
process behind)::

    python -m bench.faults kill9     [--db sqlite|postgresql] [--rooms 50] [--moves 40]
    python -m bench.faults dbstop    [--rooms 50] [--outage 30]     (PostgreSQL only)
    python -m bench.faults reconnect [--db ...] [--rooms 125]       (500 players)
    python -m bench.faults stall     [--db ...] [--rooms 25]
    python -m bench.faults fuzz      [--db ...] [--messages 100000] [--rooms 10]
    python -m bench.faults slowloris
    python -m bench.faults pingflood  [--db ...] [--flooders 8] [--pings 200000]
    python -m bench.faults queryflood [--db ...] [--flooders 100]
    python -m bench.faults oneaddress [--db ...]
    python -m bench.faults guessing   [--db ...] [--addresses 1] [--seconds 30]

The server runs in its own process (``python -m yukon serve --port 0``); the players run
in this one. Every drill plays real races in rooms of 4 with fixed deals (one game code
per room), every player playing random legal moves from its own view and keeping every
move the server accepted, then resigning after ``--moves`` moves; at the end it reads the
database and checks that every race was recorded exactly once (four results per game
code) with exactly the moves the players were told were accepted, in order.

- ``kill9``: SIGKILL the server in the middle of the races, start it again on the same
  database and spool; every player reconnects with its token and resends what the
  restarted server lost (docs/protocol.md, section 4.19).
- ``dbstop``: the server reaches PostgreSQL through a loopback TCP proxy, which is cut for
  ``--outage`` seconds while the races go on and some of them end; moves are still
  answered, and the results are written once the database is back.
- ``reconnect``: every player drops its connection at random moments (no close
  handshake) and comes back within the resume window; every race still ends correctly.
- ``stall``: one runner stops reading its socket for good; the move-ack latency of the
  other runners (its room and the rest) is compared with a phase where it read normally.
- ``fuzz``: ``--messages`` malformed, truncated, oversized, wrongly typed and
  out-of-order messages from many connections while the races run; every bad message
  must be answered (an error or any other reply) or its connection closed, the server
  must stay up with no traceback in its log, and its memory is sampled.
- ``slowloris``: handshakes that trickle in a byte at a time, and a message flood: each
  must be cut off within the documented limits.
- ``pingflood``: ``--flooders`` connections send ``--pings`` websocket pings each and
  never read, beside real races: each must be closed (1008 or 4002) with the server's
  memory bounded.
- ``queryflood``: ``--flooders`` connections ask for boards and histories at 18 a second
  for 10 s, beside real races, new players saying hello and a race that ends: hellos and
  the result must come in time.
- ``oneaddress``: one address opens connections, registers names and creates rooms until
  refused; another address still gets in (docs/limits.md).
- ``guessing``: 200 connections guess a private server's password, retrying refused ones,
  from ``--addresses`` loopback addresses (127.0.1.x); guesses judged per second, and
  whether a known player still gets in meanwhile.

Each prints its figures and ends with ``PASS`` or ``FAIL: ...`` (exit status 0 or 1).
``tests/server/test_drills.py`` and ``tests/server/test_fuzz.py`` run short versions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as ``python bench/faults.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msgpack
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bench.bot import Gone, Player, form_room
from bench.engine import cpu_model, percentile
from bench.harness import DEFAULT_PG, ServerProcess, database, rss_kib
from protocol import GameCode, Rules
from server.storage.sql import SqlStore

#: Deal numbers of the drills' rooms: room i plays YU1-C-<FIRST_DEAL + i>.
FIRST_DEAL = 1_000_000


def drill_env(**extra: str) -> dict[str, str]:
    env = {"YUKON_RESUME_WINDOW": "60", "YUKON_MSG_RATE": "200", "YUKON_MSG_BURST": "200"}
    env.update(extra)
    return env


@dataclass
class Rig:
    """A database, a spool and the server process on them (restartable)."""

    db: str
    workdir: Path
    env: dict[str, str] = field(default_factory=drill_env)
    server: ServerProcess | None = None
    servers: list[ServerProcess] = field(default_factory=list)

    def start(self, db: str | None = None) -> ServerProcess:
        self.server = ServerProcess.race_server(
            db or self.db, self.workdir / "spool.jsonl", env=self.env
        )
        self.servers.append(self.server)
        return self.server

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def kill_all(self) -> None:
        for s in self.servers:
            s.kill()

    def tracebacks(self) -> list[str]:
        return [x for s in self.servers for x in s.tracebacks()]


@contextlib.asynccontextmanager
async def rig(kind: str, env: dict[str, str] | None = None) -> AsyncIterator[Rig]:
    with tempfile.TemporaryDirectory(prefix="yukon-drill-") as tmp, database(kind, Path(tmp)) as db:
        r = Rig(db, Path(tmp), drill_env() if env is None else env)
        try:
            yield r
        finally:
            r.kill_all()


def room_code(i: int) -> str:
    return str(GameCode(Rules(), FIRST_DEAL + i))


@dataclass
class Table:
    """Players in rooms of 4, each room with its own fixed deal."""

    rooms: list[list[Player]]
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def players(self) -> list[Player]:
        return [p for room in self.rooms for p in room]


async def seat(url: str, rooms: int, *, tag: str, seed: int = 1, size: int = 4) -> Table:
    rng = random.Random(seed)
    table = Table(
        [
            [Player(url, f"{tag}{r}x{i}", random.Random(rng.random())) for i in range(size)]
            for r in range(rooms)
        ]
    )
    gate = asyncio.Semaphore(32)

    async def arrive(p: Player) -> None:
        async with gate:
            await p.connect()
            await p.hello(60)

    await asyncio.gather(*(arrive(p) for p in table.players))
    await asyncio.gather(
        *(form_room(room, code=room_code(i), timeout=60) for i, room in enumerate(table.rooms))
    )
    return table


async def play(
    p: Player,
    table: Table,
    *,
    moves: int,
    rate: float,
    pause: Callable[[], Awaitable[None]] | None = None,
    resign: bool = True,
    stop: Callable[[], bool] | None = None,
) -> None:
    """Play ``moves`` actions at ``rate`` per second (resuming whenever the connection
    breaks), then resign and wait for the result."""
    period = 1.0 / rate
    await asyncio.sleep(random.random() * period)
    while len(p.acked) < moves and not p.done and not (stop is not None and stop()):
        if pause is not None:
            await pause()
        try:
            started = time.monotonic()
            played = await p.play_one(20)
            if played is None:
                break
            table.latencies.append(played[1])
            await asyncio.sleep(max(0.0, period - (time.monotonic() - started)))
        except (Gone, TimeoutError):
            await come_back(p)
    while resign and not p.done:
        try:
            await p.send({"t": "resign"})
            p.state = "resigned"
        except Gone:
            await come_back(p)
    while not p.results:
        if p._reader is not None and p._reader.done():
            await come_back(p)
        else:
            await asyncio.sleep(0.05)


async def come_back(p: Player, give_up: float = 90.0) -> None:
    """Reconnect with backoff and resume, as a client must (docs/protocol.md, 6.1)."""
    deadline = time.monotonic() + give_up
    wait = 0.2
    while True:
        p.abort()
        try:
            await p.resume(20)
            return
        except (OSError, InvalidHandshake, Gone, TimeoutError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(wait * (0.5 + random.random()))
            wait = min(wait * 2, 2.0)


async def check_stored(db: str, table: Table) -> list[str]:
    """Every race recorded exactly once, with exactly the moves the players were told
    were accepted. Returns the problems found (empty: all is well)."""
    problems = []
    store = SqlStore(db)
    try:
        stored = await store.stored_results()
    finally:
        await store.close()
    by_code: dict[str, list[tuple[str, ...]]] = {}
    for r in stored:
        by_code.setdefault(r.code, []).append(r.actions)
    for i, room in enumerate(table.rooms):
        code = room_code(i)
        got = sorted(by_code.get(code, []))
        want = sorted(tuple(m or "undo" for _, m in p.acked) for p in room)
        if len(got) != len(room):
            problems.append(f"{code}: {len(got)} results stored, not {len(room)}")
        elif got != want:
            problems.append(f"{code}: the stored moves differ from the accepted ones")
        for p in room:
            if not p.results:
                problems.append(f"{p.name}: no result message")
    return problems


def latency_line(values: list[float]) -> str:
    if not values:
        return "no moves"
    v = sorted(values)
    return (
        f"{len(v)} moves, p50 {1000 * percentile(v, 50):.1f} ms, p99"
        f" {1000 * percentile(v, 99):.1f} ms, max {1000 * v[-1]:.1f} ms"
    )


# -- kill -9 --------------------------------------------------------------------------------


async def drill_kill9(
    kind: str = "sqlite", rooms: int = 50, moves: int = 40, rate: float = 4.0
) -> dict[str, Any]:
    """SIGKILL the server mid-race under load; restart; every race resumes and ends."""
    async with rig(kind) as r:
        r.start()
        table = await seat(r.url, rooms, tag="k")
        restarted = asyncio.Event()
        kill_after = moves / rate / 2

        async def killer() -> None:
            await asyncio.sleep(kill_after)
            assert r.server is not None
            r.server.proc.send_signal(signal.SIGKILL)
            await asyncio.get_running_loop().run_in_executor(None, r.server.proc.wait)
            await asyncio.get_running_loop().run_in_executor(None, r.start)
            for p in table.players:
                p.url = r.url  # a new port: a real deployment keeps its port
            restarted.set()

        k = asyncio.create_task(killer())
        await asyncio.wait_for(
            asyncio.gather(*(play(p, table, moves=moves, rate=rate) for p in table.players)),
            kill_after + moves / rate + 240,
        )
        await k
        problems = await check_stored(r.db, table)
        problems += [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        resent = sum(1 for s in r.servers[1].lines if "restored" in s)
        return {
            "drill": f"kill9 ({kind})",
            "rooms": rooms,
            "players": len(table.players),
            "killed after s": kill_after,
            "races restored": resent,
            "latency": latency_line(table.latencies),
            "problems": problems,
        }


# -- the database away ------------------------------------------------------------------------


async def drill_dbstop(rooms: int = 50, outage: float = 30.0, rate: float = 4.0) -> dict[str, Any]:
    """Cut the server's PostgreSQL connection for ``outage`` s while races go on and end."""
    from bench.tcp_proxy import TcpProxy

    async with rig("postgresql") as r:
        parts = urlsplit(r.db)
        proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
        await proxy.start()
        try:
            proxied = r.db.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{proxy.port}")
            await asyncio.get_running_loop().run_in_executor(None, r.start, proxied)
            table = await seat(r.url, rooms, tag="d")
            during: list[float] = []
            cut_at = 3.0
            moves = int(rate * (cut_at + outage / 2))  # races end during the outage
            t0 = time.monotonic()

            async def outage_window() -> None:
                await asyncio.sleep(cut_at)
                await proxy.cut()
                await asyncio.sleep(outage)
                await proxy.restore()

            cutter = asyncio.create_task(outage_window())
            mark = len(table.latencies)
            await asyncio.wait_for(
                asyncio.gather(*(play(p, table, moves=moves, rate=rate) for p in table.players)),
                cut_at + outage + moves / rate + 120,
            )
            await cutter
            during = table.latencies[mark:]
            problems = await check_stored(r.db, table)
            problems += [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
            waits = [x for x in r.servers[0].lines if "database" in x.lower()][:6]
            return {
                "drill": f"dbstop (postgresql, {outage:g} s)",
                "rooms": rooms,
                "players": len(table.players),
                "all results after s": round(time.monotonic() - t0, 1),
                "latency (whole drill)": latency_line(during),
                "server said": [x.strip()[-100:] for x in waits],
                "problems": problems,
            }
        finally:
            await proxy.cut()


# -- drops and reconnects --------------------------------------------------------------------


async def drill_reconnect(
    kind: str = "sqlite", rooms: int = 125, moves: int = 30, rate: float = 2.0, drops: float = 0.08
) -> dict[str, Any]:
    """Players drop their connection at random (no close frame) and resume."""
    async with rig(kind) as r:
        r.start()
        table = await seat(r.url, rooms, tag="r")
        dropped = 0
        rng = random.Random(7)

        def make_pause(p: Player) -> Callable[[], Awaitable[None]]:
            async def pause() -> None:
                nonlocal dropped
                if rng.random() < drops:
                    dropped += 1
                    p.abort()
                    await asyncio.sleep(rng.random() * 2)
                    await come_back(p)

            return pause

        await asyncio.wait_for(
            asyncio.gather(
                *(
                    play(p, table, moves=moves, rate=rate, pause=make_pause(p))
                    for p in table.players
                )
            ),
            moves / rate * 3 + 180,
        )
        problems = await check_stored(r.db, table)
        problems += [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        return {
            "drill": f"reconnect ({kind})",
            "rooms": rooms,
            "players": len(table.players),
            "drops": dropped,
            "latency": latency_line(table.latencies),
            "problems": problems,
        }


# -- a stalled client --------------------------------------------------------------------------


async def drill_stall(
    kind: str = "sqlite",
    rooms: int = 25,
    phase: float = 10.0,
    rate: float = 5.0,
    *,
    judge_latency: bool = True,
) -> dict[str, Any]:
    """One runner stops reading; the others' move-ack latency must not move.

    ``judge_latency=False`` (the test suite) checks everything but the latency figures:
    timing goals belong to benchmarks, not to tests.
    """
    async with rig(kind) as r:
        r.start()
        table = await seat(r.url, rooms, tag="s")
        staller = table.rooms[0][0]
        others = [p for p in table.players if p is not staller]
        neighbours = set(map(id, table.rooms[0][1:]))
        phases: dict[str, tuple[list[float], list[float]]] = {}
        for name in ("reading", "stalled"):
            if name == "stalled":
                assert staller.ws is not None
                staller.ws.transport.pause_reading()  # the kernel buffers fill, then the server's
            near: list[float] = []
            far: list[float] = []
            stop = time.monotonic() + phase

            async def run(
                p: Player, near: list[float] = near, far: list[float] = far, stop: float = stop
            ) -> None:
                while time.monotonic() < stop and not p.done:
                    started = time.monotonic()
                    played = await p.play_one(20)
                    if played is None:
                        return
                    (near if id(p) in neighbours else far).append(played[1])
                    await asyncio.sleep(max(0.0, 1 / rate - (time.monotonic() - started)))

            await asyncio.gather(*(run(p) for p in others))
            phases[name] = (near, far)
        assert staller.ws is not None
        closed_for_slowness = staller.ws.transport.is_closing()
        staller.ws.transport.resume_reading()
        problems = [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        p99 = {
            k: (percentile(sorted(v[0]), 99), percentile(sorted(v[1]), 99))
            for k, v in phases.items()
        }
        base = max(p99["reading"])
        worst = max(p99["stalled"])
        if judge_latency and worst > max(3 * base, base + 0.025):
            problems.append(f"p99 rose from {1000 * base:.1f} ms to {1000 * worst:.1f} ms")
        return {
            "drill": f"stall ({kind})",
            "rooms": rooms,
            "players reading, staller reading (its room / others)": (
                f"{latency_line(phases['reading'][0])} / {latency_line(phases['reading'][1])}"
            ),
            "staller stalled (its room / others)": (
                f"{latency_line(phases['stalled'][0])} / {latency_line(phases['stalled'][1])}"
            ),
            "staller's socket closed meanwhile": closed_for_slowness,
            "problems": problems,
        }


# -- bad input ----------------------------------------------------------------------------------

_TYPES = (
    "hello",
    "create",
    "join",
    "watch",
    "ready",
    "start",
    "move",
    "undo",
    "resign",
    "leave",
    "rematch",
    "daily",
    "board",
    "history",
    "welcome",
    "accepted",
    "progress",
)
_FIELDS = ("v", "name", "token", "seq", "move", "room", "rules", "code", "ready", "kind", "limit")


def random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(12 if depth < 2 else 8)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice([True, False])
    if pick == 2:
        return rng.choice([0, -1, 1, 2**31, 2**63 - 1, -(2**63), 65536, rng.randrange(-999, 999)])
    if pick == 3:
        return rng.random() * rng.choice([1, 1e300, -1])
    if pick == 4:
        return "".join(chr(rng.randrange(0x20, 0x2FF)) for _ in range(rng.randrange(0, 40)))
    if pick == 5:
        return rng.randbytes(rng.randrange(0, 30))
    if pick == 6:
        return rng.choice(["7S>4", "AH>F", "", "ZZ>9", "x" * 200, "\x00", "ABCDE"])
    if pick == 7:
        return rng.choice(_TYPES)
    if pick in (8, 9):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    return {
        rng.choice([*_FIELDS, "t", 1, b"k", None]): random_value(rng, depth + 1)
        for _ in range(rng.randrange(0, 5))
    }


def bad_frame(rng: random.Random) -> bytes | str:
    """One malformed, truncated, oversized, wrongly typed or out-of-order message."""
    if rng.random() < 0.01:  # oversized: the websocket layer closes with 1009
        return rng.randbytes(16 * 1024 + 1 + rng.randrange(0, 5000))
    kind = rng.randrange(10)
    if kind in (0, 1):  # random bytes
        return rng.randbytes(rng.randrange(0, 200))
    if kind == 2:  # a text frame
        return "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(0, 50)))
    if kind == 3:  # a valid message truncated, or with bytes after it
        good = msgpack.packb({"t": "move", "seq": 3, "move": "7S>4"})
        if rng.random() < 0.5:
            return good[: rng.randrange(0, len(good))]
        return good + rng.randbytes(rng.randrange(1, 10))
    if kind == 4:  # not a map
        return msgpack.packb(random_value(rng, 1), use_bin_type=True)
    if kind in (5, 6, 7):  # a known type with wrongly typed or random fields
        body = {"t": rng.choice(_TYPES)}
        for _ in range(rng.randrange(0, 5)):
            body[rng.choice(_FIELDS)] = random_value(rng)
        return msgpack.packb(body, use_bin_type=True)
    # out of order: well-formed messages that make no sense here
    return msgpack.packb(
        rng.choice(
            [
                {"t": "start"},
                {"t": "move", "seq": rng.randrange(1, 2**31), "move": "AH>F"},
                {"t": "undo", "seq": 1},
                {"t": "ready", "ready": True},
                {"t": "join", "room": "ZZZZZ"},
                {"t": "rematch"},
                {"t": "leave"},
                {"t": "resign"},
                {"t": "hello", "v": 1},
            ]
        ),
        use_bin_type=True,
    )


@dataclass
class FuzzTally:
    sent: int = 0
    answered: int = 0
    closed: int = 0
    silent: int = 0
    connections: int = 0
    close_codes: dict[int | None, int] = field(default_factory=dict)


async def fuzz_connection(
    url: str, frames: list[bytes | str], tally: FuzzTally, *, token: str | None = None
) -> None:
    """Send ``frames`` one at a time; each must get a reply, or the connection a close
    (which then also cuts off the frames not sent yet)."""
    tally.connections += 1
    tally.sent += len(frames)
    try:
        ws = await connect(url, compression=None, max_size=2**20, open_timeout=20)
    except (OSError, InvalidHandshake, TimeoutError):
        tally.silent += len(frames)
        return
    try:
        if token is not None:
            await ws.send(msgpack.packb({"t": "hello", "v": 1, "token": token}))
            await asyncio.wait_for(ws.recv(), 10)
        for i, frame in enumerate(frames):
            try:
                await ws.send(frame)
                await asyncio.wait_for(ws.recv(), 5)
                tally.answered += 1
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd else None
                tally.close_codes[code] = tally.close_codes.get(code, 0) + 1
                tally.closed += len(frames) - i
                return
            except TimeoutError:
                tally.silent += 1
    except (ConnectionClosed, TimeoutError):  # the hello itself was refused
        tally.closed += len(frames)
    finally:
        ws.transport.abort()


async def fuzz(
    url: str, messages: int, *, seed: int = 1, concurrency: int = 40, tokens: list[str] = ()
) -> FuzzTally:
    rng = random.Random(seed)
    tally = FuzzTally()
    queue: asyncio.Queue[tuple[list[bytes | str], str | None]] = asyncio.Queue()
    left = messages
    while left > 0:
        n = min(left, rng.randrange(1, 30))
        token = rng.choice(tokens) if tokens and rng.random() < 0.5 else None
        queue.put_nowait(([bad_frame(rng) for _ in range(n)], token))
        left -= n

    async def worker() -> None:
        while not queue.empty():
            frames, token = queue.get_nowait()
            await fuzz_connection(url, frames, tally, token=token)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return tally


async def drill_fuzz(
    kind: str = "sqlite", messages: int = 100_000, rooms: int = 10, rate: float = 2.0
) -> dict[str, Any]:
    """Bad input from many connections while real races run beside it."""
    # Default flood and strike limits: what a public server runs with.
    async with rig(kind, env={"YUKON_RESUME_WINDOW": "60"}) as r:
        r.start()
        assert r.server is not None
        table = await seat(r.url, rooms, tag="f")
        # A few registered fuzzers, so that bad messages also reach the paths after hello.
        fuzzers = [Player(r.url, f"fz{i}", random.Random(i)) for i in range(20)]
        for f in fuzzers:
            await f.connect()
            await f.hello()
            await f.close()
        tokens = [f.token for f in fuzzers if f.token]
        rss = [rss_kib(r.server.pid)]
        done = asyncio.Event()

        async def sample() -> None:
            while not done.is_set():
                assert r.server is not None
                if r.server.alive():
                    rss.append(rss_kib(r.server.pid))
                await asyncio.sleep(1)

        sampler = asyncio.create_task(sample())
        t0 = time.monotonic()
        fuzzing = asyncio.create_task(fuzz(r.url, messages, tokens=tokens))
        # The real races go on while the fuzzer runs, then every one of them ends.
        racing = asyncio.gather(
            *(play(p, table, moves=10**9, rate=rate, stop=fuzzing.done) for p in table.players)
        )
        tally = await fuzzing
        fuzz_s = time.monotonic() - t0
        await asyncio.wait_for(racing, 120)
        done.set()
        await sampler
        problems = await check_stored(r.db, table)
        problems += [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        if not r.server.alive():
            problems.append("the server died")
        if tally.silent:
            problems.append(f"{tally.silent} bad messages got neither an answer nor a close")
        return {
            "drill": f"fuzz ({kind})",
            "bad messages": tally.sent,
            "silent": tally.silent,
            "connections": tally.connections,
            "answered": tally.answered,
            "cut off by a close": tally.closed,
            "close codes": dict(sorted(tally.close_codes.items(), key=lambda kv: str(kv[0]))),
            "seconds": round(fuzz_s, 1),
            "real races' latency": latency_line(table.latencies),
            "server RSS MiB (start, max, end)": (
                round(rss[0] / 1024, 1),
                round(max(rss) / 1024, 1),
                round(rss[-1] / 1024, 1),
            ),
            "problems": problems,
        }


# -- slow handshakes and floods ------------------------------------------------------------------


async def slow_handshake(port: int, give_up: float = 30.0) -> float | None:
    """Trickle a websocket handshake a byte a second; seconds until the server hangs up."""
    loop = asyncio.get_running_loop()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setblocking(False)
    request = (
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    )
    started = time.monotonic()
    try:
        for byte in request:
            try:
                await loop.sock_sendall(sock, bytes([byte]))
            except OSError:
                return time.monotonic() - started
            with contextlib.suppress(TimeoutError):
                data = await asyncio.wait_for(loop.sock_recv(sock, 4096), 1.0)
                if data == b"" or b"HTTP" in data:
                    return time.monotonic() - started
            if time.monotonic() - started > give_up:
                return None
        return None
    except OSError:
        return time.monotonic() - started
    finally:
        sock.close()


async def flood(url: str, frames: int = 1000) -> tuple[int | None, int]:
    """Send frames as fast as possible after a hello; the close code, frames sent."""
    async with connect(url, compression=None) as ws:
        await ws.send(
            msgpack.packb({"t": "hello", "v": 1, "name": f"flood{random.randrange(10**9)}"})
        )
        sent = 0
        try:
            for _ in range(frames):
                await ws.send(msgpack.packb({"t": "leave"}))
                sent += 1
            async with asyncio.timeout(10):
                while True:
                    await ws.recv()
        except ConnectionClosed as exc:
            return (exc.rcvd.code if exc.rcvd else None), sent
        except TimeoutError:
            return None, sent


async def drill_slowloris(kind: str = "sqlite", lorises: int = 20) -> dict[str, Any]:
    async with rig(kind, env={}) as r:
        r.start()
        assert r.server is not None
        port = r.server.port
        cut = await asyncio.gather(*(slow_handshake(port) for _ in range(lorises)))
        code, sent = await flood(r.url)
        # The server still serves a normal player afterwards.
        p = Player(r.url, "afterwards", random.Random(1))
        await p.connect()
        await p.hello()
        await p.close()
        problems = [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        if any(c is None or c > 15 for c in cut):
            problems.append(f"slow handshakes not cut off within 15 s: {cut}")
        if code != 1008:
            problems.append(f"a flood was closed with {code}, not 1008")
        return {
            "drill": "slowloris and flood",
            "slow handshakes cut off after s (min, max)": (
                round(min(c or 0 for c in cut), 1),
                round(max(c or 99 for c in cut), 1),
            ),
            "flood closed with": code,
            "frames sent before the close": sent,
            "problems": problems,
        }


# -- abuse (issue 16): pings, queries, one address, password guessing -------------------------


async def racing_beside(url: str, rooms: int, tag: str) -> tuple[Table, asyncio.Event, Any]:
    """Real races played at 4 actions a second until the returned event is set; the
    gathered task ends once every player has its result."""
    table = await seat(url, rooms, tag=tag)
    stop = asyncio.Event()
    racing = asyncio.gather(
        *(play(p, table, moves=10**9, rate=4.0, stop=stop.is_set) for p in table.players)
    )
    return table, stop, racing


async def sample_rss(pid: int, rss: list[int], done: asyncio.Event) -> None:
    while not done.is_set():
        with contextlib.suppress(OSError):
            rss.append(rss_kib(pid))
        await asyncio.sleep(0.25)


def mib(rss: list[int]) -> tuple[float, float, float]:
    return round(rss[0] / 1024, 1), round(max(rss) / 1024, 1), round(rss[-1] / 1024, 1)


async def raw_open(
    port: int, local: str = "127.0.0.1", headers: dict[str, str] | None = None
) -> tuple[Any, asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket opened by hand (websockets' sans-I/O client): it never reads unless
    told to, so it never answers a ping nor takes a pong."""
    from websockets.client import ClientProtocol
    from websockets.protocol import State
    from websockets.uri import parse_uri

    client = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}/"))
    request = client.connect()
    for k, v in (headers or {}).items():
        request.headers[k] = v
    client.send_request(request)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0))
    writer.write(b"".join(client.data_to_send()))
    async with asyncio.timeout(10):
        while client.state is not State.OPEN:
            data = await reader.read(1)
            if not data:
                raise ConnectionResetError("closed during the handshake")
            client.receive_data(data)
    client.events_received()
    return client, reader, writer


async def close_code_of(client: Any, reader: asyncio.StreamReader, seconds: float) -> int | str:
    """Read what the server sent until its close frame: the close code, or why none came."""
    from websockets.frames import Close as CloseFrame
    from websockets.frames import Frame, Opcode

    try:
        async with asyncio.timeout(seconds):
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    return "eof"
                client.receive_data(data)
                for e in client.events_received():
                    if isinstance(e, Frame) and e.opcode is Opcode.CLOSE:
                        return CloseFrame.parse(e.data).code
    except TimeoutError:
        return "still open"
    except OSError:
        return "reset"


async def ping_flooder(port: int, pings: int, chunk: int = 1000) -> tuple[int, int | str]:
    """Send ``pings`` pings of 125 bytes and read nothing; pings sent, then the close."""
    from websockets.frames import Frame, Opcode

    client, reader, writer = await raw_open(port)
    # A registered player first: the hello deadline must not be what closes it.
    name = f"pf{random.randrange(10**9)}"
    hello = msgpack.packb({"t": "hello", "v": 1, "name": name})
    writer.write(Frame(Opcode.BINARY, hello).serialize(mask=True, extensions=[]))
    async with asyncio.timeout(30):
        while not any(isinstance(e, Frame) for e in client.events_received()):
            client.receive_data(await reader.read(1))
    ping = Frame(Opcode.PING, b"p" * 125).serialize(mask=True, extensions=[])
    sent = 0
    try:
        while sent < pings:
            writer.write(ping * chunk)
            sent += chunk
            await asyncio.wait_for(writer.drain(), 10)
    except (OSError, TimeoutError):
        pass
    code = await close_code_of(client, reader, 20)
    writer.close()
    return sent, code


async def drill_pingflood(
    kind: str = "sqlite", flooders: int = 8, pings: int = 200_000, rooms: int = 2
) -> dict[str, Any]:
    """Clients that send websocket pings and never read, beside real races."""
    async with rig(kind) as r:  # the drills' raised flood limit (200/s): pings must still cost
        r.start()
        assert r.server is not None
        table, stop, racing = await racing_beside(r.url, rooms, "pf")
        await asyncio.sleep(2.0)
        quiet = list(table.latencies)
        rss = [rss_kib(r.server.pid)]
        done = asyncio.Event()
        sampler = asyncio.create_task(sample_rss(r.server.pid, rss, done))
        mark = len(table.latencies)
        t0 = time.monotonic()
        outcomes = await asyncio.gather(
            *(ping_flooder(r.server.port, pings) for _ in range(flooders))
        )
        took = time.monotonic() - t0
        await asyncio.sleep(1.0)
        during = table.latencies[mark:]
        done.set()
        await sampler
        stop.set()
        await asyncio.wait_for(racing, 120)
        problems = [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        codes = sorted({str(c) for _, c in outcomes})
        if any(c not in (1008, 4002) for _, c in outcomes):
            problems.append(f"flooders not closed with 1008 or 4002: {codes}")
        if max(rss) - rss[0] > 100 * 1024:
            problems.append(f"memory grew by {(max(rss) - rss[0]) // 1024} MiB")
        return {
            "drill": f"ping flood ({kind})",
            "flooders x pings (125 B), not reading": f"{flooders} x {pings}",
            "pings the flooders wrote": sum(n for n, _ in outcomes),
            "flooders closed with": codes,
            "seconds": round(took, 1),
            "racers before": latency_line(quiet),
            "racers during": latency_line(during),
            "server RSS MiB (start, max, end)": mib(rss),
            "problems": problems,
        }


async def drill_queryflood(
    kind: str = "sqlite",
    flooders: int = 100,
    rate: float = 18.0,
    seconds: float = 10.0,
    rooms: int = 2,
) -> dict[str, Any]:
    """Connections that ask for boards and histories as fast as the flood limit allows,
    beside real races, new players saying hello, and a race that ends meanwhile."""
    async with rig(kind, env={"YUKON_RESUME_WINDOW": "60"}) as r:  # default flood limit
        r.start()
        assert r.server is not None
        table, stop, racing = await racing_beside(r.url, rooms, "qr")
        ending = [Player(r.url, f"qe{i}", random.Random(i)) for i in range(2)]
        for p in ending:
            await p.connect()
            await p.hello()
        await form_room(ending, code=room_code(rooms))
        bots = [Player(r.url, f"qf{i}", random.Random(i)) for i in range(flooders)]
        gate = asyncio.Semaphore(32)

        async def arrive(p: Player) -> None:
            async with gate:
                await p.connect()
                await p.hello()

        await asyncio.gather(*(arrive(p) for p in bots))
        rss = [rss_kib(r.server.pid)]
        done = asyncio.Event()
        sampler = asyncio.create_task(sample_rss(r.server.pid, rss, done))
        asked = {"history": 0, "board": 0}
        sent = 0

        async def flood_queries(p: Player) -> None:
            nonlocal sent
            period = 1.0 / rate
            await asyncio.sleep(random.random() * period)
            end = time.monotonic() + seconds
            n = 0
            while time.monotonic() < end:
                kind_ = "history" if n % 2 else "board"
                body: dict[str, Any] = {"t": kind_}
                if kind_ == "board":
                    body.update(kind="daily", limit=50)
                try:
                    await p.send(body)
                except Gone:
                    return
                asked[kind_] += 1
                sent += 1
                n += 1
                await asyncio.sleep(period)

        hellos: list[float | str] = []

        async def newcomers() -> None:
            for i in range(int(seconds / 0.5)):
                p = Player(r.url, f"qn{i}", random.Random(i))
                t = time.monotonic()
                try:
                    await p.connect()
                    await p.hello(30)
                    hellos.append(time.monotonic() - t)
                except (Gone, TimeoutError, OSError) as exc:
                    hellos.append(type(exc).__name__)
                await p.close()
                await asyncio.sleep(0.5)

        result_delay: list[float] = []

        async def end_a_race() -> None:
            await asyncio.sleep(seconds / 2)
            for p in ending:
                await p.send({"t": "resign"})
            t = time.monotonic()
            while not all(p.results for p in ending):
                await asyncio.sleep(0.01)
                if time.monotonic() - t > 120:
                    return
            result_delay.append(time.monotonic() - t)

        mark = len(table.latencies)
        await asyncio.gather(*(flood_queries(p) for p in bots), newcomers(), end_a_race())
        await asyncio.sleep(3.0)  # the last answers
        during = table.latencies[mark:]
        done.set()
        await sampler
        stop.set()
        await asyncio.wait_for(racing, 120)
        errors: dict[str, int] = {}
        for p in bots:
            for code in p.errors:
                errors[code] = errors.get(code, 0) + 1
        log_unavailable = sum(1 for x in r.server.lines if "query: database unavailable" in x)
        for p in bots:
            await p.close()
        slow = [h for h in hellos if isinstance(h, str) or h > 5.0]
        problems = [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        if slow:
            problems.append(f"hellos slow or lost: {slow}")
        if not result_delay or result_delay[0] > 2.0:
            problems.append(f"the race result came late: {result_delay}")
        timed = sorted(h for h in hellos if isinstance(h, float))
        return {
            "drill": f"query flood ({kind})",
            "connections x queries/s x s": f"{flooders} x {rate} x {seconds}",
            "queries sent": sent,
            "errors (code: count)": dict(sorted(errors.items())),
            "logged 'database unavailable'": log_unavailable,
            "new players' hello s (median, max)": (
                (round(timed[len(timed) // 2], 3), round(timed[-1], 3)) if timed else None
            ),
            "hellos lost": len(hellos) - len(timed),
            "race result after the last resign s": [round(x, 3) for x in result_delay],
            "racers during": latency_line(during),
            "server RSS MiB (start, max, end)": mib(rss),
            "problems": problems,
        }


async def drill_oneaddress(kind: str = "sqlite", cap: int = 200) -> dict[str, Any]:
    """One address (127.0.0.1) takes all it can: connections, names, rooms; then another
    (127.0.0.2) still gets in. The server runs with the default per-address limits."""
    env = drill_env(
        YUKON_MAX_CONNECTIONS_PER_ADDRESS="64",
        YUKON_MAX_REGISTRATIONS_PER_ADDRESS="20",
        YUKON_MAX_ROOMS_PER_ADDRESS="16",
    )
    async with rig(kind, env=env) as r:
        r.start()
        assert r.server is not None
        port = r.server.port
        held: list[Any] = []
        opened = 0
        refused_with: int | str | None = None
        for _ in range(cap):
            client, reader, writer = await raw_open(port)
            held.append(writer)
            code = await close_code_of(client, reader, 0.05)
            if code != "still open":
                refused_with = code
                break
            opened += 1
        for w in held:
            w.close()
        await asyncio.sleep(1.0)

        async def hello(name: str | None, local: str, token: str | None = None) -> dict[str, Any]:
            ws = await connect(f"ws://127.0.0.1:{port}", compression=None, local_addr=(local, 0))
            body: dict[str, Any] = {"t": "hello", "v": 1}
            body.update({"name": name} if token is None else {"token": token})
            await ws.send(msgpack.packb(body))
            answer: dict[str, Any] = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 30))
            answer["ws"] = ws
            return answer

        t0 = time.monotonic()
        names: list[Any] = []
        refused_name = None
        for i in range(cap):
            a = await hello(f"one{i}", "127.0.0.1")
            if a["t"] != "welcome":
                refused_name = a.get("code")
                await a["ws"].close()
                break
            names.append(a["ws"])
        names_s = time.monotonic() - t0
        rooms = 0
        refused_room = None
        for ws in names:
            await ws.send(msgpack.packb({"t": "create"}))
            a = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 30))
            if a["t"] != "room":
                refused_room = a.get("code")
                break
            rooms += 1
        other = await hello("elsewhere", "127.0.0.2")
        await other["ws"].send(msgpack.packb({"t": "create"}))
        other_room = msgpack.unpackb(await asyncio.wait_for(other["ws"].recv(), 30))["t"]
        for ws in [*names, other["ws"]]:
            await ws.close()
        problems = [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        if refused_with is None or refused_name is None or refused_room is None:
            problems.append("a per-address limit did not hold")
        if other["t"] != "welcome" or other_room != "room":
            problems.append(f"another address was refused: {other['t']}, {other_room}")
        return {
            "drill": f"one address ({kind})",
            "connections before a refusal": f"{opened} (then {refused_with})",
            "names registered before a refusal": f"{len(names)} in {names_s:.2f} s"
            f" (then {refused_name})",
            "rooms before a refusal": f"{rooms} (then {refused_room})",
            "127.0.0.2 afterwards": f"{other['t']}, {other_room}",
            "problems": problems,
        }


async def drill_guessing(
    kind: str = "sqlite",
    guessers: int = 200,
    addresses: int = 1,
    seconds: float = 30.0,
    right_at: int = 1000,
    patience: float = 2.0,
) -> dict[str, Any]:
    """Guess a private server's password with ``guessers`` connections at once, from
    ``addresses`` loopback addresses (127.0.1.x); the right one is guess number
    ``right_at``. A guess not answered within ``patience`` seconds is taken for wrong and
    dropped (a delayed answer is a wrong one: a right password used to be welcomed at
    once); one refused as busy is tried again later. Figures: guesses answered per
    second, and when (if) the right one got in. A player who logged in before tries
    again meanwhile."""
    password = "the right one"
    env = drill_env(YUKON_PASSWORD=password)
    async with rig(kind, env=env) as r:
        r.start()
        assert r.server is not None
        url = r.url

        async def attempt(guess: str, local: str, name: str, wait: float = 120.0) -> str:
            try:
                async with connect(url, compression=None, local_addr=(local, 0)) as ws:
                    await ws.send(
                        msgpack.packb({"t": "hello", "v": 1, "name": name, "password": guess})
                    )
                    try:
                        a = msgpack.unpackb(await asyncio.wait_for(ws.recv(), wait))
                    except TimeoutError:
                        return "no answer"
                    return str(a.get("code") or a["t"])
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError) as exc:
                return type(exc).__name__

        regular = await attempt(password, "127.0.0.1", "regular")  # trusted from now on
        guesses = [f"guess {i}" for i in range(right_at)] + [password]
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(len(guesses)):
            queue.put_nowait(i)
        judged = 0
        busy = 0
        dropped = 0
        found: float | None = None
        t0 = time.monotonic()
        deadline = t0 + seconds

        async def guesser(n: int) -> None:
            nonlocal judged, busy, dropped, found
            local = f"127.0.1.{1 + n % addresses}"
            while found is None and time.monotonic() < deadline:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                wait = min(patience, deadline - time.monotonic())
                answer = await attempt(guesses[i], local, f"g{i}", max(0.0, wait))
                if answer == "welcome":
                    found = time.monotonic() - t0
                elif answer == "password":
                    judged += 1
                elif answer == "no answer":
                    dropped += 1
                else:  # password_busy (or the server's own limits): try it again later
                    busy += 1
                    queue.put_nowait(i)
                    await asyncio.sleep(0.05)

        async def regular_returns() -> tuple[str, float]:
            await asyncio.sleep(seconds / 2)
            t = time.monotonic()
            answer = await attempt(password, "127.0.0.1", "regular2")
            return answer, time.monotonic() - t

        tasks = [asyncio.create_task(guesser(n)) for n in range(guessers)]
        back = await regular_returns()
        await asyncio.gather(*tasks)
        took = min(seconds, time.monotonic() - t0) if found is None else found
        problems = [f"traceback in the log: {x.strip()}" for x in r.tracebacks()]
        if found is not None:
            problems.append(f"the password was guessed in {found:.1f} s")
        if back[0] != "welcome":
            problems.append(f"a known player was refused during the attack: {back[0]}")
        return {
            "drill": f"password guessing ({kind})",
            "guessers, source addresses": f"{guessers}, {addresses}",
            "wrong guesses answered": judged,
            f"no answer in {patience} s (taken as wrong)": dropped,
            "guesses disposed of per second": round((judged + dropped) / max(took, 0.001), 1),
            "refused as busy (retried)": busy,
            "right password found after s": round(found, 2) if found is not None else None,
            "a known player's hello (before, during, s)": (regular, back[0], round(back[1], 2)),
            "problems": problems,
        }


# -- command line ---------------------------------------------------------------------------------


def report(figures: dict[str, Any]) -> int:
    problems = figures.pop("problems")
    for key, value in figures.items():
        print(f"  {key:40} {value}")
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(f"  {'load average after':40} {load}")
    if problems:
        print("FAIL: " + "; ".join(problems[:10]))
        return 1
    print("PASS")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.faults", description=__doc__)
    parser.add_argument(
        "drill",
        choices=[
            "kill9",
            "dbstop",
            "reconnect",
            "stall",
            "fuzz",
            "slowloris",
            "pingflood",
            "queryflood",
            "oneaddress",
            "guessing",
        ],
    )
    parser.add_argument("--db", default="sqlite", help="sqlite (default) or postgresql")
    parser.add_argument("--rooms", type=int)
    parser.add_argument("--moves", type=int, default=40, help="moves per player (kill9)")
    parser.add_argument("--outage", type=float, default=30.0, help="seconds (dbstop)")
    parser.add_argument("--messages", type=int, default=100_000, help="bad messages (fuzz)")
    parser.add_argument("--pings", type=int, default=200_000, help="pings per flooder")
    parser.add_argument("--flooders", type=int, help="connections (pingflood 8, queryflood 100)")
    parser.add_argument("--addresses", type=int, default=1, help="source addresses (guessing)")
    parser.add_argument("--seconds", type=float, default=30.0, help="guessing time (guessing)")
    args = parser.parse_args(argv)
    print(f"Yukon fault drill: {args.drill}; cpu {cpu_model()}, {os.cpu_count()} CPUs")
    print(f"  {'load average before':40} " + "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    rooms = {} if args.rooms is None else {"rooms": args.rooms}
    drills: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
        "kill9": lambda: drill_kill9(args.db, moves=args.moves, **rooms),
        "dbstop": lambda: drill_dbstop(outage=args.outage, **rooms),
        "reconnect": lambda: drill_reconnect(args.db, **rooms),
        "stall": lambda: drill_stall(args.db, **rooms),
        "fuzz": lambda: drill_fuzz(args.db, messages=args.messages, **rooms),
        "slowloris": lambda: drill_slowloris(args.db),
        "pingflood": lambda: drill_pingflood(
            args.db, pings=args.pings, **({"flooders": args.flooders} if args.flooders else {})
        ),
        "queryflood": lambda: drill_queryflood(
            args.db, **({"flooders": args.flooders} if args.flooders else {})
        ),
        "oneaddress": lambda: drill_oneaddress(args.db),
        "guessing": lambda: drill_guessing(args.db, addresses=args.addresses, seconds=args.seconds),
    }
    return report(asyncio.run(drills[args.drill]()))


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["DEFAULT_PG"]
