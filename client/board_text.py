"""A game drawn as plain terminal text, for ``yukon deal`` and ``yukon replay``.

Suits are glyphs in colour where the terminal can show them; ``ascii=True`` falls back to
the letters S H D C, and ``color=False`` drops the escape codes (pipes, ``NO_COLOR``).
"""

from __future__ import annotations

from protocol import Game

__all__ = ["Style", "render_board"]

_GLYPHS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_RED = "\x1b[31m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"


class Style:
    """How to draw cards: suit glyphs or letters, colour or not."""

    def __init__(self, *, ascii: bool = False, color: bool = False) -> None:
        self.ascii = ascii
        self.color = color

    def card(self, text: str) -> str:
        """A face-up card, three cells wide (``10`` needs two cells for its rank)."""
        rank = "10" if text[0] == "T" else text[0]
        suit = text[1] if self.ascii else _GLYPHS[text[1]]
        cell = f"{rank}{suit}".rjust(3)
        if self.color and text[1] in "HD":
            return f"{_RED}{cell}{_RESET}"
        return cell

    def back(self) -> str:
        """A face-down card: its identity is never shown."""
        cell = "###" if self.ascii else "░░░"
        return f"{_DIM}{cell}{_RESET}" if self.color else cell

    def empty(self) -> str:
        return "  ."


def render_board(game: Game, style: Style) -> str:
    """Foundations on top, then the seven columns drawn downwards, bottom card first."""
    heights = game.foundation_heights()
    found = []
    for suit, height in zip("SHDC", heights, strict=True):
        if height:
            found.append(style.card("A23456789TJQK"[height - 1] + suit))
        else:
            found.append(" --" if style.ascii else f" -{_GLYPHS[suit]}")
    lines = ["Foundations: " + " ".join(found), ""]
    columns = [game.column(n) for n in range(1, 8)]
    down = [game.face_down_count(n) for n in range(1, 8)]
    lines.append(" ".join(f"  {n} " for n in range(1, 8)).rstrip())
    depth = max(len(c) for c in columns)
    for row in range(max(depth, 1)):
        cells = []
        for column, hidden in zip(columns, down, strict=True):
            if row < hidden:
                cells.append(style.back())
            elif row < len(column):
                cells.append(style.card(column[row]))
            else:
                cells.append(style.empty() if row == 0 else "   ")
        lines.append(" ".join(f"{c} " for c in cells).rstrip())
    return "\n".join(lines)
