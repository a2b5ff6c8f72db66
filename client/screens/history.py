"""My own races, newest first."""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.widgets import Static

from protocol.messages import (
    History,
    HistoryPage,
    HistoryRow,
)

from ..chrome import Hints, Title
from ..state import format_ms
from ..widgets import (
    Live,
    StatusLine,
    outcome_cell,
)
from .picker import PICK_BINDINGS, RunPicker, run_cells

# -- history -------------------------------------------------------------------------------


def _races(n: int) -> str:
    return f"{n} race" if n == 1 else f"{n} races"


class HistoryTable(Live):
    """One page of my own results, newest first."""

    DEFAULT_CSS = """
    HistoryTable { height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        page = self.session.history
        screen = self.screen
        if page is None or not isinstance(screen, HistoryScreen) or not screen.asked:
            return Text("loading…", style="#8a8a8a")
        if not page.rows:
            return Text("no races yet" if page.offset == 0 else "no more races", style="#8a8a8a")
        # Nine columns in 76: one space between them, the day without its year.
        table = Table(box=None, pad_edge=False, collapse_padding=True, header_style="bold #8a8a8a")
        for name, justify in (
            ("when", "left"),
            ("race", "left"),
            ("rank", "right"),
            ("outcome", "left"),
            ("time", "right"),
            ("moves", "right"),
            ("score", "right"),
            ("cards", "right"),
            ("undos", "right"),
        ):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        for i, row in enumerate(page.rows):
            table.add_row(*self._cells(row), style="reverse" if i == screen.selected else "")
        return table

    @staticmethod
    def _cells(r: HistoryRow) -> list[RenderableType]:
        when = dt.datetime.fromtimestamp(r.finished_ms / 1000).strftime("%m-%d %H:%M")
        if r.date is not None:  # the day is the daily's (UTC), "when" the local clock's
            race = "daily practice" if r.practice else f"daily {r.date[5:]}"
        else:
            race = f"room {r.room}" if r.room else "a race"
        outcome = outcome_cell(r.outcome)
        if r.hinted:
            outcome.append(" (h)", style="#87d7ff")
        return [when, race, f"{r.rank}/{r.players}", outcome, *run_cells(r)]


class HistoryScreen(RunPicker):
    """My results, newest first, with my totals; from the lobby and the results."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pagedown", "page(1)", "next page"),
        Binding("pageup", "page(-1)", "previous page"),
        Binding("right", "page(1)", "next page", show=False),
        Binding("left", "page(-1)", "previous page", show=False),
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("question_mark", "help", "help"),
        *PICK_BINDINGS,
    ]
    HINTS = "PgUp PgDn page (or ← →) · ↑↓ v replay · esc back · (h): a hinted run"

    def runs(self) -> list[tuple[str | None, str]]:
        page = self.session.history
        me = self.session.me or ""
        return [(r.race, me) for r in page.rows] if page is not None and self.asked else []

    def mine(self) -> int:
        return 0

    def __init__(self) -> None:
        super().__init__()
        self.page_offset = 0
        #: A page was asked for since this screen opened (an older one is not shown).
        self.asked = False

    def compose(self) -> ComposeResult:
        yield Title("history")
        yield Static("", id="history-head")
        yield HistoryTable()
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.session.history = None
        self.ask()

    def page_size(self) -> int:
        return max(5, min(50, self.size.height - 7)) if self.size.height else 14

    def ask(self) -> None:
        self.asked = True
        self.client.send(History(offset=self.page_offset, limit=self.page_size()))

    def refresh_view(self) -> None:
        super().refresh_view()
        try:
            head = self.query_one("#history-head", Static)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head(self.session.history))

    def _head(self, page: HistoryPage | None) -> Text:
        text = Text(" Your races", style="bold")
        if page is None:
            return text
        text.append(f" · {_races(page.games)} · {page.wins} won", style="#8a8a8a")
        if page.best_time_ms is not None:
            text.append(f" · best {format_ms(page.best_time_ms)}", style="#8a8a8a")
        if page.games > len(page.rows):
            last = min(page.games, page.offset + len(page.rows))
            text.append(f" · {page.offset + 1}-{last} of {page.games}", style="#8a8a8a")
        return text

    def action_page(self, pages: int) -> None:
        page = self.session.history
        total = page.games if page is not None else 0
        offset = max(0, self.page_offset + pages * self.page_size())
        if offset != self.page_offset and (pages < 0 or offset < total):
            self.page_offset = offset
            self.ask()

    def action_back(self) -> None:
        self.dismiss()
