"""Alembic environment, async.

Two ways in: ``server.storage.migrate`` hands over an open connection in
``config.attributes["connection"]`` (the server migrates on start inside its own event
loop); the ``alembic`` command line has none, so this file opens an async engine itself
from ``sqlalchemy.url`` (or ``YUKON_DB``).
"""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from server.storage.schema import metadata
from server.storage.sql import DEFAULT_URL, normalize_url

config = context.config
target_metadata = metadata


def _url() -> str:
    return normalize_url(
        os.environ.get("YUKON_DB") or config.get_main_option("sqlalchemy.url") or DEFAULT_URL
    )


def _run(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # SQLite alters a table by copying it and dropping the old one, and with foreign
        # keys on, dropping a table deletes its rows first, cascading into the tables that
        # refer to it (results -> moves). Off while migrating (this takes effect because
        # nothing has written yet on this connection), and checked afterwards. Turning
        # them on again only works outside a transaction, so whoever handed over the
        # connection does it after the commit (``SqlStore.run_sync``).
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=sqlite,  # SQLite alters by copying
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    if sqlite:
        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise RuntimeError(f"migration left rows that refer to nothing: {broken[:5]}")


async def _run_async() -> None:
    engine = create_async_engine(_url())
    async with engine.connect() as conn:
        await conn.run_sync(_run)
        await conn.commit()
    await engine.dispose()


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    given = config.attributes.get("connection")
    if given is not None:
        _run(given)
    else:
        asyncio.run(_run_async())
