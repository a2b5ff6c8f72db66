"""Screens as racers found them (issue 17): full rooms and results, focus in the lobby, the
spectator's clock. The app runs in Textual's headless harness against a real server on
port 0; the others are scripted wire clients. Every wait is for a condition."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Input

from client.app import YukonApp
from client.config import LOCAL_KEY
from client.connection import LinkStatus
from client.screens import LeaderboardScreen, NameScreen
from client.widgets import ResultsView, RoomView
from protocol.messages import (
    Create,
    Hint,
    HintAnswer,
    Join,
    Ready,
    Rematch,
    Resign,
    Result,
    Room,
    Start,
    Watch,
)

from ..server.wire import Client, open_client, url
from .helpers import CODE, Clock, fake_app, until
from .test_app import client_app, online, screen_text, sees, server_at
from .test_snapshots import in_race

NAMES = ["bob", "carol", "dave", "erin", "fred", "gina", "hugo"]


async def _guests(server: object, room: str, names: list[str]) -> list[Client]:
    guests = []
    for name in names:
        guest = await open_client(server, name)  # type: ignore[arg-type]
        await guest.send(Join(room))
        await guest.expect(Room)
        await guest.send(Ready(True))
        guests.append(guest)
    return guests


async def _close(*clients: Client) -> None:
    """Close scripted clients together: one that never read its frames may wait out the
    close timeout, and seven in a row would take a minute."""
    for client in clients:
        client.ws.close_timeout = 0.5
    await asyncio.gather(*(client.ws.close() for client in clients))


async def test_eight_players_fill_the_room_and_the_results(tmp_path: Path) -> None:
    """Auto-height lists grew only on a resize: as a guest, every name shows as players
    join; on the second results screen (a rematch with more players), every rank."""
    async with server_at(tmp_path) as server:
        bob = await open_client(server, "bob")
        await bob.send(Create(code=CODE, max_players=8))
        room = await bob.expect(Room)
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            app.send(Join(room.room))
            await until(pilot, lambda: app.current_mode == "room", "the room")
            await sees(app, "Players 2/8", pilot)
            await pilot.press("space")
            await until(pilot, lambda: "ready" in str(app.session.room), "ready")
            await bob.send(Start())
            await until(pilot, lambda: app.current_mode == "race", "the race")
            await bob.send(Resign())
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "bob", pilot)

            await bob.send(Rematch())
            await until(pilot, lambda: app.current_mode == "room", "the rematch")
            await pilot.pause()
            guests = await _guests(server, room.room, NAMES[1:])
            await until(
                pilot,
                lambda: app.session.room is not None and len(app.session.room.players) == 8,
                "eight players",
            )
            await pilot.pause()
            await sees(app, "Players 8/8", pilot)
            text = screen_text(app)
            assert all(name in text for name in NAMES), text
            assert app.screen.query_one(RoomView).size.height >= 4 + 8

            await pilot.press("space")
            await until(
                pilot,
                lambda: (
                    app.session.room is not None
                    and all(p.ready for p in app.session.room.players if p.name != "bob")
                ),
                "everyone ready",
            )
            await bob.send(Start())
            await until(pilot, lambda: app.current_mode == "race", "the second race")
            for guest in (bob, *guests):
                await guest.send(Resign())
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the second results")
            await until(
                pilot, lambda: len((app.session.result or Result(None, ())).ranks) == 8, "8 ranks"
            )
            await pilot.pause()
            text = screen_text(app)
            assert all(name in text for name in NAMES), text
            assert app.screen.query_one(ResultsView).size.height == 1 + 8
        await _close(bob, *guests)


async def test_lobby_keys_are_keys_again_after_a_room_and_the_code_is_cleared(
    tmp_path: Path,
) -> None:
    """Back from a room, d and w are shortcuts, not letters for the last text box."""
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        room = await ann.expect(Room)
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.click("#room-code")
            await pilot.press(*room.room, "enter")
            await until(pilot, lambda: app.current_mode == "room", "the room")
            await pilot.press("l")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
            await pilot.pause()
            lobby = app.screen
            code_box = lobby.query_one("#room-code", Input)
            assert code_box.value == "", "the old room code stays in the box"
            assert not isinstance(app.focused, Input), app.focused
            await pilot.press("w")  # the watch shortcut: no code, so it asks for one
            await until(pilot, lambda: "type the room code" in screen_text(app), "the ask")
            assert code_box.value == ""
        await ann.ws.close()


async def test_a_spectator_s_clock_runs_and_the_hinted_mark_shows(tmp_path: Path) -> None:
    """Spectators see standings only, but the race clock runs between moves, and the
    results mark a hinted run (the server tells nobody else of a hint before them)."""
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE, hints=True))
        room = await ann.expect(Room)
        app = client_app(url(server), tmp_path, name="carol")
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            app.send(Watch(room.room))
            await until(pilot, lambda: app.current_mode == "room", "the room")
            await ann.send(Start())
            await until(pilot, lambda: app.current_mode == "watch", "the race, watched")
            await until(pilot, lambda: app.session.progress is not None, "a progress")

            await sees(app, "You watch room", pilot)

            def clock() -> str:
                lines = screen_text(app).splitlines()
                return lines[0].split()[-1] if lines else ""

            first = clock()
            await until(pilot, lambda: clock() not in (first, "0:00.0"), "the clock to run")
            assert not any(f" {c}" in screen_text(app) for c in ("A♥", "7♥"))  # no cards

            await ann.send(Hint())
            await ann.expect(HintAnswer)
            await ann.send(Resign())
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "hinted", pilot)
        await _close(ann)


async def test_status_lines_fit_80_columns_while_the_server_is_away() -> None:
    """A move while the server is away says so in full, and a long link status keeps its
    end ("retrying in 4 s") rather than being cut at the width."""
    app, link = fake_app(clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        in_race(app)
        await pilot.pause()
        link.online = False
        cause = "cannot reach yukon.example.org:18443: connection refused"
        app.link_status(LinkStatus("retrying", f"{cause}; retrying in 4 s"))
        await pilot.press("5", "f")
        await pilot.pause()
        line = status_row(app)
        assert "not sent" in line and len(line.rstrip()) <= 79, line
        assert not line.rstrip().endswith("…") or "reconnecting…" in line, line
        long = (
            "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed (_ssl.c:1000)"
        )
        app.link_status(LinkStatus("retrying", f"{cause}: {long}; retrying in 15 s"))
        await pilot.pause()
        line = status_row(app)
        assert line.rstrip().endswith("retrying in 15 s"), line


def status_row(app: YukonApp) -> str:
    """The status line as drawn: the screen's row above the key hints."""
    return screen_text(app).splitlines()[-2]


