"""The stock of proven-winnable deals on its own (``server.domain.stock``): what it asks
to prove, what it keeps, what it hands out, the rule sets it keeps, and a stall after a
failed proof; and ``prove``, the worker's job, with the real solver."""

from __future__ import annotations

import itertools

from protocol import Game, GameCode, Rules
from server.domain.stock import DealStock, prove
from solver import solve


def stock(**kwargs: int) -> DealStock:
    seeds = itertools.count(1)
    return DealStock(lambda: next(seeds), **{"target": 3, **kwargs})  # type: ignore[arg-type]


def test_it_fills_to_its_target_with_won_deals_only() -> None:
    s = stock()
    first = s.wanted()
    assert first == [("C", 1), ("C", 2)] and s.in_flight == 2
    assert s.wanted() == []  # two out at once at most
    s.proven("C", 1, "won")
    s.proven("C", 2, "lost")  # dropped: never dealt
    assert s.size("C") == 1 and s.figures.won == 1 and s.figures.dropped == 1
    # Only what is missing is asked for: one held, so two more at most.
    assert s.wanted() == [("C", 3), ("C", 4)]
    s.proven("C", 3, "won")
    s.proven("C", 4, "unknown")  # the budget ran out: not proven, dropped
    assert s.wanted() == [("C", 5)]
    s.proven("C", 5, "won")
    assert s.wanted() == [] and s.size() == 3


def test_a_draw_takes_the_oldest_and_an_empty_stock_says_so() -> None:
    s = stock(in_flight=3)
    for rules, seed in s.wanted():
        s.proven(rules, seed, "won")
    assert [s.draw("C"), s.draw("C"), s.draw("C")] == [1, 2, 3]
    assert s.draw("C") is None
    assert (s.figures.drawn, s.figures.empty) == (3, 1)
    assert len(s.wanted()) == 3  # refilled


def test_rule_sets_asked_for_are_stocked_and_the_oldest_forgotten() -> None:
    s = stock(keep_rules=2, in_flight=8)
    assert s.draw("A") is None  # stocked from now on
    assert s.rule_sets() == ("C", "A")
    asked = s.wanted()
    assert sorted({r for r, _ in asked}) == ["A", "C"]
    assert s.draw("B") is None  # a third: "A" goes ("C" is always kept)
    assert s.rule_sets() == ("C", "B")
    a_seed = next(seed for r, seed in asked if r == "A")
    s.proven("A", a_seed, "won")  # its rule set is gone: not kept
    assert s.size("A") == 0


def test_a_failed_proof_stalls_the_stock_until_a_room_asks() -> None:
    s = stock()
    [(_, one), (_, two)] = s.wanted()
    s.proven("C", one, "failed")
    assert s.stalled and s.wanted() == []  # a broken lane is not asked again and again
    s.proven("C", two, "won")
    assert s.wanted() == []
    assert s.draw("C") == two
    assert not s.stalled and len(s.wanted()) == 2


def test_prove_is_the_solvers_verdict_on_the_deal() -> None:
    rules = Rules.parse("C")
    for seed in (1, 2, 3, bytes(range(16))):
        expected = solve(Game.from_code(GameCode(rules, seed)), budget_nodes=100_000).verdict
        assert prove("C", seed, 100_000) == expected
    assert prove("C", 1, 100_000) == "won"  # YU1-C-AAAAAAB, the tests' winning deal
