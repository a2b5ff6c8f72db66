"""The depth-first search every solve runs, one or more at a time: ``_search``.

A generator over the layout of ``solver/state.py`` with a transposition table, safe
automatic foundation moves, move ordering, chains of dependent moves (narrowed
searches), the dead-end test (``solver/deadends.py``), Tarjan's components (complete
searches prove what they finish lost), sleep sets and frozen blocks. ``_solvercore.c``
is the same search in C, node for node. ``solver/search.py`` schedules the searches;
``docs/solver.md`` explains the techniques.
"""

from __future__ import annotations

from collections.abc import Generator

from .deadends import _hopeless
from .state import _DOWN, _FOUND, _ZDOWN, _ZFOUND, _ZUP, _Proven, _splitmix, _State

#: The largest random bonus a restart adds to a move's score (see ``_search``).
_JITTER = 40


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
