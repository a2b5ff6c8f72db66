"""What a newcomer tripped over in the terminal client (issue 42, item 6): the lobby's
room code field and its keys, the new room's game code field, typing on a button, one
meaning for ``l``, ``yukon play --quick`` from a finished room, and ``--local``'s name
box. Textual's headless harness, against a stand-in link where the server's answer is
not the point, and against a real server on port 0 where it is."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input

from client.config import LOCAL_KEY
from client.connection import LinkStatus
from client.quick import quick_from
from client.screens import (
    HelpScreen,
    LeaderboardScreen,
    LobbyScreen,
    NameScreen,
    UnreachableScreen,
)
from protocol.messages import (
    Create,
    Error,
    Hello,
    Join,
    Leave,
    Left,
    Quick,
    Watch,
    Welcome,
)
from server.rooms.handshake import NAME_SLASH

from ..server.wire import open_client, room_with, start_race, url
from .helpers import CODE, fake_app, feed, room, until
from .test_app import client_app, online, screen_text, sees, server_at


def welcome(room_code: str | None = None) -> Welcome:
    return Welcome(1, "alice", "t" * 32, 60, room=room_code)


def field(app: object, name: str) -> Input:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, LobbyScreen)
    return screen.query_one(name, Input)


async def test_j_and_w_after_a_whole_room_code_join_and_watch_it() -> None:
    """``KRRSCw`` was typed into the field: once it holds a whole room code (five
    characters), j and w act; before that they are letters (J and W are in codes)."""
    app, link = fake_app()
    async with app.run_test(size=(100, 36)) as pilot:
        feed(app, welcome())
        await pilot.click("#room-code")
        await pilot.press(*"KRRSC", "w")
        await pilot.pause()
        assert field(app, "#room-code").value == "KRRSC"
        assert link.sent == [Watch("KRRSC")]
        field(app, "#room-code").value = ""
        await pilot.press(*"wj7qm", "j")  # w and j inside the code are letters
        await pilot.pause()
        assert field(app, "#room-code").value == "wj7qm"
        assert link.sent[-1] == Join("wj7qm")


async def test_enter_on_a_racing_room_s_code_watches_it(tmp_path: Path) -> None:
    """Enter on a room's code joins it; the server refuses a racing room (race_running),
    and the client watches it instead, as an invite link does, rather than stopping at
    the refusal where watching was meant."""
    async with server_at(tmp_path) as server:
        ann = await open_client(server, "ann")
        racing = await room_with(ann, code=CODE)
        await start_race(ann)
        app = client_app(url(server), tmp_path)
        async with app.run_test(size=(100, 36)) as pilot:
            await online(pilot, app)
            await pilot.click("#room-code")
            await pilot.press(*racing.room.lower(), "enter")
            await until(pilot, lambda: app.current_mode == "watch", "watching")
            assert app.session.room is not None and app.session.room.you == "spectator"
            assert app.session.room.room == racing.room
        await ann.ws.close()


async def test_k_focuses_the_game_code_field_and_help_says_so() -> None:
    app, link = fake_app()
    async with app.run_test(size=(100, 36)) as pilot:
        feed(app, welcome())
        await pilot.pause()
        await pilot.press("k")
        await pilot.pause()
        assert app.focused is field(app, "#code")
        await pilot.press(*CODE, "enter")
        await pilot.pause()
        assert isinstance(link.sent[-1], Create) and link.sent[-1].code == CODE
        await pilot.press("escape")  # back to the keys
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        help_text = screen_text(app)
        assert "k its game code field" in help_text, help_text
        assert "b boards" in help_text and "Enter joins (watches if racing)" in help_text


async def test_typing_on_a_button_goes_into_its_field() -> None:
    """A button has the focus (the lobby starts on Create room): a character that is not
    one of the lobby's keys goes into the field the button belongs with, not nowhere."""
    app, link = fake_app()
    async with app.run_test(size=(100, 36)) as pilot:
        feed(app, welcome())
        await pilot.pause()
        assert isinstance(app.focused, Button) and app.focused.id == "create"
        await pilot.press(*"YU1-C-AAAAAAB")
        await pilot.pause()
        assert field(app, "#code").value == "YU1-C-AAAAAAB" and app.focused is field(app, "#code")
        await pilot.press("escape")
        app.screen.query_one("#join", Button).focus()
        await pilot.press(*"K7WQM")
        await pilot.pause()
        assert field(app, "#room-code").value == "K7WQM"
        await pilot.press("escape")
        app.screen.query_one("#archive", Button).focus()
        await pilot.press(*"2026-12-01")
        await pilot.pause()
        assert field(app, "#archive-date").value == "2026-12-01"
        await pilot.press("escape")
        await pilot.press("n")  # the lobby's keys stay keys on a button
        await pilot.pause()
        assert isinstance(link.sent[-1], Create)


