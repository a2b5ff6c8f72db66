"""Players' reports into the review queue (issue 40 item 2; docs/protocol.md 4.33).

The hub has checked what it can without the database (not oneself, the rate limits, who
shares the reporter's room now: ``server.rooms.reports``); this checks the rest against
what is stored and writes the report in one transaction: the reported name exists, the
two raced (a stored race with results of both, or the room they share now), and the
reporter has no open report of them about the same race. The answer is a protocol
message (``reported`` or an ``error``), as the other reads answered for a client are.

A report's reason is the player's own words: kept as sent, bar control and format
characters (each becomes a space; line breaks too), so that ``yukon mod queue``'s one
line an entry stays one line and a terminal shows no escape sequence; the protocol
bounds its length (``MAX_REPORT_REASON``), and ``yukon mod`` prints it quoted.
"""

from __future__ import annotations

import datetime as dt
import json
import unicodedata

from sqlalchemy import Table, and_, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from protocol.messages import MAX_REPORT_REASON, Error, Message, Reported, name_key

from .models import Player, RaceRow, ResultRow
from .moderation_models import ReviewItem

__all__ = ["clean_reason", "file_report"]

_players: Table = Player.__table__  # type: ignore[assignment]
_races: Table = RaceRow.__table__  # type: ignore[assignment]
_results: Table = ResultRow.__table__  # type: ignore[assignment]
_queue: Table = ReviewItem.__table__  # type: ignore[assignment]


def clean_reason(text: str | None) -> str | None:
    """The reason as stored: control and format characters as spaces, runs of spaces as
    one, trimmed, at most ``MAX_REPORT_REASON`` characters; None if nothing is left."""
    if text is None:
        return None
    kept = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in text)
    kept = " ".join(kept.split())[:MAX_REPORT_REASON]
    return kept or None


async def file_report(
    engine: AsyncEngine,
    *,
    reporter_id: int,
    player: str,
    race: str | None,
    reason: str | None,
    room: str | None,
    room_mates: frozenset[str],
    now: float,
) -> Message:
    """Queue ``reporter_id``'s report of ``player``; ``reported`` or an ``error``.

    ``race``: the stored race (``races.uid``) it is about; both must have a result in it
    (``not_raced``). Without one: their latest stored race together, else the room
    ``room`` the reporter shares with the player now (``room_mates``: the name keys of its
    runners; a first race not stored yet), else ``not_raced``.
    """
    async with engine.begin() as conn:
        found = (
            await conn.execute(
                select(_players.c.id, _players.c.name).where(
                    _players.c.name_key == name_key(player.strip())
                )
            )
        ).first()
        if found is None:
            return Error("unknown_player", f"nobody is named {player.strip()!r}")
        reported_id, reported = int(found.id), str(found.name)
        if reported_id == reporter_id:
            return Error("cannot_report_self", "you cannot report yourself")
        a, b = _results.alias("a"), _results.alias("b")
        together = (
            select(_races.c.id, _races.c.uid)
            .join(a, and_(a.c.race_id == _races.c.id, a.c.player_id == reporter_id))
            .join(b, and_(b.c.race_id == _races.c.id, b.c.player_id == reported_id))
        )
        race_id: int | None = None
        race_uid: str | None = None
        evidence: dict[str, object] = {}
        if race is not None:
            if (
                await conn.execute(select(_races.c.id).where(_races.c.uid == race))
            ).first() is None:
                return Error("no_such_race", f"no stored race has the id {race!r}")
            row = (await conn.execute(together.where(_races.c.uid == race))).first()
            if row is None:
                return Error("not_raced", f"you and {reported} did not both run in race {race}")
            race_id, race_uid = int(row.id), str(row.uid)
        else:
            row = (
                await conn.execute(together.order_by(_races.c.ended_at.desc(), _races.c.id.desc()))
            ).first()
            if row is not None:
                race_id, race_uid = int(row.id), str(row.uid)
            elif room is not None and name_key(reported) in room_mates:
                evidence = {"room": room}
            else:
                return Error(
                    "not_raced", f"you have not raced {reported}: report someone you raced"
                )
        same = (
            await conn.execute(
                select(_queue.c.id).where(
                    _queue.c.kind == "report",
                    _queue.c.state == "open",
                    _queue.c.reporter_id == reporter_id,
                    _queue.c.player_id == reported_id,
                    _queue.c.race_id.is_(None) if race_id is None else _queue.c.race_id == race_id,
                )
            )
        ).first()
        if same is not None:
            return Error(
                "already_reported", f"your report of {reported} is with the operators already"
            )
        await conn.execute(
            insert(_queue).values(
                kind="report",
                created_at=dt.datetime.fromtimestamp(now, dt.UTC),
                player_id=reported_id,
                reporter_id=reporter_id,
                race_id=race_id,
                evidence=json.dumps(evidence, sort_keys=True, separators=(",", ":")),
                note=clean_reason(reason),
            )
        )
    return Reported(reported, race_uid)
