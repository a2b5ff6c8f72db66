"""Initial schema: players, races, results, moves, daily attempts, settings.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=20), nullable=False),
        sa.Column("name_key", sa.String(length=80), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("name_key", name=op.f("uq_players_name_key")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_players_token_hash")),
    )
    op.create_table(
        "races",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uid", sa.String(length=40), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("rules", sa.String(length=8), nullable=False),
        sa.Column("room", sa.String(length=16), nullable=True),
        sa.Column("daily_date", sa.Date(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_races")),
        sa.UniqueConstraint("uid", name=op.f("uq_races_uid")),
    )
    op.create_table(
        "settings",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_settings")),
    )
    op.create_table(
        "daily_attempts",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("daily_date", sa.Date(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_daily_attempts_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "player_id", "daily_date", "attempt", name=op.f("pk_daily_attempts")
        ),
    )
    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("daily_date", sa.Date(), nullable=True),
        sa.Column("practice", sa.Boolean(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("time_ms", sa.BigInteger(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("foundations", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("undos", sa.Integer(), nullable=False),
        sa.Column("board_key", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_results_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name=op.f("fk_results_race_id_races"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_results")),
        sa.UniqueConstraint("race_id", "player_id", name=op.f("uq_results_race_id")),
    )
    # Each leaderboard is a range of one of these (see server/storage/models.py).
    op.create_index("ix_results_code_board", "results", ["code", "player_id", "board_key"])
    op.create_index(
        "ix_results_daily_board", "results", ["daily_date", "practice", "board_key", "id"]
    )
    op.create_index("ix_results_player_history", "results", ["player_id", "id"])

    op.create_table(
        "moves",
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("move", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_moves_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("result_id", "n", name=op.f("pk_moves")),
    )


def downgrade() -> None:
    op.drop_table("moves")
    op.drop_index("ix_results_player_history", table_name="results")
    op.drop_index("ix_results_daily_board", table_name="results")
    op.drop_index("ix_results_code_board", table_name="results")

    op.drop_table("results")
    op.drop_table("daily_attempts")
    op.drop_table("settings")
    op.drop_table("races")
    op.drop_table("players")
