"""Who a connection is: the connection limits, the hello, and the player it becomes.

A hello names a player to register or carries a token to resume; storage answers
(``Hub.authenticated``, ``Hub.hello_refused``) unless the player is in memory. On a private
server the password comes first (``Password``). ``attach`` binds the connection to the
player, replacing an older connection of theirs, and sends what they missed.
"""

from __future__ import annotations

import logging
from collections import deque

from protocol.messages import (
    CLOSE_REPLACED,
    CLOSE_VERSION,
    MIN_DEVICE,
    PROTOCOL_VERSION,
    Hello,
    Welcome,
    is_device,
    normalize_name,
)

from ..domain.daily import next_daily_ms, utc_date
from ..domain.records import Standing
from ..runtime.limits import address_key, telling_address
from .effects import Authenticate, Close, Effect, Forget, Handover, Resumed
from .password import Password
from .play import Play
from .shared import Part, Shared
from .state import (
    ACCOUNT_CLOSED_TEXT,
    CLOSE_ACCOUNT_CLOSED,
    CLOSE_TRY_LATER,
    REPLACED_KEPT_S,
    _Conn,
    _forget_oldest,
    _Player,
)
from .timers import TimerKind

__all__ = ["NAME_SLASH", "Handshake", "handover"]

log = logging.getLogger("yukon.rooms")

#: ``name_invalid``'s text for a name with a slash (docs/protocol.md 4.1, rule 3).
NAME_SLASH = "a name may not contain /: it is part of the link to the player's page"


def handover(c: _Conn, p: _Player, node: str, frame: bytes | str | None) -> Handover:
    """The session ``c`` of player ``p`` goes away to ``node``, which holds their room,
    with ``frame`` first if any. Its client is to be told to connect there if it follows
    routes and did not ask for ``node`` already (then the balancer ignores the route, and
    the relay serves it as it would any client)."""
    follow = c.follow and c.asked != node
    # The player's standing goes along, or the owner would show them without a rating
    # until their first rated race there.
    standing = Standing(p.rating, p.provisional, p.streak)
    return Handover(
        node, c.id, p.id, p.name, p.token, p.registered, c.address, frame, follow, standing
    )


