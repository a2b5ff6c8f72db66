"""The room and race logic as a plain state machine (sans I/O).

``Hub`` holds every connection, player and room of a server. Each entry point takes an
event and the server's monotonic time and returns the effects to carry out
(``effects.Send``, ``Close``, ``Persist``); nothing here awaits, reads a socket or a
database, or looks at a clock of its own, so every path is tested with a fake clock.
The websocket layer (``server.runtime.connection``) feeds it and calls ``tick`` at
``next_deadline()``.

Session order, enforced here: ``hello`` first; then lobby messages (create, join,
watch); in a room ``ready``/``start``; during a race ``move``/``undo``/``resign``;
after it ``rematch`` or ``leave``. See docs/protocol.md.

The logic has two sides. The *session* is a connection and its player: identity, flood
bucket, errors, which room they are in. The *room* (``room.Room``) is a unit of its own:
members, race, clock, held progress, journal numbering, result, and everything a room
does. A room reaches the outside only through ``room.Outside`` (deliver a message to a
member, emit ``Journal``/``Persist``, set a timer, read the clocks and the config, draw a
deal, salt or race id): it never sees a connection, the hub's tables, an address or a
node, so the same room serves a local connection or a guest of another node, and is
tested alone (tests/server/test_room.py). A request it refuses returns a ``Refusal``,
which the session answers to its connection as an ``error``.

The session side is split along its seams, one module each:

- ``hub``: ``Hub``, the entry points; each routes its event to the part whose seam it is.
- ``queries``: what ``Hub`` answers without an event (figures, the directory's questions),
  its base: read from the tables, nothing changed.
- ``config``: ``HubConfig``, the numbers that shape a server (both sides read it).
- ``state``: the session's records: connections and players.
- ``timers``: ``TimerKind``, what each of the hub's timers is for (``Hub.tick`` matches
  on it exhaustively).
- ``shared``: ``Shared``, the state the parts share (the tables, the timers, the effects
  being gathered, the time of the event) and the plumbing on it (send, error, close);
  ``Part``, the base of each part, which binds those names once.
- ``handshake``: connection limits, the hello, registration, resuming (``Handshake``);
  ``password``: a private server's password, checked in turn (``Password``).
- ``play``: each request routed to the player's ``Room``, the room table and its codes,
  rooms per address, the cluster's ``Locate``, commits (``Play``, also the rooms' ``Outside``).
- ``hints``, ``dailies``, ``ghosts``, ``restarts``: hints, the daily deal, ghost rooms,
  rooms rebuilt from their journal (after a restart, or taken over from another node);
  each built on ``Play`` and on the ``Room``'s methods.
- ``nodes``: a cluster's sessions away on other nodes, and guests of other nodes;
  ``lobbies``: rooms without a race, snapshotted and adopted by a node taking over.
- ``postmortems``: post-mortems asked for, one per connection (``PostMortems``); the
  I/O layer works them out (``server.domain.replays``).

The parts are collaborators, not mixins: each is an object built on the one ``Shared``
(and on ``Play`` where it needs the rooms), and owns the state only its seam uses
(password failures, per-address counts, hints on their way). Nothing points back to
``Hub``, and nothing in a ``Room`` points to a part.
"""

from .config import HubConfig
from .hub import Hub
from .state import CLOSE_POLICY, ROOM_ALPHABET

__all__ = ["CLOSE_POLICY", "ROOM_ALPHABET", "Hub", "HubConfig"]
