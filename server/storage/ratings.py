"""Ratings and streaks in the database (docs/ratings.md): the writer's part, which rates
a rated race in the transaction that stores it, and the reads (current ratings, a
player's page, streaks, the recomputation that checks every stored number).

The numbers come from ``server.domain.ratings`` (pure Glicko-2); this module only reads its
inputs and keeps its outputs, so the same function recomputes them from stored results.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from sqlalchemy import Table, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from protocol.messages import name_key

from ..domain.pairs import (
    PAIR_WINDOW_S,
    SANDBAG_REPORT,
    SANDBAG_WARN,
    SANDBAG_WINDOW,
    Pair,
    Run,
    decide,
    link,
    quick_resign,
    sandbag_counts,
    shared_address,
)
from ..domain.ratings import (
    Rated,
    Rating,
    Runner,
    is_provisional,
    rate_race,
)
from ..domain.records import RaceRecord, RatingChange, Standing
from ..domain.streaks import Streak, streaks
from .base import _aware
from .models import Player, PlayerRating, RaceRow, RatingRow, ResultRow
from .moderation_models import REFUND_MARKS, AccountMark, RatingRefund, ReviewItem
from .pairs_models import RatingPairRow
from .refunds import taken_back

__all__ = [
    "RatingsStore",
    "Standing",
    "PlayerStats",
    "Recomputed",
    "lock_players",
    "rate",
    "stored_changes",
    "RATING_HISTORY",
    "MARKED",
]

#: The most points of a player's rating history a page shows (the newest).
RATING_HISTORY = 200

_players = cast(Table, Player.__table__)
_races = cast(Table, RaceRow.__table__)
_results = cast(Table, ResultRow.__table__)
_ratings = cast(Table, RatingRow.__table__)
_current = cast(Table, PlayerRating.__table__)
_pairs = cast(Table, RatingPairRow.__table__)
_queue = cast(Table, ReviewItem.__table__)
_marks = cast(Table, AccountMark.__table__)
#: The pairs of a rated race dealt an unproven deal (``RaceRecord.unproven``).
UNPROVEN = "unproven"
#: The marks that say an account broke the rules (a ``bot`` mark says what it is: a BOT).
RULES_MARKS = ("engine", "boost", "alt")
_refunds = cast(Table, RatingRefund.__table__)

#: The reason stored in ``rating_pairs`` for a pair with a player marked ``engine`` or
#: ``boost`` when the race was committed: it does not count.
MARKED = "marked"
log = logging.getLogger("yukon.ratings")


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A player's page (``player_page``, ``/players/NAME``)."""

    name: str
    rating: int | None
    provisional: bool
    deviation: int | None
    races: int
    wins: int
    #: ``(rules, time_ms)``: the best unhinted win per rules field, in rules order.
    best: tuple[tuple[str, int], ...]
    streak: int
    best_streak: int
    #: ``(t_ms, rating)``: the rating after each rated race, oldest first, the newest
    #: ``RATING_HISTORY``.
    ratings: tuple[tuple[int, int], ...]
    #: An ``engine``, ``boost`` or ``alt`` mark in force: the page shows nothing but that.
    broke_rules: bool = False
    #: A BOT account (``players.bot``, docs/bots.md).
    bot: bool = False


@dataclass(slots=True)
class Recomputed:
    """What ``recompute`` found: how many rated races and rating rows it computed again,
    and every difference from what is stored (none: identical)."""

    races: int = 0
    rows: int = 0
    players: int = 0
    #: Refunds given and taken back, replayed at their places (``rating_refunds``).
    refunds: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _ms(when: dt.datetime) -> int:
    if when.tzinfo is None:  # SQLite hands back naive datetimes; every stored time is UTC
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def _games_json(rated: Rated) -> str:
    return json.dumps(
        [[g.opponent, g.rating, g.deviation, g.score] for g in rated.games],
        separators=(",", ":"),
    )


def _change(rated: Rated, races: int) -> RatingChange:
    return RatingChange(
        player_id=rated.player_id,
        rating=round(rated.after.rating),
        change=round(rated.after.rating) - round(rated.before.rating),
        provisional=is_provisional(races),
    )


