"""Record a race's fair-play signals with its results, flag runs into the review queue,
and, if the operator turned it on, hide a player whose flags add up (``AutoHide``).

Called by ``SqlStore.record_race`` in the race's own transaction, so a run's figures,
its flags, an automatic hide and the result are stored together or not at all (issue 40
items 1 and 2). The thresholds and the hide come from ``SqlStore.fairplay``, which
``yukon serve`` sets from its options (docs/fairplay.md, "Setting the thresholds").
"""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import Table, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..domain import signals
from ..domain.records import RaceRecord
from .models import Player
from .moderation_base import ModerationBase, _unjson, _Who
from .moderation_models import AccountState, ModerationEntry, ReviewItem
from .signals_models import RunSignals

_signals: Table = RunSignals.__table__  # type: ignore[assignment]
_queue: Table = ReviewItem.__table__  # type: ignore[assignment]
_states: Table = AccountState.__table__  # type: ignore[assignment]
_log: Table = ModerationEntry.__table__  # type: ignore[assignment]
_players: Table = Player.__table__  # type: ignore[assignment]

#: The audit log's operator for what the server does by itself (docs/fairplay.md).
AUTO = "auto"

#: How many recent unflagged runs of a rule set make the human history of the pace rule.
HISTORY = 2_000


async def human_paces(conn: AsyncConnection, rules: str, limit: int = HISTORY) -> list[float]:
    """The paces of the last ``limit`` unflagged runs of ``rules``, sorted ascending."""
    rows = await conn.execute(
        select(_signals.c.pace)
        .where(_signals.c.rules == rules, _signals.c.flagged == 0)
        .order_by(_signals.c.result_id.desc())
        .limit(limit)
    )
    return sorted(float(p) for (p,) in rows)


async def record_signals(
    conn: AsyncConnection,
    record: RaceRecord,
    race_id: int,
    result_ids: dict[int, int],
    fairplay: signals.FairPlay = signals.DEFAULT_FAIRPLAY,
) -> int:
    """Store each run's figures; put each rule that fired into ``review_queue``; hide a
    flagged player whose flagged runs reach ``fairplay.auto_hide``.

    Returns how many flags were queued. The human history is read once, before this
    race's runs are added, so runners of one race are not judged against each other.
    """
    thresholds = fairplay.thresholds
    paces = await human_paces(conn, record.rules)
    now = dt.datetime.fromtimestamp(record.ended_wall, dt.UTC)
    queued = 0
    for r in record.results:
        result_id = result_ids.get(r.player_id)
        if result_id is None:
            continue
        figures = signals.of_journal(
            record.code,
            r.journal,
            resumed_at=r.resumed_at,
            human_paces=paces,
            thresholds=thresholds,
        )
        flags = signals.judge(figures, thresholds)
        await conn.execute(
            insert(_signals).values(
                result_id=result_id,
                rules=record.rules,
                pace=figures.pace,
                flagged=int(bool(flags)),
                figures=json.dumps(figures.as_json(), sort_keys=True),
                flags=json.dumps([f.rule for f in flags]),
            )
        )
        for flag in flags:
            evidence = {**flag.evidence, "signals": figures.as_json()}
            await conn.execute(
                insert(_queue).values(
                    kind="flag",
                    created_at=now,
                    player_id=r.player_id,
                    race_id=race_id,
                    result_id=result_id,
                    rule=flag.rule,
                    evidence=json.dumps(evidence, sort_keys=True),
                )
            )
            queued += 1
        if flags and fairplay.auto_hide is not None:
            await auto_hide(conn, r.player_id, race_id, record.ended_wall, fairplay.auto_hide)
    return queued


async def auto_hide(
    conn: AsyncConnection, player_id: int, race_id: int, now: float, rule: signals.AutoHide
) -> int | None:
    """Hide ``player_id`` from the public boards if their flagged runs reach the rule; the
    audit-log entry's id, or None when nothing was done.

    Counted: the player's flagged runs (distinct results with a ``flag`` entry) that
    ended within ``rule.hours`` of ``now`` (inclusive), not dismissed by an operator, and
    after the last time an operator lifted a hide of theirs (an ``unhide``, or the undo
    of a ``hide``): an operator who looked and let them back is not overruled by the
    flags they already weighed. A player already hidden, and a registered BOT account
    (never on the boards), are left as they are.

    The hide is what an operator's is (``account_states.hidden``, read by
    ``visibility.off_the_boards``), written by one log entry of operator ``auto`` with the
    past daily boards it changes appended to the daily's log, so ``yukon mod undo`` puts
    it back like any action.
    """
    state = (
        await conn.execute(select(_states.c.hidden).where(_states.c.player_id == player_id))
    ).scalar()
    if state:
        return None
    player = (
        await conn.execute(
            select(_players.c.name, _players.c.bot).where(_players.c.id == player_id)
        )
    ).first()
    if player is None or player.bot:
        return None
    since = dt.datetime.fromtimestamp(now - rule.window_s, dt.UTC)
    lifted = await _last_lifted(conn, player_id)
    if lifted is not None and lifted > since:
        since = lifted
        inclusive = False
    else:
        inclusive = True
    start = _queue.c.created_at >= since if inclusive else _queue.c.created_at > since
    runs = [
        int(rid)
        for (rid,) in await conn.execute(
            select(_queue.c.result_id)
            .where(
                _queue.c.kind == "flag",
                _queue.c.player_id == player_id,
                _queue.c.state != "dismissed",
                _queue.c.result_id.is_not(None),
                start,
            )
            .group_by(_queue.c.result_id)
            .order_by(func.min(_queue.c.id))
        )
    ]
    if len(runs) < rule.flags:
        return None
    who = _Who(player_id, str(player.name))
    entry = await ModerationBase._write(
        conn,
        action="hide",
        operator=AUTO,
        reason=f"{len(runs)} flagged runs within {rule.hours:g} h (--auto-hide {rule.describe()})",
        now=now,
        who=who,
        race_id=race_id,
        details={"auto": rule.describe(), "results": runs},
    )
    values = {"hidden": True, "changed_at": dt.datetime.fromtimestamp(now, dt.UTC), "log_id": entry}
    changed = await conn.execute(
        _states.update().where(_states.c.player_id == player_id).values(**values)
    )
    if changed.rowcount == 0:
        await conn.execute(insert(_states).values(player_id=player_id, **values))
    await ModerationBase._log_boards(conn, "hide", now, who=who)
    return entry


async def _last_lifted(conn: AsyncConnection, player_id: int) -> dt.datetime | None:
    """When an operator last let the player back on the boards (``unhide``, or an undo
    of a ``hide``), or None."""
    rows = await conn.execute(
        select(_log.c.at, _log.c.action, _log.c.details).where(
            _log.c.player_id == player_id, _log.c.action.in_(("unhide", "undo"))
        )
    )
    times = [
        row.at
        for row in rows
        if row.action == "unhide" or _unjson(row.details).get("action") == "hide"
    ]
    if not times:
        return None
    latest: dt.datetime = max(times)
    return latest if latest.tzinfo is not None else latest.replace(tzinfo=dt.UTC)
