"""A player's history is ordered by when each race finished, not by storage order.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_results_player_history", table_name="results")
    op.create_index("ix_results_player_finished", "results", ["player_id", "finished_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_results_player_finished", table_name="results")
    op.create_index("ix_results_player_history", "results", ["player_id", "id"])
