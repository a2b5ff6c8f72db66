"""The kinds a room is made of: its states and their transitions (as data), the member
and the outside it sees, and the refusal it answers with.

Nothing here does anything: the types every layer of the room (``RoomBase`` and the
layers on it, see the package docstring) names, and the hub implements (``Member`` is the
hub's player, ``Outside`` its ``Play``).
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Protocol, TypeVar

from protocol.messages import Accepted, Message, Progress, Refused, Undone

from ...domain.records import RaceRecord
from ..config import HubConfig
from ..effects import Effect
from ..timers import TimerKind

__all__ = [
    "M",
    "OVERTAKE",
    "TRANSITIONS",
    "IllegalTransition",
    "Member",
    "Outside",
    "Refusal",
    "RoomState",
]


class RoomState(enum.StrEnum):
    """A room's state. The values are the wire's (``room.state``, docs/protocol.md 3.3,
    ``protocol.messages.ROOM_STATES``), but for ``LOST``, which no client sees: another
    node holds the room now, and what is left of it here answers nothing."""

    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"
    LOST = "lost"


#: The states a room may go to from each state, as data (as h11 writes its own): the one
#: place that changes a room's state (``RoomBase._enter``) checks it. A lobby races at once
#: for a daily attempt and when its race is rebuilt from the journal (``Room.rebuild``);
#: any state may be lost to another node; nothing comes back from lost.
TRANSITIONS: dict[RoomState, frozenset[RoomState]] = {
    RoomState.LOBBY: frozenset({RoomState.COUNTDOWN, RoomState.RACING, RoomState.LOST}),
    RoomState.COUNTDOWN: frozenset({RoomState.RACING, RoomState.LOST}),
    RoomState.RACING: frozenset({RoomState.FINISHED, RoomState.LOST}),
    RoomState.FINISHED: frozenset({RoomState.LOBBY, RoomState.LOST}),
    RoomState.LOST: frozenset(),
}


class IllegalTransition(RuntimeError):
    """A room was told to go to a state its own can not lead to: a bug in the server,
    never a player's doing (a player's wrong request is refused before, with
    ``wrong_state``)."""


#: Frames that go out without first releasing a held ``progress``: the answers to a
#: player's own moves (they may overtake it, docs/protocol.md 4.11), and progress itself.
OVERTAKE = (Accepted, Refused, Undone, Progress)


class Member(Protocol):
    """A member as a room sees it: who, whether connected, and the seat the room keeps.

    ``room`` and ``spectator`` are the room's to set (a member enters, leaves, or is left
    alone when the room closes); the session reads ``room`` to route a request."""

    id: int
    name: str
    spectator: bool
    #: The member's room (a ``Room``), or None. ``Any``: ``Room`` is built on this module
    #: (it cannot be imported here without a circle); the hub's record names its type
    #: (``state._Player.room``), and the room only ever sets it.
    room: Any
    #: The member's rating, rounded (None: none yet), and whether it is provisional: what
    #: ``room`` shows beside the name (the hub sets both, docs/ratings.md).
    rating: int | None
    provisional: bool
    #: A BOT account (docs/bots.md): it enters only rooms that allow bots.
    bot: bool
    #: Where the member's connection came from (an address key) and its device id (""
    #: for none): for the rating rules only (``PlayerResult.address``).
    address: str
    device: str

    @property
    def connected(self) -> bool: ...


M = TypeVar("M", bound=Member)


#: ``Outside`` only takes members in (``deliver``): contravariant in them.
_M_contra = TypeVar("_M_contra", bound=Member, contravariant=True)


class Outside(Protocol[_M_contra]):
    """Everything a room may do or know beyond itself (the hub's ``Play`` is one).

    ``room`` in ``persist``, ``timer`` and ``vacated`` is the ``Room`` itself, typed
    ``Any`` for the reason ``Member.room`` is; the hub's ``Play`` names its type."""

    @property
    def now(self) -> float:
        """The time of the event at hand (monotonic seconds)."""
        ...

    @property
    def config(self) -> HubConfig:
        """The server's numbers (``countdown_s``, ``progress_hold_s``)."""
        ...

    def wall(self) -> float:
        """Wall time (seconds since the epoch): dates, the daily deal, records."""
        ...

    def deliver(self, member: _M_contra, message: Message) -> None:
        """Send ``message`` to ``member``'s session, if it is connected (here or away)."""
        ...

    def emit(self, effect: Effect) -> None:
        """A storage effect (``Journal``)."""
        ...

    def persist(self, room: Any, record: RaceRecord) -> None:
        """The race is over: store it; the commit comes back as ``Room.committed``."""
        ...

    def timer(self, when: float, kind: TimerKind, room: Any) -> None:
        """Wake the room at ``when``: ``countdown``, ``progress``, ``ghost``, ``limit``."""
        ...

    def new_race_id(self) -> tuple[int, str]:
        """A race id unique in this process, and the race's uid across restarts."""
        ...

    def random_deal(self) -> int | bytes: ...

    def new_salt(self) -> str: ...

    def redeal(self, room: Any) -> None:
        """A new secret deal for the room's next race (its ``deal``, ``salt``, ``winnable``:
        ``rooms.deals``)."""
        ...

    def vacated(self, room: Any) -> None:
        """The last player left: the room is gone (its code, its counts)."""
        ...


class Refusal(NamedTuple):
    """A request the room refused: the session answers it as an ``error``."""

    code: str
    text: str
    seq: int | None = None