async def test_the_next_n_after_a_room_by_code_deals_a_random_deal() -> None:
    """The game code of the room just left is no longer in its field: the next n makes a
    room with rules (a random deal), not that code again."""
    app, link = fake_app()
    async with app.run_test(size=(100, 36)) as pilot:
        feed(app, welcome())
        await pilot.press("k", *CODE, "enter")
        await pilot.pause()
        assert isinstance(link.sent[-1], Create) and link.sent[-1].code == CODE
        feed(app, room(code=CODE))
        await until(pilot, lambda: app.current_mode == "room", "the room")
        feed(app, Left("K7WQM"))
        await until(pilot, lambda: app.current_mode == "lobby", "the lobby")
        await pilot.pause()
        assert field(app, "#code").value == ""
        await pilot.press("n")
        await pilot.pause()
        create = link.sent[-1]
        assert isinstance(create, Create) and create.code is None and create.rules == "C"


async def test_l_leaves_and_b_opens_the_boards_in_the_lobby() -> None:
    """One meaning a key: l leaves (a room, a race, the results); the lobby's boards are b."""
    app, _ = fake_app()
    async with app.run_test(size=(100, 36)) as pilot:
        feed(app, welcome())
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LobbyScreen) and isinstance(app.focused, Button)
        assert "the leaderboards are b" in screen_text(app)
        assert "b boards" in screen_text(app) and "Leaderboards (b)" in screen_text(app)
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen), "the boards")


def test_quick_from_a_room_leaves_it_for_the_pool_unless_racing_in_it() -> None:
    finished = room("finished")
    assert quick_from(finished) == [Leave(), Quick()]
    assert quick_from(room("lobby")) == [Leave(), Quick()]
    assert quick_from(room("racing", you="spectator")) == [Leave(), Quick()]
    assert quick_from(room("racing")) == []
    assert quick_from(room("countdown")) == []


async def test_play_quick_welcomed_back_into_a_finished_room_enters_the_pool(
    tmp_path: Path,
) -> None:
    """``yukon play --quick`` after a race: the token resumes the player's place in the
    finished room; the client leaves it and enters the pool, rather than leave the
    player there alone as its host."""
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path, name="alice")
        async with app.run_test(size=(100, 36)) as pilot:
            await online(pilot, app)
            await pilot.press("k", *CODE, "enter")
            await until(pilot, lambda: app.current_mode == "room", "the room")
            await pilot.press("s")
            await until(pilot, lambda: app.current_mode == "race", "the race")
            await pilot.press("r", "y")  # resign: the race is over
            await until(pilot, lambda: app.session.result is not None, "the result")
        # Back within the resume window with --quick: in the finished room again at first.
        again = client_app(url(server), tmp_path, name=None)
        again.session.quick = True
        async with again.run_test(size=(100, 36)) as pilot:
            await until(pilot, lambda: again.session.pool is not None, "the pool")
            assert again.session.room is None and again.current_mode == "lobby"
            assert "Leave pool (r)" in screen_text(again)


async def test_local_s_name_box_says_nobody_else_sees_the_name(tmp_path: Path) -> None:
    async with server_at(tmp_path) as server:
        app = client_app(url(server), tmp_path, name=None, key=LOCAL_KEY)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name prompt")
            await pilot.pause()
            text = " ".join(screen_text(app).replace("│", " ").split())
            assert "Others see this name" not in text, text
            assert "nobody else plays here" in text, text
        remote = client_app(url(server), tmp_path / "other", name=None)
        async with remote.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(remote.screen, NameScreen), "the name prompt")
            await pilot.pause()
            assert "Others see this name" in " ".join(screen_text(remote).split())


async def test_a_name_with_a_slash_is_refused_at_registration(tmp_path: Path) -> None:
    """``/players/NAME`` (linked from every board) cannot serve a name with a slash: the
    server refuses it (``name_invalid``, docs/protocol.md 4.1) and the name box asks
    again, saying why."""
    async with server_at(tmp_path) as server:
        raw = await open_client(server)
        await raw.send(Hello(1, "ann/bob"))
        refused = await raw.expect(Error)
        assert refused.code == "name_invalid" and refused.text == NAME_SLASH
        await raw.ws.close()
        app = client_app(url(server), tmp_path, name=None)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, NameScreen), "the name prompt")
            await pilot.press(*"ann/bob", "enter")
            await sees(app, "a name may not contain /", pilot)
            assert isinstance(app.screen, NameScreen)
            await pilot.press(*(["backspace"] * 7), *"ann-bob", "enter")
            await online(pilot, app)
            assert app.session.me == "ann-bob"


async def test_the_nothing_answers_box_goes_when_the_server_answers_at_once() -> None:
    """A failed first attempt, then at once an answer (a loaded machine's hello that timed
    out, then the retry's welcome): the box, pushed a moment ago, does not stay over the
    lobby, whose keys work."""
    app, link = fake_app()
    async with app.run_test(size=(100, 36)) as pilot:
        await pilot.pause()
        app.link_status(LinkStatus("retrying", "no answer from x:1; retrying in 0.5 s"))
        app.link_status(LinkStatus("online", "connected to x:1 as alice"))
        feed(app, welcome())
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        await pilot.pause()
        assert not any(isinstance(s, UnreachableScreen) for s in app.screen_stack)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(link.sent[-1], Create)
