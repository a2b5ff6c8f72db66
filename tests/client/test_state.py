"""The client's model without Textual or sockets: following the server, picking, dropping,
tapping, placement help, clocks and phases."""

from __future__ import annotations

import dataclasses

import pytest

from client.state import (
    DOUBLE_TAP_S,
    FOUNDATION,
    Pick,
    RaceBoard,
    Session,
    format_ms,
)
from protocol import Game
from protocol.commitment import commitment
from protocol.messages import (
    Accepted,
    BoardPage,
    Countdown,
    DailyDeal,
    Error,
    Left,
    MoveMsg,
    Race,
    RankEntry,
    Resign,
    Result,
    Undo,
    Welcome,
)

from .helpers import CODE, Referee, progress, racing, room, winning_line

# The first deal of YU1-C-AAAAAAB, as the player sees it:
# 1: 7H   2: ?? 6H QS AD 9H 8S   3: ???? 2H 4C KC 3H TS   4: ?????? 2S 6S 6D 3C 3D
# 5: ???????? KD 7S QC AS 2C   6: ?????????? JC AC QD 4S 9D   7: ???????????? 8C 5S QH 2D 7C


def said(session: Session) -> tuple[str, str]:
    return session.status.text, session.status.kind


def filled(view: str, *, column: int) -> str:
    """A view with as many ``??`` under ``column`` as it takes to make 52 cards."""
    rules, found, cols = view.split(" ")
    columns = cols.split("/")
    on_foundations = sum(0 if c == "-" else "A23456789TJQK".index(c) + 1 for c in found)
    cards = on_foundations + sum(len(c) // 2 for c in columns)
    columns[column - 1] = "??" * (52 - cards) + columns[column - 1]
    return f"{rules} {found} {'/'.join(columns)}"


def racing_session(*, undo: bool = True, code: str = CODE) -> tuple[Session, Referee]:
    """A session in a race against a referee that knows the whole deal."""
    session = Session()
    referee = Referee(code)
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(room("lobby", undo=undo), 0.0)
    session.receive(Countdown(3000), 0.0)
    session.receive(referee.race(), 3.0)
    session.receive(room("racing", undo=undo), 3.0)
    return session, referee


def play(session: Session, referee: Referee, messages: list[object], now: float = 5.0) -> None:
    """Send what the session produced to the referee and give the answers back."""
    for message in messages:
        if isinstance(message, (MoveMsg, Undo)):
            session.receive(referee.answer(message), now)


# -- small things -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ms", "text"),
    [(None, "-"), (0, "0:00.0"), (83_456, "1:23.4"), (599_999, "9:59.9"), (3_723_400, "1:02:03.4")],
)
def test_format_ms(ms: int | None, text: str) -> None:
    assert format_ms(ms) == text


def test_a_race_builds_the_board_from_the_view() -> None:
    session, _ = racing_session()
    race = racing(session)
    assert race.column(1) == ["7H"]
    assert race.column(2) == ["??", "6H", "QS", "AD", "9H", "8S"]
    assert race.face_up(7) == ["8C", "5S", "QH", "2D", "7C"]
    assert race.foundation_tops() == [None, None, None, None]
    assert (race.last_seq, race.next_seq, race.state) == (0, 1, "playing")
    assert session.phase() == "race"


# -- picking ---------------------------------------------------------------------------------------


def test_a_column_key_picks_the_exposed_card_and_up_goes_deeper() -> None:
    session, _ = racing_session()
    race = racing(session)
    assert session.press_column(2) == []
    assert race.pick == Pick(2, "8S")
    assert race.lifted() == ["8S"]
    session.step(1)
    session.step(1)
    assert race.pick == Pick(2, "AD")
    assert race.lifted() == ["AD", "9H", "8S"]
    for _ in range(5):
        session.step(1)
    assert race.pick == Pick(2, "6H"), "stops at the deepest face-up card"
    session.step(-10)
    assert race.pick == Pick(2, "8S"), "and at the exposed card"
    session.cancel()
    assert race.pick is None


