"""Cards as a player reads them: ``7♠`` and ``10♥``, or ``7S`` and ``10H`` with ``--ascii``."""

from __future__ import annotations

__all__ = [
    "FOUR_COLOUR",
    "GLYPHS",
    "SUIT_ORDER",
    "TWO_COLOUR",
    "ink",
    "is_red",
    "label",
    "move_label",
    "rank_label",
]

GLYPHS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
#: Foundation order on the wire (position notation): spades, hearts, diamonds, clubs.
SUIT_ORDER = "SHDC"


def is_red(card: str) -> bool:
    """Hearts and diamonds; ``card`` is canonical text such as ``7H``."""
    return card[-1] in "HD"


#: The usual deck's inks on a card's face: black spades and clubs, red hearts and diamonds.
TWO_COLOUR = {"S": "#101010", "H": "#c00000", "D": "#c00000", "C": "#101010"}
#: The four-colour deck (issue 29): spades black, hearts red, diamonds blue, clubs green,
#: each at least 4.5:1 against the face (``widgets.FACE``), as the browser's are.
FOUR_COLOUR = {"S": "#101010", "H": "#c00000", "D": "#1a4fc2", "C": "#17733a"}


def ink(card: str, *, four: bool = False) -> str:
    """The colour ``card``'s rank and suit are drawn in, on the usual or the four-colour deck."""
    return (FOUR_COLOUR if four else TWO_COLOUR)[card[-1]]


def rank_label(card: str) -> str:
    return "10" if card[0] == "T" else card[0]


def label(card: str, *, ascii: bool = False) -> str:
    """``7S`` as ``7♠`` (or ``7S``); a ten is written ``10``."""
    suit = card[-1]
    return rank_label(card) + (suit if ascii else GLYPHS[suit])


def move_label(move: str, *, ascii: bool = False) -> str:
    """``7S>4`` as ``7♠ → 4`` (``7S -> 4``), ``AH>F`` as ``A♥ → foundation``."""
    card, _, dest = move.partition(">")
    arrow = "->" if ascii else "→"
    where = "foundation" if dest == "F" else dest
    try:
        shown = label(card, ascii=ascii)
    except (KeyError, IndexError):
        shown = card
    return f"{shown} {arrow} {where}"
