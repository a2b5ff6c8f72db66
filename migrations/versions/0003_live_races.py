"""Running races and their actions, journaled so a restart or a crash can rebuild them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "live_races",
        sa.Column("uid", sa.String(length=40), nullable=False),
        sa.Column("room", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("rules", sa.String(length=8), nullable=False),
        sa.Column("daily_date", sa.Date(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("undo", sa.Boolean(), nullable=False),
        sa.Column("time_limit", sa.Integer(), nullable=False),
        sa.Column("max_players", sa.Integer(), nullable=False),
        sa.Column("fixed", sa.Boolean(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("players", sa.Text(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("alive_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("uid", name=op.f("pk_live_races")),
    )
    op.create_table(
        "live_actions",
        sa.Column("race_uid", sa.String(length=40), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(
            ["race_uid"],
            ["live_races.uid"],
            name=op.f("fk_live_actions_race_uid_live_races"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("race_uid", "n", name=op.f("pk_live_actions")),
    )


def downgrade() -> None:
    op.drop_table("live_actions")
    op.drop_table("live_races")
