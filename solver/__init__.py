"""The Yukon solver: decides a position whose cards are all known (won, lost or unknown).

Built on the rules engine in ``protocol`` and used by the server (the daily deal, hints)
and the command line (``yukon solve``); the client never needs it. ``search.py`` is the
solver's front (``solve``, every public name), over ``state.py`` (the layout and keys),
``deadends.py`` (the dead-end test), ``dfs.py`` (the depth-first search) and ``par.py``;
the search loop also exists in C (``_solvercore.c``, optional, built by setup.py
where a C compiler is found), and ``search_implementation()`` says which one runs.
``docs/solver.md`` explains it.

``solver`` imports ``protocol``; ``protocol`` imports nothing from here.
"""

from __future__ import annotations

from .search import (
    Solution,
    Verdict,
    canonical_key,
    par,
    safe_needs,
    search_implementation,
    solve,
    solver_moves,
    zobrist_key,
)

__all__ = [
    "Solution",
    "Verdict",
    "canonical_key",
    "par",
    "safe_needs",
    "search_implementation",
    "solve",
    "solver_moves",
    "zobrist_key",
]