async def test_tick_boxes_read_on_and_off_without_colour_and_in_ascii() -> None:
    for ascii, on, off in ((False, "▐X▌ undo", "▐ ▌ hints"), (True, "[X] undo", "[ ] hints")):
        app, _ = fake_app(ascii=ascii)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            row = next(line for line in screen_text(app).splitlines() if "Options" in line)
            assert on in row and off in row, row


async def test_a_39_character_game_code_fits_its_boxes_at_80_columns() -> None:
    """Secret codes grow to ``YU1-C-`` and 26 letters: the boxes show them whole."""
    code = "YU1-C-" + "A" * 33
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.query_one("#code", Input).size.width >= len(code) + 1
        app.push_screen(LeaderboardScreen())
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one("#board-code", Input).size.width >= len(code) + 1


async def test_ctrl_q_mid_race_asks_and_says_the_race_goes_on() -> None:
    app, _ = fake_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        in_race(app)
        await pilot.pause()
        await pilot.press("ctrl+q")
        await until(pilot, lambda: "Quit" in screen_text(app), "the question")
        text = " ".join(screen_text(app).split())
        assert "race goes on" in text and "60 s" in text, text
        await pilot.press("n")
        await until(pilot, lambda: "Quit" not in screen_text(app), "no")
        assert app.is_running and app.current_mode == "race"
        await pilot.press("ctrl+q")
        await until(pilot, lambda: "Quit" in screen_text(app), "the question again")
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, "the app to quit")


async def test_local_s_first_run_names_no_port_and_says_it_once(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path, name=None, key=LOCAL_KEY)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name prompt")
            await pilot.pause()
            text = " ".join(screen_text(app).replace("│", " ").split())
            assert "127.0.0.1" not in text and str(server.port) not in text, text
            assert "your own server" in text, text
            assert text.lower().count("choose") == 1, text
            await pilot.press(*"solo", "enter")
            await online(pilot, app)
            assert "127.0.0.1" not in screen_text(app).splitlines()[0]
