"""Restarts: running races rebuilt from their journal, and the clocks the journal keeps.

A restarted server replays each running race's journal (``storage.journal``) through
``restore`` before it listens; so does a node of a cluster that takes a room over from
another (docs/cluster.md): rebuilding from the journal is how a room is handed over. The
``Room`` rebuilds itself (``Room.rebuild``, ``Room.resume``); this part gives it its
players (a fresh resume window each) and its place in the room table.
``live_elapsed`` gives the journal's checkpoints.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..domain.records import GhostRun, LiveAction, LiveRace
from .play import Play
from .room import Room, RoomState
from .shared import Part, Shared

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
            if room.race is not None and room.state == RoomState.RACING
        }

    def restore(
        self,
        live: LiveRace,
        actions: list[LiveAction],
        alive_ms: int,
        now: float,
        *,
        ghost: GhostRun | None = None,
        watchers: Sequence[tuple[int, str]] = (),
    ) -> None:
        """Rebuild a race that was running when the server stopped, from its journal; a
        ghost race with its ``ghost``, at the same place on the race clock (None when the
        run could not be found again: the race goes on alone, and is still practice).

        Its clock resumes at ``alive_ms`` (the last moment the journal knew it was alive):
        the time the server was away is not charged. Every player starts disconnected, with
        a fresh resume window; a client that resumes learns the last ``seq`` the server
        has and resends any later move it had been told was accepted. ``watchers`` (a
        takeover: the spectators the old owner noted in the directory) are seated as
        spectators, disconnected, with the same window.
        """
        if live.room in self._rooms:
            log.error("restore: room %s exists already; race %s not restored", live.room, live.uid)
            return
        players = [self._shared.member_here(pid, name, now) for pid, name in live.players]
        room = Room.rebuild(
            self._play,
            live,
            players,
            actions,
            alive_ms,
            now,
            race_id=self._play.next_race_id(),
            ghost=ghost,
        )
        for pid, name in watchers:  # unless they moved on to another room meanwhile
            known = self._players.get(pid)
            if known is None or (known.room is None and not self._shared.moved_on(known)):
                room.seat_spectator(self._shared.member_here(pid, name, now))
        self._rooms[room.code] = room
        log.info(
            "room %s: race %s restored at %.1f s with %d actions",
            room.code,
            live.uid,
            alive_ms / 1000,
            len(actions),
        )
        room.resume(now)
