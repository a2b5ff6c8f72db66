"""The Yukon game: a position, the moves it allows, and a stack to take them back.

Layout, chosen for speed (see ``bench/engine.py``):

* ``_cols``: seven lists of card indices, bottom to top; the first ``_down[c]`` cards of
  column ``c`` are face down. A face-down card a viewer does not know is ``UNKNOWN``.
* ``_loc``: where each of the 52 cards is. 0-6 is face up in that column, ``FOUNDATION``
  on its foundation, ``HIDDEN`` face down (identity known), ``UNSEEN`` one of the ``??``.
  Legality only ever asks "is this card face up, and in which column?", so one list
  lookup answers it, and the candidates for a destination come from a table per variant
  (``rules.BUILDERS``): legal move generation looks at a handful of cards, not all 52.
* ``_found``: the height of each suit's foundation, in foundation order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

from .cards import CARD_TEXT, card_name, parse_card
from .codes import GameCode
from .errors import (
    IllegalMoveError,
    InvalidCardError,
    RevealError,
    UndoError,
)
from .moves import FOUNDATION, MOVE_TEXT, parse_move
from .position import UNKNOWN, PositionData, format_position, parse_position
from .rules import BUILD_TABLE, BUILDERS, GROUP_LIMIT, Rules, Variant, build_requirement
from .shuffle import FACE_DOWN, deal_columns

__all__ = ["Game", "Played", "UNDO_DEPTH", "FOUNDATION", "HIDDEN", "UNSEEN"]

#: How many moves ``undo`` can take back (spec section 6).
UNDO_DEPTH = 100

#: ``_loc`` values beyond the columns 0-6.
HIDDEN = 8
UNSEEN = 9

_KINGS = (12, 25, 38, 51)
_POINTS_FLIP = 5
_POINTS_FOUNDATION = 10


def _pack(card: int, src: int, dest: int, n: int, flip: bool, before: int) -> int:
    """One undo record as one int. Why not a tuple: a server keeps the undo history of
    thousands of games, and every tuple in it is one more object for Python's garbage
    collector to visit (docs/performance.md); an int is not. Fields: card and n 6 bits
    each, src and dest 4 bits each (0-6 or ``FOUNDATION``), flip 1 bit, then the score
    before the move (any int, negative too: shifts keep its sign)."""
    return ((((before << 1 | flip) << 6 | n) << 4 | src) << 4 | dest) << 6 | card


def _unpack(record: int) -> tuple[int, int, int, int, bool, int]:
    card = record & 63
    record >>= 6
    dest = record & 15
    record >>= 4
    src = record & 15
    record >>= 4
    n = record & 63
    record >>= 6
    return card, src, dest, n, bool(record & 1), record >> 1


class Played(NamedTuple):
    """What a move did: its canonical text, the card it turned face up, the points it won."""

    move: str
    turned_up: str | None
    points: int


class Game:
    """A game of Yukon under some ``Rules``, with undo.

    Build one with ``Game.from_code``, ``Game.from_deal`` or ``Game.from_position``. A game
    built from a player's view (face-down cards as ``??``) plays like any other; when one
    of its moves turns up a card it does not know, the caller names the card with
    ``play(move, reveal="QH")``, as the server tells the client.
    """

    __slots__ = (
        "rules",
        "code",
        "_cols",
        "_down",
        "_loc",
        "_found",
        "_score",
        "_count",
        "_history",
        "_table",
        "_builders",
        "_limit",
    )

    def __init__(self, data: PositionData, code: GameCode | None = None) -> None:
        self.rules: Rules = data.rules
        self.code: GameCode | None = code
        self._cols = [list(c) for c in data.columns]
        self._down = list(data.face_down)
        self._found = list(data.foundations)
        loc = [UNSEEN] * 52
        for suit, height in enumerate(self._found):
            for r in range(height):
                loc[suit * 13 + r] = FOUNDATION
        for c, column in enumerate(self._cols):
            down = self._down[c]
            for i, card in enumerate(column):
                if card != UNKNOWN:
                    loc[card] = HIDDEN if i < down else c
        self._loc = loc
        self._score = 0
        self._count = 0
        #: The moves to undo, newest last, each packed in one int (``_pack``).
        self._history: deque[int] = deque(maxlen=UNDO_DEPTH)
        self._table = BUILD_TABLE[self.rules.variant]
        self._builders = BUILDERS[self.rules.variant]
        self._limit = GROUP_LIMIT if self.rules.group_limit else 0

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_code(cls, code: str | GameCode) -> Game:
        """The initial position of a game code such as ``YU1-C-AAAAAAB``."""
        parsed = code if isinstance(code, GameCode) else GameCode.parse(code)
        return cls.from_deal(parsed.deal, parsed.rules, _code=parsed)

    @classmethod
    def from_deal(
        cls, deal: int | bytes, rules: Rules | str = "C", *, _code: GameCode | None = None
    ) -> Game:
        """The initial position of deal number (or seed) ``deal`` under ``rules``."""
        rules = rules if isinstance(rules, Rules) else Rules.parse(rules)
        code = _code or GameCode(rules, deal)
        data = PositionData(rules, [0, 0, 0, 0], deal_columns(code.deal), list(FACE_DOWN))
        return cls(data, code)

    @classmethod
    def from_position(cls, text: str) -> Game:
        """A game from position notation; score and move counter start at 0."""
        return cls(parse_position(text))

    def copy(self) -> Game:
        """An independent game in the same position, with the same score and history."""
        new = Game.__new__(Game)
        new.rules = self.rules
        new.code = self.code
        new._cols = [list(c) for c in self._cols]
        new._down = list(self._down)
        new._loc = list(self._loc)
        new._found = list(self._found)
        new._score = self._score
        new._count = self._count
        new._history = deque(self._history, maxlen=UNDO_DEPTH)
        new._table = self._table
        new._builders = self._builders
        new._limit = self._limit
        return new

    # -- reading the position -----------------------------------------------------------

    def position(self) -> str:
        """Canonical position notation (spec section 8)."""
        return format_position(self.rules, self._found, self._cols, self._down)

    def view(self) -> str:
        """The position as a player sees it: every face-down card written ``??``."""
        return format_position(self.rules, self._found, self._cols, self._down, hide=True)

    @property
    def score(self) -> int:
        return self._score

    @property
    def move_count(self) -> int:
        """Accepted moves; an undo does not lower it (spec section 6)."""
        return self._count

    @property
    def cards_on_foundations(self) -> int:
        return sum(self._found)

    def foundation_heights(self) -> tuple[int, int, int, int]:
        """Cards on each foundation, spades, hearts, diamonds, clubs."""
        f = self._found
        return (f[0], f[1], f[2], f[3])

    def column(self, n: int) -> list[str]:
        """Column ``n`` (1-7), bottom to top, as notation tokens (``ah`` face down, ``??``)."""
        column = self._cols[n - 1]
        down = self._down[n - 1]
        return [
            "??" if c == UNKNOWN else (CARD_TEXT[c].lower() if i < down else CARD_TEXT[c])
            for i, c in enumerate(column)
        ]

    def face_down_count(self, n: int) -> int:
        """How many cards of column ``n`` (1-7) are face down."""
        return self._down[n - 1]

    def is_won(self) -> bool:
        """All 52 cards are on the foundations."""
        return sum(self._found) == 52

    def is_stuck(self) -> bool:
        """Not won, and no legal move is left."""
        return not self.is_won() and next(self._moves(), None) is None

    def can_undo(self) -> bool:
        return bool(self._history)

    def __repr__(self) -> str:
        return f"Game.from_position({self.position()!r})"

    # -- legal moves ----------------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        """Every legal move as canonical text, in no particular order.

        Works on a view too: legality never depends on a face-down card.
        """
        return list(self._moves())

    def _moves(self) -> Iterator[str]:
        """The legal moves one by one: ``is_stuck`` (after every move a server accepts)
        stops at the first."""
        cols = self._cols
        loc = self._loc
        found = self._found
        builders = self._builders
        limit = self._limit
        empties: list[int] = []
        for d in range(7):
            col = cols[d]
            if not col:
                empties.append(d)
                continue
            top = col[-1]
            if found[top // 13] == top % 13:
                yield MOVE_TEXT[top][FOUNDATION]
            for c in builders[top]:
                s = loc[c]
                if s < 7 and s != d:
                    if limit and len(cols[s]) - cols[s].index(c) > limit:
                        continue
                    yield MOVE_TEXT[c][d]
        if empties:
            if self.rules.open_spaces:
                movable = [c for s in range(7) for c in cols[s][self._down[s] :]]
            else:
                movable = [k for k in _KINGS if loc[k] < 7]
            for c in movable:
                s = loc[c]
                if limit and len(cols[s]) - cols[s].index(c) > limit:
                    continue
                for d in empties:
                    if s != d:
                        yield MOVE_TEXT[c][d]
        if self.rules.take_back:
            table = self._table
            anywhere = self.rules.open_spaces
            for suit in range(4):
                height = found[suit]
                if not height:
                    continue
                c = suit * 13 + height - 1
                for d in range(7):
                    col = cols[d]
                    if table[c * 52 + col[-1]] if col else (height == 13 or anywhere):
                        yield MOVE_TEXT[c][d]

    # -- playing ----------------------------------------------------------------------------

    def play(self, move: str, *, reveal: str | None = None) -> Played:
        """Apply a legal move; a refused move changes nothing.

        ``reveal`` names the card the move turns face up. A game that knows its cards
        needs none (if given, it must be right); a view needs it exactly when the move
        uncovers a ``??`` card, and raises ``RevealError`` without it.

        Raises ``InvalidMoveError`` for text that is not a move, ``IllegalMoveError`` with
        the rule for a move that is not legal here.
        """
        card, dest = parse_move(move)
        src = self._loc[card]
        if src >= 7:
            if src == FOUNDATION:
                return self._take_back(move, card, dest)
            raise IllegalMoveError(move, f"the {card_name(card)} is not face up")
        cols = self._cols
        col = cols[src]
        if dest == FOUNDATION:
            if col[-1] != card:
                raise IllegalMoveError(
                    move, "only the exposed card of a column can go to a foundation"
                )
            suit = card // 13
            if self._found[suit] != card % 13:
                raise IllegalMoveError(
                    move,
                    f"the {card_name(card)} goes up only onto the {card_name(card - 1)}",
                )
            n = 1
        else:
            if dest == src:
                raise IllegalMoveError(
                    move, f"the {card_name(card)} is already in column {dest + 1}"
                )
            n = len(col) - col.index(card)
            if self._limit and n > self._limit:
                raise IllegalMoveError(
                    move, f"a move may carry at most {self._limit} cards; this one carries {n}"
                )
            target = cols[dest]
            if target:
                if not self._table[card * 52 + target[-1]]:
                    raise IllegalMoveError(move, self._refusal(card, target[-1]))
            elif card % 13 != 12 and not self.rules.open_spaces:
                raise IllegalMoveError(move, "an empty column takes only a king")
        down = self._down[src]
        flip = down > 0 and len(col) - n == down
        turned = self._check_reveal(col[down - 1], reveal) if flip else UNKNOWN
        # Checks are done: apply.
        before = self._score
        points = 0
        if dest == FOUNDATION:
            col.pop()
            self._found[card // 13] += 1
            self._loc[card] = FOUNDATION
            points = _POINTS_FOUNDATION
        else:
            group = col[-n:]
            del col[-n:]
            cols[dest].extend(group)
            loc = self._loc
            for c in group:
                loc[c] = dest
        text = MOVE_TEXT[card][dest]
        turned_text = None
        if flip:
            col[-1] = turned
            self._down[src] = down - 1
            self._loc[turned] = src
            points += _POINTS_FLIP
            turned_text = CARD_TEXT[turned]
        self._score = before + points
        self._count += 1
        self._history.append(_pack(card, src, dest, n, flip, before))
        return Played(text, turned_text, points)

    def _refusal(self, card: int, top: int) -> str:
        if top % 13 == 0 and self.rules.variant is not Variant.ALASKA:
            return "an ace accepts nothing"
        return build_requirement(self.rules.variant, card)

    def _check_reveal(self, under: int, reveal: str | None) -> int:
        if under != UNKNOWN:
            if reveal is not None and self._parse_reveal(reveal) != under:
                raise RevealError(f"this move turns up the {CARD_TEXT[under]}, not {reveal!r}")
            return under
        if reveal is None:
            raise RevealError("this move turns up a face-down card: say which with reveal=")
        card = self._parse_reveal(reveal)
        if self._loc[card] != UNSEEN:
            raise RevealError(
                f"{CARD_TEXT[card]} cannot be the card turned up: it is already in view"
            )
        return card

    @staticmethod
    def _parse_reveal(reveal: str) -> int:
        try:
            return parse_card(reveal)
        except InvalidCardError as exc:
            raise RevealError(f"reveal: {exc}") from None

    def _take_back(self, move: str, card: int, dest: int) -> Played:
        """A foundation's top card back onto a column, under option ``T`` (spec section 5)."""
        if dest == FOUNDATION:
            raise IllegalMoveError(move, f"the {card_name(card)} is already on its foundation")
        if not self.rules.take_back:
            raise IllegalMoveError(
                move, "a card on a foundation stays there (these rules have no take-back)"
            )
        suit = card // 13
        if self._found[suit] != card % 13 + 1:
            raise IllegalMoveError(move, "only the top card of a foundation can come back")
        target = self._cols[dest]
        if target:
            if not self._table[card * 52 + target[-1]]:
                raise IllegalMoveError(move, self._refusal(card, target[-1]))
        elif card % 13 != 12 and not self.rules.open_spaces:
            raise IllegalMoveError(move, "an empty column takes only a king")
        self._found[suit] -= 1
        target.append(card)
        self._loc[card] = dest
        self._count += 1
        self._history.append(_pack(card, FOUNDATION, dest, 1, False, self._score))
        return Played(MOVE_TEXT[card][dest], None, 0)

    def undo(self) -> str:
        """Take back the last move (up to ``UNDO_DEPTH``): cards, flips and score; not the count.

        Returns the text of the move taken back; raises ``UndoError`` when there is none.
        """
        if not self._history:
            raise UndoError("there is no move to undo")
        card, src, dest, n, flip, before = _unpack(self._history.pop())
        cols = self._cols
        loc = self._loc
        if src == FOUNDATION:  # a take-back
            cols[dest].pop()
            self._found[card // 13] += 1
            loc[card] = FOUNDATION
        else:
            col = cols[src]
            if flip:
                loc[col[-1]] = HIDDEN
                self._down[src] += 1
            if dest == FOUNDATION:
                self._found[card // 13] -= 1
                col.append(card)
                loc[card] = src
            else:
                target = cols[dest]
                group = target[-n:]
                del target[-n:]
                col.extend(group)
                for c in group:
                    loc[c] = src
        self._score = before
        return MOVE_TEXT[card][dest]
