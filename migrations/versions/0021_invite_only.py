"""Invite-only rooms (issue 40 item 8; docs/protocol.md 4.32): ``live_races.invite_key``,
so that a race rebuilt after a restart, or on the node that took its room over, stays
joinable only with its invite link's key. Races journaled before have none (open rooms).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.add_column(sa.Column("invite_key", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("live_races") as batch:
        batch.drop_column("invite_key")
