"""The benchmarks' harness: a real ``yukon serve`` as a process of its own, a fresh
database for it, and the process figures a run prints (RSS, CPU seconds, load average).

Used by ``bench.load`` and ``bench.faults`` (and their tests); nothing here plays.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import resource
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432"
START_TIMEOUT = 60.0


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
        window_profile: Path | None = None,
        extra: tuple[str, ...] = (),
    ) -> ServerProcess:
        argv = [sys.executable, "-m", "yukon", "serve", "--port", "0", "--db", db, *extra]
        wrap = os.environ.get("YUKON_BENCH_WRAP")
        if wrap:  # a script that patches the server, then runs ``yukon.cli.main``
            argv[1:3] = [wrap]
        if profile is not None:  # cProfile writes its file when the server stops (SIGINT)
            argv[1:1] = ["-m", "cProfile", "-o", str(profile)]
        if window_profile is not None:  # the measured window only (bench.profiled)
            argv[1:3] = ["-m", "bench.profiled", str(window_profile)]
        argv += ["--spool", str(spool)]
        # Every player of a bench comes from 127.0.0.1: no per-address limits, unless the
        # caller's ``env`` sets them (the drills of bench/faults.py that test them do).
        unlimited = {
            f"YUKON_MAX_{what}_PER_ADDRESS": "0"
            for what in (
                "CONNECTIONS",
                "REGISTRATIONS",
                "ROOMS",
                "OPENS",
                "ROOM_MISSES",
                "ATTEMPTS",
            )
        }
        unlimited["YUKON_MAX_ATTEMPTS_PER_PLAYER"] = "0"
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
