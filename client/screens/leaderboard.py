"""The leaderboards: a board's page of standings, a day's daily."""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widgets import Input, Label, Static

from protocol import GameCode, InvalidCodeError
from protocol.messages import (
    Board,
    BoardPage,
    BoardRow,
    Daily,
)

from ..chrome import Hints, Title
from ..dailydeck import NextDaily
from ..state import rating_text
from ..widgets import (
    Live,
    StatusLine,
    outcome_cell,
)
from .picker import PICK_BINDINGS, RunPicker, run_cells

# -- leaderboards --------------------------------------------------------------------------


def _players(n: int) -> str:
    return f"{n} player" if n == 1 else f"{n} players"


class BoardTable(Live):
    """One page of a leaderboard, with my own row marked (and shown below if off the page)."""

    DEFAULT_CSS = """
    BoardTable { height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        session = self.session
        page = session.board
        screen = self.screen
        if page is None or not isinstance(screen, LeaderboardScreen) or not screen.matches(page):
            return Text("loading…", style="#8a8a8a")
        if not page.rows:
            return Text("nobody on this board yet", style="#8a8a8a")
        table = Table(box=None, pad_edge=False, header_style="bold #8a8a8a")
        for name, justify in (
            ("#", "right"),
            ("player", "left"),
            ("outcome", "left"),
            ("time", "right"),
            ("moves", "right"),
            ("score", "right"),
            ("cards", "right"),
            ("undos", "right"),
            *board_standing_columns(page),
        ):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        you = page.you
        picked = screen.selected
        for i, row in enumerate(page.rows):
            mine = you is not None and row.name == you.name and row.rank == you.rank
            style = "bold #5fafff" if mine else ""
            table.add_row(*self._cells(row), style=style + (" reverse" if i == picked else ""))
        if you is not None and you not in page.rows:
            table.add_row("", "...", *[""] * (len(table.columns) - 2))
            last = " reverse" if picked == len(page.rows) else ""
            table.add_row(*self._cells(you), style="bold #5fafff" + last)
        return table

    def _cells(self, r: BoardRow) -> list[RenderableType]:
        page = self.session.board
        extra = board_standing_cells(r, page) if page is not None else []
        return [str(r.rank), r.name, outcome_cell(r.outcome), *run_cells(r), *extra]


def board_standing_columns(page: BoardPage) -> list[tuple[str, str]]:
    """A board's rating column (and a daily board's streak column), when any row has one
    (docs/protocol.md 4.27; an older server sends neither)."""
    rows = [*page.rows, *([page.you] if page.you else [])]
    cols = [("rating", "right")] if any(r.rating is not None for r in rows) else []
    if page.kind == "daily" and any(r.streak for r in rows):
        cols.append(("streak", "right"))
    return cols


def board_standing_cells(r: BoardRow, page: BoardPage) -> list[RenderableType]:
    names = [name for name, _ in board_standing_columns(page)]
    cells: list[RenderableType] = []
    if "rating" in names:
        cells.append(rating_text(r.rating, False))
    if "streak" in names:
        cells.append(str(r.streak or ""))
    return cells


class LeaderboardScreen(RunPicker):
    """Today's daily board (with my row), earlier days, and any game code's board."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "day(-1)", "previous day"),
        Binding("right", "day(1)", "next day"),
        Binding("t", "today", "today"),
        Binding("c", "code", "game code"),
        Binding("y", "mine", "your row"),
        Binding("r", "race", "race the run"),
        Binding("a", "archive", "archive board"),
        Binding("p", "play_day", "play this day"),
        Binding("pagedown", "page(1)", "next page", show=False),
        Binding("pageup", "page(-1)", "previous page", show=False),
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("question_mark", "help", "help"),
        *PICK_BINDINGS,
    ]

    def __init__(
        self, *, date: str | None = None, code: str | None = None, archive: bool = False
    ) -> None:
        super().__init__()
        self.kind = "deal" if code else "archive" if archive and date else "daily"
        self.date: str | None = date
        self.code: str | None = code
        self.page_offset = 0
        self.around = False
        #: Today (UTC, as the server counts days): by this clock, until a reply says.
        self.today: str | None = dt.datetime.now(dt.UTC).date().isoformat()

    def compose(self) -> ComposeResult:
        yield Title("leaderboards")
        yield Static("", id="board-head")
        yield NextDaily()
        with Horizontal(id="code-row", classes="row"):
            yield Label("Game code", classes="label")
            yield Input(placeholder="YU1-C-AAAAAAB, then Enter", compact=True, id="board-code")
        yield BoardTable()
        yield StatusLine()
        yield Hints()

    def hints(self) -> str:
        if self.kind != "deal":
            return (
                "← → day · t today · a archive · p play day · y you · c code · PgUp PgDn"
                " · ↑↓ v replay · r race · esc back"
            )
        return (
            "t today's board · y you · c other code · PgUp PgDn · ↑↓ v replay · r race · esc back"
        )

    def runs(self) -> list[tuple[str | None, str]]:
        page = self.session.board
        if page is None or not self.matches(page):
            return []
        rows = list(page.rows)
        if page.you is not None and page.you not in page.rows:
            rows.append(page.you)
        return [(r.race, r.name) for r in rows]

    def mine(self) -> int:
        page = self.session.board
        you = page.you if page is not None else None
        return next((i for i, (_, n) in enumerate(self.runs()) if you and n == you.name), 0)

    def on_mount(self) -> None:
        self.query_one("#code-row").display = False
        self.ask()
        self.set_interval(1.0, lambda: self.query_one(NextDaily).refresh())

    def page_size(self) -> int:
        return max(5, self.size.height - 8) if self.size.height else 14

    def matches(self, page: BoardPage | None) -> bool:
        """Is ``page`` the answer to what this screen shows?"""
        if page is None or page.kind != self.kind:
            return False
        if self.kind != "deal":
            return self.date is None or page.date == self.date
        return page.code is not None and self.code is not None and page.code == self.code

    def ask(self) -> None:
        where = {"date": self.date} if self.kind != "deal" else {"code": self.code}
        limit = self.page_size()
        self.client.send(
            Board(self.kind, offset=self.page_offset, limit=limit, around=self.around, **where)
        )
        self.around = False

    def refresh_view(self) -> None:
        page = self.session.board
        if page is not None and self.matches(page):
            if self.kind == "daily" and self.date is None:
                self.date = self.today = page.date  # the server's today
            self.page_offset = page.offset  # (a page around my row starts where it starts)
        super().refresh_view()
        try:
            head = self.query_one("#board-head", Static)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head())

    def _head(self) -> Text:
        page = self.session.board
        text = Text(" ")
        if self.kind == "daily":
            text.append(f"Daily deal {self.date or 'today'}", style="bold")
            if self.date is not None and self.date == self.today:
                text.append(" (today)", style="bold")
            if page is not None and self.matches(page):
                text.append(f" · {_players(page.total)}", style="#8a8a8a")
                if page.par is not None:
                    text.append(f" · par {page.par}", style="#8a8a8a")
                if page.code:
                    text.append(f" · {page.code}", style="#8a8a8a")
                else:
                    text.append(" · code secret today", style="#8a8a8a")
        elif self.kind == "archive":
            text.append(f"Archive of {self.date}: best practice runs", style="bold")
            if page is not None and self.matches(page):
                text.append(f" · {_players(page.total)}", style="#8a8a8a")
                if page.code:
                    text.append(f" · {page.code}", style="#8a8a8a")
                else:
                    text.append(" · not in the archive yet", style="#8a8a8a")
        else:
            text.append(f"Game code {self.code}", style="bold")
            if page is not None and self.matches(page):
                text.append(f" · {_players(page.total)}", style="#8a8a8a")
        return text

    def action_archive(self) -> None:
        """``a``: this day's archive board (its practice runs from the archive), or back to
        its daily board (docs/protocol.md 4.28)."""
        if self.kind == "deal":
            return
        if self.date is None:
            self.date = self.today
        self.kind = "daily" if self.kind == "archive" else "archive"
        self.page_offset = 0
        self.ask()
        self.refresh_view()

    def action_play_day(self) -> None:
        """``p``: play this day's deal from the archive, as practice."""
        if self.kind != "deal" and self.date is not None:
            self.client.send(Daily(date=self.date))

    def _shift(self, days: int) -> None:
        base = dt.date.fromisoformat(self.date) if self.date else dt.datetime.now(dt.UTC).date()
        self.date = (base + dt.timedelta(days=days)).isoformat()

    def action_day(self, days: int) -> None:
        if self.kind == "deal":
            return
        self._shift(days)
        self.page_offset = 0
        self.ask()
        self.refresh_view()

    def action_today(self) -> None:
        self.kind, self.date, self.code, self.page_offset = "daily", None, None, 0
        self.ask()
        self.refresh_view()

    def action_page(self, pages: int) -> None:
        page = self.session.board
        total = page.total if page is not None and self.matches(page) else 0
        offset = max(0, self.page_offset + pages * self.page_size())
        if offset != self.page_offset and (pages < 0 or offset < total):
            self.page_offset = offset
            self.ask()

    def action_mine(self) -> None:
        self.around = True
        self.ask()

    def action_code(self) -> None:
        row = self.query_one("#code-row")
        row.display = True
        self.query_one("#board-code", Input).focus()

    def action_back(self) -> None:
        field = self.query_one("#board-code", Input)
        if field.has_focus:
            self.query_one("#code-row").display = False
            self.set_focus(None)
            return
        self.dismiss()

    @on(Input.Submitted, "#board-code")
    def _code(self, event: Input.Submitted) -> None:
        try:
            code = str(GameCode.parse(event.value))
        except InvalidCodeError as exc:
            self.session.say(f"game code: {exc}", "error")
            self.client.sync()
            return
        self.kind, self.code, self.page_offset = "deal", code, 0
        self.query_one("#code-row").display = False
        self.set_focus(None)
        self.ask()
        self.refresh_view()
