"""The app in Textual's headless harness against a real server on port 0 (SQLite).

The player is driven by key presses through ``Pilot``; opponents are scripted wire
clients (``tests/server/wire.py``). Every wait is for a condition, bounded in time.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from bench.tcp_proxy import TcpProxy
from client.app import YukonApp
from client.config import TokenStore
from client.screens import (
    LeaderboardScreen,
    NameScreen,
    PasswordScreen,
    RaceScreen,
    UnreachableScreen,
)
from client.widgets import BoardView, StandingsView, StatusLine
from protocol import Game
from protocol.messages import Create, Join, MoveMsg, Race, Ready, Resign, Result, Room, Start
from server.app import ServeOptions, open_server
from server.rooms import HubConfig
from server.runtime.executor import RaceServer

from ..server.wire import open_client, running_server, url
from .helpers import CODE, keys_for, racing, until, winning_line


def shown(app: YukonApp, widget: type[Any]) -> str:
    """The text a widget of the current screen shows ("" while the screen is still being
    composed: a screen switch comes before its widgets exist)."""
    found = app.screen.query(widget)
    if not found:
        return ""
    rendered = found.first().render()
    return str(getattr(rendered, "plain", rendered))


def screen_text(app: YukonApp) -> str:
    """Everything on the screen, as plain text (what a player reads)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def sees(app: YukonApp, text: str, pilot: Pilot[Any]) -> None:
    """Wait until ``text`` is on the screen."""
    await until(pilot, lambda: text in screen_text(app), repr(text))


@contextlib.asynccontextmanager
async def server_at(tmp_path: Path) -> AsyncIterator[RaceServer]:
    # The default window (60 s), not wire.py's 5 s: on a loaded machine the server's own
    # start (it chooses the daily deal on a thread) can stall a test's drop for seconds.
    async with running_server(
        f"sqlite:///{tmp_path}/c.db", tmp_path, resume_window_s=60.0
    ) as server:
        yield server


def client_app(target: str, tmp_path: Path, name: str | None = "alice", **options: Any) -> YukonApp:
    store = TokenStore(tmp_path / "config")
    return YukonApp(target, name=name, store=store, backoff=(0.05,), **options)


async def online(pilot: Pilot[Any], app: YukonApp) -> None:
    await until(pilot, lambda: app.link_state.kind == "online" and app.session.me, "online")


async def create_room(pilot: Pilot[Any], app: YukonApp, code: str) -> str:
    """Type a game code into the lobby's form and press Enter: the room's code."""
    await pilot.click("#code")
    await pilot.press(*code, "enter")
    await until(pilot, lambda: app.session.room is not None, "the room")
    assert app.session.room is not None
    return app.session.room.room


async def play_keys(pilot: Pilot[Any], app: YukonApp, move: str) -> None:
    """Play ``move`` with key presses and wait for the server's answer."""
    race = racing(app.session)
    answered = race.last_seq + 1
    await pilot.press(*keys_for(race, move))
    await until(pilot, lambda: racing(app.session).last_seq >= answered, f"the answer to {move}")


async def play_actions(pilot: Pilot[Any], app: YukonApp, move: str) -> None:
    """Play ``move`` through the race screen's actions (what its keys are bound to)."""
    race = racing(app.session)
    answered = race.last_seq + 1
    screen = app.screen
    assert isinstance(screen, RaceScreen)
    for key in keys_for(race, move):
        if key == "up":
            screen.action_step(1)
        elif key == "f":
            screen.action_foundation()
        else:
            screen.action_column(int(key))
    await until(pilot, lambda: racing(app.session).last_seq >= answered, f"the answer to {move}")


