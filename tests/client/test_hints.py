"""Hints in the client: the model, the ``h`` key, what the board and the results show, and a
real server answering the key with its solver."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from client.app import YukonApp
from client.screens import RaceScreen
from client.state import Session
from client.widgets import StatusLine
from protocol import Game
from protocol.messages import (
    Countdown,
    Error,
    Hint,
    HintAnswer,
    MoveMsg,
    RankEntry,
    Result,
    Room,
    Welcome,
    replace,
)
from solver import solve

from ..server.wire import running_server, url
from .helpers import CODE, Referee, fake_app, feed, keys_for, racing, room, run, until
from .test_app import client_app, online, screen_text, shown

Snap = Callable[..., bool]


def hints_room(state: str, **kw: Any) -> Room:
    with_hints: Room = replace(room(state, **kw), hints=True)
    return with_hints


def racing_session(*, hints: bool = True) -> tuple[Session, Referee]:
    session = Session()
    referee = Referee(CODE)
    lobby, racing_room = room("lobby"), room("racing")
    if hints:
        lobby, racing_room = replace(lobby, hints=True), replace(racing_room, hints=True)
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(lobby, 0.0)
    session.receive(Countdown(3000), 0.0)
    session.receive(referee.race(), 3.0)
    session.receive(racing_room, 3.0)
    return session, referee


def said(session: Session) -> tuple[str, str]:
    return session.status.text, session.status.kind


def first_move() -> str:
    return solve(Game.from_code(CODE), budget_nodes=20_000).moves[0]


# -- the model ------------------------------------------------------------------------------------


def test_h_asks_once_and_the_answer_shows_the_move_until_the_position_changes() -> None:
    session, referee = racing_session()
    assert session.ask_hint() == [Hint()]
    assert session.status.text == "thinking…"
    assert session.ask_hint() == []  # one at a time
    assert "still thinking" in session.status.text
    move = first_move()
    session.receive(HintAnswer(0, "win", move), 4.0)
    race = racing(session)
    assert race.hint == move and race.hinted
    assert race.hint_parts() == tuple(move.split(">"))
    assert session.status.kind == "good" and session.status.text.startswith("hint: ")
    # Playing it (or anything) changes the position: the hint is gone, the mark stays.
    session.receive(referee.answer(MoveMsg(race.take_seq(move), move)), 5.0)
    assert race.hint is None and race.hinted
    assert session.ask_hint() == [Hint()]  # and h asks again


def test_a_hint_for_an_earlier_position_is_not_shown() -> None:
    session, referee = racing_session()
    session.ask_hint()
    race = racing(session)
    move = first_move()
    session.receive(referee.answer(MoveMsg(race.take_seq(move), move)), 4.0)
    session.receive(HintAnswer(0, "win", move), 4.5)
    assert race.hint is None
    assert "earlier position" in session.status.text
    # A move still unanswered also makes an answer stale.
    session.ask_hint()
    pending = race.take_seq("KD>1")
    session.receive(HintAnswer(race.last_seq, "win", "KD>1"), 5.0)
    assert race.hint is None and pending in race.pending


def test_no_win_and_cannot_tell_are_said_plainly() -> None:
    session, _ = racing_session()
    session.ask_hint()
    session.receive(HintAnswer(0, "lost", None), 4.0)
    assert said(session) == ("hint: no win from here: u takes a move back", "error")
    session.ask_hint()
    session.receive(HintAnswer(0, "unknown", None), 4.0)
    assert session.status.text.startswith("hint: can't tell")
    assert racing(session).hint is None


def test_no_hints_where_the_room_gives_none() -> None:
    session, _ = racing_session(hints=False)
    assert session.ask_hint() == []
    assert said(session) == ("this room gives no hints", "error")


def test_an_error_or_a_reconnect_lets_the_player_ask_again() -> None:
    session, referee = racing_session()
    session.ask_hint()
    session.receive(Error("unavailable", "the hint could not be worked out just now"), 4.0)
    assert session.ask_hint() == [Hint()]
    session.connection_lost()
    session.receive(Welcome(1, "alice", "t" * 32, 60, "K7WQM"), 6.0)
    session.receive(hints_room("racing"), 6.0)
    session.receive(referee.race(), 6.0)
    assert session.ask_hint() == [Hint()]


# -- the app --------------------------------------------------------------------------------------


def in_hints_race(app: YukonApp) -> None:
    referee = Referee(CODE)
    feed(app, Welcome(1, "alice", "t" * 32, 60), hints_room("countdown"), referee.race())
    feed(app, hints_room("racing"))


async def test_the_h_key_asks_and_the_answer_is_shown() -> None:
    app, link = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        in_hints_race(app)
        await until(pilot, lambda: isinstance(app.screen, RaceScreen), "the race")
        await pilot.pause()
        assert "h hint" in screen_text(app)
        await pilot.press("h")
        assert link.sent == [Hint()]
        await pilot.press("h")  # still thinking: nothing more is sent
        assert link.sent == [Hint()]
        move = first_move()
        feed(app, HintAnswer(0, "win", move))
        await pilot.pause()
        assert racing(app.session).hint == move
        assert shown(app, StatusLine).startswith("hint: ")
        assert "hinted" in screen_text(app)  # in the header


async def test_a_room_without_hints_does_not_send_any() -> None:
    app, link = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        referee = Referee(CODE)
        feed(app, Welcome(1, "alice", "t" * 32, 60), room("countdown"), referee.race())
        feed(app, room("racing"))
        await until(pilot, lambda: isinstance(app.screen, RaceScreen), "the race")
        await pilot.pause()
        assert "h hint" not in screen_text(app)
        await pilot.press("h")
        assert link.sent == []
        assert shown(app, StatusLine) == "this room gives no hints"


def test_race_with_a_hint(snap_compare: Snap) -> None:
    """The hinted card and its destination's key are lit; the header marks the run."""
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        in_hints_race(a)
        feed(a, HintAnswer(0, "win", first_move()))

    assert snap_compare(app, run_before=run(script))


