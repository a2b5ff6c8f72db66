"""The solver: its verdicts are right, its lines win, its moves are the engine's moves."""

from __future__ import annotations

import functools
import itertools
import random
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bench import lazy_foundations
from protocol import CARD_TEXT, Game, Rules
from protocol.position import parse_position
from protocol.rules import BUILDERS
from solver import (
    Solution,
    canonical_key,
    dfs,
    par,
    safe_needs,
    search,
    solve,
    solver_moves,
    zobrist_key,
)

ALL_RULES = [
    v + "".join(opts)
    for v in "CRSAM"
    for n in range(4)
    for opts in itertools.combinations("EGT", n)
]

deals = st.integers(min_value=0, max_value=26**7 - 1)
rules_fields = st.sampled_from(ALL_RULES)
randoms = st.randoms(use_true_random=False)


def replay(start: str, moves: tuple[str, ...] | list[str]) -> Game:
    game = Game.from_position(start)
    for move in moves:
        game.play(move)
    return game


def walk(game: Game, rnd: random.Random, steps: int) -> Game:
    """Random legal moves, leaning towards foundation moves so that games get somewhere."""
    for _ in range(steps):
        moves = sorted(game.legal_moves())
        if not moves:
            break
        up = [m for m in moves if m.endswith(">F")]
        game.play(rnd.choice(up if up and rnd.random() < 0.6 else moves))
    return game


def small_position(rnd: random.Random, rules: str, cards: int) -> str:
    """A valid position with ``cards`` cards left in the tableau, dealt at random."""
    return lazy_foundations.deal_small(
        rnd, rules, cards, lambda column: rnd.randrange(len(column)) if column else 0
    )


def exhaustive(start: str, limit: int) -> str | None:
    """The plain answer: every position reachable with the engine's own moves, no tricks.

    "won", "lost", or None when there are more than ``limit`` positions.
    """
    seen = {start}
    todo = [Game.from_position(start)]
    while todo:
        game = todo.pop()
        if game.is_won():
            return "won"
        for move in game.legal_moves():
            child = game.copy()
            child.play(move)
            text = child.position()
            if text not in seen:
                if len(seen) >= limit:
                    return None
                seen.add(text)
                todo.append(child)
    return "lost"


# -- verdicts and lines -------------------------------------------------------------------


@pytest.mark.parametrize("deal", range(1, 13))
def test_winning_lines_replay_through_the_engine(deal: int) -> None:
    game = Game.from_deal(deal, "C")
    solution = solve(game, budget_nodes=2_000_000)
    assert isinstance(solution, Solution)
    assert solution.verdict == "won"
    assert solution.position == game.position()
    won = replay(solution.position, solution.moves)
    assert won.is_won()
    assert won.score == 625
    assert solution.nodes > 0


def test_the_documented_game_is_won() -> None:
    solution = solve("YU1-C-AAAAAAB", budget_nodes=1_000_000)
    assert solution.verdict == "won"
    assert replay(Game.from_code("YU1-C-AAAAAAB").position(), solution.moves).is_won()


@pytest.mark.parametrize(
    ("position", "line"),
    [
        ("C QKKK KS//////", ["KS>F"]),
        ("C KKKK //////", []),
        # the ace of spades is under the two: the two must move onto the three first
        ("R -KKK AS2S/3S/KSQSJSTS9S8S7S6S5S4S////", None),
    ],
)
def test_easy_wins(position: str, line: list[str] | None) -> None:
    solution = solve(position)
    assert solution.verdict == "won"
    if line is not None:
        assert list(solution.moves) == line
    assert replay(position, solution.moves).is_won()


@pytest.mark.parametrize(
    "stuck", ["C TKKK ksJSQS//////", "C KKQ- KDAC2C/3C/4C/5C/6C/7C/8C9CTCJCQCKC"]
)
def test_a_game_with_no_move_is_lost(stuck: str) -> None:
    assert Game.from_position(stuck).is_stuck()
    solution = solve(stuck, budget_nodes=1_000)
    assert solution.verdict == "lost"
    assert solution.moves == ()


