"""The session's side of the quick-race pool: ``quick`` in, ``pool`` out, rooms formed.

A player who says ``quick`` is looked up (``Rate``: their rating, and when others usually
play), then waits in the pool (``pool.Pool``: the matching rule, pure) and is told so
(``pool``); everyone waiting is told again when the number waiting changes, at most once
a second. A room the pool forms is an ordinary ``Room`` (the ``room`` package) with a deal drawn
in secret and its commitment, every player seated and ready, and its countdown begun at
once: its players get ``room`` (``quick`` true), then ``countdown``, as in any room
(docs/protocol.md 4.26). Leaving (``quick`` with ``leave``), disconnecting, or going
into another room takes a player out of the pool.

On a cluster the pool is the whole cluster's: see ``server.cluster.cluster`` (the pooler) and
docs/cluster.md. This part then keeps only the players of this node, and forms the
rooms the pooler placed here (``seat``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from protocol import GameCode, Rules
from protocol.messages import Create, Daily, Ghost, Join, Left, Message, Watch, encode
from protocol.messages import Pool as PoolMsg
from protocol.messages import Quick as QuickMsg

from .effects import PoolEnter, PoolLeave, QuickInvite, Rate
from .play import Play
from .pool import Group, Pool, PoolConfig, Waiter
from .room import Room
from .shared import Part, Shared
from .state import _Conn, _Player
from .timers import TimerKind

__all__ = ["ENTERING", "POLL_S", "Quick"]

log = logging.getLogger("yukon.rooms")

#: How often the pool is matched while at least two players wait (its band widens).
POLL_S = 0.5
#: The number waiting is sent again at most this often.
NOTIFY_S = 1.0
#: On a cluster: how long a quick room waits for its players from other nodes (their
#: gateways send them in as a ``join``) before it starts with those who came.
GATHER_S = 5.0
#: The rules of every quick race.
QUICK_RULES = "C"
#: A quick room's undo and time limit: those of a room created with no options.
_CREATE = Create()
#: Requests that take a waiting player out of the pool: they go into another room.
ENTERING = (Create, Join, Watch, Daily, Ghost)


class Quick(Part):
    """The pool of this hub and the players in it (see the module docstring)."""

    def __init__(self, shared: Shared, play: Play) -> None:
        super().__init__(shared)
        self._play = play
        cfg = shared.config
        self.config = PoolConfig(
            min_players=cfg.quick_min_players,
            max_players=cfg.quick_max_players,
            max_wait_s=cfg.quick_max_wait_s,
            fill_s=min(cfg.quick_fill_s, cfg.quick_max_wait_s),
        )
        self.pool = Pool(self.config)
        #: Players whose rating is being looked up (``Rate``), by id.
        self._pending: set[int] = set()
        #: When others usually play, as storage last said (``Hub.quick_rated``).
        self.usual: str | None = None
        #: The number waiting as last sent, and when; when the poll timer is due.
        self._shown = 0
        self._shown_at = float("-inf")
        self._poll_at: float | None = None
        #: The whole cluster's count, when a pooler reports one (None: this pool's own).
        self.cluster_waiting: int | None = None
        #: A cluster's node: when each of its waiting players entered (wall time), and the
        #: quick rooms placed here waiting for players from other nodes, by code: the
        #: room, the ids expected, and until when they are waited for.
        self._joined_wall: dict[int, float] = {}
        self._gathering: dict[str, tuple[Room[_Player], set[int], float]] = {}

    @property
    def cluster(self) -> bool:
        """A cluster's node: the pool is the cluster's (``server.cluster.quickpool`` matches)."""
        return bool(self._shared.node)

    # -- requests ---------------------------------------------------------------------------

    def waiting(self, p: _Player) -> bool:
        """Is ``p`` in the pool, or on their way in?"""
        return p.id in self.pool or p.id in self._pending

    def ask(self, c: _Conn, p: _Player, msg: QuickMsg, now: float) -> None:
        """``quick``: enter the pool (``leave``: leave it)."""
        if msg.leave:
            self.leave(p, now)
            return
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return
        if p.id in self.pool:
            self._status(p, now)  # already waiting: where they stand, again
            return
        if p.id in self._pending:
            return
        if not self._play.leave_over(c, p, now):  # in a room: already_in_room
            return
        self._pending.add(p.id)
        self._out.append(Rate(p.id))

    def rated(self, player_id: int, rating: float, usual: str | None, now: float) -> None:
        """Storage answered ``Rate``: the player waits from now, if still here and free."""
        self.usual = usual
        if player_id not in self._pending:
            return  # left, or gone, while being looked up
        self._pending.discard(player_id)
        p = self._players.get(player_id)
        if p is None or p.conn is None or p.room is not None:
            return
        lane = self._shared.lane(player_id)
        self.pool.enter(player_id, rating, now, lane)
        if self.cluster:
            joined = self._joined_wall[player_id] = self._wall()
            self._out.append(PoolEnter(player_id, rating, joined, lane))
        log.info("%s waits for a quick race (rating %.0f)", p.name, rating)
        if not self._notify(now):  # everyone hears the new count, or this player alone
            self._status(p, now)
        self.tick(now)

    def leave(self, p: _Player, now: float) -> None:
        """``quick`` with ``leave``, or another room: out of the pool, told ``left``."""
        self._pending.discard(p.id)
        self._out_of_pool(p.id)
        self._send(p, self._message(p, "left", now))
        self._notify(now)

    def gone(self, p: _Player, now: float) -> None:
        """The player's connection is gone: out of the pool, nothing to tell them."""
        self._pending.discard(p.id)
        if self._out_of_pool(p.id):
            self._notify(now)

    def _out_of_pool(self, player_id: int) -> bool:
        """Out of this node's pool, and the cluster's; False if they were not in it."""
        if not self.pool.leave(player_id):
            return False
        if self._joined_wall.pop(player_id, None) is not None:
            self._out.append(PoolLeave(player_id))
        return True

    def failed(self, player_id: int, now: float) -> None:
        """Storage could not answer ``Rate``: the player is told and may ask again."""
        if player_id in self._pending:
            self._pending.discard(player_id)
            p = self._players.get(player_id)
            c = self._conns.get(p.conn) if p is not None and p.conn is not None else None
            if c is not None and not c.closed:
                self._error(c, "unavailable", "the database is not answering; try again")

    # -- the pool's clock -------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """Form the rooms due now, tell the waiting how many wait, and poll again while
        the pool could form a room (its bands widen with the wait)."""
        if self._poll_at is not None and self._poll_at <= now:
            self._poll_at = None
        if not self.cluster:  # on a cluster the pooler matches (``quick_seat``)
            for group in self.pool.match(now):
                self.seat(group, now)
        self._gather(now)
        self._notify(now)
        if (len(self.pool) or self._gathering) and self._poll_at is None:
            self._poll_at = now + POLL_S
            self._timer(self._poll_at, TimerKind.QUICK, None)

    def _count(self) -> int:
        """The number waiting: this pool's, or the cluster's as last counted (never fewer
        than this node's own: a count taken before they entered lags)."""
        if self.cluster_waiting is None:
            return len(self.pool)
        return max(self.cluster_waiting, len(self.pool))

    def _notify(self, now: float) -> bool:
        """Everyone waiting hears the new number waiting, at most once a second; True if
        they did."""
        count = self._count()
        if count == self._shown or now - self._shown_at < NOTIFY_S:
            return False
        self._shown = count
        self._shown_at = now
        for w in self.pool.waiters():
            p = self._players.get(w.player)
            if p is not None:
                self._send(p, self._message(p, "waiting", now))
        return True

    def _status(self, p: _Player, now: float) -> None:
        self._send(p, self._message(p, "waiting", now))

    def _message(self, p: _Player, state: str, now: float) -> Message:
        s = self.pool.status(p.id, now, waiting=self._count())
        return PoolMsg(
            state=state,
            waiting=s.waiting,
            waited_ms=s.waited_ms if state == "waiting" else 0,
            max_wait_ms=s.max_wait_ms,
            band=s.band,
            usual=self.usual,
        )

    # -- rooms ------------------------------------------------------------------------------

    def seat(self, group: Group, now: float) -> str | None:
        """A room for ``group``, its countdown begun; its code, or None if it could not
        form (fewer than ``min_players`` still here and free: those go back to waiting)."""
        members: list[_Player] = []
        for w in group.players:
            p = self._players.get(w.player)
            if p is not None and p.conn is not None and (p.room is None or p.room.over_for(p)):
                members.append(p)
        if len(members) < self.config.min_players:
            for p in members:
                self._back(p, group.players)
            return None
        play = self._play
        code = None if play.rooms_full() else play.free_room_code()
        if code is None:
            for p in members:
                c = self._conns.get(p.conn) if p.conn is not None else None
                if c is not None:
                    self._error(c, "server_full", "no room for a quick race just now; try again")
                    self._send(p, self._message(p, "left", now))
            return None
        room = self._open(code, members, len(members), now)
        self._begin(room, now)
        return room.code

    def _open(self, code: str, members: list[_Player], size: int, now: float) -> Room[_Player]:
        """Quick room ``code`` for ``size`` players, ``members`` seated (the first its host)."""
        play = self._play
        for p in members:
            c = self._conns.get(p.conn) if p.conn is not None else None
            if p.room is not None and c is not None:
                play.leave_over(c, p, now)
        rules = Rules.parse(QUICK_RULES)
        host = members[0]
        room = Room(
            play,
            code,
            host,
            rules,
            None,
            GameCode(rules, play.random_deal()),
            size,
            _CREATE.undo,
            _CREATE.time_limit,
            salt=play.new_salt(),
            rated=True,  # every quick race is rated (docs/ratings.md)
        )
        room.quick = True
        room.wants_winnable = True  # rated: a deal the solver proved won (issue 40)
        play.redeal(room, drawn=True)
        self._rooms[code] = room
        for p in members:
            room.seat_player(p)
            room.ready.add(p.name)
        log.info("quick race: room %s for %s", code, ", ".join(p.name for p in members))
        room.room_changed(now, progress=False)
        return room

    def _begin(self, room: Room[_Player], now: float) -> None:
        """Everyone is ready, the countdown begins (docs/protocol.md 4.26)."""
        for m in room.players:
            room.ready.add(m.name)
        room.start(room.host, now)

    # -- a cluster's quick rooms (docs/cluster.md) ------------------------------------------

    def count(self, waiting: int, now: float) -> None:
        """The cluster's pool holds ``waiting`` players (its pooler's count)."""
        self.cluster_waiting = waiting
        self._notify(now)

    def place(self, players: Sequence[tuple[int, str]], now: float) -> None:
        """The pooler placed a quick room here for ``players`` (id, gateway node; the
        longest waiting first): the room opens with this node's players seated, and
        the others' gateways send them in (``QuickInvite``); it starts when all came,
        or after ``GATHER_S`` with those who did."""
        node = self._shared.node
        local: list[_Player] = []
        remote: list[tuple[int, str]] = []
        for pid, gateway in players:
            if gateway != node:
                remote.append((pid, gateway))
                continue
            p = self._players.get(pid)
            if p is not None and p.conn is not None and pid in self.pool:
                local.append(p)
        code = None if not local or self._play.rooms_full() else self._play.free_room_code()
        if code is None:
            for pid, gateway in remote:  # nobody here to host it: they wait on
                self._out.append(QuickInvite(gateway, pid, ""))
            for p in local:
                self._out.append(
                    PoolEnter(
                        p.id, self._rating(p.id), self._joined_wall[p.id], self._shared.lane(p.id)
                    )
                )
            return
        for p in local:
            self.pool.leave(p.id)
            self._joined_wall.pop(p.id, None)
        room = self._open(code, local, len(players), now)
        if not remote:
            self._begin(room, now)
            return
        self._gathering[room.code] = (room, {pid for pid, _ in players}, now + GATHER_S)
        for pid, gateway in remote:
            self._out.append(QuickInvite(gateway, pid, room.code))
        self.tick(now)

    def invited(self, player_id: int, code: str, now: float) -> None:
        """Player ``player_id``'s quick room is ``code`` on another node: they go there as
        with their own ``join`` (``code`` "": it could not form, they wait on)."""
        p = self._players.get(player_id)
        if p is None or p.conn is None or player_id not in self.pool:
            return  # gone, or left the pool: the room starts without them
        c = self._conns.get(p.conn)
        if c is None or c.closed:
            return
        if not code:
            rating, lane = self._rating(player_id), self._shared.lane(player_id)
            self._out.append(PoolEnter(player_id, rating, self._joined_wall[player_id], lane))
            return
        self.pool.leave(player_id)
        self._joined_wall.pop(player_id, None)
        self._shared.frame = encode(Join(code))
        self._play.join(c, p, code, now, spectator=False)

    def relane(self, now: float) -> None:
        """Marks changed (``Hub.enforce``): each waiting player waits on in their lane as
        it is now, keeping their place; a cluster's pool hears the new lane too."""
        for w in self.pool.waiters():
            lane = self._shared.lane(w.player)
            if lane != w.lane:
                self.pool.enter(w.player, w.rating, w.joined, lane)
                if self.cluster and w.player in self._joined_wall:
                    joined = self._joined_wall[w.player]
                    self._out.append(PoolEnter(w.player, w.rating, joined, lane))
        self.tick(now)

    def _rating(self, player_id: int) -> float:
        return next((w.rating for w in self.pool.waiters() if w.player == player_id), 0.0)

    def _gather(self, now: float) -> None:
        """Quick rooms placed here start once their players came, or at the deadline."""
        for code, (room, expected, deadline) in list(self._gathering.items()):
            if self._rooms.get(code) is not room or room.state != "lobby":
                del self._gathering[code]
                continue
            present = {m.id for m in room.players}
            if not (expected <= present or now >= deadline):
                continue
            del self._gathering[code]
            if len(room.players) >= self.config.min_players:
                self._begin(room, now)
                continue
            for m in list(room.players):  # too few came: out, to press Quick race again
                room.leave(m, now)
                self._send(m, Left(code))
                self._send(m, self._message(m, "left", now))

    def _back(self, p: _Player, waiters: Sequence[Waiter]) -> None:
        """A player of a group that could not form waits on, from when they began."""
        for w in waiters:
            if w.player == p.id:
                self.pool.enter(w.player, w.rating, w.joined, self._shared.lane(w.player))
