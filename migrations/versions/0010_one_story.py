"""Ranks and names that tell one story (issue 28, items 8, 10 and 14).

**Board order.** A hinted win now ranks after every unhinted win but before every result
that is not a win (it ranked after every unhinted result, a resignation included), and of
two equal results that are not wins the one that played on longer ranks higher (the
earlier ranked higher). ``results.board_key`` is recomputed for every stored result by
the new order (``storage.models.board_key``; this file keeps its own copy of both orders,
so that it means the same whatever the model becomes), ``deal_bests`` is filled again from
it (each player's best per deal may change), and ``results.rank``, a runner's place in
their race, is recomputed by it too, so that a history row and a replay show the same
place as a race would now.

**Names.** ``players.name_skeleton`` drops every Unicode Default_Ignorable_Code_Point
before the TR39 skeleton (``protocol.messages.name_skeleton``); TR39's tables kept some
(U+180B..U+180D, U+180F, U+17B4, U+17B5). Every skeleton is recomputed, oldest player
first; a name that now looks like an older one keeps its name, token and results, and no
skeleton (NULL), as 0006 did (docs/limits.md lists them).

**A room's last race.** ``ix_races_room_ended`` finds the newest stored race of a room
code, which a closed room's invite link shows (``/r/CODE``, docs/protocol.md 1.6).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import disarm
import sqlalchemy as sa
from alembic import op

from protocol.messages import name_skeleton

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WIN_TIME_BITS = 41
_MOVE_BITS = 20
_TIME_BITS = 34
_SCORE_BITS = 20

_results = sa.table(
    "results",
    sa.column("id", sa.Integer()),
    sa.column("outcome", sa.String()),
    sa.column("time_ms", sa.BigInteger()),
    sa.column("moves", sa.Integer()),
    sa.column("score", sa.Integer()),
    sa.column("foundations", sa.Integer()),
    sa.column("hinted", sa.Boolean()),
    sa.column("board_key", sa.BigInteger()),
)
_players = sa.table(
    "players",
    sa.column("id", sa.Integer()),
    sa.column("name", sa.String()),
    sa.column("name_skeleton", sa.String()),
)

Key = Callable[[bool, int, int, int, int, bool], int]


def _won_fields(time_ms: int, moves: int) -> int:
    most_moves = (1 << _MOVE_BITS) - 1
    t = min(time_ms, (1 << _WIN_TIME_BITS) - 1)
    m = most_moves if time_ms > t else min(moves, most_moves)
    return (t << _MOVE_BITS) | m


def _lost_fields(foundations: int, score: int, time_field: int) -> int:
    most_score = (1 << _SCORE_BITS) - 1
    score_gap = most_score - min(score, most_score)
    t = 0 if score > most_score else time_field
    return ((52 - foundations) << (_TIME_BITS + _SCORE_BITS)) | (score_gap << _TIME_BITS) | t


def key_0010(
    won: bool, time_ms: int, moves: int, foundations: int, score: int, hinted: bool
) -> int:
    """Unhinted wins, hinted wins, then the rest (hint or not) by foundations, score and
    time, the later first: "not won" at bit 62, "hinted win" at bit 61."""
    if won:
        return ((1 << 61) if hinted else 0) | _won_fields(time_ms, moves)
    most_time = (1 << _TIME_BITS) - 1
    return (1 << 62) | _lost_fields(foundations, score, most_time - min(time_ms, most_time))


def key_0005(
    won: bool, time_ms: int, moves: int, foundations: int, score: int, hinted: bool
) -> int:
    """The order from 0005 to 0010: every hinted result after every other (bit 62); in
    each half the winners first ("not won" at bit 61), the rest by foundations, score and
    time, the earlier first."""
    flag = (1 << 62) if hinted else 0
    if won:
        return flag | _won_fields(time_ms, moves)
    return flag | (1 << 61) | _lost_fields(foundations, score, min(time_ms, (1 << _TIME_BITS) - 1))


def _rekey_results(key: Key) -> None:
    """Every result's board key by ``key``; then each runner's rank in their race by it
    (ties share a rank, the next skips), and each player's best per deal."""
    bind = op.get_bind()
    r = _results.c
    rows = bind.execute(
        sa.select(r.id, r.outcome, r.time_ms, r.moves, r.foundations, r.score, r.hinted)
    ).all()
    update = _results.update().where(r.id == sa.bindparam("i")).values(board_key=sa.bindparam("k"))
    params = [
        {"i": i, "k": key(outcome == "won", time_ms, moves, foundations, score, bool(hinted))}
        for i, outcome, time_ms, moves, foundations, score, hinted in rows
    ]
    for start in range(0, len(params), 1000):
        bind.execute(update, params[start : start + 1000])
    op.execute(
        "UPDATE results SET rank = 1 + (SELECT count(*) FROM results AS other"
        " WHERE other.race_id = results.race_id AND other.board_key < results.board_key)"
    )
    # As 0006 filled it: each player's first-stored best counted result per deal.
    op.execute("DELETE FROM deal_bests")
    op.execute(
        "INSERT INTO deal_bests (code, player_id, result_id, board_key)"
        " SELECT code, player_id, id, board_key FROM ("
        "  SELECT code, player_id, id, board_key, row_number() OVER"
        "   (PARTITION BY code, player_id ORDER BY board_key, id) AS n"
        "  FROM results WHERE NOT practice"
        " ) AS ranked WHERE n = 1"
    )


def _reskeleton(skeleton: Callable[[str], str]) -> None:
    """Every player's skeleton by ``skeleton``, oldest first; a later one that collides
    gets none. First all are cleared, so that no step meets a stale unique skeleton."""
    bind = op.get_bind()
    rows = bind.execute(sa.select(_players.c.id, _players.c.name).order_by(_players.c.id)).all()
    if not rows:
        return
    bind.execute(_players.update().values(name_skeleton=None))
    taken: set[str] = set()
    params = []
    for i, name in rows:
        s: str | None = skeleton(name)
        if s in taken:
            s = None
        if s is not None:
            taken.add(s)
        params.append({"i": i, "s": s})
    update = (
        _players.update()
        .where(_players.c.id == sa.bindparam("i"))
        .values(name_skeleton=sa.bindparam("s"))
    )
    for start in range(0, len(params), 1000):
        bind.execute(update, params[start : start + 1000])


def upgrade() -> None:
    _rekey_results(key_0010)
    _reskeleton(name_skeleton)
    op.create_index("ix_races_room_ended", "races", ["room", "ended_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_races_room_ended", table_name="races")
    _reskeleton(lambda name: disarm.skeleton_key(name, digit_policy="tr39"))
    _rekey_results(key_0005)
