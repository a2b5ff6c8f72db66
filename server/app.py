"""Running a server: storage, migrations, the daily secret, logging, signals.

``yukon serve`` calls ``run``; tests call ``open_server`` to run the same wiring in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import secrets
import signal
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from protocol import Rules
from protocol.messages import NODE_ID_CHARS

from .cluster.cluster import Cluster
from .cluster.node import Node, NodeHost
from .cluster.relay import Relay, RelayDown
from .domain.daily import DailyDeals
from .domain.leaderboard import Leaderboards
from .domain.signals import DEFAULT_FAIRPLAY, FairPlay
from .pages.http import HttpPages
from .rooms import Hub, HubConfig
from .runtime.enforcer import ENFORCE_EVERY_S, Enforcer
from .runtime.executor import RaceServer
from .runtime.limits import Network
from .runtime.solving import Lane, SolverPool
from .storage import migrate
from .storage.journal import JournalWriter
from .storage.moderation import ModerationStore
from .storage.spool import ResultWriter
from .storage.sql import DEFAULT_URL, SqlStore, describe_error

__all__ = [
    "ServeOptions",
    "StartupError",
    "listening_line",
    "open_server",
    "port_free",
    "run",
    "shown_url",
]

log = logging.getLogger("yukon.server")

DAILY_SECRET_KEY = "daily_secret"


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    db: str = DEFAULT_URL
    spool: Path = Path("yukon-spool.jsonl")
    #: None: generated on first start and kept in the database.
    daily_secret: str | None = None
    daily_rules: str = "C"
    hub: HubConfig = field(default_factory=HubConfig)
    #: Worker processes for the solver (choosing daily deals); 0 runs it on a thread of
    #: the server's own process instead (it then competes with the races for the GIL).
    solver_processes: int = 1
    #: Both set: serve wss:// with this certificate chain and private key.
    certfile: Path | None = None
    keyfile: Path | None = None
    #: Reverse proxies whose ``X-Forwarded-For`` names the client's address for the
    #: per-address limits (``server.runtime.limits``); from anyone else the header is ignored.
    trusted_proxies: tuple[Network, ...] = ()
    #: How often this process reads the operator's marks (docs/fairplay.md).
    enforce_every_s: float = ENFORCE_EVERY_S
    #: The fair-play thresholds each stored run is judged by, and the automatic hide
    #: (off by default): docs/fairplay.md, "Setting the thresholds".
    fairplay: FairPlay = DEFAULT_FAIRPLAY
    #: A node of a cluster (docs/cluster.md): its Redis (``redis://host:6379/0``), the
    #: prefix of its keys and channels there, and its id (None: made up at start).
    redis: str | None = None
    redis_prefix: str = "yukon:"
    node: str | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        if self.certfile is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certfile, self.keyfile)
        # Players of a self-signed server compare this with what their client shows.
        log.info("TLS certificate SHA-256 fingerprint %s", cert_fingerprint(self.certfile))
        return context


def cert_fingerprint(certfile: Path) -> str:
    """The SHA-256 fingerprint of a PEM file's first certificate, as OpenSSL writes it."""
    pem = certfile.read_text(encoding="ascii", errors="replace")
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    start = pem.index(begin)
    der = ssl.PEM_cert_to_DER_cert(pem[start : pem.index(end, start) + len(end)])
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


class StartupError(Exception):
    """The server cannot start; the message says why, in one line."""


def shown_redis(url: str) -> str:
    """A Redis URL fit for a log line: no password."""
    return (
        make_url(url.replace("redis://", "redis+x://", 1))
        .render_as_string(hide_password=True)
        .replace("redis+x://", "redis://", 1)
    )


def shown_url(url: str) -> str:
    """A database URL fit for a log line: no password."""
    return make_url(url).render_as_string(hide_password=True)


