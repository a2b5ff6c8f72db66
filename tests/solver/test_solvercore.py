"""The solver's compiled search against its Python search: node for node the same.

``solver/_solvercore.c`` is optional (setup.py builds it where a C compiler is found).
Wherever it is built it must be indistinguishable from ``search.search._search`` apart
from speed: the same node counts at every turn, the same verdicts, the same positions
added to the shared proven-lost set, the same winning line. That is what keeps a node
budget (the daily deal's, a hint's) giving the same answer on every machine.
"""

from __future__ import annotations

import gc
import os
import random
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Game
from protocol.position import PositionData, parse_position
from solver import search

from .test_search import ALL_RULES, small_position, walk

if TYPE_CHECKING:
    from solver._solvercore import ProvenSet

CORE = search._CORE

needs_core = pytest.mark.skipif(CORE is None, reason="the C search is not built here")


def test_the_c_search_is_built_under_ci() -> None:
    """CI installs with a C compiler: a missing extension there is a broken build."""
    if os.environ.get("CI") == "true":
        assert CORE is not None, "search._solvercore was not built"
        assert search.search_implementation() == "C"


def side_by_side(
    data: PositionData, prune_from: int, seed: int, stops: list[int], sleep: bool = True
) -> tuple[bool | None, int]:
    """Run the Python search and two C searches from ``data`` with the same turns, one C
    search on a Python ``set``, the other on a ``ProvenSet``; assert they never differ.
    ``sleep``: with sleep sets and frozen blocks (complete searches), or without."""
    assert CORE is not None
    py_state = search._State(data)
    py_proven: set[int] = set()
    generator = search._search(py_state, prune_from, seed, stops[0], py_proven, sleep=sleep)
    set_proven: set[int] = set()
    c_proven = CORE.ProvenSet()
    jitter = search._jitter(seed)
    searches = [
        (CORE.Search(search._State(data), prune_from, set_proven, jitter, sleep=sleep), "set"),
        (CORE.Search(search._State(data), prune_from, c_proven, jitter, sleep=sleep), "C set"),
    ]
    result: bool | None = None
    nodes = 0
    for turn, stop in enumerate(stops):
        try:
            nodes = next(generator) if turn == 0 else generator.send(stop)
        except StopIteration as end:
            result, nodes = end.value
        for compiled, kind in searches:
            assert compiled.advance(stop) == nodes, (kind, turn, stop)
            assert compiled.nodes == nodes, kind
            assert compiled.result is result, kind
            # the most advanced position so far: a hint's best guess (Solution.best)
            assert compiled.best_score == py_state.best_score, kind
            assert compiled.best() == py_state.best, kind
        assert set_proven == py_proven
        assert len(c_proven) == len(py_proven)
        assert set(c_proven) == py_proven
        if result is not None:
            break
    for compiled, kind in searches:
        assert compiled.journal() == py_state.journal, kind
    return result, nodes


def turns(rnd: random.Random, first: int, count: int) -> list[int]:
    stops = [first]
    for _ in range(count):
        stops.append(stops[-1] + rnd.choice([1, 2, 7, 100, 2048, 4096]))
    return stops


@pytest.mark.slow
@needs_core
@pytest.mark.parametrize("prune_from", [53, 0, 30])
@pytest.mark.parametrize("seed", [0, 3])
def test_classic_deals_node_for_node(prune_from: int, seed: int) -> None:
    rnd = random.Random(prune_from * 10 + seed)
    for deal in range(1, 41):
        data = parse_position(Game.from_deal(deal, "C").position())
        side_by_side(data, prune_from, seed, turns(rnd, rnd.choice([1, 50, 4000]), 12))


@pytest.mark.slow
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


@pytest.mark.slow
@needs_core
@pytest.mark.parametrize("sleep", [True, False])
def test_lost_deals_node_for_node_with_and_without_sleep_sets(sleep: bool) -> None:
    """The complete search of lost Classic deals to the end, where sleep sets and frozen
    blocks skip the most moves, and the search without them: C and Python agree node for
    node, in turns of every size."""
    rnd = random.Random(31)
    for deal in (203, 332):  # lost after 77,590 and 19,172 nodes (with them)
        data = parse_position(Game.from_deal(deal, "C").position())
        result, _ = side_by_side(data, 53, 0, [*turns(rnd, 1, 60), 1 << 40], sleep=sleep)
        assert result is False


@pytest.mark.slow
@needs_core
def test_searches_sharing_one_proven_set_agree_with_python() -> None:
    """solve() with both searches taking short turns on one set: the same as in Python,
    whether the C searches share a ``ProvenSet`` (as solve makes them) or a ``set``."""
    assert CORE is not None
    real_search = CORE.Search
    kinds: list[type] = []

    def spy(
        st: search._State, prune_from: int, proven: object, jitter: list[int], sleep: bool
    ) -> object:
        kinds.append(type(proven))
        return real_search(st, prune_from, proven, jitter, sleep=sleep)

    for deal in (25, 39, 44, 78, 104):
        position = Game.from_deal(deal, "C").position()
        kinds.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(CORE, "Search", spy)
            compiled = search.solve(position, budget_nodes=60_000)
        assert kinds and set(kinds) == {CORE.ProvenSet}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(CORE, "Search", spy)
            patch.setattr(CORE, "ProvenSet", set)
            kinds.clear()
            on_a_set = search.solve(position, budget_nodes=60_000)
            assert kinds and set(kinds) == {set}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(search, "_CORE", None)
            python = search.solve(position, budget_nodes=60_000)
        assert compiled == on_a_set == python


