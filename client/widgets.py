"""The widgets that draw the session: the board, the standings, headers and the status line.

Each one renders straight from the host's ``session`` (host.py) when refreshed, so the app
only has to call ``refresh`` after a change. The board is drawn by hand (one Rich ``Text``)
so that it fits an 80x24 terminal exactly, and grows with a larger one; a click on it goes
up as a ``BoardView.Clicked`` message. Nothing here imports the screens or the app.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.content import Content
from textual.message import Message
from textual.style import Style
from textual.widget import Widget
from textual.widgets import Checkbox

from protocol import Rules, YukonError
from protocol.messages import PlayerProgress, RankEntry, Room

from .cards import GLYPHS, SUIT_ORDER, ink, label
from .host import Host, host
from .invite import invite_link
from .state import (
    DONE_STATES,
    FOUNDATION,
    RaceBoard,
    Session,
    change_text,
    format_ms,
    rating_text,
)

__all__ = [
    "BoardView",
    "Live",
    "RaceHeader",
    "ResultsView",
    "RoomView",
    "StandingsView",
    "StatusLine",
    "Target",
    "TickBox",
    "bar",
    "cut",
    "describe_rules",
    "outcome_cell",
    "outcome_text",
    "room_invite",
]

# Colours: cards look like cards (a light face, red or black ink), backs are blue.
FACE = "#f0f0e8"
BACK = "#6f8fdf on #203060"
PICKED = "#ffd75f"
TARGET = "#8fdf8f"
#: The card a hint says to move, and where to.
HINTED = "#87d7ff"
EMPTY = "#606060"
#: The widest a name is drawn in the results' table (cells).
NAME_CELLS = 22


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` terminal cells, an ellipsis where it was cut. Cells,
    not characters: an emoji or a CJK letter takes two, so a name of them measured by
    ``len`` would push every column after it."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    return set_cell_size(text, width - 1).rstrip() + "…"


def pad(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells and filled with spaces to exactly ``width``."""
    shown = cut(text, width)
    return shown + " " * (width - cell_len(shown))


def describe_rules(rules: str) -> str:
    try:
        return Rules.parse(rules).describe()
    except YukonError:
        return rules


def room_invite(client: Host) -> str | None:
    """The invite link of the session's room, or None: no room, or a daily room, which
    nobody else may enter (``join`` and ``watch`` say ``no_such_room``)."""
    room = client.session.room
    if room is None or room.max_players == 1:
        return None
    try:
        return invite_link(client.url, room.room, room.key)
    except ValueError:  # not a ws:// or wss:// address: nothing a browser could open
        return None


def outcome_text(state: str) -> str:
    return {
        "playing": "playing",
        "stuck": "stuck",
        "won": "won",
        "resigned": "resigned",
        "timeout": "out of time",
        "abandoned": "abandoned",
    }.get(state, state)


def bar(cards: int, width: int, *, ascii: bool = False) -> str:
    """Cards on the foundations (0-52) as a bar ``width`` cells long."""
    cards = max(0, min(52, cards))
    if ascii:
        full = round(cards * width / 52)
        return "#" * full + "." * (width - full)
    eighths = round(cards * width * 8 / 52)
    full, part = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[part] if part else ""
    return ("█" * full + partial).ljust(width, "·")


def outcome_cell(outcome: str) -> Text:
    """A run's outcome as the results, the boards and the history show it: green won,
    red stuck, amber the rest."""
    colour = {"won": "#5fd75f", "stuck": "#ff5f5f"}.get(outcome, "#d78700")
    return Text(outcome_text(outcome), style=colour)


class Live(Widget):
    """A widget drawn from the session; ``refresh`` redraws it."""

    @property
    def client(self) -> Host:
        return host(self)

    @property
    def session(self) -> Session:
        return self.client.session


