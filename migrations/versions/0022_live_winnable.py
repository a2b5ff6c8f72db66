"""A running race's deal proven winnable or not (issue 40 item 4; docs/protocol.md 4.34):
``live_races.winnable``, so that a race rebuilt after a restart, or on the node that took
its room over, still says so, and a rated one counts for ratings (only a rated race on
a proven deal does). Races journaled before read false.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(
            sa.Column("winnable", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("winnable")