def test_the_same_column_key_again_goes_deeper_and_wraps() -> None:
    session, _ = racing_session()
    race = racing(session)
    session.press_column(7)
    picks = []
    for _ in range(6):
        session.press_column(7)
        assert race.pick is not None
        picks.append(race.pick.card)
    assert picks == ["2D", "QH", "5S", "8C", "7C", "2D"]


def test_placement_help_lists_the_engines_destinations() -> None:
    session, _ = racing_session()
    race = racing(session)
    session.press_column(2)
    session.step(4)  # 6H, with the whole face-up run on it
    assert race.pick == Pick(2, "6H")
    assert race.destinations() == {"7"}
    session.step(-3)  # 9H
    assert race.destinations() == {"3"}
    session.step(-1)  # 8S: onto the 9D of column 6
    assert race.destinations() == {"6"}
    session.cancel()
    session.press_column(4)  # 3D goes nowhere
    assert race.destinations() == frozenset()
    legal = set(Game.from_code(CODE).legal_moves())
    for n in range(1, 8):
        for card in race.face_up(n):
            race.pick_card(n, card)
            assert {f"{card}>{d}" for d in race.destinations()} == {
                m for m in legal if m.startswith(card + ">")
            }


def test_an_empty_column_cannot_be_picked() -> None:
    session, referee = racing_session()
    for move in ("6H>7", "8C>6", "7H>6"):
        play(session, referee, [MoveMsg(racing(session).take_seq(move), move)])
    assert racing(session).column(1) == []
    assert session.press_column(1) == []
    assert session.status.text == "column 1 is empty"
    assert racing(session).pick is None


# -- moves and the server's answers ---------------------------------------------------------------


def test_dropping_sends_a_numbered_move_and_only_the_answer_changes_the_board() -> None:
    session, referee = racing_session()
    race = racing(session)
    session.press_column(2)
    session.step(4)
    sent = session.press_column(7)
    assert sent == [MoveMsg(1, "6H>7")]
    assert race.pick is None and race.pending == {1: "6H>7"}
    assert race.column(2) == ["??", "6H", "QS", "AD", "9H", "8S"], "not applied before accepted"
    play(session, referee, sent)
    assert race.column(2) == ["9S"], "the turned card comes from the server"
    assert race.column(7)[-5:] == ["6H", "QS", "AD", "9H", "8S"]
    assert (race.pending, race.last_seq, race.next_seq) == ({}, 1, 2)
    assert (race.score, race.moves, race.foundations) == (5, 1, 0)
    assert session.status.text == "6♥ → 7, turned up 9♠"
    assert session.press_column(1) == [] and session.press_column(7) == [MoveMsg(2, "7H>7")]


def test_my_line_in_the_standings_follows_my_own_accepted_moves() -> None:
    """The server sends no progress that shows only my own moves: my line comes from my
    race when it is ahead of the last progress, and from the progress otherwise."""
    session, referee = racing_session()
    session.receive(
        progress(
            3000,
            ("alice", "playing", 0, 0, 0, None, True),
            ("bob", "playing", 0, 0, 0, None, True),
        ),
        3.0,
    )
    session.press_column(2)
    session.step(4)
    play(session, referee, session.press_column(7))
    mine, bob = session.standings()
    assert (mine.name, mine.moves, mine.score, mine.state) == ("alice", 1, 5, "playing")
    assert bob.moves == 0
    session.receive(
        progress(
            6000,
            ("alice", "playing", 0, 5, 1, None, False),
            ("bob", "playing", 1, 10, 2, None, True),
        ),
        6.0,
    )
    bob, mine = session.standings()  # bob leads: a card home
    assert (mine.moves, mine.connected, bob.moves) == (1, False, 2)


def test_a_refused_move_shows_the_servers_reason_and_changes_nothing() -> None:
    session, referee = racing_session()
    race = racing(session)
    before = race.game.view()
    session.press_column(1)
    sent = session.press_column(4)
    assert sent == [MoveMsg(1, "7H>4")]
    play(session, referee, sent)
    assert race.game.view() == before
    assert race.pending == {}
    assert said(session) == ("7♥ → 4: a 7 of hearts needs a black 8", "error")
    # The seq is used up: the next move gets the next number.
    session.press_column(1)
    assert session.press_column(2) == [MoveMsg(2, "7H>2")]


