"""The room and race logic as a plain state machine (sans I/O).

``Hub`` holds every connection, player and room of a server. Each entry point takes an
event and the server's monotonic time and returns the effects to carry out
(``effects.Send``, ``Close``, ``Persist``); nothing here awaits, reads a socket or a
database, or looks at a clock of its own, so every path is tested with a fake clock.
The websocket layer (``server.connection``) feeds it and calls ``tick`` at
``next_deadline()``.

Session order, enforced here: ``hello`` first; then lobby messages (create, join,
watch); in a room ``ready``/``start``; during a race ``move``/``undo``/``resign``;
after it ``rematch`` or ``leave``. See docs/protocol.md.

The logic is split along its seams, one module each, so that each reads on its own:

- ``hub``: ``Hub``, the entry points; each routes its event to the part whose seam it is.
- ``state``: ``HubConfig`` and the records every part reads: connections, players, rooms.
- ``shared``: ``Shared``, the state the parts share (the tables, the timers, the effects
  being gathered, the time of the event) and the plumbing on it (send, error, close);
  ``Part``, the base of each part, which binds those names once.
- ``handshake``: connection limits, the hello, registration, resuming (``Handshake``);
  ``password``: a private server's password, checked in turn (``Password``).
- ``play``: rooms and the race inside them, from create to the result (``Play``).
- ``hints``, ``dailies``, ``restarts``: hints, the daily deal, races rebuilt after a
  restart; each built on ``Play``.
- ``postmortems``: post-mortems asked for, one per connection (``PostMortems``); the
  I/O layer works them out (``server.replays``).

The parts are collaborators, not mixins: each is an object built on the one ``Shared``
(and on ``Play`` where it needs a room's bookkeeping), and owns the state only its seam
uses (password failures, per-address counts, hints on their way). Nothing points back
to ``Hub``.
"""

from .hub import Hub
from .state import CLOSE_POLICY, ROOM_ALPHABET, HubConfig

__all__ = ["CLOSE_POLICY", "ROOM_ALPHABET", "Hub", "HubConfig"]
