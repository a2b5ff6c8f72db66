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
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Literal, Protocol

from protocol.codes import GameCode
from protocol.game import Game
from protocol.moves import FOUNDATION, MOVE_TEXT
from protocol.position import UNKNOWN, PositionData, parse_position
from protocol.rules import BUILD_TABLE, BUILDERS, GROUP_LIMIT, Rules

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

#: ``loc`` values beyond the columns 0-6.
_FOUND = FOUNDATION  # 7
_DOWN = 8
#: The "card" a column's bottom card lies on, in the Zobrist tables.
_BOTTOM = 52
#: The largest random bonus a restart adds to a move's score (see ``_search``).
_JITTER = 40
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


class _Proven(Protocol):
    """The keys of the positions proven lost, shared by the searches of one ``solve``.

    ``_solvercore.ProvenSet`` (a set of 64-bit keys in C, which the C search uses without
    making Python objects) where the C search is built, else a ``set`` of ints; the
    searches only ask ``key in proven`` and call ``proven.add(key)``.
    """

    def __contains__(self, key: object, /) -> bool: ...
    def add(self, key: int, /) -> None: ...


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
if _CORE is not None:
    _CORE.set_tables(_ZUP, _ZDOWN, _ZFOUND)


def proven_set() -> _Proven:
    """A fresh set of positions proven lost for ``solve(..., proven=)``: a
    ``_solvercore.ProvenSet`` where the C search is built, else a ``set``."""
    return _CORE.ProvenSet() if _CORE is not None else set()


def search_implementation() -> Literal["C", "Python"]:
    """Which search ``solve`` runs: the compiled one, or the same search in Python."""
    return "C" if _CORE is not None else "Python"


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


