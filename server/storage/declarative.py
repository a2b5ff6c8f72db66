"""The declarative base every table model of the database derives from.

A module of its own so that the models of each area (``models.py``, fair play's
``moderation_models.py``, the daily's log in ``dailylog.py``) import it without importing
one another; ``schema.py`` imports them all for what needs every table at once (Alembic,
the test that compares models with migrations).
"""

from __future__ import annotations

from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

__all__ = ["NAMING", "Base"]

#: Constraint and index names, so that migrations and models name them alike.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