class TickBox(Checkbox):
    """A checkbox whose state reads without colour: ``X`` when on, blank when off
    (Textual's draws ``X`` in both, only the colour differs); ``[X]`` / ``[ ]`` in ASCII."""

    @property
    def _button(self) -> Content:
        mark = "X" if self.value else " "
        style = self.get_visual_style("toggle--button")
        session = getattr(self.app, "session", None)
        if session is not None and session.ascii:
            return Content.assemble("[", (mark, style), "]")
        side = Style(foreground=style.background, background=self.background_colors[1])
        return Content.assemble((self.BUTTON_LEFT, side), (mark, style), (self.BUTTON_RIGHT, side))


# -- the board ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What a click on the board hits."""

    kind: str  # card, column, foundation
    column: int = 0
    card: str = ""
    suit: int = 0


class BoardView(Live):
    """Foundations, then the seven columns drawn downwards, with the picked card lifted and
    its legal destinations lit. Face-down cards are backs, or a count when space is short.

    A click on a card, a column or a foundation posts ``BoardView.Clicked``; the screen
    decides what it means."""

    class Clicked(Message):
        """The player clicked ``target`` on the board."""

        def __init__(self, target: Target) -> None:
            super().__init__()
            self.target = target

    DEFAULT_CSS = """
    BoardView { width: 1fr; height: 1fr; min-width: 37; }
    """

    LEFT = 1  # margin before column 1

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cw = 6
        self._rows: list[list[Target | None]] = []

    def cell_width(self) -> int:
        return max(5, min(8, (self.size.width - self.LEFT) // 7))

    def _face(
        self, card: str, *, lifted: bool = False, target: bool = False, hinted: bool = False
    ) -> Text:
        session = self.session
        colour = ink(card, four=session.four_colour)
        bg = PICKED if lifted else TARGET if target else HINTED if hinted else FACE
        shown = label(card, ascii=session.letters).center(self._cw - 1)
        return Text(shown, style=f"bold {colour} on {bg}")

    def _back(self, count: int | None = None) -> Text:
        w = self._cw - 1
        if count is None:
            return Text(("#" if self.session.ascii else "░") * w, style=BACK)
        return Text(
            f"×{count}".center(w) if not self.session.ascii else f"x{count}".center(w), style=BACK
        )

    def _slot(self, text: str, *, target: bool = False, hinted: bool = False) -> Text:
        style = f"bold black on {TARGET}" if target else EMPTY
        if hinted and not target:
            style = f"bold black on {HINTED}"
        return Text(text.center(self._cw - 1), style=style)

    def board(self) -> RaceBoard | None:
        """The position drawn: my race's (a replay's board draws another)."""
        return self.session.race

    def render(self) -> RenderableType:
        race = self.board()
        self._cw = self.cell_width()
        if race is None:
            self._rows = []
            return Text("")
        lines: list[Text] = []
        hits: list[list[Target | None]] = []
        dests = race.destinations()
        lifted = set(race.lifted())
        pick = race.pick
        hint = race.hint_parts() or ("", "")
        cw = self._cw

        # Row 0: what is held (or the race's state) over columns 1-3, foundations over 4-7.
        top = Text(" " * self.LEFT)
        row_hits: list[Target | None] = [None] * 3
        top.append_text(self._badge(race, 3 * cw))
        for suit, card in enumerate(race.foundation_tops()):
            target = "F" in dests and pick is not None and pick.card[1] == SUIT_ORDER[suit]
            hinted = hint[1] == "F" and hint[0][1:] == SUIT_ORDER[suit]
            if card is None:
                letter = SUIT_ORDER[suit]
                shown = letter if self.session.letters else GLYPHS[letter]
                mark = "--" if self.session.ascii else f"·{shown}"
                cell = self._slot(mark, target=target, hinted=hinted)
            else:
                picked = pick is not None and pick.source == FOUNDATION and pick.card == card
                taken = hint[0] == card  # a hinted take-back: this top card comes down
                cell = self._face(card, lifted=picked, target=target, hinted=hinted or taken)
            top.append_text(cell)
            top.append(" ")
            row_hits.append(Target("foundation", suit=suit))
        lines.append(top)
        hits.append(row_hits)

        # Row 1: the column keys; a destination's key is lit.
        keys = Text(" " * self.LEFT)
        for n in range(1, 8):
            text = str(n).center(cw - 1)
            if pick is not None and pick.source == n:
                keys.append(text, style=f"bold black on {PICKED}")
            elif str(n) in dests:
                keys.append(text, style=f"bold black on {TARGET}")
            elif hint[1] == str(n):
                keys.append(text, style=f"bold black on {HINTED}")
            else:
                keys.append(text, style="bold #8a8a8a")
            keys.append(" ")
        lines.append(keys)
        hits.append([Target("column", column=n) for n in range(1, 8)])

        # The columns, downwards.
        room = max(1, self.size.height - 2)
        columns = [self._column_cells(race, n, dests, lifted, room=None) for n in range(1, 8)]
        if max(len(c) for c in columns) > room:
            columns = [self._column_cells(race, n, dests, lifted, room=room) for n in range(1, 8)]
        depth = max(1, max(len(c) for c in columns))
        for row in range(min(depth, room)):
            line = Text(" " * self.LEFT)
            row_hits = []
            for n, cells in enumerate(columns, start=1):
                if row < len(cells):
                    drawn, hit = cells[row]
                    line.append_text(drawn)
                    row_hits.append(hit)
                else:
                    line.append(" " * (cw - 1))
                    row_hits.append(Target("column", column=n))
                line.append(" ")
            lines.append(line)
            hits.append(row_hits)
        self._rows = hits
        return Text("\n").join(lines)

    def _badge(self, race: RaceBoard, width: int) -> Text:
        session = self.session
        state = race.state
        if state == "won":
            return Text(" WON ".center(width - 1), style="bold black on #5fd75f") + Text(" ")
        if state == "stuck":
            return Text(" STUCK ".center(width - 1), style="bold white on #d70000") + Text(" ")
        if state in DONE_STATES:
            word = outcome_text(state).upper()
            return Text(f" {word} ".center(width - 1), style="bold white on #875f00") + Text(" ")
        if race.pick is not None:
            cards = race.lifted()
            held = label(race.pick.card, ascii=session.letters)
            more = f" +{len(cards) - 1}" if len(cards) > 1 else ""
            return Text(f"holding {held}{more}".ljust(width)[:width], style=f"bold {PICKED}")
        return Text(" " * width)

    def _column_cells(
        self,
        race: RaceBoard,
        n: int,
        dests: frozenset[str],
        lifted: set[str],
        *,
        room: int | None,
    ) -> list[tuple[Text, Target]]:
        down = race.game.face_down_count(n)
        up = race.face_up(n)
        column = Target("column", column=n)
        target = str(n) in dests
        if not up and not down:
            return [(self._slot("·", target=target), column)]
        cells: list[tuple[Text, Target]] = []
        if room is None or down <= 1:
            cells += [(self._back(), column)] * down
        else:
            cells.append((self._back(down), column))
        for i, card in enumerate(up):
            is_top = i == len(up) - 1
            hinted = race.hint is not None and race.hint.startswith(card + ">")
            cells.append(
                (
                    self._face(
                        card, lifted=card in lifted, target=target and is_top, hinted=hinted
                    ),
                    Target("card", n, card),
                )
            )
        if room is not None and len(cells) > room:
            keep = room - 1
            cut = len(cells) - keep
            first = cells[0]
            cells = [
                first,
                (Text("⋮".center(self._cw - 1), style=EMPTY), column),
                *cells[cut + 1 :],
            ]
        return cells

    def target_at(self, x: int, y: int) -> Target | None:
        """What is drawn at ``(x, y)`` (widget coordinates)."""
        if y < 0 or y >= len(self._rows) or x < self.LEFT:
            return None
        slot = (x - self.LEFT) // self._cw
        if slot >= 7:
            return None
        return self._rows[y][slot]

    def on_click(self, event: events.Click) -> None:
        target = self.target_at(event.x, event.y)
        if target is not None:
            self.post_message(self.Clicked(target))


# -- standings ----------------------------------------------------------------------------------


class StandingsView(Live):
    """Every runner: cards on the foundations as a bar, moves, state, finish time."""

    DEFAULT_CSS = """
    StandingsView { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        session = self.session
        players = session.standings()
        width = max(20, self.size.width)
        out = Text()
        done = sum(1 for p in players if p.time_ms is not None)
        out.append("Standings", style="bold")
        if players:
            out.append(f"  {done} of {len(players)} done", style="#8a8a8a")
        out.append("\n")
        if not players:
            out.append("waiting for the race", style="#8a8a8a")
            return out
        roomy = len(players) * 3 + 2 <= max(self.size.height, 1)
        for i, p in enumerate(players):
            out.append("\n\n" if roomy and i else "\n")
            out.append_text(self._runner(p, session, width))
        return out

    def _runner(self, p: PlayerProgress, session: Session, width: int) -> Text:
        # A ghost room's recorded run (protocol 4.23) is told by being the progress's
        # ``ghost``, never by its name: it may be my own run.
        ghost = session.progress is not None and p is session.progress.ghost
        me = not ghost and p.name == session.me
        line = Text()
        tag = " (ghost)" if ghost else " (you)" if me else ""
        rated = (
            next((x for x in session.room.players if x.name == p.name), None)
            if session.room
            else None
        )
        if not ghost and rated is not None and rated.rating is not None:  # protocol 4.27
            tag = f" {rating_text(rated.rating, rated.provisional)}{tag}"
        if not ghost and rated is not None and rated.bot:  # a BOT account (4.30)
            tag = f" [BOT]{tag}"
        state = self._state(p, session)
        # The name gives way, never its tag or its state: "Carol the Te… (you) playing".
        room = max(4, width - state.cell_len - 1)
        name = cut(p.name, max(2, room - cell_len(tag))) + tag
        line.append(pad(name, room), style="bold" if me else "")
        line.append(" ")
        line.append_text(state)
        line.append("\n")
        bar_width = max(6, min(26, width - 18))
        colour = (
            "#5fd75f"
            if p.state == "won"
            else "#5fafff"
            if me
            else "#8a8a8a"
            if ghost
            else "#d7af5f"
        )
        line.append(bar(p.foundations, bar_width, ascii=session.ascii), style=colour)
        line.append(f" {p.foundations:>2}/52", style="bold")
        line.append(f" {p.moves:>3} mv", style="#8a8a8a")
        return line

    def _state(self, p: PlayerProgress, session: Session) -> Text:
        if not p.connected and p.time_ms is None:
            return Text("away", style="bold #d7af00")
        if p.state == "playing":
            return Text("playing", style="#8a8a8a")
        time = f" {format_ms(p.time_ms)}" if p.time_ms is not None else ""
        style = {
            "won": "bold #5fd75f",
            "stuck": "bold #ff5f5f",
            "resigned": "#d78700",
            "timeout": "#d78700",
            "abandoned": "#d78700",
        }.get(p.state, "")
        return Text(outcome_text(p.state) + time, style=style)


# -- headers and the status line --------------------------------------------------------------


def fit(text: str, width: int) -> str:
    """``text`` within ``width`` columns, keeping its last clause ("; retrying in 4 s"):
    a long cause is cut in its middle, where it says least."""
    if len(text) <= width:
        return text
    head, sep, tail = text.rpartition("; ")
    if not sep or len(tail) + 3 >= width:
        return text[: max(0, width - 1)] + "…"
    return head[: width - len(tail) - 3] + "…; " + tail


class RaceHeader(Live):
    """Room, rules, and my clock, score and moves."""

    DEFAULT_CSS = """
    RaceHeader { height: 1; background: $panel; }
    """

    def render(self) -> RenderableType:
        """The right side (clock, score, moves) always whole; the left's parts by
        importance (what race this is, "hinted", par, the rules) as far as they fit."""
        session = self.session
        room = session.room
        race = session.race
        what = ""
        if room is not None and room.ghost is not None:
            what = f" · racing {room.ghost}'s run (ghost)"
        elif session.daily is not None and (room is None or room.max_players == 1):
            deal = session.daily
            practice = " archive" if deal.archive else " practice" if deal.practice else ""
            what = f" · daily {deal.date}{practice}"
        elif room is not None and room.max_players == 1:
            what = " · daily deal"
        elif room is not None:
            what = f" · room {room.room}"
        parts: list[tuple[str, str]] = []
        if race is not None and race.hinted:
            parts.append((" · hinted", "#87d7ff"))
        daily = session.daily
        if daily is not None and daily.par is not None and what.startswith(" · daily"):
            parts.append((f" · par {daily.par}", "#8a8a8a"))
        if room is not None:
            parts.append((f" · {describe_rules(room.rules).split(',')[0]}", "#8a8a8a"))
        right = Text()
        if race is not None:
            now = self.client.clock()
            right.append(format_ms(race.elapsed_ms(now)), style="bold")
            right.append("  score ", style="#8a8a8a")
            right.append(str(race.score), style="bold")
            right.append("  moves ", style="#8a8a8a")
            right.append(f"{race.moves} ", style="bold")
        elif session.progress is not None:  # watching: the room's clock
            right.append(f"{format_ms(session.clock_ms(self.client.clock()))} ", style="bold")
        room_left = max(0, self.size.width - right.cell_len - 1) if self.size.width else 999
        left = Text(" Yukon Race", style="bold")
        if left.cell_len + cell_len(what) > room_left:
            left = Text(" Yukon", style="bold")
        left.append(cut(what, max(0, room_left - left.cell_len)))
        for text, style in parts:  # in order of importance, each if it fits whole
            if left.cell_len + cell_len(text) <= room_left:
                left.append(text, style=style)
        grid = Table.grid(expand=True)
        grid.add_column(justify="left", no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        grid.add_row(left, right)
        return grid


class StatusLine(Live):
    """The last message, or what the connection is doing when it is not online."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        link = self.client.link_state
        status = self.session.status
        newer = status.serial > self.client.link_serial  # said after the link changed
        if link.kind not in ("online", "closed") and not newer:
            urgent = link.kind in ("failed", "need_name", "need_password")
            style = "bold #ff5f5f" if urgent else "bold #d7af00"
            text = fit(link.text, self.size.width - 2) if self.size.width > 2 else link.text
            return Text(text, style=style, overflow="ellipsis", no_wrap=True)
        style = {"error": "bold #ff5f5f", "good": "bold #5fd75f"}.get(status.kind, "")
        return Text(status.text, style=style, overflow="ellipsis", no_wrap=True)


# -- room and results ----------------------------------------------------------------------------


class RoomView(Live):
    """Who is in the room and who is ready; the rules and, once it may be shown, the code."""

    DEFAULT_CSS = """
    RoomView { height: auto; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        session = self.session
        room = session.room
        if room is None:
            return Text("")
        out = Text()
        out.append(f"Room {room.room}", style="bold")
        role = "  (you watch)" if room.you == "spectator" else ""
        out.append(role, style="#8a8a8a")
        out.append("\n")
        if room.ghost is not None:  # a ghost room (protocol 4.23)
            out.append(f"Racing {room.ghost}'s run as a ghost (practice): s starts\n", "bold")
        link = room_invite(self.client)
        if link is not None:
            out.append("Invite link ", style="#8a8a8a")
            out.append(link, style="bold #87d7ff")
            out.append("  (c copies it)\n", style="#8a8a8a")
        minutes = room.time_limit // 60
        limit = f"{minutes} min" if room.time_limit % 60 == 0 else f"{room.time_limit} s"
        hints = " · hints" if room.hints else ""
        hints += " · rated" if room.rated else ""
        who = f"up to {room.max_players} players" if room.max_players > 1 else "you alone"
        out.append(
            f"{describe_rules(room.rules)} · {'undo' if room.undo else 'no undo'}{hints}"
            f" · time limit {limit} · {who}\n",
            style="#afafaf",
        )
        if room.code:
            out.append("Game code: ", style="#8a8a8a")
            out.append(room.code, style="bold")
        else:
            out.append("A random deal: its game code shows after the race", style="#8a8a8a")
        out.append("\n\n")
        out.append(f"Players {len(room.players)}/{room.max_players}\n", style="bold")
        for p in room.players:
            out.append_text(self._player(room, p.name, p.ready, p.connected, session.me))
            if p.bot:  # a BOT account (docs/bots.md)
                out.right_crop(1)
                out.append("  [BOT]\n", style="bold #d787d7")
            if p.rating is not None:  # the line's end: the rating (docs/protocol.md 4.27)
                out.right_crop(1)
                out.append(f"  {rating_text(p.rating, p.provisional)}\n", style="#8a8a8a")
        if room.spectators:
            out.append(f"\n{room.spectators} watching", style="#8a8a8a")
        return out

    def _player(self, room: Room, name: str, ready: bool, connected: bool, me: str | None) -> Text:
        line = Text("  ")
        host = name == room.host
        line.append(
            "★ " if host and not self.session.ascii else "* " if host else "  ", style="#ffd75f"
        )
        tag = " (you)" if name == me else ""
        shown = pad(cut(name, 27 - cell_len(tag)) + tag, 28)
        line.append(shown, style="bold" if name == me else "")
        if host:
            line.append("host ", style="#ffd75f")
        if ready:
            line.append("ready", style="bold #5fd75f")
        else:
            line.append("not ready", style="#d7af00")
        if not connected:
            line.append("  away", style="#ff5f5f")
        line.append("\n")
        return line


class ResultsView(Live):
    """The ranks of the race that just ended, and its game code."""

    DEFAULT_CSS = """
    ResultsView { height: auto; padding: 0 1; }
    """

    def render(self) -> RenderableType:
        session = self.session
        result = session.result
        if result is None:
            return Text("")
        table = Table(box=None, pad_edge=False, expand=False, header_style="bold #8a8a8a")
        table.add_column("#", justify="right")
        table.add_column("player", no_wrap=True, max_width=NAME_CELLS)
        table.add_column("outcome")
        table.add_column("time", justify="right")
        table.add_column("moves", justify="right")
        table.add_column("score", justify="right")
        table.add_column("cards", justify="right")
        rated = any(r.rating_change is not None for r in result.ranks)
        if rated:  # a rated race: each runner's new rating and its change (protocol 4.27)
            table.add_column("rating", justify="right")
        picked = getattr(self.screen, "selected", None)  # a run chosen to replay
        for i, r in enumerate(result.ranks):
            style = "bold" if r.name == session.me else ""
            cells = self._row(r, session.me)
            if rated:
                cells.append(f"{rating_text(r.rating, False)} {change_text(r.rating_change)}")
            table.add_row(*cells, style=style + (" reverse" if i == picked else ""))
        if result.ghost is not None:  # the recorded run raced, for comparison (protocol 4.23)
            row = self._row(result.ghost, None)
            row[1] = cut(result.ghost.name, NAME_CELLS - 8) + " (ghost)"
            table.add_row(*row, style="#8a8a8a")
        return table

    @staticmethod
    def _row(r: RankEntry, me: str | None) -> list[RenderableType]:
        outcome = outcome_cell(r.outcome)
        if r.hinted:  # ranked after every run without a hint
            outcome.append(" · hinted", style="#87d7ff")
        tag = (" [BOT]" if r.bot else "") + (" (you)" if r.name == me else "")
        return [
            str(r.rank),
            cut(r.name, NAME_CELLS - cell_len(tag)) + tag,  # "(you)" is never cut off
            outcome,
            format_ms(r.time_ms),
            str(r.moves),
            str(r.score),
            f"{r.foundations}/52",
        ]
