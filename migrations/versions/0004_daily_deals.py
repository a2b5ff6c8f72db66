"""The daily deal chosen for each date: the first candidate the solver proved winnable.

Kept so that the choice survives restarts and solver upgrades: a day's deal never changes
once chosen, and its par is shown on the daily board.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "daily_deals",
        sa.Column("daily_date", sa.Date(), nullable=False),
        sa.Column("rules", sa.String(length=8), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("candidate", sa.Integer(), nullable=False),
        sa.Column("par", sa.Integer(), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("nodes", sa.BigInteger(), nullable=False),
        sa.Column("chosen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("daily_date", "rules", name=op.f("pk_daily_deals")),
    )


def downgrade() -> None:
    op.drop_table("daily_deals")
