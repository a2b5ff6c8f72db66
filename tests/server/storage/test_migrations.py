"""Alembic migrations on both backends: up from empty, down to base, up again, and the
models (what the code queries) match what the migrations create."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from server.storage import migrate
from server.storage.models import Base
from server.storage.sql import SqlStore

TABLES = {
    "players",
    "races",
    "results",
    "moves",
    "daily_attempts",
    "daily_deals",
    "settings",
    "live_races",
    "live_actions",
}
INDEXES = {"ix_results_daily_board", "ix_results_code_board", "ix_results_player_finished"}


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    s = SqlStore(db_url)
    try:
        yield s
    finally:
        await s.close()


async def tables(store: SqlStore) -> set[str]:
    def names(conn: Connection) -> set[str]:
        return set(inspect(conn).get_table_names())

    result: set[str] = await store.run_sync(names)
    return result


async def differences(store: SqlStore) -> list[Any]:
    def compare(conn: Connection) -> list[Any]:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "compare_server_default": True,
                "render_as_batch": conn.dialect.name == "sqlite",
            },
        )
        return list(compare_metadata(context, Base.metadata))

    result: list[Any] = await store.run_sync(compare)
    return result


def test_there_is_one_head() -> None:
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(migrate.alembic_config()).get_heads()
    assert heads == [migrate.head()]


async def test_upgrade_from_empty_reaches_head(store: SqlStore) -> None:
    assert await migrate.current(store) is None
    assert await tables(store) == set()

    assert await migrate.upgrade(store) == migrate.head()
    assert await tables(store) == TABLES | {"alembic_version"}

    def indexes(conn: Connection) -> set[str]:
        return {ix["name"] for ix in inspect(conn).get_indexes("results") if ix["name"]}

    assert await store.run_sync(indexes) >= INDEXES
    # Upgrading again is a no-op.
    assert await migrate.upgrade(store) == migrate.head()


async def test_downgrade_to_base_and_up_again(store: SqlStore) -> None:
    await migrate.upgrade(store)
    assert await migrate.downgrade(store, "base") is None
    assert await tables(store) - {"alembic_version"} == set()

    assert await migrate.upgrade(store) == migrate.head()
    assert await tables(store) == TABLES | {"alembic_version"}
    # And the store works on the re-created tables.
    alice = await store.register_player(name="alice", now=0.0)
    assert await store.find_player(token=alice.token) == alice


async def test_the_models_match_the_migrations(store: SqlStore) -> None:
    await migrate.upgrade(store)
    assert await differences(store) == []


async def test_the_comparison_does_see_differences(store: SqlStore) -> None:
    """Guard against a comparison that finds nothing because it looks at nothing."""
    await migrate.upgrade(store)
    await migrate.downgrade(store, "base")
    found = await differences(store)
    added = {diff[1].name for diff in found if diff[0] == "add_table"}
    assert added == TABLES
