"""One address, two names (issue 40 item 4; docs/ratings.md "One address"):
``players.registered_from``, the key of the address a name was registered from, so that
two runners of a rated race from one address whose names were registered there within a
day of each other are a linked pair (their results stop counting between them). Names
registered before have none (a device id can still link them).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("registered_from", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_column("registered_from")
