"""The quick-race pool under a crowd: 2,000 players press Quick race within a minute.

Run from the repository root::

    python -m bench.pool
    python -m bench.pool --players 2000 --over 60 --db postgresql://postgres@127.0.0.1/bench

It starts the server as ``yukon serve`` wires it, in this process (SQLite in a temporary
directory unless ``--db``; under load use PostgreSQL), and ``--players`` websocket
clients, which first connect and register a name (20 at a time, untimed); then each
presses Quick race at a random moment within ``--over`` seconds (``quick``) and waits for
its ``race``, then resigns. Every player has a rating drawn from a normal
distribution (``--mean``, ``--sd``): the server's ``current_ratings`` is given those
numbers here, as the pool's input (2,000 fresh names would otherwise all be 1500).

It reports the time from ``quick`` to the first ``race`` frame (p50, p99, max; the
countdown, ``--countdown``, included), the rooms by size, the rating spread within rooms
(highest minus lowest: p50, p99, max), how many waited past the limit (``--quick-wait``,
plus the countdown and 1 s of slack: none is the goal), and how many were left waiting
alone when the arrivals stopped (a player alone waits on: there are no bots).

A measurement, not a test: it always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect

if __package__ in (None, ""):  # run as ``python bench/pool.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from server.app import ServeOptions, open_server
from server.rooms import HubConfig


class Crowd:
    """The players, their ratings, and what each saw."""

    def __init__(self, players: int, mean: float, sd: float, seed: int) -> None:
        rng = random.Random(seed)
        self.ratings = {f"p{i:05d}": max(100.0, rng.gauss(mean, sd)) for i in range(players)}
        self.by_id: dict[int, float] = {}
        #: Seconds from ``quick`` to ``race``, by name; rooms (code -> names).
        self.waits: dict[str, float] = {}
        self.rooms: dict[str, list[str]] = collections.defaultdict(list)
        self.stuck: list[str] = []
        self.errors: collections.Counter[str] = collections.Counter()

    async def current_ratings(self, player_ids: Sequence[int]) -> dict[int, tuple[float, float]]:
        """The store's seam, answered from the crowd's ratings (registered names' ids)."""
        return {pid: (self.by_id[pid], 350.0) for pid in player_ids if pid in self.by_id}


def _frame(message: dict[str, Any]) -> bytes:
    data = msgpack.packb(message)
    assert isinstance(data, bytes)
    return data


async def hello(url: str, name: str, crowd: Crowd, store: Any) -> Any:
    """A player connects and registers (before the minute: only ``quick`` is timed)."""
    ws = await connect(url, compression=None, max_size=2**20, open_timeout=60)
    await ws.send(_frame({"t": "hello", "v": 1, "name": name}))
    while True:
        m = msgpack.unpackb(await ws.recv(), raw=False)
        if m["t"] == "welcome":
            break
        if m["t"] == "error":
            raise RuntimeError(m["code"])
    found = await store.find_player(token=m["token"])
    crowd.by_id[found.player_id] = crowd.ratings[name]
    return ws


async def player(ws: Any, name: str, crowd: Crowd, deadline: float) -> None:
    """Press Quick race; wait for the race; resign."""
    try:
        asked = time.perf_counter()
        await ws.send(_frame({"t": "quick"}))
        room = ""
        loop = asyncio.get_running_loop()
        while True:
            left = deadline - loop.time()
            if left <= 0:
                crowd.stuck.append(name)
                return
            try:
                raw = await asyncio.wait_for(ws.recv(), left)
            except TimeoutError:
                crowd.stuck.append(name)
                return
            m = msgpack.unpackb(raw, raw=False)
            if m["t"] == "room" and m.get("quick"):
                room = m["room"]
            elif m["t"] == "error":
                crowd.errors[m["code"]] += 1
            elif m["t"] == "race":
                crowd.waits[name] = time.perf_counter() - asked
                crowd.rooms[room].append(name)
                await ws.send(_frame({"t": "resign"}))
                return
    except Exception as exc:  # a measurement: count it, go on
        crowd.errors[type(exc).__name__] += 1


async def run(args: argparse.Namespace) -> Crowd:
    crowd = Crowd(args.players, args.mean, args.sd, args.seed)
    hub = HubConfig(
        countdown_s=args.countdown,
        max_connections_per_address=0,
        max_registrations_per_address=0,
        max_rooms_per_address=0,
        max_opens_per_address=0,
        max_room_misses_per_address=0,
        max_attempts_per_player=0,
        max_attempts_per_address=0,
        bucket_capacity=200,
        bucket_rate=100,
        quick_max_wait_s=args.quick_wait,
        quick_fill_s=args.quick_fill,
        quick_min_players=args.quick_min,
        quick_max_players=args.quick_max,
    )
    with tempfile.TemporaryDirectory() as tmp:
        options = ServeOptions(
            host="127.0.0.1",
            port=0,
            db=args.db or f"sqlite:///{tmp}/pool.db",
            spool=Path(tmp) / "spool.jsonl",
            hub=hub,
            solver_processes=0,
        )
        async with open_server(options) as server:
            server.store.current_ratings = crowd.current_ratings  # type: ignore[method-assign]
            url = f"ws://127.0.0.1:{server.port}"
            gate = asyncio.Semaphore(20)

            async def welcomed(name: str) -> Any:
                async with gate:
                    try:
                        return await hello(url, name, crowd, server.store)
                    except Exception as exc:
                        crowd.errors[f"hello {type(exc).__name__}"] += 1
                        return None

            names = list(crowd.ratings)
            sockets = await asyncio.gather(*(welcomed(n) for n in names))
            print(f"{sum(ws is not None for ws in sockets)} players connected and welcomed")
            rng = random.Random(args.seed + 1)
            loop = asyncio.get_running_loop()
            start = loop.time()
            deadline = start + args.over + args.quick_wait + 30.0

            async def arrive(ws: Any, name: str) -> None:
                await asyncio.sleep(rng.uniform(0, args.over))
                await player(ws, name, crowd, deadline)

            await asyncio.gather(
                *(arrive(ws, n) for ws, n in zip(sockets, names, strict=True) if ws is not None)
            )
            await asyncio.sleep(1.0)  # the last resigns reach the server
            for ws in sockets:
                if ws is not None:
                    await ws.close()
    return crowd


def report(crowd: Crowd, args: argparse.Namespace, took: float) -> None:
    waits = sorted(crowd.waits.values())
    print(f"cpu: {cpu_model()}; load average before: {args.load_before}")
    print(
        f"players {args.players} over {args.over:.0f} s; rooms of {args.quick_min}-"
        f"{args.quick_max}, fill {args.quick_fill:g} s, limit {args.quick_wait:g} s,"
        f" countdown {args.countdown:g} s; ratings N({args.mean:g}, {args.sd:g});"
        f" {took:.1f} s in all"
    )
    if not waits:
        print("no race started")
        return
    print(
        f"time to a race (quick -> race, countdown included): p50 {statistics.median(waits):.2f} s,"
        f" p99 {percentile(waits, 99):.2f} s, max {waits[-1]:.2f} s ({len(waits)} players raced)"
    )
    sizes = collections.Counter(len(v) for v in crowd.rooms.values())
    print("rooms by size:", ", ".join(f"{n}: {sizes[n]}" for n in sorted(sizes)))
    spreads = sorted(
        max(crowd.ratings[n] for n in names) - min(crowd.ratings[n] for n in names)
        for names in crowd.rooms.values()
        if len(names) > 1
    )
    if spreads:
        print(
            f"rating spread within rooms: p50 {statistics.median(spreads):.0f},"
            f" p99 {percentile(spreads, 99):.0f}, max {spreads[-1]:.0f}"
        )
    limit = args.quick_wait + args.countdown + 1.0
    late = sum(1 for w in waits if w > limit)
    print(f"waited past the limit ({limit:g} s with the countdown and 1 s slack): {late}")
    print(f"left waiting alone when the arrivals stopped: {len(crowd.stuck)}")
    if crowd.errors:
        print("errors:", dict(crowd.errors))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pool", description="2,000 players press Quick race in a minute."
    )
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--over", type=float, default=60.0, help="seconds of arrivals")
    parser.add_argument("--mean", type=float, default=1500.0)
    parser.add_argument("--sd", type=float, default=350.0)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--db", help="a database URL (default: SQLite in a temporary directory)")
    parser.add_argument("--countdown", type=float, default=3.0)
    parser.add_argument("--quick-min", type=int, default=2)
    parser.add_argument("--quick-max", type=int, default=4)
    parser.add_argument("--quick-wait", type=float, default=20.0)
    parser.add_argument("--quick-fill", type=float, default=6.0)
    args = parser.parse_args(argv)
    args.load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    began = time.perf_counter()
    crowd = asyncio.run(run(args))
    report(crowd, args, time.perf_counter() - began)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
