"""A Yukon solver that knows every card: won (with the line), lost (proven) or unknown.

Pure code beside the engine: no I/O, no clock of its own (``solve`` takes one as
``clock=``), no threads. The search loop (``_search``, ``_hopeless``) also exists in C,
node for node the same (``solver/_solvercore.c``, optional; ``_CORE``), and ``solve``
runs that one wherever it was built. ``docs/solver.md`` explains the techniques; in short:

* **Layout.** Seven lists of card indices, a list ``loc`` telling where each card is
  (0-6 face up in that column, 7 on its foundation, 8 face down), foundation heights and
  face-down counts, changed in place by a move and restored from its undo record.
* **Transposition table** on a 64-bit Zobrist key kept up to date move by move. Each
  tableau card contributes a random number chosen by (card, the card it lies on or
  "bottom", face up or down); a card on its foundation contributes another. The
  columns are the chains of that "lies on" relation, so the key does not depend on the
  order of the columns, and a move changes one or two of its terms.
* **Safe automatic foundation moves**, per variant and option (``safe_needs``), and,
  without take-back, also a card whose builders are all up or lie face down where they
  go up the moment they are turned (``safe`` in ``_search``).
* **Move ordering**: turning a card up first, then uncovering cards that can go up,
  foundation moves, emptying a column, uncovering a card something can go on; the rest
  last. Moves that only relabel columns are never made, nor a second move of the block
  just moved (the parent makes that move in one). Complete searches also skip plain
  moves whose child is reached another way along a chain of plain moves (sleep sets and
  frozen blocks): fewer moves between the same positions.
* **Dead ends**: a least-fixpoint test of necessary conditions proves many positions
  lost on the spot (``_hopeless``).
* **Two searches share the budget**: a complete depth-first search, which alone can
  prove a deal lost, and restarted short searches with perturbed move orders, half of
  them narrowed to chains of moves that each use what the one before uncovered, which
  find most wins in a few hundred positions. They share the positions proven lost: dead
  ends, and the strongly connected components a complete search has finished (Tarjan).

The modules: ``state.py`` (the layout, keys, safe moves), ``deadends.py`` (``_hopeless``),
``dfs.py`` (``_search``), ``par.py`` (``par``, ``kept_moves``); this one schedules the
searches (``solve``) and offers every public name.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Literal

from protocol.game import Game
from protocol.moves import MOVE_TEXT
from protocol.position import PositionData

# The private names below are re-exported (``x as x``) for the tools and tests that reach
# into the search as ``solver.search._State`` and so on, as before the split.
from .deadends import (
    _hopeless as _hopeless,
)
from .dfs import (
    _EMPTY as _EMPTY,
)
from .dfs import (
    _FLIP as _FLIP,
)
from .dfs import (
    _JITTER as _JITTER,
)
from .dfs import (
    _JOIN as _JOIN,
)
from .dfs import (
    _UP as _UP,
)
from .dfs import (
    _jitter as _jitter,
)
from .dfs import (
    _search as _search,
)
from .par import kept_moves, par
from .state import (
    _BOTTOM as _BOTTOM,
)
from .state import (
    _DOWN as _DOWN,
)
from .state import (
    _FOUND as _FOUND,
)
from .state import (
    _ZDOWN as _ZDOWN,
)
from .state import (
    _ZFOUND as _ZFOUND,
)
from .state import (
    _ZUP as _ZUP,
)
from .state import (
    _canonical as _canonical,
)
from .state import (
    _data as _data,
)
from .state import (
    _Proven as _Proven,
)
from .state import (
    _splitmix as _splitmix,
)
from .state import (
    _State as _State,
)
from .state import (
    _text_of as _text_of,
)
from .state import canonical_key, safe_needs, solver_moves, zobrist_key

__all__ = [
    "Solution",
    "Verdict",
    "solve",
    "par",
    "kept_moves",
    "canonical_key",
    "zobrist_key",
    "solver_moves",
    "safe_needs",
    "search_implementation",
    "proven_set",
]

Verdict = Literal["won", "lost", "unknown"]

#: The compiled search (``solver/_solvercore.c``, built by setup.py where a C compiler
#: is found), or None: then the same search runs in Python, only slower.
_CORE: ModuleType | None
try:
    from . import _solvercore
except ImportError:  # pragma: no cover - depends on the build
    _CORE = None
else:
    _CORE = _solvercore

#: Node cap of the first run of the quick pass; each restart doubles it.
_FIRST_RUN = 4000
#: Nodes a search runs before the other one gets its turn (see ``solve``).
_SLICE = 2048
#: The proof's slices per slice of the finder once the narrowed finder has searched its
#: whole space without a win: the deal is then most likely lost, which only the proof can
#: show (2 before that).
_LATE_PROOF_SLICES = 8
#: Sleep sets and frozen blocks in complete searches (``_search``, docs/solver.md); off,
#: the search as it was before them (for comparisons and tests).
_SLEEP_SETS = True


@dataclass(frozen=True, slots=True)
class Solution:
    """What ``solve`` found.

    ``moves`` is the winning line in canonical move notation (empty unless ``won``); it
    replays with ``Game.play`` from ``position``, the starting position.

    ``best`` is, for ``unknown``, the line to the most advanced position the searches
    reached (most cards on the foundations, then fewest face down; not known to win, and
    never a dead end the searches proved lost): its first move is the best guess there
    is when the budget runs out (a hint's ``best`` answer). For ``won`` it is ``moves``;
    for ``lost``, and where no search got past the start, it is empty.
    """

    verdict: Verdict
    moves: tuple[str, ...]
    nodes: int
    seconds: float
    position: str
    best: tuple[str, ...] = ()


def proven_set() -> _Proven:
    """A fresh set of positions proven lost for ``solve(..., proven=)``: a
    ``_solvercore.ProvenSet`` where the C search is built, else a ``set``."""
    return _CORE.ProvenSet() if _CORE is not None else set()


def search_implementation() -> Literal["C", "Python"]:
    """Which search ``solve`` runs: the compiled one, or the same search in Python."""
    return "C" if _CORE is not None else "Python"


# -- the schedule of searches --------------------------------------------------------------


class _Run:
    """One depth-first search from the start, advanced a slice of nodes at a time.

    It runs the compiled search when the optional C extension is built (``_CORE``), else
    the generator ``_search``: node for node the same search, so the same budget gives
    the same verdict either way (tests/solver/test_solvercore.py). ``proven`` is a
    ``set`` or a ``_solvercore.ProvenSet``: the C search takes nothing else.
    """

    __slots__ = ("state", "complete", "seed", "proven", "search", "core", "nodes", "result")

    def __init__(self, data: PositionData, *, complete: bool, seed: int, proven: _Proven) -> None:
        self.state = _State(data)
        self.complete = complete
        self.seed = seed
        self.proven = proven
        self.search: Generator[int, int, tuple[bool, int]] | None = None
        self.core: _solvercore.Search | None = None
        self.nodes = 0
        self.result: bool | None = None

    def best(self) -> tuple[int, list[tuple[int, int, int, int, int]]]:
        """The score and journal of the most advanced position this search reached."""
        if self.core is not None:
            return self.core.best_score, self.core.best()
        return self.state.best_score, self.state.best

    def advance(self, stop: int) -> None:
        """Search on until about ``stop`` nodes in all, or the end (then ``result``)."""
        if self.result is not None:
            return
        if _CORE is not None:
            if self.core is None:
                self.core = _CORE.Search(
                    self.state,
                    53 if self.complete else 0,
                    self.proven,
                    _jitter(self.seed),
                    sleep=_SLEEP_SETS,
                )
            self.nodes = self.core.advance(stop)
            if self.core.result is not None:
                self.result = self.core.result
                self.state.journal[:] = self.core.journal()  # the line, after a win
            return
        try:
            if self.search is None:
                self.search = _search(
                    self.state,
                    53 if self.complete else 0,
                    self.seed,
                    stop,
                    self.proven,
                    sleep=_SLEEP_SETS,
                )
                self.nodes = next(self.search)
            else:
                self.nodes = self.search.send(stop)
        except StopIteration as end:
            self.result, self.nodes = end.value


def solve(
    game_or_position: Game | str,
    *,
    budget_nodes: int | None = None,
    budget_seconds: float | None = None,
    clock: Callable[[], float] | None = None,
    proven: _Proven | None = None,
) -> Solution:
    """Decide a position whose cards are all known: won (with a line), lost, or unknown.

    ``game_or_position``: a ``Game``, position notation or a game code. A view with ``??``
    cards raises ``ValueError``. ``budget_nodes`` caps the positions searched;
    ``budget_seconds`` caps the time as measured by ``clock`` (required with it, e.g.
    ``time.perf_counter``). With no budget at all the search runs until it is decided.
    ``seconds`` in the result is measured with ``clock`` (0.0 without one).

    ``proven`` (from ``proven_set()``) keeps the positions proven lost across solves of
    positions of the same rules: each solve adds what it proves, and later ones skip it
    (``solver.postmortem`` shares one between the solves along a run). Lost is a property
    of the position, whatever search proved it, so the verdicts stay proofs; only the
    node counts change.
    """
    data = _data(game_or_position)
    if budget_seconds is not None and clock is None:
        raise ValueError("budget_seconds needs a clock, e.g. clock=time.perf_counter")
    start_text = _text_of(data)
    t0 = clock() if clock is not None else 0.0
    deadline = t0 + budget_seconds if budget_seconds is not None else None
    cap = budget_nodes if budget_nodes is not None else 1 << 62

    def elapsed() -> float:
        return clock() - t0 if clock is not None else 0.0

    # Two searches share the budget, a slice of nodes at a time (docs/solver.md):
    # * the proof: one complete search (every move), which alone can prove a deal lost;
    # * the finder: short restarted runs with twice the node cap each time and a
    #   perturbed move order, alternately narrowed to chains (each move using what the
    #   one before uncovered: fast, but it proves nothing) and complete.
    # The finder's first run goes alone: it wins most deals within a few thousand nodes.
    # positions known to be lost, shared by all the searches (kept in C with the C search)
    if proven is None:
        proven = proven_set()
    proof = _Run(data, complete=True, seed=0, proven=proven)
    finder = _Run(data, complete=False, seed=0, proven=proven)
    finder_cap = _FIRST_RUN
    finder_done = 0  # nodes of the finder's finished runs
    narrow_exhausted = False
    run = 0
    result: bool | None = None
    winner = finder
    # the most advanced position of the finder's finished runs (score, journal)
    best: tuple[int, list[tuple[int, int, int, int, int]]] = (-1, [])
    finder.advance(min(finder_cap, cap))
    while True:
        if finder.result is True or (finder.result is False and finder.complete):
            result = finder.result
            winner = finder
            break
        if proof.result is not None:
            result = proof.result
            winner = proof
            break
        nodes = proof.nodes + finder_done + finder.nodes
        if nodes >= cap or (deadline is not None and clock is not None and clock() >= deadline):
            break
        if finder.result is False or finder.nodes >= finder_cap:
            # the finder's next run
            narrow_exhausted = narrow_exhausted or finder.result is False
            finder_done += finder.nodes
            if finder.best()[0] > best[0]:
                best = finder.best()
            run += 1
            finder_cap = _FIRST_RUN << min(run, 20)
            finder = _Run(data, complete=narrow_exhausted or run % 2 == 1, seed=run, proven=proven)
        share = _LATE_PROOF_SLICES if narrow_exhausted else 2
        proof.advance(min(proof.nodes + share * _SLICE, cap - finder_done - finder.nodes))
        if proof.result is None:
            finder.advance(min(finder.nodes + _SLICE, finder_cap))
    nodes = proof.nodes + finder_done + finder.nodes
    st = winner.state
    if result is True:
        line = tuple(MOVE_TEXT[card][dest] for card, _, dest, _, _ in st.journal)
        _check_line(start_text, line)
        return Solution("won", line, nodes, elapsed(), start_text, line)
    if result is False:
        return Solution("lost", (), nodes, elapsed(), start_text)
    for searched in (proof, finder):
        if searched.best()[0] > best[0]:
            best = searched.best()
    guess = tuple(MOVE_TEXT[card][dest] for card, _, dest, _, _ in best[1])
    _check_legal(start_text, guess)
    return Solution("unknown", (), nodes, elapsed(), start_text, guess)


def _check_legal(start: str, line: Sequence[str]) -> None:
    game = Game.from_position(start)
    for move in line:
        game.play(move)  # raises on an illegal move: a solver bug


def _check_line(start: str, line: Sequence[str]) -> None:
    game = Game.from_position(start)
    for move in line:
        game.play(move)
    if not game.is_won():  # pragma: no cover - a solver bug
        raise AssertionError("the solver's line does not win")
