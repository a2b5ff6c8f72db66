"""Names that look alike are one name; each player's best result per deal, kept by the
writer, so that a deal's board is one index range (issue 16, items 7 and 2).

``players.name_key`` becomes NFKC then case folding (was case folding alone), and the new
``players.name_skeleton`` holds each name's Unicode TR39 skeleton, unique too
(``protocol.messages``). Both are computed here for the players already registered, oldest
first. Names registered before that now collide are kept as they are (no player loses a
name or a token): the oldest keeps the key and the skeleton; a later one keeps a key of its
own (its new key, U+E000 and its id: no name can have that key, since names refuse
private-use characters) and no skeleton (NULL). New names that collide with either are
refused. docs/limits.md says how to list them.

``live_races.practice`` keeps a running daily attempt's practice mark across a restart:
with ``--daily-min-age`` a first attempt may be practice too.

``deal_bests`` holds one row per deal and player: their best counted (not practice)
result in board order, the first stored among equal ones, exactly what the board showed
before. It is filled here from the existing results.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

from protocol.messages import name_key, name_skeleton

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_players = sa.table(
    "players",
    sa.column("id", sa.Integer()),
    sa.column("name", sa.String()),
    sa.column("name_key", sa.String()),
    sa.column("name_skeleton", sa.String()),
)


def _rekey(key: Callable[[str], str], skeleton: Callable[[str], str] | None) -> None:
    """Recompute every player's keys, oldest first; a collision keeps the older player's.
    First every key is set to a placeholder, so that no step meets a stale unique key."""
    bind = op.get_bind()
    rows = bind.execute(sa.select(_players.c.id, _players.c.name).order_by(_players.c.id)).all()
    update = (
        _players.update()
        .where(_players.c.id == sa.bindparam("i"))
        .values(
            name_key=sa.bindparam("k"), **({"name_skeleton": sa.bindparam("s")} if skeleton else {})
        )
    )
    if not rows:
        return
    bind.execute(update, [{"i": i, "k": f"\ue000{i}", "s": None} for i, _ in rows])
    keys: set[str] = set()
    skeletons: set[str] = set()
    params = []
    for i, name in rows:
        k = key(name)
        if k in keys:
            k = f"{k}\ue000{i}"
        keys.add(k)
        s = skeleton(name) if skeleton else None
        if s is not None and s in skeletons:
            s = None
        if s is not None:
            skeletons.add(s)
        params.append({"i": i, "k": k, "s": s})
    bind.execute(update, params)


def upgrade() -> None:
    # Not a batch on SQLite: it would copy ``players`` and drop the old table, and with
    # foreign keys on, the drop deletes every player's results. A unique index instead of
    # a constraint, for the same reason.
    op.add_column("players", sa.Column("name_skeleton", sa.String(length=400), nullable=True))
    op.create_index("uq_players_name_skeleton", "players", ["name_skeleton"], unique=True)
    _rekey(name_key, name_skeleton)
    op.add_column(
        "live_races",
        sa.Column("practice", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.execute("UPDATE live_races SET practice = true WHERE attempt > 1")
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
    if op.get_bind().dialect.name == "sqlite":  # (3.35+) without a batch's copy: see upgrade
        op.execute("ALTER TABLE live_races DROP COLUMN practice")
    else:
        op.drop_column("live_races", "practice")
    op.drop_index("ix_deal_bests_board", table_name="deal_bests")
    op.drop_table("deal_bests")
    op.drop_index("uq_players_name_skeleton", table_name="players")
    if op.get_bind().dialect.name == "sqlite":  # (3.35+) without a batch's copy: see upgrade
        op.execute("ALTER TABLE players DROP COLUMN name_skeleton")
    else:
        op.drop_column("players", "name_skeleton")
    _rekey(str.casefold, None)
