"""Restarts: running races rebuilt from their journal, and the clocks the journal keeps.

A restarted server replays each running race's journal (``storage.journal``) through
``restore`` before it listens; ``live_elapsed`` gives the journal's checkpoints.
"""

from __future__ import annotations

import logging

from protocol import GameCode

from ..effects import GhostRun, LiveAction, LiveRace
from ..race import Race
from .nodes import CLOSE_RESTARTING
from .play import Play
from .shared import Part, Shared
from .state import _Player, _Room

__all__ = ["Restarts"]

log = logging.getLogger("yukon.rooms")


class Restarts(Part):
    """What survives a restart of the server: the races that were running."""

    def __init__(self, shared: Shared, play: Play) -> None:
        super().__init__(shared)
        self._play = play

    def live_elapsed(self, now: float) -> dict[str, int]:
        """Each running race's clock, for the journal's checkpoints."""
        return {
            room.uid: room.race.elapsed_ms(now)
            for room in self._rooms.values()
            if room.race is not None and room.state == "racing"
        }

    def restore(
        self,
        live: LiveRace,
        actions: list[LiveAction],
        alive_ms: int,
        now: float,
        *,
        ghost: GhostRun | None = None,
    ) -> None:
        """Rebuild a race that was running when the server stopped, from its journal; a
        ghost race with its ``ghost``, at the same place on the race clock (None when the
        run could not be found again: the race goes on alone, and is still practice).

        Its clock resumes at ``alive_ms`` (the last moment the journal knew it was alive):
        the time the server was away is not charged. Every player starts disconnected, with
        a fresh resume window; a client that resumes learns the last ``seq`` the server
        has and resends any later move it had been told was accepted.
        """
        if live.room in self._rooms:
            log.error("restore: room %s exists already; race %s not restored", live.room, live.uid)
            return
        players = []
        for pid, name in live.players:
            p = self._players.get(pid)
            if p is None:
                p = _Player(pid, name, "")
                self._players[pid] = p
            # Every player gets a fresh window, also one a cluster's node remembers from an
            # earlier session, gone with what is left of that session's window.
            if p.conn is None:
                p.gone_at = now
                self._timer(now + self._config.resume_window_s, "gone", p)
            players.append(p)
        host = next((p for p in players if p.id == live.host_id), players[0])
        code = GameCode.parse(live.code)
        room = _Room(
            live.room,
            host,
            code.rules,
            code if live.fixed else None,
            code,
            live.max_players,
            live.undo,
            live.time_limit,
            daily=live.daily_date,
        )
        room.attempt = live.attempt
        room.practice = live.practice or live.attempt > 1
        room.hints = live.hints
        room.salt = live.salt
        room.ghost = ghost
        room.players = players
        room.ready = {p.name for p in players}
        for p in players:
            p.room = room
            p.spectator = False
        room.race_id = self._play.next_race_id()
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
        room.state = "racing"
        names = {pid: name for pid, name in live.players}
        for a in sorted(actions, key=lambda a: a.n):
            runner = race.runners[names[a.player_id]]
            at = started + a.at_ms / 1000
            if a.action == "resign":
                race.resign(runner, at)
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
        self._rooms[room.code] = room
        self._play.limit_timers(room, race, now)
        self._play.ghost_begins(room, race, now)
        log.info(
            "room %s: race %s restored at %.1f s with %d actions",
            room.code,
            live.uid,
            alive_ms / 1000,
            len(actions),
        )
        self._play.enforce_limit(room, now)
        self._play.check_over(room)
        for p in room.members():
            # A cluster's node may remember a member whose session here was relayed to
            # another node (away): to the node this race was taken from, or to an earlier
            # room's. Their room is here now. A connection still open is closed with 1012,
            # as when the owner is seen gone, so that the client resumes here.
            if p.away is not None:
                p.away = None
                p.away_room = None
                c = self._conns.get(p.conn) if p.conn is not None else None
                if c is not None:
                    self._close(c, CLOSE_RESTARTING, "the room's node went away; resume")
        for p in room.members():  # a player who said hello meanwhile (a takeover)
            c = self._conns.get(p.conn) if p.conn is not None else None
            if c is not None and not c.closed:
                self._play.resync(p, now)
