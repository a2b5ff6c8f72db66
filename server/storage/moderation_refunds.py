"""Refunds in the database (issue 40, item 5; docs/fairplay.md "Refunds"): reading what an
``engine`` or ``boost`` mark gives back (``server.storage.refunds`` does the arithmetic),
applying it in the mark's transaction, and taking it back in the unmark's (or the
undo's), each with its place in the order of rated races.

A refund applied is a ``rating_refunds`` row and a raised ``player_ratings.rating`` (the
deviation, the volatility and the count of races stay as they are: a refund is not a
race). Taking it back puts the rating back to the exact figure it was given on if
nothing moved it since, or lowers it by the same points if the opponent raced on it
(``refunds.taken_back``), and marks the row undone; the row stays, so the audit log and
``yukon db recompute-ratings`` can explain every number.
Each row keeps the last ``ratings`` row's id when it was applied (``after_rating_id``)
and when it was taken back (``undone_after_rating_id``): a recomputation gives and takes
the points at those places among the opponent's own rated races, so it agrees with the
live figures even when the opponent raced between a mark and its unmark.

Kept apart from the actions so that the mark, the unmark and the undo share one writer.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ..domain.ratings import Game
from .moderation_base import (
    _current,
    _marks,
    _players,
    _ratings,
    _refunds,
    _ts,
    _utc,
)
from .moderation_models import REFUND_MARKS
from .ratings import lock_players
from .refunds import (
    REFUND_DAYS,
    MarkedRace,
    Opponent,
    OpponentRow,
    Refund,
    plan_refunds,
    taken_back,
)

__all__ = [
    "plan",
    "circle",
    "lock_circle",
    "apply",
    "TakeBack",
    "owed",
    "take_back",
    "last_rating_id",
    "as_details",
]


async def last_rating_id(conn: AsyncConnection) -> int | None:
    """The newest ``ratings`` row's id: where a refund given or taken now stands in the
    order of rated races (every rated race of its opponent so far has a row at or below
    it, since the opponent is locked; every later one gets a higher id)."""
    value = (await conn.execute(select(func.max(_ratings.c.id)))).scalar()
    return None if value is None else int(value)


def _window(marked_at: float) -> tuple[dt.datetime, dt.datetime]:
    return _utc(marked_at - REFUND_DAYS * 86_400), _utc(marked_at)


async def circle(conn: AsyncConnection, marked: int, at: float) -> set[int]:
    """Everyone a mark of ``marked`` at ``at`` could refund, or its undo take back from:
    the other runners with a rating row in ``marked``'s rated races of the refund window,
    and whoever holds a refund of any mark of ``marked``."""
    g = _ratings.c
    since, until = _window(at)
    races = select(g.race_id).where(g.player_id == marked, g.rated_at >= since, g.rated_at <= until)
    ids = {
        int(pid)
        for (pid,) in await conn.execute(
            select(g.player_id).where(g.race_id.in_(races), g.player_id != marked).distinct()
        )
    }
    f = _refunds.c
    ids |= {
        int(pid)
        for (pid,) in await conn.execute(
            select(f.player_id)
            .join(_marks, _marks.c.id == f.mark_id)
            .where(_marks.c.player_id == marked)
            .distinct()
        )
    }
    return ids


async def lock_circle(conn: AsyncConnection, marked: int, at: float) -> None:
    """Hold ``marked`` and everyone ``circle`` names until the transaction ends, in id
    order, in one statement, as a rated race holds its runners (``ratings.lock_players``),
    so a refund and a race of one of them run one after the other and never wait on
    each other in a circle (a deadlock). A rated race of
    ``marked`` committed between reading the circle and locking it can add a runner:
    read again once ``marked`` is held (no race of theirs can commit then) and hold the
    newcomers too. On SQLite, take the database's write lock instead."""
    if conn.dialect.name == "sqlite":
        # Reads before a transaction's first write see whatever is committed at each
        # read (the driver begins at the first write), and a rated race could commit
        # between the plan and its refunds: write first, a no-op, which holds SQLite's
        # one write lock until the end, so every read after it is the last word.
        p = _players.c
        await conn.execute(update(_players).where(p.id == marked).values(name=p.name))
        return
    held = {marked} | await circle(conn, marked, at)
    await lock_players(conn, sorted(held))
    late = await circle(conn, marked, at) - held
    if late:
        await lock_players(conn, sorted(late))


