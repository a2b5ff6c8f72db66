"""Players' reports (``report``, docs/protocol.md 4.33): the hub's side.

What can be judged without the database is judged here, where every report passes: not
oneself, the per-player and per-address budgets, and who shares the reporter's room
right now (a report during a race, before it is stored, is about that room). The rest
(the name, the race, that both ran in it, a second report of the same) is storage's,
through the same ``Query`` effect as the other reads answered for a client, so it holds
the connection's place among its queries (``max_queries_per_connection``) and the
answer comes back through ``Hub.query_answered``.

The budgets are counted per node, in memory, like the other per-address windows
(``windows.SlidingCounts``): a report is counted when it is asked for, refused or not,
so probing names or races costs the same as reporting.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.messages import Report, name_key

from .effects import Query
from .shared import Part, Shared
from .state import _Conn, _Player
from .windows import SlidingCounts

__all__ = [
    "REPORTS_PER_ADDRESS",
    "REPORTS_PER_PLAYER",
    "REPORT_WINDOW_S",
    "ReportRequest",
    "Reports",
]

#: Reports one player may send per ``REPORT_WINDOW_S`` (an honest player reports a
#: handful of opponents a day, not a room a minute); beyond: ``too_many_reports``.
REPORTS_PER_PLAYER = 5
#: Reports the players of one address may send together per window (a household or a
#: campus shares an address; a script with many names does too).
REPORTS_PER_ADDRESS = 20
REPORT_WINDOW_S = 3600.0


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """A report the hub let through, for storage to check and queue (``Query.message``)."""

    reporter_id: int
    player: str
    race: str | None
    reason: str | None
    #: The room the reporter is a runner of now, and the name keys of its runners.
    room: str | None
    room_mates: frozenset[str]
    #: Wall time the report was made.
    at: float


class Reports(Part):
    """The report budgets, by player and by address."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self._by_player = SlidingCounts(REPORTS_PER_PLAYER, REPORT_WINDOW_S)
        self._by_address = SlidingCounts(REPORTS_PER_ADDRESS, REPORT_WINDOW_S)

    def ask(self, c: _Conn, p: _Player, msg: Report, now: float) -> None:
        if name_key(msg.player.strip()) == name_key(p.name):
            self._error(c, "cannot_report_self", "you cannot report yourself")
            return
        address = c.key or c.address
        if self._by_player.full(str(p.id), now) or self._by_address.full(address, now):
            self._error(
                c,
                "too_many_reports",
                f"at most {REPORTS_PER_PLAYER} reports an hour per player (and"
                f" {REPORTS_PER_ADDRESS} per address); the operators have yours",
            )
            return
        limit = self._config.max_queries_per_connection
        if c.queries >= limit:
            self._error(
                c,
                "too_many_queries",
                f"{c.queries} of your requests are being answered; wait for an answer first",
            )
            return
        self._by_player.add(str(p.id), now)
        self._by_address.add(address, now)
        room = p.room if p.room is not None and not p.spectator else None
        mates = (
            frozenset(name_key(m.name) for m in room.players) if room is not None else frozenset()
        )
        c.queries += 1
        self._out.append(
            Query(
                c.id,
                p.id,
                ReportRequest(
                    reporter_id=p.id,
                    player=msg.player,
                    race=msg.race,
                    reason=msg.reason,
                    room=room.code if room is not None else None,
                    room_mates=mates,
                    at=self._wall(),
                ),
            )
        )
