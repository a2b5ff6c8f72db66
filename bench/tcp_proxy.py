"""A loopback TCP proxy that a test can cut and restore: a real database outage."""

from __future__ import annotations

import asyncio
import contextlib


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target; ``cut`` drops every connection and refuses
    new ones, ``restore`` listens again on the same port."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def restore(self) -> None:
        await self.start()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        except asyncio.CancelledError:
            # The proxy is being shut down. End normally: asyncio's stream callback asks
            # this task for its exception and logs a traceback for a cancelled one.
            writer.transport.abort()
            up_writer.transport.abort()
        self._writers -= {writer, up_writer}
