"""Alembic migrations: the only source of the database's tables (see server/storage)."""
