"""Move notation ``<card>><destination>`` (spec section 9).

A move is two small integers: the picked card and a destination, 0-6 for columns 1-7 and
``FOUNDATION`` (7) for the card's foundation. Because every card is unique the card also
says where the move starts, so no source is written. Canonical texts are built at import
and parsing a canonical text is one dictionary lookup, which keeps ``Game.play`` cheap.
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import CARD_TEXT, parse_card
from .errors import InvalidCardError, InvalidMoveError

__all__ = ["Move", "FOUNDATION", "MOVE_TEXT", "parse_move"]

#: Destination index of a foundation.
FOUNDATION = 7

#: ``MOVE_TEXT[card][dest]``: canonical text of every move.
MOVE_TEXT: tuple[tuple[str, ...], ...] = tuple(
    (*(f"{CARD_TEXT[c]}>{d + 1}" for d in range(7)), f"{CARD_TEXT[c]}>F") for c in range(52)
)

_CANONICAL: dict[str, tuple[int, int]] = {
    MOVE_TEXT[c][d]: (c, d) for c in range(52) for d in range(8)
}


class Move(NamedTuple):
    """A picked card and where it goes."""

    card: int
    dest: int

    @classmethod
    def parse(cls, text: str) -> Move:
        return cls(*parse_move(text))

    def __str__(self) -> str:
        return MOVE_TEXT[self.card][self.dest]


def parse_move(text: str) -> tuple[int, int]:
    """``(card, dest)`` of a move text; lenient: lower case, ``10`` for ten, spaces around."""
    try:
        hit = _CANONICAL.get(text)
    except TypeError:  # unhashable: certainly not a move; checked here to keep the hot path lean
        hit = None
    if hit is not None:
        return hit
    if not isinstance(text, str):
        raise InvalidMoveError(f"a move is text, not {type(text).__name__}")
    raw = text.strip()
    card_part, sep, dest_part = raw.partition(">")
    if not sep:
        raise InvalidMoveError(
            f"not a move: {text!r} (write a card, '>', then a column 1-7 or F, as in 7S>4)"
        )
    try:
        card = parse_card(card_part.strip())
    except InvalidCardError:
        raise InvalidMoveError(
            f"not a move: {text!r}: {card_part.strip()!r} is not a card"
        ) from None
    dest_part = dest_part.strip()
    if dest_part in ("F", "f"):
        return card, FOUNDATION
    if len(dest_part) == 1 and "1" <= dest_part <= "7":
        return card, int(dest_part) - 1
    raise InvalidMoveError(
        f"not a move: {text!r}: destination {dest_part!r} is not a column 1-7 or F"
    )
