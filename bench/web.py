"""How fast the browser client paints: headless Chromium loading it from a local server.

Run from the repository root, either way::

    python -m bench.web
    python bench/web.py --loads 20 --chromium /usr/bin/chromium

Starts a race server on a loopback port (SQLite in a temporary directory), then opens the
client ``--loads`` times in a fresh browser context each (an empty cache, the first visit
of a new player: the name box) and as often again reloading one context (the files come
from the browser's cache: ``immutable``), and reports from the browser's own performance
timing the median and worst first paint, first contentful paint, DOMContentLoaded and the
moment the client's first screen is drawn (the name box, found by polling every frame).
The whole client's size is printed too (what ``tests/web/test_serving.py`` holds under
150 KB). The goal is a first paint under 200 ms with the server local.

Then the same page over a phone's link (issue 42, item 1): Chromium's own network
emulation (CDP ``Network.emulateNetworkConditions``: 150 ms round trip, 1.6 Mbit/s down,
750 kbit/s up), over plain HTTP and over TLS (a self-signed certificate made at run time
with ``openssl``). For the lobby (``/``) and an invite link (``/r/CODE`` of an open room):
the first visit (a new browser context: an empty cache, no name yet; the name is then
chosen) and the repeat visit (a new tab of that context: the files cached, the name
known, so the lobby or the room is drawn). Each is measured ``--rounds`` times (3 by
default) and the median printed, with the load average, the requests made, the
connections they used (Chromium's ``connectionId``) and the bytes on the wire. Chromium
applies the emulated latency to each request (not to each TCP or TLS handshake's round
trips), so what it shows is the bandwidth and the requests' round trips; ``--rtt``,
``--down`` and ``--up`` change the link, ``--no-throttle`` and ``--no-local`` leave a
part out.

This is a measurement, not a test: it never fails on the figures and always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import os
import platform
import ssl
import statistics
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/web.py``: find ``server``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol.messages import (
    PROTOCOL_VERSION,
    Create,
    Hello,
    Room,
    Welcome,
    decode_server,
    encode,
)
from server.app import ServeOptions, open_server
from server.pages.http import WebClient
from server.rooms import HubConfig
from server.runtime.executor import RaceServer

#: What the page's own timing says, in ms since navigation began; "drawn" is when the
#: client's first screen (the name box) is in the page.
TIMING = """async () => {
  const t0 = performance.now();
  while (!document.querySelector('#ask-name')) {
    await new Promise((r) => requestAnimationFrame(r));
    if (performance.now() - t0 > 10000) break;
  }
  const paint = Object.fromEntries(performance.getEntriesByType('paint')
    .map((e) => [e.name, e.startTime]));
  const nav = performance.getEntriesByType('navigation')[0];
  return {fp: paint['first-paint'], fcp: paint['first-contentful-paint'],
          dcl: nav.domContentLoadedEventEnd, drawn: performance.now()};
}"""


def report(label: str, runs: list[dict[str, float]]) -> None:
    print(f"{label} ({len(runs)} loads), ms since navigation: median / worst")
    for key, name in (
        ("fp", "first paint"),
        ("fcp", "first contentful paint"),
        ("dcl", "DOMContentLoaded"),
        ("drawn", "first screen drawn"),
    ):
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            print(f"  {name:<24} {statistics.median(values):7.1f} / {max(values):7.1f}")


@contextlib.asynccontextmanager
async def serving(tmp: str, tls: tuple[Path, Path] | None = None) -> AsyncIterator[RaceServer]:
    """A server on a loopback port, SQLite in ``tmp``; with ``tls`` (certificate, key),
    HTTPS and wss://."""
    cert, key = tls if tls is not None else (None, None)
    options = ServeOptions(
        host="127.0.0.1",
        port=0,
        db=f"sqlite:///{tmp}/bench{'-tls' if tls else ''}.db",
        spool=Path(tmp) / f"spool{'-tls' if tls else ''}.jsonl",
        hub=HubConfig(max_connections_per_address=0, max_registrations_per_address=0),
        solver_processes=0,
        certfile=cert,
        keyfile=key,
    )
    async with open_server(options) as server:
        yield server


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, as an operator's test would make one."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec"),
            *("-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def spki_hash(cert: Path) -> str:
    """The base64 SHA-256 of the certificate's public key, which Chromium's
    ``--ignore-certificate-errors-spki-list`` takes: the browser then trusts the
    certificate as a real one (it caches what comes over it, which it does not for a
    certificate error it was told to ignore)."""
    der = subprocess.run(
        ["openssl", "x509", "-in", str(cert), "-pubkey", "-noout"],
        check=True,
        capture_output=True,
        timeout=30,
    ).stdout
    spki = subprocess.run(
        ["openssl", "pkey", "-pubin", "-outform", "der"],
        input=der,
        check=True,
        capture_output=True,
        timeout=30,
    ).stdout
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


async def measure(loads: int, chromium: str) -> None:
    """Today's figures: the page from a local server, no throttling."""
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory() as tmp:
        async with serving(tmp) as server, async_playwright() as pw:
            url = f"http://127.0.0.1:{server.port}/"
            browser = await pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            cold: list[dict[str, Any]] = []
            for _ in range(loads):
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(url)
                cold.append(await page.evaluate(TIMING))
                await context.close()
            warm: list[dict[str, Any]] = []
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(url)
            for _ in range(loads):
                await page.reload()
                warm.append(await page.evaluate(TIMING))
            await browser.close()
    web = WebClient.load()
    print(f"client: {web.size()} bytes in {len(web.files) + 1} files (page included)")
    print(f"machine: {platform.machine()}, load average {os.getloadavg()[0]:.2f}")
    report("first visit, empty cache", cold)
    report("reload, files cached", warm)


# -- over a phone's link (issue 42, item 1) ---------------------------------------------------

#: The first screen the client draws, whichever it is: the name box (a new player), the
#: lobby's controls (a known one at /), the room (a known one at an invite link). Timed as
#: TIMING times the name box.
DRAWN = """async () => {
  const t0 = performance.now();
  const sel = '#ask-name, #new-room, section.screen.room';
  while (!document.querySelector(sel)) {
    await new Promise((r) => requestAnimationFrame(r));
    if (performance.now() - t0 > 30000) break;
  }
  const paint = Object.fromEntries(performance.getEntriesByType('paint')
    .map((e) => [e.name, e.startTime]));
  const nav = performance.getEntriesByType('navigation')[0];
  const el = document.querySelector(sel);
  return {fp: paint['first-paint'], fcp: paint['first-contentful-paint'],
          dcl: nav.domContentLoadedEventEnd, drawn: performance.now(),
          screen: el ? (el.id || el.className) : null};
}"""


@dataclass(frozen=True)
class Link:
    """An emulated network link (CDP ``Network.emulateNetworkConditions``)."""

    rtt_ms: float
    down_kbit: float
    up_kbit: float

    def conditions(self) -> dict[str, Any]:
        return {
            "offline": False,
            "latency": self.rtt_ms,
            "downloadThroughput": self.down_kbit * 1000 / 8,
            "uploadThroughput": self.up_kbit * 1000 / 8,
        }


class Wire:
    """What one page load puts on the wire, from Chromium's network events: requests
    (served from the network, not the memory or disk cache), connections and bytes."""

    def __init__(self) -> None:
        self.requests = 0
        self.connections: set[Any] = set()
        self.bytes = 0

    def on_response(self, event: dict[str, Any]) -> None:
        response = event.get("response", {})
        if response.get("fromDiskCache") or response.get("fromMemoryCache"):
            return
        if str(response.get("url", "")).startswith(("ws:", "wss:", "data:")):
            return
        self.requests += 1
        self.connections.add(response.get("connectionId"))

    def on_finished(self, event: dict[str, Any]) -> None:
        self.bytes += int(event.get("encodedDataLength", 0))


class SlowLink:
    """A TCP proxy that is the link itself (``--real-link``): every byte waits half the
    round trip each way and the bandwidth's time in order, and a connection's first bytes a
    whole round trip more (its TCP handshake). Unlike Chromium's emulation, which delays
    each request, this delays each packet's worth: TCP and TLS handshakes, a new
    connection's, cost their real round trips."""

    def __init__(self, target: int, link: Link) -> None:
        self.target = target
        self.link = link
        self.port = 0
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in self.tasks:
            task.cancel()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
            link = self.link
            await asyncio.gather(
                self.pipe(reader, up_writer, link.up_kbit, link.rtt_ms / 1000),
                self.pipe(up_reader, writer, link.down_kbit, 0.0),
            )
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            self.tasks.discard(task)
            writer.close()

    async def pipe(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, kbit: float, extra: float
    ) -> None:
        loop = asyncio.get_running_loop()
        owd = self.link.rtt_ms / 2000
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        free = loop.time() + extra  # the handshake's round trip, before the first byte

        async def deliver() -> None:
            while True:
                when, data = await queue.get()
                await asyncio.sleep(max(0.0, when - loop.time()))
                if not data:
                    break
                dst.write(data)
                await dst.drain()
            with contextlib.suppress(OSError):
                dst.write_eof() if dst.can_write_eof() else dst.close()

        sender = asyncio.create_task(deliver())
        try:
            while data := await src.read(16384):
                free = max(free, loop.time()) + len(data) * 8 / (kbit * 1000)
                queue.put_nowait((free + owd, data))
            queue.put_nowait((max(free, loop.time()) + owd, b""))
            await sender
        finally:
            sender.cancel()


async def throttled_load(
    context: Any, url: str, link: Link, *, emulate: bool = True
) -> dict[str, Any]:
    """Open ``url`` in a new tab of ``context`` over ``link`` (Chromium's emulation, unless
    the link is a ``SlowLink``); the page's timing and its wire figures. The tab is left
    open (the caller closes it)."""
    page = await context.new_page()
    cdp = await context.new_cdp_session(page)
    wire = Wire()
    cdp.on("Network.responseReceived", wire.on_response)
    cdp.on("Network.loadingFinished", wire.on_finished)
    await cdp.send("Network.enable")
    if emulate:
        await cdp.send("Network.emulateNetworkConditions", link.conditions())
    await page.goto(url, wait_until="commit", timeout=60_000)
    timing: dict[str, Any] = await page.evaluate(DRAWN)
    timing.update(requests=wire.requests, connections=len(wire.connections), kb=wire.bytes / 1000)
    timing["page"] = page
    return timing


async def open_room(server: RaceServer, tls: bool) -> tuple[Any, str]:
    """A websocket client that holds a room open, and the room's code."""
    from websockets.asyncio.client import connect

    context = None
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    ws = await connect(f"{'wss' if tls else 'ws'}://127.0.0.1:{server.port}/", ssl=context)
    await ws.send(encode(Hello(PROTOCOL_VERSION, f"host{os.getpid()}")))
    while not isinstance(decode_server(await asyncio.wait_for(ws.recv(), 30)), Welcome):
        pass
    await ws.send(encode(Create()))
    while True:
        message = decode_server(await asyncio.wait_for(ws.recv(), 30))
        if isinstance(message, Room):
            return ws, message.room


async def throttled(chromium: str, rounds: int, link: Link, *, real: bool = False) -> None:
    """The lobby and an invite link, first and repeat visit, over ``link``: plain HTTP and
    TLS, ``rounds`` times each; the medians. ``real``: through a ``SlowLink`` proxy instead
    of Chromium's emulation."""
    from playwright.async_api import async_playwright

    figures: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    loads: list[float] = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        async with async_playwright() as pw:
            for tls in (False, True):
                cert = make_certificate(Path(tmp)) if tls else None
                args = ["--no-sandbox"]
                if cert is not None:
                    args.append(f"--ignore-certificate-errors-spki-list={spki_hash(cert[0])}")
                browser = await pw.chromium.launch(executable_path=chromium, args=args)
                async with serving(tmp, cert) as server:
                    ws, room = await open_room(server, tls)
                    port = server.port
                    proxy = None
                    if real:
                        proxy = SlowLink(server.port, link)
                        await proxy.start()
                        port = proxy.port
                    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
                    scheme = "https" if tls else "http"
                    for n in range(rounds):
                        for target, path in (("lobby", "/"), ("invite", f"/r/{room}")):
                            context = await browser.new_context()
                            first = await throttled_load(
                                context, base + path, link, emulate=not real
                            )
                            page = first.pop("page")
                            # Choose a name, as a new player does: the repeat visit knows it.
                            await page.fill(
                                "#ask-name", f"b{n}{target[0]}{scheme[-1]}{os.getpid()}"
                            )
                            await page.press("#ask-name", "Enter")
                            await page.wait_for_function(
                                "() => localStorage.getItem('yukon.token')", timeout=60_000
                            )
                            await page.close()
                            again = await throttled_load(
                                context, base + path, link, emulate=not real
                            )
                            await again.pop("page").close()
                            await context.close()
                            figures.setdefault((scheme, target, "first"), []).append(first)
                            figures.setdefault((scheme, target, "repeat"), []).append(again)
                            loads.append(os.getloadavg()[0])
                    await ws.close()
                    if proxy is not None:
                        await proxy.close()
                await browser.close()
    how = "a proxy that delays every byte" if real else "Chromium's emulation"
    print(
        f"\nthrottled: {link.rtt_ms:g} ms RTT, {link.down_kbit:g} kbit/s down,"
        f" {link.up_kbit:g} kbit/s up ({how}); median of {rounds} rounds;"
        f" load average {statistics.median(loads):.2f} (from {min(loads):.2f} to {max(loads):.2f})"
    )
    print(
        f"  {'link':<6} {'page':<7} {'visit':<7} {'FCP ms':>7} {'drawn ms':>9}"
        f" {'requests':>9} {'conns':>6} {'KB':>7}  screen"
    )
    for (scheme, target, visit), runs in figures.items():

        def med(key: str, runs: list[dict[str, Any]] = runs) -> float:
            values = [r[key] for r in runs if r.get(key) is not None]
            return statistics.median(values) if values else float("nan")

        print(
            f"  {scheme:<6} {target:<7} {visit:<7} {med('fcp'):7.0f} {med('drawn'):9.0f}"
            f" {med('requests'):9.0f} {med('connections'):6.0f} {med('kb'):7.1f}"
            f"  {runs[-1].get('screen')}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10, help="page loads of each kind")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser to run")
    parser.add_argument("--rounds", type=int, default=3, help="throttled rounds (medians)")
    parser.add_argument("--rtt", type=float, default=150.0, help="emulated round trip, ms")
    parser.add_argument("--down", type=float, default=1600.0, help="emulated kbit/s down")
    parser.add_argument("--up", type=float, default=750.0, help="emulated kbit/s up")
    parser.add_argument("--no-local", action="store_true", help="skip the unthrottled runs")
    parser.add_argument("--no-throttle", action="store_true", help="skip the throttled runs")
    parser.add_argument(
        "--real-link",
        action="store_true",
        help="also run the throttled table through a proxy that delays every byte",
    )
    args = parser.parse_args(argv)
    if not args.no_local:
        asyncio.run(measure(max(1, args.loads), args.chromium))
    if not args.no_throttle:
        link = Link(args.rtt, args.down, args.up)
        asyncio.run(throttled(args.chromium, max(1, args.rounds), link))
        if args.real_link:
            asyncio.run(throttled(args.chromium, max(1, args.rounds), link, real=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
