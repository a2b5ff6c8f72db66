"""What the operator's marks and account states do to a running hub (docs/fairplay.md,
"On a running server"): every node reads them from the database every few seconds and
hands them over as an ``Enforce`` event; this part applies them.

A closed account's sessions here are told (``account_closed``) and closed with 4004, and
its next hello is refused the same way (``Handshake.attach``); a waiting player whose marks
changed waits on in their new lane of the quick-race pool, so that marked accounts meet
only each other. Reading the database on every node, rather than a message on the bus,
makes a mark take effect on each node by itself, a node that was down included.
"""

from __future__ import annotations

from collections.abc import Mapping

from .quick import Quick
from .shared import Part, Shared
from .state import ACCOUNT_CLOSED_TEXT, CLOSE_ACCOUNT_CLOSED

__all__ = ["Enforcement"]


class Enforcement(Part):
    """Applies the marks and account states (see the module docstring)."""

    def __init__(self, shared: Shared, quick: Quick) -> None:
        super().__init__(shared)
        self._quick = quick

    def apply(
        self,
        marks: Mapping[int, frozenset[str]],
        closed: frozenset[int],
        muted: frozenset[int],
        now: float,
    ) -> None:
        shared = self._shared
        shared.marks, shared.closed_accounts, shared.muted = dict(marks), closed, muted
        for c in list(self._conns.values()):
            p = c.player
            if p is not None and p.id in closed and not c.closed:
                self._error(c, "account_closed", ACCOUNT_CLOSED_TEXT)
                self._close(c, CLOSE_ACCOUNT_CLOSED, "account closed")
        self._quick.relane(now)
