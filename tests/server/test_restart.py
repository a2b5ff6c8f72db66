"""A race survives the server's restart and its crash: SIGTERM and SIGKILL on a real process.

The server journals every accepted action in groups (server/storage/journal.py) and rebuilds
running races on start; a client that resumes learns the last ``seq`` the server has and
resends the moves it was told were accepted after it (docs/protocol.md, "Restarts").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from protocol.messages import (
    Accepted,
    Create,
    Hello,
    Join,
    MoveMsg,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    Start,
    Welcome,
)
from server.storage.sql import SqlStore

from .wire import Client, winning_line

TIMEOUT = 20.0


class ServerProcess:
    """``yukon serve`` in its own process, its log read on a thread."""

    def __init__(self, db: str, spool: Path) -> None:
        # A scripted player moves faster than a person: a roomier flood limit.
        env = {
            **os.environ,
            "YUKON_RESUME_WINDOW": "30",
            "YUKON_MSG_RATE": "500",
            "YUKON_MSG_BURST": "500",
        }
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
            ],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._listening = threading.Event()
        self.url = ""
        threading.Thread(target=self._read, daemon=True).start()
        if not self._listening.wait(TIMEOUT):
            self.proc.kill()
            raise AssertionError("the server did not start:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            match = re.search(r"listening on (ws://\S+)", line)
            if match:
                self.url = match.group(1)
                self._listening.set()

    def stop(self, sig: signal.Signals) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(TIMEOUT)

    def kill(self) -> None:
        """Whatever happened in the test, no server is left behind."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)


async def until_journaled(db_url: str) -> None:
    """Wait (bounded) until ``live_races`` holds a race and at least one of its actions."""
    from sqlalchemy import func, select

    from server.storage.models import LiveActionRow

    store = SqlStore(db_url)
    try:
        for _ in range(100):
            async with store.engine.connect() as conn:
                count = (
                    await conn.execute(select(func.count()).select_from(LiveActionRow))
                ).scalar_one()
            if count:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the server journaled nothing within 5 s")
    finally:
        await store.close()


async def join(url: str, hello: Hello) -> Client:
    client = Client(await connect(url))
    await client.send(hello)
    await client.expect(Welcome)
    return client


async def closed_code(client: Client) -> int | None:
    """The close code the server sent, or None when the connection just broke (a crash)."""
    try:
        while True:
            await asyncio.wait_for(client.ws.recv(), TIMEOUT)
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else None
    finally:
        client.ws.transport.abort()


async def resume(url: str, token: str, acked: list[tuple[int, str]]) -> tuple[Client, Race]:
    """Reconnect with the token, and resend every acknowledged move the server lost."""
    client = await join(url, Hello(1, token=token))
    race: Race = await client.expect(Race)
    for seq, move in acked:
        if seq > race.seq:
            await client.send(MoveMsg(seq, move))
            reply = await client.expect(Accepted, seq=seq)
            assert reply.move == move
    return client, race


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
async def test_a_race_survives_a_restart(db_url: str, tmp_path: Path, sig: signal.Signals) -> None:
    servers: list[ServerProcess] = []
    try:
        await race_through_a_restart(db_url, tmp_path, sig, servers)
    finally:
        for server in servers:
            server.kill()


async def race_through_a_restart(
    db_url: str, tmp_path: Path, sig: signal.Signals, servers: list[ServerProcess]
) -> None:
    code, line = winning_line()
    spool = tmp_path / "spool.jsonl"
    first = ServerProcess(db_url, spool)
    servers.append(first)
    ann = await join(first.url, Hello(1, "ann"))
    bob = await join(first.url, Hello(1, "bob"))
    tokens = {"ann": ann.frames[0].token, "bob": bob.frames[0].token}
    await ann.send(Create(code=code))
    room: Room = await ann.expect(Room)
    await bob.send(Join(room.room))
    await bob.expect(Room)
    await bob.send(Ready(True))
    await ann.expect(Room, state="lobby")
    await ann.send(Start())
    await ann.expect(Race)
    await bob.expect(Race)

    half = len(line) // 2
    acked: list[tuple[int, str]] = []
    last: Any = None
    for seq, move in enumerate(line[:half], start=1):
        await ann.send(MoveMsg(seq, move))
        last = await ann.expect(Accepted, seq=seq)
        acked.append((seq, move))
    before_ms = last.elapsed_ms
    # The server journals in groups: wait until its journal has the race (a crash in the
    # very first moment would leave nothing to rebuild). The last few moves may well be
    # missing from it when the server dies: that is what the clients' resends are for.
    await until_journaled(db_url)

    stopping = asyncio.create_task(closed_code(ann))
    loop = asyncio.get_running_loop()
    status = await loop.run_in_executor(None, first.stop, sig)
    code_seen = await stopping
    if sig is signal.SIGTERM:
        assert status == 0
        assert code_seen == 1012  # restarting: come back
    else:
        assert status == -signal.SIGKILL
    bob.ws.transport.abort()  # bob never read his frames; his socket just goes

    second = ServerProcess(db_url, spool)
    servers.append(second)
    assert any("restored" in x for x in second.lines)
    ann2, race = await resume(second.url, tokens["ann"], acked)
    # The time the server was away is not charged: the clock resumes where it was.
    assert race.elapsed_ms < before_ms + 5_000
    bob2, _ = await resume(second.url, tokens["bob"], [])
    for seq, move in enumerate(line[half:], start=half + 1):
        await ann2.send(MoveMsg(seq, move))
        reply = await ann2.expect(Accepted, seq=seq)
    assert reply.state == "won" and reply.score == 625
    await bob2.send(Resign())
    result: Result = await ann2.expect(Result)
    assert [(r.name, r.outcome) for r in result.ranks] == [("ann", "won"), ("bob", "resigned")]
    await ann2.ws.close()
    bob2.ws.transport.abort()  # not reading, so it could not finish a close handshake
    assert second.stop(signal.SIGTERM) == 0

    store = SqlStore(db_url)
    try:
        stored = await store.stored_results(code=code)
    finally:
        await store.close()
    # Recorded once, with every accepted move, none lost.
    assert sorted(r.outcome for r in stored) == ["resigned", "won"]
    won = next(r for r in stored if r.outcome == "won")
    assert won.actions == tuple(line)


def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (Linux: /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found.update(int(c) for c in (task / "children").read_text().split())
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_killed_server_leaves_no_solver_process_behind(tmp_path: Path) -> None:
    """The solver's worker process (it chooses the daily deals) goes when its server is
    killed with SIGKILL, which gives the server no chance to stop it."""
    server = ServerProcess(f"sqlite:///{tmp_path}/k.db", tmp_path / "spool.jsonl")
    try:
        workers: set[int] = set()
        for _ in range(200):  # the worker starts when the daily deals are chosen, at once
            if workers := children(server.proc.pid):
                break
            time.sleep(0.05)
        assert workers, "no solver worker was started:\n" + "".join(server.lines)
        server.proc.kill()
        server.proc.wait(TIMEOUT)
        for _ in range(200):
            if not any(alive(w) for w in workers):
                break
            time.sleep(0.05)
        assert not any(alive(w) for w in workers), "a solver worker outlived its server"
    finally:
        server.kill()
