"""Would postponed (lazy) optional foundation moves take positions out of a proof?

Run from the repository root::

    python -m bench.lazy_foundations --deals 1331 571 YU1-C-AAAAAAZ
    python -m bench.lazy_foundations --small 2000 --seed 7

An experiment, not part of the solver (docs/solver.md, "Postponed foundation moves,
tried"). It counts the positions a complete search must expand from a position: every
legal move of the engine (``_State.legal``), each followed by the solver's safe moves
(both rules of "Safe automatic foundation moves"), the dead-end test's positions as
leaves, positions told apart by the solver's key (the order of the columns ignored), and
no other reduction. Three ways to move:

* ``all``: every move;
* ``runs``: a foundation move that is left *optional* (no safe move follows it) must be
  followed, after at most a run of such foundation moves, by a move that depends on it;
  the move that ends the run must depend on every move of the run that no later move of
  the run depends on (the form the docs prove: it never loses a win);
* ``strict``: such a foundation move must be followed at once by a move that depends on
  it (false: see the docs' counterexample).

A move depends on the optional foundation move of ``X`` (which left ``U`` on top of its
column, or the column empty) when it sends ``U`` or the next card of ``X``'s suit up,
moves ``U`` (with what lies on it), goes onto ``U`` or into an empty column (when ``X``
emptied one), takes ``X`` back, or is followed by a safe move. The state of the search is
the position and the set of optional foundation moves still waiting for a move that uses
them. It prints, per deal and way, the verdict, the states and the distinct positions
expanded, the dead ends, and how many moves the rule refused. With ``--small`` it checks
on random small positions of every rule set that ``runs`` always gives the verdict of
``all`` (a win found by a plain search of every move) and counts where ``strict`` does
not. Pure Python, a few seconds per hundred thousand positions; it always exits 0.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

if __package__ in (None, ""):  # run as ``python bench/lazy_foundations.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol import Game, Rules
from protocol.position import format_position, parse_position
from solver import search

MODES = ("all", "runs", "strict")
RULE_SETS = [v + o for v in "CRSAM" for o in ("", "E", "G", "T", "EG", "ET", "GT", "EGT")]

#: An optional foundation move waiting for a move that uses it: (card, card it left on
#: top of its column, or -1 when it emptied the column).
Pending = frozenset[tuple[int, int]]


@dataclass
class Reach:
    verdict: bool | None  # won, lost, or None when ``cap`` states ran out
    states: int = 0  # (position, waiting moves) pairs reached
    positions: int = 0  # distinct positions expanded
    settled: int = 0  # of them, expanded with no optional foundation move waiting
    dead_ends: int = 0
    optional: int = 0  # optional foundation moves played (left waiting)
    refused: int = 0  # moves the rule did not allow
    seen: set[int] = field(default_factory=set, repr=False)
    seen_settled: set[int] = field(default_factory=set, repr=False)

    def ended(self, verdict: bool | None, states: int) -> Reach:
        """The search ended with ``verdict`` after ``states`` states: its counts, set."""
        self.verdict, self.states = verdict, states
        self.positions, self.settled = len(self.seen), len(self.seen_settled)
        return self


def safe_moves(state: search._State) -> int:
    """Play the solver's safe foundation moves until none is left; how many."""
    needs = [(99, 99, 99, 99) if n is None else n for n in state.needs]
    found, loc = state.found, state.loc

    def by_needs(t: int) -> bool:
        return all(found[s] >= needs[t][s] for s in range(4))

    def safe(t: int) -> bool:
        if by_needs(t):
            return True
        if state.take_back:
            return False
        for b in state.builders[t]:
            if loc[b] == 7:
                continue
            if loc[b] == 8 and found[b // 13] == b % 13 and by_needs(b):
                continue
            return False
        return True

    played = 0
    again = True
    while again:
        again = False
        for col in state.cols:
            if col:
                t = col[-1]
                if found[t // 13] == t % 13 and safe(t):
                    state.play(t, 7)
                    played += 1
                    again = True
    return played


def uses(state: search._State, card: int, dest: int, waiting: tuple[int, int]) -> bool:
    """Does the tableau move or take-back ``card`` to ``dest`` depend on ``waiting``?"""
    x, u = waiting
    src = state.loc[card]
    if src == 7 and card == x:
        return True  # takes X back
    if u < 0:
        return dest < 7 and not state.cols[dest]  # into an empty column
    lu = state.loc[u]
    return src == lu or dest == lu  # moves U, or goes onto it


def reach(position: str, mode: str, cap: int = 10_000_000, dead_ends: bool = True) -> Reach:
    """Every state reachable from ``position`` under ``mode`` (see the module's text)."""
    state = search._State(parse_position(position))
    safe_moves(state)
    out = Reach(None)
    if state.up == 52:
        out.verdict = True
        return out
    if dead_ends and search._hopeless(state):
        out.verdict, out.dead_ends = False, 1
        return out
    seen: set[tuple[int, Pending]] = {(state.key, frozenset())}
    positions = out.seen
    positions.add(state.key)
    out.seen_settled.add(state.key)
    frames: list[tuple[int, Pending, list[tuple[int, int]], int, int]] = [
        (state.key, frozenset(), state.legal(), 0, len(state.journal))
    ]
    while frames:
        key, pending, moves, i, length = frames[-1]
        while len(state.journal) > length:
            state.undo(key)
        state.key = key
        if i == len(moves):
            frames.pop()
            continue
        frames[-1] = (key, pending, moves, i + 1, length)
        card, dest = moves[i]
        src = state.loc[card]
        allowed = True
        if mode != "all" and dest != 7:
            allowed = all(uses(state, card, dest, w) for w in pending)
        left = -1
        if dest == 7:
            col = state.cols[src]
            left = col[-2] if len(col) > 1 else -1
        state.play(card, dest)
        after = safe_moves(state)
        if state.up == 52:
            return out.ended(True, len(seen))
        now: Pending = frozenset()
        if mode != "all" and not after:
            if dest == 7:
                rest = [
                    (x, u)
                    for x, u in pending
                    if card != u and not (card // 13 == x // 13 and card % 13 == x % 13 + 1)
                ]
                if mode == "strict" and len(rest) == len(pending) > 0:
                    out.refused += 1
                    continue
                now = frozenset([*rest, (card, left)])
                out.optional += 1
            elif not allowed:
                out.refused += 1
                continue
        entry = (state.key, now)
        if entry in seen:
            continue
        seen.add(entry)
        if dead_ends and search._hopeless(state):
            out.dead_ends += 1
            continue
        positions.add(state.key)
        if not now:
            out.seen_settled.add(state.key)
        if len(seen) > cap:
            return out.ended(None, len(seen))
        frames.append((state.key, now, state.legal(), 0, len(state.journal)))
    return out.ended(False, len(seen))


def deal_small(rnd: random.Random, rules: str, cards: int, down: Callable[[list[int]], int]) -> str:
    """A valid position of ``rules`` with ``cards`` cards left in the tableau, dealt at random
    into the seven columns; ``down`` says how many of a column's cards lie face down (the
    bench and the solver's tests want different mixes; the dealing is shared)."""
    heights = [0, 0, 0, 0]
    for _ in range(52 - cards):
        heights[rnd.choice([s for s in range(4) if heights[s] < 13])] += 1
    left = [s * 13 + r for s in range(4) for r in range(heights[s], 13)]
    rnd.shuffle(left)
    columns: list[list[int]] = [[] for _ in range(7)]
    for card in left:
        columns[rnd.randrange(7)].append(card)
    return format_position(Rules.parse(rules), heights, columns, [down(c) for c in columns])


def small_position(rnd: random.Random) -> str:
    """A random small position of a random rule set: 6 to 14 cards in the tableau, often
    one or two face up on face-down cards (optional foundation moves that turn cards)."""
    rules = rnd.choice(RULE_SETS)
    cards = rnd.randint(6, 14)
    return deal_small(
        rnd, rules, cards, lambda column: max(0, len(column) - rnd.choice([1, 1, 2, len(column)]))
    )


def check_small(count: int, seed: int) -> None:
    rnd = random.Random(seed)
    compared = lost = strict_wrong = 0
    for _ in range(count):
        position = small_position(rnd)
        plain = reach(position, "all", cap=20_000, dead_ends=False)
        if plain.verdict is None:
            continue
        compared += 1
        lost += not plain.verdict
        runs = reach(position, "runs", cap=100_000, dead_ends=False)
        if runs.verdict != plain.verdict:
            print(f"runs DISAGREE: {position}: {plain.verdict} against {runs.verdict}")
        strict = reach(position, "strict", cap=100_000, dead_ends=False)
        if strict.verdict != plain.verdict:
            strict_wrong += 1
            print(f"strict loses a win: {position}")
    print(f"{compared} small positions compared ({lost} lost), strict wrong on {strict_wrong}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", nargs="*", default=[], help="winnability indexes or codes")
    parser.add_argument("--rules", default="C", help="rules of the winnability indexes")
    parser.add_argument("--modes", default="all,runs", help="of: " + ", ".join(MODES))
    parser.add_argument("--cap", type=int, default=10_000_000, help="states at most")
    parser.add_argument("--small", type=int, default=0, help="random small positions")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    from bench.winnability import deal_code

    for deal in args.deals:
        code = deal if deal.startswith("YU1-") else deal_code(args.rules, int(deal))
        position = Game.from_code(code).position()
        for mode in args.modes.split(","):
            start = time.process_time()
            r = reach(position, mode, cap=args.cap)
            verdict = {True: "won", False: "lost", None: "unknown"}[r.verdict]
            print(
                f"{deal} {mode:6} {verdict:7} positions {r.positions:,} (settled {r.settled:,})"
                f" states {r.states:,}"
                f" dead ends {r.dead_ends:,} optional {r.optional:,} refused {r.refused:,}"
                f" ({time.process_time() - start:.1f} s CPU)",
                flush=True,
            )
    if args.small:
        check_small(args.small, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
