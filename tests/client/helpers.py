"""Helpers for the client tests: a stand-in connection, a clock, a server-side referee,
and waiting for conditions (never for a fixed time)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from client.app import YukonApp
from client.connection import Events, LinkStatus
from client.state import RaceBoard, Session
from protocol import Game, IllegalMoveError, UndoError
from protocol.messages import (
    Accepted,
    Message,
    MoveMsg,
    PlayerProgress,
    Progress,
    Race,
    Refused,
    Room,
    RoomPlayer,
    Undo,
    Undone,
)

CODE = "YU1-C-AAAAAAB"
DATA = Path(__file__).resolve().parent.parent / "data"
#: How long a test waits for what it expects before failing. Generous: it only runs out
#: when something is wrong, and a busy 2-core machine can take seconds for a resync.
WAIT = 20.0


def winning_line() -> tuple[str, list[str]]:
    """A game code and moves that win it (``tests/data/winning-game.txt``)."""
    text = (DATA / "winning-game.txt").read_text()
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[0], lines[1:]


class Clock:
    """A monotonic clock the test sets by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeLink:
    """A connection that connects nowhere: it records what the app sends."""

    def __init__(self, events: Events | None = None, *, online: bool = True) -> None:
        self.events = events
        self.sent: list[Message] = []
        self.online = online
        self.names: list[str] = []
        self.passwords: list[str] = []
        self.trusted: list[str] = []
        self.reconnects = 0

    def send(self, message: Message) -> bool:
        if not self.online:
            return False
        self.sent.append(message)
        return True

    def login(self, name: str) -> None:
        self.names.append(name)

    def use_password(self, password: str) -> None:
        self.passwords.append(password)

    def trust(self, fingerprint: str) -> None:
        self.trusted.append(fingerprint)

    def reconnect(self) -> None:
        self.reconnects += 1

    async def run(self) -> None:
        if self.events is not None and self.online:
            self.events.link_status(LinkStatus("online", "connected to test as alice"))
        await asyncio.Event().wait()

    async def close(self) -> None:
        pass


def fake_app(*, ascii: bool = False, clock: Clock | None = None) -> tuple[YukonApp, FakeLink]:
    link = FakeLink()
    app = YukonApp("ws://race.example:8765", ascii=ascii, link=link, clock=clock or Clock())
    link.events = app
    return app, link


def feed(app: YukonApp, *messages: Message) -> None:
    for message in messages:
        app.link_message(message)


def room(
    state: str = "lobby",
    *,
    players: tuple[tuple[str, bool, bool], ...] = (("alice", True, True),),
    host: str = "alice",
    you: str = "player",
    code: str | None = None,
    rules: str = "C",
    max_players: int = 4,
    undo: bool = True,
    spectators: int = 0,
    name: str = "K7WQM",
    commitment: str | None = None,
    salt: str | None = None,
) -> Room:
    return Room(
        room=name,
        you=you,
        host=host,
        state=state,
        rules=rules,
        code=code,
        max_players=max_players,
        undo=undo,
        time_limit=1800,
        players=tuple(RoomPlayer(n, r, c) for n, r, c in players),
        spectators=spectators,
        commitment=commitment,
        salt=salt,
    )


def progress(elapsed_ms: int, *entries: tuple[Any, ...]) -> Progress:
    """Entries: (name, state, foundations, score, moves, time_ms, connected)."""
    return Progress(elapsed_ms, tuple(PlayerProgress(*e) for e in entries))


class Referee:
    """The server's side of one player's race: the full deal, answering moves and undos."""

    def __init__(self, code: str = CODE, *, game: Game | None = None) -> None:
        self.game = game or Game.from_code(code)
        self.elapsed = 0

    def race(self, seq: int = 0) -> Race:
        return Race(
            self.game.view(),
            self.elapsed,
            1800,
            seq,
            self.game.score,
            self.game.move_count,
            self.state(),
        )

    def state(self) -> str:
        if self.game.is_won():
            return "won"
        return "stuck" if self.game.is_stuck() else "playing"

    def answer(self, message: Message) -> Message:
        self.elapsed += 100
        g = self.game
        if isinstance(message, MoveMsg):
            try:
                played = g.play(message.move)
            except IllegalMoveError as exc:
                return Refused(message.seq, "illegal", exc.reason)
            return Accepted(
                message.seq,
                played.move,
                played.turned_up,
                g.score,
                g.move_count,
                g.cards_on_foundations,
                self.state(),
                self.elapsed,
            )
        assert isinstance(message, Undo)
        try:
            move = g.undo()
        except UndoError:
            return Refused(message.seq, "nothing_to_undo", "there is no move to undo")
        return Undone(
            message.seq,
            move,
            g.view(),
            g.score,
            g.move_count,
            g.cards_on_foundations,
            "playing",
            self.elapsed,
        )


def keys_for(race: RaceBoard, move: str) -> list[str]:
    """The key presses that play ``move`` on the board: its column, up to its card, the
    destination."""
    card, dest = move.split(">")
    for n in range(1, 8):
        up = race.face_up(n)
        if card in up:
            steps = len(up) - 1 - up.index(card)
            return [str(n), *["up"] * steps, "f" if dest == "F" else dest]
    raise AssertionError(f"{card} is not face up")


def racing(session: Session) -> RaceBoard:
    assert session.race is not None, "no race"
    return session.race


async def until(
    pilot: Pilot[Any], check: Callable[[], object], what: str, timeout: float = WAIT
) -> None:
    """Let the app run until ``check()`` is true; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def run(script: Callable[[YukonApp], None], *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A snapshot's ``run_before``: ``script`` on the settled app, then ``keys``."""

    async def before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        script(pilot.app)  # type: ignore[arg-type]
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
        await pilot.pause()

    return before
