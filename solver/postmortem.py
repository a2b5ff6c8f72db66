"""The solver's post-mortem of one finished run: where a lost run lost the deal, and what
a won run wasted.

A run is a deal (its game code) and the actions a player's race accepted, in order: move
texts and ``undo``. The post-mortem follows the run as it was played:

* The moves still standing at the end (every move not taken back by a later undo) form
  one line from the deal to the final position. Along one line, a position that can be
  won makes every position before it winnable too (the next move of the line leads to
  it), so the winnable positions of the line are a prefix, and a binary search over it
  finds the last one with about log2(n) solves. The move after it is **the move that
  lost the deal**: it was never taken back, so every position of the run after it lies
  beyond it and is lost, and the run's position just before it was winnable. So it is
  also the last moment of the whole run at which a win was left, undos included (a
  player who undid a losing move and won the position back is judged on what came
  after).
* A run that won is measured against ``par``: its own line without wasted moves (loops,
  moves that ``par`` drops, and every move taken back), and the deal's par, the solver's
  line from the start without its waste.

Every solve has a node budget (the server uses the hints' budget), so the answer is the
same on every machine, and a solve the budget cannot decide is never guessed at: the
answer is then ``unknown``, with the bounds that were decided. What the first budget
leaves undecided is tried again with larger ones (``ROUNDS``), up to a total of
``TOTAL_FACTOR`` times the budget in all, and every solve of one post-mortem shares the
positions proven lost (``solve(..., proven=)``): a deal's proof is not started again
from nothing for each position of its line. Pure code, like the rest
of ``solver``: no I/O, no clock; the server runs it in a worker process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from protocol import Game, UndoError

from .search import Solution, kept_moves, par, proven_set, solve

__all__ = [
    "PostMortem",
    "Status",
    "STATUSES",
    "postmortem",
    "kept_moves",
    "MAX_SOLVES",
    "ROUNDS",
    "TOTAL_FACTOR",
]

#: What a post-mortem can say of a run.
Status = Literal["won", "lost", "open", "unwinnable", "unknown"]
STATUSES: tuple[str, ...] = ("won", "lost", "open", "unwinnable", "unknown")

#: Most solves one post-mortem makes: the deal, the last position, and a binary search
#: over the line (8 solves for a line of 256 moves), with a few to spare for positions
#: the budget cannot decide, which are stepped around, and for solving those again with
#: a larger budget (``ROUNDS``).
MAX_SOLVES = 24
#: The budgets of the rounds, as multiples of ``budget_nodes``: a round solves again, with
#: its larger budget, only the positions the rounds before left undecided.
ROUNDS = (1, 8, 40)
#: The positions all the solves of one post-mortem may search together, as a multiple of
#: ``budget_nodes`` (so the worst case, bench/postmortem.py: 4 million positions at the
#: server's 100,000, one to two seconds with the C search).
TOTAL_FACTOR = 40


@dataclass(frozen=True, slots=True)
class PostMortem:
    """What the solver says of a run (numbers count the run's actions, undos included;
    action 1 is the first, and "after action 0" is the deal as dealt).

    * ``won``: the run won. ``par`` is the deal's par (None if the solver could not win
      the deal within its budget), ``kept`` the length of the run's own line without
      waste, ``wasted`` the numbers of the run's moves that were wasted (taken back, or
      dropped by ``par`` from its line).
    * ``lost``: the deal could be won until after action ``last_winnable``; action
      ``last_winnable + 1``, the move ``losing_move``, left no win, and ``line`` wins
      from the position before it.
    * ``open``: the run ended (resigned, out of time, abandoned) in a position that could
      still be won: ``line`` wins from it.
    * ``unwinnable``: the deal could not be won at all (proven by the solver).
    * ``unknown``: the solver could not decide within its budget. ``last_winnable`` and
      ``lost_from`` are the bounds that were decided, if any: a win was left after action
      ``last_winnable``, none after action ``lost_from``.
    """

    status: Status
    last_winnable: int | None = None
    losing_move: str | None = None
    lost_from: int | None = None
    line: tuple[str, ...] = ()
    par: int | None = None
    kept: int | None = None
    wasted: tuple[int, ...] = ()
    #: Solves made and positions searched, over all of them (for benchmarks and logs).
    solves: int = 0
    nodes: int = 0


@dataclass(frozen=True, slots=True)
class _Line:
    """The run's moves still standing at its end: ``positions[j]`` is the position after
    ``j`` of them (0: the deal), reached at action ``actions[j]`` (0 for the deal)."""

    positions: tuple[str, ...]
    actions: tuple[int, ...]
    moves: tuple[str, ...]
    won: bool


def _standing_line(code: str, run: Sequence[str]) -> _Line:
    """Replay ``run`` on the deal ``code``; ``ValueError`` if an action is not legal."""
    game = Game.from_code(code)
    positions = [game.position()]
    actions = [0]
    moves: list[str] = []
    for n, action in enumerate(run, start=1):
        if action == "undo":
            try:
                game.undo()
            except UndoError as exc:
                raise ValueError(f"action {n}: {exc}") from None
            if len(positions) > 1:
                positions.pop()
                actions.pop()
                moves.pop()
            continue
        played = game.play(action)  # raises a ValueError subclass for a bad move
        positions.append(game.position())
        actions.append(n)
        moves.append(played.move)
    return _Line(tuple(positions), tuple(actions), tuple(moves), game.is_won())


class _Solver:
    """Solves positions of the line within the round's budget, the cap on solves and the
    total of positions, sharing the positions proven lost between all its solves.

    A position is solved once per round at most: a decided verdict is kept for good, an
    ``unknown`` one only until the next round (``next_round``), which may decide it with
    its larger budget."""

    def __init__(self, line: _Line, budget_nodes: int, max_solves: int, total: int) -> None:
        self.line = line
        self.budget = budget_nodes
        self.max_solves = max_solves
        self.total = total
        self.known: dict[int, Solution] = {}
        self.solves = 0
        self.nodes = 0
        self.proven = proven_set()

    def can_solve(self) -> bool:
        return self.solves < self.max_solves and self.nodes < self.total

    def next_round(self, budget_nodes: int) -> bool:
        """Forget the unknown verdicts, to be solved again with ``budget_nodes`` (at most
        what is left of the total); False if nothing is left to do it with."""
        self.budget = min(budget_nodes, self.total - self.nodes)
        self.known = {j: s for j, s in self.known.items() if s.verdict != "unknown"}
        return self.budget > 0 and self.can_solve()

    def __call__(self, j: int) -> Solution:
        found = self.known.get(j)
        if found is None:
            budget = max(1, min(self.budget, self.total - self.nodes))
            found = solve(self.line.positions[j], budget_nodes=budget, proven=self.proven)
            self.known[j] = found
            self.solves += 1
            self.nodes += found.nodes
        return found


def postmortem(
    code: str,
    run: Sequence[str],
    *,
    budget_nodes: int,
    max_solves: int = MAX_SOLVES,
    total_nodes: int | None = None,
) -> PostMortem:
    """The post-mortem of the run ``run`` (move texts and ``undo``) on the deal ``code``.

    Each solve of the first round searches at most ``budget_nodes`` positions; what it
    leaves undecided is solved again in later rounds with ``ROUNDS`` times as many. At
    most ``max_solves`` solves are made, searching at most ``total_nodes`` positions in
    all (default ``TOTAL_FACTOR * budget_nodes``); what they cannot decide is
    ``unknown``. Raises ``ValueError`` when the run does not replay on the deal.
    """
    line = _standing_line(code, run)
    total = TOTAL_FACTOR * budget_nodes if total_nodes is None else total_nodes
    solver = _Solver(line, budget_nodes, max_solves, total)
    if line.won:
        return _won(code, line, run, solver)
    answer = _lost(line, solver)
    for factor in ROUNDS[1:]:
        if answer.status != "unknown" or not solver.next_round(factor * budget_nodes):
            break
        answer = _lost(line, solver)
    return _done(solver, answer)


def _lost(line: _Line, solver: _Solver) -> PostMortem:
    """A run that did not win, judged with what ``solver`` can decide in this round."""
    end = len(line.positions) - 1
    last = solver(end)
    if last.verdict == "won":
        return PostMortem("open", line=last.moves)
    first = solver(0)
    if first.verdict == "lost":
        return PostMortem("unwinnable", lost_from=0)
    # Find where along the line the win was lost: ``lo`` is the latest position known to
    # be winnable, ``hi`` the earliest known lost (None while not known). A position the
    # budget cannot decide is stepped around: any winnable one later, or lost one
    # earlier, decides as much (winnable positions are a prefix of the line).
    lo: int | None = 0 if first.verdict == "won" else None
    hi: int | None = end if last.verdict == "lost" else None
    undecided = {j for j in (0, end) if solver(j).verdict == "unknown"}
    while lo is None or hi is None or hi - lo > 1:
        low = -1 if lo is None else lo
        high = end + 1 if hi is None else hi
        choices = [j for j in range(low + 1, high) if j not in undecided]
        if not choices or not solver.can_solve():
            return PostMortem(
                "unknown",
                last_winnable=None if lo is None else line.actions[lo],
                lost_from=None if hi is None else line.actions[hi],
            )
        middle = (low + high) // 2
        j = min(choices, key=lambda k: (abs(k - middle), k))
        verdict = solver(j).verdict
        if verdict == "won":
            lo = j
        elif verdict == "lost":
            hi = j
        else:
            undecided.add(j)
    return PostMortem(
        "lost",
        last_winnable=line.actions[hi] - 1,
        losing_move=line.moves[hi - 1],
        line=solver(lo).moves,
    )


def _won(code: str, line: _Line, run: Sequence[str], solver: _Solver) -> PostMortem:
    """A won run: its waste against its own par, and the deal's par."""
    kept = kept_moves(line.moves, line.positions[0])
    kept_actions = {line.actions[i + 1] for i in kept}
    wasted = tuple(
        n for n, action in enumerate(run, start=1) if action != "undo" and n not in kept_actions
    )
    deal = solver(0)
    deal_par = len(par(deal.moves, deal.position)) if deal.verdict == "won" else None
    return _done(solver, PostMortem("won", par=deal_par, kept=len(kept), wasted=wasted))


def _done(solver: _Solver, answer: PostMortem) -> PostMortem:
    return replace(answer, solves=solver.solves, nodes=solver.nodes)
