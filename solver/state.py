"""Positions in the solver's layout, their keys, and which foundation moves are safe.

``_State`` is the layout every search works on (seven lists of card indices, ``loc`` of
each card, foundation heights, face-down counts, a Zobrist key kept up to date move by
move); the C search (``_solvercore.c``) copies its position out of a ``_State``. The
Zobrist tables live here so that Python and C hash positions alike. ``canonical_key``,
``zobrist_key`` and ``solver_moves`` expose the layout to tests and tools.
``docs/solver.md`` explains the techniques; ``solver/search.py`` offers the public names.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Protocol

from protocol.codes import GameCode
from protocol.game import Game
from protocol.moves import FOUNDATION, MOVE_TEXT
from protocol.position import UNKNOWN, PositionData, parse_position
from protocol.rules import BUILD_TABLE, BUILDERS, GROUP_LIMIT, Rules

#: The compiled search, if built (``solver/search.py``'s ``_CORE``): it gets the tables.
_core: ModuleType | None
try:
    from . import _solvercore
except ImportError:  # pragma: no cover - depends on the build
    _core = None
else:
    _core = _solvercore

#: ``loc`` values beyond the columns 0-6.
_FOUND = FOUNDATION  # 7
_DOWN = 8
#: The "card" a column's bottom card lies on, in the Zobrist tables.
_BOTTOM = 52


class _Proven(Protocol):
    """The keys of the positions proven lost, shared by the searches of one ``solve``.

    ``_solvercore.ProvenSet`` (a set of 64-bit keys in C, which the C search uses without
    making Python objects) where the C search is built, else a ``set`` of ints; the
    searches only ask ``key in proven`` and call ``proven.add(key)``.
    """

    def __contains__(self, key: object, /) -> bool: ...
    def add(self, key: int, /) -> None: ...


# -- tables ------------------------------------------------------------------------------


def _splitmix(seed: int, count: int) -> list[int]:
    mask = (1 << 64) - 1
    state = seed & mask
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


#: ``_ZUP[card * 53 + under]``: a face-up card lying on ``under`` (52: the column bottom).
_ZUP: list[int] = _splitmix(0x59554B4F4E, 52 * 53)
#: The same for a face-down card.
_ZDOWN: list[int] = _splitmix(0x444F574E, 52 * 53)
#: A card on its foundation.
_ZFOUND: list[int] = _splitmix(0x464F554E44, 52)
if _core is not None:
    _core.set_tables(_ZUP, _ZDOWN, _ZFOUND)


def safe_needs(rules: Rules) -> tuple[tuple[int, int, int, int] | None, ...]:
    """For each card, the foundation heights that make sending it up a safe automatic move.

    ``needs[card]`` is ``None`` when the card is never safe, else four minimum heights
    (spades, hearts, diamonds, clubs); the card's own suit must also be exactly one below
    it, as for any foundation move. Derived from the variant's build table:

    * without take-back, a card is safe once every card that could be built on it is on
      its foundation for good (then nothing can ever need it as a base);
    * with take-back, cards can come down again, so the set ``L`` of cards whose moves
      the argument drops must be closed: it holds the card and everything below it in
      its suit, every card that could be built on a card of ``L``, and every card below
      those in their suits; all of ``L`` but the card itself must already be up.

    A card of its own suit above it (Alaska's "one rank higher") can never be up yet, so
    such a card is never safe, except the king.
    """
    builders = BUILDERS[rules.variant]
    needs: list[tuple[int, int, int, int] | None] = []
    for card in range(52):
        suit, rank = divmod(card, 13)
        height = [0, 0, 0, 0]
        height[suit] = rank + 1
        if rules.take_back:
            work = [suit * 13 + r for r in range(rank + 1)]
            while work:
                x = work.pop()
                for b in builders[x]:
                    bs, br = divmod(b, 13)
                    if br + 1 > height[bs]:
                        # b and everything below it in its suit join L
                        for r in range(height[bs], br + 1):
                            work.append(bs * 13 + r)
                        height[bs] = br + 1
        else:
            for b in builders[card]:
                bs, br = divmod(b, 13)
                height[bs] = max(height[bs], br + 1)
        if height[suit] > rank + 1:  # a card above it in its own suit would have to be up
            needs.append(None)
            continue
        height[suit] = rank  # its own suit: exactly the cards below it
        needs.append((height[0], height[1], height[2], height[3]))
    return tuple(needs)


# -- the search state ----------------------------------------------------------------------


class _State:
    """A position in the solver's layout, changed in place by moves with undo records."""

    __slots__ = (
        "cols",
        "down",
        "loc",
        "found",
        "key",
        "up",
        "table",
        "builders",
        "seats",
        "roams",
        "limit",
        "open_spaces",
        "take_back",
        "needs",
        "journal",
        "best",
        "best_score",
    )

    def __init__(self, data: PositionData) -> None:
        rules = data.rules
        self.cols: list[list[int]] = [list(c) for c in data.columns]
        self.down: list[int] = list(data.face_down)
        self.found: list[int] = list(data.foundations)
        loc = [_FOUND] * 52
        key = 0
        for suit, height in enumerate(self.found):
            for r in range(height):
                key ^= _ZFOUND[suit * 13 + r]
        for c, col in enumerate(self.cols):
            under = _BOTTOM
            for i, card in enumerate(col):
                if i < self.down[c]:
                    loc[card] = _DOWN
                    key ^= _ZDOWN[card * 53 + under]
                else:
                    loc[card] = c
                    key ^= _ZUP[card * 53 + under]
                under = card
        self.loc = loc
        self.key = key
        self.up = sum(self.found)
        self.table = BUILD_TABLE[rules.variant]
        self.builders = BUILDERS[rules.variant]
        #: ``seats[card]``: the cards it may be placed on.
        self.seats = tuple(tuple(t for t in range(52) if self.table[c * 52 + t]) for c in range(52))
        #: ``roams[card]``: may it go into an empty column?
        self.roams = tuple(rules.open_spaces or c % 13 == 12 for c in range(52))
        self.limit = GROUP_LIMIT if rules.group_limit else 0
        self.open_spaces = rules.open_spaces
        self.take_back = rules.take_back
        self.needs = safe_needs(rules)
        #: The moves played, as undo records: (card, src, dest, count, turned_up or -1).
        self.journal: list[tuple[int, int, int, int, int]] = []
        #: The journal of the most advanced position a search reached (``_search``), and
        #: its score (``_progress``; -1 before any).
        self.best: list[tuple[int, int, int, int, int]] = []
        self.best_score = -1

    def play(self, card: int, dest: int) -> None:
        """Play a legal move (the search inlines this and its undo)."""
        loc = self.loc
        src = loc[card]
        before = self.key
        key = before
        if src == _FOUND:  # take-back
            target = self.cols[dest]
            key ^= _ZFOUND[card] ^ _ZUP[card * 53 + (target[-1] if target else _BOTTOM)]
            target.append(card)
            self.found[card // 13] -= 1
            self.up -= 1
            loc[card] = dest
            self.key = key
            self.journal.append((card, _FOUND, dest, 1, -1))
            return
        col = self.cols[src]
        i = col.index(card)
        under = col[i - 1] if i else _BOTTOM
        if dest == _FOUND:
            key ^= _ZUP[card * 53 + under] ^ _ZFOUND[card]
            col.pop()
            self.found[card // 13] += 1
            self.up += 1
            loc[card] = _FOUND
            n = 1
        else:
            target = self.cols[dest]
            key ^= _ZUP[card * 53 + under] ^ _ZUP[card * 53 + (target[-1] if target else _BOTTOM)]
            group = col[i:]
            del col[i:]
            target.extend(group)
            for x in group:
                loc[x] = dest
            n = len(group)
        turned = -1
        if i and i == self.down[src]:
            turned = col[-1]
            self.down[src] = i - 1
            loc[turned] = src
            u = col[-2] if i > 1 else _BOTTOM
            key ^= _ZDOWN[turned * 53 + u] ^ _ZUP[turned * 53 + u]
        self.key = key
        self.journal.append((card, src, dest, n, turned))

    def undo(self, key: int) -> None:
        """Take back the last move (``play``'s inverse; the search inlines it); ``key``
        is the position's key before that move. For tests and experiments that walk
        the positions themselves."""
        card, src, dest, count, turned = self.journal.pop()
        cols, loc, found = self.cols, self.loc, self.found
        self.key = key
        if src == _FOUND:  # a take-back: the card goes back up
            cols[dest].pop()
            found[card // 13] += 1
            loc[card] = _FOUND
            self.up += 1
            return
        col = cols[src]
        if turned >= 0:
            loc[turned] = _DOWN
            self.down[src] += 1
        if dest == _FOUND:
            found[card // 13] -= 1
            col.append(card)
            loc[card] = src
            self.up -= 1
            return
        group = cols[dest][-count:]
        del cols[dest][-count:]
        col.extend(group)
        for x in group:
            loc[x] = src

    def legal(self) -> list[tuple[int, int]]:
        """Every legal move as (card, dest), exactly the engine's ``legal_moves``."""
        out: list[tuple[int, int]] = []
        cols = self.cols
        loc = self.loc
        found = self.found
        limit = self.limit
        empties = [d for d in range(7) if not cols[d]]
        for d in range(7):
            col = cols[d]
            if not col:
                continue
            top = col[-1]
            if found[top // 13] == top % 13:
                out.append((top, _FOUND))
            for c in self.builders[top]:
                s = loc[c]
                if s < 7 and s != d:
                    if limit and len(cols[s]) - cols[s].index(c) > limit:
                        continue
                    out.append((c, d))
        if empties:
            for c in range(52):
                s = loc[c]
                if s < 7 and (self.open_spaces or c % 13 == 12):
                    if limit and len(cols[s]) - cols[s].index(c) > limit:
                        continue
                    out.extend((c, d) for d in empties)
        if self.take_back:
            for suit in range(4):
                height = found[suit]
                if not height:
                    continue
                c = suit * 13 + height - 1
                for d in range(7):
                    col = cols[d]
                    if self.table[c * 52 + col[-1]] if col else (height == 13 or self.open_spaces):
                        out.append((c, d))
        return out


# -- positions from the outside ----------------------------------------------------------------


def _data(game_or_position: Game | str) -> PositionData:
    if isinstance(game_or_position, Game):
        text = game_or_position.position()
    elif isinstance(game_or_position, str):
        text = game_or_position.strip()
        if text.upper().startswith("YU"):
            text = Game.from_code(GameCode.parse(text)).position()
    else:
        raise TypeError(f"expected a Game or position text, not {type(game_or_position).__name__}")
    data = parse_position(text)
    if any(card == UNKNOWN for col in data.columns for card in col):
        raise ValueError("the solver must know every card: this position has ?? cards")
    return data


def _text_of(data: PositionData) -> str:
    return Game(data).position()


# -- keys and helpers for tests and tools ----------------------------------------------------


def canonical_key(game_or_position: Game | str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """An exact key of a position that ignores the order of the columns.

    The sorted columns (each a tuple, face-down cards as ``card + 64``) and the four
    foundation heights. The rules are not part of it.
    """
    data = _data(game_or_position)
    return _canonical(data.columns, data.face_down, data.foundations)


def _canonical(
    cols: Sequence[Sequence[int]], down: Sequence[int], found: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    columns = sorted(
        tuple(c + 64 if i < d else c for i, c in enumerate(col))
        for col, d in zip(cols, down, strict=True)
    )
    flat: list[int] = []
    for col in columns:
        flat.extend(col)
        flat.append(-1)
    return tuple(flat), tuple(found)


def zobrist_key(game_or_position: Game | str) -> int:
    """The 64-bit key the transposition table uses (independent of the column order)."""
    return _State(_data(game_or_position)).key


def solver_moves(game_or_position: Game | str) -> list[str]:
    """Every legal move, generated by the solver's own code (the same set as the engine's)."""
    st = _State(_data(game_or_position))
    return [MOVE_TEXT[c][d] for c, d in st.legal()]
