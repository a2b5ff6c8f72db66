"""A player's page in the terminal (docs/protocol.md 4.27): rating, its history as a chart
of block characters, races, wins, best times, the daily streak. ``p`` opens it from the
lobby (my own) and on a chosen row of the results or a leaderboard; ``r`` on another's
page reports them to the server's operators (``report``, docs/protocol.md 4.33: the
server takes it only for someone you raced, and says so on the status line).

The chart is pure (``sparkline``); the screen asks ``player`` when it opens and draws the
``player_page`` that comes back (or the refusal's text)."""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType

from protocol.messages import Player, PlayerPage, Report
from protocol.times import format_ms

from .chrome import Base, Hints, Title
from .state import rating_text
from .widgets import Live, StatusLine

__all__ = ["PlayerScreen", "sparkline"]

BLOCKS = "▁▂▃▄▅▆▇█"
#: ``--ascii``: a rising line in plain characters.
ASCII_LEVELS = "_.-~=^*#"


def sparkline(ratings: tuple[tuple[int, int], ...], width: int, *, ascii: bool = False) -> str:
    """The newest ``width`` ratings as one line of characters, lowest to highest: a flat
    history is drawn mid-height (as the browser's chart and /players/NAME draw it)."""
    values = [r for _, r in ratings][-max(1, width) :]
    if not values:
        return ""
    levels = ASCII_LEVELS if ascii else BLOCKS
    low, high = min(values), max(values)
    span = max(high - low, 50)
    mid = (high + low) / 2
    top = len(levels) - 1
    return "".join(levels[round(top * (0.5 + (v - mid) / span))] for v in values)


class PlayerView(Live):
    """The page itself."""

    DEFAULT_CSS = """
    PlayerView { height: auto; padding: 1 1; }
    """

    def render(self) -> RenderableType:
        screen = self.screen
        page = self.session.player_page
        asked = screen.name_asked.casefold() if isinstance(screen, PlayerScreen) else ""
        if isinstance(page, str):
            return Text(page, style="#ff5f5f")
        if page is None or page.name.casefold() != asked:
            return Text("loading…", style="#8a8a8a")
        return self.page(page)

    def page(self, p: PlayerPage) -> Text:
        out = Text()
        out.append(p.name, style="bold")
        if p.bot:  # docs/bots.md: a program, shown as one
            out.append(" BOT", style="bold reverse")
        out.append("\n\n")
        if p.broke_rules:  # a mark in force (docs/fairplay.md): that, and nothing more
            out.append("This account broke this server's rules.\n", style="#ff5f5f")
            return out
        if p.rating is None:
            out.append("No rated race yet\n", style="#8a8a8a")
        else:
            out.append("Rating ", style="#8a8a8a")
            out.append(rating_text(p.rating, p.provisional), style="bold")
            if p.deviation is not None:
                out.append(f" ± {2 * p.deviation}", style="#8a8a8a")
            if p.provisional:
                out.append("  (provisional: fewer than 10 rated races)", style="#8a8a8a")
            out.append("\n")
        out.append(f"{p.races} race{'' if p.races == 1 else 's'} · {p.wins} won")
        out.append(f" · daily streak {p.streak} (best {p.best_streak})\n")
        if p.best:
            best = " · ".join(f"{b.rules} {format_ms(b.time_ms)}" for b in p.best)
            out.append(f"Best wins: {best}\n")
        if p.ratings:
            width = max(10, (self.size.width or 80) - 4)
            line = sparkline(p.ratings, width, ascii=self.session.ascii)
            values = [r for _, r in p.ratings]
            out.append("\n")
            out.append(line, style="bold #5fafff")
            out.append(f"\nlow {min(values)} · high {max(values)} · ", style="#8a8a8a")
            out.append(f"the last {len(line)} rated races, oldest first\n", style="#8a8a8a")
        else:
            out.append("\nNo rating history yet: each rated race adds a point.\n", style="#8a8a8a")
        return out


class PlayerScreen(Base):
    """A player's page, over whatever showed; Esc goes back to it."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("r", "report", "report"),
        Binding("question_mark", "help", "help"),
    ]
    HINTS = "r report · esc back · ? help"

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name_asked = name

    def compose(self) -> ComposeResult:
        yield Title("player")
        yield PlayerView()
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.session.player_page = None
        self.client.send(Player(self.name_asked))

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_report(self) -> None:
        """Report this player (about our latest race together; the server checks it)."""
        me = self.session.me
        if me is not None and me.casefold() == self.name_asked.casefold():
            self.session.say("this is your own page: there is nobody to report", "error")
            self.client.sync()
            return
        self.client.send(Report(self.name_asked))
