"""The friend's whole path in the terminal (issue 28's proof), the real Textual app driven by
Textual's pilot against a real server on loopback (SQLite): an invite link, a race to a
win the server finishes (``a``), a rematch asked by a guest, a replay from the results,
and "race this run" from the results, which leaves the finished room on the way. The host
is a scripted wire client (tests/server/wire.py); every wait is for a condition."""

from __future__ import annotations

from pathlib import Path

from client.config import TokenStore
from client.invite import parse_target
from client.screens import (
    ClosedRoomScreen,
    LeaderboardScreen,
    NameScreen,
    ReplayScreen,
    ResultsScreen,
)
from protocol.messages import (
    Create,
    Daily,
    DailyDeal,
    Join,
    Leave,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    RoomPlayer,
    Start,
)

from ..server.wire import open_client, url
from .helpers import racing, until, winning_line
from .test_app import client_app, online, play_actions, play_keys, screen_text, sees, server_at
from .test_invite_app import invited

BOTH_READY = (RoomPlayer("ann", True, True), RoomPlayer("carol", True, True))


async def test_the_friends_path(tmp_path: Path) -> None:
    code, line = winning_line()
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=code, max_players=4))
        room: Room = await ann.expect(Room)
        link = f"http://127.0.0.1:{server.port}/r/{room.room}"
        app = invited(link, tmp_path, "carol")
        async with app.run_test(size=(80, 24)) as pilot:
            # The invite link: straight into the room, as a racer.
            await until(pilot, lambda: app.current_mode == "room", "the room")
            await sees(app, "space ready", pilot)
            await pilot.press("space")
            await ann.expect(Room, players=BOTH_READY)
            await ann.send(Start())
            await until(pilot, lambda: app.current_mode == "race", "the race")
            await sees(app, "Standings", pilot)

            # Play until every card is face up (the actions the keys are bound to, then
            # keys), and `a` lets the server play out the win.
            race = racing(app.session)
            moves = iter(line)
            while not race.can_finish():
                move = next(moves)
                if race.moves < 6:
                    await play_keys(pilot, app, move)
                else:
                    await play_actions(pilot, app, move)
                race = racing(app.session)
            await sees(app, "a finishes for you", pilot)
            left = 52 - race.foundations
            assert left > 0 and "a finish" in screen_text(app).splitlines()[-1]
            await pilot.press("a")
            await until(pilot, lambda: racing(app.session).state == "won", "the finished win")
            assert racing(app.session).foundations == 52
            await sees(app, "waiting for the others", pilot)
            assert "u undo" not in screen_text(app) and "h hint" not in screen_text(app)
            await ann.send(Resign())
            await until(pilot, lambda: app.current_mode == "results", "the results")
            result: Result = await ann.expect(Result)
            assert [(r.name, r.outcome) for r in result.ranks] == [
                ("carol", "won"),
                ("ann", "resigned"),
            ]
            await sees(app, "You won in", pilot)
            await sees(app, ", #1 of 2", pilot)

            # A replay of the win, from the results: ↓ v, its end is the win.
            await pilot.press("down", "v")
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
            await sees(app, "carol's run", pilot)
            await pilot.press("end")
            await sees(app, "52/52 cards", pilot)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen), "back")

            # The guest asks for the rematch.
            await sees(app, "m rematch", pilot)
            await pilot.press("m")
            await until(pilot, lambda: app.current_mode == "room", "the rematch's room")
            assert app.session.room is not None and app.session.room.state == "lobby"
            await sees(app, "rematch: a new deal", pilot)
            await ann.expect(Room, state="lobby")

            # A second race, both resign; from its results, r on ann's row races ann's
            # run as a ghost: the finished room is left on the way (no "leave it first").
            await pilot.press("space")
            await ann.expect(Room, players=BOTH_READY)
            await ann.send(Start())
            await until(pilot, lambda: app.current_mode == "race", "the second race")
            await play_keys(pilot, app, sorted(racing(app.session).legal_moves())[0])
            await ann.send(Resign())
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the second results")
            await sees(app, "You finished #", pilot)
            second = app.session.result
            assert second is not None
            names = [r.name for r in second.ranks]
            steps = names.index("ann") - names.index("carol")
            await pilot.press("down")  # the first ↓ marks my own row
            await pilot.press(*(["down"] * steps if steps > 0 else ["up"] * -steps), "r")
            await until(
                pilot,
                lambda: app.session.room is not None and app.session.room.ghost is not None,
                "the ghost room",
            )
            assert app.session.room is not None and app.session.room.max_players == 1
            assert app.current_mode == "room"
            text = screen_text(app)
            assert "you alone" in text and "invite" not in text.lower(), text
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the ghost race")
            await sees(app, "(ghost)", pilot)
            head = screen_text(app).splitlines()[0]
            assert "score" in head and "moves" in head, head
        await ann.send(Leave())
        await ann.ws.close()


