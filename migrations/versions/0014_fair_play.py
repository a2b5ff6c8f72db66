"""Fair play and moderation (issue 40, item 5; docs/fairplay.md): the audit log, marks,
the review queue, account states, voided results and rating refunds.

Designed as lichess's Modlog: every operator action is one row of ``moderation_log`` (who,
when, what, to whom, why, and in ``details`` what it changed), and an undo is one more
row whose ``undoes`` names the entry it undid (unique: an entry is undone at most once).
The other tables hold the state the actions left, each row naming the entry that made it
and the one that lifted it, so that nothing is deleted to undo anything:

- ``account_marks``: engine, boost, alt or bot; at most one of each kind in force per
  account (a partial unique index on the rows not undone);
- ``review_queue``: flags of runs (their evidence as JSON), players' reports (who reported
  whom about which race), address pairs and sandbag reports; open, closed or dismissed;
- ``account_states``: closed, muted, hidden (no row: none of them);
- ``voided_results``: a result that counts for nothing, at most one void in force each;
- ``rating_refunds``: points given back to the opponents of an engine or boost mark, with
  the point in the order of rated races where they apply (``after_rating_id``), so that
  a recomputation of the ratings can apply them there.

Nothing stored before this revision is marked, queued or voided: every table starts empty.

Follows 0013 (quick races journaled as quick).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "moderation_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("operator", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("name", sa.String(length=20), nullable=True),
        sa.Column("race_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("details", sa.Text(), server_default=sa.text("'{}'"), nullable=False),
        sa.Column("undoes", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_moderation_log_player_id_players",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name="fk_moderation_log_race_id_races", ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["undoes"], ["moderation_log.id"], name="fk_moderation_log_undoes_moderation_log"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_moderation_log"),
        sa.UniqueConstraint("undoes", name="uq_moderation_log_undoes"),
    )
    op.create_index("ix_moderation_log_player", "moderation_log", ["player_id", "id"], unique=False)
    op.create_table(
        "account_marks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("marked_by", sa.String(length=64), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("log_id", sa.Integer(), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("undone_by", sa.String(length=64), nullable=True),
        sa.Column("undone_log_id", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "kind IN ('engine', 'boost', 'alt', 'bot')", name="ck_account_marks_kind"
        ),
        sa.ForeignKeyConstraint(
            ["log_id"], ["moderation_log.id"], name="fk_account_marks_log_id_moderation_log"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_account_marks_player_id_players",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["undone_log_id"],
            ["moderation_log.id"],
            name="fk_account_marks_undone_log_id_moderation_log",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_account_marks"),
    )
    op.create_index(
        "uq_account_marks_in_force",
        "account_marks",
        ["player_id", "kind"],
        unique=True,
        sqlite_where=sa.text("undone_at IS NULL"),
        postgresql_where=sa.text("undone_at IS NULL"),
    )
    op.create_table(
        "account_states",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("closed", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("muted", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("log_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["log_id"], ["moderation_log.id"], name="fk_account_states_log_id_moderation_log"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_account_states_player_id_players",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", name="pk_account_states"),
    )
    op.create_table(
        "review_queue",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("reporter_id", sa.Integer(), nullable=True),
        sa.Column("other_id", sa.Integer(), nullable=True),
        sa.Column("race_id", sa.Integer(), nullable=True),
        sa.Column("result_id", sa.Integer(), nullable=True),
        sa.Column("rule", sa.String(length=32), nullable=True),
        sa.Column("evidence", sa.Text(), server_default=sa.text("'{}'"), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=10), server_default="open", nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_by", sa.String(length=64), nullable=True),
        sa.Column("closed_log_id", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "state IN ('open', 'closed', 'dismissed')", name="ck_review_queue_state"
        ),
        sa.ForeignKeyConstraint(
            ["closed_log_id"],
            ["moderation_log.id"],
            name="fk_review_queue_closed_log_id_moderation_log",
        ),
        sa.ForeignKeyConstraint(
            ["other_id"],
            ["players.id"],
            name="fk_review_queue_other_id_players",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_review_queue_player_id_players",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name="fk_review_queue_race_id_races", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["reporter_id"],
            ["players.id"],
            name="fk_review_queue_reporter_id_players",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name="fk_review_queue_result_id_results",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_queue"),
    )
    op.create_index("ix_review_queue_player", "review_queue", ["player_id", "id"], unique=False)
    op.create_index("ix_review_queue_state", "review_queue", ["state", "id"], unique=False)
    op.create_table(
        "voided_results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("voided_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("log_id", sa.Integer(), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("undone_log_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["log_id"], ["moderation_log.id"], name="fk_voided_results_log_id_moderation_log"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_voided_results_player_id_players",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name="fk_voided_results_race_id_races", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name="fk_voided_results_result_id_results",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["undone_log_id"],
            ["moderation_log.id"],
            name="fk_voided_results_undone_log_id_moderation_log",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_voided_results"),
    )
    op.create_index("ix_voided_results_race", "voided_results", ["race_id"], unique=False)
    op.create_index(
        "uq_voided_results_in_force",
        "voided_results",
        ["result_id"],
        unique=True,
        sqlite_where=sa.text("undone_at IS NULL"),
        postgresql_where=sa.text("undone_at IS NULL"),
    )
    op.create_table(
        "rating_refunds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mark_id", sa.Integer(), nullable=False),
        sa.Column("log_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("points", sa.Double(), nullable=False),
        sa.Column("rating_before", sa.Double(), nullable=False),
        sa.Column("rating_after", sa.Double(), nullable=False),
        sa.Column("after_rating_id", sa.Integer(), nullable=True),
        sa.Column("refunded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("undone_log_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["log_id"], ["moderation_log.id"], name="fk_rating_refunds_log_id_moderation_log"
        ),
        sa.ForeignKeyConstraint(
            ["mark_id"],
            ["account_marks.id"],
            name="fk_rating_refunds_mark_id_account_marks",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name="fk_rating_refunds_player_id_players",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name="fk_rating_refunds_race_id_races", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["undone_log_id"],
            ["moderation_log.id"],
            name="fk_rating_refunds_undone_log_id_moderation_log",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_rating_refunds"),
        sa.UniqueConstraint("mark_id", "player_id", "race_id", name="uq_rating_refunds_mark_id"),
    )


def downgrade() -> None:
    op.drop_table("rating_refunds")
    op.drop_index("ix_voided_results_race", table_name="voided_results")
    op.drop_index("uq_voided_results_in_force", table_name="voided_results")
    op.drop_table("voided_results")
    op.drop_index("ix_review_queue_player", table_name="review_queue")
    op.drop_index("ix_review_queue_state", table_name="review_queue")
    op.drop_table("review_queue")
    op.drop_table("account_states")
    op.drop_index("uq_account_marks_in_force", table_name="account_marks")
    op.drop_table("account_marks")
    op.drop_index("ix_moderation_log_player", table_name="moderation_log")
    op.drop_table("moderation_log")
