"""Undoing an operator's action (server/storage/moderation.py): one more audit-log entry
naming the entry it undoes, which puts back what that entry changed if it is still as
the entry left it, and refuses otherwise.

Kept apart from the actions because undo is its own rulebook (what each action's undo
checks and restores), built on the actions' helpers.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from . import moderation_refunds
from .moderation_actions import ModerationActions
from .moderation_base import (
    BOARD_INVERSES,
    STATE_ACTIONS,
    LogEntry,
    ModerationError,
    _json,
    _log,
    _marks,
    _players,
    _queue,
    _unjson,
    _utc,
    _voids,
    _Who,
)
from .moderation_models import REFUND_MARKS
from .ratings import lock_players

__all__ = ["ModerationUndo"]


class ModerationUndo(ModerationActions):
    """``undo`` and, per action, how to put back what it changed."""

    async def undo(self, *, entry: int, reason: str, operator: str, now: float) -> LogEntry:
        """Undo entry ``entry``: one more entry (``undo``, naming it) that puts back what
        it changed, if that is still as it left it; refused otherwise, and for an undo
        (do the action again instead) or an entry undone before."""
        try:
            async with self.engine.begin() as conn:
                row = (await conn.execute(select(_log).where(_log.c.id == entry))).first()
                if row is None:
                    raise ModerationError("unknown_entry", f"the log has no entry {entry}")
                if row.action == "undo":
                    raise ModerationError(
                        "cannot_undo",
                        f"entry {entry} is an undo itself: do what it undid again instead",
                    )
                undo = getattr(self, f"_undo_{row.action}", None)
                if undo is None:
                    raise ModerationError("cannot_undo", f"a {row.action} cannot be undone here")
                later = (
                    await conn.execute(select(_log.c.id).where(_log.c.undoes == entry))
                ).scalar()
                if later is not None:
                    raise ModerationError(
                        "already_undone", f"entry {entry} was undone by entry {later}"
                    )
                who = None
                if row.player_id is not None:
                    await self._lock_for_undo(conn, row, now)
                    name = (
                        await conn.execute(
                            select(_players.c.name).where(_players.c.id == row.player_id)
                        )
                    ).scalar_one()
                    who = _Who(int(row.player_id), str(name))
                new = await self._write(
                    conn,
                    action="undo",
                    operator=operator,
                    reason=reason,
                    now=now,
                    who=who,
                    race_id=row.race_id,
                    details={"action": str(row.action), **_unjson(row.details)},
                    undoes=entry,
                )
                done = await undo(conn, row, who, new, operator, now)
                if done:  # what the undo did besides putting back: the entry says it too
                    await conn.execute(
                        update(_log)
                        .where(_log.c.id == new)
                        .values(
                            details=_json(
                                {"action": str(row.action), **_unjson(row.details), "undo": done}
                            )
                        )
                    )
                inverse = BOARD_INVERSES.get(str(row.action))
                if inverse is not None:
                    await self._log_boards(
                        conn,
                        inverse,
                        now,
                        who=who,
                        race_id=None if row.race_id is None else int(row.race_id),
                        voids_of=int(row.id) if row.action == "void" else None,
                    )
        except IntegrityError:  # another operator undid it, or acted, at the same moment
            raise ModerationError(
                "already_undone", f"entry {entry} was undone or overtaken meanwhile"
            ) from None
        return await self._done(new)

    @staticmethod
    async def _lock_for_undo(conn: AsyncConnection, row: Any, now: float) -> None:
        """Hold the account acted on; for a mark or an unmark of a kind that refunds,
        everyone its refunds could touch as well, in one go (``lock_circle``)."""
        player = int(row.player_id)
        if row.action in ("mark", "unmark") and _unjson(row.details).get("kind") in REFUND_MARKS:
            await moderation_refunds.lock_circle(conn, player, now)
        else:
            await lock_players(conn, [player])

    async def _undo_mark(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> dict[str, Any] | None:
        """The mark lifted, the queue entries it closed open again, and the refunds it
        gave taken back (``details.undo.taken_back``)."""
        mark = (await conn.execute(select(_marks).where(_marks.c.log_id == row.id))).first()
        assert mark is not None
        if mark.undone_at is not None:
            raise ModerationError(
                "cannot_undo",
                f"the {mark.kind} mark of entry {row.id} was lifted by entry {mark.undone_log_id}",
            )
        await self._lift(conn, int(mark.id), operator, now, new)
        back = await moderation_refunds.owed(conn, int(mark.id))
        await moderation_refunds.take_back(conn, back, entry=new)
        await conn.execute(
            update(_queue)
            .where(_queue.c.closed_log_id == row.id, _queue.c.state == "closed")
            .values(state="open", closed_at=None, closed_by=None, closed_log_id=None)
        )
        return {"taken_back": back.details} if str(mark.kind) in REFUND_MARKS else None

    async def _undo_unmark(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> dict[str, Any] | None:
        """The mark back, as a new row; a kind that refunds gives its refunds again, as a
        mark made now would (``details.undo.refunds``): the races the unmark took back
        are due again, the caps apply to the ratings as they are now."""
        mark = (await conn.execute(select(_marks).where(_marks.c.undone_log_id == row.id))).first()
        assert mark is not None
        kind = str(mark.kind)
        again = await self._in_force(conn, who.id, kind)
        if again is not None:
            raise ModerationError(
                "cannot_undo",
                f"{who.name} is marked {kind} again (entry {again.log_id})",
            )
        mark_id = await self._insert_mark(conn, who.id, kind, str(mark.reason), operator, now, new)
        if kind not in REFUND_MARKS:
            return None
        refunds = await moderation_refunds.plan(conn, who.id, now)
        await moderation_refunds.apply(conn, refunds, mark_id=mark_id, entry=new, now=now)
        return {"refunds": moderation_refunds.as_details(refunds)}

    async def _undo_rename(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> dict[str, Any] | None:
        details = _unjson(row.details)
        if who.name != details["to"]:
            raise ModerationError(
                "cannot_undo", f"{who.name} has been renamed since entry {row.id}"
            )
        await self._check_free(conn, who.id, str(details["from"]))
        await self._set_name(conn, who.id, str(details["from"]))
        return None

    async def _undo_close(
        self, conn: AsyncConnection, row: Any, who: _Who, new: int, operator: str, now: float
    ) -> None:
        """Undo a close, reopen, mute or unmute: the state back as it was before."""
        column, value, _, _ = STATE_ACTIONS[str(row.action)]
        if await self._state(conn, who.id, column) != value:
            raise ModerationError(
                "cannot_undo", f"{who.name}'s {column} state changed since entry {row.id}"
            )
        await self._put_state(conn, who.id, column, not value, now, new)

    _undo_reopen = _undo_close
    _undo_mute = _undo_close
    _undo_unmute = _undo_close
    _undo_hide = _undo_close  # an operator's hide and the automatic one alike
    _undo_unhide = _undo_close

    async def _undo_void(
        self, conn: AsyncConnection, row: Any, who: _Who | None, new: int, operator: str, now: float
    ) -> None:
        lifted = await conn.execute(
            update(_voids)
            .where(_voids.c.log_id == row.id, _voids.c.undone_at.is_(None))
            .values(undone_at=_utc(now), undone_log_id=new)
        )
        if lifted.rowcount == 0:
            raise ModerationError("cannot_undo", f"the void of entry {row.id} is lifted already")

    async def _undo_dismiss(
        self, conn: AsyncConnection, row: Any, who: _Who | None, new: int, operator: str, now: float
    ) -> None:
        reopened = await conn.execute(
            update(_queue)
            .where(_queue.c.closed_log_id == row.id, _queue.c.state == "dismissed")
            .values(state="open", closed_at=None, closed_by=None, closed_log_id=None)
        )
        if reopened.rowcount == 0:
            raise ModerationError(
                "cannot_undo", f"the queue entry of entry {row.id} is not dismissed"
            )
