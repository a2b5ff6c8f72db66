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

This is a measurement, not a test: it never fails on the figures and always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/web.py``: find ``server``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from server.app import ServeOptions, open_server
from server.pages.http import WebClient
from server.rooms import HubConfig

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


async def measure(loads: int, chromium: str) -> None:
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory() as tmp:
        options = ServeOptions(
            host="127.0.0.1",
            port=0,
            db=f"sqlite:///{tmp}/bench.db",
            spool=Path(tmp) / "spool.jsonl",
            hub=HubConfig(),
            solver_processes=0,
        )
        async with open_server(options) as server, async_playwright() as pw:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10, help="page loads of each kind")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser to run")
    args = parser.parse_args(argv)
    asyncio.run(measure(max(1, args.loads), args.chromium))
    return 0


if __name__ == "__main__":
    sys.exit(main())