async def test_a_race_against_a_scripted_opponent(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        bob = await open_client(server, "bob")
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            assert app.current_mode == "lobby"
            room_code = await create_room(pilot, app, CODE.lower())
            assert app.current_mode == "room"

            await bob.send(Join(room_code))
            await bob.send(Ready(True))
            await until(pilot, lambda: "bob is ready" in shown(app, StatusLine), "bob ready")
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            bob_race: Race = await bob.expect(Race)
            await sees(app, "Standings", pilot)

            # Moves by key presses; the board follows the server's answers.
            _, line = winning_line()
            for move in line[:4]:
                await play_keys(pilot, app, move)
            assert racing(app.session).moves == 4
            assert "KD → 1" in shown(app, StatusLine) or "K♦ → 1" in shown(app, StatusLine)

            # A refused move: the server's reason in the status line, the board unchanged.
            before = racing(app.session).game.view()
            await pilot.press("5", "3")  # AH onto column 3's 10 of spades
            await until(pilot, lambda: "needs" in shown(app, StatusLine), "the refusal")
            assert shown(app, StatusLine) == "A♥ → 3: an ace of hearts needs a black 2"
            assert racing(app.session).game.view() == before

            # A tap sends the exposed ace home.
            await pilot.press("5", "enter")
            await until(pilot, lambda: racing(app.session).foundations == 1, "AH home")

            # The opponent's progress shows beside the board.
            bob_game = Game.from_position(bob_race.view)
            await bob.send(MoveMsg(1, sorted(bob_game.legal_moves())[0]))
            await until(pilot, lambda: "1 mv" in shown(app, StandingsView), "bob's move")
            standings = shown(app, StandingsView)
            assert "bob" in standings and "alice (you)" in standings and " 1/52" in standings

            # The opponent resigns, then alice resigns (after saying no once): results.
            await bob.send(Resign())
            await until(pilot, lambda: "resigned" in shown(app, StandingsView), "bob resigned")
            await pilot.press("r")
            await until(pilot, lambda: "Resign this race?" in screen_text(app), "the question")
            await pilot.press("n")
            await until(
                pilot, lambda: app.current_mode == "race" and len(app.screen_stack) == 1, "no"
            )
            assert racing(app.session).state == "playing"
            await pilot.press("r")
            await until(pilot, lambda: "Resign this race?" in screen_text(app), "the question")
            await pilot.press("y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, CODE, pilot)
            text = screen_text(app)
            assert "alice (you)" in text and "bob" in text
            assert [r.name for r in (app.session.result or Result(None, ())).ranks] == [
                "alice",
                "bob",
            ]

            # The host asks for a rematch: back in the room, with a new deal.
            await pilot.press("m")
            await until(pilot, lambda: app.current_mode == "room", "the rematch")
            assert app.session.room is not None and app.session.room.code is None
            await pilot.press("l")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
        await bob.ws.close()


async def test_winning_by_key_presses(tmp_path: Path) -> None:
    code, line = winning_line()
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await create_room(pilot, app, code)
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            # Key presses are slow in the harness (each waits for the app to be idle): the
            # bulk of the game goes through the same actions the keys are bound to, the
            # last moves through the keys themselves.
            for move in line[:-3]:
                await play_actions(pilot, app, move)
            for move in line[-3:]:
                await play_keys(pilot, app, move)
            assert racing(app.session).state == "won"
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "You won in", pilot)


async def test_the_daily_deal_and_its_leaderboard(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.press("d")
            await until(pilot, lambda: "Start now?" in screen_text(app), "the question")
            await pilot.press("y")
            await until(pilot, lambda: app.current_mode == "race", "the daily race")
            await sees(app, "daily", pilot)
            move = sorted(racing(app.session).legal_moves())[0]
            await play_keys(pilot, app, move)
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "attempt 1", pilot)

            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the board")
            await sees(app, "alice", pilot)
            text = screen_text(app)
            assert "Daily deal" in text and "(today) · 1 player · par " in text, text
            assert "resigned" in text
            await pilot.press("left")  # yesterday: nobody yet
            await until(pilot, lambda: "nobody on this board yet" in screen_text(app), "yesterday")
            await pilot.press("right")
            await until(pilot, lambda: "alice" in screen_text(app), "today again")
            await pilot.press("y")  # the page around my own row
            await sees(app, "alice", pilot)
            await pilot.press("escape")
            await until(
                pilot, lambda: app.current_mode == "results" and len(app.screen_stack) == 1, "back"
            )

            # Again: a practice attempt, straight into a race.
            await pilot.press("a")
            await until(
                pilot,
                lambda: (
                    app.current_mode == "race"
                    and app.session.daily is not None
                    and app.session.daily.practice
                ),
                "the practice attempt",
            )


async def test_a_game_codes_board_from_the_lobby(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(Race)
        await ann.send(Resign())
        await ann.expect(Result)
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the boards")
            await pilot.press("c", *CODE, "enter")
            await until(pilot, lambda: "ann" in screen_text(app), "ann's row")
            await sees(app, f"Game code {CODE}", pilot)
            await pilot.press("escape")
            await until(
                pilot, lambda: app.current_mode == "lobby" and len(app.screen_stack) == 1, "lobby"
            )
        await ann.ws.close()


async def test_race_a_run_of_a_board_as_a_ghost(tmp_path: Path) -> None:
    """``r`` on a board races the chosen row's run: a ghost room on that deal; started,
    the recorded run is in the standings, marked as a ghost, and in the results."""
    _, line = winning_line()
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        await ann.expect(Room)
        await ann.send(Start())
        await ann.expect(Race)
        for seq, move in enumerate(line[:3], start=1):
            await ann.send(MoveMsg(seq, move))
        await ann.send(Resign())
        await ann.expect(Result)
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await online(pilot, app)
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the boards")
            await pilot.press("c", *CODE, "enter")
            await until(pilot, lambda: "ann" in screen_text(app), "ann's row")
            await pilot.press("down", "r")  # the row chosen (ann's, the only one): race it
            await until(pilot, lambda: app.current_mode == "room", "the ghost room")
            room = app.session.room
            assert room is not None and room.ghost == "ann" and room.max_players == 1
            await sees(app, "Racing ann's run", pilot)
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            await until(pilot, lambda: "ann (ghost)" in shown(app, StandingsView), "the ghost")
            assert "alice (you)" in shown(app, StandingsView)
            await until(
                pilot,
                lambda: "resigned" in shown(app, StandingsView),
                "the ghost resigns when ann did",
            )
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "ann (ghost)", pilot)
            # From a replay too: the board's row replayed (v), r races it.
            await pilot.press("l")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the boards")
            await pilot.press("c", *CODE, "enter")
            await until(pilot, lambda: "ann" in screen_text(app), "ann's row")
            await pilot.press("down", "v")
            await until(pilot, lambda: "ann's run" in screen_text(app), "the replay")
            await pilot.press("r")
            await until(
                pilot,
                lambda: app.current_mode == "room" and len(app.screen_stack) == 1,
                "the ghost room, from the replay",
            )
            assert app.session.room is not None and app.session.room.ghost == "ann"
        await ann.ws.close()


async def test_a_dropped_connection_resumes_the_race(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        proxy = TcpProxy("127.0.0.1", server.port)
        await proxy.start()
        bob = await open_client(server, "bob")
        app = client_app(f"ws://127.0.0.1:{proxy.port}", tmp_path)
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                await online(pilot, app)
                room_code = await create_room(pilot, app, CODE)
                await bob.send(Join(room_code))
                await bob.send(Ready(True))
                await until(pilot, lambda: "bob is ready" in shown(app, StatusLine), "bob ready")
                await pilot.press("s")
                await until(pilot, lambda: app.current_mode == "race", "the race")
                _, line = winning_line()
                await play_keys(pilot, app, line[0])

                await proxy.cut()  # the network goes away in the middle of the race
                await until(pilot, lambda: app.link_state.kind == "retrying", "the drop")
                await until(pilot, lambda: "retrying in" in shown(app, StatusLine), "the retry")
                await pilot.press(*keys_for(racing(app.session), line[1]))
                assert app.session.status.text.startswith("not sent: the server is away")
                assert racing(app.session).pending == {}, "nothing waits to be sent later"

                await proxy.restore()  # and comes back: the client resumes by itself
                await until(pilot, lambda: app.link_state.kind == "online", "back online")
                await until(pilot, lambda: "the race goes on" in shown(app, StatusLine), "resync")
                assert app.current_mode == "race" and racing(app.session).moves == 1
                await play_keys(pilot, app, line[1])
                assert racing(app.session).moves == 2
        finally:
            await proxy.cut()
        await bob.ws.close()


async def test_a_server_restart_resumes_the_race(tmp_path: Path) -> None:
    """The server restarts (1012) in the middle of a race and restores it from its journal;
    the client comes back by itself, resends what the journal may have lost, plays on."""
    db = f"sqlite:///{tmp_path}/c.db"
    code, line = winning_line()
    proxy = TcpProxy("127.0.0.1", 9)  # aimed at each server in turn: one address throughout
    await proxy.start()
    app = client_app(f"ws://127.0.0.1:{proxy.port}", tmp_path)
    # "restarting" is shown only until the first retry (50 ms later): every status the app
    # is told is kept, so a loaded machine's slow polling cannot miss it.
    told: list[str] = []
    link_status = app.link_status

    def keep(status: Any) -> None:
        told.append(status.text)
        link_status(status)

    app.link_status = keep  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            (tmp_path / "a").mkdir()
            (tmp_path / "b").mkdir()
            async with running_server(db, tmp_path / "a") as first:
                proxy.target = ("127.0.0.1", first.port)
                await online(pilot, app)
                await create_room(pilot, app, code)
                await pilot.press("s")
                await until(pilot, lambda: app.current_mode == "race", "the race")
                for move in line[:3]:
                    await play_keys(pilot, app, move)
                first.closing_for_restart = True  # type: ignore[attr-defined]
            await until(pilot, lambda: any("restarting" in t for t in told), "the restart")
            async with running_server(db, tmp_path / "b") as second:
                proxy.target = ("127.0.0.1", second.port)
                await until(pilot, lambda: app.link_state.kind == "online", "back online")
                await until(pilot, lambda: racing(app.session).moves == 3, "the race restored")
                assert app.current_mode == "race"
                await play_keys(pilot, app, line[3])
                assert racing(app.session).moves == 4
                await pilot.press("r", "y")
                await until(pilot, lambda: app.current_mode == "results", "the results")
    finally:
        await proxy.cut()


def free_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def test_connection_refused_is_said_at_once_and_retried(tmp_path: Path) -> None:
    """Issue 42: an address with nothing behind it says so at once, in a box over the
    lobby (not a lobby that looks usable and a name box for nobody); Esc waits in the
    lobby, whose status line says the same, retrying."""
    port = free_port()
    app = client_app(f"ws://127.0.0.1:{port}", tmp_path, name=None)  # the first time here
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, UnreachableScreen), "the box")
        await sees(app, f"nothing answers at 127.0.0.1:{port}: connection refused", pilot)
        await sees(app, "Nothing answers", pilot)
        assert not any(isinstance(s, NameScreen) for s in app.screen_stack)
        await pilot.press("escape")
        await until(pilot, lambda: "connection refused" in shown(app, StatusLine), "refused")
        assert shown(app, StatusLine).startswith(f"nothing answers at 127.0.0.1:{port}")
        assert "retrying in" in shown(app, StatusLine)
        assert app.current_mode == "lobby"
        assert not any(isinstance(s, (NameScreen, UnreachableScreen)) for s in app.screen_stack)


