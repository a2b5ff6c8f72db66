"""The browser client's tests drive Debian's Chromium through Playwright.

Playwright cannot download its own browsers here, so it launches ``/usr/bin/chromium``
(``.ci/run`` installs it under ``CI=true``). Without it a browser test is skipped, except
under ``CI=true``, where that is a failure. One browser serves a whole module (launching
one costs a second); each player gets a context of their own, so their tokens are kept
apart as on two machines.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

ROOT = Path(__file__).resolve().parent.parent.parent


def chromium_path() -> str:
    """Debian's Chromium; skip (fail under CI) without it or without Playwright."""
    path = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None
    path = path or shutil.which("chromium") or shutil.which("chromium-browser")
    problem = None
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        problem = "Playwright is not installed (pip install -e '.[test]')"
    if path is None:
        problem = "Chromium is not installed (apt-get install chromium)"
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)
    assert path is not None
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """One headless Chromium for the module's tests."""
    path = chromium_path()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        launched = await pw.chromium.launch(
            executable_path=path, args=["--no-sandbox"], timeout=30_000
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go: ``$YUKON_ARTIFACTS``, else ``artifacts/`` (gitignored)."""
    where = Path(os.environ.get("YUKON_ARTIFACTS") or ROOT / "artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where
