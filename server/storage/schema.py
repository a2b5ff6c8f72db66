"""Every table of the database in one ``metadata``: what Alembic's autogenerate and the
test that compares models with migrations read. Importing it imports each area's models."""

from __future__ import annotations

from . import dailylog, models, moderation_models, pairs_models, signals_models
from .declarative import Base

__all__ = ["metadata"]

#: Every table (the modules above registered theirs on ``Base`` when imported).
metadata = Base.metadata
_AREAS = (models, moderation_models, dailylog, pairs_models, signals_models)
