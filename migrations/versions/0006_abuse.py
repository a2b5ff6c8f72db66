"""Each player's best result per deal, kept by the writer, so that a deal's board is one
index range (issue 16: it took 158 ms on 1M results, the daily boards 4-6 ms).

``deal_bests`` holds one row per deal and player: their best counted (not practice)
result in board order, the first stored among equal ones, exactly what the board showed
before. It is filled here from the existing results.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deal_bests",
        sa.Column("code", sa.String(length=48), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("board_key", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_deal_bests_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_deal_bests_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("code", "player_id", name=op.f("pk_deal_bests")),
    )
    op.create_index(
        "ix_deal_bests_board", "deal_bests", ["code", "board_key", "result_id"], unique=False
    )
    op.execute(
        "INSERT INTO deal_bests (code, player_id, result_id, board_key)"
        " SELECT code, player_id, id, board_key FROM ("
        "  SELECT code, player_id, id, board_key, row_number() OVER"
        "   (PARTITION BY code, player_id ORDER BY board_key, id) AS n"
        "  FROM results WHERE NOT practice"
        " ) AS ranked WHERE n = 1"
    )


def downgrade() -> None:
    op.drop_index("ix_deal_bests_board", table_name="deal_bests")
    op.drop_table("deal_bests")
