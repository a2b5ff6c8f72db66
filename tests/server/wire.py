"""Test helpers: a real server on a loopback port and clients that record every frame."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from bench.bot import Recorder
from protocol.messages import (
    Create,
    Join,
    Race,
    Ready,
    Room,
    Start,
)
from server.app import ServeOptions, open_server
from server.domain.signals import DEFAULT_FAIRPLAY, FairPlay
from server.rooms import HubConfig
from server.runtime.executor import RaceServer

DATA = Path(__file__).resolve().parent.parent / "data"
#: How long a test waits for a frame that must come. Not a timing goal (those live in
#: bench/): on a loaded machine an answer that takes work (a post-mortem's search on a
#: thread, say) can take more than 5 s, and a frame that never comes fails all the same.
TIMEOUT = 15.0


def winning_line() -> tuple[str, list[str]]:
    lines = [x.strip() for x in (DATA / "winning-game.txt").read_text().splitlines() if x.strip()]
    return lines[0], lines[1:]


class Client(Recorder):
    """A test client that keeps every frame the server sent it, in order (``bench.bot``'s
    ``Recorder``, which the drills share), waiting ``TIMEOUT`` for each."""

    timeout = TIMEOUT


@contextlib.asynccontextmanager
async def running_server(
    db_url: str,
    tmp_path: Path,
    *,
    resume_window_s: float = 5.0,
    hint_budget_nodes: int = HubConfig.hint_budget_nodes,
    config: dict[str, Any] | None = None,
    fairplay: FairPlay = DEFAULT_FAIRPLAY,
    **hub_options: Any,
) -> AsyncIterator[RaceServer]:
    """The server as ``yukon serve`` wires it, on port 0, with a real database (and a
    short resume window, ``resume_window_s``, for the tests of its end; a hint budget
    too small to decide, ``hint_budget_nodes``, for the tests of the ``best`` answer)."""
    # A bigger token bucket than the default lets scripted players move as fast as they can.
    # Every test client comes from 127.0.0.1: no per-address limits here (tests of them
    # set their own).
    changes = config or {}
    hub = HubConfig(
        countdown_s=0.2,
        resume_window_s=resume_window_s,
        bucket_capacity=200,
        bucket_rate=100,
        max_connections_per_address=0,
        max_registrations_per_address=0,
        max_rooms_per_address=0,
        max_opens_per_address=0,
        max_room_misses_per_address=0,
        max_attempts_per_player=0,
        max_attempts_per_address=0,
        hint_budget_nodes=hint_budget_nodes,
    )
    # A test of a limit sets it (``config``: HubConfig fields).
    hub = dataclasses.replace(hub, **changes)
    # The solver on a thread: a worker process per test server would cost more than the
    # daily deals it chooses (tests/server/test_app.py runs the process pool for real).
    options = ServeOptions(
        host="127.0.0.1",
        port=0,
        db=db_url,
        spool=tmp_path / "spool.jsonl",
        hub=hub,
        solver_processes=0,
        enforce_every_s=0.2,  # marks read often: a test of them waits little
        fairplay=fairplay,  # the fair-play thresholds and automatic hide (``--flag-*``)
    )
    async with open_server(options, hub_options=hub_options) as srv:
        yield srv


def url(server: RaceServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def open_client(server: RaceServer, name: str | None = None) -> Client:
    client = Client(await connect(url(server)))
    if name is not None:
        await client.hello(name)
    return client


async def room_with(host: Client, *guests: Client, **create: Any) -> Room:
    await host.send(Create(**create))
    room: Room = await host.expect(Room)
    for guest in guests:
        await guest.send(Join(room.room.lower()))
        await guest.expect(Room)
        await guest.send(Ready(True))
        await guest.expect(Room)
    return room


async def start_race(host: Client, *players: Client) -> list[Race]:
    await host.send(Start())
    return [await p.expect(Race) for p in (host, *players)]


async def kill_workers(pool: Executor) -> None:
    """Kill a process pool's workers (SIGKILL), and wait until the pool knows it is broken."""
    for pid in list(pool._processes):  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
    for _ in range(500):  # the pool notices the death on its own thread
        if pool._broken:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.01)
