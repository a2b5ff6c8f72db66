"""A room: its members, its race, its clock and its messages, as a unit of its own.

A ``Room`` holds everything of one room (members, host, ready, the countdown, the race, the
ids and journal numbering, the held ``progress``, a ghost and its timer, the result, a daily
attempt's fields) and does everything a room does: members enter and leave, ready, the
countdown, the race's moves, undos and resignations, time limits, the end of the race and
its result after the commit, rematches, the ghost's timer, the journal's entries, a
member's resync, and the ``room`` and ``race`` messages.

It sees the world only through ``Outside`` (docs/architecture.md): a message delivered to
a member, wherever that member's session is (a connection here, or a guest whose gateway
is another node: the room cannot tell); a storage effect (``Journal``, ``Persist``); a
timer; the clocks; the config; a new deal, salt or race id. It never sees a connection,
the hub's tables, a flood bucket, an address or a node. A request it refuses for a room
reason returns a ``Refusal`` (the error's code, text and ``seq``), which the session
answers to its connection; the room itself answers nobody.

Members are ``Member`` records (the hub's players): an id, a name, whether their session
is connected, and the seat the room keeps on them (``room``, ``spectator``). A room is
rebuilt from its journal (``Room.rebuild``): after a restart, and when another node takes
it over (docs/cluster.md), which is how a room is handed over.

The package is one class in layers, a module each; each layer is built on the one below
and may use only what is below it, so a reader holds one seam at a time and the imports
say what each uses:

- ``kinds``: ``RoomState`` and its ``TRANSITIONS`` (data), ``IllegalTransition``, the
  ``Member`` and the ``Outside`` a room sees, ``Refusal``, ``OVERTAKE``.
- ``base``: ``RoomBase``, the room's fields; who is a member, who is connected, the state
  changed (``_enter``), the host handed on.
- ``progress``: ``RoomProgress``, the held ``progress`` and ``send``.
- ``views``: ``RoomViews``, the ``room`` and ``race`` messages, a member's resync.
- ``race``: ``RoomRace``, the race from its start to its result, hints, the ghost, the
  journal.
- ``members``: ``RoomLobby``, members entering and leaving, the lobby, the rematch.
- ``rebuild``: ``Room``, the whole of it, and a room rebuilt from its journal.
"""

from .base import RoomBase
from .kinds import (
    OVERTAKE,
    TRANSITIONS,
    IllegalTransition,
    Member,
    Outside,
    Refusal,
    RoomState,
)
from .progress import PROGRESS_GRID_S, progress_due
from .race import rated_ranks
from .rebuild import Room

__all__ = [
    "OVERTAKE",
    "PROGRESS_GRID_S",
    "TRANSITIONS",
    "IllegalTransition",
    "Member",
    "Outside",
    "Refusal",
    "Room",
    "RoomBase",
    "RoomState",
    "progress_due",
    "rated_ranks",
]
