"""Ghost races: a running race remembers the stored run it races.

``live_races.ghost_race`` and ``ghost_player`` name the run a ghost race plays alongside
(its race's id and its runner's name; docs/protocol.md 4.23), so that a restart fetches
the run again and the ghost comes back at its place on the race clock. Both are NULL for
every other race, and for the races running before this revision.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(sa.Column("ghost_race", sa.String(40), nullable=True))
        batch.add_column(sa.Column("ghost_player", sa.String(20), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("ghost_player")
        batch.drop_column("ghost_race")
