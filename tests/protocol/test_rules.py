"""Variants and options (spec sections 4 and 5): the rules field and the build relation."""

from __future__ import annotations

import itertools

import pytest

from protocol import InvalidRulesError, Rules, Variant, YukonError, parse_card
from protocol.rules import GROUP_LIMIT, build_requirement, builds_on

ALL_RULES = [
    v + "".join(opts)
    for v in "CRSAM"
    for n in range(4)
    for opts in itertools.combinations("EGT", n)
]


def _rank_suit(card: int) -> tuple[int, str]:
    text = "A23456789TJQK"[card % 13] + "SHDC"[card // 13]
    return "A23456789TJQK".index(text[0]) + 1, text[1]


def spec_builds(variant: str, card: int, top: int) -> bool:
    """Section 4's table, written out again from ranks and suits."""
    rank, suit = _rank_suit(card)
    top_rank, top_suit = _rank_suit(top)
    red, top_red = suit in "HD", top_suit in "HD"
    one_higher = top_rank == rank + 1
    if variant == "C":
        return one_higher and red != top_red
    if variant == "R":
        return one_higher
    if variant == "S":
        return one_higher and suit == top_suit
    if variant == "A":
        return suit == top_suit and abs(top_rank - rank) == 1
    assert variant == "M"
    return one_higher and suit != top_suit


def c(text: str) -> int:
    return parse_card(text)


# -- the rules field ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ALL_RULES)
def test_every_rules_field_round_trips(text: str) -> None:
    rules = Rules.parse(text)
    assert str(rules) == text
    assert rules.variant is Variant(text[0])
    assert rules.open_spaces == ("E" in text)
    assert rules.group_limit == ("G" in text)
    assert rules.take_back == ("T" in text)
    assert Rules.parse(text.lower()) == rules


def test_classic_without_options_is_the_default() -> None:
    assert Rules() == Rules.parse("C")
    assert str(Rules()) == "C"


@pytest.mark.parametrize(
    ("letter", "variant", "title"),
    [
        ("C", Variant.CLASSIC, "Classic"),
        ("R", Variant.RELAXED, "Relaxed"),
        ("S", Variant.RUSSIAN, "Russian Solitaire"),
        ("A", Variant.ALASKA, "Alaska"),
        ("M", Variant.MOOSEHIDE, "Moosehide"),
    ],
)
def test_variant_letters(letter: str, variant: Variant, title: str) -> None:
    assert Rules.parse(letter).variant is variant
    assert variant.title == title


def test_describe_names_variant_and_options() -> None:
    assert Rules.parse("C").describe() == "Classic"
    assert Rules.parse("CT").describe() == "Classic, take-back"
    assert Rules.parse("SEGT").describe() == (
        "Russian Solitaire, open spaces, groups of at most 20, take-back"
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("X", "unknown variant"),
        ("E", "unknown variant"),
        ("1", "unknown variant"),
        ("CX", "unknown option"),
        ("CC", "unknown option"),
        ("CR", "unknown option"),
        ("C T", "unknown option"),
        ("CTE", "out of order"),
        ("CGE", "out of order"),
        ("CTG", "out of order"),
        ("CEGTE", "out of order"),
        ("CEE", "repeated"),
        ("CGG", "repeated"),
        ("CTT", "repeated"),
    ],
)
def test_malformed_rules_are_refused(text: str, words: str) -> None:
    with pytest.raises(InvalidRulesError, match=words):
        Rules.parse(text)


def test_invalid_rules_error_is_a_value_error() -> None:
    assert issubclass(InvalidRulesError, YukonError)
    assert issubclass(InvalidRulesError, ValueError)
    with pytest.raises(InvalidRulesError):
        Rules.parse(None)  # type: ignore[arg-type]


def test_group_limit_is_20() -> None:
    assert GROUP_LIMIT == 20


# -- the build relation -----------------------------------------------------------------------


@pytest.mark.parametrize("variant", "CRSAM")
def test_build_relation_matches_the_spec_table_for_all_pairs(variant: str) -> None:
    v = Variant(variant)
    for card in range(52):
        for top in range(52):
            assert builds_on(v, card, top) == spec_builds(variant, card, top), (card, top)


