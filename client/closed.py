"""Is an invite link's room still open, and where? ``GET /r/CODE?format=json``
(docs/protocol.md 1.6).

``yukon play LINK`` asks before it says hello: a room that is closed (everyone left, or a
daily or ghost room) is said so at once, with its last race (ranks and runs to replay),
before any name is asked, as the browser's page for the link does. An open room on a
cluster comes with its node, which the client then connects to (``?node=``, 4.25), so
that its join lands where the room is, with no ``route`` and no second connection. Any
failure to ask (an older server, a certificate this plain HTTP request cannot check, no
answer within a few seconds) is no answer: the client then connects and joins as before
and the server says why not.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from protocol.messages import RankEntry

from .invite import invite_link

__all__ = ["LastRace", "RoomState", "parse_room_state", "room_state"]

#: How long the question may take before the client goes on without its answer.
TIMEOUT_S = 5.0
#: A node id as the server's operator may give it (docs/protocol.md 4.25): anything else
#: in ``node`` is not one, and the client connects without it.
NODE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


@dataclass(frozen=True)
class LastRace:
    """A closed room's newest stored race: its id (for replays), game code and ranks."""

    race: str
    code: str | None
    finished_ms: int | None
    results: tuple[RankEntry, ...]


@dataclass(frozen=True)
class RoomState:
    room: str
    open: bool
    last_race: LastRace | None
    #: The node of a cluster that holds the open room (``?node=``), None if none is named.
    node: str | None = None


def parse_room_state(data: object) -> RoomState | None:
    """The JSON answer, checked; None if it is not one (another server, another version).
    A ``node`` that is missing (an older server) or is not a node id is None."""
    if not isinstance(data, dict):
        return None
    room, is_open, last = data.get("room"), data.get("open"), data.get("last_race")
    if not isinstance(room, str) or not isinstance(is_open, bool):
        return None
    race: LastRace | None = None
    if isinstance(last, dict) and isinstance(last.get("race"), str):
        results: list[RankEntry] = []
        for r in last.get("results") or ():
            try:
                results.append(
                    RankEntry(
                        int(r["rank"]),
                        str(r["name"]),
                        str(r["outcome"]),
                        int(r["time_ms"]),
                        int(r["moves"]),
                        int(r["score"]),
                        int(r["foundations"]),
                        bool(r.get("hinted", False)),
                    )
                )
            except (KeyError, TypeError, ValueError):
                return None
        code, when = last.get("code"), last.get("finished_ms")
        race = LastRace(
            last["race"],
            code if isinstance(code, str) else None,
            when if isinstance(when, int) else None,
            tuple(results),
        )
    node = data.get("node")
    if not (is_open and isinstance(node, str) and NODE_ID.fullmatch(node)):
        node = None
    return RoomState(room, is_open, race, node)


def _get(url: str, context: ssl.SSLContext | None) -> object:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as response:
        return json.loads(response.read(1 << 20).decode("utf-8"))


async def room_state(
    server_url: str, room: str, *, cafile: Path | None = None, key: str | None = None
) -> RoomState | None:
    """Ask the server at ``server_url`` (the websocket address dialled) about ``room``;
    None when it cannot be told (see the module docstring)."""
    try:
        # for=join: an open room's last race is not asked for (it is not shown), so the
        # answer comes without a database question (docs/protocol.md 1.6).
        url = invite_link(server_url, room, key)
        url += ("&" if "?" in url else "?") + "format=json&for=join"
    except ValueError:
        return None
    context = None
    if url.startswith("https://"):
        context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    try:
        data = await asyncio.wait_for(asyncio.to_thread(_get, url, context), TIMEOUT_S + 1)
    except (OSError, ValueError, TimeoutError, urllib.error.URLError):
        return None
    return parse_room_state(data)
