"""Issue 28 on the terminal's screens at 80x24, from scripted server messages (a stand-in
connection): names never run into their state, wide names keep the columns, the ghost
race's header keeps the score, the daily's par, practice rooms, ``q``, the name box's
limit and blank name, a name's link, the finish key and the rematch key of a guest."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.cells import cell_len
from textual.pilot import Pilot

from client.app import YukonApp
from client.screens import NameLinkScreen, NameScreen, RaceScreen
from protocol.messages import DailyDeal, Finish, RankEntry, Rematch, Result, Welcome

from .helpers import CODE, Referee, fake_app, feed, progress, room, until
from .test_app import screen_text
from .test_friend import face_up_session

LONG = "Carol the Terminal Waits"
WIDE = "狐狸🦊🦊 Fox"


def lines(app: YukonApp) -> list[str]:
    return screen_text(app).splitlines()


async def racing(pilot: Pilot[Any], app: YukonApp, me: str = "alice") -> None:
    players = ((me, True, True), (LONG, True, True), (WIDE, True, True))
    referee = Referee(CODE)
    feed(app, Welcome(1, me, "t" * 32, 60), room("countdown", players=players), referee.race())
    feed(app, room("racing", players=players))
    feed(
        app,
        progress(
            83_400,
            (me, "playing", 2, 45, 5, None, True),
            (LONG, "won", 52, 610, 140, 81_250, True),
            (WIDE, "resigned", 9, 120, 51, 70_000, True),
        ),
    )
    await until(pilot, lambda: isinstance(app.screen, RaceScreen), "the race")
    await pilot.pause()


async def test_names_never_run_into_their_state_and_wide_names_keep_the_columns() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await racing(pilot, app)
        shown = lines(app)
        long_line = next(x for x in shown if "Carol the" in x)
        wide_line = next(x for x in shown if "狐狸" in x)
        assert "… won 1:21.2" in long_line or "Waits won" in long_line, long_line
        assert "resigned 1:10.0" in wide_line, wide_line
        # Every runner's line ends in the same cell: the right edge of the standings.
        ends = {cell_len(x.rstrip()) for x in (long_line, wide_line)}
        mine = next(x for x in shown if "alice (you)" in x)
        ends.add(cell_len(mine.rstrip()))
        assert len(ends) == 1, [long_line, wide_line, mine]
        assert "alice (you) " in mine and mine.rstrip().endswith("playing")


async def test_a_ghost_races_header_keeps_the_score_and_a_dailys_shows_par() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        referee = Referee(CODE)
        ghost = replace(room("countdown", max_players=1), ghost=LONG)
        feed(app, Welcome(1, "alice", "t" * 32, 60), ghost, referee.race())
        feed(app, replace(ghost, state="racing"))
        await until(pilot, lambda: isinstance(app.screen, RaceScreen), "the ghost race")
        await pilot.pause()
        head = lines(app)[0]
        assert "score 0  moves 0" in head and "racing Carol" in head, head
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        deal = DailyDeal("2026-12-02", 2, True, "C", par=96)
        daily = room("countdown", max_players=1, players=(("alice", True, True),))
        feed(app, Welcome(1, "alice", "t" * 32, 60), deal, daily, Referee(CODE).race())
        feed(app, replace(daily, state="racing"))
        await until(pilot, lambda: isinstance(app.screen, RaceScreen), "the daily")
        await pilot.pause()
        head = lines(app)[0]
        assert "daily 2026-12-02 practice" in head and "par 96" in head, head
        assert "score 0  moves 0" in head, head


async def test_a_practice_room_is_for_one_and_has_no_invite_talk() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        ghost = replace(room("lobby", max_players=1), ghost="ann")
        feed(app, Welcome(1, "alice", "t" * 32, 60), ghost)
        await until(pilot, lambda: app.current_mode == "room", "the ghost room")
        await pilot.pause()
        text = screen_text(app)
        assert "you alone" in text and "1 players" not in text, text
        assert "invite" not in text.lower() and "Others join" not in text, text
        assert "a race alone is fine" not in text
        assert "room · racing ann's run (ghost)" in lines(app)[0]
        assert "racing ann's run as a ghost: s starts" in lines(app)[-2]


async def test_q_quits_from_the_results_and_asks_mid_race() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await racing(pilot, app)
        await pilot.press("q")
        await until(pilot, lambda: "Quit" in screen_text(app), "the question mid-race")
        await pilot.press("n")
        await until(pilot, lambda: "Quit" not in screen_text(app), "no")
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, Welcome(1, "alice", "t" * 32, 60), room("finished"))
        await until(pilot, lambda: app.current_mode == "room", "the finished room")
        await pilot.pause()
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, "q to quit")


async def test_a_guest_asks_for_the_rematch_with_m() -> None:
    app, link = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        players = (("ann", True, True), ("alice", True, True))
        feed(app, Welcome(1, "alice", "t" * 32, 60), room("finished", host="ann", players=players))
        await until(pilot, lambda: app.current_mode == "room", "the finished room")
        await pilot.pause()
        assert "m asks for a rematch" in screen_text(app)
        await pilot.press("m")
        await until(pilot, lambda: Rematch() in link.sent, "the rematch")


async def test_the_finish_key_is_offered_with_every_card_face_up() -> None:
    session, _, _ = face_up_session()
    app, link = fake_app()
    app.session = session
    async with app.run_test(size=(80, 24)) as pilot:
        app.sync()
        await until(pilot, lambda: isinstance(app.screen, RaceScreen), "the race")
        await pilot.pause()
        assert "a finish" in lines(app)[-1], lines(app)[-1]
        await pilot.press("a")
        await until(pilot, lambda: any(isinstance(m, Finish) for m in link.sent), "finish")


async def test_the_name_box_says_its_limit_as_one_types_and_refuses_a_blank() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        chosen: list[str | None] = []
        app.push_screen(NameScreen("race.example:8765", "first time: choose a name"), chosen.append)
        await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name box")
        await pilot.pause()
        assert "0/20 characters" in screen_text(app)
        await pilot.press("enter")
        await until(pilot, lambda: "cannot be blank" in screen_text(app), "the blank refused")
        await pilot.press(*"   ", "enter")
        assert isinstance(app.screen, NameScreen) and chosen == []
        await pilot.press(*"Carol the Terminal Waits")
        await until(pilot, lambda: "at most 20 characters" in screen_text(app), "the limit")
        await pilot.press("enter")
        await until(pilot, lambda: chosen != [], "the name")
        assert chosen == ["Carol the Termina"]  # after three spaces: 20 in the box, trimmed


async def test_i_shows_the_names_link_and_c_copies_it() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        feed(app, Welcome(1, "alice", "s3cret-token", 60))
        await pilot.pause()
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, NameLinkScreen), "the link")
        await pilot.pause()
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert "http://race.example:8765/#token=s3cret-token" in text, text
        assert "Anyone with this link plays as you" in text
        await pilot.press("c")
        assert app.clipboard == "http://race.example:8765/#token=s3cret-token"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, NameLinkScreen), "closed")


async def test_the_results_keep_you_on_a_long_name() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        players = ((LONG, True, True), (WIDE, True, True))
        ranks = (
            RankEntry(1, WIDE, "resigned", 8_200, 3, 10, 1),
            RankEntry(2, LONG, "resigned", 6_100, 0, 0, 0),
        )
        feed(app, Welcome(1, LONG, "t" * 32, 60), room("racing", players=players))
        feed(app, Result(CODE, ranks), room("finished", players=players, host=LONG))
        await until(pilot, lambda: app.current_mode == "results", "the results")
        await pilot.pause()
        shown = lines(app)
        assert any("Carol the Termi… (you)  resigned" in x for x in shown), "\n".join(shown)
        assert "You finished #2 of 2 (resigned)" in screen_text(app)