def _hopeless(st: _State, own_pile: bool = True) -> bool:
    """Can some card never reach its foundation, whatever is played? (Sound, not complete.)

    The least fixpoint of necessary conditions, ignoring order and timing: a card can be
    *uncovered* only if it is on top now or the card on it can *leave*; it can *go up*
    only if it can be uncovered and the card below it in its suit can go up; it can
    *leave* (a face-down one only after being uncovered) only if it can go up, or one of
    the cards it may be placed on can be uncovered, or (a king, or any card with open
    spaces) some column can be emptied, which needs a column's bottom card to leave.
    A face-up card may use a seat that lies above it in its own column only once some
    card between them (or the seat itself) can leave: until then the seat moves with it.
    Under take-back a card on its foundation counts as uncovered (it may come back).
    Each rule holds for the first time the event happens, so a card whose "go up" is
    not derived can never go up: the position is lost.

    Only "uncovered" facts go through the work list; a card leaving uncovers the card
    below it at once, and a card going up lets the next of its suit follow at once.
    Once a card has been held back by a seat above it (``waiting``), face-up cards found
    able to leave also go through a second list, ``freed``: the cards below them whose
    seat lay above them may leave now. (The C search keeps a bit set per column of the
    cards able to leave instead of looking along the column: the same facts.)
    ``own_pile=False`` drops that rule (the test as it was before it, for the tests).
    """
    loc = st.loc
    seats = st.seats
    builders = st.builders
    roams = st.roams  # may go into an empty column
    cols = st.cols
    below = [-1] * 52
    uncovered = [False] * 52
    goes_up = [False] * 52
    leaves = [False] * 52
    work: list[int] = []  # cards found uncovered, still to spread
    push = work.append
    freed: list[int] = []  # cards found able to leave while some card was held back
    waiting = 0  # the columns (as bits) with a card held back by a seat above it
    empty_column = False
    for col in cols:
        if not col:
            empty_column = True
            continue
        under = -1
        for x in col:
            below[x] = under
            under = x
        uncovered[under] = True
        push(under)
    up = 0
    back = st.take_back
    for suit, height in enumerate(st.found):
        if height:
            up += height
            base = suit * 13
            goes_up[base : base + height] = [True] * height
            if back:
                uncovered[base : base + height] = [True] * height
                work.extend(range(base, base + height))
    if up == 52:
        return False
    # A bottom card leaving empties its column; this lists the cards that may then leave.
    bottoms_left = False
    if empty_column:
        for b in range(52):
            if roams[b] and loc[b] < 7:
                leaves[b] = True
                y = below[b]
                if y >= 0 and not uncovered[y]:
                    uncovered[y] = True
                    push(y)
    pop = work.pop
    while True:
        while work or freed:
            while freed:
                # ``g`` left: a face-up card below it whose uncovered seat lies at or above
                # ``g`` in the column can leave too (``g`` takes the seat away)
                g = freed.pop()
                c = loc[g]
                if c > 6 or not waiting >> c & 1:
                    continue
                col = cols[c]
                hg = col.index(g)
                for i in range(st.down[c], hg):
                    b = col[i]
                    if leaves[b]:
                        continue
                    for s in seats[b]:
                        if uncovered[s] and loc[s] == c and col.index(s) >= hg:
                            leaves[b] = True
                            y = below[b]
                            if y < 0:
                                bottoms_left = True
                            elif not uncovered[y]:
                                uncovered[y] = True
                                push(y)
                            freed.append(b)
                            break
            if not work:
                break
            x = pop()
            if not goes_up[x] and (x % 13 == 0 or goes_up[x - 1]):
                # x goes up, and so do the cards above it in its suit already uncovered
                g = x
                while True:
                    goes_up[g] = True
                    up += 1
                    if up == 52:
                        return False
                    if not leaves[g] and loc[g] != _FOUND:
                        leaves[g] = True
                        y = below[g]
                        if y < 0:
                            bottoms_left = True
                        elif not uncovered[y]:
                            uncovered[y] = True
                            push(y)
                        if waiting:
                            freed.append(g)
                    if g % 13 == 12:
                        break
                    g += 1
                    if goes_up[g] or not uncovered[g]:
                        break
            if not leaves[x] and loc[x] != _FOUND:
                # (an uncovered card has no card above it left in its column)
                go = empty_column and roams[x]
                if not go:
                    for s in seats[x]:
                        if uncovered[s]:
                            go = True
                            break
                if go:
                    leaves[x] = True
                    y = below[x]
                    if y < 0:
                        bottoms_left = True
                    elif not uncovered[y]:
                        uncovered[y] = True
                        push(y)
                    if waiting:
                        freed.append(x)
            for b in builders[x]:
                if not leaves[b]:
                    where = loc[b]
                    if where < 7:
                        if own_pile and where == loc[x]:
                            col = cols[where]
                            hb = col.index(b)
                            hx = col.index(x)
                            if hx > hb:
                                for y in col[hb + 1 : hx + 1]:
                                    if leaves[y]:
                                        break
                                else:
                                    waiting |= 1 << where
                                    continue  # x lies above b, nothing between can leave yet
                    elif where != _DOWN or not uncovered[b]:
                        continue
                    leaves[b] = True
                    y = below[b]
                    if y < 0:
                        bottoms_left = True
                    elif not uncovered[y]:
                        uncovered[y] = True
                        push(y)
                    if waiting:
                        freed.append(b)
        if not bottoms_left or empty_column:
            return True
        empty_column = True
        for b in range(52):
            if roams[b] and not leaves[b]:
                where = loc[b]
                if where < 7 or (where == _DOWN and uncovered[b]):
                    leaves[b] = True
                    y = below[b]
                    if y >= 0 and not uncovered[y]:
                        uncovered[y] = True
                        push(y)
                    if waiting:
                        freed.append(b)


# -- the search ------------------------------------------------------------------------------


def _jitter(seed: int) -> list[int]:
    """A restart's fixed random bonus per ``card << 3 | dest`` (``m & 511`` of a move), so
    that each seed orders the moves differently; seed 0 adds none."""
    return [(r % _JITTER) << 10 for r in _splitmix(seed, 512)] if seed else []


#: Kinds of what a tableau move uncovers (the low two bits of a pile record).
_UP = 0  # a face-up card p
_FLIP = 1  # a face-down card p, turned up
_EMPTY = 2  # nothing: the column is empty now
#: Flag of a move that joins the pile instead of answering it (see ``_search``).
_JOIN = 1 << 9


