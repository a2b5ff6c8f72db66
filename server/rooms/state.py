"""The hub's state: the session's records, connections and players, and the numbers
the session names (room codes, close codes). The hub's configuration is ``config.HubConfig``.

Plain records: the parts of the hub (see the package docstring) read and change them,
each for its own seam. A part's own records (a password check's address, a hint on its
way) live with that part; a room is a unit of its own (``room.Room``), which sees a
player only as a ``room.Member``.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from protocol.messages import Hello

from ..domain.streaks import Streak

if TYPE_CHECKING:
    from .room import Room

__all__ = [
    "CLOSE_POLICY",
    "CLOSE_RESTARTING",
    "CLOSE_TRY_LATER",
    "ROOM_ALPHABET",
    "ROOM_CODE_LENGTH",
]

#: Room codes use letters and digits that cannot be misread aloud: no 0/O, no 1/I.
ROOM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ROOM_CODE_LENGTH = 5
#: Websocket close code for flooding, garbage, a missing hello and a wrong password.
CLOSE_POLICY = 1008
#: Websocket close code for "come back": the room moved or its node went away; the client
#: reconnects and resumes, through any node (docs/protocol.md, restarts).
CLOSE_RESTARTING = 1012
#: Websocket close code when the server holds all the connections it allows, or all its
#: address may have, or cannot check a password soon enough.
CLOSE_TRY_LATER = 1013
#: Websocket close code for a connection of an account the operator closed
#: (``yukon mod close``; docs/protocol.md 6): do not reconnect with that token.
CLOSE_ACCOUNT_CLOSED = 4004
ACCOUNT_CLOSED_TEXT = "this account was closed by the server's operator"

#: How long frames still relayed for a guest replaced by its player's direct connection
#: (a route followed) are served as that player's: the relay's delay, with room to spare.
REPLACED_KEPT_S = 10.0
#: Addresses remembered for per-address limits and password failures, each; beyond, the
#: oldest are forgotten (an attacker rotating addresses must not grow them without bound).
_MAX_REMEMBERED = 10_000


@dataclass(eq=False)
class _Conn:
    id: int
    opened: float
    tokens: float
    filled: float
    address: str = ""
    player: _Player | None = None
    strikes: deque[float] = field(default_factory=deque)
    closed: bool = False
    #: A hello is being checked against storage; the connection waits for the answer.
    authenticating: bool = False
    #: A wrong password's answer is being held back, or the password check waits its
    #: turn (``pending_hello``); the hello deadline no longer applies.
    refusing: bool = False
    #: The address per-address limits count by (``limits.address_key``).
    key: str = ""
    #: A hello whose password check waits for its turn (``Password.turn``).
    pending_hello: Hello | None = None
    #: The check passed the server-wide wait already (``Password.turn``).
    gated: bool = False
    #: ``board``/``history`` requests being answered.
    queries: int = 0
    #: The hello being checked registers a name (counted in ``Handshake._may_register``).
    registering: bool = False
    #: A guest: the session of another node (its gateway), ``(node, its conn id)``, whose
    #: room lives here (``Nodes``). None: a connection of this node's own.
    guest: tuple[str, int] | None = None
    #: A join or watch is being looked up in the cluster's directory (``Locate``).
    locating: bool = False
    #: Its hello said ``follow``: the client reconnects to its room's node when told
    #: (``route``). On a guest: its gateway asked the owner to tell it (``Nodes.route``).
    follow: bool = False
    #: The device id its hello gave (``hello.device``), "" for none.
    device: str = ""
    #: The node the client asked for when it connected (``?node=``), "" if none: a
    #: balancer that ignores the route brings it elsewhere, and it is not told again.
    asked: str = ""
    #: A guest's request that left its room here on the way elsewhere (``join``,
    #: ``create``, ``daily``, ...: ``Play.leave_over``): handed back to its gateway with
    #: the guest's release (``Nodes.settle``), which serves it as its own node.
    bounce: bytes | str | None = None


@dataclass(eq=False)
class _Player:
    id: int
    name: str
    token: str
    conn: int | None = None
    #: The player's room here (set by the room as they enter and leave: its seat).
    room: Room[_Player] | None = None
    spectator: bool = False
    gone_at: float | None = None
    #: When the name was registered (wall time), for ``HubConfig.daily_min_age_s``.
    registered: float = 0.0
    #: A BOT account (docs/bots.md): its own lane of the pool, rooms that allow bots.
    bot: bool = False
    #: Where the player's latest connection came from (``limits.address_key``) and the
    #: device id its hello gave ("" for none): what the rating rules compare between two
    #: runners of one race (docs/ratings.md "One address"), never shown to a player.
    address: str = ""
    device: str = ""
    #: A daily attempt is being numbered by storage.
    daily_pending: bool = False
    #: The hint being worked out for this player (its request number), if any.
    hint_request: int | None = None
    #: Hint answers already known in the race ``hint_uid``, by full position: every
    #: position along a winning line given, and positions found lost or undecided.
    hint_uid: str = ""
    hint_answers: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: The node that holds this player's room, when it is another node: the session is
    #: away, and its frames go there (``Nodes``). None: the room, if any, is here.
    away: str | None = None
    #: The code of that room (the welcome names it: docs/protocol.md 4.15).
    away_room: str | None = None
    #: The player's rating, rounded (None: none yet), as the hello found it and rated
    #: races since changed it: ``room`` shows it beside the name (docs/ratings.md).
    rating: int | None = None
    provisional: bool = True
    #: The daily streak as the hello found it and won dailies moved it since (the
    #: welcome says it, by the server's date).
    streak: Streak = field(default_factory=Streak)

    @property
    def connected(self) -> bool:
        """The player's session has a connection (here, or a guest's on its gateway)."""
        return self.conn is not None


_V = TypeVar("_V")


def _forget_oldest(table: dict[str, _V], *, keep: Callable[[_V], bool] = lambda _: False) -> None:
    """Bound a per-address table: past ``_MAX_REMEMBERED`` entries, forget the oldest
    tenth (insertion order), except those ``keep`` holds on to."""
    if len(table) <= _MAX_REMEMBERED:
        return
    oldest = itertools.islice(table.items(), _MAX_REMEMBERED // 10)
    for key in [k for k, v in oldest if not keep(v)]:
        del table[key]
