"""Refunds applied (issue 40, item 5; docs/fairplay.md "Refunds"):
``rating_refunds.undone_after_rating_id``, the last ``ratings`` row when a refund was taken
back, so that ``yukon db recompute-ratings`` takes the points off at the same place in the
order of rated races as it gives them (``after_rating_id``, 0014). No row was written
before this revision (nothing applied refunds), so there is nothing to fill in.

Follows 0019 (one address: players.registered_from), after 0018 (BOT accounts).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rating_refunds") as batch:
        batch.add_column(sa.Column("undone_after_rating_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rating_refunds") as batch:
        batch.drop_column("undone_after_rating_id")
