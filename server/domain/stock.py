"""The stock of proven-winnable secret deals: what a room with ``winnable`` is dealt from.

A quick race was once dealt a deal its own post-mortem called lost: both runners
resigned and their ratings moved on one move's difference (issue 40, item 4). So rated
and quick rooms, and any room with a random deal unless its host asks otherwise, are
dealt a deal the solver proved won, as the daily is. Proving takes the solver about a
millisecond for most deals and up to a second or so for a hard one, too long and too
uneven to do while a room is being opened; so a server keeps a stock of proven deals
per rule set, filled in the background, and a room takes one at once.

``DealStock`` is the stock's logic alone, sans-I/O and without a clock: it draws the
candidates (128-bit secret seeds, as any random deal), says which to prove next
(``wanted``), keeps those proven won (``proven``), and hands them out (``draw``). The
hub's ``Deals`` part asks the I/O layer to prove them (the ``Prove`` effect, on the
solver pool's lane of its own) and feeds the verdicts back. A seed leaves the stock only
to be dealt, once: the stock holds secrets, never codes anyone has seen
(docs/fairness.md).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from protocol import Game, GameCode, Rules
from solver import solve

__all__ = ["DealStock", "StockFigures", "prove"]


def prove(rules: str, seed: int | bytes, budget_nodes: int) -> str:
    """The solver's verdict on the deal (``won``, ``lost`` or ``unknown`` once
    ``budget_nodes`` positions are searched): CPU-bound, run in the solver's worker
    process (``server.runtime.solving``, the stock's lane). Only the verdict comes back:
    the line stays in the worker, as nothing needs it before the race is over."""
    game = Game.from_code(GameCode(Rules.parse(rules), seed))
    return solve(game, budget_nodes=budget_nodes).verdict


@dataclass(slots=True)
class StockFigures:
    """What the stock did since the server started (``/metrics``, the log)."""

    #: Candidates proven won (kept), and judged lost or unknown within the budget (dropped).
    won: int = 0
    dropped: int = 0
    #: Solver jobs that failed (a worker died, the server closing): retried on next need.
    failed: int = 0
    #: Deals handed out from the stock, and asks it could not answer (empty).
    drawn: int = 0
    empty: int = 0


class DealStock:
    """Proven-winnable seeds by rule set (``str(Rules)``), up to ``target`` each.

    ``random_seed`` draws a candidate (the hub's secret random deal). The stock keeps
    ``keep_rules`` rule sets at most, the most recently asked for first, so a server
    whose hosts ask for a rule set nobody else plays does not prove deals for it forever;
    ``always`` (the quick race's and the default rule set) are never let go. At most
    ``in_flight`` proofs are out at once: one lane's worker, kept busy without a queue
    long enough to delay a proof a room waits for.
    """

    def __init__(
        self,
        random_seed: Callable[[], int | bytes],
        *,
        target: int,
        always: tuple[str, ...] = ("C",),
        keep_rules: int = 8,
        in_flight: int = 2,
    ) -> None:
        self._random_seed = random_seed
        self.target = target
        self._always = frozenset(always)
        self._keep_rules = max(keep_rules, len(always))
        self._max_in_flight = in_flight
        self._seeds: OrderedDict[str, deque[int | bytes]] = OrderedDict(
            (r, deque()) for r in always
        )
        #: Candidates out for proof, by rule set (counted, not kept: a verdict names its own).
        self._proving: dict[str, int] = {}
        #: A proof failed (the solver's worker died, or the server is closing): no more
        #: candidates until a room asks again (``draw``), so a broken lane is not hammered.
        self.stalled = False
        self.figures = StockFigures()

    def size(self, rules: str | None = None) -> int:
        """Proven deals held for ``rules`` (every rule set together if None)."""
        if rules is not None:
            seeds = self._seeds.get(rules)
            return len(seeds) if seeds is not None else 0
        return sum(len(s) for s in self._seeds.values())

    @property
    def in_flight(self) -> int:
        """Candidates out for proof now."""
        return sum(self._proving.values())

    def rule_sets(self) -> tuple[str, ...]:
        """The rule sets stocked, the most recently asked for last."""
        return tuple(self._seeds)

    def draw(self, rules: str) -> int | bytes | None:
        """A proven seed for ``rules``, taken out of the stock (None: none held; the rule
        set is stocked from now on). Oldest first: no seed waits in the stock for ever."""
        seeds = self._seeds.get(rules)
        if seeds is None:
            seeds = self._seeds[rules] = deque()
            self._forget_rules()
        else:
            self._seeds.move_to_end(rules)
        self.stalled = False
        if not seeds:
            self.figures.empty += 1
            return None
        self.figures.drawn += 1
        return seeds.popleft()

    def wanted(self) -> list[tuple[str, int | bytes]]:
        """Fresh candidates to prove now, as ``(rules, seed)``, counted as out: the rule sets
        furthest below ``target`` first, while fewer than ``in_flight`` are out."""
        out: list[tuple[str, int | bytes]] = []
        while not self.stalled and self.in_flight < self._max_in_flight:
            short = [
                (len(s) + self._proving.get(r, 0), r)
                for r, s in self._seeds.items()
                if len(s) + self._proving.get(r, 0) < self.target
            ]
            if not short:
                break
            rules = min(short)[1]
            self._proving[rules] = self._proving.get(rules, 0) + 1
            out.append((rules, self._random_seed()))
        return out

    def proven(self, rules: str, seed: int | bytes, verdict: str) -> None:
        """The verdict on a candidate ``wanted`` gave out: ``won`` joins the stock (if its
        rule set is still stocked and not full), anything else is dropped; ``failed``: the
        solver could not run it (the stock stalls until the next ``draw``)."""
        held = self._proving.get(rules, 0)
        if held > 1:
            self._proving[rules] = held - 1
        else:
            self._proving.pop(rules, None)
        if verdict == "failed":
            self.figures.failed += 1
            self.stalled = True
            return
        seeds = self._seeds.get(rules)
        if verdict != "won" or seeds is None or len(seeds) >= self.target:
            self.figures.dropped += 1
            return
        self.figures.won += 1
        seeds.append(seed)

    def _forget_rules(self) -> None:
        """Past ``keep_rules`` rule sets, the one asked for least recently goes (never one of
        ``always``), with its proven seeds: they were never seen, so nothing is lost."""
        while len(self._seeds) > self._keep_rules:
            for rules in self._seeds:
                if rules not in self._always:
                    del self._seeds[rules]
                    break
            else:
                return
