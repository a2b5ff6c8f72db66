"""One race on its own: moves, undo, endings, the clock and the ranking (server/domain/race.py).

No hub and no clock: every call is given the server's monotonic time as a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from protocol import Game, GameCode, IllegalMoveError, InvalidMoveError
from protocol.messages import Accepted, PlayerProgress, RankEntry, Refused, Undone
from server.domain.race import REPLY_MEMORY, PlayerState, Race, Runner, rank_runners

DATA = Path(__file__).resolve().parents[2] / "data"
WINNING = (DATA / "winning-game.txt").read_text().split()
WIN_CODE, WIN_MOVES = GameCode.parse(WINNING[0]), WINNING[1:]
#: Deal 1045: its only legal move is JH>1, and after it there is none.
STUCK_CODE = GameCode.parse("YU1-C-AAAABOF")
STUCK_MOVE = "JH>1"

T0 = 1000.0


def make_race(
    code: GameCode = WIN_CODE,
    names: tuple[str, ...] = ("ann", "bob"),
    *,
    undo: bool = True,
    limit: int = 1800,
) -> Race:
    return Race(code, list(names), started=T0, time_limit_s=limit, undo=undo)


def play_line(race: Race, runner: Runner, moves: list[str], *, step: float = 0.25) -> list[object]:
    replies = []
    for i, move in enumerate(moves, start=1):
        replies.append(race.move(runner, runner.last_seq + 1, move, T0 + i * step))
    return replies


def test_the_stuck_deal_is_what_these_tests_think_it_is() -> None:
    game = Game.from_code(STUCK_CODE)
    assert game.legal_moves() == [STUCK_MOVE]
    game.play(STUCK_MOVE)
    assert game.is_stuck()


# -- setting up -----------------------------------------------------------------------------


def test_every_runner_starts_on_the_same_deal_with_a_game_of_its_own() -> None:
    race = make_race()
    ann, bob = race.runners["ann"], race.runners["bob"]
    assert list(race.runners) == ["ann", "bob"]
    assert ann.game is not bob.game
    assert ann.game.position() == bob.game.position() == Game.from_code(WIN_CODE).position()
    for r in (ann, bob):
        assert r.state is PlayerState.PLAYING
        assert not r.done
        assert r.time_ms is None
        assert r.last_seq == 0
        assert r.journal == []
        assert r.undos == 0
    race.move(ann, 1, WIN_MOVES[0], T0 + 1)
    assert bob.game.position() == Game.from_code(WIN_CODE).position()


def test_the_clock_counts_from_the_start_and_never_below_zero() -> None:
    race = make_race(limit=60)
    assert race.elapsed_ms(T0) == 0
    assert race.elapsed_ms(T0 + 1.5) == 1500
    assert race.elapsed_ms(T0 - 5) == 0
    assert race.deadline == T0 + 60


def test_player_states_are_the_wire_values() -> None:
    assert [s.value for s in PlayerState] == [
        "playing",
        "stuck",
        "won",
        "resigned",
        "timeout",
        "abandoned",
    ]


# -- moves ----------------------------------------------------------------------------------


def test_an_accepted_move_reports_the_turned_card_score_and_count() -> None:
    race = make_race()
    ann = race.runners["ann"]
    reply = race.move(ann, 1, "6h>7", T0 + 2.5)
    assert reply == Accepted(
        seq=1,
        move="6H>7",
        turned="9S",
        score=5,
        moves=1,
        foundations=0,
        state="playing",
        elapsed_ms=2500,
    )
    assert ann.last_seq == 1
    assert ann.journal == [(2500, "6H>7")]
    reply = race.move(ann, 2, "8C>6", T0 + 3)
    assert isinstance(reply, Accepted)
    assert (reply.turned, reply.score, reply.moves) == ("TH", 10, 2)
    reply = race.move(ann, 3, "7H>6", T0 + 4)
    assert isinstance(reply, Accepted)
    assert reply.turned is None


def test_an_illegal_move_is_refused_with_the_engines_reason_and_changes_nothing() -> None:
    race = make_race()
    ann = race.runners["ann"]
    before = ann.game.position()
    with pytest.raises(IllegalMoveError) as caught:
        Game.from_code(WIN_CODE).play("KD>1")
    reply = race.move(ann, 1, "KD>1", T0 + 1)
    assert reply == Refused(1, "illegal", caught.value.reason)
    assert ann.game.position() == before
    assert ann.game.move_count == 0
    assert ann.journal == []
    assert ann.last_seq == 1
    assert ann.state is PlayerState.PLAYING


def test_text_that_is_not_a_move_is_refused_as_invalid() -> None:
    race = make_race()
    ann = race.runners["ann"]
    with pytest.raises(InvalidMoveError) as caught:
        Game.from_code(WIN_CODE).play("hello")
    assert race.move(ann, 1, "hello", T0) == Refused(1, "invalid", str(caught.value))
    assert ann.game.move_count == 0


def test_replies_are_remembered_for_a_resend_and_forgotten_after_a_while() -> None:
    race = make_race()
    ann = race.runners["ann"]
    first = race.move(ann, 1, "6H>7", T0 + 1)
    assert race.replay_of(ann, 1) == first
    assert race.replay_of(ann, 2) is None
    for seq in range(2, REPLY_MEMORY + 2):
        race.move(ann, seq, "KD>1", T0 + 2)
    assert len(ann.replies) == REPLY_MEMORY
    assert race.replay_of(ann, 1) is None
    assert race.replay_of(ann, 2) is not None
    assert ann.last_seq == REPLY_MEMORY + 1


# -- undo -----------------------------------------------------------------------------------


def test_undo_takes_back_the_move_and_turns_the_card_down_again() -> None:
    race = make_race()
    ann = race.runners["ann"]
    initial_view = ann.game.view()
    race.move(ann, 1, "6H>7", T0 + 1)
    reply = race.undo(ann, 2, T0 + 2)
    assert reply == Undone(
        seq=2,
        move="6H>7",
        view=initial_view,
        score=0,
        moves=1,
        foundations=0,
        state="playing",
        elapsed_ms=2000,
    )
    assert "9S" not in reply.view
    assert ann.undos == 1
    assert ann.journal == [(1000, "6H>7"), (2000, "undo")]
    assert race.replay_of(ann, 2) == reply


def test_undo_in_a_room_without_undo_is_refused() -> None:
    race = make_race(undo=False)
    ann = race.runners["ann"]
    race.move(ann, 1, "6H>7", T0 + 1)
    position = ann.game.position()
    assert race.undo(ann, 2, T0 + 2) == Refused(2, "undo_disabled", "this room allows no undo")
    assert ann.game.position() == position
    assert ann.undos == 0
    assert ann.journal == [(1000, "6H>7")]


def test_undo_with_nothing_to_take_back_is_refused() -> None:
    race = make_race()
    ann = race.runners["ann"]
    reply = race.undo(ann, 1, T0)
    assert isinstance(reply, Refused)
    assert reply.code == "nothing_to_undo"
    assert reply.seq == 1
    assert ann.undos == 0


# -- endings --------------------------------------------------------------------------------


def test_a_won_game_is_done_with_its_time() -> None:
    race = make_race(names=("ann",))
    ann = race.runners["ann"]
    replies = play_line(race, ann, WIN_MOVES)
    assert all(isinstance(r, Accepted) for r in replies)
    last = replies[-1]
    assert isinstance(last, Accepted)
    assert (last.state, last.foundations, last.moves) == ("won", 52, len(WIN_MOVES))
    assert ann.state is PlayerState.WON
    assert ann.done
    assert ann.time_ms == int(len(WIN_MOVES) * 0.25 * 1000) == last.elapsed_ms
    assert race.is_over()
    assert len(ann.journal) == len(WIN_MOVES)


def test_stuck_with_undo_is_a_state_not_an_end() -> None:
    race = make_race(STUCK_CODE, ("ann",), undo=True)
    ann = race.runners["ann"]
    reply = race.move(ann, 1, STUCK_MOVE, T0 + 4)
    assert isinstance(reply, Accepted)
    assert reply.state == "stuck"
    assert ann.state is PlayerState.STUCK
    assert not ann.done
    assert ann.time_ms is None
    assert not race.is_over()
    undone = race.undo(ann, 2, T0 + 5)
    assert isinstance(undone, Undone)
    assert undone.state == "playing"
    assert ann.state is PlayerState.PLAYING


def test_stuck_without_undo_ends_the_players_race() -> None:
    race = make_race(STUCK_CODE, ("ann", "bob"), undo=False)
    ann = race.runners["ann"]
    reply = race.move(ann, 1, STUCK_MOVE, T0 + 4)
    assert isinstance(reply, Accepted)
    assert reply.state == "stuck"
    assert ann.done
    assert ann.state is PlayerState.STUCK
    assert ann.time_ms == 4000
    assert not race.is_over()
    race.resign(race.runners["bob"], T0 + 5)
    assert race.is_over()


def test_a_stuck_player_may_resign() -> None:
    race = make_race(STUCK_CODE, ("ann",), undo=True)
    ann = race.runners["ann"]
    race.move(ann, 1, STUCK_MOVE, T0 + 1)
    race.resign(ann, T0 + 2)
    assert ann.state is PlayerState.RESIGNED
    assert ann.time_ms == 2000
    assert race.is_over()


def test_resign_and_abandon_end_a_race_once() -> None:
    race = make_race(names=("ann", "bob"))
    ann, bob = race.runners["ann"], race.runners["bob"]
    race.resign(ann, T0 + 3)
    assert (ann.state, ann.time_ms, ann.done) == (PlayerState.RESIGNED, 3000, True)
    race.abandon(ann, T0 + 9)
    assert (ann.state, ann.time_ms) == (PlayerState.RESIGNED, 3000)
    assert not race.is_over()
    race.abandon(bob, T0 + 70)
    assert (bob.state, bob.time_ms) == (PlayerState.ABANDONED, 70000)
    assert race.is_over()


def test_the_time_limit_ends_everyone_still_racing() -> None:
    race = make_race(names=("ann", "bob", "cat"), limit=60)
    ann, bob, cat = (race.runners[n] for n in ("ann", "bob", "cat"))
    race.resign(ann, T0 + 10)
    race.move(cat, 1, STUCK_MOVE, T0 + 11)  # refused: not this deal's move; cat plays on
    assert not race.expire(T0 + 59.999)
    assert bob.state is PlayerState.PLAYING
    assert race.expire(T0 + 60)
    assert (bob.state, bob.time_ms) == (PlayerState.TIMEOUT, 60000)
    assert (cat.state, cat.time_ms) == (PlayerState.TIMEOUT, 60000)
    assert (ann.state, ann.time_ms) == (PlayerState.RESIGNED, 10000)
    assert race.is_over()
    assert not race.expire(T0 + 61)


def test_a_stuck_player_with_undo_is_done_as_stuck_at_the_time_limit() -> None:
    race = make_race(STUCK_CODE, ("ann",), undo=True, limit=30)
    ann = race.runners["ann"]
    race.move(ann, 1, STUCK_MOVE, T0 + 1)
    assert not ann.done
    assert race.expire(T0 + 30)
    assert ann.done and ann.state is PlayerState.STUCK and ann.time_ms == 30_000


# -- reports --------------------------------------------------------------------------------


def test_progress_lists_every_runner() -> None:
    race = make_race()
    race.move(race.runners["ann"], 1, "6H>7", T0 + 1)
    race.resign(race.runners["bob"], T0 + 2)
    assert race.progress({"ann": True}) == (
        PlayerProgress("ann", "playing", 0, 5, 1, None, True),
        PlayerProgress("bob", "resigned", 0, 0, 0, 2000, False),
    )


def test_progress_remakes_only_the_entries_whose_figures_changed() -> None:
    """Each runner's entry is kept and made again only when its figures change: a move,
    an undo, a resignation, a connection lost or regained; the others are the same ones."""
    race = make_race()
    ann, bob = race.runners["ann"], race.runners["bob"]
    first = race.progress({"ann": True, "bob": True})
    race.move(ann, 1, "6H>7", T0 + 1)
    second = race.progress({"ann": True, "bob": True})
    assert second[1] is first[1]
    assert second[0] == PlayerProgress("ann", "playing", 0, 5, 1, None, True)
    race.undo(ann, 2, T0 + 2)
    third = race.progress({"ann": True, "bob": False})
    assert third[0].moves == 1 and third[0].score == ann.game.score
    assert third[1] == PlayerProgress("bob", "playing", 0, 0, 0, None, False)
    race.resign(bob, T0 + 3)
    assert race.progress({"ann": True, "bob": False})[1] == PlayerProgress(
        "bob", "resigned", 0, 0, 0, 3000, False
    )
    assert race.progress({"ann": True, "bob": True})[1].connected


def test_race_ranks_a_winner_first() -> None:
    race = make_race(names=("bob", "ann"))
    ann, bob = race.runners["ann"], race.runners["bob"]
    race.move(bob, 1, "6H>7", T0 + 1)
    race.resign(bob, T0 + 2)
    play_line(race, ann, WIN_MOVES)
    assert race.ranks() == (
        RankEntry(1, "ann", "won", ann.time_ms or 0, len(WIN_MOVES), ann.game.score, 52),
        RankEntry(2, "bob", "resigned", 2000, 1, 5, 0),
    )


# -- rank_runners ---------------------------------------------------------------------------


@dataclass
class FakeGame:
    """Just what ranking reads of a game."""

    cards_on_foundations: int = 0
    score: int = 0
    move_count: int = 0


def runner(
    name: str,
    state: PlayerState,
    time_ms: int | None,
    *,
    foundations: int = 0,
    score: int = 0,
    moves: int = 0,
    hinted: bool = False,
) -> Runner:
    game = FakeGame(foundations, score, moves)
    return Runner(name, game, state=state, time_ms=time_ms, hinted=hinted)  # type: ignore[arg-type]


def ranked(entries: tuple[RankEntry, ...]) -> list[tuple[int, str]]:
    return [(e.rank, e.name) for e in entries]


def test_winners_rank_by_time_then_moves() -> None:
    won = PlayerState.WON
    runners = [
        runner("slow", won, 9000, foundations=52, moves=100),
        runner("many", won, 5000, foundations=52, moves=150),
        runner("fast", won, 5000, foundations=52, moves=120),
    ]
    assert ranked(rank_runners(runners, 60000)) == [(1, "fast"), (2, "many"), (3, "slow")]


def test_every_winner_ranks_above_everyone_else() -> None:
    runners = [
        runner("quit", PlayerState.RESIGNED, 100, foundations=51, score=999),
        runner("won", PlayerState.WON, 59000, foundations=52, score=10, moves=500),
    ]
    assert ranked(rank_runners(runners, 60000)) == [(1, "won"), (2, "quit")]


def test_the_rest_rank_by_foundations_then_score_then_time() -> None:
    """Of two equal non-wins the one that played on longer ranks higher (issue 28)."""
    runners = [
        runner("d", PlayerState.TIMEOUT, 60000, foundations=10, score=200),
        runner("e", PlayerState.RESIGNED, 50000, foundations=10, score=200),
        runner("c", PlayerState.STUCK, 40000, foundations=10, score=100),
        runner("b", PlayerState.ABANDONED, 90000, foundations=11, score=0),
        runner("a", PlayerState.RESIGNED, 100, foundations=3, score=500),
    ]
    assert ranked(rank_runners(runners, 60000)) == [
        (1, "b"),
        (2, "d"),
        (3, "e"),
        (4, "c"),
        (5, "a"),
    ]


def test_equal_keys_share_a_rank_and_the_next_rank_skips() -> None:
    won = PlayerState.WON
    runners = [
        runner("ann", won, 5000, foundations=52, moves=120),
        runner("bob", won, 5000, foundations=52, moves=120),
        runner("cat", won, 6000, foundations=52, moves=120),
        runner("dan", PlayerState.RESIGNED, 2000, foundations=4, score=40),
        runner("eve", PlayerState.TIMEOUT, 2000, foundations=4, score=40),
        runner("fay", PlayerState.TIMEOUT, 1000, foundations=4, score=40),
    ]
    entries = rank_runners(runners, 60000)
    assert ranked(entries) == [
        (1, "ann"),
        (1, "bob"),
        (3, "cat"),
        (4, "dan"),
        (4, "eve"),
        (6, "fay"),
    ]


def test_the_order_of_equal_runners_is_stable() -> None:
    runners = [runner(n, PlayerState.RESIGNED, 1000) for n in ("zed", "amy", "kim")]
    assert ranked(rank_runners(runners, 60000)) == [(1, "zed"), (1, "amy"), (1, "kim")]


def test_a_runner_without_a_time_counts_as_the_whole_limit() -> None:
    runners = [
        runner("open", PlayerState.PLAYING, None, foundations=2),
        runner("late", PlayerState.TIMEOUT, 60000, foundations=2),
        runner("early", PlayerState.RESIGNED, 59999, foundations=2),
    ]
    entries = rank_runners(runners, 60000)
    assert ranked(entries) == [(1, "open"), (1, "late"), (3, "early")]
    assert entries[0] == RankEntry(1, "open", "playing", 60000, 0, 0, 2)


def test_rank_entries_carry_the_runners_figures() -> None:
    entries = rank_runners(
        [runner("ann", PlayerState.WON, 4321, foundations=52, score=600, moves=140)], 60000
    )
    assert entries == (RankEntry(1, "ann", "won", 4321, 140, 600, 52),)


def test_hinted_wins_rank_after_unhinted_wins_and_before_every_non_win() -> None:
    """Issue 28, items 8 and 10: a hinted win ranked #3 behind two players who resigned
    after 0 and 2 moves; and a resignation at 0:06 with nothing home ranked above a run of
    0:32 that did no better. Now: unhinted wins, hinted wins, then the rest (hinted or not)
    by cards home, score, then time, the later first."""
    won = PlayerState.WON
    runners = [
        runner("fast", won, 1000, foundations=52, moves=90, hinted=True),
        runner("quit", PlayerState.RESIGNED, 6000, foundations=0, score=0),
        runner("slow", won, 9000, foundations=52, moves=90, hinted=True),
        runner("tie1", PlayerState.STUCK, 800, foundations=9, score=70, hinted=True),
        runner("tie2", PlayerState.STUCK, 800, foundations=9, score=70),
        runner("best", won, 20000, foundations=52, moves=200),
        runner("late", PlayerState.RESIGNED, 32000, foundations=0, score=0, hinted=True),
    ]
    entries = rank_runners(runners, 60000)
    assert [(e.rank, e.name, e.hinted) for e in entries] == [
        (1, "best", False),
        (2, "fast", True),
        (3, "slow", True),
        (4, "tie1", True),
        (4, "tie2", False),
        (6, "late", True),
        (7, "quit", False),
    ]
    twins = [runner(n, won, 1000, foundations=52, moves=90, hinted=n == "b") for n in "ab"]
    assert ranked(rank_runners(twins, 60000)) == [(1, "a"), (2, "b")]


def test_no_runners_no_ranks() -> None:
    assert rank_runners([], 60000) == ()


# -- finish ----------------------------------------------------------------------------------


#: Every card face up and no legal move (the black cards up to ten are home, every top
#: card is red, and no red card is next on its foundation): a position with no win.
FACE_UP_STUCK = "C T--T AHQH9DKS2H/6HKHTDJC3H/7HADJDQC4H/8H5DQDKC5H/9H6DKD2D/TH7DJS3D/JH8DQS4D"


def test_a_finish_that_finds_no_win_searches_only_so_often(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A face-up position without a win costs a search each time: after FINISH_SEARCHES
    of them in a race a runner's finish is refused without one, since the search runs on
    the event loop (issue 28). The real solver decides; the test only counts its calls."""
    from server.domain import race as race_module

    searched: list[str] = []
    real = race_module.solve

    def counting(game: Game, **budget: int) -> Any:
        searched.append(game.position())
        return real(game, **budget)

    monkeypatch.setattr(race_module, "solve", counting)
    r = Race(GameCode.parse("YU1-C-AAAAAAB"), ["ann"], started=0.0, time_limit_s=60, undo=True)
    runner = r.runners["ann"]
    runner.game = Game.from_position(FACE_UP_STUCK)
    for seq in range(1, race_module.FINISH_SEARCHES + 4):
        reply = r.finish(runner, seq, 1.0)
        assert isinstance(reply, Refused)
        assert (reply.code, reply.reason) == ("cannot_finish", "no win found from here: play on")
    assert searched == [FACE_UP_STUCK] * race_module.FINISH_SEARCHES
    assert runner.game.position() == FACE_UP_STUCK and runner.journal == []
    # A resend gets its refusal again.
    assert r.replay_of(runner, 3) == Refused(3, "cannot_finish", "no win found from here: play on")