async def test_the_name_is_asked_once_the_server_answers(tmp_path: Path) -> None:
    """The first time on a server: nothing answers at first (the box says so), then a
    server starts on that port: the box goes by itself and the name is asked."""
    port = free_port()
    app = client_app(f"ws://127.0.0.1:{port}", tmp_path, name=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, UnreachableScreen), "the box")
        options = ServeOptions(
            port=port, db=f"sqlite:///{tmp_path}/late.db", spool=tmp_path / "s", solver_processes=0
        )
        async with open_server(options):
            await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name box")
            assert not any(isinstance(s, UnreachableScreen) for s in app.screen_stack)
            await pilot.press(*"newbie", "enter")
            await online(pilot, app)
            assert app.session.me == "newbie"


async def test_a_taken_name_asks_for_another_and_the_token_is_kept(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        bob = await open_client(server, "bob")
        app = client_app(url(server), tmp_path, name="Bob")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name prompt")
            await sees(app, "the name 'Bob' is taken", pilot)
            await pilot.press(*"robin", "enter")
            await online(pilot, app)
            assert app.session.me == "robin" and not isinstance(app.screen, NameScreen)
        saved = TokenStore(tmp_path / "config").load(url(server))
        assert saved is not None and saved.name == "robin"

        # The next start needs no name: the saved token says who this is.
        again = client_app(url(server), tmp_path, name=None)
        async with again.run_test(size=(80, 24)) as pilot:
            await online(pilot, again)
            assert again.session.me == "robin"
        await bob.ws.close()


async def test_clicking_a_card_and_a_column_plays_a_move(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await create_room(pilot, app, CODE)
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            # The mode changes before the new screen has composed its widgets.
            await until(pilot, lambda: bool(app.screen.query(BoardView)), "the board")
            board = app.screen.query_one(BoardView)
            await until(pilot, lambda: board.target_at(8, 3) is not None, "the board drawn")
            race = racing(app.session)
            # Column 2 is "?? 6H QS AD 9H 8S": the 6H is on row 3 (rows 0-1: foundations, keys).
            cw = board.cell_width()
            await pilot.click(board, offset=(1 + cw * 1 + 1, 3))
            # The board posts the click up as a message; the race screen handles it.
            await until(pilot, lambda: race.pick is not None, "the pick")
            assert race.pick is not None and race.pick.card == "6H"
            assert race.destinations() == {"7"}
            await pilot.click(board, offset=(1 + cw * 6 + 1, 1))  # column 7's key
            await until(pilot, lambda: racing(app.session).moves == 1, "the move")
            assert racing(app.session).column(2) == ["9S"]


async def test_spectator_watches_and_sees_the_result(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        room = await ann.expect(Room)
        app = client_app(url(server), tmp_path, name="carol")
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.click("#room-code")
            await pilot.press(*room.room, "escape", "w")
            await until(pilot, lambda: app.current_mode == "room", "the room")
            await sees(app, "(you watch)", pilot)
            await ann.send(Start())
            await until(pilot, lambda: app.current_mode == "watch", "the race, watched")
            await ann.send(Resign())
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await sees(app, "ann", pilot)
        await ann.ws.close()


async def test_name_switches_identity_and_never_loses_one(tmp_path: Path) -> None:
    """--name alice, then --name bob, then --name alice: alice is alice again (her name
    is never "taken" to her), and a start without --name is the last one used."""
    async with server_at(tmp_path) as server:
        for name, expected in (("alice", "alice"), ("bob", "bob"), ("Alice", "alice")):
            app = client_app(url(server), tmp_path, name=name)
            async with app.run_test(size=(80, 24)) as pilot:
                await online(pilot, app)
                assert app.session.me == expected
                assert not isinstance(app.screen, NameScreen)
        again = client_app(url(server), tmp_path, name=None)
        async with again.run_test(size=(80, 24)) as pilot:
            await online(pilot, again)
            assert again.session.me == "alice"
        assert TokenStore(tmp_path / "config").names(url(server)) == ["alice", "bob"]


async def test_a_private_server_asks_for_its_password_and_it_is_kept(tmp_path: Path) -> None:
    """Without --password, a prompt says the server is private (the lobby did not look
    usable while nothing worked); the password given is kept for that server."""
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/p.db",
        spool=tmp_path / "s.jsonl",
        hub=HubConfig(password="correct horse"),
        solver_processes=0,
    )
    async with open_server(options) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, PasswordScreen), "the prompt")
            await sees(app, "private", pilot)
            await pilot.press(*"battery", "enter")  # wrong: asked again, saying so
            await until(pilot, lambda: isinstance(app.screen, PasswordScreen), "asked again")
            await sees(app, "wrong", pilot)
            await pilot.press(*"correct horse", "enter")
            await online(pilot, app)
            assert app.session.me == "alice"
        again = client_app(url(server), tmp_path, name=None)
        async with again.run_test(size=(80, 24)) as pilot:
            await online(pilot, again)
            assert again.session.me == "alice"
