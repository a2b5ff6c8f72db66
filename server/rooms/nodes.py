"""The seam between sessions and rooms: a session whose room lives on another node.

A node of a cluster (docs/cluster.md) holds its clients' *sessions* (the connection, the
flood bucket, the hello and the identity) and the *rooms* it owns. A player whose room
lives on another node is *away* (``_Player.away``): this node, their gateway, relays
their frames, untouched, to the owner (``Forward``), where a *guest* ``_Conn`` (marked
with its route, ``_Conn.guest``) stands for the session; everything the owner sends to a
guest goes back along its route. The rest of the hub does not know the difference: a
guest is a connection, its player a player, and to a ``Room`` a member like any (it never
sees a connection). Alone (no node id), none of this happens.

Every step is an effect (``Locate``, ``Handover``, ``Forward``, ``Detach``, ``Release``) or an
entry point, so two hubs wired by an in-memory relay are tested like one.
"""

from __future__ import annotations

import logging

from protocol.messages import CLOSE_REPLACED, Route

from ..domain.records import Standing
from .effects import Detach, Release, Send
from .handshake import Handshake, handover
from .play import Play
from .shared import Part, Shared
from .state import CLOSE_RESTARTING, _Conn, _Player

__all__ = ["CLOSE_RESTARTING", "Nodes"]

log = logging.getLogger("yukon.rooms")


