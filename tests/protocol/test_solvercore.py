"""The solver's compiled search against its Python search: node for node the same.

``protocol/_solvercore.c`` is optional (setup.py builds it where a C compiler is found).
Wherever it is built it must be indistinguishable from ``protocol.solver._search`` apart
from speed: the same node counts at every turn, the same verdicts, the same positions
added to the shared proven-lost set, the same winning line. That is what keeps a node
budget (the daily deal's, a hint's) giving the same answer on every machine.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Game, solver
from protocol.position import PositionData, parse_position

from .test_solver import ALL_RULES, small_position, walk

CORE = solver._CORE

needs_core = pytest.mark.skipif(CORE is None, reason="the C search is not built here")


def test_the_c_search_is_built_under_ci() -> None:
    """CI installs with a C compiler: a missing extension there is a broken build."""
    if os.environ.get("CI") == "true":
        assert CORE is not None, "protocol._solvercore was not built"
        assert solver.search_implementation() == "C"


def side_by_side(
    data: PositionData, prune_from: int, seed: int, stops: list[int]
) -> tuple[bool | None, int]:
    """Run both searches from ``data`` with the same turns; assert they never differ."""
    assert CORE is not None
    py_state, c_state = solver._State(data), solver._State(data)
    py_proven: set[int] = set()
    c_proven: set[int] = set()
    generator = solver._search(py_state, prune_from, seed, stops[0], py_proven)
    search = CORE.Search(c_state, prune_from, c_proven, solver._jitter(seed))
    result: bool | None = None
    nodes = 0
    for turn, stop in enumerate(stops):
        try:
            nodes = next(generator) if turn == 0 else generator.send(stop)
        except StopIteration as end:
            result, nodes = end.value
        assert search.advance(stop) == nodes, (turn, stop)
        assert search.nodes == nodes
        assert search.result is result
        assert c_proven == py_proven
        if result is not None:
            break
    assert search.journal() == py_state.journal
    return result, nodes


def turns(rnd: random.Random, first: int, count: int) -> list[int]:
    stops = [first]
    for _ in range(count):
        stops.append(stops[-1] + rnd.choice([1, 2, 7, 100, 2048, 4096]))
    return stops


@needs_core
@pytest.mark.parametrize("prune_from", [53, 0, 30])
@pytest.mark.parametrize("seed", [0, 3])
def test_classic_deals_node_for_node(prune_from: int, seed: int) -> None:
    rnd = random.Random(prune_from * 10 + seed)
    for deal in range(1, 41):
        data = parse_position(Game.from_deal(deal, "C").position())
        side_by_side(data, prune_from, seed, turns(rnd, rnd.choice([1, 50, 4000]), 12))


@needs_core
@settings(max_examples=150, deadline=None)
@given(rules=st.sampled_from(ALL_RULES), rnd=st.randoms(use_true_random=False))
def test_small_positions_of_every_rule_node_for_node(rules: str, rnd: random.Random) -> None:
    """Every variant and option, searched to the end in small turns, both modes."""
    data = parse_position(small_position(rnd, rules, rnd.randrange(3, 12)))
    for prune_from in (53, 0):
        side_by_side(data, prune_from, rnd.choice([0, 1, 5]), [*turns(rnd, 1, 400), 1 << 40])


@needs_core
@settings(max_examples=40, deadline=None)
@given(rules=st.sampled_from(ALL_RULES), rnd=st.randoms(use_true_random=False))
def test_midgame_positions_node_for_node(rules: str, rnd: random.Random) -> None:
    game = walk(Game.from_deal(rnd.randrange(10_000), rules), rnd, rnd.randrange(60))
    data = parse_position(game.position())
    side_by_side(data, rnd.choice([53, 0]), rnd.choice([0, 2]), turns(rnd, 100, 6))


@needs_core
def test_searches_sharing_one_proven_set_agree_with_python() -> None:
    """solve() with both searches taking short turns on one set: the same as in Python."""
    for deal in (25, 39, 44, 78):
        position = Game.from_deal(deal, "C").position()
        compiled = solver.solve(position, budget_nodes=60_000)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(solver, "_CORE", None)
            python = solver.solve(position, budget_nodes=60_000)
        assert compiled == python
