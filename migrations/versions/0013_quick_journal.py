"""A quick race keeps being one across a restart (issue 29, item 1; docs/protocol.md 4.26).

``live_races.quick`` marks a running race the quick-race pool formed, so a restart (or the
node that takes the room over, docs/cluster.md) rebuilds it as a quick room: its ``room``
messages keep saying ``quick``, as they did before. ``rated`` (0011) already keeps it rated.
Nothing journaled before this revision is known to be a quick race, so the flag starts
false.

Follows 0012 (the daily's archive).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(
            sa.Column("quick", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("quick")
