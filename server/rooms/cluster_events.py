"""The hub's entry points for a cluster's events (docs/cluster.md): a look-up answered, a
session handed back or closed by the room's owner, a guest's frames, a node gone, a lobby
adopted, a room moved. Each sets the event's time, hands it to ``Nodes`` (or ``Play``)
and returns the effects, as every entry point of ``Hub`` does; ``Hub`` inherits them.

Kept apart from ``hub.py`` so that a reader of the hub's own events (a connection's, a
message's, a timer's, storage's answers) holds one file; most of this is the relay's,
which routing alone (issue 41 item 1) will remove.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from protocol.messages import Join, MessageError, Watch, decode_client

from ..domain.records import Standing
from .effects import Effect
from .nodes import CLOSE_RESTARTING, Nodes
from .password import Password
from .queries import Queries
from .state import _Conn

__all__ = ["ClusterEvents"]

log = logging.getLogger("yukon.rooms")


class ClusterEvents(Queries):
    """A cluster's events, as ``Hub`` entry points (the parts' tables: ``Queries``)."""

    _nodes: Nodes
    _password: Password
    _out: list[Effect]
    #: ``Hub._handle``: a frame that passed the flood bucket, decoded and acted on.
    _handle: Callable[[_Conn, bytes | str, float], None]

    def _begin(self, now: float) -> None:
        """An event at ``now``: its effects start afresh."""
        self._out.clear()
        self._shared.now = now
        if self._shared.stale:
            self._nodes.begin()

    def located(
        self, conn: int, code: str, node: str | None, frame: bytes | str, now: float
    ) -> list[Effect]:
        """The directory says room ``code`` lives on ``node`` (None: nowhere): the session
        goes there with its join or watch ``frame``, or the frame is answered here."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None and not self._nodes.located(c, code, node, frame):
            c.locating = False
            p = c.player
            if p is not None and not c.closed:
                try:
                    message = decode_client(frame)
                except MessageError:  # it was decoded once already
                    return self._shared.flush()
                if isinstance(message, (Join, Watch)):
                    spectator = isinstance(message, Watch)
                    self._play.join(
                        c, p, message.room, now, spectator=spectator, located=True, key=message.key
                    )
        return self._shared.flush()

    def returned(self, conn: int, frame: bytes | str | None, now: float) -> list[Effect]:
        """The owner released this session (its player is in no room there): it is served
        here again, starting with ``frame``, which reached the owner too late, if any."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None:
            self._nodes.returned(c)
            if frame is not None and not c.closed and c.player is not None:
                self._handle(c, frame, now)
        return self._shared.flush()

    def closed_by_owner(self, conn: int, code: int, reason: str, now: float) -> list[Effect]:
        """The owner closed this away session's guest: the connection closes the same way."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None:
            self._nodes.away_closed(c)
            self._shared.close(c, code, reason)
        return self._shared.flush()

    def kick(self, conn: int, now: float) -> list[Effect]:
        """The player of ``conn`` said hello on another node since: close this one (4001)."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None:
            self._nodes.kick(c)
        return self._shared.flush()

    def node_gone(self, node: str, now: float) -> list[Effect]:
        """Node ``node`` stopped: sessions away there close with 1012 (their clients resume
        wherever the room was taken), and its guests here disconnect."""
        self._begin(now)
        self._nodes.owner_gone(node)
        self._nodes.gateway_gone(node, now)
        return self._shared.flush()

    def password_failed_elsewhere(self, key: str, now: float) -> list[Effect]:
        """Another node judged a wrong password from address ``key``: it counts here too
        (``Password.failed_elsewhere``)."""
        self._begin(now)
        self._password.failed_elsewhere(key, now)
        return self._shared.flush()

    def relay_gap(self, now: float) -> list[Effect]:
        """This node missed relay messages (its channel broke): every session it relays
        closes with 1012 and resumes (``Nodes.gap``)."""
        self._begin(now)
        self._nodes.gap(now)
        return self._shared.flush()

    def guest_attach(
        self,
        route: tuple[str, int],
        *,
        player_id: int,
        name: str,
        token: str,
        registered: float,
        address: str,
        frame: bytes | str | None,
        now: float,
        follow: bool = False,
        standing: Standing | None = None,
    ) -> list[Effect]:
        """A session of node ``route[0]`` (its connection ``route[1]``) is a guest here:
        its player's room is here, or will be (``frame``, a join or watch). ``follow``:
        once seated, its client is told to connect here (``Nodes.route``). ``standing``:
        their rating and streak as the gateway knows them (``Nodes.guest_attach``)."""
        self._begin(now)
        c = self._nodes.guest_attach(
            route,
            player_id=player_id,
            name=name,
            token=token,
            registered=registered,
            address=address,
            now=now,
            follow=follow,
            standing=standing,
        )
        if frame is not None and not c.closed:
            self._handle(c, frame, now)
        self._nodes.route(c)
        self._nodes.settle(c)
        return self._shared.flush()

    def guest_frame(self, route: tuple[str, int], frame: bytes | str, now: float) -> list[Effect]:
        """A frame of a guest (its gateway took it from the flood bucket already)."""
        self._begin(now)
        c = self._nodes.guest(route)
        if c is None:
            moved = self._nodes.late(route, now)
            if moved is not None:  # sent before its client followed a route here
                self._handle(moved, frame, now)
            else:
                self._nodes.bounce(route, frame)
        elif not c.closed:
            self._handle(c, frame, now)
            self._nodes.route(c)
            self._nodes.settle(c)
        return self._shared.flush()

    def guest_detach(self, route: tuple[str, int], now: float) -> list[Effect]:
        """A guest's connection is gone on its gateway."""
        self._begin(now)
        self._nodes.guest_detach(route, now)
        return self._shared.flush()

    def unreachable(self, conn: int, text: str, now: float) -> list[Effect]:
        """The directory could not answer a ``Locate``: the join is refused, ``unavailable``."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None:
            c.locating = False
            if not c.closed:
                self._shared.error(c, "unavailable", text)
        return self._shared.flush()

    def adopt_lobby(
        self, code: str, snapshot: dict[str, Any], now: float, *, owner: str = ""
    ) -> list[Effect]:
        """Rebuild room ``code`` from the snapshot its dead owner kept (``Lobbies.adopt``);
        no effect if it could not be (then ``has_room`` stays False)."""
        self._begin(now)
        self._lobbies.adopt(code, snapshot, now, owner=owner)
        return self._shared.flush()

    def drop_room(self, code: str, now: float) -> list[Effect]:
        """This node lost room ``code`` (its lease was taken, or the database fenced its
        writes): its members close with 1012 and resume on the new owner; nothing of the
        room stays here."""
        self._begin(now)
        room = self._play.drop(code)
        if room is not None:
            log.warning("room %s: lost to another node; its members resume there", code)
            for m in room.members():
                m.room = None
                c = self._conns.get(m.conn) if m.conn is not None else None
                if c is not None:
                    self._shared.close(
                        c, CLOSE_RESTARTING, "the room moved to another node; resume"
                    )
                    if c.guest is not None:
                        self._shared.drop_guest(c)
                        del self._conns[c.id]
                m.conn = None
                self._shared.tokens.pop(m.token, None)
                self._shared.players.pop(m.id, None)
        return self._shared.flush()
