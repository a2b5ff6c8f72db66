"""Issue 28 in the client's model (no Textual, no sockets): the invite link the welcome
already names, the finish, one headline per result, the rematch for everyone and its line,
the keys after a win, "hinted" after a resume, a name's link and a closed room's answer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from client.closed import parse_room_state
from client.config import HintedMemory
from client.invite import name_link, parse_target
from client.state import Session, headline, names_list
from client.widgets import cut, pad
from protocol.messages import (
    Countdown,
    Finish,
    HintAnswer,
    Join,
    MoveMsg,
    RankEntry,
    Refused,
    Rematch,
    Result,
    Room,
    Welcome,
)

from .helpers import CODE, Referee, room, winning_line


def welcome(room_code: str | None = None) -> Welcome:
    return Welcome(1, "carol", "t" * 32, 60, room_code)


# -- item 4: the invite link's room is named by the welcome --


def test_no_join_when_the_welcome_names_the_links_room() -> None:
    session = Session(invite="K7WQM")
    assert session.receive(welcome("K7WQM"), 0.0) == []
    assert session.invite is None
    # Another room named (a finished one the server leaves on the way): the join goes.
    other = Session(invite="K7WQM")
    assert other.receive(welcome("XSLP6"), 0.0) == [Join("K7WQM")]


# -- item 6: finish --


def face_up_session() -> tuple[Session, Referee, list[str]]:
    """alice's race of the winning game, played by the referee until no card is face down;
    the moves of the line still to play."""
    code, line = winning_line()
    session = Session()
    referee = Referee(code)
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(room("lobby", code=code), 0.0)
    session.receive(Countdown(3000), 0.0)
    session.receive(referee.race(), 3.0)
    session.receive(room("racing", code=code), 3.0)
    race = session.race
    assert race is not None
    for i, move in enumerate(line):
        if race.can_finish():
            return session, referee, line[i:]
        assert session.finish() == []  # offered only with every card face up
        assert "face down" in session.status.text
        session.receive(referee.answer(MoveMsg(race.take_seq(move), move)), 4.0)
    raise AssertionError("the line never turned every card face up")


def test_finish_is_offered_once_every_card_is_face_up_and_its_race_replaces_the_board() -> None:
    session, referee, rest = face_up_session()
    race = session.race
    assert race is not None and race.foundations < 52
    assert "a finishes for you" in session.status.text, session.status
    sent = session.finish()
    assert sent == [Finish(race.next_seq - 1)]
    assert session.finish() == []  # one at a time
    for move in rest:  # the server plays the line for the runner
        referee.game.play(move)
    answer = referee.race(seq=sent[0].seq)
    assert session.receive(answer, 5.0) == []
    assert session.race is race  # the same race, now won
    assert race.state == "won" and race.foundations == 52 and race.pending == {}
    assert session.status.text == "all 52 cards home: you won!"
    assert session.undo() == [] and session.status.kind == "info"
    assert session.status.text == "you won: waiting for the others to finish"
    assert session.ask_hint() == [] and session.status.kind == "info"


def test_a_refused_finish_says_why_and_a_lost_one_is_sent_again() -> None:
    session, referee, _ = face_up_session()
    race = session.race
    assert race is not None
    (sent,) = session.finish()
    assert isinstance(sent, Finish)
    session.receive(Refused(sent.seq, "cannot_finish", "no win found from here: play on"), 5.0)
    assert session.status.text == "finish: no win found from here: play on"
    assert race.pending == {} and race.can_finish()
    (again,) = session.finish()
    assert isinstance(again, Finish) and again.seq == sent.seq + 1
    session.connection_lost(6.0)
    assert session.receive(referee.race(seq=sent.seq), 7.0) == [Finish(again.seq)]


# -- item 8: one headline --


@pytest.mark.parametrize(
    ("mine", "others", "line"),
    [
        (RankEntry(1, "me", "won", 215_900, 90, 500, 52), 2, "You won in 3:35.9, #1 of 3"),
        (
            RankEntry(2, "me", "won", 215_900, 90, 500, 52, hinted=True),
            2,
            "You won with hints in 3:35.9, #2 of 3",
        ),
        (RankEntry(3, "me", "resigned", 6_000, 0, 0, 0), 2, "You finished #3 of 3 (resigned)"),
        (RankEntry(2, "me", "timeout", 60_000, 9, 0, 3), 1, "You finished #2 of 2 (out of time)"),
        (RankEntry(1, "me", "won", 61_000, 90, 500, 52), 0, "You won in 1:01.0!"),
        (RankEntry(1, "me", "resigned", 1_000, 1, 0, 0), 0, "Your race is over (resigned)"),
    ],
)
def test_the_headline_tells_the_ranks_story(mine: RankEntry, others: int, line: str) -> None:
    ranks = [mine] + [RankEntry(9, f"p{i}", "resigned", 1, 0, 0, 0) for i in range(others)]
    text, kind = headline(Result(CODE, tuple(ranks)), "me")
    assert text == line
    assert kind == ("good" if mine.outcome == "won" else "info")
    assert headline(Result(CODE, tuple(ranks)), "someone else") == ("The race is over", "info")


# -- item 7: the rematch, for everyone; the lobby line as a list --


def test_any_player_may_ask_for_the_rematch_and_its_line_is_a_list() -> None:
    players = (("alice", True, True), ("bob", True, True), ("carol", True, True))
    session = Session()
    session.receive(Welcome(1, "bob", "t" * 32, 60), 0.0)
    session.receive(room("finished", players=players), 0.0)
    assert session.may_rematch and not session.is_host
    watcher = Session()
    watcher.receive(Welcome(1, "dan", "t" * 32, 60), 0.0)
    watcher.receive(room("finished", players=players, you="spectator"), 0.0)
    assert not watcher.may_rematch
    after = (("alice", True, True), ("bob", False, True), ("carol", False, True))
    session.receive(room("lobby", players=after), 1.0)
    assert session.status.text == "rematch: a new deal; space says you are ready"
    host = Session()
    host.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    host.receive(room("finished", players=players), 0.0)
    host.receive(room("lobby", players=after), 1.0)
    assert host.status.text == "rematch: a new deal; s starts it once bob and carol say ready"
    pair = Session()
    pair.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    pair.receive(room("finished", players=players[:2]), 0.0)
    pair.receive(room("lobby", players=after[:2]), 1.0)
    assert pair.status.text == "rematch: a new deal; s starts it once bob says ready"
    ready = (("alice", True, True), ("bob", True, True), ("carol", True, True))
    host.receive(room("lobby", players=ready), 2.0)
    assert host.status.text == "bob and carol are ready"
    assert Rematch() == Rematch()  # (the key sends it: tests/client/test_friend_app.py)


def test_names_as_a_list() -> None:
    assert [names_list(n) for n in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == [
        "",
        "a",
        "a and b",
        "a, b and c",
    ]


# -- item 18: "hinted" after the client is started again --


def test_a_resumed_hinted_race_is_still_hinted(tmp_path: Path) -> None:
    referee = Referee(CODE)
    hints_room: Room = replace(room("racing"), hints=True)
    first = Session()
    first.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    first.receive(replace(hints_room, state="lobby"), 0.0)
    first.receive(Countdown(3000), 0.0)
    first.receive(referee.race(), 3.0)
    first.receive(hints_room, 3.0)
    first.receive(HintAnswer(0, "win", "6H>7"), 4.0)
    assert first.hinted_rooms == ["K7WQM"]
    memory = HintedMemory(tmp_path)
    memory.save("ws://race.example:8765", first.hinted_rooms)
    # yukon play again: the resync is room, race, progress, and nothing says "hinted".
    again = Session(hinted_rooms=memory.load("ws://race.example:8765/"))
    again.receive(Welcome(1, "alice", "t" * 32, 60, "K7WQM"), 10.0)
    again.receive(hints_room, 10.0)
    again.receive(referee.race(), 10.0)
    assert again.race is not None and again.race.hinted
    # A rematch in that room is a new race: no mark.
    again.receive(replace(hints_room, state="finished"), 11.0)
    again.receive(replace(hints_room, state="lobby"), 12.0)
    assert again.hinted_rooms == []


# -- item 13: a name's link --


def test_a_names_link_is_read_back_as_its_server_and_token() -> None:
    link = name_link("ws://race.example:8765", "abc-DEF_123")
    assert link == "http://race.example:8765/#token=abc-DEF_123"
    assert parse_target(link) == parse_target(link).__class__(
        "ws://race.example:8765/", None, "abc-DEF_123"
    )
    secure = parse_target(name_link("wss://example.org/yukon/", "t0k"))
    assert (secure.url, secure.room, secure.token) == ("wss://example.org/yukon/", None, "t0k")
    room_too = parse_target("http://h:1/r/k7wqm#token=t0k")
    assert (room_too.room, room_too.token) == ("K7WQM", "t0k")
    # Another fragment: not a name's link but the server's page, so that server (issue 42).
    assert parse_target("http://race.example:8765/#other=1").url == "ws://race.example:8765"


# -- item 5: a closed room's answer --


def test_a_closed_rooms_answer_is_read_and_anything_else_is_none() -> None:
    row = {
        "rank": 1,
        "name": "ann",
        "outcome": "won",
        "time_ms": 81_250,
        "moves": 140,
        "score": 610,
        "foundations": 52,
        "hinted": False,
    }
    last = {"race": "r-1", "code": CODE, "finished_ms": 1_795_975_201_964, "results": [row]}
    state = parse_room_state({"room": "XSLP6", "open": False, "last_race": last})
    assert state is not None and not state.open and state.last_race is not None
    assert state.last_race.results == (RankEntry(1, "ann", "won", 81_250, 140, 610, 52),)
    assert parse_room_state({"room": "XSLP6", "open": True, "last_race": None}) is not None
    assert parse_room_state({"error": "no_such_room"}) is None
    assert parse_room_state([1, 2]) is None


# -- item 18: cell widths --


def test_names_are_cut_and_padded_by_cells_not_characters() -> None:
    assert cut("Carol the Terminal Waits", 12) == "Carol the T…"
    assert pad("🦊🦊🦊", 8) == "🦊🦊🦊  "  # three foxes are six cells
    assert pad("🦊🦊🦊🦊🦊", 8) == "🦊🦊🦊… "  # cut by cells, then filled
    assert pad("漢字の名前です", 6) == "漢字… "
