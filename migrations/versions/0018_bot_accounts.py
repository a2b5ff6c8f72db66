"""BOT accounts (issue 40, item 3; docs/bots.md): ``players.bot``, set at registration by
``hello.bot`` and never changed. Every account stored before is a human's (false).

Follows 0017 (fair play's run signals), after 0016 (rating pairs).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("bot", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_column("bot")
