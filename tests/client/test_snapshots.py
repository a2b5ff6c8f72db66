"""Snapshots of the main screens at 80x24 (and one larger), from scripted server messages.

The app runs against a stand-in connection and a frozen clock, so each picture is exactly
reproducible. Update with ``pytest tests/client --snapshot-update`` and look at the SVGs
in ``tests/client/__snapshots__``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.pilot import Pilot

from client.app import YukonApp
from client.screens import LeaderboardScreen, ReplayScreen
from protocol import Game
from protocol.messages import (
    BoardPage,
    BoardRow,
    Countdown,
    DailyDeal,
    HistoryPage,
    MoveMsg,
    PostMortemAnswer,
    RankEntry,
    Refused,
    ReplayPage,
    Result,
    Welcome,
    replace,
)

from .helpers import CODE, Clock, Referee, fake_app, feed, progress, room, run, winning_line

Snap = Callable[..., bool]
PLAYERS = (("alice", True, True), ("bob", True, True), ("carol", True, True), ("dave", True, False))


def welcome(name: str = "alice") -> Welcome:
    return Welcome(1, name, "t" * 32, 60)


def in_race(
    app: YukonApp, *, moves: tuple[str, ...] = ("6H>7", "8C>6", "7H>6", "KD>1", "AH>F")
) -> None:
    """alice races YU1-C-AAAAAAB against bob, carol (who won) and dave (away)."""
    referee = Referee(CODE)
    feed(app, welcome(), room("countdown", players=PLAYERS), referee.race())
    feed(app, room("racing", players=PLAYERS))
    race = app.session.race
    assert race is not None
    for move in moves:
        feed(app, referee.answer(MoveMsg(race.take_seq(move), move)))
    feed(
        app,
        progress(
            83_400,
            ("alice", "playing", 2, 45, len(moves), None, True),
            ("bob", "playing", 17, 210, 61, None, True),
            ("carol", "won", 52, 610, 140, 81_250, True),
            ("dave", "playing", 0, 10, 3, None, False),
        ),
    )


def test_lobby(snap_compare: Snap) -> None:
    app, _ = fake_app()
    assert snap_compare(app, run_before=run(lambda a: feed(a, welcome())))


def test_room_host_with_guests(snap_compare: Snap) -> None:
    players = (("alice", True, True), ("bob", True, True), ("carol", False, False))
    app, _ = fake_app()
    script = lambda a: feed(a, welcome(), room("lobby", players=players, spectators=1, rules="RT"))  # noqa: E731
    assert snap_compare(app, run_before=run(script))


def test_room_countdown_as_a_guest(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        feed(a, welcome("bob"), room("lobby", players=PLAYERS[:2], code=CODE))
        feed(a, Countdown(2400), room("countdown", players=PLAYERS[:2], code=CODE))

    assert snap_compare(app, run_before=run(script))


def test_race_with_a_card_picked_and_a_refused_move(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        in_race(a)
        feed(a, Refused(9, "illegal", "a 7 of clubs needs a red 8"))

    # Pick the 9H of column 6 (with the 8S and 7H on it): column 3's 10 of spades lights up.
    assert snap_compare(app, run_before=run(script, "6", "up", "up"))


def test_race_stuck(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        in_race(a)
        race = a.session.race
        assert race is not None
        race.state = "stuck"
        a.session.say(a.session._stuck_text(), "error")
        a.sync()

    assert snap_compare(app, run_before=run(script))


def test_race_won_while_the_others_race_on(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        in_race(a)
        feed(
            a,
            progress(
                190_000,
                ("alice", "won", 52, 625, 145, 187_500, True),
                ("bob", "playing", 31, 400, 98, None, True),
            ),
        )

    assert snap_compare(app, run_before=run(script))


def test_race_ascii(snap_compare: Snap) -> None:
    app, _ = fake_app(ascii=True)
    assert snap_compare(app, run_before=run(in_race, "2"))


def test_race_on_a_larger_terminal(snap_compare: Snap) -> None:
    app, _ = fake_app()
    assert snap_compare(app, run_before=run(in_race, "2", "up"), terminal_size=(110, 32))


def test_race_a_long_column_on_a_short_terminal(snap_compare: Snap) -> None:
    """Face-down cards turn into a count when the columns would not fit."""
    app, _ = fake_app()
    _, line = winning_line()
    script = lambda a: in_race(a, moves=tuple(line[:39]))  # noqa: E731
    assert snap_compare(app, run_before=run(script), terminal_size=(80, 18))


def test_resign_asks_first(snap_compare: Snap) -> None:
    app, _ = fake_app()
    assert snap_compare(app, run_before=run(in_race, "r"))


def test_watching_a_race(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        feed(a, welcome("erin"), room("racing", you="spectator", players=PLAYERS, spectators=1))
        feed(
            a,
            progress(
                65_000,
                ("alice", "playing", 12, 150, 40, None, True),
                ("bob", "stuck", 9, 120, 51, None, True),
                ("carol", "won", 52, 610, 140, 61_250, True),
                ("dave", "resigned", 0, 10, 3, 20_000, False),
            ),
        )

    assert snap_compare(app, run_before=run(script))


def test_results(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        in_race(a)
        ranks = (
            RankEntry(1, "carol", "won", 81_250, 140, 610, 52),
            RankEntry(2, "bob", "resigned", 95_000, 70, 240, 19),
            RankEntry(3, "alice", "resigned", 97_300, 12, 45, 2),
            RankEntry(4, "dave", "abandoned", 120_000, 3, 10, 0),
        )
        feed(a, Result(CODE, ranks), room("finished", players=PLAYERS, code=CODE))

    assert snap_compare(app, run_before=run(script))


def test_daily_results(snap_compare: Snap) -> None:
    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        referee = Referee(CODE)
        feed(a, welcome(), DailyDeal("2026-11-29", 1, False, "C", 87), referee.race())
        feed(a, room("racing", max_players=1, name="D4LY2"))
        ranks = (RankEntry(1, "alice", "won", 181_250, 140, 610, 52),)
        feed(a, Result(None, ranks), room("finished", max_players=1, name="D4LY2"))

    assert snap_compare(app, run_before=run(script))


def test_leaderboard(snap_compare: Snap) -> None:
    app, _ = fake_app()
    names = ["zoe", "yann", "xia", "will", "alice", "uma", "tom", "sam", "rui", "quinn"]
    rows = tuple(
        BoardRow(
            i + 1,
            n,
            "won" if i < 6 else "resigned",
            140_000 + 9_000 * i,
            120 + i,
            600,
            52 if i < 6 else 30,
            i % 3,
        )
        for i, n in enumerate(names)
    )

    def script(a: YukonApp) -> None:
        feed(a, welcome())
        a.push_screen(LeaderboardScreen())

    async def before(pilot: Pilot[Any]) -> None:
        await run(script)(pilot)
        await pilot.pause()
        feed(app, BoardPage("daily", "2026-11-29", None, 214, 0, rows, rows[4], 87))
        await pilot.pause()

    assert snap_compare(app, run_before=before)


def test_help(snap_compare: Snap) -> None:
    app, _ = fake_app()
    assert snap_compare(app, run_before=run(in_race, "question_mark"))


def test_connection_refused_in_the_lobby(snap_compare: Snap) -> None:
    from client.connection import LinkStatus

    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        a.link_status(
            LinkStatus(
                "retrying",
                "cannot reach race.example:8765: connection refused; retrying in 4 s",
            )
        )

    assert snap_compare(app, run_before=run(script))


def test_clock_is_frozen_for_snapshots() -> None:
    assert Clock()() == Clock()()


def test_quit_mid_race_asks_first(snap_compare: Snap) -> None:
    app, _ = fake_app()
    assert snap_compare(app, run_before=run(in_race, "ctrl+q"))


def test_a_private_server_asks_for_the_password(snap_compare: Snap) -> None:
    from client.connection import LinkStatus

    app, _ = fake_app()
    problem = "race.example:8765 is private and the password is missing"
    script = lambda a: a.link_status(LinkStatus("need_password", problem))  # noqa: E731
    assert snap_compare(app, run_before=run(script, *"secret"))


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC: the history's "when" (the local clock's) draws the same anywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_history(snap_compare: Snap, utc: None) -> None:
    from client.screens import HistoryScreen

    from .test_history import _row

    app, _ = fake_app()

    def script(a: YukonApp) -> None:
        feed(a, welcome())
        a.push_screen(HistoryScreen())

    def page(a: YukonApp) -> None:
        rows = (
            replace(_row(0), date="2026-11-29", room=None, code=None, hinted=False),
            replace(_row(1), date="2026-11-29", room=None, practice=True),
            replace(_row(2), outcome="timeout", hinted=True),
            *(_row(i) for i in range(3, 14)),
        )
        feed(a, HistoryPage(60, 20, 81_250, 0, rows))

    async def before(pilot: Pilot[Any]) -> None:
        await run(script)(pilot)
        await run(page)(pilot)

    assert snap_compare(app, run_before=before)


def test_a_certificate_to_trust(snap_compare: Snap) -> None:
    from client.connection import LinkStatus

    app, _ = fake_app()
    fingerprint = ":".join(f"{(i * 37) % 256:02X}" for i in range(32))
    problem = "race.example:8765 presents a certificate no authority vouches for (self-signed)"
    status = LinkStatus("need_trust", problem, fingerprint)
    assert snap_compare(app, run_before=run(lambda a: a.link_status(status)))


def test_replay_at_the_losing_move(snap_compare: Snap) -> None:
    """A replay of bob's run (12 moves of a winning line, the last one crafted as the
    losing move in the post-mortem), at the position before it: the better move lit."""
    app, _ = fake_app()
    code, line = winning_line()
    actions = tuple((1_500 * (i + 1), m) for i, m in enumerate(line[:12]))
    page = ReplayPage(
        "r-1", "bob", code, "C", "K7WQM", None, False, 1_795_975_206_174, ("carol", "bob"),
        2, "resigned", 95_000, 12, 80, 5, 0, False, 12, 0, actions,
    )  # fmt: skip
    before = Game.from_code(code)
    for move in line[:11]:
        before.play(move)
    other = next(m for m in before.legal_moves() if m != line[11])  # crafted: "instead"
    pm = PostMortemAnswer(
        "r-1", "bob", "lost", 11, line[11], None, (other, *line[12:40]), None, None, (), 0, 100_000
    )

    def script(a: YukonApp) -> None:
        feed(a, welcome())
        a.push_screen(ReplayScreen("r-1", "bob"))

    async def before(pilot: Pilot[Any]) -> None:
        await run(script)(pilot)
        feed(app, page, pm)
        await pilot.pause()
        await pilot.press("j")
        await pilot.pause()

    assert snap_compare(app, run_before=before)


def test_lobby_waiting_for_a_quick_race(snap_compare: Snap) -> None:
    """Issue 29: alone in the quick-race pool, told when others usually play."""
    from protocol.messages import Pool

    app, _ = fake_app()
    waiting = Pool("waiting", 1, 4000, 20_000, 175, "most races start 18:00-22:00 UTC")
    assert snap_compare(app, run_before=run(lambda a: feed(a, welcome(), waiting)))
