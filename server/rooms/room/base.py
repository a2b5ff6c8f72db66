"""``RoomBase``: a room's record, the bottom layer every other one is built on.

It holds everything of one room (members, host, ready, the countdown, the race, the ids
and journal numbering, the held ``progress``, a ghost and its timer, the result, a daily
attempt's fields) and the little that only reads or sets them: who the members are, who
is connected, the one place the state changes (``_enter``, checked against
``TRANSITIONS``), and the host handed on when theirs is away.
"""

from __future__ import annotations

import datetime as dt
import hmac
import logging
from typing import Generic

from protocol import GameCode, Rules
from protocol.messages import Result

from ...domain.race import Race
from ...domain.records import GhostRun
from .kinds import TRANSITIONS, IllegalTransition, M, Outside, RoomState

__all__ = ["RoomBase"]

log = logging.getLogger("yukon.rooms")


class RoomBase(Generic[M]):
    """A room's fields, from its creation to its last player leaving; the layers above
    (``server.rooms.room``) add what a room does."""

    def __init__(
        self,
        outside: Outside[M],
        code: str,
        host: M,
        rules: Rules,
        fixed: GameCode | None,
        deal: GameCode,
        max_players: int,
        undo: bool,
        time_limit: int,
        *,
        daily: dt.date | None = None,
        attempt: int = 0,
        practice: bool = False,
        hints: bool = False,
        salt: str | None = None,
        ghost: GhostRun | None = None,
        rated: bool = False,
        archive: bool = False,
    ) -> None:
        self._outside = outside
        # Bound once: the move path reaches them without a lookup on ``outside``.
        self._deliver = outside.deliver
        self._emit = outside.emit
        self._timer = outside.timer
        self._config = outside.config
        self._wall = outside.wall
        self.code = code
        self.host = host
        self.rules = rules
        self.fixed = fixed
        self.deal = deal
        self.max_players = max_players
        self.undo = undo
        self.time_limit = time_limit
        self.players: list[M] = []
        self.spectators: list[M] = []
        self.ready: set[str] = set()
        self.state = RoomState.LOBBY
        self.countdown_until = 0.0
        self.race: Race | None = None
        self.race_id = 0
        self.started_wall = 0.0
        self.finishing = False
        self.result: Result | None = None
        #: The date of the daily deal this private room plays, None for a normal room.
        self.daily = daily
        self.attempt = attempt
        #: A daily attempt kept off the boards: a later attempt, or a player too young.
        self.practice = practice
        #: Player ids by name, fixed when the race starts (a player may leave before the end).
        self.ids: dict[str, int] = {}
        #: Each runner's address key and device id at the race's start (the rating
        #: rules' "one address" test; a race rebuilt after a restart has none).
        self.links: dict[str, tuple[str, str]] = {}
        #: The race's id across restarts (``RaceRecord.uid``), and its journal's next number.
        self.uid = ""
        self.journal_n = 0
        #: Runners may ask for hints (never in a daily room).
        self.hints = hints
        #: The salt of the commitment to a deal the server drew in secret (None for a deal
        #: the host chose by its code, which is public anyway): revealed with the code.
        self.salt = salt
        #: When a held ``progress`` is due (monotonic seconds), or None: nothing held.
        self.progress_due: float | None = None
        #: Whose moves the held ``progress`` shows: one runner (who then does not get it:
        #: their ``accepted`` told them), or None once a second runner moved in the hold.
        self.progress_mover: M | None = None
        #: A ghost room: the stored run raced alongside each race of the room (``ghost``).
        self.ghost = ghost
        #: When the ghost's figures next change (monotonic seconds): its timer, or None.
        self.ghost_due: float | None = None
        #: Its races change their runners' ratings (docs/ratings.md; never a daily or a
        #: ghost room: ``Play`` creates those unrated).
        self.rated = rated
        #: A room the quick-race pool formed (``quick.Quick.seat``; docs/protocol.md 4.26).
        self.quick = False
        #: BOT accounts may join (``create.bots``, or a bot's own room: docs/bots.md).
        self.bots = False
        #: An invite-only room's key (``create.invite_only``, docs/protocol.md 4.32): a
        #: ``join`` or ``watch`` without it is answered as for a room that does not exist.
        self.invite_key: str | None = None
        #: Its random deals are to be proven winnable (``create.winnable``; always for a
        #: rated or quick room), and whether this deal was (``rooms.deals``, ``room.winnable``).
        self.wants_winnable = False
        self.winnable = False
        #: A past day's deal played from the archive (``daily`` is that day, whose code is
        #: public): practice, never cut at the code's publication, on the archive board.
        self.archive = archive

    def members(self) -> list[M]:
        return self.players + self.spectators

    def admits(self, key: str | None) -> bool:
        """May a ``join`` or ``watch`` with ``key`` come in (the room's key, if it has one,
        compared in constant time: a guess learns nothing from the answer's timing)?"""
        if self.invite_key is None:
            return True
        return key is not None and hmac.compare_digest(key.encode(), self.invite_key.encode())

    def connected(self) -> dict[str, bool]:
        """Which players are connected, by name (what ``progress`` shows)."""
        return {m.name: m.connected for m in self.players}

    @property
    def private(self) -> bool:
        """A daily or ghost room: nobody joins or watches it by its code."""
        return self.daily is not None or self.ghost is not None

    def _enter(self, state: RoomState) -> None:
        """Go to ``state``, if ``TRANSITIONS`` allows it from the room's own."""
        if state not in TRANSITIONS[self.state]:
            raise IllegalTransition(f"room {self.code}: {self.state} cannot go to {state}")
        self.state = state

    def hand_over_if_away(self) -> None:
        """A host who is away must not hold the others back from starting or a rematch."""
        host = self.host
        if not host.connected:
            present = [m for m in self.players if m.connected]
            if present:
                self.ready.add(host.name)  # a host never says ready; keep them counted so
                self.host = present[0]