async def lock_players(conn: AsyncConnection, player_ids: Sequence[int]) -> None:
    """Hold the runners' rows until the transaction ends (PostgreSQL; SQLite's writes are
    one at a time anyway), in id order so two races never wait on each other: a rated
    race reads its runners' ratings and writes new ones, and a second race of one of them
    must read what the first wrote."""
    if conn.dialect.name != "postgresql" or not player_ids:
        return
    await conn.execute(
        select(_players.c.id)
        .where(_players.c.id.in_(sorted(set(player_ids))))
        .order_by(_players.c.id)
        .with_for_update()
    )


async def _bots(conn: AsyncConnection, ids: Sequence[int]) -> set[int]:
    """Which of these players are BOT accounts (docs/bots.md)."""
    query = select(_players.c.id).where(_players.c.id.in_(ids), _players.c.bot)
    return {int(i) for (i,) in await conn.execute(query)}


async def rate(
    conn: AsyncConnection, record: RaceRecord, race_id: int, result_ids: dict[int, int]
) -> dict[int, RatingChange]:
    """Rate a rated race's runners, inside the transaction storing it: their current
    ratings in, the ratings table's rows and the new current ratings out."""
    ids = [r.player_id for r in record.results]
    rows = (await conn.execute(select(_current).where(_current.c.player_id.in_(ids)))).all()
    now = {row.player_id: row for row in rows}
    bots = await _bots(conn, ids)
    runners = [
        Runner(
            r.player_id,
            Rating(now[r.player_id].rating, now[r.player_id].deviation, now[r.player_id].volatility)
            if r.player_id in now
            else Rating(),
            r.rank,
            r.player_id in bots,
        )
        for r in record.results
    ]
    if len(runners) < 2:
        return {}
    at = _utc(record.ended_wall)
    runs = [
        Run(r.player_id, r.moves, r.time_ms, r.outcome, r.foundations, r.address, r.device)
        for r in record.results
    ]
    linked = await _one_address(conn, runs, race_id, at)
    decided = _unmarked(
        decide(runs, await _counted_before(conn, ids, at), linked), await _marked(conn, ids)
    )
    if record.unproven:  # the stock's fallback: a deal nobody proved winnable moves nobody
        decided = [Pair(p.a, p.b, UNPROVEN) for p in decided]
    for pair in decided:
        await conn.execute(
            insert(_pairs).values(race_id=race_id, a=pair.a, b=pair.b, reason=pair.reason)
        )
    await _sandbag_watch(conn, record, race_id, result_ids, at)
    changes: dict[int, RatingChange] = {}
    for rated in rate_race(runners, _counted(decided)):
        pid = rated.player_id
        if not rated.games:  # none of their pairs counted: their rating stays as it was
            races = now[pid].races if pid in now else 0
            changes[pid] = _change(rated, races)
            continue
        races = (now[pid].races if pid in now else 0) + 1
        await conn.execute(
            insert(_ratings).values(
                race_id=race_id,
                player_id=pid,
                result_id=result_ids[pid],
                rated_at=at,
                rating_before=rated.before.rating,
                deviation_before=rated.before.deviation,
                volatility_before=rated.before.volatility,
                rating=rated.after.rating,
                deviation=rated.after.deviation,
                volatility=rated.after.volatility,
                games=_games_json(rated),
            )
        )
        values = {
            "rating": rated.after.rating,
            "deviation": rated.after.deviation,
            "volatility": rated.after.volatility,
            "races": races,
            "rated_at": at,
        }
        if pid in now:
            await conn.execute(update(_current).where(_current.c.player_id == pid).values(**values))
        else:
            await conn.execute(insert(_current).values(player_id=pid, **values))
        changes[pid] = _change(rated, races)
    return changes