async def plan(conn: AsyncConnection, marked: int, now: float) -> list[Refund]:
    """What an engine or boost mark of ``marked`` at ``now`` gives back, from the stored
    ratings (``refunds.plan_refunds``): the races refunded before by a mark of
    ``marked`` still in force are left out, and opponents with an engine or boost mark
    of their own get nothing. Reads only."""
    g = _ratings.c
    since, until = _window(now)
    mine = (
        await conn.execute(
            select(g.race_id, g.rated_at).where(
                g.player_id == marked, g.rated_at >= since, g.rated_at <= until
            )
        )
    ).all()
    if not mine:
        return []
    race_ids = [int(x.race_id) for x in mine]
    rows = (
        await conn.execute(
            select(
                g.race_id,
                g.player_id,
                g.rating_before,
                g.deviation_before,
                g.deviation,
                g.games,
            )
            .where(g.race_id.in_(race_ids), g.player_id != marked)
            .order_by(g.race_id, g.player_id)
        )
    ).all()
    by_race: dict[int, list[OpponentRow]] = {}
    for x in rows:
        games = tuple(
            Game(int(o), float(r), float(d), float(s)) for o, r, d, s in json.loads(x.games)
        )
        by_race.setdefault(int(x.race_id), []).append(
            OpponentRow(int(x.player_id), x.rating_before, x.deviation_before, x.deviation, games)
        )
    races = [
        MarkedRace(int(x.race_id), _ts(x.rated_at), tuple(by_race.get(int(x.race_id), ())))
        for x in mine
    ]
    ids = sorted({o.player_id for rs in by_race.values() for o in rs})
    if not ids:
        return []
    current = {
        int(x.player_id): float(x.rating)
        for x in await conn.execute(
            select(_current.c.player_id, _current.c.rating).where(_current.c.player_id.in_(ids))
        )
    }
    peaks: dict[int, float] = {}
    for pid, top, top_before in await conn.execute(
        select(g.player_id, func.max(g.rating), func.max(g.rating_before))
        .where(g.player_id.in_(ids))
        .group_by(g.player_id)
    ):
        peaks[int(pid)] = max(float(top), float(top_before))
    f = _refunds.c
    for pid, top in await conn.execute(
        select(f.player_id, func.max(f.rating_after))
        .where(f.player_id.in_(ids), f.undone_log_id.is_(None))
        .group_by(f.player_id)
    ):
        peaks[int(pid)] = max(peaks.get(int(pid), 0.0), float(top))
    excluded = {
        int(pid)
        for (pid,) in await conn.execute(
            select(_marks.c.player_id).where(
                _marks.c.player_id.in_(ids),
                _marks.c.kind.in_(REFUND_MARKS),
                _marks.c.undone_at.is_(None),
            )
        )
    }
    refunded = {
        (int(pid), int(race))
        for pid, race in await conn.execute(
            select(f.player_id, f.race_id)
            .join(_marks, _marks.c.id == f.mark_id)
            .where(_marks.c.player_id == marked, f.undone_log_id.is_(None))
        )
    }
    opponents = {pid: Opponent(current[pid], peaks[pid]) for pid in ids if pid in current}
    return plan_refunds(
        marked=marked,
        races=races,
        opponents=opponents,
        now=now,
        excluded=excluded | (set(ids) - set(opponents)),
        refunded=refunded,
    )


def as_details(refunds: Iterable[Refund]) -> list[dict[str, Any]]:
    """Refunds as the audit log's entry keeps them (``details.refunds``)."""
    return [
        {
            "player_id": r.player_id,
            "race_id": r.race_id,
            "points": r.points,
            "rating_before": r.rating_before,
            "rating_after": r.rating_after,
        }
        for r in refunds
    ]


async def apply(
    conn: AsyncConnection, refunds: Sequence[Refund], *, mark_id: int, entry: int, now: float
) -> None:
    """Give the planned refunds back (the players are locked, and ``plan`` read their
    ratings in this transaction): one ``rating_refunds`` row each, in the plan's order,
    and each opponent's current rating raised to their last refund's ``rating_after``."""
    if not refunds:
        return
    at = await last_rating_id(conn)
    for r in refunds:
        await conn.execute(
            insert(_refunds).values(
                mark_id=mark_id,
                log_id=entry,
                player_id=r.player_id,
                race_id=r.race_id,
                points=r.points,
                rating_before=r.rating_before,
                rating_after=r.rating_after,
                after_rating_id=at,
                refunded_at=_utc(now),
            )
        )
        await conn.execute(
            update(_current)
            .where(_current.c.player_id == r.player_id)
            .values(rating=r.rating_after)
        )


@dataclass(frozen=True, slots=True)
class TakeBack:
    """What taking back a mark's refunds will do, read before the entry that does it is
    written (so that the entry can say it): the rows, each opponent's rating after, and
    the log's account of it."""

    ids: tuple[int, ...]
    ratings: dict[int, float]
    details: list[dict[str, Any]]


async def owed(conn: AsyncConnection, mark_id: int) -> TakeBack:
    """What mark ``mark_id`` gave and still holds, to take back, newest first: each
    opponent's rating goes back to exactly what it was given on (``rating_before``) if
    nothing moved it since (it is still the refund's ``rating_after``), and is lowered by
    the points otherwise (they raced on it since). Reads only (the players are locked);
    a recomputation follows the same rule (``ratings.recompute_ratings``)."""
    f = _refunds.c
    rows = (
        await conn.execute(
            select(_refunds)
            .where(f.mark_id == mark_id, f.undone_log_id.is_(None))
            .order_by(f.id.desc())
        )
    ).all()
    ids = sorted({int(x.player_id) for x in rows})
    rating = {
        int(x.player_id): float(x.rating)
        for x in await conn.execute(
            select(_current.c.player_id, _current.c.rating).where(_current.c.player_id.in_(ids))
        )
    }
    details = []
    for x in rows:
        pid = int(x.player_id)
        before = rating[pid]
        rating[pid] = taken_back(before, x.points, x.rating_before, x.rating_after)
        details.append(
            {
                "player_id": pid,
                "race_id": int(x.race_id),
                "points": float(x.points),
                "rating_before": before,
                "rating_after": rating[pid],
            }
        )
    return TakeBack(tuple(int(x.id) for x in rows), rating, details)


async def take_back(conn: AsyncConnection, back: TakeBack, *, entry: int) -> None:
    """Do what ``owed`` read: the opponents' ratings lowered, the rows marked undone by
    ``entry`` at today's place in the order of rated races."""
    if not back.ids:
        return
    at = await last_rating_id(conn)
    for pid, value in back.ratings.items():
        await conn.execute(update(_current).where(_current.c.player_id == pid).values(rating=value))
    await conn.execute(
        update(_refunds)
        .where(_refunds.c.id.in_(back.ids))
        .values(undone_log_id=entry, undone_after_rating_id=at)
    )
