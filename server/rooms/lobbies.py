"""Rooms without a running race, handed to another node when theirs dies (``Lobbies``).

A race is journaled in PostgreSQL and rebuilt from it (``Restarts``). A room in its lobby,
its countdown, or after its race has no journal: nothing in it matters beyond its
members and settings, so its owner keeps a snapshot of it in the cluster's directory
(``snapshots``, written once a second with its leases: docs/cluster.md), and the node
that takes it over when the owner dies rebuilds it (``adopt``): the same code, host,
settings, members and ready marks, every member disconnected with a fresh resume window,
as a restored race's runners are. Its clients resume into it through any node; an invite
link to it still works.

What comes back is the lobby: a countdown starts again when the host says so, and a room
whose race was over comes back as its rematch would (a new deal, drawn in secret; the
finished race's result is stored and in every member's history). Daily and ghost rooms
are one player's practice rooms: they are not handed over.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from protocol import GameCode, InvalidCodeError, InvalidRulesError, Rules

from .play import Play
from .room import Room, RoomState
from .shared import Part, Shared
from .state import _Player

__all__ = ["Lobbies"]

log = logging.getLogger("yukon.rooms")

#: The snapshot's format; a node ignores one it does not know (a newer node's).
VERSION = 1


class Lobbies(Part):
    """Snapshots of this node's rooms without a race, and rooms rebuilt from another's."""

    def __init__(
        self,
        shared: Shared,
        play: Play,
        *,
        random_deal: Callable[[], int | bytes],
        new_salt: Callable[[], str],
    ) -> None:
        super().__init__(shared)
        self._play = play
        self._random_deal = random_deal
        self._new_salt = new_salt

    def snapshots(self) -> dict[str, dict[str, Any]]:
        """Every room here that a takeover could not rebuild from the journal, as plain
        values (msgpack-able). A secret deal travels with its salt: the node that adopts
        the room keeps its commitment, so nobody can tell a deal was swapped."""
        found: dict[str, dict[str, Any]] = {}
        for code, r in self._rooms.items():
            if (
                r.state not in (RoomState.LOBBY, RoomState.COUNTDOWN, RoomState.FINISHED)
                or r.finishing
            ):
                continue
            if r.daily is not None or r.ghost is not None:
                continue
            over = r.state == RoomState.FINISHED
            found[code] = {
                "v": VERSION,
                "host": r.host.id,
                "rules": str(r.rules),
                "fixed": None if over or r.fixed is None else str(r.fixed),
                "deal": None if over else str(r.deal),
                "salt": None if over else r.salt,
                "max_players": r.max_players,
                "undo": r.undo,
                "time_limit": r.time_limit,
                "hints": r.hints,
                "rated": r.rated,
                "quick": r.quick,
                "wants_winnable": r.wants_winnable,
                "winnable": r.winnable and not over,
                "players": [[m.id, m.name] for m in r.players],
                "spectators": [[m.id, m.name] for m in r.spectators],
                "ready": sorted(r.ready) if not over else [],
            }
        return found

    def adopt(self, code: str, snap: dict[str, Any], now: float, *, owner: str = "") -> bool:
        """Rebuild room ``code`` from its dead ``owner``'s snapshot. False: it was not (a
        room of that code is here, no member is free to be seated, or the snapshot is
        not one this node reads)."""
        if code in self._rooms or snap.get("v") != VERSION:
            return False
        try:
            rules = Rules.parse(snap["rules"])
            fixed = GameCode.parse(snap["fixed"]) if snap["fixed"] else None
            deal = GameCode.parse(snap["deal"]) if snap["deal"] else None
        except (InvalidCodeError, InvalidRulesError, KeyError, TypeError) as exc:
            log.error("room %s: its snapshot cannot be read (%s); not adopted", code, exc)
            return False
        players = [p for p in (self._member(i, n, now, owner) for i, n in snap["players"]) if p]
        if not players:
            return False
        watchers = [p for p in (self._member(i, n, now, owner) for i, n in snap["spectators"]) if p]
        host = next((p for p in players if p.id == snap["host"]), players[0])
        fresh = deal is None  # after a race: a new deal, as a rematch draws (below)
        if deal is None:
            fixed = None
            deal = GameCode(rules, self._random_deal())
            salt: str | None = self._new_salt()
        else:
            salt = snap["salt"]
        room = Room(
            self._play,
            code,
            host,
            rules,
            fixed,
            deal,
            int(snap["max_players"]),
            bool(snap["undo"]),
            int(snap["time_limit"]),
            hints=bool(snap["hints"]),
            salt=salt,
            rated=bool(snap.get("rated", False)),
        )
        # An older node's snapshot has no "quick": an ordinary room, as it was then.
        room.quick = bool(snap.get("quick", False))
        # An older node's snapshot has no "winnable": its deal is not proven, as it was not.
        room.wants_winnable = bool(snap.get("wants_winnable", False))
        room.winnable = bool(snap.get("winnable", False))
        if fresh:
            self._play.redeal(room, drawn=True)
        for p in players:
            room.seat_player(p)
        for p in watchers:
            room.seat_spectator(p)
        names = {p.name for p in players}
        room.ready = {n for n in snap["ready"] if n in names}
        self._rooms[code] = room
        log.info(
            "room %s: adopted in its lobby with %d players, %d spectators",
            code,
            len(players),
            len(watchers),
        )
        for p in room.members():  # a member who said hello meanwhile
            if p.connected:
                room.resync(p, now)
        return True

    def _member(self, pid: int, name: str, now: float, owner: str) -> _Player | None:
        """The player to seat (``Shared.member_here``); None if they are in a room
        already, or away on another node than the dead ``owner`` (they moved on)."""
        p = self._players.get(pid)
        if p is not None and (
            p.room is not None or p.daily_pending or self._shared.moved_on(p, owner)
        ):
            return None
        return self._shared.member_here(pid, name, now)
