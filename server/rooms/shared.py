"""What every part of the hub shares: the tables, the timers, the effects being gathered,
and the session's plumbing on them (``send``, ``error``, ``close``, timers, the flood
bucket). Rooms (``room.Room``) do not see it: they reach the outside through ``Play``.

One ``Shared`` per hub. Each part of it (``Part``: the handshake, the password, play, hints,
the daily deal, restarts) is built on it and binds its names once, so a part's code reads
``self._send(...)``, ``self._rooms`` as the hub's own did, at the cost of a method of the
hub: the move path has no extra lookup for them.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable

from protocol.messages import Error, Message

from .config import HubConfig
from .effects import Close, Effect, Send
from .room import OVERTAKE, Room
from .state import CLOSE_POLICY, CLOSE_RESTARTING, _Conn, _Player
from .timers import TimerKind
from .windows import SlidingCounts

__all__ = ["Part", "Shared"]

log = logging.getLogger("yukon.rooms")

#: Decode errors that count towards the garbage limit.
_STRIKE_CODES = frozenset(
    {
        "bad_frame",
        "too_big",
        "bad_msgpack",
        "bad_message",
        "unknown_type",
        "bad_field",
        "hello_first",
        "already_hello",
    }
)


class Shared:
    """The state the parts of one hub share, and the plumbing every part sends through.

    The containers are made once and never replaced (``flush`` empties ``out`` in place),
    so a part may hold on to them. ``now`` is the time of the event at hand: each entry
    point of the hub sets it first.
    """

    def __init__(
        self, config: HubConfig, wall_clock: Callable[[], float], *, node: str = ""
    ) -> None:
        self.config = config
        #: This node's id in a cluster; "" alone (the cluster of one: no other node exists,
        #: so nothing is looked up elsewhere).
        self.node = node
        #: Wall time (seconds since the epoch): dates, the daily deal, records.
        self.wall = wall_clock
        self.now = 0.0
        self.conns: dict[int, _Conn] = {}
        #: Players known to this process, by token (in memory only) and by id.
        self.tokens: dict[str, _Player] = {}
        self.players: dict[int, _Player] = {}
        self.rooms: dict[str, Room[_Player]] = {}
        #: Room codes held for daily attempts being numbered, by player id: the room is
        #: reserved before storage numbers the attempt, so that no refusal can come after
        #: the numbering and turn a counted attempt into practice.
        self.daily_rooms: dict[int, str] = {}
        #: Per-address and per-player budgets counted in time (``windows``; 5.5).
        self.opens = SlidingCounts(config.max_opens_per_address, config.opens_window_s)
        self.room_misses = SlidingCounts(
            config.max_room_misses_per_address, config.room_miss_window_s
        )
        self.player_attempts = SlidingCounts(
            config.max_attempts_per_player, config.attempt_window_s
        )
        self.address_attempts = SlidingCounts(
            config.max_attempts_per_address, config.attempt_window_s
        )
        #: What the operator's marks and states say (``Hub.enforce``, from the database
        #: every few seconds): marks in force by player id, closed and muted accounts.
        self.marks: dict[int, frozenset[str]] = {}
        self.closed_accounts: frozenset[int] = frozenset()
        self.muted: frozenset[int] = frozenset()
        #: Deadlines, a heap of (when, order, kind, what); ``Hub.tick`` fires them.
        self.timers: list[tuple[float, int, TimerKind, object]] = []
        self._timer_seq = 0
        #: The effects of the event at hand, in order.
        self.out: list[Effect] = []
        #: The frame at hand, as it came (a join is relayed as it is: ``Nodes``).
        self.frame: bytes | str = b""
        #: Guests (sessions of other nodes) by their route ``(node, conn)``, and routes by
        #: guest id: the I/O layer sends a guest's frames along its route.
        self.guests: dict[tuple[str, int], int] = {}
        self.routes: dict[int, tuple[str, int]] = {}
        #: Guests gone during the event at hand: their routes are kept until the next one,
        #: so that the I/O layer can still send them what this one sent (``drop_guest``).
        self.stale: list[int] = []
        #: Routes of guests replaced by a newer connection of their player here (a route
        #: followed), with the player's id and until when frames still relayed on the old
        #: route are served as that player's (``Nodes.late``).
        self.replaced: dict[tuple[str, int], tuple[int, float]] = {}

    def lane(self, player_id: int) -> str:
        """The quick-race pool's lane of a player (``pool.Waiter.lane``): "bot" for a bot
        mark, "marked" for an engine, boost or alt mark, else "" (docs/fairplay.md)."""
        marks = self.marks.get(player_id)
        p = self.players.get(player_id)
        if (p is not None and p.bot) or (marks and "bot" in marks):
            return "bot"
        return "marked" if marks else ""

    def drop_guest(self, c: _Conn) -> None:
        """A guest is done here (released, gone, or replaced by a newer session)."""
        if c.guest is not None:
            if self.guests.get(c.guest) == c.id:
                del self.guests[c.guest]
            self.stale.append(c.id)

    # -- what the room side asks of the cluster (``Play``, ``Lobbies``, ``Restarts`` read no
    # cluster field themselves: the session's relay is this module's and ``Nodes``') --------

    def ask_directory(self, c: _Conn, *, located: bool) -> bool:
        """Whether a room that is not here may be on another node, so the directory is to be
        asked (``Locate``): on a cluster's node, for a session of this node (a guest's own
        node asked already), unless the directory answered already (``located``)."""
        return bool(self.node) and c.guest is None and not located

    def sends_home(self, c: _Conn) -> bool:
        """A guest of this node whose player just left its room here with a request for
        elsewhere (a ``join``, ``create``, ``daily`` or ``ghost``: docs/protocol.md 4.14):
        the request goes back with the guest's release (``Nodes.settle``), and its own
        node, the gateway, serves it. False for a session of this node."""
        if c.guest is None:
            return False
        c.bounce = self.frame
        return True

    def moved_on(self, p: _Player, owner: str | None = None) -> bool:
        """The player's session is relayed to a room on another node than ``owner`` (a
        dead owner whose room is being rebuilt here): they are in a room elsewhere."""
        return p.away is not None and p.away != owner

    def member_here(self, pid: int, name: str, now: float) -> _Player:
        """A member of a room rebuilt here (a restart, a takeover, an adopted lobby): the
        player of this id, or a new one, served here from now on, disconnected with a
        fresh resume window.

        A cluster's node may remember the player from an earlier session: gone, with what
        is left of that session's window (the rest of it would drop them before they could
        come back), or relayed to another node (away: the node the room was taken from,
        not seen gone yet, or an earlier room's). Their room is here now: a relayed
        connection still open is closed with 1012, as when the owner is seen gone, so that
        the client resumes here."""
        p = self.players.get(pid)
        if p is None:
            p = _Player(pid, name, "")
            self.players[pid] = p
        if p.away is not None:
            p.away = None
            p.away_room = None
            c = self.conns.get(p.conn) if p.conn is not None else None
            if c is not None:
                self.close(c, CLOSE_RESTARTING, "the room's node went away; resume")
        if p.conn is None:
            p.gone_at = now
            self.timer(now + self.config.resume_window_s, TimerKind.GONE, p)
        return p

    def timer(self, when: float, kind: TimerKind, ref: object) -> None:
        self._timer_seq += 1
        heapq.heappush(self.timers, (when, self._timer_seq, kind, ref))

    def take_token(self, c: _Conn, now: float) -> bool:
        cfg = self.config
        c.tokens = min(cfg.bucket_capacity, c.tokens + (now - c.filled) * cfg.bucket_rate)
        c.filled = now
        if c.tokens < 1.0:
            return False
        c.tokens -= 1.0
        return True

    def send(self, p: _Player, message: Message) -> None:
        """Send to a player, if connected. Any frame but the answers to their own moves
        first releases their room's held ``progress`` (``Room.send`` does the same for
        the room's own frames), so that it never arrives after something that happened
        later."""
        room = p.room
        if room is not None and room.progress_due is not None and not isinstance(message, OVERTAKE):
            room.release_progress()
        if p.conn is not None:
            self.out.append(Send(p.conn, message))

    def error(self, c: _Conn, code: str, text: str, *, seq: int | None = None) -> None:
        """Answer with an error; malformed messages also count towards the garbage limit.

        An error does not release a held ``progress``: it is about the sender's own
        message, and one player's bad input must not change what the others receive.
        """
        self.out.append(Send(c.id, Error(code, text, seq)))
        now = self.now
        if code in _STRIKE_CODES:
            strikes = c.strikes
            strikes.append(now)
            while strikes and strikes[0] <= now - self.config.strike_window_s:
                strikes.popleft()
            if len(strikes) > self.config.strike_limit:
                log.warning("conn %d: too many malformed messages, closing", c.id)
                self.close(c, CLOSE_POLICY, "too many malformed messages")

    def close(self, c: _Conn, code: int, reason: str, *, at_once: bool = False) -> None:
        if not c.closed:
            c.closed = True
            self.out.append(Close(c.id, code, reason, at_once))

    def flush(self) -> list[Effect]:
        """The effects gathered for the event at hand, which start afresh."""
        out = self.out[:]
        self.out.clear()
        return out


class Part:
    """A part of the hub: one seam of its logic, built on the ``Shared`` state it binds."""

    def __init__(self, shared: Shared) -> None:
        self._shared = shared
        self._config = shared.config
        self._wall = shared.wall
        self._conns = shared.conns
        self._tokens = shared.tokens
        self._players = shared.players
        self._rooms = shared.rooms
        self._daily_rooms = shared.daily_rooms
        self._out = shared.out
        self._timer = shared.timer
        self._send = shared.send
        self._error = shared.error
        self._close = shared.close
