"""Fencing tokens for a cluster: which node owns each running race, and since when.

``live_races.owner`` is the node that writes a running race's journal and result (""
for a server alone), ``live_races.epoch`` the fencing token: a node that takes the race
over bumps it in the same transaction in which it reads the journal, and every journal
group and result is written only for races whose ``(owner, epoch)`` is still the
writer's own (docs/cluster.md). Rows from before have no owner and epoch 1: a server
alone writes them as before.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(
            sa.Column("owner", sa.String(40), nullable=False, server_default=sa.text("''"))
        )
        batch.add_column(sa.Column("epoch", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("epoch")
        batch.drop_column("owner")
