"""Variants and options: the rules field of a game code (spec sections 4 and 5).

Each variant differs only in which card may build on which. That relation is turned into
a 52 x 52 table per variant at import, so the engine answers "may X go on Y?" with one
index instead of rank and colour arithmetic in its inner loop.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .cards import RANK_NAMES, card_name, is_red
from .errors import InvalidRulesError

__all__ = ["Variant", "Rules", "GROUP_LIMIT", "builds_on", "build_requirement"]

#: Option ``G``: a tableau move carries at most this many cards (spec section 5).
GROUP_LIMIT = 20


class Variant(enum.Enum):
    """How a picked card builds on a column's top card (spec section 4)."""

    CLASSIC = "C"
    RELAXED = "R"
    RUSSIAN = "S"
    ALASKA = "A"
    MOOSEHIDE = "M"

    @property
    def title(self) -> str:
        return _TITLES[self]


_TITLES = {
    Variant.CLASSIC: "Classic",
    Variant.RELAXED: "Relaxed",
    Variant.RUSSIAN: "Russian Solitaire",
    Variant.ALASKA: "Alaska",
    Variant.MOOSEHIDE: "Moosehide",
}

_OPTION_ORDER = "EGT"


@dataclass(frozen=True, slots=True)
class Rules:
    """A variant plus the options ``E`` (open spaces), ``G`` (group limit), ``T`` (take-back)."""

    variant: Variant = Variant.CLASSIC
    open_spaces: bool = False
    group_limit: bool = False
    take_back: bool = False

    @classmethod
    def parse(cls, text: str) -> Rules:
        """Parse a rules field such as ``C``, ``RT`` or ``MEGT``; lower case is accepted."""
        if not isinstance(text, str) or not text:
            raise InvalidRulesError("empty rules field (expected a variant letter C R S A M)")
        if not text.isascii():
            raise InvalidRulesError(f"rules {text!r} may hold only the letters C R S A M E G T")
        field = text.upper()
        try:
            variant = Variant(field[0])
        except ValueError:
            raise InvalidRulesError(
                f"unknown variant {text[0]!r} in rules {text!r} (expected one of C R S A M)"
            ) from None
        options = field[1:]
        last = -1
        for letter in options:
            where = _OPTION_ORDER.find(letter)
            if where < 0:
                raise InvalidRulesError(
                    f"unknown option {letter!r} in rules {text!r} (options are E G T)"
                )
            if where == last:
                raise InvalidRulesError(f"option {letter!r} repeated in rules {text!r}")
            if where < last:
                raise InvalidRulesError(
                    f"options out of order in rules {text!r} (write them in the order E G T)"
                )
            last = where
        return cls(variant, "E" in options, "G" in options, "T" in options)

    def __str__(self) -> str:
        return (
            self.variant.value
            + ("E" if self.open_spaces else "")
            + ("G" if self.group_limit else "")
            + ("T" if self.take_back else "")
        )

    def describe(self) -> str:
        """Words for a lobby: ``"Classic, take-back"``."""
        parts = [self.variant.title]
        if self.open_spaces:
            parts.append("open spaces")
        if self.group_limit:
            parts.append(f"groups of at most {GROUP_LIMIT}")
        if self.take_back:
            parts.append("take-back")
        return ", ".join(parts)


def _builds(variant: Variant, card: int, top: int) -> bool:
    cr, cs = card % 13, card // 13
    tr, ts = top % 13, top // 13
    if variant is Variant.CLASSIC:
        return cr + 1 == tr and is_red(card) != is_red(top)
    if variant is Variant.RELAXED:
        return cr + 1 == tr
    if variant is Variant.RUSSIAN:
        return cr + 1 == tr and cs == ts
    if variant is Variant.ALASKA:
        return cs == ts and abs(cr - tr) == 1
    return cr + 1 == tr and cs != ts  # Moosehide


#: ``BUILD_TABLE[variant][card * 52 + top]``: may ``card`` be placed on ``top``?
BUILD_TABLE: dict[Variant, bytes] = {
    v: bytes(_builds(v, c, t) for c in range(52) for t in range(52)) for v in Variant
}

#: ``BUILDERS[variant][top]``: the cards that may be placed on ``top``.
BUILDERS: dict[Variant, tuple[tuple[int, ...], ...]] = {
    v: tuple(tuple(c for c in range(52) if _builds(v, c, t)) for t in range(52)) for v in Variant
}


def builds_on(variant: Variant, card: int, top: int) -> bool:
    """May ``card`` be placed on a column whose top card is ``top``?"""
    return bool(BUILD_TABLE[variant][card * 52 + top])


def build_requirement(variant: Variant, card: int) -> str:
    """What ``card`` needs to land on, in a player's words: ``"a 7 of spades needs a red 8"``."""
    rank = card % 13
    suit_word = card_name(card).split(" of ")[1]
    singular = suit_word[:-1]
    if variant is Variant.ALASKA:
        options = [r for r in (rank - 1, rank + 1) if 0 <= r < 13]
        words = " or ".join(f"the {card_name(card // 13 * 13 + r)}" for r in options)
        return f"{card_name(card, article=True)} needs {words}"
    if rank == 12:
        return f"{card_name(card, article=True)} can only go to an empty column"
    higher = RANK_NAMES[rank + 1]
    if variant is Variant.CLASSIC:
        colour = "black" if is_red(card) else "red"
        return f"{card_name(card, article=True)} needs a {colour} {higher}"
    if variant is Variant.RELAXED:
        return f"{card_name(card, article=True)} needs {_article(higher)} {higher}"
    if variant is Variant.RUSSIAN:
        return f"{card_name(card, article=True)} needs the {higher} of {suit_word}"
    return (
        f"{card_name(card, article=True)} needs {_article(higher)} {higher}"
        f" that is not a {singular}"
    )


def _article(word: str) -> str:
    return "an" if word[0] in "a8" else "a"
