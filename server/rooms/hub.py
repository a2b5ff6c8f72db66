"""``Hub``: the one entry point of the room and race logic (see the package docstring).

Each entry point sets the time of the event, hands it to the part whose seam it is, and
returns the effects gathered meanwhile. It routes; the logic is in the parts.
"""

from __future__ import annotations

import datetime as dt
import heapq
import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import assert_never

from protocol import GameCode
from protocol.commitment import SALT_HEX
from protocol.messages import (
    Board as BoardMsg,
)
from protocol.messages import (
    Create,
    Daily,
    Error,
    Finish,
    Ghost,
    Hello,
    Hint,
    Join,
    Leave,
    Message,
    MessageError,
    MoveMsg,
    PostMortem,
    Ready,
    Rematch,
    Replay,
    Report,
    Resign,
    Start,
    Undo,
    Watch,
    decode_client,
)
from protocol.messages import (
    History as HistoryMsg,
)
from protocol.messages import (
    Player as PlayerMsg,
)
from protocol.messages import Quick as QuickMsg
from protocol.shuffle import SEED_BYTES

from ..cluster import bus
from ..domain.records import GhostRun, LiveAction, LiveRace, RatingChange, Standing
from . import events as ev
from .cluster_events import ClusterEvents
from .config import HubConfig
from .dailies import Dailies
from .effects import Effect, Forward, Query, Send
from .enforcement import Enforcement
from .ghosts import Ghosts
from .handshake import Handshake
from .hints import Hints
from .lobbies import Lobbies
from .nodes import Nodes
from .play import Play
from .postmortems import PostMortems
from .quick import ENTERING, Quick
from .reports import Reports
from .restarts import Restarts
from .room import Room
from .shared import Shared
from .state import CLOSE_POLICY, ROOM_ALPHABET, ROOM_CODE_LENGTH, _Conn, _Player
from .timers import TimerKind
from .windows import SlidingCounts

__all__ = ["Hub"]

#: An invite-only room's key: 9 random bytes, 12 URL-safe characters (72 bits: a
#: guesser, at the per-address budget of 30 misses in 10 minutes, never finds one).
INVITE_KEY_BYTES = 9

log = logging.getLogger("yukon.rooms")