async def _sandbag_watch(
    conn: AsyncConnection,
    record: RaceRecord,
    race_id: int,
    result_ids: dict[int, int],
    at: dt.datetime,
) -> None:
    """The sandbag watch (``server.domain.pairs``) for each runner who resigned quickly in
    this race: over their last 7 rated results, quick resigns to one opponent warn (the
    log) at 3 and report (a ``review_queue`` row, ``sandbag``) at 4."""
    r = _results.c
    for me in record.results:
        run = Run(me.player_id, me.moves, me.time_ms, me.outcome, me.foundations)
        if not quick_resign(run):
            continue
        recent = (
            await conn.execute(
                select(r.race_id, r.rank, r.outcome, r.moves, r.time_ms, r.foundations)
                .join(_races, _races.c.id == r.race_id)
                .where(r.player_id == me.player_id, _races.c.rated.is_(True))
                .order_by(r.id.desc())
                .limit(SANDBAG_WINDOW)
            )
        ).all()
        seen: list[tuple[bool, frozenset[int]]] = []
        for row in recent:
            quick = quick_resign(
                Run(me.player_id, int(row.moves), int(row.time_ms), row.outcome, 0)
            )
            above: frozenset[int] = frozenset()
            if quick:
                above = frozenset(
                    int(x)
                    for x in (
                        await conn.execute(
                            select(r.player_id).where(r.race_id == row.race_id, r.rank < row.rank)
                        )
                    ).scalars()
                )
            seen.append((quick, above))
        for opponent, count in sorted(sandbag_counts(seen).items()):
            if not any(x.player_id == opponent and x.rank < me.rank for x in record.results):
                continue  # counted when it was this race's opponent only
            if count == SANDBAG_WARN:
                log.warning(
                    "sandbag watch: player %d resigned quickly to %d %d times in their last %d",
                    me.player_id,
                    opponent,
                    count,
                    SANDBAG_WINDOW,
                )
            elif count == SANDBAG_REPORT:
                await conn.execute(
                    insert(_queue).values(
                        kind="sandbag",
                        created_at=at,
                        player_id=me.player_id,
                        other_id=opponent,
                        race_id=race_id,
                        result_id=result_ids[me.player_id],
                        rule="sandbag",
                        evidence=json.dumps(
                            {"quick_resigns": count, "of_last": SANDBAG_WINDOW},
                            separators=(",", ":"),
                        ),
                    )
                )


async def _one_address(
    conn: AsyncConnection, runs: Sequence[Run], race_id: int, at: dt.datetime
) -> set[tuple[int, int]]:
    """Runners of one address (``pairs.shared_address``): each pair goes to the review
    queue (``address``, the other in ``other_id``, the second link if any in the
    evidence); the pairs with a second link (``pairs.link``) are returned, to count
    nothing between them (``linked``)."""
    pairs = shared_address(runs)
    if not pairs:
        return set()
    ids = sorted({r.player_id for pair in pairs for r in pair})
    rows = await conn.execute(
        select(_players.c.id, _players.c.registered_from, _players.c.created_at).where(
            _players.c.id.in_(ids)
        )
    )
    registered = {
        int(row.id): (row.registered_from, _aware(row.created_at).timestamp()) for row in rows
    }
    linked: set[tuple[int, int]] = set()
    for x, y in pairs:
        why = link(x, y, registered)
        if why is not None:
            linked.add((x.player_id, y.player_id))
        await conn.execute(
            insert(_queue).values(
                kind="address",
                created_at=at,
                player_id=x.player_id,
                other_id=y.player_id,
                race_id=race_id,
                rule="address",
                evidence=json.dumps(
                    {"address": x.address, "link": why, "counted": why is None},
                    separators=(",", ":"),
                ),
            )
        )
    return linked


async def _marked(conn: AsyncConnection, ids: Sequence[int]) -> set[int]:
    """Which of these runners hold an ``engine`` or ``boost`` mark in force now (read in
    the race's transaction, the runners locked: a mark and a race of one player happen
    one after the other)."""
    m = _marks.c
    query = select(m.player_id).where(
        m.player_id.in_(ids), m.kind.in_(REFUND_MARKS), m.undone_at.is_(None)
    )
    return {int(i) for (i,) in await conn.execute(query)}


def _unmarked(pairs: Sequence[Pair], marked: set[int]) -> list[Pair]:
    """lichess's rule: a player marked ``engine`` or ``boost`` moves nobody's rating, and
    nobody moves theirs. Each pair with one of them does not count, whatever else was
    decided (``marked``, stored with the race, so a recomputation replays it)."""
    return [Pair(p.a, p.b, MARKED) if p.a in marked or p.b in marked else p for p in pairs]


def _counted(pairs: Sequence[Pair]) -> dict[tuple[int, int], str]:
    """The pairs that count, as ``rate_race`` takes them."""
    return {(p.a, p.b): "draw" if p.reason == "draw" else "rank" for p in pairs if p.counts}


