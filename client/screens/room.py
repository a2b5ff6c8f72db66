"""A room before and after its race: who is in, who is ready, start and rematch."""

from __future__ import annotations

import math
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Button, Digits, Static

from protocol.messages import (
    Leave,
    Ready,
    Rematch,
    Start,
)

from ..chrome import Base, Hints, Title
from ..widgets import (
    RoomView,
    StatusLine,
    room_invite,
)

# -- room ----------------------------------------------------------------------------------


class RoomScreen(Base):
    """Who is in, who is ready; the host starts; the countdown."""

    AUTO_FOCUS = ""  # keys, not a focused button: space must never start a race
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "ready", "ready"),
        Binding("s", "start", "start"),
        Binding("m", "rematch", "rematch"),
        Binding("c", "copy_link", "copy the invite link"),
        Binding("l", "leave", "leave"),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Title("room")
        with Vertical(id="room-body"):
            yield RoomView()
            yield Static("", id="room-note")
            yield Digits("", id="countdown")
            with Horizontal(classes="row", id="room-buttons"):
                yield Button("Ready (space)", compact=True, variant="success", id="ready")
                yield Button("Start (s)", compact=True, variant="primary", id="start")
                yield Button("Leave (l)", compact=True, id="leave")
        yield StatusLine()
        yield Hints()

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def hints(self) -> str:
        room = self.session.room
        if room is None:
            return ""
        copy = "c copy link · " if room_invite(self.client) is not None else ""
        if self.session.may_rematch:
            return f"m rematch · {copy}l leave · ? help · q quit"
        if room.you == "spectator" or room.state == "countdown":
            return f"{copy}l leave · ? help · q quit"
        if self.session.is_host:
            return f"s start · {copy}l leave · ? help · q quit"
        if room.state == "finished":
            return f"{copy}l leave · ? help · q quit"
        return f"space ready · {copy}l leave · ? help · q quit"

    def _me_ready(self) -> bool:
        room, me = self.session.room, self.session.me
        if room is None:
            return False
        return any(p.name == me and p.ready for p in room.players)

    def refresh_view(self) -> None:
        super().refresh_view()
        room = self.session.room
        if room is None:
            return
        try:
            ready = self.query_one("#ready", Button)
            start = self.query_one("#start", Button)
            note = self.query_one("#room-note", Static)
        except NoMatches:  # not mounted yet
            return
        player = room.you == "player"
        lobby = room.state == "lobby"
        ready.display = player and lobby and not self.session.is_host
        label = "Not ready (space)" if self._me_ready() else "Ready (space)"
        if str(ready.label) != label:
            ready.label = label
            ready.refresh(layout=True)
        start.display = player and lobby and self.session.is_host
        note.update(self._note())
        self._tick()

    def _note(self) -> Text:
        session = self.session
        room = session.room
        assert room is not None
        text = Text()
        if room.state == "countdown":
            text.append("Get ready: the race starts in", style="bold #5fd75f")
        elif room.state == "finished" and session.may_rematch:
            text.append("The race is over: m asks for a rematch (a new deal)", style="#8a8a8a")
        elif room.state == "finished":
            text.append("The race is over; any of its players may ask for a rematch", "#8a8a8a")
        elif room.you == "spectator":
            text.append(f"You watch; {room.host} starts the race", style="#8a8a8a")
        elif session.is_host:
            waiting = [p.name for p in room.players if not p.ready]
            if waiting:
                text.append(f"Waiting for {', '.join(waiting)} to be ready", style="#d7af00")
            else:
                text.append("Everyone is ready: press s to start", style="bold #5fd75f")
                if len(room.players) == 1 and room.max_players > 1:
                    text.append(" (a race alone is fine)", style="#8a8a8a")
            if room.max_players > 1:  # a practice room (a ghost's) takes nobody else
                text.append(
                    f"\nOthers join with the room code {room.room} or the invite link above",
                    style="#8a8a8a",
                )
        else:
            text.append(f"{room.host} starts the race when everyone is ready", style="#8a8a8a")
        return text

    def _tick(self) -> None:
        left = self.session.countdown_left(self.client.clock())
        try:
            digits = self.query_one("#countdown", Digits)
        except NoMatches:  # not mounted yet
            return
        digits.display = left is not None
        if left is not None:
            digits.update(str(max(1, math.ceil(left))))

    def action_ready(self) -> None:
        room = self.session.room
        if room is None or room.you != "player" or self.session.is_host or room.state != "lobby":
            return
        self.client.send(Ready(not self._me_ready()))

    def action_start(self) -> None:
        if self.session.is_host:
            self.client.send(Start())

    def action_rematch(self) -> None:
        if self.session.may_rematch:
            self.client.send(Rematch())

    def action_leave(self) -> None:
        self.client.send(Leave())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        {"ready": self.action_ready, "start": self.action_start, "leave": self.action_leave}.get(
            event.button.id or "", lambda: None
        )()