@needs_core
def test_the_python_search_runs_on_a_provenset() -> None:
    """``_search`` only asks ``in`` and calls ``add``: on a ProvenSet it does the same."""
    assert CORE is not None
    added = 0
    for deal in (25, 104):
        data = parse_position(Game.from_deal(deal, "C").position())
        outcomes = []
        provens: list[set[int] | ProvenSet] = [set(), CORE.ProvenSet()]
        for proven in provens:
            state = search._State(data)
            generator = search._search(state, 53, 0, 20_000, proven)
            try:
                nodes = next(generator)
            except StopIteration as end:
                nodes = end.value[1]
            outcomes.append((nodes, sorted(proven), state.journal))
        assert outcomes[0] == outcomes[1]
        added += len(outcomes[0][1])
    assert added  # it did add some


@needs_core
def test_search_takes_only_a_set_or_a_provenset() -> None:
    assert CORE is not None
    data = parse_position(Game.from_deal(1, "C").position())
    proven: object
    for proven in ([], frozenset(), {1: 2}, None):
        with pytest.raises(TypeError):
            CORE.Search(search._State(data), 53, proven, [])


# -- ProvenSet ----------------------------------------------------------------------------

TOP = (1 << 64) - 1

#: Keys a careless table would mix up: 0 (an empty slot's mark), the extremes, and keys
#: that differ only in their high bits or only in their low bits.
keys = st.one_of(
    st.integers(0, TOP),
    st.sampled_from([0, 1, 2, TOP, TOP - 1, 1 << 63, (1 << 63) - 1, 1 << 32, (1 << 32) - 1]),
    st.integers(0, 255).map(lambda i: i << 56),
    st.integers(0, 4095).map(lambda i: i << 40 | 0xABCDEF),
    st.integers(0, 4095),
    st.integers(0, 4095).map(lambda i: TOP - i),
)


@pytest.mark.slow
@needs_core
@settings(max_examples=300, deadline=None)
@given(
    ops=st.lists(st.tuples(st.booleans(), keys), max_size=300),
    extra=st.integers(0, 3000),
    seed=st.integers(0, 2**32),
)
def test_provenset_is_a_set_of_64_bit_ints(
    ops: list[tuple[bool, int]], extra: int, seed: int
) -> None:
    """Random adds and lookups, then a few thousand more keys: always what a set says."""
    assert CORE is not None
    c = CORE.ProvenSet()
    model: set[int] = set()
    for add, key in ops:
        if add:
            assert c.add(key) is None
            model.add(key)
        assert (key in c) == (key in model)
        assert len(c) == len(model)
    rnd = random.Random(seed)
    for _ in range(extra):  # past a few resizes of the table
        key = rnd.choice([rnd.getrandbits(64), rnd.getrandbits(12), rnd.getrandbits(8) << 56])
        c.add(key)
        model.add(key)
    assert len(c) == len(model)
    for key in model:
        assert key in c
    for _ in range(200):
        probe = rnd.getrandbits(64)
        assert (probe in c) == (probe in model)
    for key, _ in ops:
        assert (key in c) == (key in model)
    listed = c.keys()
    assert len(listed) == len(model) and set(listed) == model
    assert sorted(c) == sorted(model)
    assert all(type(k) is int for k in listed)


@needs_core
def test_provenset_keeps_zero_and_the_top_key_apart() -> None:
    assert CORE is not None
    c = CORE.ProvenSet()
    assert len(c) == 0 and 0 not in c and TOP not in c and list(c) == []
    c.add(0)
    assert 0 in c and TOP not in c and len(c) == 1 and c.keys() == [0]
    c.add(0)
    assert len(c) == 1
    c.add(TOP)
    assert TOP in c and len(c) == 2 and sorted(c) == [0, TOP]


@needs_core
def test_provenset_takes_ints_in_range_only() -> None:
    assert CORE is not None
    c = CORE.ProvenSet()
    c.add(5)
    # an int out of range cannot be in it; add refuses one
    for out in (-1, -5, 1 << 64, 1 << 100, -(1 << 64)):
        assert out not in c
        with pytest.raises(OverflowError):
            c.add(out)
    # anything but an int: TypeError (even 5.0, which a set would find)
    for other in ("5", 5.0, None, (5,), b"\x05"):
        with pytest.raises(TypeError):
            other in c  # noqa: B015
        with pytest.raises(TypeError):
            c.add(other)
    assert len(c) == 1 and c.keys() == [5]
    assert True not in c
    c.add(True)
    assert 1 in c
    with pytest.raises(TypeError):
        CORE.ProvenSet([1, 2])
    with pytest.raises(TypeError):
        hash(c)


@needs_core
def test_provenset_holds_no_python_objects() -> None:
    """Not tracked by the garbage collector; 8 bytes a slot, at most 3/4 full."""
    assert CORE is not None
    c = CORE.ProvenSet()
    assert not gc.is_tracked(c)
    empty = sys.getsizeof(c)
    rnd = random.Random(7)
    for _ in range(5000):
        c.add(rnd.getrandbits(64))
    table = sys.getsizeof(c) - empty
    assert 5000 * 8 * 4 // 3 <= table <= 5000 * 8 * 4 * 2
    assert not gc.is_tracked(c)
