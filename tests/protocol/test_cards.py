"""Cards: index, text, parsing and names (spec section 1)."""

from __future__ import annotations

import pytest

from protocol import CARD_TEXT, InvalidCardError, YukonError, card_name, card_text, parse_card
from protocol.cards import RANKS, SUITS, card_index, card_rank, card_suit, is_red


def test_ranks_low_to_high_and_suits_in_foundation_order() -> None:
    assert RANKS == "A23456789TJQK"
    assert SUITS == "SHDC"


@pytest.mark.parametrize(
    ("text", "index"),
    [("AS", 0), ("KS", 12), ("AH", 13), ("KH", 25), ("AD", 26), ("AC", 39), ("KC", 51)],
)
def test_card_index_is_suit_times_13_plus_rank_minus_1(text: str, index: int) -> None:
    assert parse_card(text) == index
    assert card_text(index) == text
    assert CARD_TEXT[index] == text


def test_every_index_has_its_own_canonical_text() -> None:
    assert len(CARD_TEXT) == 52
    assert len(set(CARD_TEXT)) == 52
    for suit, s in enumerate(SUITS):
        for rank, r in enumerate(RANKS, start=1):
            card = suit * 13 + rank - 1
            assert card_text(card) == r + s
            assert card_index(rank, suit) == card
            assert card_rank(card) == rank
            assert card_suit(card) == suit


def test_hearts_and_diamonds_are_red() -> None:
    for card in range(52):
        assert is_red(card) == (CARD_TEXT[card][1] in "HD")


@pytest.mark.parametrize("text", CARD_TEXT)
def test_parse_accepts_canonical_and_lower_case(text: str) -> None:
    card = parse_card(text)
    assert card_text(card) == text
    assert parse_card(text.lower()) == card
    assert parse_card(text[0].lower() + text[1]) == card
    assert parse_card(text[0] + text[1].lower()) == card


@pytest.mark.parametrize(
    ("text", "canonical"), [("10H", "TH"), ("10h", "TH"), ("10S", "TS"), ("th", "TH")]
)
def test_parse_accepts_10_for_ten(text: str, canonical: str) -> None:
    assert card_text(parse_card(text)) == canonical


@pytest.mark.parametrize(
    "text",
    ["", "A", "S", "1S", "11H", "0S", "XS", "7X", "7", "AS ", " AS", "ASS", "10", "1OH", "??", "T"],
)
def test_parse_refuses_what_is_not_a_card(text: str) -> None:
    with pytest.raises(InvalidCardError, match="not a card"):
        parse_card(text)


@pytest.mark.parametrize("value", [None, 7, ["AS"], b"AS"])
def test_parse_refuses_what_is_not_text(value: object) -> None:
    with pytest.raises(InvalidCardError):
        parse_card(value)  # type: ignore[arg-type]


def test_invalid_card_error_is_a_value_error() -> None:
    assert issubclass(InvalidCardError, YukonError)
    assert issubclass(InvalidCardError, ValueError)


@pytest.mark.parametrize(
    ("text", "name", "with_article"),
    [
        ("7S", "7 of spades", "a 7 of spades"),
        ("AH", "ace of hearts", "an ace of hearts"),
        ("8C", "8 of clubs", "an 8 of clubs"),
        ("TD", "10 of diamonds", "a 10 of diamonds"),
        ("JS", "jack of spades", "a jack of spades"),
        ("QH", "queen of hearts", "a queen of hearts"),
        ("KD", "king of diamonds", "a king of diamonds"),
    ],
)
def test_card_name_in_words(text: str, name: str, with_article: str) -> None:
    assert card_name(parse_card(text)) == name
    assert card_name(parse_card(text), article=True) == with_article
