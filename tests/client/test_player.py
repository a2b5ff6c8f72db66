"""Ratings and a player's page in the terminal client (docs/protocol.md 4.27): a rated
room from the lobby's tick box, the ratings and their changes in the results, the player
screen with its chart (``p``), and the chart and words on their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.player import PlayerScreen, sparkline
from client.state import Session, Standing, change_text, rating_text, streak_text
from client.widgets import TickBox
from protocol.messages import (
    BoardPage,
    BoardRow,
    Join,
    PlayerPage,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    Welcome,
)
from server.domain import pairs

from ..server.wire import open_client, url
from .helpers import until
from .test_app import client_app, online, screen_text, sees, server_at


async def test_a_rated_race_then_the_players_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A race of a test is seconds long: let a short run count (docs/ratings.md's rule
    # that a run under 3 moves or 10 s moves nobody is tests/server/domain/test_pairs.py's).
    monkeypatch.setattr(pairs, "MIN_MOVES", 0)
    monkeypatch.setattr(pairs, "MIN_TIME_MS", 0)
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await online(pilot, app)
            assert app.session.standing == Standing(None, True, 0, 0)
            app.screen.query_one("#rated", TickBox).value = True
            await pilot.press("n")  # a rated room is dealt a fresh secret deal, never a code
            await until(pilot, lambda: app.session.room is not None, "the room")
            room = app.session.room
            assert room is not None and room.rated
            await sees(app, "· rated", pilot)

            bob = await open_client(server, "bob")
            await bob.send(Join(room.room))
            await bob.expect(Room)
            await bob.send(Ready(True))
            await until(pilot, lambda: app.session.room.players[-1].ready, "bob ready")  # type: ignore[union-attr]
            await pilot.press("s")
            await bob.expect(Race)
            await until(pilot, lambda: app.current_mode == "race", "the race")
            await bob.send(Resign())
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            result = await bob.expect(Result)
            mine = next(r for r in result.ranks if r.name == "alice")
            assert mine.rating is not None and mine.rating_change is not None
            await sees(app, f"{mine.rating} {change_text(mine.rating_change)}", pilot)
            # My page came by itself after the rated race: my rating is known.
            await until(
                pilot,
                lambda: (
                    app.session.standing is not None and app.session.standing.rating == mine.rating
                ),
                "my new rating",
            )

            await pilot.press("p")  # my own row (nothing chosen): my page
            await until(pilot, lambda: isinstance(app.screen, PlayerScreen), "the player screen")
            await sees(app, f"Rating {mine.rating}?", pilot)
            await sees(app, "the last 1 rated races", pilot)
            assert "provisional" in screen_text(app)
            await pilot.press("escape")
            await until(pilot, lambda: app.current_mode == "results", "back to the results")
            await pilot.press("l")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, PlayerScreen), "my page again")
            await sees(app, "1 race · 0 won", pilot)
            await pilot.press("r")  # my own page: nobody to report
            await sees(app, "nobody to report", pilot)
            await pilot.press("escape")
            # bob's page: r reports him, about our race (docs/protocol.md 4.33).
            app.push_screen(PlayerScreen("bob"))
            await until(pilot, lambda: isinstance(app.screen, PlayerScreen), "bob's page")
            await sees(app, "r report", pilot)
            await pilot.press("r")
            await sees(app, "your report of bob is with the server's operators", pilot)
            await pilot.press("r")
            await sees(app, "is with the operators already", pilot)
            await bob.ws.close()


def test_the_chart_and_the_words() -> None:
    assert sparkline((), 10) == ""
    assert sparkline(((1, 1500),), 10) == "▅"  # a flat history: mid-height
    up = ((1, 1400), (2, 1450), (3, 1500), (4, 1600))
    assert sparkline(up, 10) == "▁▃▅█"
    assert sparkline(up, 2) == "▁█"  # the newest that fit
    assert sparkline(up, 10, ascii=True) == "_-=#"
    assert (rating_text(None, True), rating_text(1662, True), rating_text(1662, False)) == (
        "",
        "1662?",
        "1662",
    )
    assert [change_text(c) for c in (None, 12, -5, 0)] == ["", "+12", "-5", "±0"]
    assert streak_text(None) == streak_text(Standing()) == ""
    assert streak_text(Standing(streak=3, best_streak=5)) == "daily streak 3 (best 5)"


def test_the_session_keeps_my_standing_up_to_date() -> None:
    s = Session()
    s.receive(Welcome(1, "alice", "tok", 60, None, 1550, True, 2, 4), 0.0)
    assert s.standing == Standing(1550, True, 2, 4)
    row = BoardRow(1, "alice", "won", 60_000, 90, 500, 52, 0, streak=3, rating=1550)
    s.receive(BoardPage("daily", "2026-12-03", None, 1, 0, (row,), row), 0.0)
    assert s.standing == Standing(1550, True, 3, 4)
    page = PlayerPage("alice", 1571, False, 80, 12, 7, (), 3, 5, ((1, 1571),))
    s.receive(page, 0.0)
    assert s.standing == Standing(1571, False, 3, 5) and s.player_page == page
    other = PlayerPage("bob", None, True, None, 0, 0, (), 0, 0, ())
    s.receive(other, 0.0)
    assert s.standing == Standing(1571, False, 3, 5) and s.player_page == other
