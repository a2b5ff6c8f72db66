"""The "must go home before" cycle test: a sound proof that a position is lost (issue 43).

Some cards can never leave their column but by going to their foundation: a face-up card
``x`` none of whose seats (the cards it may be placed on) can ever be free for it, because
each is on its foundation for good (no take-back) or lies beneath ``x`` in its own column,
with every face-up card between the bottom of the face-up part and ``x`` just as stuck (so
no block move from beneath carries ``x`` away), and which cannot go into an empty column
(not a king, no open spaces; or it is the column's bottom card, for which that move changes
nothing). Such a *pinned* card stays where it is until it goes home, so it goes home before
every card beneath it in its column (they are covered until it leaves). A suit goes home
in order of rank. To win, every card goes home exactly once (no take-back), so the order
in which they do is one total order that keeps every such constraint: a cycle among the
constraints proves the position lost.

Sound, as argued; not complete. ``docs/solver.md`` ("The cycle test and a portfolio,
measured") says what it adds to the dead-end test (``solver/deadends.py``): on every
position measured, nothing. The argument why: for a pinned card the dead-end test's "can
leave" follows only from "can go up", and "can be uncovered" of a card beneath it only
from the cards above leaving, so each constraint of a cycle is also a premise in that
least fixpoint, which then derives none of the cycle's cards going up. The searches do
not run this test.
"""

from __future__ import annotations

from .state import _DOWN, _FOUND, _State


def pinned_cards(st: _State) -> list[list[int]]:
    """For each column, the face-up cards (bottom up) that can leave it only by going home:
    the longest run from the lowest face-up card up of cards whose seats are all home or
    beneath them in that column, and which cannot go into an empty column. Empty lists
    under take-back (a card at home may come back and be a seat again)."""
    out: list[list[int]] = [[] for _ in st.cols]
    if st.take_back:
        return out
    height = [-1] * 52
    column = [-1] * 52
    for c, col in enumerate(st.cols):
        for i, card in enumerate(col):
            height[card] = i
            column[card] = c
    loc = st.loc
    for c, col in enumerate(st.cols):
        for i in range(st.down[c], len(col)):
            x = col[i]
            if st.roams[x] and i > 0:
                break  # it could go into an empty column
            if not all(
                loc[s] == _FOUND or (column[s] == c and height[s] < i and loc[s] in (c, _DOWN))
                for s in st.seats[x]
            ):
                break
            out[c].append(x)
    return out


def home_order_cycle(st: _State) -> bool:
    """Is there a cycle in the order in which the cards must go home? (Then it is lost.)

    Edges ``a -> b``, "a goes home before b": a pinned card before every card beneath it
    in its column, and each card before the next of its suit. Cards at home are out.
    """
    pinned = pinned_cards(st)
    if not any(pinned):
        return False
    loc = st.loc
    after: list[list[int]] = [[] for _ in range(52)]
    for card in range(52):
        if loc[card] != _FOUND and card % 13 != 12:
            after[card].append(card + 1)
    for c, cards in enumerate(pinned):
        if not cards:
            continue
        col = st.cols[c]
        for x in cards:
            i = col.index(x)
            after[x].extend(col[:i])
    # depth-first search for a back edge (0 new, 1 on the path, 2 finished)
    state = [0] * 52
    for root in range(52):
        if state[root] or loc[root] == _FOUND:
            continue
        state[root] = 1
        stack = [(root, 0)]
        while stack:
            node, k = stack[-1]
            if k < len(after[node]):
                stack[-1] = (node, k + 1)
                nxt = after[node][k]
                if state[nxt] == 1:
                    return True
                if state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                stack.pop()
    return False