def test_results_with_a_hinted_run(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        in_hints_race(a)
        feed(a, HintAnswer(0, "win", first_move()))
        ranks = (  # a hinted win ranks before every run that is not a win (protocol 4.12)
            RankEntry(1, "alice", "won", 81_250, 140, 610, 52, hinted=True),
            RankEntry(2, "bob", "resigned", 95_000, 70, 240, 19),
        )
        players = (("alice", True, True), ("bob", True, True))
        feed(a, Result(CODE, ranks), hints_room("finished", players=players, code=CODE))

    assert snap_compare(app, run_before=run(script))


def moved(app: YukonApp, n: int) -> Callable[[], bool]:
    return lambda: racing(app.session).moves == n


async def test_hinted_moves_by_key_on_a_real_server(tmp_path: Path) -> None:
    """The lobby's hints box makes a room with hints; h gets the server's hint (its solver
    in a worker process), and its keys play it; the results mark the run."""
    async with running_server(f"sqlite:///{tmp_path}/c.db", tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.click("#hints")
            await pilot.click("#code")
            await pilot.press(*CODE, "enter")
            await until(pilot, lambda: app.session.room is not None, "the room")
            assert app.session.room is not None and app.session.room.hints
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            for n in range(1, 6):
                await pilot.press("h")
                await until(pilot, lambda: racing(app.session).hint is not None, "a hint")
                hint = racing(app.session).hint
                assert hint is not None
                await pilot.press(*keys_for(racing(app.session), hint))
                await until(pilot, moved(app, n), f"move {n}")
            assert "hinted" in screen_text(app)
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await until(
                pilot, lambda: "won" in screen_text(app) or "resigned" in screen_text(app), "ranks"
            )
            assert "resigned · hinted" in screen_text(app)
            assert "Your race is over (resigned)" in screen_text(app)
