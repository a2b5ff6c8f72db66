"""What the screens and widgets use of the app that runs them: the ``Host``.

``YukonApp`` (app.py) is the host; screens and widgets reach it through ``host(self)``
and never import app.py, so the client's imports run one way: app.py imports screens/,
screens/ imports widgets.py, and all three import this module. What the player does
goes up as calls of ``send`` and ``sync`` (and as Textual messages, such as a click on
the board); what is drawn is read from ``session`` and the link's state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

from textual.dom import DOMNode

from protocol.messages import Message

from .connection import LinkStatus
from .state import Session

__all__ = ["Host", "host"]


class Host(Protocol):
    """The app as its screens and widgets see it."""

    @property
    def session(self) -> Session:
        """The one session: every screen and widget draws from it."""

    @property
    def clock(self) -> Callable[[], float]:
        """The app's monotonic clock, in seconds."""

    @property
    def where(self) -> str:
        """The server in words."""

    @property
    def url(self) -> str:
        """The address the client dialled (``ws://`` or ``wss://``): a room's invite
        link is made from it (invite.py)."""

    @property
    def link_state(self) -> LinkStatus:
        """What the connection is doing."""

    @property
    def link_serial(self) -> int:
        """The session's status serial when the link last changed."""

    def send(self, *messages: Message) -> None:
        """Send what the player did, then ``sync``."""

    def sync(self) -> None:
        """Show the screen of the session's phase and redraw."""

    def join_or_watch(self, room: str) -> None:
        """Join ``room``; if the server refuses because it is racing or full, watch it."""

    def deck_changed(self) -> None:
        """The session's deck (``four_colour``, ``suit_letters``) changed: keep it for this
        name (``config.DeckMemory``) and redraw."""


def host(node: DOMNode) -> Host:
    """The app that runs ``node`` (a screen or a widget), as its ``Host``."""
    return cast(Host, node.app)
