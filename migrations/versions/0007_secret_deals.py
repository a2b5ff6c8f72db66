"""Secret deals: longer game codes, and the salts of their commitments.

A deal the server draws in secret is now a 128-bit seed, and its code (``YU1-C-`` and 26
base32 characters, 35 at most with four rules letters) no longer fits the 32 characters
code columns had: they widen to 48. ``live_races.salt`` keeps a running race's commitment
salt across a restart, so the salt revealed at its end is the one its runners were
committed to; ``daily_deals.salt`` does the same for each day's deal. Days and races
stored before have no salt (NULL): they keep their 7-letter codes and have no commitment.

A day chosen before this revision got a 7-letter code, which anyone can work out from the
cards it shows. Past days keep theirs (their codes are public anyway), and so does today
if somebody has already begun an attempt at it, so that the day's board compares runs of
one deal. Every later day (the server chooses tomorrow's ahead of time), and today if
nobody has played it yet, is forgotten here, to be chosen again as a seeded deal.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("races", "results", "daily_deals", "live_races")


def _code_width(width_from: int, width_to: int) -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "code",
                existing_type=sa.String(width_from),
                type_=sa.String(width_to),
                existing_nullable=False,
            )


def upgrade() -> None:
    _code_width(32, 48)
    for table in ("live_races", "daily_deals"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("salt", sa.String(32), nullable=True))
    today = dt.datetime.now(dt.UTC).date()
    op.execute(
        sa.text(
            "DELETE FROM daily_deals WHERE daily_date > :today OR (daily_date = :today"
            " AND NOT EXISTS (SELECT 1 FROM daily_attempts WHERE daily_date = :today))"
        ).bindparams(today=today)
    )


def downgrade() -> None:
    # A seeded code (35 characters at most) would not fit back: refuse rather than cut it.
    bind = op.get_bind()
    for table in _TABLES:
        longest = bind.execute(sa.text(f"SELECT MAX(LENGTH(code)) FROM {table}")).scalar()
        if longest is not None and longest > 32:
            raise RuntimeError(
                f"{table} holds codes longer than 32 characters (seeded deals):"
                " they cannot go back to revision 0005"
            )
    for table in ("daily_deals", "live_races"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("salt")
    _code_width(48, 32)
