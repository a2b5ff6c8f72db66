"""Each stored run's fair-play signals (issue 40 item 1; docs/fairplay.md "Signals and flags").

Runs stored before this revision have none (nothing is back-filled: their times were
not kept with resends marked).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_signals",
        sa.Column("result_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("rules", sa.String(length=16), nullable=False),
        sa.Column("pace", sa.Float(), nullable=False),
        sa.Column("flagged", sa.Integer(), nullable=False),
        sa.Column("figures", sa.Text(), nullable=False),
        sa.Column("flags", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_run_signals_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("result_id", name=op.f("pk_run_signals")),
    )
    op.create_index("ix_run_signals_rules", "run_signals", ["rules", "result_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_run_signals_rules", table_name="run_signals")
    op.drop_table("run_signals")
