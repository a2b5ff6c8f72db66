"""``Queries``: what the hub answers without an event: figures for logs and metrics, and
the questions a cluster's directory asks (which rooms, seats, watchers, lobbies and races
are here, and whose guests).

A seam of its own because these never change anything: no time, no effects, only the
tables read. ``Hub`` is built on it; the tables are the hub's (``Shared``), bound by
``Hub.__init__``.
"""

from __future__ import annotations

from typing import Any

from ..domain.stock import DealStock
from .lobbies import Lobbies
from .play import Play
from .room import Room, RoomState
from .shared import Shared
from .state import _Conn, _Player

__all__ = ["Queries"]


class Queries:
    """The hub's questions, answered from its tables (see the module docstring)."""

    _shared: Shared
    _conns: dict[int, _Conn]
    _rooms: dict[str, Room[_Player]]
    _lobbies: Lobbies
    _play: Play

    # -- figures for logs and metrics -----------------------------------------------------

    @property
    def connections(self) -> int:
        return len(self._conns)

    @property
    def winnable_stock(self) -> DealStock:
        """The stock of proven-winnable deals (``rooms.deals``): its size, its figures."""
        return self._play.deals.stock

    @property
    def rooms(self) -> int:
        return len(self._rooms)

    @property
    def races_running(self) -> int:
        return sum(1 for r in self._rooms.values() if r.state == RoomState.RACING)

    # -- the directory's questions ---------------------------------------------------------

    def has_room(self, code: str) -> bool:
        return code in self._rooms

    def room_open(self, code: str, key: str | None = None) -> bool:
        """An ordinary room with this code is here: one that an invite link joins (a daily
        or ghost room is private), for ``/r/CODE`` (``server.pages.http``); an invite-only
        room only with its ``key`` (the link's ``?k=``), else it is not here at all."""
        room = self._rooms.get(code)
        return room is not None and not room.private and room.admits(key)

    def seated(self, player_id: int) -> bool:
        """The player is in a room here (a cluster's resume needs no directory then)."""
        p = self._shared.players.get(player_id)
        return p is not None and p.room is not None

    def peers(self) -> set[str]:
        """The other nodes this one relays for: owners of its away sessions, gateways of
        its guests (their heartbeats are watched)."""
        found = {p.away for p in self._shared.players.values() if p.away is not None}
        found.update(node for node, _ in self._shared.guests)
        return found

    def guest_conn(self, route: tuple[str, int]) -> int | None:
        """The guest here that stands for the session ``route`` (its gateway and its
        connection there), if any."""
        return self._shared.guests.get(route)

    def route(self, conn: int) -> tuple[str, int] | None:
        """Where a guest's frames go: its gateway and its connection there."""
        return self._shared.routes.get(conn)

    def seats(self) -> dict[str, list[int]]:
        """Every room here with its members' player ids (the directory's leases and seats)."""
        return {code: [m.id for m in r.members()] for code, r in self._rooms.items()}

    def watchers(self) -> dict[str, list[tuple[int, str]]]:
        """Every room here that has spectators, with their ids and names (a takeover
        seats them again: ``restore``)."""
        return {
            code: [(m.id, m.name) for m in r.spectators]
            for code, r in self._rooms.items()
            if r.spectators
        }

    def lobbies(self) -> dict[str, dict[str, Any]]:
        """Snapshots of the rooms here that have no race running (``Lobbies.snapshots``):
        the directory keeps them, so that a node taking over adopts them."""
        return self._lobbies.snapshots()

    def race_uids(self) -> dict[str, str]:
        """Each running race's uid by room code (the journal's fencing)."""
        return {code: r.uid for code, r in self._rooms.items() if r.race is not None and r.uid}