class Nodes(Part):
    """Sessions away on other nodes (this node their gateway) and guests of other nodes
    (this node their room's owner)."""

    def __init__(self, shared: Shared, play: Play, handshake: Handshake) -> None:
        super().__init__(shared)
        self._play = play
        self._handshake = handshake
        self._next_guest = 0

    def begin(self) -> None:
        """A new event: routes of guests gone in the last one are forgotten now."""
        stale = self._shared.stale
        if stale:
            for gid in stale:
                self._shared.routes.pop(gid, None)
            stale.clear()

    # -- the gateway's side ---------------------------------------------------------------

    def located(self, c: _Conn, code: str, node: str | None, frame: bytes | str) -> bool:
        """The directory answered where room ``code`` lives. True: the session goes away
        to ``node`` with ``frame``; False: the frame is for this node (the room is here,
        or nowhere: the join answers ``no_such_room``)."""
        c.locating = False
        p = c.player
        if p is None or c.closed or node is None or node == self._shared.node:
            return False
        if p.room is not None or p.daily_pending or p.away is not None:
            return False  # something happened meanwhile: the join answers it here
        p.away_room = code
        self.go_away(c, p, node, frame)
        return True

    def go_away(self, c: _Conn, p: _Player, node: str, frame: bytes | str | None) -> None:
        """From now on the session's frames go to ``node``, which holds its room."""
        p.away = node
        self._out.append(handover(c, p, node, frame))

    def returned(self, c: _Conn) -> None:
        """The owner released the session: its player is in no room there any more."""
        p = c.player
        if p is not None:
            p.away = None

    def away_closed(self, c: _Conn) -> None:
        """The owner closed the session (replaced, flooding, the room moved). Its player is
        forgotten here: their next hello asks storage and the directory where they are."""
        p = c.player
        if p is not None and p.away is not None:
            p.away = None
            self._forget(p)

    def disconnected(self, c: _Conn) -> None:
        """A session's connection is gone: its guest, if any, disconnects too, and its
        player is forgotten here. Their room lives on the owner, which keeps their resume
        window; what this gateway remembered of it (away there, in that room) may be
        stale by their next hello (a client that followed its route, left the room
        there, and came back through here: the compose drill found it handed over to a
        closed room). So their next hello here asks storage and the directory, as it
        would on any node."""
        p = c.player
        if p is not None and p.away is not None and p.conn == c.id:
            self._out.append(Detach(p.away, c.id))
            p.away = None
            p.away_room = None
            self._forget(p)

    def owner_gone(self, node: str) -> None:
        """``node`` stopped (its heartbeat lapsed): every session away there is closed with
        1012, so that its client resumes, and finds its room wherever it was taken."""
        self._send_home(node, "the room's node went away; resume", detach=False)

    def gap(self, now: float) -> None:
        """Relay messages to this node were lost: every session away from here closes
        with 1012, and so does every guest here (the close goes to its gateway, which
        closes its client): each client resumes and is told the room as it stands."""
        reason = "the cluster's relay lost messages; resume"
        self._send_home(None, reason, detach=True)
        self._disconnect_guests(None, now, close=reason)

    def _send_home(self, node: str | None, reason: str, *, detach: bool) -> None:
        """Close with 1012 every session away on ``node`` (None: on any node) and forget
        its player here; ``detach``: the owner is alive, and its guest disconnects."""
        for p in list(self._players.values()):
            owner = p.away
            if owner is None or (node is not None and owner != node):
                continue
            c = self._conns.get(p.conn) if p.conn is not None else None
            p.away = None
            if c is not None:
                if detach:
                    self._out.append(Detach(owner, c.id))
                self._close(c, CLOSE_RESTARTING, reason)
            self._forget(p)

    def _disconnect_guests(self, node: str | None, now: float, *, close: str = "") -> None:
        """Every guest of ``node``'s sessions (None: of any node's) disconnects here, its
        resume window running; ``close``: its gateway closes its client too, with 1012."""
        for route, gid in list(self._shared.guests.items()):
            if node is not None and route[0] != node:
                continue
            c = self._conns.get(gid)
            if c is not None:
                if close:
                    self._close(c, CLOSE_RESTARTING, close)
                self._drop_guest(c)
            self._handshake.disconnect(gid, now)

    def kick(self, c: _Conn) -> None:
        """The player said hello on a newer session on another node."""
        if c.player is not None:
            self._close(c, CLOSE_REPLACED, "replaced by a newer connection")

    def _forget(self, p: _Player) -> None:
        if self._tokens.get(p.token) is p:
            del self._tokens[p.token]
        if p.room is None and self._players.get(p.id) is p:
            del self._players[p.id]

    # -- the owner's side -----------------------------------------------------------------

    def guest_attach(
        self,
        route: tuple[str, int],
        *,
        player_id: int,
        name: str,
        token: str,
        registered: float,
        address: str,
        now: float,
        follow: bool = False,
        standing: Standing | None = None,
    ) -> _Conn:
        """A session of another node becomes a guest here, bound to its player (who keeps
        their room, if they have one here: a resume through another node). ``standing``
        (the gateway's) is theirs here if this node knows none: a player new here, or one
        without a rating (restored from a journal). One known here is kept: a rated race
        here moved it, which the gateway did not see."""
        old = self._shared.guests.get(route)
        if old is not None and old in self._conns:
            return self._conns[old]
        self._next_guest -= 1
        gid = self._next_guest
        cfg = self._config
        c = _Conn(gid, now, cfg.bucket_capacity, now, address, guest=route, follow=follow)
        self._conns[gid] = c
        self._shared.guests[route] = gid
        self._shared.routes[gid] = route
        p = self._players.get(player_id)
        new = p is None
        if p is None:
            p = _Player(player_id, name, token)
            self._players[player_id] = p
        elif p.token != token:  # restored after a takeover: now its token is known
            if self._tokens.get(p.token) is p:
                del self._tokens[p.token]
            p.token = token
        if standing is not None and (new or (p.rating is None and standing.rating is not None)):
            p.rating, p.provisional = standing.rating, standing.provisional
            p.streak = standing.streak
        p.registered = registered
        self._tokens[token] = p
        log.info("%s is a guest from node %s", name, route[0])
        self._handshake.attach(c, p, now, welcome=False)
        return c

    def route(self, c: _Conn) -> None:
        """Room affinity: a guest whose client follows routes, once its player is seated in
        a room here, is told to connect here directly (``route``), once. Sent after what
        the event sent it (the join's ``room``, a resume's resync), so the client has its
        answer before it moves; its resume here then finds the player in memory."""
        p = c.player
        if not c.follow or c.guest is None or c.closed or p is None or p.conn != c.id:
            return
        room = p.room
        if room is None or room.code not in self._rooms:
            return
        c.follow = False
        self._out.append(Send(c.id, Route(self._shared.node, room.code)))

    def guest(self, route: tuple[str, int]) -> _Conn | None:
        gid = self._shared.guests.get(route)
        return None if gid is None else self._conns.get(gid)

    def settle(self, c: _Conn) -> None:
        """After a guest's event: a guest whose player is in no room goes home."""
        p = c.player
        if c.guest is None or c.closed or p is None or p.conn != c.id:
            return
        if p.room is not None or p.daily_pending or c.locating:
            return
        self._drop_guest(c)
        self._conns.pop(c.id, None)
        p.conn = None
        if self._tokens.get(p.token) is p:
            del self._tokens[p.token]
        self._players.pop(p.id, None)
        self._out.append(Release(c.guest[0], c.guest[1], c.bounce))

    def late(self, route: tuple[str, int], now: float) -> _Conn | None:
        """The connection a frame of a guest gone since is for, if its player replaced it
        with a connection here (a route followed) within ``REPLACED_KEPT_S``: what the
        client sent before it moved (a ``ready``, a move) is still the player's."""
        replaced = self._shared.replaced
        if not replaced:
            return None
        for key in [k for k, (_, until) in replaced.items() if until <= now]:
            del replaced[key]
        found = replaced.get(route)
        if found is None:
            return None
        p = self._players.get(found[0])
        c = self._conns.get(p.conn) if p is not None and p.conn is not None else None
        return c if c is not None and not c.closed and c.player is p else None

    def bounce(self, route: tuple[str, int], frame: bytes | str) -> None:
        """A frame for a guest released already: back to its gateway, which serves it."""
        self._out.append(Release(route[0], route[1], frame))

    def guest_detach(self, route: tuple[str, int], now: float) -> None:
        """The guest's session is gone on its gateway: here, a disconnect like any."""
        gid = self._shared.guests.get(route)
        if gid is not None:
            c = self._conns.get(gid)
            if c is not None:
                self._drop_guest(c)
            self._handshake.disconnect(gid, now)

    def gateway_gone(self, node: str, now: float) -> None:
        """``node`` stopped: its guests here disconnect (their players may resume anywhere)."""
        self._disconnect_guests(node, now)

    def _drop_guest(self, c: _Conn) -> None:
        self._shared.drop_guest(c)
        c.closed = True
