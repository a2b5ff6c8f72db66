"""``Room``: the whole room, every layer below, and how a room comes back: rebuilt from
its journal (``Room.rebuild``, after a restart or on the node that took it over), then
running again (``resume``).
"""

from __future__ import annotations

import logging

from protocol import GameCode

from ...domain.race import Race
from ...domain.records import GhostRun, LiveAction, LiveRace
from .kinds import M, Outside, RoomState
from .members import RoomLobby

__all__ = ["Room"]

log = logging.getLogger("yukon.rooms")


class Room(RoomLobby[M]):
    """One room, from its creation to its last player leaving (see the package docstring):
    every layer, and the way back from the journal."""

    @classmethod
    def rebuild(
        cls,
        outside: Outside[M],
        live: LiveRace,
        players: list[M],
        actions: list[LiveAction],
        alive_ms: int,
        now: float,
        *,
        race_id: int,
        ghost: GhostRun | None = None,
    ) -> Room[M]:
        """A race that was running, rebuilt from its journal (after a restart, or on the
        node that took the room over). Its clock resumes at ``alive_ms`` (the last moment
        the journal knew it was alive): the time the room was away is not charged.
        ``resume`` then sets its timers and tells whoever is connected."""
        host = next((p for p in players if p.id == live.host_id), players[0])
        code = GameCode.parse(live.code)
        room = cls(
            outside,
            live.room,
            host,
            code.rules,
            code if live.fixed else None,
            code,
            live.max_players,
            live.undo,
            live.time_limit,
            daily=live.daily_date,
            attempt=live.attempt,
            practice=live.practice or live.attempt > 1,
            hints=live.hints,
            salt=live.salt,
            ghost=ghost,
            rated=live.rated,
            archive=live.archive,
        )
        room.quick = live.quick
        room.invite_key = live.invite_key
        room.winnable = live.winnable  # the journal says whether this deal was proven
        # The room's next deals are proven, as a new room's would be (default on; always
        # if rated).
        room.wants_winnable = not live.fixed and live.daily_date is None and ghost is None
        room.players = players
        room.ready = {p.name for p in players}
        for p in players:
            p.room = room
            p.spectator = False
        room.race_id = race_id
        room.uid = live.uid
        room.ids = {p.name: p.id for p in players}
        room.started_wall = live.started_wall
        started = now - alive_ms / 1000
        race = Race(
            code,
            [p.name for p in players],
            started=started,
            time_limit_s=live.time_limit,
            undo=live.undo,
        )
        room.race = race
        room._enter(RoomState.RACING)
        names = {pid: name for pid, name in live.players}
        for a in sorted(actions, key=lambda a: a.n):
            runner = race.runners[names[a.player_id]]
            at = started + a.at_ms / 1000
            if a.action == "resign":
                race.resign(runner, at, a.seq)
            elif a.action == "hint":
                runner.hinted = True
            elif a.action in ("abandon", "leave"):
                # Out of the room for good (the result stays in the race).
                if a.action == "abandon":
                    race.abandon(runner, at)
                gone = next(p for p in players if p.id == a.player_id)
                if gone in room.players:
                    room.players.remove(gone)
                    room.ready.discard(gone.name)
                    gone.room = None
            elif a.action == "undo":
                assert a.seq is not None
                race.undo(runner, a.seq, at)
            else:
                assert a.seq is not None
                reply = race.move(runner, a.seq, a.action, at)
                if reply.TYPE == "refused":  # cannot happen with an intact journal
                    log.error("restore %s: journaled move %s refused", live.uid, a.action)
            room.journal_n = max(room.journal_n, a.n)
        if room.host not in room.players and room.players:
            room.host = room.players[0]
        return room

    def resume(self, now: float) -> None:
        """A rebuilt room runs again: its timers, any limit passed meanwhile, the end of a
        race over meanwhile, and what a member connected meanwhile missed (a takeover)."""
        race = self.race
        assert race is not None
        self.limit_timers(race, now)
        self.ghost_begins(race, now)
        self.enforce_limit(now)
        self.check_over()
        for p in self.members():
            if p.connected:
                self.resync(p, now)