def test_a_block_with_no_way_out_is_lost() -> None:
    # Only spades are left; in Classic a spade builds on a red card, and there is none.
    position = "C -KKK AS2S3S4S5S6S7S8S9STSJSQS/KS/////"
    assert exhaustive(position, 1_000) == "lost"
    assert solve(position).verdict == "lost"


def test_a_constructed_deadlock_is_proven_lost() -> None:
    # The 10 of spades needs the jack of hearts (under it) or the 9 of spades up first,
    # which lies under the queen of spades; that needs the king of hearts, under the 10.
    # The jack of spades waits for the 10. Only the king of spades can move, uselessly.
    position = "C 8TKK khjhTS/9sQS/KSQHJS////"
    game = Game.from_position(position)
    assert game.legal_moves() and not game.is_stuck()
    assert exhaustive(position, 1_000) == "lost"
    assert solve(position).verdict == "lost"


@pytest.mark.parametrize("deal", [39, 44, 82, 84, 92])
def test_lost_classic_deals(deal: int) -> None:
    solution = solve(Game.from_deal(deal, "C"), budget_nodes=1_000_000)
    assert solution.verdict == "lost"


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(rules=rules_fields, rnd=randoms, cards=st.integers(min_value=2, max_value=6))
def test_verdicts_agree_with_an_exhaustive_search(
    rules: str, rnd: random.Random, cards: int
) -> None:
    """On small positions the plain search decides; the solver must agree exactly."""
    position = small_position(rnd, rules, cards)
    expected = exhaustive(position, 1_500)
    assume(expected is not None)
    solution = solve(position)
    assert solution.verdict == expected, position
    if expected == "won":
        assert replay(position, solution.moves).is_won()


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(rules=rules_fields, rnd=randoms, cards=st.integers(min_value=3, max_value=7))
def test_verdicts_agree_when_the_searches_take_many_short_turns(
    rules: str, rnd: random.Random, cards: int
) -> None:
    """Tiny turns and runs: many searches share their lost positions, and the positions
    they skip (proven lost by another, or moves that only lead where the parent leads)
    must never turn a won position into a lost one, nor the reverse."""
    position = small_position(rnd, rules, cards)
    expected = exhaustive(position, 3_000)
    assume(expected is not None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search, "_FIRST_RUN", 3)
        patch.setattr(search, "_SLICE", 2)
        solution = solve(position)
    assert solution.verdict == expected, position
    if expected == "won":
        assert replay(position, solution.moves).is_won()


K = TypeVar("K")


def winnable_positions(start: str, limit: int) -> dict[str, bool] | None:
    """Every position reachable from ``start`` with the engine's moves, and whether a win
    is reachable from it; None when there are more than ``limit`` positions."""
    children: dict[str, list[str]] = {}
    todo = [start]
    while todo:
        text = todo.pop()
        if text in children:
            continue
        if len(children) >= limit:
            return None
        game = Game.from_position(text)
        children[text] = []
        for move in game.legal_moves():
            child = game.copy()
            child.play(move)
            children[text].append(child.position())
            todo.append(child.position())
    return reaching({text: Game.from_position(text).is_won() for text in children}, children)


def reaching(wins: dict[K, bool], children: dict[K, list[K]]) -> dict[K, bool]:
    """``wins`` (which nodes are won) spread back along ``children``, by fixpoint: which
    nodes reach a won one."""
    changed = True
    while changed:
        changed = False
        for node, nexts in children.items():
            if not wins[node] and any(wins[n] for n in nexts):
                wins[node] = changed = True
    return wins


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(rules=rules_fields, rnd=randoms, cards=st.integers(min_value=4, max_value=8))
def test_positions_proven_lost_are_lost(rules: str, rnd: random.Random, cards: int) -> None:
    """Complete searches (several move orders, one shared set) prove positions lost only
    when no win is reachable from them: checked on every reachable position."""
    position = small_position(rnd, rules, cards)
    wins = winnable_positions(position, 400)
    assume(wins is not None)
    assert wins is not None
    proven: set[int] = set()
    for seed in range(3):
        run = search._Run(parse_position(position), complete=True, seed=seed, proven=proven)
        run.advance(1 << 40)
        assert run.result == wins[position]
    for text, won in wins.items():
        if zobrist_key(text) in proven:
            assert not won, text


