"""The solver's post-mortem on crafted runs: a deal won, then thrown away by a known move."""

from __future__ import annotations

import pytest

from protocol import Game
from solver import par, solve
from solver.postmortem import MAX_SOLVES, TOTAL_FACTOR, kept_moves, postmortem
from solver.search import proven_set

BUDGET = 100_000
#: Classic deals the solver wins, and moves that lose them (found by solving every legal
#: move's position along the solver's line: each leads to a position proven lost).
DEAL_B = "YU1-C-AAAAAAB"  # after 13 moves of its line, TS>4 leaves no win
DEAL_C = "YU1-C-AAAAAAC"  # after 17 moves, 3C>F; after 26 moves, 8H>1
LOST_DEAL = "YU1-C-AAAAABN"  # deal 39: no win from the start


def line_of(code: str) -> tuple[str, ...]:
    solution = solve(Game.from_code(code), budget_nodes=BUDGET)
    assert solution.verdict == "won"
    return solution.moves


def wins_from(code: str, actions: list[str], line: tuple[str, ...]) -> bool:
    game = Game.from_code(code)
    for action in actions:
        if action == "undo":
            game.undo()
        else:
            game.play(action)
    for move in line:
        game.play(move)
    return game.is_won()


def test_a_known_losing_move_is_named() -> None:
    line = line_of(DEAL_B)
    game = Game.from_code(DEAL_B)
    for move in line[:13]:
        game.play(move)
    game.play("TS>4")
    after = [game.legal_moves()[0]]  # the player plays on a little, then gives up
    run = [*line[:13], "TS>4", *after]
    answer = postmortem(DEAL_B, run, budget_nodes=BUDGET)
    assert answer.status == "lost"
    assert answer.last_winnable == 13
    assert answer.losing_move == "TS>4"
    assert answer.line and wins_from(DEAL_B, run[:13], answer.line)
    assert answer.solves <= 8 and answer.nodes > 0


def test_an_undone_losing_move_is_forgiven_and_the_later_one_named() -> None:
    """The run as it was played: 3C>F lost the deal, the player took it back, went on along
    a winning line and lost it again with 8H>1 (action 29)."""
    line = line_of(DEAL_C)
    run = [*line[:17], "3C>F", "undo", *line[17:26], "8H>1"]
    assert postmortem(DEAL_C, run[:18], budget_nodes=BUDGET).losing_move == "3C>F"
    answer = postmortem(DEAL_C, run, budget_nodes=BUDGET)
    assert answer.status == "lost"
    assert answer.last_winnable == 28
    assert answer.losing_move == "8H>1"
    assert wins_from(DEAL_C, run[:28], answer.line)


def test_a_run_given_up_while_a_win_was_left_is_open() -> None:
    line = line_of(DEAL_B)
    answer = postmortem(DEAL_B, list(line[:20]), budget_nodes=BUDGET)
    assert answer.status == "open"
    assert answer.losing_move is None
    assert wins_from(DEAL_B, list(line[:20]), answer.line)


def test_a_deal_that_cannot_be_won_says_so() -> None:
    game = Game.from_code(LOST_DEAL)
    run = [game.legal_moves()[0]]
    answer = postmortem(LOST_DEAL, run, budget_nodes=BUDGET)
    assert answer.status == "unwinnable"
    assert answer.losing_move is None and answer.line == ()


def test_what_the_budget_cannot_decide_is_unknown_never_a_guess() -> None:
    line = line_of(DEAL_B)
    run = [*line[:13], "TS>4"]
    answer = postmortem(DEAL_B, run, budget_nodes=1)
    assert answer.status == "unknown"
    assert answer.losing_move is None and answer.line == ()
    # With too few solves for the search, the decided bounds are given, no move.
    capped = postmortem(DEAL_B, run, budget_nodes=BUDGET, max_solves=3)
    assert capped.status == "unknown"
    assert capped.losing_move is None
    assert capped.last_winnable is not None and capped.lost_from is not None
    assert capped.last_winnable < 14 <= capped.lost_from


def test_a_won_run_counts_its_waste_against_par() -> None:
    line = line_of(DEAL_B)
    game = Game.from_code(DEAL_B)
    for move in line[:5]:
        game.play(move)
    detour = next(m for m in game.legal_moves() if m != line[5])
    run = [*line[:5], detour, "undo", *line[5:]]
    answer = postmortem(DEAL_B, run, budget_nodes=BUDGET)
    assert answer.status == "won"
    own_par = len(par(line, Game.from_code(DEAL_B).position()))
    assert answer.kept == own_par
    assert 6 in answer.wasted  # the move taken back
    assert 7 not in answer.wasted  # an undo is not a move
    assert len(answer.wasted) == len(line) + 1 - own_par
    assert answer.par is not None and answer.par <= len(line)


def test_kept_moves_are_what_par_keeps() -> None:
    start = Game.from_code(DEAL_C).position()
    line = line_of(DEAL_C)
    kept = kept_moves(line, start)
    assert len(kept) == len(par(line, start))
    assert kept == sorted(kept)


def test_a_run_that_does_not_replay_is_refused() -> None:
    with pytest.raises(ValueError):
        postmortem(DEAL_B, ["KS>F"], budget_nodes=BUDGET)
    with pytest.raises(ValueError):
        postmortem(DEAL_B, ["undo"], budget_nodes=BUDGET)


def test_what_the_first_budget_leaves_undecided_later_rounds_decide() -> None:
    """Solves the first budget cannot decide are made again with larger ones (``ROUNDS``),
    within the total of positions; the verdict is then a proof like any other."""
    line = line_of(DEAL_B)
    run = [*line[:13], "TS>4"]
    only_first = postmortem(DEAL_B, run, budget_nodes=10, total_nodes=160)
    assert only_first.status == "unknown" and only_first.nodes <= 160 + 16 * 10
    answer = postmortem(DEAL_B, run, budget_nodes=10)
    assert (answer.status, answer.last_winnable, answer.losing_move) == ("lost", 13, "TS>4")
    assert answer.solves <= MAX_SOLVES and answer.nodes <= TOTAL_FACTOR * 10 + 4096


def test_solves_sharing_what_is_proven_lost_agree_and_search_less() -> None:
    """One set of positions proven lost kept across solves (as a post-mortem's solves
    share it): the same verdicts, fewer positions the second time."""
    position = Game.from_code(LOST_DEAL).position()
    game = Game.from_code(DEAL_B)
    for move in line_of(DEAL_B)[:13]:
        game.play(move)
    game.play("TS>4")
    for start in (game.position(), position):
        alone = solve(start, budget_nodes=BUDGET)
        shared = proven_set()
        first = solve(start, budget_nodes=BUDGET, proven=shared)
        again = solve(start, budget_nodes=BUDGET, proven=shared)
        assert alone == first
        assert again.verdict == first.verdict == "lost"
        assert again.nodes <= first.nodes
