"""The history screen (issue 17, item 4): your results and totals, paged, from the lobby
and from the results."""

from __future__ import annotations

from pathlib import Path

from client.screens import HistoryScreen
from protocol.messages import Daily, History, HistoryPage, HistoryRow, Welcome

from ..server.wire import url
from .helpers import fake_app, feed, until
from .test_app import client_app, online, screen_text, sees, server_at


async def test_history_from_the_results_and_from_the_lobby(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            app.send(Daily())
            await until(pilot, lambda: app.current_mode == "race", "the daily race")
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "attempt 1", pilot)

            await pilot.press("h")
            await until(pilot, lambda: isinstance(app.screen, HistoryScreen), "the history")
            await sees(app, "1 race", pilot)
            text = screen_text(app)
            assert "resigned" in text and "daily" in text and "0 won" in text, text
            await pilot.press("escape")
            await until(pilot, lambda: app.current_mode == "results", "back to the results")
            assert not isinstance(app.screen, HistoryScreen)

            await pilot.press("l")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
            await pilot.press("h")
            await until(pilot, lambda: isinstance(app.screen, HistoryScreen), "the history")
            await sees(app, "1 race", pilot)


def _row(i: int) -> HistoryRow:
    return HistoryRow(
        1_795_975_206_174 - i * 60_000,
        f"YU1-C-AAAAAA{chr(66 + i % 20)}",
        "K7WQM",
        None,
        False,
        "won" if i % 3 == 0 else "resigned",
        1 + i % 2,
        2,
        81_250 + i,
        140,
        610,
        52 if i % 3 == 0 else 10,
        i % 4,
    )


async def test_history_pages() -> None:
    app, link = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, Welcome(1, "alice", "t" * 32, 60))
        await pilot.pause()
        app.push_screen(HistoryScreen())
        await until(pilot, lambda: any(isinstance(m, History) for m in link.sent), "the ask")
        asked = [m for m in link.sent if isinstance(m, History)][-1]
        assert asked.offset == 0
        size = asked.limit
        feed(app, HistoryPage(60, 20, 81_250, 0, tuple(_row(i) for i in range(size))))
        await sees(app, "60 races", pilot)
        assert "20 won" in screen_text(app) and "best 1:21.2" in screen_text(app)
        await pilot.press("pagedown")
        await until(
            pilot,
            lambda: [m for m in link.sent if isinstance(m, History)][-1].offset == size,
            "the next page",
        )
