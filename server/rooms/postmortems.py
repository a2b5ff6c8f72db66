"""Post-mortems asked for: one on its way per connection, ``QUEUE_LIMIT`` for the server.

A ``postmortem`` becomes an ``Examine`` effect: the I/O layer finds the run in storage,
checks that it may be shown, and has the solver's worker process work it out
(``server.domain.replays``); the answer comes back through ``Hub.postmortem_answered``. The
limits are counted here, where every request passes, so that no connection can keep the
solver's process busy with more than one run at a time.
"""

from __future__ import annotations

from protocol.messages import Message, PostMortem

from .effects import Examine, Send
from .shared import Part, Shared
from .state import _Conn, _Player

__all__ = ["PostMortems", "QUEUE_LIMIT"]

#: Post-mortems on their way at once, for the whole server (docs/limits.md); the I/O
#: layer (``server.domain.replays``) holds HTTP requests to the same number.
QUEUE_LIMIT = 16


class PostMortems(Part):
    """The post-mortems on their way, by connection."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        #: Connections whose post-mortem is on its way (connection ids are never reused).
        self._asking: set[int] = set()

    def ask(self, c: _Conn, p: _Player, msg: PostMortem) -> None:
        if c.id in self._asking:
            self._error(
                c,
                "too_many_queries",
                "your last post-mortem is still being worked out; wait for its answer",
            )
            return
        if len(self._asking) >= QUEUE_LIMIT:
            self._error(
                c, "unavailable", "the server is working out many post-mortems; ask again soon"
            )
            return
        self._asking.add(c.id)
        self._out.append(Examine(c.id, p.id, msg))

    def answered(self, conn: int, reply: Message) -> None:
        """The answer (or the error) for connection ``conn``: it may ask again."""
        self._asking.discard(conn)
        c = self._conns.get(conn)
        if c is not None and not c.closed:
            self._out.append(Send(conn, reply))