class Hub(ClusterEvents):
    """Every connection, player and room of one server; see the package docstring. Its
    questions (figures, the directory's) are ``Queries``'; its events are here."""

    def __init__(
        self,
        config: HubConfig | None = None,
        *,
        wall_clock: Callable[[], float] = time.time,
        random_deal: Callable[[], int | bytes] = lambda: secrets.token_bytes(SEED_BYTES),
        new_salt: Callable[[], str] = lambda: secrets.token_hex(SALT_HEX // 2),
        new_room_code: Callable[[], str] = lambda: "".join(
            secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH)
        ),
        new_invite_key: Callable[[], str] = lambda: secrets.token_urlsafe(INVITE_KEY_BYTES),
        boot_id: str | None = None,
        node: str = "",
        stock_seed: Callable[[], int | bytes] = lambda: secrets.token_bytes(SEED_BYTES),
    ) -> None:
        self.config = config or HubConfig()
        #: This node's id in a cluster (docs/cluster.md); "" alone.
        self.node = node
        shared = self._shared = Shared(self.config, wall_clock, node=node)
        play = self._play = Play(
            shared,
            random_deal=random_deal,
            new_salt=new_salt,
            new_room_code=new_room_code,
            new_invite_key=new_invite_key,
            boot=boot_id or secrets.token_hex(6),
            stock_seed=stock_seed,  # the candidates of the stock of winnable deals
        )
        self._handshake = Handshake(shared, play)
        self._password = self._handshake.password
        self._hints = Hints(shared, play)
        self._dailies = Dailies(shared, play)
        self._restarts = Restarts(shared, play)
        self._postmortems = PostMortems(shared)
        self._nodes = Nodes(shared, play, self._handshake)
        self._ghosts = Ghosts(shared, play)
        self._lobbies = Lobbies(shared, play, random_deal=random_deal, new_salt=new_salt)
        self._quick = Quick(shared, play)  # issue 29: the quick-race pool
        self._enforcement = Enforcement(shared, self._quick)  # issue 40: marks applied
        self._reports = Reports(shared)  # issue 40: players' reports
        # Bound once: the move path (receive, _dispatch, Play.move, Room.move) costs one class.
        self._conns = shared.conns
        self._rooms = shared.rooms
        self._timers = shared.timers
        self._out = shared.out
        self._take_token = shared.take_token
        self._error = shared.error
        self._close = shared.close
        self._flush = shared.flush
        self._move = play.move

    # -- every event, typed -----------------------------------------------------------------

    def handle(self, event: ev.HubEvent | bus.BusMessage, now: float) -> list[Effect]:
        """What happened (``server.rooms.events``), or what another node said
        (``server.cluster.bus``), at ``now``: routed to the entry point whose event it is;
        its effects. A ``Deliver`` is the I/O layer's (frames to write), not the hub's."""
        match event:
            case ev.Received(conn, data):
                return self.receive(conn, data, now)
            case ev.Tick():
                return self.tick(now)
            case ev.Connected(conn, address, asked):
                return self.connect(conn, now, address=address, asked=asked)
            case ev.Control(conn):
                return self.control(conn, now)
            case ev.Disconnected(conn):
                return self.disconnect(conn, now)
            case ev.Authenticated():
                e = event
                return self.authenticated(
                    e.conn,
                    player_id=e.player_id,
                    name=e.name,
                    token=e.token,
                    now=now,
                    registered=e.registered,
                    new=e.new,
                    away=e.away,
                    away_room=e.away_room,
                    standing=e.standing,
                    bot=e.bot,
                )
            case ev.HelloRefused(conn, code, text):
                return self.hello_refused(conn, code=code, text=text, now=now)
            case ev.Committed(race_id, ratings):
                return self.committed(race_id, now, ratings)
            case ev.QueryAnswered(conn, reply):
                return self.query_answered(conn, reply, now)
            case ev.GhostAnswered(conn, found):
                return self.ghost_answered(conn, found, now)
            case ev.PostMortemAnswered(conn, reply):
                return self.postmortem_answered(conn, reply, now)
            case ev.HintReady(player_id, request, verdict, moves):
                return self.hint_ready(player_id, request, verdict=verdict, moves=moves, now=now)
            case ev.HintFailed(player_id, request):
                return self.hint_failed(player_id, request, now=now)
            case ev.DailyBegun():
                e2 = event
                return self.daily_begun(
                    e2.player_id,
                    date=e2.date,
                    attempt=e2.attempt,
                    deal=e2.deal,
                    par=e2.par,
                    salt=e2.salt,
                    now=now,
                )
            case ev.DailyRefused(player_id, code, text):
                return self.daily_refused(player_id, code=code, text=text, now=now)
            case ev.Restore(live, actions, alive_ms, ghost, watchers):
                return self.restore(
                    live, list(actions), alive_ms, now, ghost=ghost, watchers=watchers
                )
            case ev.Located(conn, code, node, frame):
                return self.located(conn, code, node, frame, now)
            case ev.Unreachable(conn, text):
                return self.unreachable(conn, text, now)
            case ev.NodeGone(node):
                return self.node_gone(node, now)
            case ev.RelayGap():
                return self.relay_gap(now)
            case ev.AdoptLobby(code, snapshot, owner):
                return self.adopt_lobby(code, snapshot, now, owner=owner)
            case ev.RoomLost(code):
                return self.drop_room(code, now)
            case ev.DealProven(rules, seed, verdict, room):  # the stock of winnable deals
                self._begin(now)
                self._play.deals.proven(rules, seed, verdict, room)
                return self._flush()
            case ev.FillStock():
                self._begin(now)
                self._play.deals.fill()
                return self._flush()
            case ev.Enforce(marks, closed, muted):  # the operator's marks (Enforcement)
                self._begin(now)
                self._enforcement.apply(marks, closed, muted, now)
                return self._flush()
            case bus.Attach():
                m = event
                return self.guest_attach(
                    (m.gateway, m.conn),
                    player_id=m.player,
                    name=m.name,
                    token=m.token,
                    registered=m.registered,
                    address=m.address,
                    frame=m.frame,
                    now=now,
                    follow=m.follow,
                    standing=m.standing,
                )
            case bus.Frame(gateway, conn, frame):
                return self.guest_frame((gateway, conn), frame, now)
            case bus.DetachMsg(gateway, conn):
                return self.guest_detach((gateway, conn), now)
            case bus.Shut(conn, code, reason):
                return self.closed_by_owner(conn, code, reason, now)
            case bus.Home(conn, frame):
                return self.returned(conn, frame, now)
            case bus.Kick(conn):
                return self.kick(conn, now)
            case bus.QuickSeat(players, gateways):
                return self.quick_seat(tuple(zip(players, gateways, strict=False)), now)
            case bus.QuickJoin(player, room):
                return self.quick_join(player, room, now)
            case bus.PasswordFail(key):
                return self.password_failed_elsewhere(key, now)
            case bus.Deliver():
                return []
            case _:
                assert_never(event)

    # -- the connection's events ----------------------------------------------------------

    def connect(self, conn: int, now: float, *, address: str = "", asked: str = "") -> list[Effect]:
        """A new connection (from ``address``; ``asked``: the node its URL asked for, a
        route followed); it must say hello within ``hello_timeout_s``."""
        self._shared.now = now
        return self._handshake.connect(conn, now, address=address, asked=asked)

    def control(self, conn: int, now: float) -> list[Effect]:
        """A ping or a pong from the client. It costs a token of the flood bucket like any
        frame: pings are answered by the websocket layer with a pong each, so a client that
        sends them and never reads would otherwise fill the server's memory for free."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None and not c.closed and not self._take_token(c, now):
            log.warning("conn %d: flooding (pings), closing", conn)
            self._close(c, CLOSE_POLICY, "too many messages", at_once=True)
        return self._flush()

    def receive(self, conn: int, data: bytes | str, now: float) -> list[Effect]:
        """One frame from a connection: decode, check, act; answer errors, never raise."""
        self._out.clear()  # ``_begin``, inline: the move path comes this way
        self._shared.now = now
        if self._shared.stale:
            self._nodes.begin()
        c = self._conns.get(conn)
        if c is None or c.closed:
            return []
        if not self._take_token(c, now):
            log.warning("conn %d: flooding, closing", conn)
            self._close(c, CLOSE_POLICY, "too many messages", at_once=True)
            return self._flush()
        p = c.player
        if p is not None and p.away is not None:  # the room is on another node: relay
            self._out.append(Forward(p.away, conn, data))
            return self._flush()
        # ``_handle``, inline: the move path comes this way
        try:
            message = decode_client(data)
        except MessageError as exc:
            self._error(c, exc.code, exc.text)
            return self._flush()
        if isinstance(message, Hello):
            self._handshake.hello(c, message, now)
        elif p is None:
            if c.authenticating:
                self._error(c, "hello_pending", "wait for the welcome before anything else")
            else:
                self._error(c, "hello_first", "the first message must be a hello")
        else:
            self._shared.frame = data
            self._dispatch(c, p, message, now)
        return self._flush()

    def _handle(self, c: _Conn, data: bytes | str, now: float) -> None:
        """Decode a frame that passed the flood bucket, check it, act on it (a guest's,
        or one that came back from another node; ``receive`` has the same, inline)."""
        try:
            message = decode_client(data)
        except MessageError as exc:
            self._error(c, exc.code, exc.text)
            return
        if isinstance(message, Hello):
            self._handshake.hello(c, message, now)
        elif c.player is None:
            if c.authenticating:
                self._error(c, "hello_pending", "wait for the welcome before anything else")
            else:
                self._error(c, "hello_first", "the first message must be a hello")
        else:
            self._shared.frame = data
            self._dispatch(c, c.player, message, now)

    def disconnect(self, conn: int, now: float) -> list[Effect]:
        """The connection is gone. Its player keeps their place for the resume window."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None:
            if c.player is not None:
                self._quick.gone(c.player, now)  # issue 29: out of the quick-race pool
            self._nodes.disconnected(c)
        self._handshake.disconnect(conn, now)
        return self._flush()

    def tick(self, now: float) -> list[Effect]:
        """Fire every deadline that has passed: hello timeouts, countdowns, time limits, expiry."""
        self._begin(now)
        timers = self._timers
        while timers and timers[0][0] <= now:
            _, _, kind, ref = heapq.heappop(timers)
            match kind:
                case TimerKind.HELLO:
                    c = self._conns.get(ref)  # type: ignore[call-overload]
                    if c is not None and c.player is None and not c.closed and not c.refusing:
                        self._close(c, CLOSE_POLICY, "no hello in time")
                case TimerKind.PASSWORD:
                    assert isinstance(ref, _Conn)
                    self._password.refuse(ref)
                case TimerKind.PASSWORD_TURN:
                    assert isinstance(ref, str)
                    self._password.queue(ref, now)
                case TimerKind.COUNTDOWN:
                    room = ref
                    assert isinstance(room, Room)
                    if self._rooms.get(room.code) is room:
                        room.countdown_over(now)
                case TimerKind.PROGRESS:
                    room = ref
                    assert isinstance(room, Room)
                    room.progress_timer(now)
                case TimerKind.GHOST:
                    room = ref
                    assert isinstance(room, Room)
                    if self._rooms.get(room.code) is room:
                        room.ghost_moves(now)
                case TimerKind.LIMIT:
                    room = ref
                    assert isinstance(room, Room)
                    room.enforce_limit(now)
                case TimerKind.QUICK:  # issue 29: the quick-race pool's poll
                    self._quick.tick(now)
                case TimerKind.GONE:
                    p = ref
                    assert isinstance(p, _Player)
                    gone = p.gone_at
                    if (
                        p.conn is None
                        and gone is not None
                        and gone + self.config.resume_window_s <= now
                    ):
                        self._play.expire_player(p, now)
                case _:
                    assert_never(kind)
        return self._flush()

    def next_deadline(self) -> float | None:
        """When ``tick`` must next be called (monotonic seconds), or None."""
        return self._timers[0][0] if self._timers else None

    def _dispatch(self, c: _Conn, p: _Player, msg: Message, now: float) -> None:
        if isinstance(msg, MoveMsg):
            self._move(c, p, msg.seq, msg.move, now)
        elif isinstance(msg, Undo):
            self._move(c, p, msg.seq, None, now)
        elif isinstance(msg, Finish):
            self._play.finish(c, p, msg.seq, now)
        elif isinstance(msg, ENTERING) and self._quick.waiting(p):
            # issue 29: going into another room leaves the quick-race pool first
            self._quick.leave(p, now)
            self._dispatch(c, p, msg, now)
        elif isinstance(msg, Create):
            self._play.create(c, p, msg, now)
        elif isinstance(msg, Join):
            self._play.join(c, p, msg.room, now, spectator=False, key=msg.key)
        elif isinstance(msg, Watch):
            self._play.join(c, p, msg.room, now, spectator=True, key=msg.key)
        elif isinstance(msg, Ready):
            self._play.ready(c, p, msg.ready, now)
        elif isinstance(msg, Start):
            self._play.start(c, p, now)
        elif isinstance(msg, Resign):
            self._play.resign(c, p, msg.seq, now)
        elif isinstance(msg, Leave):
            self._play.leave(c, p, now)
        elif isinstance(msg, Rematch):
            self._play.rematch(c, p, now)
        elif isinstance(msg, Daily):
            self._dailies.ask(c, p, now, msg.date)
        elif isinstance(msg, Hint):
            self._hints.ask(c, p, now)
        elif isinstance(msg, PostMortem):
            self._postmortems.ask(c, p, msg)
        elif isinstance(msg, Ghost):
            self._ghosts.ask(c, p, msg)
        elif isinstance(msg, QuickMsg):  # issue 29: the quick-race pool
            self._quick.ask(c, p, msg, now)
        elif isinstance(msg, Report):  # issue 40: a report, checked and queued (reports.py)
            self._reports.ask(c, p, msg, now)
        elif isinstance(msg, (BoardMsg, HistoryMsg, Replay, PlayerMsg)):
            limit = self.config.max_queries_per_connection
            if c.queries >= limit:
                self._error(
                    c,
                    "too_many_queries",
                    f"{c.queries} of your board, history or replay requests are being answered;"
                    " wait for an answer before asking again",
                )
                return
            c.queries += 1
            self._out.append(Query(c.id, p.id, msg))

    # -- answers from storage and the solver -------------------------------------------------

    def authenticated(
        self,
        conn: int,
        *,
        player_id: int,
        name: str,
        token: str,
        now: float,
        registered: float = 0.0,
        new: bool = False,
        away: str | None = None,
        away_room: str | None = None,
        standing: Standing | None = None,
        bot: bool = False,
    ) -> list[Effect]:
        """Storage registered a name (``new``) or recognised a token, registered at wall
        time ``registered``: the connection is that player (``Handshake.authenticated``);
        ``away``: the node that holds their room, when it is another (a cluster's);
        ``standing``: their rating and streak (docs/ratings.md); ``bot``: a BOT account."""
        self._begin(now)
        self._handshake.authenticated(
            conn,
            player_id=player_id,
            name=name,
            token=token,
            now=now,
            registered=registered,
            new=new,
            away=None if away == self.node else away,
            away_room=away_room,
            standing=standing,
            bot=bot,
        )
        return self._flush()

    def hello_refused(self, conn: int, *, code: str, text: str, now: float) -> list[Effect]:
        """Storage refused the hello (name taken, unknown token, database away)."""
        self._begin(now)
        self._handshake.refused(conn, code=code, text=text)
        return self._flush()

    def committed(
        self, race_id: int, now: float, ratings: Mapping[int, RatingChange] | None = None
    ) -> list[Effect]:
        """Storage has committed race ``race_id``: now, and only now, announce the result
        (with the rating changes storing it made, by player id, for a rated race)."""
        self._begin(now)
        self._play.committed(race_id, now, ratings or {})
        return self._flush()

    def query_answered(self, conn: int, reply: Message, now: float) -> list[Effect]:
        """Storage answered a ``Query``: send the answer; the connection may ask again."""
        self._begin(now)
        c = self._conns.get(conn)
        if c is not None:
            c.queries = max(0, c.queries - 1)
            if not c.closed:
                self._out.append(Send(conn, reply))
        return self._flush()

    def ghost_answered(self, conn: int, found: GhostRun | Error, now: float) -> list[Effect]:
        """Storage answered a ``ghost`` (its ``Query``): the run to race, or the error;
        the connection may ask again (``Ghosts.answered``)."""
        self._begin(now)
        self._ghosts.answered(conn, found, now)
        return self._flush()

    def postmortem_answered(self, conn: int, reply: Message, now: float) -> list[Effect]:
        """The I/O layer answered a ``postmortem`` (``Examine``): send the answer; the
        connection may ask for another (``PostMortems.answered``)."""
        self._begin(now)
        self._postmortems.answered(conn, reply)
        return self._flush()

    def hint_ready(
        self,
        player_id: int,
        request: int,
        *,
        verdict: str,
        moves: tuple[str, ...],
        now: float,
    ) -> list[Effect]:
        """The solver judged a hint's position: ``verdict`` ``won`` (``moves`` the winning
        line), ``lost``, or ``unknown`` (``moves`` the way to the most advanced position
        its search reached, answered as ``best``, or none) (``Hints.ready``)."""
        self._begin(now)
        self._hints.ready(player_id, request, verdict=verdict, moves=moves, now=now)
        return self._flush()

    def quick_rated(
        self, player_id: int, *, rating: float | None, usual: str | None, now: float
    ) -> list[Effect]:
        """Storage answered ``Rate`` (issue 29): the player's rating (None: the database
        is away: they are told and may ask again) and when others usually play."""
        self._begin(now)
        if rating is None:
            self._quick.failed(player_id, now)
        else:
            self._quick.rated(player_id, rating, usual, now)
        return self._flush()

    def quick_count(self, waiting: int, now: float) -> list[Effect]:
        """A cluster's pool holds ``waiting`` players (issue 29; ``server.cluster.quickpool``)."""
        self._begin(now)
        self._quick.count(waiting, now)
        return self._flush()

    def quick_seat(self, players: Sequence[tuple[int, str]], now: float) -> list[Effect]:
        """The cluster's pooler placed a quick room here for ``players`` (id, gateway)."""
        self._begin(now)
        self._quick.place(players, now)
        return self._flush()

    def quick_join(self, player_id: int, room: str, now: float) -> list[Effect]:
        """A quick room on another node is this player's: they go there ("": wait on)."""
        self._begin(now)
        self._quick.invited(player_id, room, now)
        return self._flush()

    def hint_failed(self, player_id: int, request: int, *, now: float) -> list[Effect]:
        """The solver could not run (its worker process died): the player may ask again."""
        self._begin(now)
        self._hints.failed(player_id, request)
        return self._flush()

    def daily_begun(
        self,
        player_id: int,
        *,
        date: dt.date,
        attempt: int,
        deal: GameCode,
        par: int | None = None,
        salt: str | None = None,
        archive: bool = False,
        now: float,
    ) -> list[Effect]:
        """The day's deal is known and storage numbered the attempt: deal it now, with
        ``par`` (``Dailies.begun``); ``archive``: a past day's, as practice."""
        self._begin(now)
        self._dailies.begun(
            player_id,
            date=date,
            attempt=attempt,
            deal=deal,
            par=par,
            salt=salt,
            archive=archive,
            now=now,
        )
        return self._flush()

    def daily_refused(self, player_id: int, *, code: str, text: str, now: float) -> list[Effect]:
        """The daily attempt could not begin: the player is told why and may ask again."""
        self._begin(now)
        self._dailies.refused(player_id, code=code, text=text)
        return self._flush()

    # -- restarts ---------------------------------------------------------------------------

    @property
    def room_guesses(self) -> SlidingCounts:
        """Room codes that named no room, per address: the budget ``join`` and ``watch``
        spend, which the invite link's page spends too (docs/protocol.md 5.5)."""
        return self._shared.room_misses

    def live_elapsed(self, now: float) -> dict[str, int]:
        """Each running race's clock, for the journal's checkpoints."""
        return self._restarts.live_elapsed(now)

    def restore(
        self,
        live: LiveRace,
        actions: list[LiveAction],
        alive_ms: int,
        now: float,
        *,
        ghost: GhostRun | None = None,
        watchers: Sequence[tuple[int, str]] = (),
    ) -> list[Effect]:
        """Rebuild a race that was running when the server stopped, from its journal, with
        the ``ghost`` it raced, fetched again from storage, and (a takeover) the
        ``watchers`` its node last noted, as ids and names (``Restarts.restore``)."""
        self._begin(now)
        self._restarts.restore(live, actions, alive_ms, now, ghost=ghost, watchers=watchers)
        return self._flush()
