"""``/r/CODE``, a room's invite link (docs/protocol.md 1.6): a closed room's page, its last
race with a replay link per runner, and the JSON a client reads before it joins."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import quote

from ..storage.sql import RoomRace
from .common import REPLAY_PREFIX, TEMPLATES, format_time


def room_json(
    code: str, is_open: bool, last: RoomRace | None, node: str | None = None
) -> dict[str, Any]:
    """``/r/CODE?format=json`` (docs/protocol.md 1.6). ``node``: the node that holds the
    open room, the value ``?node=`` routes by, so that a client joins there at once
    (4.25); None on a server alone, for a closed room, or when the directory cannot say."""
    race: dict[str, Any] | None = None
    if last is not None:
        race = {
            "race": last.race,
            "code": last.code,
            "finished_ms": round(last.finished_at.timestamp() * 1000),
            "results": [
                {
                    "rank": r.rank,
                    "name": r.name,
                    "outcome": r.outcome,
                    "time_ms": r.time_ms,
                    "moves": r.moves,
                    "score": r.score,
                    "foundations": r.foundations,
                    "hinted": r.hinted,
                }
                for r in last.results
            ],
        }
    return {"room": code, "open": is_open, "node": node if is_open else None, "last_race": race}


def render_room_html(code: str | None, last: RoomRace | None, bad: str | None) -> str:
    """A closed room's page (``templates/room.html``): its last race, each runner's
    replay a link; or, with ``bad``, a malformed invite link's. No script, names escaped."""
    return TEMPLATES.get_template("room.html").render(
        code=code,
        last=last,
        bad=bad,
        time=format_time,
        replay=lambda race, name: REPLAY_PREFIX + quote(race, safe="") + "/" + quote(name, safe=""),
        finished=(
            None if last is None else f"{last.finished_at.astimezone(dt.UTC):%d %b %Y, %H:%M} UTC"
        ),
    )