@contextlib.asynccontextmanager
async def open_server(
    options: ServeOptions, *, hub_options: dict[str, Any] | None = None
) -> AsyncIterator[RaceServer]:
    """Migrate, wire and start a server; on exit close clients and finish pending writes.

    ``hub_options`` reach ``Hub`` as they are (tests fix its randomness with them).
    """
    try:
        store = SqlStore(options.db)
    except Exception as exc:  # not a URL, or one of a database without its driver here
        raise StartupError(f"cannot use the database {options.db!r}: {exc}") from exc
    store.fairplay = options.fairplay
    solver = SolverPool(
        daily_processes=options.solver_processes,
        stock_processes=min(options.solver_processes, 1),  # 0 (tests): a thread
    )
    try:
        try:
            before, after = await migrate.upgrade_from(store)
        except Exception as exc:
            raise StartupError(
                f"cannot use the database {shown_url(store.url)}: {describe_error(exc)}"
            ) from exc
        if before == after:
            log.info("database %s is at migration %s", shown_url(store.url), after)
        else:
            log.info(
                "database %s migrated from %s to %s", shown_url(store.url), before or "empty", after
            )
        secret = options.daily_secret or await store.setting(
            key=DAILY_SECRET_KEY, default=secrets.token_hex(32)
        )
        relay: Relay | None = None
        server: RaceServer | None = None
        node = ""
        hub_args = dict(hub_options or {})
        if options.redis:
            host = "".join(ch for ch in socket.gethostname() if ch in NODE_ID_CHARS)[:20]
            node = options.node or f"{host or 'node'}-{secrets.token_hex(3)}"
            store.owner = node
            relay = Relay(
                options.redis,
                node,
                prefix=options.redis_prefix,
                on_message=lambda m: _cluster(server).on_message(m),
                on_gap=lambda: _cluster(server).on_gap(),
            )
            hub_args.setdefault("new_room_code", relay.take_code)
            log.info("node %s of a cluster (redis %s)", node, shown_redis(options.redis))
        hub = Hub(options.hub, node=node, **hub_args)
        writer = ResultWriter(store, options.spool)
        await writer.recover()
        wall = (hub_options or {}).get("wall_clock", time.time)
        dailies = DailyDeals(
            store,
            secret.encode(),
            Rules.parse(options.daily_rules),
            solver.executor(Lane.DAILY),
            wall=wall,
        )
        boards = Leaderboards(store, wall=wall, dailies=dailies)
        journal = JournalWriter(
            store,
            lambda: hub.live_elapsed(asyncio.get_running_loop().time()),
            on_fenced=(lambda fenced: _cluster(server).fenced(fenced)) if relay else None,
        )
        cluster: Callable[[NodeHost], Node] | None = None
        if relay is not None:
            redis = relay

            def cluster(host: NodeHost) -> Node:
                """This node of the cluster over Redis, hosted by the server built next."""
                return Cluster(host, redis, store)

        server = RaceServer(
            hub,
            store,
            writer,
            boards,
            journal,
            solver=solver,
            node=cluster,
            pages=HttpPages,
            trusted_proxies=options.trusted_proxies,
        )
        place = server.node
        dailies.lock = place.lock
        try:
            context = options.ssl_context()
        except (OSError, ssl.SSLError) as exc:
            raise StartupError(f"cannot load the TLS certificate or key: {exc}") from exc
        # Races that were running when the server last stopped (or crashed) go on. They are
        # rebuilt before the first client can say hello, so a resume always finds its race.
        # Alone, every race of the journal is rebuilt; a node of a cluster takes over only
        # those whose node is gone (``Node.start``).
        try:
            await place.start()
        except RelayDown as exc:
            raise StartupError(
                f"cannot reach redis at {shown_redis(options.redis or '')}: {exc}"
            ) from exc
        await server.start(options.host, options.port, ssl=context)
        journal.start()
        # The operator's marks, read on every node (docs/fairplay.md): the first read
        # before the first hello can be answered, then every ENFORCE_EVERY_S.
        enforcer = Enforcer(
            server,
            ModerationStore(store.engine),
            lambda: asyncio.get_running_loop().time(),
            every_s=options.enforce_every_s,
        )
        await enforcer.once()
        enforcer.start()
        ready = asyncio.create_task(dailies.keep_ready(), name="daily deals")
        try:
            yield server
        finally:
            ready.cancel()
            await asyncio.gather(ready, return_exceptions=True)
            await enforcer.stop()
            await dailies.close()
            restart = getattr(server, "closing_for_restart", False)
            log.info(
                "%s: closing %d connections",
                "restarting" if restart else "shutting down",
                hub.connections,
            )
            await place.stop()
            await journal.checkpoint()  # the clocks stop here, for a later restore
            if restart:
                await server.close(1012, "server restarting")
            else:
                await server.close()
            await journal.stop()
            await place.close()
    finally:
        solver.close()
        await store.close()