# What the 7 of spades may go on, variant by variant (section 4).
SEVEN_OF_SPADES_ON = {
    "C": {"8H", "8D"},
    "R": {"8S", "8H", "8D", "8C"},
    "S": {"8S"},
    "A": {"8S", "6S"},
    "M": {"8H", "8D", "8C"},
}


@pytest.mark.parametrize("variant", "CRSAM")
def test_where_a_seven_of_spades_builds(variant: str) -> None:
    tops = ["8S", "8H", "8D", "8C", "6S", "6H", "6C", "7H", "9S", "9H", "7S"]
    allowed = {t for t in tops if builds_on(Variant(variant), c("7S"), c(t))}
    assert allowed == SEVEN_OF_SPADES_ON[variant]


def test_seed_examples_of_building() -> None:
    classic, alaska, moose = Variant.CLASSIC, Variant.ALASKA, Variant.MOOSEHIDE
    # Seed 001: a 7 of hearts goes on an 8 of spades or clubs.
    assert builds_on(classic, c("7H"), c("8S"))
    assert builds_on(classic, c("7H"), c("8C"))
    assert not builds_on(classic, c("7H"), c("8D"))
    # Seed 004: on the 9 of hearts, Alaska takes the 8 or the 10 of hearts.
    assert builds_on(alaska, c("8H"), c("9H"))
    assert builds_on(alaska, c("TH"), c("9H"))
    assert not builds_on(alaska, c("8S"), c("9H"))
    # Seed 004: in Moosehide the 8 of clubs goes on either red 9 or the 9 of spades.
    assert builds_on(moose, c("8C"), c("9H"))
    assert builds_on(moose, c("8C"), c("9D"))
    assert builds_on(moose, c("8C"), c("9S"))
    assert not builds_on(moose, c("8C"), c("9C"))


@pytest.mark.parametrize("variant", list(Variant))
def test_ranks_never_wrap(variant: Variant) -> None:
    for king in ("KS", "KH", "KD", "KC"):
        for ace in ("AS", "AH", "AD", "AC"):
            assert not builds_on(variant, c(king), c(ace))
            assert not builds_on(variant, c(ace), c(king))


@pytest.mark.parametrize("variant", [v for v in Variant if v is not Variant.ALASKA])
def test_an_ace_accepts_nothing(variant: Variant) -> None:
    for ace in ("AS", "AH", "AD", "AC"):
        assert not any(builds_on(variant, card, c(ace)) for card in range(52))


def test_in_alaska_an_ace_accepts_only_the_two_of_its_suit() -> None:
    # Section 4: Alaska builds one rank lower *or higher* in suit, so a 2 goes on its ace.
    for suit in "SHDC":
        takers = {card for card in range(52) if builds_on(Variant.ALASKA, card, c("A" + suit))}
        assert takers == {c("2" + suit)}


@pytest.mark.parametrize("variant", list(Variant))
def test_a_king_builds_only_in_alaska(variant: Variant) -> None:
    tops = {top for top in range(52) if builds_on(variant, c("KH"), top)}
    assert tops == ({c("QH")} if variant is Variant.ALASKA else set())


@pytest.mark.parametrize(
    ("variant", "card", "message"),
    [
        ("C", "7S", "a 7 of spades needs a red 8"),
        ("C", "7H", "a 7 of hearts needs a black 8"),
        ("C", "AD", "an ace of diamonds needs a black 2"),
        ("C", "JC", "a jack of clubs needs a red queen"),
        ("C", "KS", "a king of spades can only go to an empty column"),
        ("R", "7S", "a 7 of spades needs an 8"),
        ("R", "QD", "a queen of diamonds needs a king"),
        ("S", "7S", "a 7 of spades needs the 8 of spades"),
        ("S", "9H", "a 9 of hearts needs the 10 of hearts"),
        ("A", "7S", "a 7 of spades needs the 6 of spades or the 8 of spades"),
        ("A", "AH", "an ace of hearts needs the 2 of hearts"),
        ("A", "KC", "a king of clubs needs the queen of clubs"),
        ("M", "7S", "a 7 of spades needs an 8 that is not a spade"),
        ("M", "8C", "an 8 of clubs needs a 9 that is not a club"),
        ("M", "KD", "a king of diamonds can only go to an empty column"),
    ],
)
def test_build_requirement_in_a_players_words(variant: str, card: str, message: str) -> None:
    assert build_requirement(Variant(variant), c(card)) == message
