"""The operator's actions (server/storage/moderation.py): queueing an item, marking and
unmarking, renaming, closing, muting, voiding a result, dismissing an item. Each is one
transaction that writes one audit-log entry together with the state it changes.

Kept apart from the reads, and from the undo (which builds on these actions' helpers).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from protocol.messages import name_key, name_skeleton, normalize_name

from . import moderation_refunds
from .moderation_base import (
    QUEUE_KINDS,
    STATE_ACTIONS,
    LogEntry,
    ModerationBase,
    ModerationError,
    _json,
    _marks,
    _players,
    _queue,
    _races,
    _results,
    _states,
    _utc,
    _voids,
    _Who,
)
from .moderation_models import MARK_KINDS, REFUND_MARKS
from .ratings import lock_players

__all__ = ["ModerationActions"]


class ModerationActions(ModerationBase):
    """Every action but undo: each one transaction and one audit-log entry."""

    async def enqueue(
        self,
        *,
        kind: str,
        player_id: int,
        now: float,
        race: str | None = None,
        result_id: int | None = None,
        reporter_id: int | None = None,
        other_id: int | None = None,
        rule: str | None = None,
        evidence: dict[str, Any] | None = None,
        note: str | None = None,
    ) -> int:
        """Put an entry into the review queue (a flag with its evidence, a player's
        report, an address pair, a sandbag report: ``QUEUE_KINDS``); its id. ``race``
        is the race's id (``races.uid``). The server writes these; no log entry (the
        queue is what operators act on, not an action)."""
        if kind not in QUEUE_KINDS:
            raise ModerationError("bad_kind", f"{kind!r} is not one of {', '.join(QUEUE_KINDS)}")
        async with self.engine.begin() as conn:
            race_id = None
            if race is not None:
                race_id = (
                    await conn.execute(select(_races.c.id).where(_races.c.uid == race))
                ).scalar()
                if race_id is None:
                    raise ModerationError("unknown_race", f"no stored race has the id {race!r}")
            result = await conn.execute(
                insert(_queue)
                .values(
                    kind=kind,
                    created_at=_utc(now),
                    player_id=player_id,
                    reporter_id=reporter_id,
                    other_id=other_id,
                    race_id=race_id,
                    result_id=result_id,
                    rule=rule,
                    evidence=_json(evidence or {}),
                    note=note,
                )
                .returning(_queue.c.id)
            )
            return int(result.scalar_one())

    async def mark(
        self, *, name: str, kind: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Mark an account; its open queue entries are closed by the same entry. An
        ``engine`` or ``boost`` mark also gives its opponents back what its rated races
        of the refund window cost them (``moderation_refunds``), in the same transaction,
        and the entry lists each refund (``details.refunds``)."""
        if kind not in MARK_KINDS:
            raise ModerationError("bad_kind", f"{kind!r} is not one of {', '.join(MARK_KINDS)}")
        refunding = kind in REFUND_MARKS
        try:
            async with self.engine.begin() as conn:
                who = await self._player(conn, name)
                if refunding:
                    await moderation_refunds.lock_circle(conn, who.id, now)
                else:
                    await lock_players(conn, [who.id])
                mark = await self._in_force(conn, who.id, kind)
                if mark is not None:
                    raise ModerationError(
                        "already_marked",
                        f"{who.name} is already marked {kind} (entry {mark.log_id})",
                    )
                open_items = [
                    int(i)
                    for (i,) in await conn.execute(
                        select(_queue.c.id)
                        .where(_queue.c.player_id == who.id, _queue.c.state == "open")
                        .order_by(_queue.c.id)
                    )
                ]
                refunds = await moderation_refunds.plan(conn, who.id, now) if refunding else []
                details: dict[str, Any] = {"kind": kind, "closed": open_items}
                if refunding:
                    details["refunds"] = moderation_refunds.as_details(refunds)
                entry = await self._write(
                    conn,
                    action="mark",
                    operator=operator,
                    reason=reason,
                    now=now,
                    who=who,
                    details=details,
                )
                mark_id = await self._insert_mark(conn, who.id, kind, reason, operator, now, entry)
                await moderation_refunds.apply(conn, refunds, mark_id=mark_id, entry=entry, now=now)
                await self._log_boards(conn, "mark", now, who=who)
                if open_items:
                    await conn.execute(
                        update(_queue)
                        .where(_queue.c.id.in_(open_items))
                        .values(
                            state="closed",
                            closed_at=_utc(now),
                            closed_by=operator,
                            closed_log_id=entry,
                        )
                    )
        except IntegrityError:  # another operator marked them at the same moment
            raise ModerationError(
                "already_marked", f"{name.strip()} is already marked {kind}"
            ) from None
        return await self._done(entry)

    @staticmethod
    async def _in_force(conn: AsyncConnection, player_id: int, kind: str) -> Any:
        return (
            await conn.execute(
                select(_marks).where(
                    _marks.c.player_id == player_id,
                    _marks.c.kind == kind,
                    _marks.c.undone_at.is_(None),
                )
            )
        ).first()

    @staticmethod
    async def _insert_mark(
        conn: AsyncConnection,
        player_id: int,
        kind: str,
        reason: str,
        operator: str,
        now: float,
        entry: int,
    ) -> int:
        result = await conn.execute(
            insert(_marks)
            .values(
                player_id=player_id,
                kind=kind,
                reason=reason,
                marked_by=operator,
                marked_at=_utc(now),
                log_id=entry,
            )
            .returning(_marks.c.id)
        )
        return int(result.scalar_one())

    @staticmethod
    async def _lift(
        conn: AsyncConnection, mark_id: int, operator: str, now: float, entry: int
    ) -> None:
        await conn.execute(
            update(_marks)
            .where(_marks.c.id == mark_id)
            .values(undone_at=_utc(now), undone_by=operator, undone_log_id=entry)
        )

    async def unmark(
        self, *, name: str, kind: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Lift a mark in force. The refunds it gave are taken back in the same
        transaction: each opponent's rating lowered by the points, the rows marked undone,
        the entry listing each (``details.taken_back``)."""
        if kind not in MARK_KINDS:
            raise ModerationError("bad_kind", f"{kind!r} is not one of {', '.join(MARK_KINDS)}")
        async with self.engine.begin() as conn:
            who = await self._player(conn, name)
            if kind in REFUND_MARKS:
                await moderation_refunds.lock_circle(conn, who.id, now)
            else:
                await lock_players(conn, [who.id])
            mark = await self._in_force(conn, who.id, kind)
            if mark is None:
                raise ModerationError("not_marked", f"{who.name} is not marked {kind}")
            back = await moderation_refunds.owed(conn, int(mark.id))
            details: dict[str, Any] = {"kind": kind, "mark": int(mark.id)}
            if kind in REFUND_MARKS:
                details["taken_back"] = back.details
            entry = await self._write(
                conn,
                action="unmark",
                operator=operator,
                reason=reason,
                now=now,
                who=who,
                details=details,
            )
            await self._lift(conn, int(mark.id), operator, now, entry)
            await moderation_refunds.take_back(conn, back, entry=entry)
            await self._log_boards(conn, "unmark", now, who=who)
        return await self._done(entry)

    async def rename(
        self, *, name: str, new_name: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Give an account a new name, under the rules of a registered name (docs/
        protocol.md 4.1: unique regardless of case, compatibility forms and look-alikes)."""
        try:
            new = normalize_name(new_name)
        except ValueError as exc:
            raise ModerationError("bad_name", f"{new_name.strip()!r}: {exc}") from None
        try:
            async with self.engine.begin() as conn:
                who = await self._lock(conn, name)
                if new == who.name:
                    raise ModerationError("same_name", f"{who.name} is already named {new}")
                await self._check_free(conn, who.id, new)
                entry = await self._write(
                    conn,
                    action="rename",
                    operator=operator,
                    reason=reason,
                    now=now,
                    who=who,
                    details={"from": who.name, "to": new},
                )
                await self._set_name(conn, who.id, new)
        except IntegrityError:
            raise ModerationError(
                "name_taken", f"{new!r} is taken, or looks like a name that is"
            ) from None
        return await self._done(entry)

    @staticmethod
    async def _check_free(conn: AsyncConnection, player_id: int, name: str) -> None:
        """Refuse ``name`` if another player's name is it or looks like it."""
        p = _players.c
        taken = (
            await conn.execute(
                select(p.name).where(
                    p.id != player_id,
                    (p.name_key == name_key(name)) | (p.name_skeleton == name_skeleton(name)),
                )
            )
        ).scalar()
        if taken is not None:
            raise ModerationError("name_taken", f"{name!r} is taken: {taken!r} is or looks like it")

    @staticmethod
    async def _set_name(conn: AsyncConnection, player_id: int, name: str) -> None:
        await conn.execute(
            update(_players)
            .where(_players.c.id == player_id)
            .values(name=name, name_key=name_key(name), name_skeleton=name_skeleton(name))
        )

    async def set_state(
        self, *, action: str, name: str, reason: str, operator: str, now: float
    ) -> LogEntry:
        """``close``, ``reopen``, ``mute``, ``unmute``, ``hide`` or ``unhide`` an account."""
        column, value, code, words = STATE_ACTIONS[action]
        async with self.engine.begin() as conn:
            who = await self._lock(conn, name)
            if await self._state(conn, who.id, column) == value:
                raise ModerationError(code, f"{who.name} {words}")
            entry = await self._write(
                conn, action=action, operator=operator, reason=reason, now=now, who=who
            )
            await self._put_state(conn, who.id, column, value, now, entry)
            if column in ("closed", "hidden"):
                await self._log_boards(conn, action, now, who=who)
        return await self._done(entry)

    @staticmethod
    async def _state(conn: AsyncConnection, player_id: int, column: str) -> bool:
        value = (
            await conn.execute(select(_states.c[column]).where(_states.c.player_id == player_id))
        ).scalar()
        return bool(value)

    @staticmethod
    async def _put_state(
        conn: AsyncConnection, player_id: int, column: str, value: bool, now: float, entry: int
    ) -> None:
        values = {column: value, "changed_at": _utc(now), "log_id": entry}
        changed = await conn.execute(
            update(_states).where(_states.c.player_id == player_id).values(**values)
        )
        if changed.rowcount == 0:
            await conn.execute(insert(_states).values(player_id=player_id, **values))

    async def void(
        self, *, race: str, name: str | None = None, reason: str, operator: str, now: float
    ) -> LogEntry:
        """Void a stored race's results (``race``: its id, ``races.uid``), or only
        ``name``'s result in it."""
        async with self.engine.begin() as conn:
            race_id = (
                await conn.execute(select(_races.c.id).where(_races.c.uid == race.strip()))
            ).scalar()
            if race_id is None:
                raise ModerationError("unknown_race", f"no stored race has the id {race.strip()!r}")
            who = None if name is None else await self._lock(conn, name)
            r = _results.c
            query = (
                select(r.id, r.player_id, _players.c.name)
                .join(_players, _players.c.id == r.player_id)
                .where(r.race_id == race_id)
                .order_by(r.rank, r.id)
            )
            if who is not None:
                query = query.where(r.player_id == who.id)
            results = (await conn.execute(query)).all()
            if who is not None and not results:
                raise ModerationError("not_in_race", f"{who.name} did not run race {race.strip()}")
            held = {
                int(i)
                for (i,) in await conn.execute(
                    select(_voids.c.result_id).where(
                        _voids.c.race_id == race_id, _voids.c.undone_at.is_(None)
                    )
                )
            }
            todo = [x for x in results if int(x.id) not in held]
            if not todo:
                whose = (
                    f"{who.name}'s result in race" if who is not None else "every result of race"
                )
                raise ModerationError("already_voided", f"{whose} {race.strip()} is voided already")
            entry = await self._write(
                conn,
                action="void",
                operator=operator,
                reason=reason,
                now=now,
                who=who,
                race_id=int(race_id),
                details={"players": [str(x.name) for x in todo]},
            )
            for x in todo:
                await conn.execute(
                    insert(_voids).values(
                        result_id=int(x.id),
                        race_id=int(race_id),
                        player_id=int(x.player_id),
                        voided_at=_utc(now),
                        log_id=entry,
                    )
                )
            await self._log_boards(conn, "void", now, who=who, race_id=int(race_id), voids_of=entry)
        return await self._done(entry)

    async def dismiss(self, *, item: int, reason: str, operator: str, now: float) -> LogEntry:
        """Dismiss an open entry of the review queue (nothing to act on)."""
        async with self.engine.begin() as conn:
            row = (await conn.execute(select(_queue).where(_queue.c.id == item))).first()
            if row is None:
                raise ModerationError("unknown_item", f"the review queue has no entry {item}")
            if row.state != "open":
                raise ModerationError("not_open", f"queue entry {item} is {row.state} already")
            name = (
                await conn.execute(select(_players.c.name).where(_players.c.id == row.player_id))
            ).scalar_one()
            entry = await self._write(
                conn,
                action="dismiss",
                operator=operator,
                reason=reason,
                now=now,
                who=_Who(int(row.player_id), str(name)),
                race_id=row.race_id,
                details={"item": item, "kind": str(row.kind)},
            )
            await conn.execute(
                update(_queue)
                .where(_queue.c.id == item)
                .values(
                    state="dismissed", closed_at=_utc(now), closed_by=operator, closed_log_id=entry
                )
            )
        return await self._done(entry)
