"""The pairs of each rated race as decided when it was committed (issue 40 item 4;
docs/ratings.md "Rating farming"): ``rating_pairs`` keeps, for every pair of runners of a
rated race, whether it counted and why (``counted``, ``draw``, ``short``, ``limit``), so
that ``yukon db recompute-ratings`` replays the decisions. The rules apply to races
stored from this revision on: older rated races have no rows, and every pair of theirs
counts by rank, as it did.

Follows 0015 (the daily's log).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rating_pairs",
        sa.Column(
            "race_id", sa.Integer(), sa.ForeignKey("races.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "a", sa.Integer(), sa.ForeignKey("players.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "b", sa.Integer(), sa.ForeignKey("players.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("reason", sa.String(8), nullable=False),
        sa.PrimaryKeyConstraint("race_id", "a", "b"),
    )
    op.create_index("ix_rating_pairs_pair", "rating_pairs", ["a", "b", "race_id"])


def downgrade() -> None:
    op.drop_index("ix_rating_pairs_pair", table_name="rating_pairs")
    op.drop_table("rating_pairs")
