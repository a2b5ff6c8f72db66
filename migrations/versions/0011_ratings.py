"""Ratings (issue 29, item 2; docs/ratings.md).

``races.rated`` marks a rated race (a quick race, or a private room its host marked rated),
and ``live_races.rated`` keeps a running race rated across a restart. ``ratings`` holds
each runner's rating change in each rated race with everything it was computed from (the
ratings before, each pairwise game's opponent, their rating and deviation, the score), and
``player_ratings`` each player's current rating, kept by the writer in the transaction that
stores the result (``SqlStore.record_race``).

Every race stored before this revision was unrated: there is nothing to compute here, and
``yukon db recompute-ratings`` recomputes every stored rating from the stored results and
reports whether the numbers are the same.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.add_column(
            sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(
            sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rating_before", sa.Double(), nullable=False),
        sa.Column("deviation_before", sa.Double(), nullable=False),
        sa.Column("volatility_before", sa.Double(), nullable=False),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("deviation", sa.Double(), nullable=False),
        sa.Column("volatility", sa.Double(), nullable=False),
        sa.Column("games", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name="fk_ratings_race_id_races", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_ratings_player_id_players", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["result_id"], ["results.id"], name="fk_ratings_result_id_results", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_ratings"),
        sa.UniqueConstraint("result_id", name="uq_ratings_result_id"),
    )
    op.create_index("ix_ratings_player", "ratings", ["player_id", "id"])
    op.create_table(
        "player_ratings",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Double(), nullable=False),
        sa.Column("deviation", sa.Double(), nullable=False),
        sa.Column("volatility", sa.Double(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_player_ratings_player_id_players",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", name="pk_player_ratings"),
    )


def downgrade() -> None:
    op.drop_table("player_ratings")
    op.drop_index("ix_ratings_player", table_name="ratings")
    op.drop_table("ratings")
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("rated")
    with op.batch_alter_table("races") as batch:
        batch.drop_column("rated")
