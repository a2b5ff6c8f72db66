"""Replays and post-mortems in the terminal client (docs/protocol.md 4.22), against a
real server on port 0: a run crafted to throw a won deal away (as
tests/server/domain/test_replays.py does) is judged on the results, opened from the results,
the history and the deal's board, stepped through (every position the engine's),
played at 16x on a hand-set clock; today's daily is refused with the server's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from client.app import YukonApp
from client.replay import postmortem_text
from client.screens import HistoryScreen, LeaderboardScreen, ReplayScreen
from client.state import Session
from protocol import Game
from protocol.messages import Error, PostMortem, PostMortemAnswer, Replay, ReplayPage

from ..server.domain.test_replays import DEAL, LOSING_AFTER, LOSING_MOVE, solver_line
from ..server.wire import url
from .helpers import CODE, Clock, until
from .test_app import client_app, create_room, online, play_keys, screen_text, sees, server_at


def replay_screen(app: YukonApp) -> ReplayScreen:
    screen = app.screen
    assert isinstance(screen, ReplayScreen)
    return screen


async def opened(pilot: Pilot[Any], app: YukonApp, player: str) -> ReplayScreen:
    """v pressed: the replay screen, once its run has come and been played through."""
    await pilot.press("v")
    await until(
        pilot,
        lambda: isinstance(app.screen, ReplayScreen) and app.screen.run() is not None,
        "the replay",
    )
    screen = replay_screen(app)
    assert screen.player == player
    return screen


async def test_a_lost_run_judged_and_replayed_from_results_history_and_board(
    tmp_path: Path,
) -> None:
    line = solver_line()
    plan = [*line[:LOSING_AFTER], LOSING_MOVE]
    clock = Clock()
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path, clock=clock)
        async with app.run_test(size=(100, 30)) as pilot:
            await online(pilot, app)
            await create_room(pilot, app, DEAL)
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            for move in plan:
                await play_keys(pilot, app, move)
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            # The results: my run's post-mortem, asked by itself.
            await sees(app, f"After move {LOSING_AFTER + 1}, {LOSING_MOVE}, no win was left", pilot)
            assert "instead wins" in screen_text(app)

            screen = await opened(pilot, app, "alice")
            run = screen.run()
            assert run is not None and run.total == len(plan)
            game = Game.from_code(DEAL)
            for k in range(len(plan) + 1):
                if k:
                    game.play(plan[k - 1])
                    await pilot.press("right")
                assert screen.k == k
                board = screen.position()
                assert board is not None and board.game.view() == game.view(), k
            await sees(app, f"move {len(plan)} of {len(plan)}", pilot)
            text = screen_text(app)
            assert "Post-mortem: After move" in text and f"/replay/{run.race}/alice" in text
            await pilot.press("left")
            assert screen.k == len(plan) - 1
            await pilot.press("home")
            assert screen.k == 0
            await pilot.press("end")
            assert screen.k == len(plan)
            await pilot.press("j")  # the position before the losing move, the better move lit
            assert screen.k == LOSING_AFTER
            board = screen.position()
            assert board is not None and board.hint is not None
            await pilot.press("g", "5", "enter")
            assert screen.k == 5
            # 16x on the hand-set clock: the run's recorded times, divided by 16.
            times = [ms for ms, _ in run.actions]
            await pilot.press("home", "s", "s", "space")
            assert screen.rate == 16 and screen.playing is not None
            await pilot.pause()
            assert screen.k == 0
            clock.now += times[0] / 1000 / 16 + 0.0005
            await until(pilot, lambda: screen.k >= 1, "the first move at 16x")
            assert screen.k == sum(t <= times[0] + 8 for t in times)
            clock.now += times[-1] / 1000 / 16
            await until(pilot, lambda: screen.k == len(plan), "the end at 16x")
            await until(pilot, lambda: screen.playing is None, "stopped at the end")
            await pilot.press("escape")
            await until(
                pilot, lambda: app.current_mode == "results" and len(app.screen_stack) == 1, "back"
            )

            # The history's row, and the deal's board's row.
            await pilot.press("h")
            await until(pilot, lambda: isinstance(app.screen, HistoryScreen), "the history")
            await sees(app, "1 race", pilot)
            screen = await opened(pilot, app, "alice")
            assert screen.run() is not None and screen.run().total == len(plan)  # type: ignore[union-attr]
            await pilot.press("escape", "escape")
            await until(pilot, lambda: len(app.screen_stack) == 1, "back to the results")
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the board")
            await sees(app, "alice", pilot)
            await pilot.press("down")
            screen = await opened(pilot, app, "alice")
            assert screen.run() is not None


async def test_today_s_daily_is_refused_with_the_server_s_text(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await online(pilot, app)
            await pilot.press("d")
            await until(pilot, lambda: "Start now?" in screen_text(app), "the question")
            await pilot.press("y")
            await until(pilot, lambda: app.current_mode == "race", "the daily race")
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            # The post-mortem of the results is refused as the replay is: not yet public.
            await sees(app, "are shown from", pilot)
            await pilot.press("v")
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
            await sees(app, "alice's run: the daily deal of", pilot)
            screen = replay_screen(app)
            assert screen.run() is None and screen.position() is None
            assert "00:35 UTC" in screen_text(app)


def _pm(status: str, **fields: Any) -> PostMortemAnswer:
    base: dict[str, Any] = {
        "last_winnable": None,
        "losing_move": None,
        "lost_from": None,
        "line": (),
        "par": None,
        "kept": None,
        "wasted": (),
        "wasted_total": 0,
    }
    base.update(fields)
    return PostMortemAnswer("r-1", "ann", status, **base, budget=100_000)


def test_every_post_mortem_in_words() -> None:
    lost = _pm("lost", last_winnable=36, losing_move="9H>4", line=("8D>2", "AH>F"))
    assert postmortem_text(lost) == "After move 37, 9H>4, no win was left; 8D>2 instead wins."
    won = _pm("won", par=95, kept=98, wasted=(3, 4), wasted_total=12)
    assert postmortem_text(won) == "Won, with 12 wasted moves: 98 kept against a par of 95."
    assert "kept." in postmortem_text(_pm("won", kept=5, wasted_total=1))
    assert postmortem_text(_pm("open", line=("6H>7",) * 3)).startswith("A win was still left")
    assert "could not be won at all" in postmortem_text(_pm("unwinnable", lost_from=0))
    unknown = postmortem_text(_pm("unknown", last_winnable=10, lost_from=40))
    assert unknown.startswith("Unknown: the solver could not decide")
    assert "after move 10" in unknown and "none after move 40" in unknown
    assert postmortem_text(_pm("unknown")) == (
        "Unknown: the solver could not decide within its budget."
    )


def _page(actions: tuple[tuple[int, str], ...], offset: int, total: int) -> ReplayPage:
    return ReplayPage(
        "r-1", "Ann", CODE, "C", "K7WQM", None, False, 1_795_975_206_174, ("Ann",),
        1, "resigned", 9_000, 3, 5, 0, 1, False, total, offset, actions,
    )  # fmt: skip


def test_a_run_in_pages_its_post_mortem_and_a_refusal_in_the_session() -> None:
    game = Game.from_code(CODE)
    first, second = game.legal_moves()[:2]
    actions = ((100, first), (200, "undo"), (300, second), (400, "undo"))
    session = Session()
    session.me = "ann"
    assert session.open_replay("r-1", "ann") == [Replay("r-1", "ann")]
    # A page at a time: the next one is asked for at its offset; the run is played
    # through once complete, and its post-mortem asked.
    assert session.receive(_page(actions[:2], 0, 4), 0.0) == [Replay("r-1", "Ann", offset=2)]
    assert session.replay is not None and not session.replay.complete
    assert session.receive(_page(actions[2:], 2, 4), 0.0) == [PostMortem("r-1", "Ann")]
    run = session.replay
    assert run.complete and run.counts == [0, 1, 1, 2, 2]
    assert run.games[4].view() == game.view() and run.due(250) == 2 and run.time_at(3) == 300
    # One post-mortem at a time: a second waits for the first's answer.
    assert session.ask_postmortem("r-2", "bob") == []
    answer = _pm("unwinnable")
    assert session.receive(answer, 0.0) == [PostMortem("r-2", "bob")]
    assert session.postmortem("r-1", "ANN") == answer
    # A refusal answers the post-mortem on its way (none for a replay already here).
    refused = Error("not_public", "shown from tomorrow", None)
    assert session.receive(refused, 0.0) == []
    assert session.postmortem("r-2", "bob") == "post-mortem: shown from tomorrow"
    # A refused replay keeps the server's text.
    session.open_replay("r-3", "cy")
    session.receive(Error("race_running", "the race is still running", None), 0.0)
    assert session.replay is not None and session.replay.refused == "the race is still running"
    assert session.status.kind != "error"
    # A dropped connection loses what was on its way: said, and asked again after.
    assert session.ask_postmortem("r-4", "dee") == [PostMortem("r-4", "dee")]
    session.open_replay("r-5", "eve")
    session.connection_lost()
    assert str(session.postmortem("r-4", "dee")).startswith("post-mortem: the connection dropped")
    assert session.replay is not None and "connection dropped" in str(session.replay.refused)
    assert session.ask_postmortem("r-4", "dee") == [PostMortem("r-4", "dee")]
    assert session.postmortem("r-4", "dee") is None
