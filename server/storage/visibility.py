"""Who and what the public boards leave out (docs/fairplay.md, "What each mark does").

One rule, used by every board query (the daily board and ``/leaderboard``, the deal and
archive boards): a board shows no row of an account with a mark in force (engine, boost,
alt or bot), nor of one an operator closed or hid (``account_states``), and no result with
a void in force. Nothing is deleted: lift the mark or undo the void and the rows are back,
since the boards are read through this filter, never rewritten.

The sets it reads are small (accounts acted on by hand), so the ``NOT IN`` subqueries cost
each board page a probe of two small tables, not a scan of the results.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, and_, or_, select, union

from .models import Player
from .moderation_models import AccountMark, AccountState, VoidedResult

__all__ = ["off_the_boards", "on_the_boards"]

_marks = cast(Table, AccountMark.__table__)
_states = cast(Table, AccountState.__table__)
_voids = cast(Table, VoidedResult.__table__)
_players = cast(Table, Player.__table__)


def off_the_boards() -> Any:
    """The ids of the players whose rows no board shows: BOT accounts too (the boards are
    the humans'; docs/bots.md)."""
    return union(
        select(_marks.c.player_id).where(_marks.c.undone_at.is_(None)),
        select(_states.c.player_id).where(or_(_states.c.hidden, _states.c.closed)),
        select(_players.c.id).where(_players.c.bot),
    )


def on_the_boards(player_id: Any, result_id: Any) -> Any:
    """The condition a board's row meets to be shown: its player is not off the boards
    and its result is not voided."""
    voided = select(_voids.c.result_id).where(_voids.c.undone_at.is_(None))
    return and_(player_id.not_in(off_the_boards()), result_id.not_in(voided))
