"""Cards as small integers (spec section 1).

A card is ``suit * 13 + (rank - 1)`` with spades, hearts, diamonds, clubs = 0, 1, 2, 3:
the same index the shuffle uses and the wire may carry. Integers keep the engine's hot
loops free of object attribute lookups; text is produced from tables built at import.
"""

from __future__ import annotations

from .errors import InvalidCardError

__all__ = [
    "RANKS",
    "RANK_NAMES",
    "SUITS",
    "CARD_TEXT",
    "card_index",
    "card_rank",
    "card_suit",
    "is_red",
    "parse_card",
    "card_text",
    "card_name",
]

#: Rank letters, ace (1) to king (13); ranks never wrap.
RANKS = "A23456789TJQK"
#: Suit letters in foundation order.
SUITS = "SHDC"

_SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
#: Rank words for messages, ace to king.
RANK_NAMES = ("ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king")

#: Canonical text of each card index, e.g. ``CARD_TEXT[0] == "AS"``.
CARD_TEXT: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)

_PARSE: dict[str, int] = {}
for _i, _t in enumerate(CARD_TEXT):
    _PARSE[_t] = _i
    _PARSE[_t.lower()] = _i
    _PARSE[_t[0] + _t[1].lower()] = _i
    _PARSE[_t[0].lower() + _t[1]] = _i
    if _t[0] == "T":
        _PARSE["10" + _t[1]] = _i
        _PARSE["10" + _t[1].lower()] = _i


def card_index(rank: int, suit: int) -> int:
    """The card of ``rank`` (1-13) and ``suit`` (0-3)."""
    return suit * 13 + rank - 1


def card_rank(card: int) -> int:
    """Rank 1 (ace) to 13 (king)."""
    return card % 13 + 1


def card_suit(card: int) -> int:
    """Suit 0-3 in foundation order S, H, D, C."""
    return card // 13


def is_red(card: int) -> bool:
    """Hearts and diamonds are red."""
    return card // 13 in (1, 2)


def parse_card(text: str) -> int:
    """Parse ``7S``, ``th``, ``10H``: upper or lower case, ``10`` for ten (spec section 1)."""
    try:
        return _PARSE[text]
    except (KeyError, TypeError):
        raise InvalidCardError(
            f"not a card: {text!r} (a rank A 2-9 T J Q K, or 10, then a suit S H D C)"
        ) from None


def card_text(card: int) -> str:
    """Canonical text: rank then suit, upper case, ``T`` for ten."""
    return CARD_TEXT[card]


def card_name(card: int, article: bool = False) -> str:
    """The card in words, for messages a player reads: ``"7 of spades"``."""
    name = f"{RANK_NAMES[card % 13]} of {_SUIT_NAMES[card // 13]}"
    if article:
        return ("an " if name[0] in "a8" else "a ") + name
    return name
