"""Hints: results that got one are marked and ranked after all the others.

``results.hinted`` marks them. Their place on the boards comes from ``board_key``: a new
flag bit 62 puts them after every unhinted result, so the "not won" flag moves from bit
62 to bit 61 (no won key reaches bit 61: its time field ends at bit 60). Existing keys are
rewritten accordingly; every existing result is unhinted. ``live_races.hints`` keeps a
running race's room option across a restart (a player's first hint is journaled as the
action ``hint``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HINTED = 1 << 62
_NOT_WON_OLD = 1 << 62
_NOT_WON = 1 << 61


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(
            sa.Column("hinted", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(
            sa.Column("hints", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    op.execute(
        sa.text(
            "UPDATE results SET board_key = board_key - :shift WHERE board_key >= :old"
        ).bindparams(shift=_NOT_WON_OLD - _NOT_WON, old=_NOT_WON_OLD)
    )


def downgrade() -> None:
    # Hinted results lose their mark and move back among the others.
    op.execute(
        sa.text(
            "UPDATE results SET board_key = board_key - :hinted WHERE board_key >= :hinted"
        ).bindparams(hinted=_HINTED)
    )
    op.execute(
        sa.text(
            "UPDATE results SET board_key = board_key + :shift WHERE board_key >= :new"
        ).bindparams(shift=_NOT_WON_OLD - _NOT_WON, new=_NOT_WON)
    )
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("hints")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("hinted")
