"""The hot search loop of ``solver.search._search`` in C (``solver/_solvercore.c``)."""

from collections.abc import Iterator
from typing import Any, ClassVar

def set_tables(zup: list[int], zdown: list[int], zfound: list[int]) -> None:
    """Copy the Zobrist tables (``solver.search._ZUP``, ``_ZDOWN``, ``_ZFOUND``); call once."""

class ProvenSet:
    """A set of 64-bit keys (ints 0..2**64-1) in C: ``Search``'s shared ``proven``.

    ``key in s`` is False for an int outside 0..2**64-1, ``add`` raises OverflowError for
    one; anything but an int raises TypeError for both. Iteration and ``keys()`` give a
    snapshot of the keys, in no particular order.
    """

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __init__(self) -> None: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[int]: ...
    def add(self, key: int, /) -> None:
        """Add ``key`` (nothing changes if it is there already)."""
    def keys(self) -> list[int]:
        """Every key, as ints."""

class Search:
    """``_search(st, prune_from, seed, stop, proven, sleep)`` node for node, on a copy of
    ``st``."""

    result: bool | None
    nodes: int
    #: The score of ``best()``: cards up << 5 | (31 - cards face down); -1 before any.
    best_score: int
    def __init__(
        self,
        st: Any,
        prune_from: int,
        proven: ProvenSet | set[int],
        jitter: list[int],
        sleep: bool = True,
    ) -> None: ...
    def advance(self, stop: int) -> int:
        """The first call is ``next(gen)``, later ones ``gen.send(stop)``: the node count."""
    def journal(self) -> list[tuple[int, int, int, int, int]]:
        """The undo records of the moves from the start to the current position."""
    def best(self) -> list[tuple[int, int, int, int, int]]:
        """The undo records of the moves to the most advanced position reached."""
