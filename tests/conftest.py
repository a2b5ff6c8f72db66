"""Databases for the tests: every storage test runs on SQLite and on PostgreSQL.

The PostgreSQL tests use the server on 127.0.0.1:5432 (user postgres, or ``YUKON_TEST_PG``)
and create and drop a database of their own. When it cannot be reached they are skipped,
except under ``CI=true``, where that is a failure: CI must prove the PostgreSQL path.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
from collections.abc import AsyncIterator, Generator, Iterator

import pytest

from server.storage import migrate
from server.storage.sql import SqlStore
from tests import tiers

PG_ADMIN = os.environ.get("YUKON_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


async def _pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _admin(sql: str) -> None:
    """Run one statement on its own thread and loop: fixtures may be set up inside a test's
    running event loop, where ``asyncio.run`` is not allowed."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _pg_admin(sql)).result()


def _pg_reachable() -> str | None:
    try:
        _admin("SELECT 1")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session; dropped at the end."""
    problem = _pg_reachable()
    if problem is not None:
        message = f"PostgreSQL at {PG_ADMIN} is unreachable: {problem}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    name = f"yukon_test_{secrets.token_hex(4)}"
    _admin(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
async def db_url(request: pytest.FixtureRequest, tmp_path: object) -> AsyncIterator[str]:
    """An empty database of each kind. PostgreSQL tests share the session's database but
    each gets its own schema-free start: every table is dropped after the test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/yukon.db"
        return
    url = request.getfixturevalue("postgres")
    yield url
    await _reset_postgres(url)


async def _reset_postgres(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url, timeout=5)
    try:
        await conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    finally:
        await conn.close()


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    """A store on ``db_url``, migrated to the latest schema."""
    s = SqlStore(db_url)
    await migrate.upgrade(s)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def fresh_postgres(postgres: str) -> Iterator[str]:
    """A PostgreSQL database of this test's own, for tests that abuse their connection."""
    name = f"yukon_test_{secrets.token_hex(4)}"
    _admin(f'CREATE DATABASE "{name}"')
    try:
        yield f"{postgres.rsplit('/', 1)[0]}/{name}"
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# The two tiers (tests/tiers.py): every test that starts something real is marked slow at
# collection, and under -m "not slow" the guard fails a test that does so anyway.


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        reason = tiers.why_slow(item)
        if reason is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow(reason=reason))
        if reason is not None and tiers.starts_processes(item):
            item.add_marker(pytest.mark.xdist_group("processes"))


def _fast_tier_only(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", default="") or ""
    return "not slow" in " ".join(markexpr.split())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    if item.get_closest_marker("slow") is not None or not _fast_tier_only(item.config):
        return (yield)
    guard = tiers.Guard()
    guard.install()
    try:
        return (yield)
    finally:
        guard.remove()
