"""Move notation ``<card>><destination>`` (spec section 9)."""

from __future__ import annotations

import pytest

from protocol import (
    CARD_TEXT,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    YukonError,
    parse_card,
    parse_move,
)
from protocol.moves import FOUNDATION, MOVE_TEXT


def test_foundation_is_destination_7() -> None:
    assert FOUNDATION == 7


def test_every_move_has_one_canonical_text() -> None:
    texts = [MOVE_TEXT[card][dest] for card in range(52) for dest in range(8)]
    assert len(set(texts)) == 52 * 8
    for card in range(52):
        for dest in range(7):
            assert str(Move(card, dest)) == f"{CARD_TEXT[card]}>{dest + 1}"
        assert str(Move(card, FOUNDATION)) == f"{CARD_TEXT[card]}>F"


def test_canonical_texts_round_trip() -> None:
    for card in range(52):
        for dest in range(8):
            text = MOVE_TEXT[card][dest]
            assert parse_move(text) == (card, dest)
            assert Move.parse(text) == Move(card, dest)
            assert str(Move.parse(text)) == text


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("7S>4", "7S>4"),
        ("7s>4", "7S>4"),
        ("ah>f", "AH>F"),
        ("AH>f", "AH>F"),
        ("10h>3", "TH>3"),
        ("10H>F", "TH>F"),
        ("th>7", "TH>7"),
        (" 7S>4 ", "7S>4"),
        ("7S > 4", "7S>4"),
        ("  kd  >  1  ", "KD>1"),
        ("9S>4\n", "9S>4"),
    ],
)
def test_lenient_input_canonical_output(text: str, canonical: str) -> None:
    move = Move.parse(text)
    assert str(move) == canonical
    assert parse_move(text) == (move.card, move.dest)


def test_move_parts() -> None:
    assert Move.parse("7S>4") == Move(parse_card("7S"), 3)
    assert Move.parse("AH>F") == Move(parse_card("AH"), FOUNDATION)
    assert Move.parse("KC>1").card == 51
    assert Move.parse("KC>1").dest == 0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "not a move"),
        ("7S", "not a move"),
        ("7S4", "not a move"),
        ("7S-4", "not a move"),
        ("7S>", "destination"),
        ("7S>0", "destination"),
        ("7S>8", "destination"),
        ("7S>44", "destination"),
        ("7S>G", "destination"),
        ("7S>FF", "destination"),
        ("7S>>4", "destination"),
        ("7S>-1", "destination"),
        (">4", "is not a card"),
        ("1S>4", "is not a card"),
        ("7X>4", "is not a card"),
        ("7S7>4", "is not a card"),
        ("??>4", "is not a card"),
        ("7 S>4", "is not a card"),
        ("hello", "not a move"),
    ],
)
def test_garbage_is_an_invalid_move(text: str, words: str) -> None:
    with pytest.raises(InvalidMoveError, match=words):
        parse_move(text)
    with pytest.raises(InvalidMoveError):
        Move.parse(text)


@pytest.mark.parametrize("value", [None, 74, b"7S>4"])
def test_a_move_is_text(value: object) -> None:
    with pytest.raises(InvalidMoveError):
        parse_move(value)  # type: ignore[arg-type]


def test_an_unhashable_value_is_an_invalid_move() -> None:
    with pytest.raises(InvalidMoveError):
        parse_move(["7S>4"])  # type: ignore[arg-type]


def test_both_move_errors_are_value_errors() -> None:
    assert issubclass(InvalidMoveError, YukonError)
    assert issubclass(InvalidMoveError, ValueError)
    assert issubclass(IllegalMoveError, YukonError)
    assert issubclass(IllegalMoveError, ValueError)
    assert not issubclass(InvalidMoveError, IllegalMoveError)
    assert not issubclass(IllegalMoveError, InvalidMoveError)


def test_illegal_move_error_carries_move_and_reason() -> None:
    error = IllegalMoveError("QD>1", "an empty column takes only a king")
    assert error.move == "QD>1"
    assert error.reason == "an empty column takes only a king"
    assert str(error) == "illegal move QD>1: an empty column takes only a king"
