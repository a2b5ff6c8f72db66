"""Bring a database to the latest migration, from inside the running event loop.

Alembic's commands are synchronous; they run on the store's connection through
``run_sync``, and ``migrations/env.py`` uses the connection it is handed.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from .sql import SqlStore

__all__ = ["upgrade", "downgrade", "current", "head", "alembic_config", "MIGRATIONS"]

#: ``migrations/`` at the top of the project; installed as a package beside ``server``.
MIGRATIONS = Path(__file__).resolve().parent.parent.parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision the code knows."""
    revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert revision is not None
    return revision


#: The PostgreSQL advisory lock migrations hold: nodes of a cluster that start together
#: on one database migrate one after the other (docs/cluster.md).
MIGRATION_LOCK = 0x59554B4F  # "YUKO"


async def upgrade(store: SqlStore, revision: str = "head") -> str | None:
    """Migrate up to ``revision``; returns the revision the database is at afterwards."""
    return (await upgrade_from(store, revision))[1]


async def upgrade_from(store: SqlStore, revision: str = "head") -> tuple[str | None, str | None]:
    """Migrate up to ``revision``; returns the revisions before and after. The one before
    is read under the lock: of nodes that start together, only the one that migrated
    says so in its log (the others find the database migrated already)."""
    before: list[str | None] = []

    def run(conn: Connection) -> None:
        if conn.dialect.name == "postgresql":  # held until the transaction ends
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        before.append(MigrationContext.configure(conn).get_current_revision())
        command.upgrade(alembic_config(conn), revision)

    await store.run_sync(run)
    return before[0], await current(store)


async def downgrade(store: SqlStore, revision: str) -> str | None:
    await store.run_sync(lambda conn: command.downgrade(alembic_config(conn), revision))
    return await current(store)


async def current(store: SqlStore) -> str | None:
    """The revision the database is at, or None for an empty database."""

    def read(conn: Connection) -> str | None:
        return MigrationContext.configure(conn).get_current_revision()

    revision: str | None = await store.run_sync(read)
    return revision
