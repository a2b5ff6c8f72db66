"""The exceptions of the rules engine.

Every error the engine raises for bad input is a ``ValueError`` so that callers who
only want to say "that was not acceptable" can catch one thing::

    ValueError
     └── YukonError
          ├── InvalidCardError       text that is not a card
          ├── InvalidCodeError       a malformed game code (names the bad part)
          ├── InvalidRulesError      a malformed rules field
          ├── InvalidPositionError   position notation that does not parse or is impossible
          ├── InvalidMoveError       text that is not a move at all
          ├── IllegalMoveError       a well-formed move the rules forbid here
          ├── RevealError            a flip whose card identity is missing or impossible
          └── UndoError              nothing left to take back

The split between *invalid* and *illegal* follows python-chess: the first is about
syntax and never depends on the position, the second is about the position and carries a
reason a player understands.
"""

from __future__ import annotations

__all__ = [
    "YukonError",
    "InvalidCardError",
    "InvalidCodeError",
    "InvalidRulesError",
    "InvalidPositionError",
    "InvalidMoveError",
    "IllegalMoveError",
    "RevealError",
    "UndoError",
]


class YukonError(ValueError):
    """Base class of every error the engine raises for input it cannot accept."""


class InvalidCardError(YukonError):
    """The text is not a card such as ``7S``, ``TH`` or ``10h``."""


class InvalidRulesError(YukonError):
    """The text is not a rules field such as ``C``, ``RT`` or ``MEGT`` (spec section 5)."""


class InvalidCodeError(YukonError):
    """The text is not a game code; the message names the part that is wrong."""


class InvalidPositionError(YukonError):
    """The text is not valid position notation (spec section 8)."""


class InvalidMoveError(YukonError):
    """The text is not a move (spec section 9); nothing about the position is consulted."""


class IllegalMoveError(YukonError):
    """The move is well formed but the rules forbid it in this position.

    ``move`` is the text as given and ``reason`` the rule, phrased for a player.
    """

    def __init__(self, move: str, reason: str) -> None:
        super().__init__(f"illegal move {move}: {reason}")
        self.move = move
        self.reason = reason


class RevealError(YukonError):
    """A move turns up a card the game does not know, and no valid identity was given.

    Games built from a player's view (``??`` cards) learn each card's identity from the
    caller at the moment it turns face up; see ``Game.play``.
    """


class UndoError(YukonError):
    """There is no move left to take back."""
