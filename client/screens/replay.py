"""A run's replay: step through its moves, play it, its post-mortem."""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widgets import Input, Label, Static

from protocol.messages import (
    Ghost,
    PostMortemAnswer,
)

from ..chrome import Base, Hints, Title
from ..invite import replay_link
from ..replay import SPEEDS, ReplayRun, postmortem_text
from ..state import RaceBoard, format_ms
from ..widgets import (
    BoardView,
    Live,
    StatusLine,
)

# -- replay --------------------------------------------------------------------------------


class ReplayBoard(BoardView):
    """The board of a replay: the position its screen is at, read-only."""

    def board(self) -> RaceBoard | None:
        screen = self.screen
        return screen.position() if isinstance(screen, ReplayScreen) else None


class MoveList(Live):
    """The run's actions around the one shown, numbered, the current one highlighted;
    for a won run the wasted moves are dimmed."""

    DEFAULT_CSS = """
    MoveList { width: 16; height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        screen = self.screen
        run = self.session.replay
        if not isinstance(screen, ReplayScreen) or run is None or not run.complete:
            return Text("")
        pm = self.session.postmortem(run.race, run.player)
        wasted = set(pm.wasted) if isinstance(pm, PostMortemAnswer) else set()
        rows = max(1, self.size.height)
        first = max(0, min(screen.k - rows // 2, run.total - rows))
        text = Text(no_wrap=True, overflow="ellipsis")
        for i in range(first + 1, min(run.total, first + rows) + 1):
            style = "reverse bold" if i == screen.k else "#6c6c6c strike" if i in wasted else ""
            text.append(f"{i:>3} {run.actions[i - 1][1]}\n", style=style)
        return text


class ReplayScreen(Base):
    """One run of a finished race, step by step (docs/protocol.md 4.22): forward, back, to
    the start, the end or a move number, or played at 1x, 4x or 16x with its real timing;
    the clock and move count at that point, the move list, the post-mortem, the link."""

    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "forward"),
        Binding("left", "step(-1)", "back"),
        Binding("home", "to(0)", "start"),
        Binding("end", "to(-1)", "end"),
        Binding("space", "play", "play/pause"),
        Binding("s", "speed", "speed"),
        Binding("g", "goto", "go to a move"),
        Binding("j", "losing", "the losing move"),
        Binding("c", "copy_link", "copy the link"),
        Binding("r", "race", "race this run"),
        Binding("escape", "back", "back"),
        Binding("q", "back", "back", show=False),
        Binding("question_mark", "help", "help"),
    ]

    def __init__(self, race: str, player: str) -> None:
        super().__init__()
        self.race_id = race
        self.player = player
        #: How many actions are played in the position shown.
        self.k = 0
        #: Playing: the run's clock (ms) and the app's clock (s) when it was read.
        self.playing: tuple[float, float] | None = None
        self.rate = SPEEDS[0]
        self._shown: tuple[int, RaceBoard] | None = None

    def compose(self) -> ComposeResult:
        yield Title("replay")
        yield Static("", id="replay-head")
        with Horizontal(id="replay-body"):
            yield ReplayBoard(id="board")
            yield MoveList(id="replay-moves")
        yield Static("", id="replay-pm")
        with Horizontal(id="jump-row", classes="row"):
            yield Label("Move number", classes="label")
            yield Input(placeholder="0 to the last, then Enter", compact=True, id="replay-jump")
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.query_one("#jump-row").display = False
        self.client.send(*self.session.open_replay(self.race_id, self.player))
        self.set_interval(0.05, self._tick)

    def hints(self) -> str:
        return (
            "← → step · Home End · space play · s speed · g move · j losing · c link · r race · esc"
        )

    def run(self) -> ReplayRun | None:
        run = self.session.replay
        return run if run is not None and run.race == self.race_id and run.complete else None

    def link(self) -> str | None:
        try:
            return replay_link(self.client.url, self.race_id, self.player)
        except ValueError:
            return None

    def position(self) -> RaceBoard | None:
        """The position shown, as a board (the runner's view), with what would have
        kept a win lit at the position before the losing move."""
        run = self.run()
        if run is None:
            return None
        if self._shown is None or self._shown[0] != self.k:
            board = RaceBoard(run.race_at(self.k), 0.0, ascii=self.session.ascii)
            self._shown = (self.k, board)
        board = self._shown[1]
        pm = self.session.postmortem(run.race, run.player)
        lost = isinstance(pm, PostMortemAnswer) and pm.status == "lost"
        board.hint = pm.line[0] if lost and self.k == pm.last_winnable else None  # type: ignore[union-attr]
        return board

    def refresh_view(self) -> None:
        super().refresh_view()
        try:
            head = self.query_one("#replay-head", Static)
            pm = self.query_one("#replay-pm", Static)
        except NoMatches:  # not mounted yet
            return
        head.update(self._head())
        pm.update(self._postmortem())

    def _head(self) -> Text:
        run = self.session.replay
        text = Text(" ")
        if run is None or run.race != self.race_id:
            return text
        if run.refused is not None:
            text.append(f"{self.player}'s run: {run.refused}", style="bold #ff5f5f")
            return text
        page = run.page
        if page is None or not run.complete:
            text.append(f"loading {self.player}'s run…", style="#8a8a8a")
            return text
        text.append(f"{page.player}'s run", style="bold")
        if page.date is not None:
            text.append(f" · daily {page.date}" + (" (practice)" if page.practice else ""))
        elif page.room is not None:
            text.append(f" · room {page.room}")
        text.append(f" · #{page.rank} of {len(page.players)} · {page.outcome}")
        text.append(f" at {format_ms(page.time_ms)} · {page.code}", style="#8a8a8a")
        game = run.games[self.k]
        ms = self.playing[0] if self.playing is not None else run.time_at(self.k)
        text.append(f"\n {format_ms(int(ms))}", style="bold")
        text.append(f"  move {self.k} of {run.total} · {run.counts[self.k]} moves")
        text.append(f" · {game.cards_on_foundations}/52 cards")
        last = run.actions[self.k - 1][1] if self.k else None
        what = "the deal" if last is None else "undo" if last == "undo" else last
        text.append(f" · {what}", style="bold")
        state = f"playing {self.rate}x" if self.playing is not None else f"paused · {self.rate}x"
        text.append(f" · {state}", style="#8a8a8a")
        link = self.link()
        if link is not None:
            text.append(f"\n Link: {link}", style="#8a8a8a")
        return text

    def _postmortem(self) -> Text:
        run = self.run()
        if run is None:
            return Text("")
        pm = self.session.postmortem(run.race, run.player)
        text = Text(" Post-mortem: ", style="bold")
        if pm is None:
            text.append("working it out…", style="#8a8a8a")
        elif isinstance(pm, str):
            text.append(pm.removeprefix("post-mortem: "), style="#d7af00")
        else:
            text.append(postmortem_text(pm))
        return text

    def go(self, k: int) -> None:
        run = self.run()
        if run is None:
            return
        self.k = max(0, min(run.total, k))
        if self.playing is not None and self.k >= run.total:
            self.playing = None
        self.client.sync()

    def _tick(self) -> None:
        run = self.run()
        if self.playing is None or run is None:
            return
        now = self.client.clock()
        clock_ms = self.playing[0] + (now - self.playing[1]) * 1000 * self.rate
        self.playing = (clock_ms, now)
        self.k = run.due(clock_ms)
        if self.k >= run.total:
            self.k, self.playing = run.total, None
        self.client.sync()

    def action_step(self, delta: int) -> None:
        self.playing = None
        self.go(self.k + delta)

    def action_to(self, k: int) -> None:
        run = self.run()
        self.playing = None
        self.go(run.total if k < 0 and run is not None else k)

    def action_play(self) -> None:
        run = self.run()
        if run is None:
            return
        if self.playing is not None:
            self.playing = None
        else:
            if self.k >= run.total:
                self.k = 0
            self.playing = (float(run.time_at(self.k)), self.client.clock())
        self.client.sync()

    def action_speed(self) -> None:
        if self.playing is not None:  # the time so far at the old speed
            self._tick()
        self.rate = SPEEDS[(SPEEDS.index(self.rate) + 1) % len(SPEEDS)]
        self.client.sync()

    def action_losing(self) -> None:
        run = self.run()
        pm = self.session.postmortem(run.race, run.player) if run is not None else None
        if (
            isinstance(pm, PostMortemAnswer)
            and pm.status == "lost"
            and pm.last_winnable is not None
        ):
            self.playing = None
            self.go(pm.last_winnable)

    def action_goto(self) -> None:
        self.query_one("#jump-row").display = True
        self.query_one("#replay-jump", Input).focus()

    def action_race(self) -> None:
        """r: race this run as a ghost (docs/protocol.md 4.23): its room replaces the
        replay, or the server says why not (a run of today's daily before one's own)."""
        self.client.send(Ghost(self.race_id, self.player))

    def action_copy_link(self) -> None:
        link = self.link()
        if link is None:
            return
        self.app.copy_to_clipboard(link)
        self.session.say(f"copied the replay's link, if the terminal allows it: {link}")
        self.client.sync()

    def action_back(self) -> None:
        field = self.query_one("#replay-jump", Input)
        if field.has_focus:
            self.query_one("#jump-row").display = False
            self.set_focus(None)
            return
        self.session.close_replay()
        self.dismiss()

    @on(Input.Submitted, "#replay-jump")
    def _jump(self, event: Input.Submitted) -> None:
        self.query_one("#jump-row").display = False
        self.set_focus(None)
        try:
            k = int(event.value)
        except ValueError:
            self.session.say(f"move number: {event.value!r} is not a number", "error")
            self.client.sync()
            return
        self.playing = None
        self.go(k)