def _cluster(server: RaceServer | None) -> Cluster:
    """The cluster of the server being started: the relay and the journal report to it,
    and neither starts before the server (and so its cluster) is built."""
    assert server is not None and isinstance(server.node, Cluster)
    return server.node


def listening_line(options: ServeOptions, port: int) -> str:
    """The line that says the server is up: its websocket address, the page to open in a
    browser (what a newcomer needs: the README sends them to ``http://``, not ``ws://``),
    and whether it is private (every hello needs the password) or open to anyone."""
    tls = options.certfile is not None
    host = options.host
    wildcard = host in ("", "0.0.0.0", "::")
    shown = "127.0.0.1" if wildcard else f"[{host}]" if ":" in host else host
    page = f"{'https' if tls else 'http'}://{shown}:{port}/"
    where = " (or this machine's address, from other machines)" if wildcard else ""
    private = (
        "private: every player needs the password"
        if options.hub.password is not None
        else "public: anyone who reaches it may play (--password makes it private)"
    )
    socket_host = f"[{host}]" if ":" in host else host
    return (
        f"listening on {'wss' if tls else 'ws'}://{socket_host}:{port} - open {page} in a"
        f" browser{where}, or yukon play {page}; {private}"
    )


async def port_free(host: str, port: int) -> None:
    """Raise the OSError a listen on ``host:port`` would (the port in use, an address not
    this machine's) before anything else is done: ``yukon serve`` on a busy port must not
    first create and migrate a database (``./yukon.db``) it will never use. The real
    listen comes later, once the database is ready (a race in between fails there)."""
    if port == 0:
        return
    probe = await asyncio.get_running_loop().create_server(asyncio.Protocol, host, port)
    probe.close()
    await probe.wait_closed()


async def serve_until(options: ServeOptions, stop: asyncio.Event, restart: list[bool]) -> None:
    await port_free(options.host, options.port)
    async with open_server(options) as server:
        gc.freeze()  # what start-up built lives for good: keep it out of every collection
        log.info("%s", listening_line(options, server.port))
        await stop.wait()
        server.closing_for_restart = bool(restart)
    log.info("stopped")


def run(options: ServeOptions) -> int:
    """Blocking entry point; Ctrl-C or SIGTERM stops the server cleanly."""

    # A server holds many long-lived small objects (games, rooms, queued frames): with the
    # default thresholds the collector's full passes over them stall the event loop for
    # hundreds of milliseconds under load (bench/load.py: p99 move-ack 274 ms -> 56 ms at
    # 2,000 players). Collect young objects less often; nothing here relies on cycles
    # being freed promptly.
    gc.set_threshold(50_000, 20, 100)

    async def main() -> None:
        stop = asyncio.Event()
        restart: list[bool] = []
        loop = asyncio.get_running_loop()

        # Ctrl-C: going away (1001). SIGTERM, as a service manager or a container stops us:
        # restarting (1012), so clients reconnect and resume their races.
        def on_sigterm() -> None:
            restart.append(True)
            stop.set()

        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
        await serve_until(options, stop, restart)

    try:
        asyncio.run(main())
    except StartupError as exc:
        log.error("%s", exc)
        return 1
    except OSError as exc:
        log.error("cannot serve on %s:%d: %s", options.host, options.port, exc.strerror or exc)
        return 1
    return 0
