"""Yukon Race's shared core: the rules engine and the wire protocol.

Pure code: no I/O, no clock, no asyncio. The server validates every move with it and the
client uses it for placement help, so both always agree on the rules; ``messages`` is what
they say to each other on the wire. The solver is a package of its own (``solver``), built
on this one: nothing here imports it.
"""

from __future__ import annotations

from .cards import CARD_TEXT, card_name, card_text, parse_card
from .codes import GameCode
from .errors import (
    IllegalMoveError,
    InvalidCardError,
    InvalidCodeError,
    InvalidMoveError,
    InvalidPositionError,
    InvalidRulesError,
    RevealError,
    UndoError,
    YukonError,
)
from .game import UNDO_DEPTH, Game, Played
from .moves import Move, parse_move
from .rules import Rules, Variant

__all__ = [
    "CARD_TEXT",
    "Game",
    "GameCode",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidCodeError",
    "InvalidMoveError",
    "InvalidPositionError",
    "InvalidRulesError",
    "Move",
    "Played",
    "RevealError",
    "Rules",
    "UNDO_DEPTH",
    "UndoError",
    "Variant",
    "YukonError",
    "card_name",
    "card_text",
    "parse_card",
    "parse_move",
]
