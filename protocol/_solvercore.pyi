"""The hot search loop of ``protocol.solver._search`` in C (``protocol/_solvercore.c``)."""

from typing import Any

def set_tables(zup: list[int], zdown: list[int], zfound: list[int]) -> None:
    """Copy the Zobrist tables (``solver._ZUP``, ``_ZDOWN``, ``_ZFOUND``); call once."""

class Search:
    """``_search(st, prune_from, seed, stop, proven)`` node for node, on a copy of ``st``."""

    result: bool | None
    nodes: int
    def __init__(self, st: Any, prune_from: int, proven: set[int], jitter: list[int]) -> None: ...
    def advance(self, stop: int) -> int:
        """The first call is ``next(gen)``, later ones ``gen.send(stop)``: the node count."""
    def journal(self) -> list[tuple[int, int, int, int, int]]:
        """The undo records of the moves from the start to the current position."""