def test_f_sends_the_picked_card_home() -> None:
    session, referee = racing_session()
    for move in ("6H>7", "8C>6", "7H>6", "KD>1"):
        play(session, referee, [MoveMsg(racing(session).take_seq(move), move)])
    race = racing(session)
    assert race.face_up(5) == ["AH"]
    session.press_column(5)
    assert race.destinations() == {"1", "F"}
    sent = session.press_foundation()
    assert sent == [MoveMsg(5, "AH>F")]
    play(session, referee, sent)
    assert race.foundation_tops() == [None, "AH", None, None]
    assert race.face_up(5) == ["5D"]


def test_f_without_a_pick_says_pick_a_card_first_as_enter_does() -> None:
    session, _ = racing_session()
    assert session.press_foundation() == []
    assert said(session) == ("pick a card first: 1-7, or click it", "info")
    assert session.tap(5.0) == []
    assert said(session) == ("pick a card first: 1-7, or click it", "info")


def test_the_standings_put_the_leader_first_cards_home_then_score() -> None:
    session, _ = racing_session()
    session.receive(
        progress(
            9000,
            ("alice", "playing", 2, 40, 9, None, True),
            ("bob", "playing", 5, 60, 20, None, True),
            ("carol", "playing", 2, 55, 12, None, True),
            ("dave", "won", 52, 600, 140, 8000, True),
            ("erin", "won", 52, 610, 150, 7000, True),
            ("fred", "resigned", 0, 5, 1, 3000, True),
        ),
        9.0,
    )
    order = [p.name for p in session.standings()]
    assert order == ["erin", "dave", "bob", "carol", "alice", "fred"]


def test_take_back_picks_a_foundation_top_and_drops_it_on_a_column() -> None:
    # The ace of spades is home; under option T it may come back onto the red 2.
    view = filled("CT A--- 2H/KS/KH/KD/KC/QS/QH", column=7)
    session = Session()
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(Race(view, 0, 1800, 0, 0, 0, "playing"), 0.0)
    race = racing(session)
    assert session.press_foundation() == []
    assert race.pick == Pick(FOUNDATION, "AS")
    assert race.destinations() == {"1"}
    assert session.press_column(1) == [MoveMsg(1, "AS>1")]


def test_undo_and_its_answer_replace_the_board() -> None:
    session, referee = racing_session()
    race = racing(session)
    play(session, referee, [MoveMsg(race.take_seq("6H>7"), "6H>7")])
    sent = session.undo()
    assert sent == [Undo(2)]
    play(session, referee, sent)
    assert race.column(2) == ["??", "6H", "QS", "AD", "9H", "8S"]
    assert (race.score, race.moves) == (0, 1), "an undo does not lower the move count"
    assert session.status.text == "took back 6♥ → 7"


def test_undo_in_a_room_without_it_is_not_sent() -> None:
    session, _ = racing_session(undo=False)
    assert session.undo() == []
    assert said(session) == ("this room has no undo", "error")


def test_an_error_for_a_seq_forgets_that_move() -> None:
    session, _ = racing_session()
    race = racing(session)
    seq = race.take_seq("7H>2")
    session.receive(Error("finished", "your race is over (resigned)", seq), 1.0)
    assert race.pending == {}
    assert said(session) == ("your race is over (resigned)", "error")


def test_a_board_that_cannot_follow_asks_for_a_resync() -> None:
    session, _ = racing_session()
    race = racing(session)
    # A move the copy cannot play (8S is not on a foundation's way): out of step.
    session.receive(Accepted(1, "8S>F", None, 10, 1, 1, "playing", 500), 1.0)
    assert session.out_of_step and race.resyncing


# -- tap and double tap ----------------------------------------------------------------------------


def test_a_tap_sends_an_exposed_card_home() -> None:
    session, referee = racing_session()
    for move in ("6H>7", "8C>6", "7H>6", "KD>1"):
        play(session, referee, [MoveMsg(racing(session).take_seq(move), move)])
    session.press_column(5)
    assert session.tap(10.0) == [MoveMsg(5, "AH>F")]