@settings(max_examples=60, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_midgame_verdicts_are_consistent(deal: int, rules: str, rnd: random.Random) -> None:
    """A position the solver wins is won by its line; one it loses has no winning move."""
    game = walk(Game.from_deal(deal, rules), rnd, rnd.randrange(20, 140))
    solution = solve(game, budget_nodes=60_000)
    if solution.verdict == "won":
        assert replay(game.position(), solution.moves).is_won()
    elif solution.verdict == "lost":
        for move in game.legal_moves():
            child = game.copy()
            child.play(move)
            assert solve(child, budget_nodes=60_000).verdict != "won", move


# -- budgets and input --------------------------------------------------------------------


def test_a_node_budget_runs_out() -> None:
    solution = solve(Game.from_deal(1, "C"), budget_nodes=1)
    assert solution.verdict == "unknown"
    assert solution.moves == ()
    assert solution.nodes <= 1


@pytest.mark.parametrize("deal", [25, 186, 270])
def test_an_unknown_verdict_offers_the_most_advanced_line_found(deal: int) -> None:
    """``best``: a line of legal moves to a position at least as advanced as any other
    the searches expanded, not known to win; empty for a lost deal, the line for a won."""
    solution = solve(Game.from_deal(deal, "C"), budget_nodes=50_000)
    assert solution.verdict == "unknown" and solution.moves == ()
    game = Game.from_deal(deal, "C")
    start_up = sum(parse_position(game.position()).foundations)
    for move in solution.best:
        game.play(move)
    assert solution.best and not game.is_won()
    assert sum(parse_position(game.position()).foundations) >= start_up
    assert solve(Game.from_deal(39, "C")).best == ()
    won = solve(Game.from_deal(1, "C"))
    assert won.best == won.moves != ()


def test_a_time_budget_runs_out_on_the_injected_clock() -> None:
    ticks = itertools.count()

    def clock() -> float:
        return float(next(ticks))  # every reading is one second later

    solution = solve(Game.from_deal(25, "C"), budget_seconds=3.0, clock=clock)
    assert solution.verdict == "unknown"
    assert solution.seconds >= 3.0


def test_a_time_budget_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        solve(Game.from_deal(1, "C"), budget_seconds=1.0)


def test_a_slow_fake_clock_gives_won_or_unknown_never_lost() -> None:
    clock = itertools.count(0.0, 0.0001).__next__
    result = solve(Game.from_code("YU1-C-AAAAAAN"), budget_seconds=0.01, clock=clock)
    assert result.verdict in ("won", "unknown")


def test_a_view_is_refused() -> None:
    view = Game.from_deal(1, "C").view()
    with pytest.raises(ValueError, match=r"\?\?"):
        solve(view)
    with pytest.raises(ValueError, match=r"\?\?"):
        solve(Game.from_position(view))


def test_codes_positions_and_games_are_all_accepted() -> None:
    game = Game.from_code("YU1-RT-AAAAAAC")
    a = solve(game, budget_nodes=200_000)
    b = solve(game.position(), budget_nodes=200_000)
    c = solve("YU1-RT-AAAAAAC", budget_nodes=200_000)
    assert a.verdict == b.verdict == c.verdict
    assert a.moves == b.moves == c.moves


# -- par ------------------------------------------------------------------------------------


def test_par_removes_a_card_moved_and_moved_back() -> None:
    game = Game.from_deal(1, "C")
    solution = solve(game)
    start = solution.position
    first = solution.moves[0]
    # Insert a detour before the line: a tableau move and its way back, where possible.
    detour: list[str] = []
    for move in sorted(game.legal_moves()):
        if move.endswith(">F"):
            continue
        card = move.split(">")[0]
        source = next(n for n in range(1, 8) if card in game.column(n))
        twin = game.copy()
        played = twin.play(move)
        back = f"{card}>{source}"
        if played.turned_up is None and back in twin.legal_moves():
            detour = [move, back]
            break
    assert detour, "deal 1 has a move that can be taken straight back"
    padded = detour + list(solution.moves)
    assert replay(start, padded).is_won()
    short = par(padded, start)
    assert len(short) <= len(solution.moves)
    assert replay(start, short).is_won()
    assert short[:1] != detour[:1] or first == detour[0]


@pytest.mark.parametrize("deal", [2, 3, 5, 20])
def test_par_is_never_longer_and_still_wins(deal: int) -> None:
    solution = solve(Game.from_deal(deal, "C"), budget_nodes=2_000_000)
    short = par(solution.moves, solution.position)
    assert len(short) <= len(solution.moves)
    assert replay(solution.position, short).is_won()
    assert par(short, solution.position) == short  # nothing more to remove


def test_par_refuses_a_line_that_does_not_win() -> None:
    with pytest.raises(ValueError):
        par(["7H>2"], Game.from_code("YU1-C-AAAAAAB"))


# -- moves and keys -----------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_solver_moves_are_the_engines_moves(deal: int, rules: str, rnd: random.Random) -> None:
    game = Game.from_deal(deal, rules)
    for _ in range(6):
        assert sorted(solver_moves(game)) == sorted(game.legal_moves())
        walk(game, rnd, rnd.randrange(1, 40))


@settings(max_examples=120, deadline=None)
@given(rules=rules_fields, rnd=randoms, cards=st.integers(min_value=1, max_value=30))
def test_solver_moves_on_odd_positions(rules: str, rnd: random.Random, cards: int) -> None:
    """Empty columns, long blocks, foundations to take back from: every case."""
    game = Game.from_position(small_position(rnd, rules, cards))
    assert sorted(solver_moves(game)) == sorted(game.legal_moves())


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_keys_ignore_the_order_of_the_columns(deal: int, rules: str, rnd: random.Random) -> None:
    game = walk(Game.from_deal(deal, rules), rnd, rnd.randrange(0, 60))
    text = game.position()
    head, columns = text.rsplit(" ", 1)
    parts = columns.split("/")
    rnd.shuffle(parts)
    shuffled = f"{head} {'/'.join(parts)}"
    assert canonical_key(shuffled) == canonical_key(text)
    assert zobrist_key(shuffled) == zobrist_key(text)
    for move in game.legal_moves():
        other = game.copy()
        other.play(move)
        before = sorted(c for c in columns.split("/") if c)
        after = sorted(c for c in other.position().rsplit(" ", 1)[1].split("/") if c)
        # a whole column moved into an empty one only relabels the columns
        same = before == after and other.position().split(" ")[:2] == text.split(" ")[:2]
        assert (canonical_key(other) == canonical_key(game)) == same
        assert (zobrist_key(other) == zobrist_key(game)) == same


def test_keys_tell_face_down_from_face_up() -> None:
    a = Game.from_code("YU1-C-AAAAAAB").position()
    b = a.replace("9s6H", "9S6H")
    assert canonical_key(a) != canonical_key(b)
    assert zobrist_key(a) != zobrist_key(b)


# -- safe moves ----------------------------------------------------------------------------


def card(text: str) -> int:
    return CARD_TEXT.index(text)


def test_safe_moves_per_variant() -> None:
    classic = safe_needs(Rules.parse("C"))
    # 5H (rank 5) is safe once both black 4s are up.
    assert classic[card("5H")] == (4, 4, 0, 4)
    # Aces are always safe, twos once the aces of the other colour are up.
    assert classic[card("AD")] == (0, 0, 0, 0)
    assert classic[card("2S")] == (1, 1, 1, 0)
    # With take-back, also the other card of its colour two ranks below.
    assert safe_needs(Rules.parse("CT"))[card("5H")] == (4, 4, 3, 4)
    # Relaxed and Moosehide: every suit one rank below.
    for rules in ("R", "RT", "M", "MT"):
        assert safe_needs(Rules.parse(rules))[card("5H")] == (4, 4, 4, 4)
    # Russian: nothing builds on it but its own suit's card below, always up first.
    for rules in ("S", "ST"):
        assert safe_needs(Rules.parse(rules))[card("5H")] == (0, 4, 0, 0)
    # Alaska: the card above in its suit may build on it, so only kings are safe.
    for rules in ("A", "AT", "AE"):
        needs = safe_needs(Rules.parse(rules))
        assert needs[card("5H")] is None
        assert needs[card("KH")] == (0, 12, 0, 0)
    # Options E and G change nothing.
    assert safe_needs(Rules.parse("CEG")) == classic


def placed_only_to_go_up(position: str) -> list[str]:
    """The tops that go up at once only by the second safe rule (docs/solver.md): not
    safe by their needs, but every card that could be placed on them is up or lies face
    down where it goes up the moment it is turned. Computed here from the rules, apart
    from the solver's code."""
    data = parse_position(position)
    if data.rules.take_back:
        return []
    needs = safe_needs(data.rules)
    builders = BUILDERS[data.rules.variant]
    found = data.foundations
    face_down = {c for col, n in zip(data.columns, data.face_down, strict=True) for c in col[:n]}

    def by_needs(x: int) -> bool:
        need = needs[x]
        return need is not None and all(found[k] >= need[k] for k in range(4))

    def goes_up_when_turned(x: int) -> bool:
        return x in face_down and found[x // 13] == x % 13 and by_needs(x)

    out = []
    for col in data.columns:
        if col and found[col[-1] // 13] == col[-1] % 13 and not by_needs(col[-1]):
            t = col[-1]
            if all(found[b // 13] > b % 13 or goes_up_when_turned(b) for b in builders[t]):
                out.append(CARD_TEXT[t])
    return out


def test_a_card_whose_builders_go_up_when_turned_goes_up_at_once() -> None:
    """3S is not safe by its needs (2H is not up), but 2H lies face down, its black aces
    are up, so it goes up the moment it is turned and can never be placed on 3S."""
    spades, hearts = "QSJSTS9S8S7S6S5S4S", "KHQHJHTH9H8H7H6H5H4H3H"
    position = f"C 2AKK 3S/2hKS/{spades}/{hearts}///"
    assert placed_only_to_go_up(position) == ["3S"]
    solution = solve(position)
    assert solution.verdict == "won"
    assert solution.moves[0] == "3S>F"
    assert replay(position, solution.moves).is_won()
    # 2H face up: the block from 2H may be placed on 3S, so 3S waits.
    face_up = f"C 2AKK 3S/2HKS/{spades}/{hearts}///"
    assert placed_only_to_go_up(face_up) == []
    assert solve(face_up).moves[0] != "3S>F"


@pytest.mark.parametrize("rules", ["C", "CG"])
def test_two_optional_foundation_moves_may_both_come_before_the_move_that_uses_them(
    rules: str,
) -> None:
    """Why optional foundation moves cannot each be put off until just before a move
    that depends on them (docs/solver.md, "Postponed foundation moves, tried"): the only
    moves are TS>F (not safe: 9H is down) and TD>F (not safe: 9C is down), and after
    either the only move is the other, which does not depend on it (another suit, another
    column). Only then does 8H, turned up by the first, go onto 9C, uncovered by the
    second; and the deal is won."""
    position = f"{rules} 9697 9h8c7h8hTS/9CTD/kskhkdkcqsqhqdqcjsjhjdjcthTC////"
    game = Game.from_position(position)
    assert sorted(game.legal_moves()) == ["TD>F", "TS>F"]
    for first, second in (("TS>F", "TD>F"), ("TD>F", "TS>F")):
        after = game.copy()
        after.play(first)
        assert after.legal_moves() == [second]
    assert exhaustive(position, 100_000) == "won"
    solution = solve(position)
    assert solution.verdict == "won"
    assert set(solution.moves[:2]) == {"TS>F", "TD>F"} and solution.moves[2] == "8H>2"
    assert replay(position, solution.moves).is_won()


@pytest.mark.slow
def test_postponed_foundation_moves_in_runs_never_lose_a_win() -> None:
    """The form of postponed foundation moves that docs/solver.md proves ("Postponed
    foundation moves, tried"): on random small positions of every rule set, a search that
    makes an optional foundation move only within a run that a later move uses gives the
    verdict of a search of every move (bench.lazy_foundations, not part of the solver)."""
    rnd = random.Random(32)
    compared = lost = 0
    while compared < 1_000:
        position = lazy_foundations.small_position(rnd)
        plain = lazy_foundations.reach(position, "all", cap=20_000, dead_ends=False)
        if plain.verdict is None:
            continue
        runs = lazy_foundations.reach(position, "runs", cap=100_000, dead_ends=False)
        assert runs.verdict == plain.verdict, position
        compared += 1
        lost += not plain.verdict
    assert lost >= 10


@pytest.mark.slow
def test_verdicts_stay_right_where_the_second_safe_rule_applies() -> None:
    """Small positions where the second safe rule sends a card up at once: the verdict is
    the plain exhaustive search's, every winning line replays, and the card goes up
    before any other move is made."""
    rnd = random.Random(30)
    rules = [r for r in ALL_RULES if "T" not in r]
    checked = won = 0
    while checked < 40:
        position = small_position(rnd, rnd.choice(rules), rnd.randint(4, 9))
        tops = placed_only_to_go_up(position)
        if not tops:
            continue
        expected = exhaustive(position, 2_000)
        if expected is None:
            continue
        solution = solve(position)
        assert solution.verdict == expected, position
        if expected == "won":
            won += 1
            assert replay(position, solution.moves).is_won()
            first = list(itertools.takewhile(lambda m: m.endswith(">F"), solution.moves))
            assert {f"{t}>F" for t in tops} <= set(first), (position, solution.moves)
        checked += 1
    assert won >= 10


# -- the dead-end test ---------------------------------------------------------------------


def test_a_seat_above_in_the_same_pile_is_no_way_out() -> None:
    """TH must go up next, under JC and QH. JC's only seat left is QH, above it in its own
    pile, and TH's is JC: neither can use it while it moves with them. QH could leave
    only onto KC, under TH. The dead-end test sees it only with its own-pile rule."""
    position = "C K9KT ///KCTHJCQH/KH/qcJH/"
    assert exhaustive(position, 1_000) == "lost"
    state = search._State(parse_position(position))
    assert search._hopeless(state)
    assert not search._hopeless(state, own_pile=False)
    assert solve(position).verdict == "lost"


def check_dead_ends_are_lost(rnd: random.Random, rules: str, cards: int) -> int:
    """Every position reachable from a small random one that the dead-end test calls
    hopeless has no win (by the plain search of every reachable position); the count
    of those positions."""
    position = small_position(rnd, rules, cards)
    wins = winnable_positions(position, 400)
    if wins is None:
        return 0
    dead = 0
    for text, won in wins.items():
        if search._hopeless(search._State(parse_position(text))):
            assert not won, text
            dead += 1
    return dead


def test_the_dead_end_test_finds_only_lost_positions() -> None:
    """Small random positions the dead-end test calls hopeless: the plain search of every
    position reachable with the engine's moves finds no win from any of them."""
    rnd = random.Random(31)
    checked = own_pile = 0
    while checked < 40:
        position = small_position(rnd, rnd.choice(ALL_RULES), rnd.randint(4, 9))
        state = search._State(parse_position(position))
        if not search._hopeless(state):
            continue
        verdict = exhaustive(position, 3_000)
        if verdict is None:
            continue
        assert verdict == "lost", position
        checked += 1
        own_pile += not search._hopeless(state, own_pile=False)
    assert own_pile > 0  # some of them only by the own-pile rule


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(rules=rules_fields, rnd=randoms, cards=st.integers(min_value=8, max_value=14))
def test_the_dead_end_test_finds_only_lost_positions_at_random(
    rules: str, rnd: random.Random, cards: int
) -> None:
    """Every position reachable from a random one (with 8 to 14 cards left, where dead
    ends occur) that the test calls hopeless, against the plain search."""
    check_dead_ends_are_lost(rnd, rules, cards)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_the_own_pile_rule_changes_no_verdict(deal: int, rules: str, rnd: random.Random) -> None:
    """The Python search with the dead-end test's own-pile rule and without it, from the
    middle of random games and on small positions: never won against lost, and every
    winning line replays."""
    game = walk(Game.from_deal(deal, rules), rnd, rnd.randrange(20, 140))
    for position in (game.position(), small_position(rnd, rules, rnd.randint(5, 10))):
        verdicts = []
        for own_pile in (True, False):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(search, "_CORE", None)
                # the search looks the test up in its own module (solver/dfs.py)
                patch.setattr(
                    dfs, "_hopeless", functools.partial(search._hopeless, own_pile=own_pile)
                )
                solution = solve(position, budget_nodes=30_000)
            if solution.verdict == "won":
                assert replay(position, solution.moves).is_won()
            verdicts.append(solution.verdict)
        assert set(verdicts) != {"won", "lost"}, position


# -- sleep sets and frozen blocks ------------------------------------------------------------


def complete_search(position: str, *, sleep: bool, cap: int) -> tuple[bool | None, int, set[int]]:
    """The Python complete search alone from ``position``, with or without sleep sets and
    frozen blocks: its verdict (None when ``cap`` nodes run out), its node count and the
    keys it proved lost."""
    proven: set[int] = set()
    state = search._State(parse_position(position))
    generator = search._search(state, 53, 0, cap, proven, sleep=sleep)
    try:
        nodes = next(generator)
    except StopIteration as end:
        result, nodes = end.value
        return result, nodes, proven
    return None, nodes, proven


def winnable_keys(position: str, limit: int) -> dict[int, bool] | None:
    """Every position reachable from ``position`` by every legal move (``_State.legal``,
    which is the engine's ``legal_moves``; no safe moves, no pruning), by key, and whether
    a win is reachable from it; None beyond ``limit`` positions."""
    state = search._State(parse_position(position))
    children: dict[int, list[int]] = {state.key: []}
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
        child = state.key
        children[key].append(child)
        if child in children:
            state.undo(key)
            continue
        if len(children) >= limit:
            return None
        children[child] = []
        frames.append((child, state.legal(), 0))
    return _spread_wins(position, children)


def _spread_wins(position: str, children: dict[int, list[int]]) -> dict[int, bool]:
    """Which keys reach a won position (the one with no cards left), by fixpoint."""
    won_key = search._State(parse_position(position.split(" ")[0] + " KKKK //////")).key
    return reaching({key: key == won_key for key in children}, children)


def sleepy_position(rnd: random.Random) -> str:
    """A small position with most of its cards face up: room for moves on separate
    columns, which is where sleep sets and frozen blocks apply."""
    rules = rnd.choice(ALL_RULES)
    head, found, cols = small_position(rnd, rules, rnd.randint(8, 14)).split(" ")
    cols = "/".join(c.upper() if rnd.random() < 0.85 else c for c in cols.split("/"))
    return f"{head} {found} {cols}"


@pytest.mark.slow
def test_sleep_sets_and_frozen_blocks_prove_only_lost_positions() -> None:
    """On small positions where they skip moves, the search with sleep sets and frozen
    blocks gives the plain exhaustive search's verdict, and no position it proves lost
    can reach a win (every reachable position checked)."""
    rnd = random.Random(31)
    checked = lost = 0
    while checked < 5:
        position = sleepy_position(rnd)
        verdict, nodes, proven = complete_search(position, sleep=True, cap=1 << 40)
        plain, plain_nodes, _ = complete_search(position, sleep=False, cap=1 << 40)
        assert verdict == plain, position
        if nodes == plain_nodes:
            continue  # (most likely) nothing skipped: nothing more to check
        wins = winnable_keys(position, 30_000)
        if wins is None:
            continue
        assert verdict == wins[search._State(parse_position(position)).key], position
        assert not [key for key, won in wins.items() if won and key in proven], position
        checked += 1
        lost += not verdict
    assert lost


@settings(max_examples=25, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_sleep_sets_and_frozen_blocks_change_no_verdict(
    deal: int, rules: str, rnd: random.Random
) -> None:
    """The complete search with and without sleep sets and frozen blocks, from the middle
    of random games: never won against lost (both decide within the cap or one runs out;
    the search without them is the one tested against the plain search for a long time)."""
    game = walk(Game.from_deal(deal, rules), rnd, rnd.randrange(10, 120))
    position = game.position()
    verdict, _, _ = complete_search(position, sleep=True, cap=40_000)
    plain, _, _ = complete_search(position, sleep=False, cap=40_000)
    assert {verdict, plain} != {True, False}, position
