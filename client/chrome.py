"""The chrome every terminal screen shares: the title line, the key hints, the ``Base``
screen (the app as its ``Host``, the session, redraws) and the help. The screens
(client/screens/) and the player's page (client/player.py) both build on it, and it
imports neither, so nothing imports back."""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from .host import Host, host
from .state import Session
from .widgets import (
    Live,
    room_invite,
)


class Hints(Live):
    """The key line at the bottom of a screen; its text comes from the screen."""

    DEFAULT_CSS = """
    Hints { height: 1; background: $panel; padding: 0 1; color: $text-muted; }
    """

    def render(self) -> RenderableType:
        screen = self.screen
        text = screen.hints() if isinstance(screen, Base) else ""
        if self.session.ascii:
            for fancy, plain in (("←", "left"), ("→", "right"), ("↑↓", "up/down"), ("⏎", "Enter")):
                text = text.replace(fancy, plain)
        out = Text(no_wrap=True, overflow="ellipsis")
        for i, part in enumerate(text.split(" · ")):
            if i:
                out.append("  ")
            if part.startswith("("):  # a remark, not a key
                out.append(part, style="italic")
                continue
            key, _, what = part.partition(" ")
            out.append(key, style="bold")
            out.append(f" {what}" if what else "")
        return out


class Title(Live):
    """The first line of the lobby, room and results screens: what this is, and who I am."""

    DEFAULT_CSS = """
    Title { height: 1; background: $panel; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text

    def render(self) -> RenderableType:
        session = self.session
        left = Text(" Yukon Race", style="bold")
        if self.text:
            left.append(f" · {self.text}")
        room = session.room
        if self.text in ("room", "results") and room is not None and room.max_players > 1:
            left.append(f" · room {room.room}" if self.text == "results" else f" {room.room}")
        elif self.text == "room" and room is not None and room.ghost is not None:
            left.append(f" · racing {room.ghost}'s run (ghost)")
        right = Text()
        if session.me:
            right.append(session.me, style="bold")
            right.append(f" @ {self.client.where} ", style="#8a8a8a")
        else:
            right.append(f"{self.client.where} ", style="#8a8a8a")
        # Who I am stays whole; what this screen is gives way (cut by cells).
        width = self.size.width or 80
        room_left = max(0, width - right.cell_len - 1)
        if left.cell_len > room_left:
            left.truncate(room_left, overflow="ellipsis")
        return left + Text(" " * max(0, width - left.cell_len - right.cell_len)) + right


class Base(Screen[None]):
    """What every full screen shares: the app, the session, a status line, key hints."""

    HINTS = ""

    @property
    def client(self) -> Host:
        return host(self)

    @property
    def session(self) -> Session:
        return self.client.session

    def hints(self) -> str:
        return self.HINTS

    def refresh_view(self) -> None:
        """Redraw from the session.

        A widget whose height follows its content (``height: auto``: the room's players,
        the results' ranks) needs a layout pass too: a plain refresh repaints it within the
        height it had, so a list that grew showed only its first rows until a resize.
        """
        for widget in self.query(Live):
            height = widget.styles.height
            widget.refresh(layout=height is not None and height.is_auto)

    def on_screen_resume(self) -> None:
        self.refresh_view()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_copy_link(self) -> None:
        """``c``: the room's invite link to the clipboard, by the terminal (OSC 52, which
        Textual's ``copy_to_clipboard`` writes). Whether the terminal took it cannot be
        known (some ignore OSC 52; tmux passes it on only with ``set-clipboard on``), so
        the status says so, and the link stays on the screen to select by hand."""
        link = room_invite(self.client)
        if link is None:
            return
        self.app.copy_to_clipboard(link)
        self.session.say(f"copied the invite link, if the terminal allows it: {link}")
        self.client.sync()


# -- dialogs -------------------------------------------------------------------------------

HELP = """\
[b]Racing[/b]
  [b]1[/b]-[b]7[/b]      pick the exposed card of a column; with a card picked,
           drop it (and the cards on it) on that column
  [b]↑ ↓[/b]      a deeper / higher face-up card (or the column key again)
  [b]f[/b]        the picked card to its foundation
  [b]Enter[/b]    tap: the picked card to its foundation;
           twice quickly: to the longest column that takes it
  [b]Esc[/b] put the card back  [b]u[/b] undo  [b]r[/b] resign  [b]a[/b] finish (all cards face up)
  [b]h[/b]        a hint, in a room that gives them: the next move of a
           winning line (a win with hints ranks after those without)
  Mouse: click a card, then where it goes (legal places light up green);
  click a picked card to tap it.
[b]Everywhere[/b]
  [b]?[/b] this help  [b]l[/b] leave the room / to the lobby  [b]q[/b] quit (asks mid-race)
  [b]m[/b] a finished room's rematch (anyone)  [b]f[/b] four colours  [b]s[/b] suits S H D C
[b]Lobby[/b]    [b]r[/b] quick  [b]n[/b] new room  [b]k[/b] its game code field  [b]b[/b] boards
  [b]j w[/b]      join / watch the code typed; [b]Enter[/b] joins (watches if racing)
  [b]d[/b] daily  [b]a[/b] a past day  [b]h[/b] history  [b]i[/b] your name's link  [b]Esc[/b] keys
  [b]c[/b]        in a room or watching: copy the room's invite link (others
           open it in a browser, or run yukon play LINK)
  [b]↑ ↓ v[/b]    results, boards, history: choose a run and replay it: [b]← →[/b] step
           [b]Home End g[/b]o to  [b]space[/b] play  [b]s[/b]peed  [b]j[/b] losing  [b]c[/b] link
  [b]r[/b]        a run (results, boards, a replay): race it, its ghost alongside

[dim]Esc or ? closes this help[/dim]"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close"),
        Binding("question_mark", "close", "close"),
        Binding("q", "close", "close", show=False),
    ]

    def compose(self) -> ComposeResult:
        text = HELP
        if host(self).session.ascii:
            text = text.replace("↑ ↓", "up down")
        with Container(id="help-box") as box:
            box.border_title = "Keys"
            yield Static(text, markup=True)

    def action_close(self) -> None:
        self.dismiss()