def test_a_double_tap_finds_the_longest_column_and_a_slow_one_does_not() -> None:
    session, _ = racing_session()
    race = racing(session)
    session.press_column(2)  # 8S: no foundation; column 6 (9D) takes it
    assert session.tap(10.0) == []
    assert "Enter twice" in session.status.text
    assert session.tap(10.0 + DOUBLE_TAP_S + 0.1) == [], "too slow: a new first tap"
    assert session.tap(10.0 + DOUBLE_TAP_S + 0.2) == [MoveMsg(1, "8S>6")]
    assert race.pick is None


def test_a_double_tap_on_a_deep_card_moves_the_cards_on_it() -> None:
    session, _ = racing_session()
    session.press_column(2)
    session.step(4)  # 6H carries QS AD 9H 8S
    assert session.tap(1.0) == []
    assert session.tap(1.2) == [MoveMsg(1, "6H>7")]


def test_tableau_destination_prefers_the_longest_column_then_an_empty_one() -> None:
    session, referee = racing_session()
    for move in ("6H>7", "8C>6", "7H>6"):
        play(session, referee, [MoveMsg(racing(session).take_seq(move), move)])
    race = racing(session)
    assert race.column(1) == []
    assert race.tableau_destination("KD") == 1, "a king goes to the empty column"
    # Relaxed rules: a 6 goes on any 7; with two 7s exposed, the longer column wins.
    view = filled("R ---- 6S/????7H/??7C/KS//KH/KD", column=6)
    board = RaceBoard(Race(view, 0, 1800, 0, 0, 0, "playing"), 0.0)
    assert board.tableau_destination("6S") == 2
    assert board.tableau_destination("KS") == 5
    assert board.tableau_destination("7H") is None


def test_a_tap_with_nothing_picked_says_so() -> None:
    session, _ = racing_session()
    assert session.tap(1.0) == []
    assert session.status.text.startswith("pick a card first")


# -- mouse ---------------------------------------------------------------------------------------


def test_clicks_pick_a_card_drop_on_a_column_and_tap_the_picked_card() -> None:
    session, _ = racing_session()
    race = racing(session)
    assert session.click_card(2, "6H", 1.0) == []
    assert race.pick == Pick(2, "6H")
    assert session.click_column(7) == [MoveMsg(1, "6H>7")]
    session.click_card(2, "8S", 2.0)
    assert session.click_card(6, "9D", 2.1) == [MoveMsg(2, "8S>6")], "a click elsewhere drops"
    session.click_card(1, "7H", 3.0)
    assert session.click_card(1, "7H", 3.1) == [], "no foundation: a first tap"
    assert session.click_card(1, "7H", 3.2) == [MoveMsg(3, "7H>2")], "and the double tap"
    session.click_column(4)
    assert race.pick == Pick(4, "3D")
    session.click_column(4)
    assert race.pick is None, "clicking the picked column puts the card back"
    session.click_column(2)
    assert session.click_foundation(0) == [MoveMsg(4, "8S>F")]


# -- the end of a race -----------------------------------------------------------------------------


def test_resign_and_the_progress_that_answers_it() -> None:
    session, _ = racing_session()
    assert session.resign() == [Resign(1)]
    session.receive(
        progress(
            4000,
            ("alice", "resigned", 0, 0, 0, 4000, True),
            ("bob", "playing", 3, 30, 9, None, True),
        ),
        10.0,
    )
    race = racing(session)
    assert session.race_done() and race.final_ms == 4000
    assert race.elapsed_ms(99.0) == 4000, "my clock stops"
    assert session.resign() == [] and session.press_column(1) == []
    assert session.status.text == "your race is over: waiting for the others to finish"


def test_the_clock_runs_from_the_servers_and_stops_at_the_limit() -> None:
    session, _ = racing_session()
    race = racing(session)
    assert race.elapsed_ms(3.0) == 0
    assert race.elapsed_ms(4.25) == 1250
    session.receive(progress(2000, ("alice", "playing", 0, 0, 0, None, True)), 4.5)
    assert race.elapsed_ms(4.5) == 2000
    assert race.elapsed_ms(10_000.0) == 1800 * 1000


