"""Issue 29's parts of the terminal client's daily screens (docs/protocol.md 4.28): the
countdown to the next daily deal and playing a past day from the archive. (The deck's
look, four colours and suits as letters, is drawn by ``widgets.BoardView`` from the
session, and kept per name by ``config.DeckMemory``.)

The countdown runs from when the server's ``next_daily_ms`` arrived, on the app's
monotonic clock: a machine whose wall clock or time zone is wrong still counts to the
server's midnight."""

from __future__ import annotations

import datetime as dt

from rich.console import RenderableType
from rich.text import Text

from .widgets import Live

__all__ = ["NextDaily", "archive_date", "format_left"]


def format_left(ms: int) -> str:
    """``5:04:09`` (hours, minutes, seconds), rounded up: 0:00:00 only once the day came."""
    total = -(-ms // 1000)
    return f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"


def countdown_text(left_ms: int | None) -> str:
    """The countdown as words, or "" before the server said."""
    if left_ms is None:
        return ""
    if left_ms <= 0:
        return "The next daily deal is here"
    return f"Next daily deal in {format_left(left_ms)}"


def archive_date(text: str) -> str | None:
    """A day typed for the archive as ``YYYY-MM-DD``, or None if it is not one. Whether it
    is in the archive (its code public) is the server's to say (``not_archived``)."""
    try:
        return dt.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        return None


class NextDaily(Live):
    """One line: the time to the next daily deal, by the server's clock (its screen
    refreshes it every second)."""

    DEFAULT_CSS = """
    NextDaily { height: 1; width: 30; color: $text-muted; }
    """

    def render(self) -> RenderableType:
        return Text(countdown_text(self.session.daily_left_ms(self.client.clock())))
