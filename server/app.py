"""Running a server: configuration, logging, signals. ``yukon serve`` calls ``run``."""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass

from .connection import RaceServer
from .rooms import Hub, HubConfig
from .storage import MemoryStore, ResultStore

__all__ = ["ServeOptions", "run", "serve_until"]

log = logging.getLogger("yukon.server")


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    resume_window_s: float = 60.0


async def serve_until(
    options: ServeOptions, stop: asyncio.Event, store: ResultStore | None = None
) -> None:
    """Serve until ``stop`` is set, then close every connection and finish pending writes."""
    hub = Hub(HubConfig(resume_window_s=options.resume_window_s))
    server = RaceServer(hub, store or MemoryStore())
    await server.start(options.host, options.port)
    log.info("listening on ws://%s:%d", options.host, server.port)
    try:
        await stop.wait()
    finally:
        log.info("shutting down: closing %d connections", hub.connections)
        await server.close()
        log.info("stopped")


def run(options: ServeOptions) -> int:
    """Blocking entry point; Ctrl-C or SIGTERM stops the server cleanly."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve_until(options, stop)

    try:
        asyncio.run(main())
    except OSError as exc:
        log.error("cannot serve on %s:%d: %s", options.host, options.port, exc.strerror or exc)
        return 1
    return 0