def test_stuck_is_said_clearly_and_is_final_only_without_undo() -> None:
    view = filled("C ---- KH/KD/QH/QD/JH/JD/TH", column=1)  # red on red: stuck at once
    for undo, final in ((True, False), (False, True)):
        session = Session()
        session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
        session.receive(room("racing", undo=undo), 0.0)
        session.receive(Race(view, 0, 1800, 0, 0, 0, "stuck"), 0.0)
        session.receive(progress(0, ("alice", "stuck", 0, 0, 0, 0 if final else None, True)), 0.0)
        assert session.race_done() is final
        assert session.status.kind == "error" and session.status.text.startswith("stuck")


def test_winning_says_so() -> None:
    session, referee = racing_session()
    _, line = winning_line()
    for move in line:
        play(session, referee, [MoveMsg(racing(session).take_seq(move), move)])
    race = racing(session)
    assert race.state == "won" and race.foundations == 52
    assert race.foundation_tops() == ["KS", "KH", "KD", "KC"]
    assert said(session) == ("all 52 cards home: you won!", "good")


# -- phases ----------------------------------------------------------------------------------------


def test_the_phase_follows_the_room_through_a_race_a_rematch_and_leaving() -> None:
    session = Session()
    assert session.phase() == "lobby"
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(room("lobby"), 0.0)
    assert session.phase() == "room" and session.is_host
    session.receive(Countdown(3000), 1.0)
    session.receive(room("countdown"), 1.0)
    assert session.phase() == "room"
    assert session.countdown_left(2.5) == pytest.approx(1.5)
    session.receive(Referee().race(), 4.0)
    session.receive(room("racing"), 4.0)
    assert session.phase() == "race" and session.countdown_left(4.0) is None
    ranks = Result(CODE, ())
    session.receive(ranks, 9.0)
    assert session.phase() == "race", "until the room says finished"
    session.receive(room("finished", code=CODE), 9.0)
    assert session.phase() == "results"
    session.receive(room("lobby"), 10.0)  # a rematch
    assert session.phase() == "room" and session.race is None and session.result is None
    session.receive(Left("K7WQM"), 11.0)
    assert session.phase() == "lobby" and session.room is None


def test_the_daily_deal_race_comes_before_its_room() -> None:
    session = Session()
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(DailyDeal("2026-11-29", 1, False, "C"), 0.0)
    session.receive(Referee().race(), 0.0)
    session.receive(room("racing", max_players=1, name="DLY22"), 0.0)
    assert session.phase() == "race" and session.race is not None
    assert session.status.text.startswith("daily deal 2026-11-29, attempt 1")


def test_a_spectator_watches_and_a_closed_room_sends_them_back() -> None:
    session = Session()
    session.receive(Welcome(1, "carol", "t" * 32, 60), 0.0)
    session.receive(room("racing", you="spectator", players=(("alice", True, True),)), 0.0)
    session.receive(progress(500, ("alice", "playing", 0, 0, 0, None, True)), 0.0)
    assert session.phase() == "watch"
    assert [p.name for p in session.standings()] == ["alice"]
    session.receive(Error("room_closed", "room K7WQM closed: every player left"), 1.0)
    assert session.phase() == "lobby"


def test_room_changes_are_told_in_one_line() -> None:
    session = Session()
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(room("lobby"), 0.0)
    session.receive(room("lobby", players=(("alice", True, True), ("bob", False, True))), 0.0)
    assert session.status.text == "bob joined"
    session.receive(room("lobby", players=(("alice", True, True), ("bob", True, True))), 0.0)
    assert session.status.text == "bob is ready"
    session.receive(
        room("lobby", host="bob", players=(("alice", True, False), ("bob", True, True))), 0.0
    )
    assert session.status.text == "alice lost the connection; bob is the host now"
    session.receive(room("lobby", host="bob", players=(("bob", True, True),)), 0.0)
    assert session.status.text == "alice left"


def test_boards_are_kept_for_the_leaderboard_screen() -> None:
    session = Session()
    page = BoardPage("daily", "2026-11-29", None, 0, 0, (), None)
    session.receive(page, 0.0)
    assert session.board == page


# -- a dropped connection --------------------------------------------------------------------------


