"""The daily's archive (issue 29, item 4): past daily deals played as practice.

``results.archive`` marks a run of a past day's deal played from the archive (it is also
``practice``, so it never reaches the daily board nor ``deal_bests``); ``archive_bests``
keeps each player's best archive run of each day, written by the same transaction as the
result, as ``deal_bests`` is for deals: a day's archive board is one index range.
``live_races.archive`` lets a restart rebuild an archive run as one. Nothing existing is
an archive run, so every flag starts false and the table empty.

Follows 0011 (ratings).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(
            sa.Column("archive", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(
            sa.Column("archive", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    op.create_table(
        "archive_bests",
        sa.Column("daily_date", sa.Date(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("board_key", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_archive_bests_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_archive_bests_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("daily_date", "player_id", name=op.f("pk_archive_bests")),
    )
    op.create_index(
        "ix_archive_bests_board",
        "archive_bests",
        ["daily_date", "board_key", "result_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_archive_bests_board", table_name="archive_bests")
    op.drop_table("archive_bests")
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("archive")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("archive")