async def test_r_on_the_daily_board_from_the_dailys_results_needs_no_leaving(
    tmp_path: Path,
) -> None:
    """Item 3: after a daily attempt, its board's r races a friend's run at once: the
    finished daily room is left on the way, never "you are in room X; leave it first"."""
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Daily())
        await ann.expect(DailyDeal)
        await ann.expect(Race)
        await ann.send(Resign())
        await ann.expect(Result)
        app = client_app(url(server), tmp_path, name="carol")
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.press("d")
            await until(pilot, lambda: "Start now?" in screen_text(app), "the question")
            await pilot.press("y")
            await until(pilot, lambda: app.current_mode == "race", "the daily")
            await pilot.press("r", "y")
            await until(pilot, lambda: app.current_mode == "results", "the results")
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the board")
            await until(pilot, lambda: "ann" in screen_text(app), "ann's row")
            board = app.session.board
            assert board is not None
            names = [r.name for r in board.rows]
            steps = names.index("ann") - names.index("carol")
            await pilot.press("down", *(["down"] * steps if steps > 0 else ["up"] * -steps))
            await pilot.press("r")
            await until(
                pilot,
                lambda: app.session.room is not None and app.session.room.ghost == "ann",
                "the ghost room",
            )
            assert app.current_mode == "room" and len(app.screen_stack) == 1
            assert "leave it first" not in screen_text(app)
        await ann.ws.close()


async def test_a_names_link_brings_the_name_to_another_device(tmp_path: Path) -> None:
    """Item 13: ``yukon play LINK#token=...`` on a device that never had the name says
    hello with the link's token and keeps it for that server (a later start needs no link)."""
    async with server_at(tmp_path) as server:
        first = await open_client(server)
        welcome = await first.hello("carol")
        await first.ws.close()
        target = parse_target(f"http://127.0.0.1:{server.port}/#token={welcome.token}")
        assert target.token == welcome.token and target.room is None
        other = tmp_path / "other-device"
        app = client_app(target.url, other, name=None, token=target.token)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            assert app.session.me == "carol"
        assert TokenStore(other / "config").names(url(server)) == ["carol"]
        again = client_app(url(server), other, name=None)
        async with again.run_test(size=(80, 24)) as pilot:
            await online(pilot, again)
            assert again.session.me == "carol"


async def test_a_closed_rooms_link_says_so_before_any_name(tmp_path: Path) -> None:
    code, _ = winning_line()
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        bob = await open_client(server, "bob")
        await ann.send(Create(code=code))
        room: Room = await ann.expect(Room)
        await bob.send(Join(room.room))
        await bob.expect(Room)
        await bob.send(Ready(True))
        await ann.expect(
            Room, players=(RoomPlayer("ann", True, True), RoomPlayer("bob", True, True))
        )
        await ann.send(Start())
        for who in (ann, bob):
            await who.expect(Race)
            await who.send(Resign())
        await ann.expect(Result)
        for who in (ann, bob):
            await who.send(Leave())
        await ann.ws.close()
        await bob.ws.close()
        app = invited(f"http://127.0.0.1:{server.port}/r/{room.room}", tmp_path, None)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ClosedRoomScreen), "the closed room")
            await sees(app, f"Room {room.room} is closed", pilot)
            await sees(app, "Its last race", pilot)
            text = screen_text(app)
            assert "ann" in text and "bob" in text and "resigned" in text, text
            # Read before any name is asked: nothing was said to the server yet.
            assert not any(isinstance(s, NameScreen) for s in app.screen_stack)
            assert app.session.me is None
            # v replays a run of it: that needs the server, and a name first.
            await pilot.press("down", "v")
            await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name, now")
            await pilot.press(*"dora", "enter")
            await until(pilot, lambda: isinstance(app.screen, ClosedRoomScreen), "back")
            await online(pilot, app)
            await pilot.press("v")
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
            await sees(app, "'s run", pilot)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, ClosedRoomScreen), "the room")
            await pilot.press("escape")
            await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
            assert len(app.screen_stack) == 1
            assert app.session.room is None and app.session.invite is None
