"""The daily deal in the client (issue 17): a resumed attempt is still the daily, and `d`
asks before starting the attempt that counts. Real server on port 0, real config files."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.config import LOCAL_KEY
from client.widgets import RaceHeader
from protocol.messages import Daily

from ..server.wire import url
from .helpers import racing, until
from .test_app import client_app, online, screen_text, sees, server_at


@pytest.mark.parametrize("key", [None, LOCAL_KEY])
async def test_a_resumed_daily_attempt_is_the_same_as_one_never_interrupted(
    tmp_path: Path, key: str | None
) -> None:
    async with server_at(tmp_path) as server:
        first = client_app(url(server), tmp_path, key=key)
        async with first.run_test(size=(80, 24)) as pilot:
            await online(pilot, first)
            first.send(Daily())
            await until(pilot, lambda: first.current_mode == "race", "the daily race")
            daily = first.session.daily
            assert daily is not None and not daily.practice
            await sees(first, f"daily {daily.date}", pilot)
            title = screen_text(first).splitlines()[0]
            assert f"daily {daily.date}" in title
            first.exit()  # as Ctrl-Q does: the race goes on on the server

        again = client_app(url(server), tmp_path, name=None, key=key)
        async with again.run_test(size=(80, 24)) as pilot:
            await online(pilot, again)
            await until(pilot, lambda: again.current_mode == "race", "the resumed race")
            await sees(again, "back in the race", pilot)
            assert again.session.daily == daily
            assert screen_text(again).splitlines()[0].startswith(title.split("  ")[0].rstrip())
            assert "go!" not in screen_text(again)
            assert racing(again.session).elapsed_ms(again.clock()) > 0
            assert again.screen.query(RaceHeader)
            await pilot.press("r", "y")
            await until(pilot, lambda: again.current_mode == "results", "the results")
            await sees(again, f"Daily deal {daily.date}, attempt 1", pilot)
            text = screen_text(again)
            assert "Again (a)" in text and "Rematch" not in text, text


async def test_d_asks_before_the_attempt_that_counts_and_says_when_it_is_practice(
    tmp_path: Path,
) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.press("d")
            await until(pilot, lambda: "Start now?" in screen_text(app), "the question")
            text = " ".join(screen_text(app).replace("│", " ").split())
            assert "counts on the leaderboard" in text and "practice" not in text, text
            await pilot.press("n")
            await until(pilot, lambda: "Start now?" not in screen_text(app), "no")
            assert app.current_mode == "lobby" and app.session.daily is None

            await pilot.press("d")
            await until(pilot, lambda: "Start now?" in screen_text(app), "the question again")
            await pilot.press("y")
            await until(pilot, lambda: app.current_mode == "race", "the counted attempt")
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await pilot.press("l")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")

            await pilot.press("d")
            await until(pilot, lambda: "Start now?" in screen_text(app), "the third question")
            text = " ".join(screen_text(app).replace("│", " ").split())
            assert "practice" in text, text
            await pilot.press("y")
            await until(
                pilot,
                lambda: app.session.daily is not None and app.session.daily.practice,
                "the practice attempt",
            )
