"""The "must go home before" cycle test (solver/cycles.py): sound on every position of
small exhaustive cases, and, as docs/solver.md argues, never beyond the dead-end test."""

from __future__ import annotations

import random

import pytest

from protocol.position import parse_position
from solver.cycles import home_order_cycle, pinned_cards
from solver.deadends import _hopeless
from solver.state import _State

from .test_search import ALL_RULES, exhaustive, small_position, winnable_keys

#: Spades and diamonds home, hearts to the two, clubs to the five. 5H lies on 6C and 3H,
#: face down: its seats, 6S and 6C, are home or beneath it, so it can leave only by going
#: home, before 3H, which must go home before it.
CYCLE = "C K2K5 3h6c5H/4H/7C8C9CTCJCQCKC/6H7H8H9HTHJHQHKH///"


def test_a_pinned_card_above_a_lower_card_of_its_suit_is_a_cycle() -> None:
    state = _State(parse_position(CYCLE))
    assert pinned_cards(state)[0] == [parse_position(CYCLE).columns[0][2]]
    assert home_order_cycle(state)
    assert exhaustive(CYCLE, 5_000) == "lost"
    assert _hopeless(state)  # the dead-end test sees it too


def test_no_cycle_without_the_pin() -> None:
    # 6C face up elsewhere: 5H may go onto it, so nothing is pinned above 3H
    position = "C K2K5 3h5H/4H6C/7C8C9CTCJCQCKC/6H7H8H9HTHJHQHKH///"
    state = _State(parse_position(position))
    assert not home_order_cycle(state)
    assert exhaustive(position, 5_000) == "won"


def test_take_back_and_open_spaces_pin_nothing_that_could_move() -> None:
    taken = _State(parse_position(CYCLE.replace("C ", "CT ", 1)))
    assert not any(pinned_cards(taken)) and not home_order_cycle(taken)
    spaces = _State(parse_position(CYCLE.replace("C ", "CE ", 1)))
    assert pinned_cards(spaces)[0] == [] and not home_order_cycle(spaces)


def flagged_keys(position: str, limit: int) -> dict[int, bool] | None:
    """Every position reachable from ``position`` by every legal move, by key: whether the
    cycle test flags it (asserting the dead-end test does too); None beyond ``limit``."""
    state = _State(parse_position(position))
    flagged = {state.key: home_order_cycle(state)}
    frames: list[tuple[int, list[tuple[int, int]], int]] = [(state.key, state.legal(), 0)]
    while frames:
        key, moves, i = frames[-1]
        if i == len(moves):
            frames.pop()
            if frames:
                state.undo(frames[-1][0])
            continue
        frames[-1] = (key, moves, i + 1)
        state.play(*moves[i])
        if state.key in flagged:
            state.undo(key)
            continue
        if len(flagged) >= limit:
            return None
        flagged[state.key] = home_order_cycle(state)
        if flagged[state.key]:
            assert _hopeless(state), position
        frames.append((state.key, state.legal(), 0))
    return flagged


def check_cycles_are_lost(seed: int, starts: int) -> tuple[int, int]:
    """Every position reachable from small random ones that the cycle test flags has no
    win (every reachable position searched), and the dead-end test flags it too; returns
    (positions checked, positions flagged)."""
    rnd = random.Random(seed)
    positions = flagged = done = 0
    while done < starts:
        position = small_position(rnd, rnd.choice(ALL_RULES), rnd.randint(4, 12))
        cycles = flagged_keys(position, 400)
        if cycles is None:
            continue
        wins = winnable_keys(position, 400)
        assert wins is not None and wins.keys() == cycles.keys()
        done += 1
        positions += len(wins)
        for key, won in wins.items():
            if cycles[key]:
                flagged += 1
                assert not won, position
    return positions, flagged


def test_the_cycle_test_finds_only_lost_positions() -> None:
    positions, flagged = check_cycles_are_lost(43, 40)
    assert positions > 3_000 and flagged >= 20


@pytest.mark.slow
def test_the_cycle_test_finds_only_lost_positions_on_many() -> None:
    positions, flagged = check_cycles_are_lost(7, 300)
    assert positions > 25_000 and flagged > 150
