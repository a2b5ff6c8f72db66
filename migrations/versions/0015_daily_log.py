"""The daily's log (issue 40, item 6; docs/protocol.md 4.29): an append-only hash chain of
each day's commitment and of every later change to a past board.

Days chosen before this revision are not in it: the chain starts with the first day
chosen after the upgrade (its entry 0 names no earlier day), so nothing is back-dated.

Follows 0014 (fair play and moderation).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "daily_log",
        sa.Column("n", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("at", sa.String(length=20), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("prev", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("appended_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("n", name=op.f("pk_daily_log")),
        sa.UniqueConstraint("hash", name=op.f("uq_daily_log_hash")),
    )
    op.create_index(op.f("ix_daily_log_day"), "daily_log", ["day"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_daily_log_day"), table_name="daily_log")
    op.drop_table("daily_log")
