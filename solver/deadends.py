"""The dead-end test: a position some card of which can never reach its foundation.

``_hopeless`` is sound, not complete: it proves many positions lost on the spot, and the
searches (``solver/dfs.py``, and the same test in ``_solvercore.c``) run it after most
moves. ``docs/solver.md`` ("Dead ends") explains it.
"""

from __future__ import annotations

from .state import _DOWN, _FOUND, _State


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
