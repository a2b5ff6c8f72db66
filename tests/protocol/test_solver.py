"""The solver: every verdict it gives is checked against the engine."""

from __future__ import annotations

import itertools

import pytest

from protocol import Game
from protocol.solver import solve

CLOCK = itertools.count(0.0, 0.0001).__next__  # a fake clock: the test never waits on time


@pytest.mark.parametrize("deal", ["AAAAAAB", "AAAAAAC", "AAAAAAD", "AAAAAAE", "AAAAAAK"])
def test_a_won_verdict_comes_with_a_line_the_engine_replays_to_a_win(deal: str) -> None:
    code = f"YU1-C-{deal}"
    result = solve(Game.from_code(code), budget_nodes=200_000)
    assert result.verdict == "won"
    game = Game.from_code(code)
    for move in result.moves:
        game.play(move)
    assert game.is_won()
    assert result.nodes > 0


def test_an_exhausted_budget_says_unknown_not_lost() -> None:
    result = solve(Game.from_code("YU1-C-AAAAAAN"), budget_nodes=50)
    assert result.verdict == "unknown"
    assert result.moves == ()


def test_a_stuck_position_is_proven_lost() -> None:
    stuck = "C KKQ- KDAC2C/3C/4C/5C/6C/7C/8C9CTCJCQCKC"
    assert Game.from_position(stuck).is_stuck()
    result = solve(stuck, budget_nodes=1_000)
    assert result.verdict == "lost"


def test_a_view_with_hidden_cards_is_refused() -> None:
    with pytest.raises(ValueError):
        solve(Game.from_code("YU1-C-AAAAAAB").view())


def test_a_time_budget_needs_a_clock_and_uses_it() -> None:
    with pytest.raises(ValueError):
        solve(Game.from_code("YU1-C-AAAAAAN"), budget_seconds=1.0)
    result = solve(Game.from_code("YU1-C-AAAAAAN"), budget_seconds=0.01, clock=CLOCK)
    assert result.verdict in ("won", "unknown")
