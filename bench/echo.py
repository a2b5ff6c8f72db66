"""A bare websockets + msgpack echo server: the floor that ``bench.load`` compares with.

Run from the repository root::

    python -m bench.echo --port 8766

It serves websockets with the race server's own transport settings (the same websockets
library, 16 KiB frames, no compression, the same keepalive) and answers every binary frame
by decoding it with msgpack and sending the re-encoded map back: the least a server can do
per message with this stack. ``bench.load --echo`` plays the same traffic against it as
against the race server; the ratio of the two throughputs is the figure that carries over
from one machine to another.

It prints ``listening on ws://HOST:PORT`` on stderr once it listens (as ``yukon serve``
does) and stops on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

import msgpack

if __package__ in (None, ""):  # run as ``python bench/echo.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

MAX_FRAME = 16 * 1024


async def echo(ws: ServerConnection) -> None:
    unpackb, packb = msgpack.unpackb, msgpack.packb
    try:
        async for frame in ws:
            if isinstance(frame, str):
                continue
            try:
                body = unpackb(frame, raw=False, strict_map_key=False)
            except Exception:
                continue
            await ws.send(packb(body, use_bin_type=True))
    except ConnectionClosed:
        pass


async def main_async(host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with serve(
        echo,
        host,
        port,
        max_size=MAX_FRAME,
        compression=None,
        max_queue=16,
        ping_interval=20,
        ping_timeout=20,
        close_timeout=5,
    ) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        print(f"listening on ws://{host}:{bound}", file=sys.stderr, flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.echo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args.host, args.port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