class Handshake(Part):
    """Connections from their opening to their player: limits per address, the hello,
    registration, resuming; and their end (``disconnect``)."""

    def __init__(self, shared: Shared, play: Play) -> None:
        super().__init__(shared)
        self._play = play
        #: The password of a private server, checked before the rest of a hello.
        self.password = Password(shared, self.checked)
        #: Per-address counts: connections open, recent registrations.
        self._addr_conns: dict[str, int] = {}
        self._addr_regs: dict[str, deque[float]] = {}
        #: Addresses refused a connection since they were last below their limit (logged).
        self._addr_full: set[str] = set()
        #: Addresses refused for opening too often since their last accepted one (logged).
        self._addr_fast: set[str] = set()

    def connect(self, conn: int, now: float, *, address: str = "", asked: str = "") -> list[Effect]:
        """A new connection (from ``address``, asking for node ``asked``: ``?node=``); it
        must say hello within ``hello_timeout_s``."""
        c = self._config
        if len(self._conns) >= c.max_connections:
            log.warning("connection limit (%d) reached: refusing %s", c.max_connections, address)
            return [Close(conn, CLOSE_TRY_LATER, "server full, try again later")]
        key = address_key(address)
        held = self._addr_conns.get(key, 0)
        if key and 0 < c.max_connections_per_address <= held:
            if key not in self._addr_full:  # one line per address, not one per refusal
                self._addr_full.add(key)
                log.warning("%s holds %d connections: refusing more", key, held)
            return [Close(conn, CLOSE_TRY_LATER, "too many connections from your address")]
        opens = self._shared.opens
        if key and not opens.spend(key, now):
            if key not in self._addr_fast:  # one line per address while it keeps at it
                self._addr_fast.add(key)
                log.warning("%s opens connections too often: refusing them", key)
            return [Close(conn, CLOSE_TRY_LATER, "connecting too often from your address")]
        self._addr_fast.discard(key)
        self._addr_conns[key] = held + 1
        self._conns[conn] = _Conn(conn, now, c.bucket_capacity, now, address, key=key, asked=asked)
        self._timer(now + c.hello_timeout_s, TimerKind.HELLO, conn)
        return []

    def disconnect(self, conn: int, now: float) -> None:
        """The connection is gone. Its player keeps their place for the resume window."""
        c = self._conns.pop(conn, None)
        if c is None:
            return
        if c.guest is None:  # a guest's gateway counts its address
            held = self._addr_conns.get(c.key, 0) - 1
            if held > 0:
                self._addr_conns[c.key] = held
            else:
                self._addr_conns.pop(c.key, None)
            self._addr_full.discard(c.key)
        p = c.player
        if p is not None and p.conn == conn:
            p.conn = None
            p.gone_at = now
            self._timer(now + self._config.resume_window_s, TimerKind.GONE, p)
            log.info("%s disconnected (may resume for %ds)", p.name, self._config.resume_window_s)
            room = p.room
            if room is not None:
                room.disconnected(now)

    def hello(self, c: _Conn, msg: Hello, now: float) -> None:
        if c.player is not None or c.authenticating:
            self._error(c, "already_hello", "this connection already said hello")
            return
        if msg.v != PROTOCOL_VERSION:
            self._error(
                c,
                "version",
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {msg.v}",
            )
            self._close(c, CLOSE_VERSION, "unsupported protocol version")
            return
        if msg.device is not None and not is_device(msg.device):
            self._error(
                c,
                "bad_device",
                f"a device id is {MIN_DEVICE} to 64 letters, digits, '-' or '_'"
                " (docs/protocol.md 4.31)",
            )
            return
        c.follow = msg.follow
        c.device = msg.device or ""
        if self._config.password is not None:
            self.password.turn(c, msg, now)
            return
        self.checked(c, msg, now)

    def checked(self, c: _Conn, msg: Hello, now: float) -> None:
        """The rest of a hello, once any password is right: a token, or a name to register."""
        if msg.token is not None:
            p = self._tokens.get(msg.token)
            gone = p.gone_at if p is not None else None
            if p is not None and gone is not None and gone + self._config.resume_window_s <= now:
                # The window is over, even if no tick said so yet.
                self._play.expire_player(p, now)
                p = None
            if p is not None and self._shared.node and p.room is None and p.away is None:
                # A cluster's node that remembers a player in no room (left, or between
                # races) cannot know where they went since: they may have said hello on
                # another node and be racing there. Storage and the directory say (the
                # seat, and the older session to close); ``authenticated`` reattaches.
                p = None
            if p is not None:
                if self._shared.node:  # the directory's newest session is this one
                    self._out.append(Resumed(p.id, c.id))
                self.attach(c, p, now)
            else:  # not in memory: storage knows every registered player
                c.authenticating = True
                self._out.append(Authenticate(c.id, None, msg.token))
            return
        if msg.name is None:
            self._error(c, "name_invalid", "a hello needs a name, or a token to resume")
            return
        try:
            name = normalize_name(msg.name)
        except ValueError as exc:
            self._error(c, "name_invalid", str(exc))
            return
        if "/" in name:
            # A name is a path segment of its player's page (``/players/NAME``), which
            # every board links to; with a slash in it that link led nowhere (issue 42).
            self._error(c, "name_invalid", NAME_SLASH)
            return
        if not self._may_register(c, now):
            return
        c.authenticating = True
        address = telling_address(c.address)
        self._out.append(Authenticate(c.id, name, None, bot=msg.bot, address=address))

    def _may_register(self, c: _Conn, now: float) -> bool:
        """At most ``max_registrations_per_address`` names per window from one address.

        Counted when the hello goes to storage (a name taken by then is given back in
        ``hello_refused``), so hellos sent all at once cannot slip past the count.
        """
        cfg = self._config
        if not c.key or not cfg.max_registrations_per_address:  # no address, or no limit
            return True
        regs = self._addr_regs.get(c.key)
        if regs is None:
            regs = self._addr_regs[c.key] = deque()
            _forget_oldest(self._addr_regs)
        while regs and regs[0] <= now - cfg.registration_window_s:
            regs.popleft()
        if len(regs) >= cfg.max_registrations_per_address:
            wait = int(regs[0] + cfg.registration_window_s - now) + 1
            self._error(
                c,
                "too_many_names",
                f"{len(regs)} names were registered from your address lately;"
                f" say hello with your token, or try again in {wait} s",
            )
            return False
        regs.append(now)
        c.registering = True
        return True

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
    ) -> None:
        """Storage registered a name (``new``) or recognised a token: the connection is that
        player, whose name was registered at wall time ``registered``. A name registered for
        a connection that is gone by now (its client gave up waiting) is forgotten again:
        nobody got its token, so nobody could ever use the name, and it would stay taken for
        good. ``away``: the player's room lives on that node (a cluster's directory said so):
        the session goes there."""
        c = self._conns.get(conn)
        if new and (c is None or c.closed or not c.authenticating):
            log.info("%s registered, but the connection is gone: forgetting it", name)
            self._out.append(Forget(player_id))
            return
        if c is not None and not c.closed and c.authenticating:
            c.authenticating = False
            p = self._players.get(player_id)
            if p is None:
                p = _Player(player_id, name, token)
                self._players[player_id] = p
                log.info("%s said hello", name)
            elif p.token != token:  # a player restored after a restart: now we know it
                self._tokens.pop(p.token, None)
                p.token = token
            p.registered = registered
            p.bot = bot
            if standing is not None:
                p.rating, p.provisional = standing.rating, standing.provisional
                p.streak = standing.streak
            self._tokens[token] = p
            if away is not None and p.room is None and p.away is None:
                p.away = away
                p.away_room = away_room
            self.attach(c, p, now)

    def refused(self, conn: int, *, code: str, text: str) -> None:
        """Storage refused the hello (name taken, unknown token, database away)."""
        c = self._conns.get(conn)
        if c is not None and not c.closed and c.authenticating:
            c.authenticating = False
            if c.registering:  # no name was registered (taken, or no database): not counted
                c.registering = False
                regs = self._addr_regs.get(c.key)
                if regs:
                    regs.pop()
            self._error(c, code, text)

    def attach(self, c: _Conn, p: _Player, now: float, *, welcome: bool = True) -> None:
        """Bind a connection to a player, replacing an older connection of theirs. A guest
        (``welcome`` False) was welcomed by its gateway already. A player whose room lives
        on another node (``_Player.away``) is handed over there, which resyncs them. A
        closed account (``yukon mod close``) is told so and closed, whatever it held."""
        if p.id in self._shared.closed_accounts:
            self._error(c, "account_closed", ACCOUNT_CLOSED_TEXT)
            self._close(c, CLOSE_ACCOUNT_CLOSED, "account closed")
            return
        resumed = p.gone_at is not None or p.conn is not None
        if p.conn is not None and p.conn in self._conns:
            old = self._conns[p.conn]
            self._close(old, CLOSE_REPLACED, "replaced by a newer connection")
            old.player = None
            if old.guest is not None:  # its gateway closes it
                self._shared.drop_guest(old)
                del self._conns[old.id]
                # A client that followed a route says hello here before its gateway has
                # relayed all it sent there: those frames still come, and are this
                # player's (``Nodes.late``), not a stranger's to send back.
                self._shared.replaced[old.guest] = (p.id, now + REPLACED_KEPT_S)
        p.conn = c.id
        p.gone_at = None
        c.player = p
        p.address, p.device = telling_address(c.address), c.device
        if resumed:
            log.info("%s resumed", p.name)
        if welcome:
            # The room kept for the player, here or on its owner node (whose resync follows
            # through the relay): the welcome names it, so a client knows at once.
            if p.room is not None:
                room: str | None = p.room.code
            else:
                room = p.away_room if p.away is not None else None
            self._send(
                p,
                Welcome(
                    PROTOCOL_VERSION,
                    p.name,
                    p.token,
                    int(self._config.resume_window_s),
                    room,
                    rating=p.rating,
                    provisional=p.provisional,
                    streak=p.streak.current(utc_date(self._shared.wall())),
                    best_streak=p.streak.best,
                    next_daily_ms=next_daily_ms(self._wall()),  # dailydeck: the countdown
                    bot=p.bot,
                ),
            )
        if p.away is not None:
            self._out.append(handover(c, p, p.away, None))
            return
        if p.room is not None:  # they get what they missed; the others see them again
            p.room.reconnected(p, now)
