"""Issue 29 in the terminal client (docs/protocol.md 4.28): the four-colour deck and suits
as letters (a snapshot of each mode, kept per name in the config directory), the
countdown from the server's clock whatever this machine's clock says, and a past day
played from the archive from the lobby, the boards and the results."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from client.app import YukonApp
from client.cards import FOUR_COLOUR, ink
from client.config import Deck, DeckMemory, TokenStore
from client.dailydeck import NextDaily, archive_date, format_left
from client.screens import LeaderboardScreen, LobbyScreen
from protocol.messages import (
    Board,
    BoardPage,
    Daily,
    DailyDeal,
    RankEntry,
    Result,
    Welcome,
)

from .helpers import CODE, Clock, FakeLink, Referee, fake_app, feed, room, run, until
from .test_snapshots import in_race

Snap = Callable[..., bool]
SIX_HOURS = 6 * 3600 * 1000


def test_format_left_rounds_up_to_the_second() -> None:
    assert format_left(SIX_HOURS) == "6:00:00"
    assert format_left(SIX_HOURS - 1) == "6:00:00"
    assert format_left(1_000) == "0:00:01" and format_left(61_001) == "0:01:02"
    assert archive_date(" 2026-11-28 ") == "2026-11-28" and archive_date("28/11") is None


def test_inks_of_the_two_decks() -> None:
    assert ink("7H") == ink("7D") == "#c00000" and ink("7S") == ink("7C") == "#101010"
    assert [ink(f"7{s}", four=True) for s in "SHDC"] == [FOUR_COLOUR[s] for s in "SHDC"]
    assert len(set(FOUR_COLOUR.values())) == 4


def test_the_deck_is_kept_per_server_and_name(tmp_path: Path) -> None:
    memory = DeckMemory(tmp_path)
    assert memory.load("ws://a:1", "alice") == Deck()
    memory.save("ws://a:1", "Alice", Deck(four=True, letters=False))
    assert memory.load("ws://a:1", "alice") == Deck(four=True)  # names are case-blind
    assert memory.load("ws://a:1", "bob") == Deck()
    assert memory.load("ws://b:2", "alice") == Deck()
    (tmp_path / "deck.json").write_text("[not a map")
    assert memory.load("ws://a:1", "alice") == Deck()  # a broken file is no deck


def _welcome(**fields: Any) -> Welcome:
    return Welcome(1, "alice", "t" * 32, 60, **fields)


def test_snapshot_race_four_colour(snap_compare: Snap) -> None:
    app, _ = fake_app()
    app.session.four_colour = True
    assert snap_compare(app, run_before=run(in_race, "2"))


def test_snapshot_race_suits_as_letters(snap_compare: Snap) -> None:
    app, _ = fake_app()
    app.session.four_colour = True
    app.session.suit_letters = True
    assert snap_compare(app, run_before=run(in_race, "2"))


def test_snapshot_lobby_with_the_countdown(snap_compare: Snap) -> None:
    app, _ = fake_app()
    welcome = _welcome(next_daily_ms=SIX_HOURS - 1_234)
    assert snap_compare(app, run_before=run(lambda a: feed(a, welcome)))


async def test_lobby_keys_switch_the_deck_and_keep_it_for_the_name(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    link = FakeLink()
    app = YukonApp("ws://race.example:8765", link=link, clock=Clock(), store=store)
    link.events = app
    async with app.run_test() as pilot:
        feed(app, _welcome())
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        await pilot.press("f", "s")
        await pilot.pause()
        assert (app.session.four_colour, app.session.suit_letters) == (True, True)
        assert DeckMemory(tmp_path).load("ws://race.example:8765", "alice") == Deck(True, True)
        await pilot.press("s")
        await pilot.pause()
        assert DeckMemory(tmp_path).load("ws://race.example:8765", "alice") == Deck(True, False)
    # Another run of the client, the same name: its deck comes back with the welcome.
    link2 = FakeLink()
    again = YukonApp("ws://race.example:8765", link=link2, clock=Clock(), store=store)
    link2.events = again
    async with again.run_test() as pilot:
        feed(again, _welcome())
        await pilot.pause()
        assert (again.session.four_colour, again.session.suit_letters) == (True, False)


async def test_the_countdown_runs_from_the_server_s_figure_not_this_machine_s_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # This machine's wall clock is years off: nothing of the countdown may read it.
    monkeypatch.setattr(time, "time", lambda: 4_000_000_000.0)
    clock = Clock(500.0)
    app, _ = fake_app(clock=clock)
    async with app.run_test() as pilot:
        feed(app, _welcome(next_daily_ms=SIX_HOURS))
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        widget = app.screen.query_one(NextDaily)
        assert str(widget.render()) == "Next daily deal in 6:00:00"
        clock.now += 3723.5  # 1 h 2 min 3.5 s later on the app's monotonic clock
        assert str(widget.render()) == "Next daily deal in 4:57:57"
        clock.now += 6 * 3600
        assert str(widget.render()) == "The next daily deal is here"
        # A board page brings the server's figure again: it is counted from then on.
        feed(app, BoardPage("daily", "2026-11-30", None, 0, 0, (), None, next_daily_ms=90_000))
        assert str(widget.render()) == "Next daily deal in 0:01:30"


def _text(app: YukonApp, selector: str) -> str:
    widget = app.screen.query_one(selector)
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


async def test_a_past_day_from_the_archive(tmp_path: Path) -> None:
    app, link = fake_app()
    async with app.run_test(size=(100, 30)) as pilot:
        feed(app, _welcome(next_daily_ms=SIX_HOURS))
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        await pilot.press("a")  # no day typed yet: the box takes the focus
        await pilot.pause()
        assert not any(isinstance(m, Daily) for m in link.sent)
        await pilot.press(*"2026-11-28", "enter")
        await until(pilot, lambda: any(isinstance(m, Daily) for m in link.sent), "daily")
        assert [m for m in link.sent if isinstance(m, Daily)] == [Daily(date="2026-11-28")]

        # The server deals it: an archive run, practice, on that day's archive board.
        referee = Referee(CODE)
        deal = DailyDeal("2026-11-28", 1, True, "C", 87, archive=True, next_daily_ms=SIX_HOURS)
        feed(app, deal, referee.race(), room("racing", max_players=1, name="D4LY1", code=CODE))
        await pilot.pause()
        ranks = (RankEntry(1, "alice", "resigned", 9_000, 0, 0, 0),)
        feed(app, Result(None, ranks), room("finished", max_players=1, name="D4LY1", code=CODE))
        await pilot.pause()
        head = _text(app, "#results-head")
        assert "from the archive: practice" in head
        link.sent.clear()
        await pilot.press("a")  # again: the same past day
        await pilot.pause()
        assert [m for m in link.sent if isinstance(m, Daily)] == [Daily(date="2026-11-28")]
        await pilot.press("b")  # its board: the day's archive board
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the boards")
        assert [m for m in link.sent if isinstance(m, Board)][-1].kind == "archive"
        await pilot.press("a")  # the day's own board, then play it from there
        await pilot.pause()
        assert [m for m in link.sent if isinstance(m, Board)][-1] == Board(
            "daily",
            date="2026-11-28",
            limit=link.sent[-1].limit,  # type: ignore[attr-defined]
        )
        await pilot.press("p")
        await pilot.pause()
        assert link.sent[-1] == Daily(date="2026-11-28")
