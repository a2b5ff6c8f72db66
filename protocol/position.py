"""Position notation (spec section 8): one line for a whole position, like chess's FEN.

    <rules> <foundations> <column 1>/<column 2>/.../<column 7>

This module turns text into plain data and back; ``Game`` owns the data. Face-down cards
are lower case, a face-down card the viewer does not know is ``??`` (held as ``UNKNOWN``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import CARD_TEXT, RANKS, SUITS
from .errors import InvalidPositionError, InvalidRulesError
from .rules import Rules

__all__ = ["UNKNOWN", "PositionData", "parse_position", "format_position"]

#: A face-down card whose identity the viewer does not know (``??``).
UNKNOWN = -1

_UPPER = {t: i for i, t in enumerate(CARD_TEXT)}
_LOWER = {t.lower(): i for i, t in enumerate(CARD_TEXT)}
_LOWER_TEXT = tuple(t.lower() for t in CARD_TEXT)


@dataclass(slots=True)
class PositionData:
    """A parsed position: foundation heights per suit, columns bottom to top, face-down counts."""

    rules: Rules
    foundations: list[int]
    columns: list[list[int]]
    face_down: list[int]


def parse_position(text: str) -> PositionData:
    """Parse and check position notation; errors say what is wrong and where."""
    if not isinstance(text, str):
        raise InvalidPositionError(f"a position is text, not {type(text).__name__}")
    fields = text.strip().split(" ")
    if len(fields) != 3:
        raise InvalidPositionError(
            f"a position has three fields separated by single spaces"
            f" (rules, foundations, columns), found {len(fields)}: {text!r}"
        )
    rules_text, found_text, cols_text = fields
    try:
        rules = Rules.parse(rules_text)
    except InvalidRulesError as exc:
        raise InvalidPositionError(f"rules field: {exc}") from None
    if str(rules) != rules_text:
        raise InvalidPositionError(
            f"rules field {rules_text!r} is not canonical (write {str(rules)!r})"
        )
    if len(found_text) != 4:
        raise InvalidPositionError(
            f"foundations field {found_text!r} must be four characters (S H D C), each a rank or -"
        )
    foundations = []
    seen: dict[int, str] = {}
    for suit, ch in enumerate(found_text):
        if ch == "-":
            foundations.append(0)
            continue
        rank = RANKS.find(ch)
        if rank < 0:
            raise InvalidPositionError(
                f"foundations field {found_text!r}: {ch!r} for {SUITS[suit]} is not a rank or -"
            )
        foundations.append(rank + 1)
        for r in range(rank + 1):
            seen[suit * 13 + r] = "on its foundation"
    columns_text = cols_text.split("/")
    if len(columns_text) != 7:
        raise InvalidPositionError(
            f"expected 7 columns separated by '/', found {len(columns_text)}"
        )
    columns: list[list[int]] = []
    face_down: list[int] = []
    unknown = 0
    for n, ctext in enumerate(columns_text, start=1):
        if len(ctext) % 2:
            raise InvalidPositionError(f"column {n} {ctext!r}: cards are two characters each")
        column: list[int] = []
        down = 0
        for i in range(0, len(ctext), 2):
            token = ctext[i : i + 2]
            if token == "??":
                card = UNKNOWN
                is_down = True
                unknown += 1
            elif token in _UPPER:
                card = _UPPER[token]
                is_down = False
            elif token in _LOWER:
                card = _LOWER[token]
                is_down = True
            else:
                raise InvalidPositionError(f"column {n}: {token!r} is not a card")
            if is_down:
                if down != len(column):
                    raise InvalidPositionError(
                        f"column {n}: face-down card {token!r} lies on a face-up card"
                        " (face-down cards come first)"
                    )
                down += 1
            if card != UNKNOWN:
                if card in seen:
                    raise InvalidPositionError(
                        f"{CARD_TEXT[card]} appears twice (column {n}, and {seen[card]})"
                    )
                seen[card] = f"column {n}"
            column.append(card)
        if column and down == len(column):
            raise InvalidPositionError(
                f"column {n}: its top card is face down, but an uncovered card turns face up"
            )
        columns.append(column)
        face_down.append(down)
    total = len(seen) + unknown
    if total != 52:
        what = "cards plus ?? make" if unknown else "cards make"
        missing = (
            ""
            if unknown
            else ": missing " + " ".join(CARD_TEXT[c] for c in range(52) if c not in seen)
        )
        raise InvalidPositionError(f"{what} {total}, not 52{missing}")
    return PositionData(rules, foundations, columns, face_down)


def format_position(
    rules: Rules,
    foundations: list[int],
    columns: list[list[int]],
    face_down: list[int],
    *,
    hide: bool = False,
) -> str:
    """Canonical text; with ``hide`` every face-down card is written ``??`` (a player's view)."""
    found = "".join(RANKS[h - 1] if h else "-" for h in foundations)
    parts = []
    for column, down in zip(columns, face_down, strict=True):
        if hide:
            text = "??" * down
        else:
            text = "".join("??" if c == UNKNOWN else _LOWER_TEXT[c] for c in column[:down])
        parts.append(text + "".join(CARD_TEXT[c] for c in column[down:]))
    return f"{rules} {found} {'/'.join(parts)}"
