"""Ghost rooms: race a recorded run, alone, with the run alongside at its real pace.

``ghost`` becomes a ``Query`` (it counts as one of the connection's reads, like a
``replay``): the I/O layer finds the run and checks that it may be raced
(``server.domain.replays``: a stored race whose deal is public, or a friend's run on today's
daily board once the asker's own counted attempt is over), and answers through
``answered`` with a ``GhostRun`` or the error. The room is a private one-player lobby on
the run's deal; its races are practice (never on a board); the ``Room`` plays the ghost
(``Room.ghost_begins``, ``Room.ghost_moves``).
"""

from __future__ import annotations

import logging
import math

from protocol import GameCode
from protocol.messages import MAX_NAME, Error, Ghost

from ..domain.records import GhostRun
from .effects import Query, Send
from .play import Play
from .room import Room
from .shared import Part, Shared
from .state import _Conn, _Player

__all__ = ["Ghosts", "MAX_TIME_LIMIT"]

log = logging.getLogger("yukon.rooms")

#: The longest time limit a room has (``create.time_limit``): a ghost room's is the
#: daily's, or the recorded run's length if that is longer, up to this.
MAX_TIME_LIMIT = 7200


class Ghosts(Part):
    """Ghost rooms, from the ask to the lobby; the races in them are the ``Room``'s."""

    def __init__(self, shared: Shared, play: Play) -> None:
        super().__init__(shared)
        self._play = play

    def ask(self, c: _Conn, p: _Player, msg: Ghost) -> None:
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return
        # A room whose race is over for the player makes way: left now, with ``left``,
        # before the database is asked (issue 28).
        if not self._play.leave_over(c, p, self._shared.now):
            return
        limit = self._config.max_queries_per_connection
        if c.queries >= limit:
            self._error(
                c,
                "too_many_queries",
                f"{c.queries} of your board, history, replay or ghost requests are being"
                " answered; wait for an answer before asking again",
            )
            return
        c.queries += 1
        self._out.append(Query(c.id, p.id, msg))

    def answered(self, conn: int, found: GhostRun | Error, now: float) -> None:
        """The run (or why not): open the ghost room, in its lobby, with the asker as host.

        The asker may have entered a room or left meanwhile: checked again here, as are
        the room limits (the room is made now)."""
        c = self._conns.get(conn)
        if c is None:
            return
        c.queries = max(0, c.queries - 1)
        p = c.player
        if c.closed or p is None:
            return
        if isinstance(found, Error):
            self._out.append(Send(conn, found))
            return
        if p.daily_pending or p.room is not None:
            self._error(c, "already_in_room", "you are in a room (or a daily is on its way)")
            return
        code = self._play.take_room_code(c)
        if code is None:
            return
        deal = GameCode.parse(found.code)
        limit = min(
            MAX_TIME_LIMIT, max(self._config.daily_time_limit, math.ceil(found.time_ms / 1000))
        )
        # A secret deal (today's daily) stays so: the room plays it as a daily room does,
        # code hidden until the day's is public; a public one is shown as a chosen code.
        fixed = None if found.daily is not None else deal
        room = Room(
            self._play,
            code,
            p,
            deal.rules,
            fixed,
            deal,
            1,
            True,
            limit,
            daily=found.daily,
            practice=True,
            salt=found.salt if found.daily is not None else None,
            ghost=found,
        )
        self._play.open_room(c, p, room)
        log.info(
            "%s opened ghost room %s: %s's run in race %s",
            p.name,
            code,
            found.name[:MAX_NAME],
            found.race,
        )
        room.room_changed(now, progress=False)
