"""An invite link in the app, against a real server on port 0 (SQLite): the room screen
shows the room's link and ``c`` copies it; a client started with a link (as ``yukon play
LINK`` starts it) goes straight to the room, as a racer, or watching when the race runs or
the room is full, and says in the lobby why when it cannot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from client.app import YukonApp
from client.config import TokenStore
from client.invite import invite_link, parse_target
from client.screens import ClosedRoomScreen, RoomScreen
from client.state import Session
from client.widgets import StatusLine
from protocol.messages import Create, Error, Join, Race, Room, Start, Watch, Welcome

from ..server.wire import open_client, url
from .helpers import CODE, until
from .helpers import room as room_message
from .test_app import client_app, online, screen_text, sees, server_at, shown


def invited(link: str, tmp_path: Path, name: str | None = "carol") -> YukonApp:
    """The app as ``yukon play LINK --name NAME`` makes it."""
    target = parse_target(link)
    assert target.room is not None
    return client_app(target.url, tmp_path, name=name, invite=target.room)


async def test_the_room_shows_its_link_and_c_copies_it(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await online(pilot, app)
            await pilot.click("#code")
            await pilot.press(*CODE, "enter")
            await until(pilot, lambda: app.current_mode == "room", "the room")
            assert app.session.room is not None
            code = app.session.room.room
            link = f"http://127.0.0.1:{server.port}/r/{code}"
            await sees(app, f"Invite link {link}  (c copies it)", pilot)
            await sees(app, f"Others join with the room code {code} or the invite link", pilot)
            await sees(app, "c copy link", pilot)
            await pilot.press("c")
            assert app.clipboard == link
            await until(pilot, lambda: link in shown(app, StatusLine), "the copy's status")
            assert "copied" in shown(app, StatusLine)


async def test_a_link_joins_the_room_as_a_racer(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        room = await ann.expect(Room)
        link = invite_link(url(server), room.room)
        app = invited(link, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.current_mode == "room", "the room")
            assert isinstance(app.screen, RoomScreen)
            assert app.session.room is not None
            assert app.session.room.room == room.room and app.session.room.you == "player"
            assert [p.name for p in app.session.room.players] == ["ann", "carol"]
            assert app.session.invite is None  # done with
            await sees(app, f"Invite link {link}", pilot)
            await sees(app, "space ready", pilot)
        await ann.ws.close()


async def test_a_link_uses_the_servers_saved_token(tmp_path: Path) -> None:
    """The link names the server: the name and token kept for it are used, no name asked."""
    async with server_at(tmp_path) as server:
        first = client_app(url(server), tmp_path, name="carol")
        async with first.run_test(size=(80, 24)) as pilot:
            await online(pilot, first)
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        room = await ann.expect(Room)
        app = invited(f"HTTP://127.0.0.1:{server.port}/r/{room.room.lower()}", tmp_path, None)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.current_mode == "room", "the room")
            assert app.session.me == "carol"
        assert TokenStore(tmp_path / "config").names(url(server)) == ["carol"]
        await ann.ws.close()


async def test_a_link_into_a_running_race_watches_it(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        room = await ann.expect(Room)
        await ann.send(Start())  # alone: a race of one is fine
        await ann.expect(Race)
        app = invited(invite_link(url(server), room.room), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.current_mode == "watch", "the race, watched")
            assert app.session.room is not None and app.session.room.you == "spectator"
            await sees(app, f"room {room.room} is racing: you watch it", pilot)
            await sees(app, f"Invite link {invite_link(url(server), room.room)}", pilot)
        await ann.ws.close()


async def test_a_link_into_a_full_room_watches_it(tmp_path: Path) -> None:
    """A room of two (the fewest a room takes, docs/protocol.md 3.1) with two in it."""
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE, max_players=2))
        room = await ann.expect(Room)
        bob = await open_client(server, "bob")
        await bob.send(Join(room.room))
        await bob.expect(Room)
        app = invited(invite_link(url(server), room.room), tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.session.room is not None, "the room")
            assert app.current_mode == "room"
            assert app.session.room is not None and app.session.room.you == "spectator"
            assert [p.name for p in app.session.room.players] == ["ann", "bob"]
            await sees(app, f"room {room.room} is full: you watch it", pilot)
            await sees(app, "(you watch)", pilot)
        await ann.ws.close()
        await bob.ws.close()


async def test_a_link_to_a_missing_room_says_no_such_room_is_open(tmp_path: Path) -> None:
    """Asked before the hello (GET /r/CODE?format=json): no room of that code is open,
    and none ever raced there, so it is not said to be closed ("everyone left it" was
    wrong for a code that never existed, issue 42); nothing is joined, Esc goes on to the
    lobby, which works as ever."""
    async with server_at(tmp_path) as server:
        app = invited(f"http://127.0.0.1:{server.port}/r/ZZZZZ", tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ClosedRoomScreen), "the answer")
            await sees(app, "No room ZZZZZ is open", pilot)
            await sees(app, "There is no race of it to show", pilot)
            assert "everyone left" not in screen_text(app)
            assert shown(app, StatusLine) == "invite link: room ZZZZZ is not open"
            assert app.session.invite is None
            await pilot.press("escape")
            await online(pilot, app)
            assert app.current_mode == "lobby" and app.session.room is None
            assert "New room" in screen_text(app)  # the lobby works as ever


async def test_a_link_to_ones_own_room_after_a_drop_goes_back_quietly(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        first = client_app(url(server), tmp_path, name="carol")
        async with first.run_test(size=(80, 24)) as pilot:
            await online(pilot, first)
            await pilot.click("#code")
            await pilot.press(*CODE, "enter")
            await until(pilot, lambda: first.current_mode == "room", "carol's room")
            assert first.session.room is not None
            mine = first.session.room.room
        app = invited(invite_link(url(server), mine), tmp_path, None)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.current_mode == "room", "back in the room")
            await until(pilot, lambda: app.session._invite_echo is None, "the join's answer")
            assert app.session.status.kind != "error", app.session.status
            assert app.session.room is not None and app.session.room.room == mine


async def test_a_link_while_back_in_another_room_says_so(tmp_path: Path) -> None:
    """A token that still holds a room (a race left within the resume window) puts the
    client back there; the link's room is then refused with the server's reason."""
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        await ann.send(Create(code=CODE))
        other = await ann.expect(Room)
        first = client_app(url(server), tmp_path, name="carol")
        async with first.run_test(size=(80, 24)) as pilot:
            await online(pilot, first)
            await pilot.click("#code")
            await pilot.press(*CODE, "enter")
            await until(pilot, lambda: first.current_mode == "room", "carol's room")
            assert first.session.room is not None
            mine = first.session.room.room
        # Closed without leaving: within the resume window carol is still in her room.
        app = invited(invite_link(url(server), other.room), tmp_path, None)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: "invite link" in shown(app, StatusLine), "the refusal")
            assert f"you are in room {mine}; leave it first" in shown(app, StatusLine)
            assert app.session.room is not None and app.session.room.room == mine
        await ann.ws.close()


def test_the_session_asks_again_after_a_reconnect() -> None:
    """A welcome that comes back after a drop, before the server answered, asks again:
    a join, or once a join was refused as full, a watch."""
    session = Session(invite="K7WQM")
    welcome = Welcome(1, "carol", "t" * 32, 60)
    assert session.receive(welcome, 0.0) == [Join("K7WQM")]
    assert session.status.text == "joining room K7WQM…"
    assert session.receive(welcome, 1.0) == [Join("K7WQM")]
    refused = Error("room_full", "room K7WQM is full (2 players)")
    assert session.receive(refused, 2.0) == [Watch("K7WQM")]
    assert session.status.text == "room K7WQM is full: watching it instead…"
    assert session.receive(welcome, 3.0) == [Watch("K7WQM")]
    # A watch refused (the room closed meanwhile) ends it: no third try.
    gone = Error("no_such_room", "there is no room 'K7WQM'")
    assert session.receive(gone, 4.0) == []
    assert session.invite is None
    assert session.status == replace(
        session.status, text="invite link to room K7WQM: there is no room 'K7WQM'", kind="error"
    )
    assert session.receive(welcome, 5.0) == []


def test_errors_for_other_requests_are_not_the_links() -> None:
    """Only the errors that answer a join or a watch end the link; say a board request
    was refused meanwhile: the join's answer is still awaited."""
    session = Session(invite="K7WQM")
    session.receive(Welcome(1, "carol", "t" * 32, 60), 0.0)
    assert session.receive(Error("too_many_queries", "wait for the answer"), 1.0) == []
    assert session.invite == "K7WQM"


def test_a_link_to_the_room_the_token_resumes_is_quiet() -> None:
    """The token puts the client back in the link's own room (its resync comes before the
    join's answer): the join's ``already_in_room`` that follows is no news."""
    session = Session(invite="K7WQM")
    assert session.receive(Welcome(1, "carol", "t" * 32, 60), 0.0) == [Join("K7WQM")]
    back = room_message("lobby", host="ann", players=(("ann", True, True), ("carol", False, True)))
    session.receive(back, 0.1)
    assert session.invite is None
    said = session.status
    refused = Error("already_in_room", "you are in room K7WQM; leave it first")
    assert session.receive(refused, 0.2) == []
    assert session.status == said and session.room is not None
    # Only that one answer: a later refusal is told as ever.
    session.receive(refused, 0.3)
    assert session.status.text == "you are in room K7WQM; leave it first"