def test_a_resync_takes_the_servers_board_and_sends_unanswered_moves_again() -> None:
    session, referee = racing_session()
    race = racing(session)
    play(session, referee, [MoveMsg(race.take_seq("6H>7"), "6H>7")])
    lost = MoveMsg(race.take_seq("8C>6"), "8C>6")  # sent, but the connection drops
    assert lost.seq == 2
    session.connection_lost()
    again = session.receive(referee.race(seq=1), 20.0)
    assert again == [MoveMsg(2, "8C>6")]
    race = racing(session)
    assert race.column(2) == ["9S"] and race.next_seq == 3
    assert said(session) == ("connection back: the race goes on", "good")
    play(session, referee, again)
    assert race.column(6)[-10] == "8C" and race.pending == {}


def test_a_resync_without_anything_unanswered_sends_nothing() -> None:
    session, referee = racing_session()
    session.press_column(2)
    session.connection_lost()
    assert session.receive(referee.race(), 20.0) == []
    assert racing(session).pick == Pick(2, "8S"), "the card in hand stays picked"


def test_after_a_restart_accepted_moves_the_journal_lost_are_sent_again() -> None:
    session, referee = racing_session()
    race = racing(session)
    for move in ("6H>7", "8C>6", "7H>6"):
        play(session, referee, [MoveMsg(race.take_seq(move), move)])
    # The restarted server restored the race after the first move only.
    restored = Referee()
    restored.game.play("6H>7")
    session.connection_lost()
    again = session.receive(restored.race(seq=1), 30.0)
    assert again == [MoveMsg(2, "8C>6"), MoveMsg(3, "7H>6")]
    race = racing(session)
    assert race.column(1) == ["7H"], "the server's position, until the answers come"
    play(session, restored, again)
    assert race.column(1) == [] and race.moves == 3 and race.pending == {}
    assert session.press_column(5) == [] and race.pick == Pick(5, "2C")
    assert race.take_seq("x") == 4


def test_the_answer_to_a_resend_of_a_played_move_changes_nothing() -> None:
    session, referee = racing_session()
    race = racing(session)
    sent = MoveMsg(race.take_seq("6H>7"), "6H>7")
    answer = referee.answer(sent)
    session.receive(answer, 1.0)
    view = race.game.view()
    session.receive(answer, 2.0)  # the remembered reply to a resend
    assert race.game.view() == view and race.played == [(1, "6H>7")]


def test_a_welcome_without_the_room_after_a_drop_means_the_room_is_gone() -> None:
    """The welcome names the room the server kept (its ``room`` follows); nil says at once
    that the place is gone: no timer, so a slow link cannot make a kept room look lost."""
    session, _ = racing_session()
    assert not session.resync_missed()
    session.connection_lost()
    session.receive(Welcome(1, "alice", "t" * 32, 60, "K7WQM"), 10.0)
    assert session.awaiting_resync and session.phase() == "race"
    session.receive(room("racing"), 10.0)
    assert not session.resync_missed(), "the room came: nothing is missing"
    session.connection_lost()
    session.receive(Welcome(1, "alice", "t" * 32, 60), 20.0)
    assert not session.awaiting_resync
    assert session.phase() == "lobby"
    assert said(session) == (
        "room K7WQM is gone (the server restarted, or you were away too long)",
        "error",
    )


def test_the_clock_stands_still_while_the_connection_is_away() -> None:
    """No run-on then jump back (1:20 -> 1:17.6): frozen at the drop, then the server's."""
    session, referee = racing_session()
    race = racing(session)
    assert race.elapsed_ms(13.0) == 10_000
    session.connection_lost(13.0)
    assert race.elapsed_ms(20.0) == 10_000 and race.elapsed_ms(90.0) == 10_000
    referee.elapsed = 10_400  # the server's clock did not charge the time away
    session.receive(Welcome(1, "alice", "t" * 32, 60, "K7WQM"), 90.0)
    session.receive(referee.race(), 90.0)
    assert racing(session).elapsed_ms(90.0) == 10_400
    assert racing(session).elapsed_ms(91.0) == 11_400