async def _counted_before(
    conn: AsyncConnection, ids: Sequence[int], at: dt.datetime
) -> dict[tuple[int, int], int]:
    """How many rated races each pair of these runners counted in the ``PAIR_WINDOW_S``
    before ``at`` (by the races' end)."""
    p = _pairs.c
    rows = (
        await conn.execute(
            select(p.a, p.b, func.count())
            .join(_races, _races.c.id == p.race_id)
            .where(
                p.a.in_(ids),
                p.b.in_(ids),
                p.reason.in_(("counted", "draw")),
                _races.c.ended_at > at - dt.timedelta(seconds=PAIR_WINDOW_S),
            )
            .group_by(p.a, p.b)
        )
    ).all()
    return {(int(r.a), int(r.b)): int(r[2]) for r in rows}


async def stored_changes(conn: AsyncConnection, uid: str) -> dict[int, RatingChange]:
    """The rating changes a stored race made (a retried write answers with these)."""
    g = _ratings.c
    earlier = _ratings.alias("earlier")
    races = (
        select(func.count())
        .select_from(earlier)
        .where(earlier.c.player_id == g.player_id, earlier.c.id <= g.id)
        .scalar_subquery()
    )
    rows = (
        await conn.execute(
            select(g.player_id, g.rating_before, g.rating, races.label("races"))
            .join(_races, _races.c.id == g.race_id)
            .where(_races.c.uid == uid)
        )
    ).all()
    return {
        int(row.player_id): RatingChange(
            player_id=int(row.player_id),
            rating=round(row.rating),
            change=round(row.rating) - round(row.rating_before),
            provisional=is_provisional(int(row.races)),
        )
        for row in rows
    }


@dataclass(frozen=True, slots=True)
class _Refunded:
    """A refund given (``points`` > 0) or taken back (< 0), as a recomputation replays
    it: after the ``ratings`` row ``after`` (its place among the player's rated races),
    in the order of the audit entries that did it. ``before``: the rating it was given on
    top of, as stored (a refund given), to check."""

    after: int
    entry: int
    refund: int
    points: float
    #: The rating it was given on and the one it made, as stored.
    before: float
    gave: float


async def _refunds_by_player(conn: AsyncConnection) -> dict[int, list[_Refunded]]:
    """Every refund given, and every one taken back, by player, in the order they
    happened: a refund taken back is given and taken back, each at its place, since the
    opponent's rated races between the two were rated on the refunded rating."""
    out: dict[int, list[_Refunded]] = {}
    for row in (await conn.execute(select(_refunds).order_by(_refunds.c.id))).all():
        given = int(row.after_rating_id or 0)
        mine = out.setdefault(int(row.player_id), [])
        figures = (float(row.rating_before), float(row.rating_after))
        mine.append(_Refunded(given, int(row.log_id), int(row.id), float(row.points), *figures))
        if row.undone_log_id is not None:
            back = row.undone_after_rating_id
            mine.append(
                _Refunded(
                    given if back is None else int(back),
                    int(row.undone_log_id),
                    int(row.id),
                    -float(row.points),
                    *figures,
                )
            )
    for mine in out.values():
        # One entry gives in the order of the rows and takes back newest first.
        mine.sort(key=lambda e: (e.after, e.entry, e.refund if e.points > 0 else -e.refund))
    return out