def _search(
    st: _State, prune_from: int, seed: int, stop: int, proven: _Proven, sleep: bool = True
) -> Generator[int, int, tuple[bool, int]]:
    """Depth-first search from ``st``, with the transposition table and dead-end test.

    A generator: it yields its node count each time it reaches ``stop`` nodes and is
    resumed with the next stop (``send``), or simply dropped. It returns ``(True,
    nodes)`` on a win, leaving ``st`` in the won position (its journal is the line), and
    ``(False, nodes)`` when no position is left to search.

    ``prune_from`` 0 narrows the search to chains (``docs/solver.md``): after a tableau
    move the next move must depend on it (``depends``), or join it in a *pile* of two
    moves that a later move may both depend on (``joins``); the pile's next move must
    depend on both. A narrowed search that runs out of positions proves nothing.
    ``prune_from`` 53 searches every move: running out of positions proves the deal lost.
    (Values between narrow once that many cards are up.) ``seed`` above 0 adds a fixed
    random bonus per (card, destination) to the move scores, to vary the order.

    ``proven`` holds the keys of positions known to be lost, shared by all the searches
    of one ``solve``: every search skips them and adds its dead ends; a complete search
    also adds every position whose strongly connected component it has finished
    (Tarjan's algorithm): then every position reachable from it has been searched.

    ``sleep`` (complete searches only) skips, without counting a node, two kinds of
    *plain* moves (a block move after which no card goes up) whose child is reached
    another way along a chain of plain moves (``docs/solver.md``, "Sleep sets and frozen
    blocks"): a plain move tried earlier by an ancestor on the chain and on columns the
    chain has left alone since (a sleep set), and a second move of a block the chain
    moved, to a column left alone since (a frozen block). Every position is still
    searched; only moves between searched positions are skipped.
    """
    cols = st.cols
    down = st.down
    loc = st.loc
    found = st.found
    journal = st.journal
    builders = st.builders
    seats = st.seats
    roams = st.roams
    table = st.table
    limit = st.limit
    open_spaces = st.open_spaces
    take_back = st.take_back
    zup = _ZUP
    zdown = _ZDOWN
    zfound = _ZFOUND
    n0 = [99 if n is None else n[0] for n in st.needs]
    n1 = [99 if n is None else n[1] for n in st.needs]
    n2 = [99 if n is None else n[2] for n in st.needs]
    n3 = [99 if n is None else n[3] for n in st.needs]

    jitter = _jitter(seed)

    def safe(t: int) -> bool:
        """May ``t`` (playable: the card below it in its suit is up) go up at once?

        Safe by its needs (``safe_needs``), or, without take-back, when every card that
        could be placed on it is up or lies face down where it goes up the moment it is
        turned (playable and safe by its needs): then nothing is ever placed on ``t``
        (docs/solver.md, "Safe automatic foundation moves").
        """
        if found[0] >= n0[t] and found[1] >= n1[t] and found[2] >= n2[t] and found[3] >= n3[t]:
            return True
        if take_back:
            return False
        for b in builders[t]:
            lb = loc[b]
            if lb == 7:
                continue
            if (
                lb == 8
                and found[b // 13] == b % 13
                and found[0] >= n0[b]
                and found[1] >= n1[b]
                and found[2] >= n2[b]
                and found[3] >= n3[b]
            ):
                continue
            return False
        return True

    def score(c: int, s: int, scol: list[int], i: int) -> int:
        """How promising it is to move the block from ``c`` (``scol[i]``, column ``s``)."""
        dn = down[s]
        if i == dn:
            return 100 + dn if dn else 60  # turns a card up / empties a column
        p = scol[i - 1]
        if found[p // 13] == p % 13:
            return 80  # uncovers a card that can go up
        for b in builders[p]:
            lb = loc[b]
            if lb < 7:
                if lb != s or (b != c and scol.index(b) > i):
                    return 20 if table[c * 52 + p] else 40  # something can go onto p
            elif take_back and lb == 7 and found[b // 13] == b % 13 + 1:
                return 20 if table[c * 52 + p] else 40
        return 1

    def expand(last: int = -1, flipped: int = -1) -> list[int]:
        """The moves worth trying, best first, as ``score << 10 | card << 3 | dest``.

        ``last``: the card whose block the move into this position moved, when that
        move sent nothing up (and none went up after it). Moving that block again leads
        to a position one move from the parent (or the parent itself), which the parent
        searches, so it is left out; only going onto ``flipped``, the card that move
        turned up, is new.
        """
        out: list[int] = []
        append = out.append
        empty = -1
        for d in range(7):
            col = cols[d]
            if not col:
                if empty < 0:
                    empty = d
                continue
            top = col[-1]
            if found[top // 13] == top % 13 and top != last:
                dn = down[d]
                append((90 if dn and len(col) - 1 == dn else 70) << 10 | top << 3 | 7)
            for c in builders[top]:
                s = loc[c]
                if s >= 7 or s == d or (c == last and top != flipped):
                    continue
                scol = cols[s]
                i = scol.index(c)
                if limit and len(scol) - i > limit:
                    continue
                append(score(c, s, scol, i) << 10 | c << 3 | d)
        if empty >= 0:
            for s in range(7):
                scol = cols[s]
                for i in range(down[s], len(scol)):
                    if i == 0:
                        continue  # a whole column to an empty one: the same position
                    c = scol[i]
                    if (not open_spaces and c % 13 != 12) or c == last:
                        continue
                    if limit and len(scol) - i > limit:
                        continue
                    append(score(c, s, scol, i) << 10 | c << 3 | empty)
        if take_back:
            for suit in range(4):
                height = found[suit]
                if not height:
                    continue
                c = suit * 13 + height - 1
                if (
                    found[0] >= n0[c]
                    and found[1] >= n1[c]
                    and found[2] >= n2[c]
                    and found[3] >= n3[c]
                ):
                    continue  # it would go straight back up as a safe move
                used_empty = False
                for d in range(7):
                    col = cols[d]
                    if col:
                        if not table[c * 52 + col[-1]]:
                            continue
                    elif used_empty or not (height == 13 or open_spaces):
                        continue
                    else:
                        used_empty = True
                    append(5 << 10 | c << 3 | d)
        if jitter:
            out = [m + jitter[m & 511] for m in out]
        out.sort(reverse=True)
        return out

    def depends(rec: int, w: int, d: int) -> bool:
        """Does moving ``w`` to ``d`` depend on the pile move recorded as ``rec``?

        ``rec`` is ``c << 8 | p << 2 | kind``: the move took the block from ``c`` off
        ``p``, face up before or just turned up. It cannot be put off past a move onto
        ``p``, ``p`` going up, ``p`` moving when it was just turned up, or a block from
        ``p``'s column moving onto ``c``'s. (``c`` moving again is never wanted: the two
        moves are one move from ``p``; the search does not offer it.)
        """
        kind = rec & 3
        if kind == _EMPTY:
            # into the empty column, when no other column is empty
            if d == 7 or cols[d]:
                return False
            return all(x == d or cols[x] for x in range(7))
        p = (rec >> 2) & 63
        pc = loc[p]
        if d == pc:
            return True
        if w == p and (d == 7 or kind == _FLIP):
            return True
        return kind == _UP and loc[w] == pc and d == loc[rec >> 8]

    def block_moves(w: int, out: list[int], flag: int) -> None:
        """Every move of the block from the face-up card ``w`` to another column."""
        s = loc[w]
        scol = cols[s]
        i = scol.index(w)
        if limit and len(scol) - i > limit:
            return
        v = score(w, s, scol, i) << 10 | flag | w << 3
        empty = -1
        for d in range(7):
            if d == s:
                continue
            col = cols[d]
            if col:
                if table[w * 52 + col[-1]]:
                    out.append(v | d)
            elif empty < 0:
                empty = d
        if empty >= 0 and i and (open_spaces or w % 13 == 12):
            out.append(v | empty)

    def back_onto(b: int, d: int, out: list[int]) -> None:
        """Take-back of ``b`` (top of its foundation) to column ``d``, unless it is safe."""
        if found[0] >= n0[b] and found[1] >= n1[b] and found[2] >= n2[b] and found[3] >= n3[b]:
            return  # it would go straight back up
        out.append(5 << 10 | b << 3 | d)

    def deps(rec: int, out: list[int]) -> None:
        """Every move that depends on the pile move ``rec`` (see ``depends``)."""
        c = rec >> 8
        kind = rec & 3
        if kind == _EMPTY:
            e = -1
            for x in range(7):
                if not cols[x]:
                    if e >= 0:
                        return  # two empty columns: nothing depends on this one
                    e = x
            for s in range(7):
                scol = cols[s]
                for i in range(max(down[s], 1), len(scol)):
                    w = scol[i]
                    if w == c or not (open_spaces or w % 13 == 12):
                        continue
                    if limit and len(scol) - i > limit:
                        continue
                    out.append(score(w, s, scol, i) << 10 | w << 3 | e)
            if take_back:
                for suit in range(4):
                    h = found[suit]
                    if h == 13 or (h and open_spaces):
                        back_onto(suit * 13 + h - 1, e, out)
            return
        p = (rec >> 2) & 63
        pc = loc[p]
        if found[p // 13] == p % 13:
            out.append(70 << 10 | p << 3 | 7)
        for b in builders[p]:
            s = loc[b]
            if s < 7:
                if s == pc or b == c:
                    continue
                scol = cols[s]
                i = scol.index(b)
                if limit and len(scol) - i > limit:
                    continue
                out.append(score(b, s, scol, i) << 10 | b << 3 | pc)
            elif s == 7 and take_back and found[b // 13] == b % 13 + 1:
                back_onto(b, pc, out)
        if kind == _FLIP:
            block_moves(p, out, 0)
        else:
            cc = loc[c]
            z = cols[cc][-1]
            pcol = cols[pc]
            for b in builders[z]:
                if loc[b] == pc:
                    i = pcol.index(b)
                    if limit and len(pcol) - i > limit:
                        continue
                    out.append(score(b, pc, pcol, i) << 10 | b << 3 | cc)

    def joins(rec: int, out: list[int]) -> None:
        """The moves that may join the pile ``(rec,)``: independent of it, and such that
        some later move could depend on both (``docs/solver.md``): the card one of them
        turns up going onto the card the other uncovers (or into the column it empties),
        or a block of one uncovered card's column going onto the other uncovered card."""
        c = rec >> 8
        kind = rec & 3
        p = (rec >> 2) & 63
        blocks: list[int] = []
        if kind == _EMPTY:
            # a move turning up a card that may go into the empty column
            for s in range(7):
                dn = down[s]
                if dn and roams[cols[s][dn - 1]]:
                    blocks.append(cols[s][dn])
        else:
            # a move turning up a card that may go onto p
            for s in range(7):
                dn = down[s]
                if dn and table[cols[s][dn - 1] * 52 + p]:
                    blocks.append(cols[s][dn])
        if kind == _FLIP:
            # a move uncovering (or turning up) a card that p, just turned up, may go onto
            for y in seats[p]:
                ly = loc[y]
                if ly < 7:
                    ycol = cols[ly]
                    j = ycol.index(y)
                    if j + 1 < len(ycol):
                        blocks.append(ycol[j + 1])
                elif ly == _DOWN:
                    for s in range(7):
                        dn = down[s]
                        if dn and cols[s][dn - 1] == y:
                            blocks.append(cols[s][dn])
                            break
            # or emptying the only column p could go into
            if roams[p]:
                none_empty = True
                for x in range(7):
                    if not cols[x]:
                        none_empty = False
                        break
                if none_empty:
                    for s in range(7):
                        if not down[s]:
                            blocks.append(cols[s][0])
        elif kind == _UP:
            # a block of p's column leaving with p, so that a card left below it may go
            # onto p
            pc = loc[p]
            pcol = cols[pc]
            for j in range(down[pc], len(pcol)):
                if table[pcol[j] * 52 + p]:
                    blocks.extend(pcol[j + 1 :])
                    break
            # a block leaving a card y of c's block on top, where a card of p's column
            # may go
            cc = loc[c]
            ccol = cols[cc]
            for i in range(ccol.index(c) + 1, len(ccol)):
                y = ccol[i - 1]
                for b in builders[y]:
                    if loc[b] == pc:
                        blocks.append(ccol[i])
                        break
        done = 0
        for w in blocks:
            if w == c or done >> w & 1:
                continue
            done |= 1 << w
            start = len(out)
            block_moves(w, out, _JOIN)
            k = start
            for m in out[start:]:
                if not depends(rec, w, m & 7):
                    out[k] = m
                    k += 1
            del out[k:]

    def expand_pile(pile: tuple[int, ...]) -> list[int]:
        """The moves that depend on the whole pile, and (pile of one) those that may join."""
        out: list[int] = []
        deps(pile[0], out)
        if len(pile) == 1:
            joins(pile[0], out)
        else:
            rec = pile[1]
            second = rec >> 8
            out = [m for m in out if (m >> 3) & 63 != second and depends(rec, (m >> 3) & 63, m & 7)]
        if jitter:
            out = [m + jitter[m & 511] for m in out]
        out.sort(reverse=True)
        return out

    nodes = 0

    # Safe moves at the root.
    again = True
    while again:
        again = False
        for s in range(7):
            col = cols[s]
            if not col:
                continue
            t = col[-1]
            if found[t // 13] == t % 13 and safe(t):
                st.play(t, _FOUND)
                again = True
    key = st.key
    up = st.up
    if up == 52:
        return True, nodes
    hopeless = _hopeless
    if key in proven or hopeless(st):
        return False, nodes
    complete = prune_from > 52
    done = 1 << 62  # the index of a position whose component is finished
    tries = hits = 0  # dead-end tests after moves that turn nothing up, and successes
    #: Positions expanded with every move (with their index in the order of the search,
    #: or ``done`` once their component is finished), and (position, pile) pairs expanded.
    full: dict[int, int] = {key: 0}
    part: set[int] = set()
    #: Tarjan's bookkeeping: the index of each position on the stack, the least index it
    #: reaches, and the positions whose component is not finished yet, in order.
    index: list[int] = [0]
    low: list[int] = [0]
    comp: list[int] = [key]
    count = 1
    stack: list[list[int]] = [expand()]
    pos: list[int] = [0]
    played: list[int] = [0]
    keys: list[int] = [key]
    piles: list[tuple[int, ...]] = [()]
    alive: list[bool] = [True]  # known to pass the dead-end test
    #: Sleep sets (complete searches only): per position on the stack, the plain moves it
    #: need not try (``src << 9 | card << 3 | dest``), and the plain moves it has tried so
    #: far, which its later children inherit when they are on other columns.
    sleeping = sleep and complete
    asleep: list[list[int]] = [[]]
    tried: list[list[int]] = [[]]
    child_sleep: list[int] = []
    #: Blocks moved along the current chain of plain moves, not to be moved again while
    #: the columns they left and joined are untouched: (card, src, dest, turned, touched).
    frozen: list[list[tuple[int, int, int, int, int]]] = [[]]
    child_frozen: list[tuple[int, int, int, int, int]] = []
    while stack:
        depth = len(stack) - 1
        k = played[depth]
        if k:
            for _ in range(k):
                c, s, d, n, t = journal.pop()
                if s == 7:
                    cols[d].pop()
                    found[c // 13] += 1
                    loc[c] = 7
                    up += 1
                    continue
                col = cols[s]
                if t >= 0:
                    loc[t] = 8
                    down[s] += 1
                if d == 7:
                    found[c // 13] -= 1
                    col.append(c)
                    loc[c] = s
                    up -= 1
                else:
                    target = cols[d]
                    group = target[-n:]
                    del target[-n:]
                    col.extend(group)
                    for x in group:
                        loc[x] = s
            played[depth] = 0
            key = keys[depth]
        moves = stack[depth]
        i = pos[depth]
        if i >= len(moves):
            stack.pop()
            pos.pop()
            played.pop()
            kp = keys.pop()
            piles.pop()
            alive.pop()
            asleep.pop()
            tried.pop()
            frozen.pop()
            j = index.pop()
            lo = low.pop()
            if lo == j:
                if complete:
                    # The root of a component, finished: every position reachable from
                    # it is searched, and none wins.
                    while True:
                        x = comp.pop()
                        full[x] = done
                        proven.add(x)
                        if x == kp:
                            break
            elif lo < low[-1]:
                low[-1] = lo
            continue
        pos[depth] = i + 1
        m = moves[i]
        c = (m >> 3) & 63
        d = m & 7
        s = loc[c]
        if sleeping:
            entry = s << 9 | (m & 511)
            if entry in asleep[depth]:
                continue  # its child is reached from a sibling tried before (no node)
            # a block moved on this chain of plain moves, its columns untouched since:
            # moving it on to a column also untouched (but onto the card its move turned
            # up) leads where one move from the chain's start leads, then the same moves
            if d < 7 and any(
                fc == c and not ft >> d & 1 and not (d == fx and ff >= 0)
                for fc, fx, _, ff, ft in frozen[depth]
            ):
                continue
        nodes += 1
        rec = -1
        if s == 7:  # take-back
            target = cols[d]
            key ^= zfound[c] ^ zup[c * 53 + (target[-1] if target else 52)]
            target.append(c)
            found[c // 13] -= 1
            up -= 1
            loc[c] = d
            journal.append((c, 7, d, 1, -1))
            k = 1
        else:
            col = cols[s]
            if d == 7:
                i = len(col) - 1
                key ^= zup[c * 53 + (col[i - 1] if i else 52)] ^ zfound[c]
                col.pop()
                found[c // 13] += 1
                up += 1
                loc[c] = 7
                n = 1
            else:
                i = col.index(c)
                target = cols[d]
                under = col[i - 1] if i else 52
                moved = key ^ zup[c * 53 + under] ^ zup[c * 53 + (target[-1] if target else 52)]
                child = moved
                if i and i == down[s]:  # it turns ``under`` up
                    u = col[i - 2] if i > 1 else 52
                    child ^= zdown[under * 53 + u] ^ zup[under * 53 + u]
                j = full.get(child, -1)
                if (j >= 0 or child in proven) and not (
                    i and found[under // 13] == under % 13 and safe(under)
                ):
                    # No card goes up after it (the new top of the column is not safe),
                    # so ``child`` is the key of the new position: one already searched.
                    if 0 <= j < low[-1]:
                        low[-1] = j
                    if sleeping:
                        tried[depth].append(entry)
                    continue
                key = moved
                group = col[i:]
                del col[i:]
                target.extend(group)
                for x in group:
                    loc[x] = d
                n = len(group)
            t = -1
            if i:
                if i == down[s]:
                    t = col[-1]
                    down[s] = i - 1
                    loc[t] = s
                    u = col[-2] if i > 1 else 52
                    key ^= zdown[t * 53 + u] ^ zup[t * 53 + u]
                    rec = c << 8 | t << 2 | _FLIP
                else:
                    rec = c << 8 | col[-1] << 2 | _UP
            else:
                rec = c << 8 | _EMPTY
            journal.append((c, s, d, n, t))
            k = 1
            # Safe moves: the new top of the source column first, then all tops again.
            if d == 7 or col:
                t = col[-1] if col else 0
                if d == 7 or (found[t // 13] == t % 13 and safe(t)):
                    again = True
                    while again:
                        again = False
                        for s2 in range(7):
                            col2 = cols[s2]
                            if not col2:
                                continue
                            t = col2[-1]
                            su = t // 13
                            if found[su] == t % 13 and safe(t):
                                j = len(col2) - 1
                                key ^= zup[t * 53 + (col2[j - 1] if j else 52)] ^ zfound[t]
                                col2.pop()
                                found[su] += 1
                                up += 1
                                loc[t] = 7
                                f = -1
                                if j and j == down[s2]:
                                    f = col2[-1]
                                    down[s2] = j - 1
                                    loc[f] = s2
                                    u = col2[-2] if j > 1 else 52
                                    key ^= zdown[f * 53 + u] ^ zup[f * 53 + u]
                                journal.append((t, s2, 7, 1, f))
                                k += 1
                                again = True
        played[depth] = k
        if sleeping:
            if k == 1 and d < 7 and rec >= 0:
                # a plain move: the new position sleeps on every plain move tried here
                # (or asleep here) on other columns, and later siblings sleep on it
                child_sleep = [
                    x
                    for x in (*asleep[depth], *tried[depth])
                    if (x >> 9) != s and (x >> 9) != d and (x & 7) != s and (x & 7) != d
                ]
                tried[depth].append(entry)
                # the blocks frozen here whose columns it leaves alone stay frozen (it
                # touched s and d), and its own block is frozen from now on
                both = 1 << s | 1 << d
                child_frozen = [
                    (fc, fx, fy, ff, ft | both)
                    for fc, fx, fy, ff, ft in frozen[depth]
                    if not (both >> fx & 1 or both >> fy & 1)
                ]
                child_frozen.append((c, s, d, journal[-1][4], 0))
            else:
                child_sleep = []
                child_frozen = []
        # The pile of the new position.
        if up < prune_from or k > 1 or d == 7 or rec < 0:
            pile: tuple[int, ...] = ()
        elif m & _JOIN:
            pile = (*piles[depth], rec)
        else:
            pile = (rec,)
        j = full.get(key, -1)
        if j >= 0:
            if j < low[-1]:
                low[-1] = j
            continue
        if key in proven:
            continue
        if pile:
            # a pile's order does not matter to what may follow it
            code = pile[0] if len(pile) == 1 else max(pile) << 14 | min(pile)
            pk = key | (code + 1) << 64
            if pk in part:
                continue
        if up == 52:
            return True, nodes
        if nodes >= stop:
            stop = yield nodes  # the caller resumes it with its next stop, or drops it
        # Dead-end test: always after a card turned or went up. After a plain block move
        # of a position known to be alive, none is needed when the block could leave
        # again at once: every fact of the parent's test still follows. Otherwise only
        # while it pays (it finds about one in sixteen, or more), else now and then.
        known = False
        if d == 7 or rec < 0 or k > 1 or journal[-1][4] >= 0:
            dead = hopeless(st)
            known = not dead
        else:
            dead = False
            if alive[depth]:
                target = cols[d]
                other_empty = False
                for x in range(7):
                    if x != d:
                        xcol = cols[x]
                        if not xcol:
                            other_empty = True
                            if roams[c]:
                                known = True
                        elif table[c * 52 + xcol[-1]]:
                            known = True
                if len(target) == n and not other_empty:
                    known = False  # it filled the only empty column
            if not known and (hits * 16 >= tries or not nodes & 63):
                dead = hopeless(st)
                known = not dead
                tries += 1
                hits += dead
        if dead:
            # a dead end: nothing to expand, and lost whatever the pile
            proven.add(key)
            continue
        # The most advanced position so far: what a hint offers when the budget runs out.
        progress = up << 5 | (31 - sum(down))
        if progress > st.best_score:
            st.best_score = progress
            st.best = journal[:]
        if pile:
            part.add(pk)
            stack.append(expand_pile(pile))
            low.append(count)
        else:
            full[key] = count
            if complete:
                comp.append(key)
            if k == 1 and d < 7 and rec >= 0:
                stack.append(expand(c, journal[-1][4]))
                # The moves left out lead where the parent leads: this position joins the
                # parent's component, so that it is proven lost only with the parent.
                low.append(index[-1])
            else:
                stack.append(expand())
                low.append(count)
        index.append(count)
        count += 1
        alive.append(known)
        asleep.append(child_sleep)
        tried.append([])
        frozen.append(child_frozen)
        pos.append(0)
        played.append(0)
        keys.append(key)
        piles.append(pile)
    return False, nodes


# -- public API ------------------------------------------------------------------------------


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


# -- par ----------------------------------------------------------------------------------------


def _replay(start: str, moves: Sequence[str]) -> Game | None:
    game = Game.from_position(start)
    try:
        for move in moves:
            game.play(move)
    except ValueError:
        return None
    return game


def _wins(start: str, moves: Sequence[str]) -> bool:
    game = _replay(start, moves)
    return game is not None and game.is_won()


def _game_key(game: Game) -> tuple[tuple[int, ...], tuple[int, ...]]:
    data = parse_position(game.position())
    return _canonical(data.columns, data.face_down, data.foundations)


def _cut_loops(start: str, moves: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Drop every stretch of moves that comes back to a position seen before.

    Positions count as the same whatever the order of their columns; the moves after a
    cut are renumbered to the columns of the earlier position. Each move carries its index
    in the line it came from, which survives the cuts (``kept_moves`` reports them).
    """
    while True:
        game = Game.from_position(start)
        seen: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, str]] = {
            _game_key(game): (0, game.position())
        }
        cut: tuple[int, int, str, str] | None = None
        for j, (_, move) in enumerate(moves, start=1):
            game.play(move)
            key = _game_key(game)
            if key in seen:
                i, before = seen[key]
                cut = (i, j, before, game.position())
                break
            seen[key] = (j, game.position())
        if cut is None:
            return moves
        i, j, before, after = cut
        mapping = _column_map(after, before)
        moves = moves[:i] + [(n, _renumber(m, mapping)) for n, m in moves[j:]]


def _column_map(after: str, before: str) -> list[int]:
    """For each column of ``after``, the column of ``before`` with the same cards."""
    a = after.rsplit(" ", 1)[1].split("/")
    b = before.rsplit(" ", 1)[1].split("/")
    free = list(range(7))
    mapping = [-1] * 7
    for k, text in enumerate(a):
        if text:
            m = b.index(text)
            mapping[k] = m
            free.remove(m)
    for k, text in enumerate(a):
        if not text:
            m = next(x for x in free if not b[x])
            mapping[k] = m
            free.remove(m)
    return mapping


def _renumber(move: str, mapping: list[int]) -> str:
    card, dest = move.split(">")
    if dest == "F":
        return move
    return f"{card}>{mapping[int(dest) - 1] + 1}"


def par(moves: Sequence[str], start: Game | str) -> list[str]:
    """The winning line ``moves`` from ``start`` without its wasted moves.

    First every loop is cut (a stretch of moves after which the position, columns in any
    order, is one seen before). Then, repeatedly, single moves and pairs of moves of the
    same card are dropped wherever the rest of the line still replays and wins. The
    result is never longer than ``moves`` and still wins from ``start`` (``ValueError``
    if ``moves`` itself does not).
    """
    return [m for _, m in _par_line(moves, start)]


def kept_moves(moves: Sequence[str], start: Game | str) -> list[int]:
    """Which moves of the winning line ``moves`` ``par`` keeps: their indices (0-based),
    in order. ``len(kept_moves(m, s)) == len(par(m, s))``; the moves are the same up to the
    numbering of columns (a cut loop renumbers the moves after it). The post-mortem of a
    won run names the others as wasted."""
    return [n for n, _ in _par_line(moves, start)]


def _par_line(moves: Sequence[str], start: Game | str) -> list[tuple[int, str]]:
    """``par``'s line, each move with its index in ``moves``."""
    start_text = _text_of(_data(start))
    if not _wins(start_text, moves):
        raise ValueError("par needs a line that wins from the given start")
    line = _cut_loops(start_text, list(enumerate(moves)))
    improved = True
    while improved:
        improved = False
        i = len(line) - 1
        while i >= 0:
            trial = line[:i] + line[i + 1 :]
            if _wins(start_text, [m for _, m in trial]):
                line = _cut_loops(start_text, trial)
                improved = True
                i = min(i, len(line)) - 1
                continue
            card = line[i][1].split(">")[0]
            for j in range(i + 1, len(line)):
                if line[j][1].split(">")[0] != card:
                    continue
                trial = line[:i] + line[i + 1 : j] + line[j + 1 :]
                if _wins(start_text, [m for _, m in trial]):
                    line = _cut_loops(start_text, trial)
                    improved = True
                    break
            i = min(i, len(line)) - 1
    return line