def test_a_spectator_s_clock_runs_between_progresses_and_stops_when_away() -> None:
    session = Session()
    session.receive(Welcome(1, "carol", "t" * 32, 60), 0.0)
    session.receive(room("racing", you="spectator", players=(("alice", True, True),)), 0.0)
    assert session.clock_ms(0.0) is None
    session.receive(progress(5_000, ("alice", "playing", 0, 0, 0, None, True)), 10.0)
    assert session.clock_ms(10.0) == 5_000
    assert session.clock_ms(12.5) == 7_500
    session.connection_lost(13.0)
    assert session.clock_ms(40.0) == 8_000
    session.receive(Welcome(1, "carol", "t" * 32, 60, "K7WQM"), 41.0)
    session.receive(progress(8_200, ("alice", "playing", 0, 0, 0, None, True)), 41.0)
    assert session.clock_ms(42.0) == 9_200
    session.receive(room("finished", you="spectator", players=(("alice", True, True),)), 43.0)
    assert session.clock_ms(50.0) == 10_200, "a finished race's clock stands"


# -- checking the revealed deal against its commitment (docs/protocol.md 4.5) ---------------------

SALT = "0123456789abcdef" * 2


def committed_race(code: str, salt: str = SALT) -> Session:
    """A race on a deal the server committed to, played to its end."""
    session = Session()
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(room("lobby", commitment=commitment(code, salt)), 0.0)
    session.receive(Referee(code).race(), 3.0)
    session.receive(room("racing", commitment=commitment(code, salt)), 3.0)
    return session


def finish(session: Session, code: str, salt: str | None) -> tuple[str, bool] | None:
    ranks = (RankEntry(1, "alice", "resigned", 1000, 0, 0, 0),)
    session.receive(Result(code, ranks, salt=salt), 9.0)
    return session.fairness


def test_a_deal_that_matches_its_commitment_and_its_start_is_checked() -> None:
    session = committed_race(CODE)
    assert finish(session, CODE, SALT) == (
        "deal checked: the one committed to before the start",
        True,
    )


def test_a_switched_deal_is_called_out() -> None:
    # The server reveals another code than the one it committed to.
    other = "YU1-C-AAAAAAC"
    assert finish(committed_race(CODE), other, SALT) == (
        "the revealed deal does NOT match the commitment sent before the start",
        False,
    )
    # ... or a wrong salt, or none.
    assert finish(committed_race(CODE), CODE, SALT[::-1])[1] is False  # type: ignore[index]
    assert finish(committed_race(CODE), CODE, None)[1] is False  # type: ignore[index]


def test_a_commitment_to_another_deal_than_the_one_dealt_is_called_out() -> None:
    """The commitment and the reveal agree, but the race dealt other cards."""
    other = "YU1-C-AAAAAAC"
    session = Session()
    session.receive(Welcome(1, "alice", "t" * 32, 60), 0.0)
    session.receive(room("lobby", commitment=commitment(other, SALT)), 0.0)
    session.receive(Referee(CODE).race(), 3.0)
    assert finish(session, other, SALT) == (
        "the revealed code does NOT deal the cards this race started with",
        False,
    )


def test_no_commitment_no_check() -> None:
    session, _ = racing_session()
    assert finish(session, CODE, None) is None


def test_a_resign_is_numbered_kept_and_resent_after_a_restart_lost_it() -> None:
    session, referee = racing_session()
    race = racing(session)
    play(session, referee, [MoveMsg(race.take_seq("6H>7"), "6H>7")])
    [resign] = session.resign()
    assert resign == Resign(2)
    # The server's answer: the race, my state resigned.
    answer = dataclasses.replace(referee.race(seq=2), state="resigned")
    assert session.receive(answer, 10.0) == []
    assert said(session) == ("you resigned", "info")
    assert racing(session).state == "resigned" and racing(session).pending == {}
    # The restarted server lost the resign's group (its race says seq 1): sent again.
    session.connection_lost()
    again = session.receive(referee.race(seq=1), 30.0)
    assert again == [Resign(2)]
    # A server that kept it says seq 2: nothing to send.
    session.connection_lost()
    assert session.receive(dataclasses.replace(referee.race(seq=2), state="resigned"), 40.0) == []