class RatingsStore:
    """The reads of ratings and streaks; ``SqlStore`` is one (it has the engine)."""

    engine: AsyncEngine

    async def current_ratings(self, player_ids: Sequence[int]) -> dict[int, tuple[float, float]]:
        """Players' current ratings and deviations (the quick-race pool's seam); a player
        with no rated race is absent (the caller uses ``DEFAULT_RATING`` and
        ``DEFAULT_DEVIATION``)."""
        if not player_ids:
            return {}
        c = _current.c
        async with self.engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(c.player_id, c.rating, c.deviation).where(
                        c.player_id.in_(sorted(set(player_ids)))
                    )
                )
            ).all()
        return {int(r.player_id): (float(r.rating), float(r.deviation)) for r in rows}

    async def standings(self, player_ids: Sequence[int], *, today: dt.date) -> dict[int, Standing]:
        """What shows beside each player's name: rating and streak (``today``: the
        server's UTC date). Every id asked for is in the answer."""
        if not player_ids:
            return {}
        async with self.engine.connect() as conn:
            return await self._standings(conn, player_ids, today)

    async def _standings(
        self, conn: AsyncConnection, player_ids: Sequence[int], today: dt.date
    ) -> dict[int, Standing]:
        """``standings`` on a connection already open (a hello reads the player and their
        standing on one: ``SqlStore.find_player``)."""
        ids = sorted(set(player_ids))
        c = _current.c
        rated = {
            int(r.player_id): r
            for r in (
                await conn.execute(
                    select(c.player_id, c.rating, c.races).where(c.player_id.in_(ids))
                )
            ).all()
        }
        won = await self._won_days(conn, ids)
        out = {}
        for pid in ids:
            row = rated.get(pid)
            out[pid] = Standing(
                rating=None if row is None else round(row.rating),
                provisional=True if row is None else is_provisional(int(row.races)),
                streak=Streak.of(won.get(pid, ()), today),
            )
        return out

    @staticmethod
    async def _won_days(conn: AsyncConnection, ids: Sequence[int]) -> dict[int, list[dt.date]]:
        """The days each player won their counted daily attempt (not practice)."""
        r = _results.c
        rows = (
            await conn.execute(
                select(r.player_id, r.daily_date)
                .where(
                    r.player_id.in_(ids),
                    r.daily_date.is_not(None),
                    r.practice.is_(False),
                    r.outcome == "won",
                )
                .distinct()
            )
        ).all()
        won: dict[int, list[dt.date]] = {}
        for row in rows:
            won.setdefault(int(row.player_id), []).append(row.daily_date)
        return won

    async def player_stats(self, *, name: str, today: dt.date) -> PlayerStats | None:
        """A player's page by name (any case or compatibility form), or None."""
        async with self.engine.connect() as conn:
            player = (
                await conn.execute(
                    select(_players.c.id, _players.c.name, _players.c.bot).where(
                        _players.c.name_key == name_key(name)
                    )
                )
            ).first()
            if player is None:
                return None
            pid = int(player.id)
            m = _marks.c
            marked = (
                await conn.execute(
                    select(m.id).where(
                        m.player_id == pid, m.kind.in_(RULES_MARKS), m.undone_at.is_(None)
                    )
                )
            ).first()
            if marked is not None:  # the page says that, and nothing of the account
                return PlayerStats(
                    name=str(player.name),
                    rating=None,
                    provisional=True,
                    deviation=None,
                    races=0,
                    wins=0,
                    best=(),
                    streak=0,
                    best_streak=0,
                    ratings=(),
                    broke_rules=True,
                    bot=bool(player.bot),
                )
            r = _results.c
            races, wins = (
                await conn.execute(
                    select(func.count(), func.count().filter(r.outcome == "won")).where(
                        r.player_id == pid
                    )
                )
            ).one()
            best = (
                await conn.execute(
                    select(_races.c.rules, func.min(r.time_ms))
                    .join(_races, _races.c.id == r.race_id)
                    .where(r.player_id == pid, r.outcome == "won", r.hinted.is_(False))
                    .group_by(_races.c.rules)
                    .order_by(_races.c.rules)
                )
            ).all()
            c = _current.c
            current = (
                await conn.execute(select(c.rating, c.deviation, c.races).where(c.player_id == pid))
            ).first()
            g = _ratings.c
            history = (
                await conn.execute(
                    select(g.rated_at, g.rating)
                    .where(g.player_id == pid)
                    .order_by(g.id.desc())
                    .limit(RATING_HISTORY)
                )
            ).all()
            won = await self._won_days(conn, [pid])
        streak, best_streak = streaks(won.get(pid, ()), today)
        return PlayerStats(
            name=str(player.name),
            rating=None if current is None else round(current.rating),
            provisional=True if current is None else is_provisional(int(current.races)),
            deviation=None if current is None else round(current.deviation),
            races=int(races),
            wins=int(wins),
            best=tuple((str(rules), int(t)) for rules, t in best),
            streak=streak,
            best_streak=best_streak,
            ratings=tuple((_ms(h.rated_at), round(h.rating)) for h in reversed(history)),
            bot=bool(player.bot),
        )

    async def recompute_ratings(self) -> Recomputed:
        """Compute every rating again from the stored results of the rated races, in the
        order they were rated, with the stored pair decisions and the refunds of marks
        (given and taken back, each at its place among the player's rated races), and
        compare with what is stored (every ``ratings`` row, its inputs and outputs, each
        refund's rating before, and every ``player_ratings`` row). Reads only."""
        report = Recomputed()
        r = _results.c
        g = _ratings.c
        current: dict[int, Rating] = {}
        counts: dict[int, int] = {}

        def replay(pid: int, pending: list[_Refunded], upto: int | None) -> None:
            """Give and take back ``pid``'s refunds that came before their ``ratings``
            row ``upto`` (None: all that are left)."""
            while pending and (upto is None or pending[0].after < upto):
                event = pending.pop(0)
                report.refunds += 1
                rating = current.get(pid)
                where = f"refund {event.refund} (entry {event.entry}), player {pid}"
                if rating is None:
                    report.differences.append(f"{where}: no recomputed rating to refund")
                    continue
                if event.points > 0:
                    if rating.rating != event.before:
                        report.differences.append(
                            f"{where}: given on a rating stored as {event.before},"
                            f" recomputed {rating.rating}"
                        )
                    value = rating.rating + event.points
                else:  # as the unmark took it back (moderation_refunds.taken_back)
                    value = taken_back(rating.rating, -event.points, event.before, event.gave)
                current[pid] = Rating(value, rating.deviation, rating.volatility)

        async with self.engine.connect() as conn:
            refunds = await _refunds_by_player(conn)
            race_ids = (
                (
                    await conn.execute(
                        select(_races.c.id).where(_races.c.rated.is_(True)).order_by(_races.c.id)
                    )
                )
                .scalars()
                .all()
            )
            for race_id in race_ids:
                results = (
                    await conn.execute(
                        select(r.id, r.player_id, r.rank).where(r.race_id == race_id).order_by(r.id)
                    )
                ).all()
                stored = {
                    int(row.result_id): row
                    for row in (await conn.execute(select(_ratings).where(g.race_id == race_id)))
                }
                for x in results:
                    row = stored.get(int(x.id))
                    pid = int(x.player_id)
                    if row is not None and pid in refunds:
                        replay(pid, refunds[pid], int(row.id))
                bots = await _bots(conn, [int(x.player_id) for x in results])
                runners = [
                    Runner(
                        int(x.player_id),
                        current.get(int(x.player_id), Rating()),
                        int(x.rank),
                        int(x.player_id) in bots,
                    )
                    for x in results
                ]
                if len(runners) < 2:
                    continue
                decided = [
                    Pair(int(row.a), int(row.b), str(row.reason))
                    for row in (
                        await conn.execute(
                            select(_pairs.c.a, _pairs.c.b, _pairs.c.reason).where(
                                _pairs.c.race_id == race_id
                            )
                        )
                    ).all()
                ]
                # A race stored before migration 0016 has no decisions: every pair counts.
                counted = _counted(decided) if decided else None
                report.races += 1
                result_of = {int(x.player_id): int(x.id) for x in results}
                for rated in rate_race(runners, counted):
                    pid = rated.player_id
                    if not rated.games:
                        continue  # none of their pairs counted: no row, no change
                    current[pid] = rated.after
                    counts[pid] = counts.get(pid, 0) + 1
                    report.rows += 1
                    row = stored.pop(result_of[pid], None)
                    where = f"race {race_id}, player {pid}"
                    if row is None:
                        report.differences.append(f"{where}: no stored rating")
                        continue
                    mine = (
                        rated.before.rating,
                        rated.before.deviation,
                        rated.before.volatility,
                        rated.after.rating,
                        rated.after.deviation,
                        rated.after.volatility,
                        _games_json(rated),
                    )
                    theirs = (
                        row.rating_before,
                        row.deviation_before,
                        row.volatility_before,
                        row.rating,
                        row.deviation,
                        row.volatility,
                        row.games,
                    )
                    if mine != theirs:
                        report.differences.append(
                            f"{where}: stored {theirs[:6]} {theirs[6]}, recomputed"
                            f" {mine[:6]} {mine[6]}"
                        )
                for extra in stored.values():
                    report.differences.append(
                        f"race {race_id}: a stored rating of player {extra.player_id}"
                        " that no result accounts for"
                    )
            for pid, pending in sorted(refunds.items()):
                replay(pid, pending, None)
            kept = {int(row.player_id): row for row in (await conn.execute(select(_current))).all()}
        report.players = len(current)
        for pid, rating in sorted(current.items()):
            row = kept.pop(pid, None)
            mine_now = (rating.rating, rating.deviation, rating.volatility, counts[pid])
            theirs_now = (
                None if row is None else (row.rating, row.deviation, row.volatility, row.races)
            )
            if mine_now != theirs_now:
                report.differences.append(
                    f"player {pid}: current rating stored {theirs_now}, recomputed {mine_now}"
                )
        for pid in sorted(kept):
            report.differences.append(f"player {pid}: a current rating no rated race gives")
        return report
