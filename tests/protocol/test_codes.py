"""Game codes ``YU1-<rules>-<deal>`` (docs/rules.md section 9)."""

from __future__ import annotations

import base64
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import GameCode, InvalidCodeError, Rules, Variant, YukonError
from protocol.codes import MAX_CODE, MAX_DEAL, SEED_CHARS

ALL_RULES = [
    v + "".join(opts)
    for v in "CRSAM"
    for n in range(4)
    for opts in itertools.combinations("EGT", n)
]


def base26(letters: str) -> int:
    """The spec's deal number, computed independently of the engine."""
    n = 0
    for ch in letters:
        n = n * 26 + "ABCDEFGHIJKLMNOPQRSTUVWXYZ".index(ch)
    return n


@pytest.mark.parametrize(
    ("deal_text", "deal"),
    [
        ("AAAAAAA", 0),
        ("AAAAAAB", 1),
        ("AAAAAAZ", 25),
        ("AAAAABA", 26),
        ("BAAAAAA", 26**6),
        ("ZZZZZZZ", 8_031_810_175),
    ],
)
def test_deal_letters_are_a_base_26_number(deal_text: str, deal: int) -> None:
    code = GameCode.parse(f"YU1-C-{deal_text}")
    assert code.deal == deal
    assert code.deal_text == deal_text
    assert str(code) == f"YU1-C-{deal_text}"


def test_max_deal_is_zzzzzzz() -> None:
    assert MAX_DEAL == 26**7 - 1 == 8_031_810_175


@pytest.mark.parametrize(
    "text",
    ["YU1-C-AAAAAAB", "YU1-R-AAAAAAB", "YU1-CT-QWERTYU", "YU1-MEGT-YUKONZZ", "YU1-SG-HELLOYU"],
)
def test_parse_and_format_round_trip(text: str) -> None:
    code = GameCode.parse(text)
    assert str(code) == text
    assert GameCode.parse(str(code)) == code


@pytest.mark.parametrize("rules", ALL_RULES)
def test_every_rules_field_round_trips_in_a_code(rules: str) -> None:
    text = f"YU1-{rules}-QWERTYU"
    code = GameCode.parse(text)
    assert str(code.rules) == rules
    assert code.deal == base26("QWERTYU")
    assert str(code) == text


def test_parts_of_a_parsed_code() -> None:
    code = GameCode.parse("YU1-CT-QWERTYU")
    assert code.rules == Rules(Variant.CLASSIC, take_back=True)
    assert code.deal == base26("QWERTYU")
    assert code == GameCode(Rules(Variant.CLASSIC, take_back=True), base26("QWERTYU"))


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("yu1-c-aaaaaab", "YU1-C-AAAAAAB"),
        ("Yu1-cT-QwErTyU", "YU1-CT-QWERTYU"),
        ("yu1-megt-zzzzzzz", "YU1-MEGT-ZZZZZZZ"),
    ],
)
def test_lower_case_is_accepted(text: str, canonical: str) -> None:
    assert str(GameCode.parse(text)) == canonical


def test_same_deal_number_under_every_rules() -> None:
    deals = {GameCode.parse(f"YU1-{rules}-AAAAAAB").deal for rules in ALL_RULES}
    assert deals == {1}


@pytest.mark.parametrize(
    ("text", "part"),
    [
        # wrong number of parts
        ("", "three parts"),
        ("YU1", "three parts"),
        ("YU1-C", "three parts"),
        ("YU1-C-AAAAAAB-X", "three parts"),
        ("YU1CAAAAAAB", "three parts"),
        ("YU1_C_AAAAAAB", "three parts"),
        ("YU1 C AAAAAAB", "three parts"),
        # version
        ("YU2-C-AAAAAAB", "version"),
        ("YU-C-AAAAAAB", "version"),
        ("XX1-C-AAAAAAB", "version"),
        ("-C-AAAAAAB", "version"),
        # rules: unknown letters
        ("YU1-X-AAAAAAB", "rules part"),
        ("YU1-CX-AAAAAAB", "rules part"),
        ("YU1-EC-AAAAAAB", "rules part"),
        ("YU1-CC-AAAAAAB", "rules part"),
        ("YU1--AAAAAAB", "rules part"),
        # rules: options out of order or repeated
        ("YU1-CTE-AAAAAAB", "rules part"),
        ("YU1-CGE-AAAAAAB", "rules part"),
        ("YU1-CTG-AAAAAAB", "rules part"),
        ("YU1-CEE-AAAAAAB", "rules part"),
        ("YU1-CETT-AAAAAAB", "rules part"),
        # deal: length and letters
        ("YU1-C-AAAAAA", "deal part"),
        ("YU1-C-AAAAAAAB", "deal part"),
        ("YU1-C-", "deal part"),
        ("YU1-C-AAAAAA1", "deal part"),
        ("YU1-C-AAA AAA", "deal part"),
        ("YU1-C-AAAAAA?", "deal part"),
        ("YU1-C-0000001", "deal part"),
    ],
)
def test_malformed_codes_are_refused_naming_the_bad_part(text: str, part: str) -> None:
    with pytest.raises(InvalidCodeError) as caught:
        GameCode.parse(text)
    assert part in str(caught.value)


@pytest.mark.parametrize(
    ("rules", "words"),
    [
        ("X", "unknown variant"),
        ("CX", "unknown option"),
        ("CTE", "out of order"),
        ("CGE", "out of order"),
        ("CTT", "repeated"),
        ("CEE", "repeated"),
        ("CGG", "repeated"),
    ],
)
def test_rules_part_errors_say_what_is_wrong(rules: str, words: str) -> None:
    with pytest.raises(InvalidCodeError, match=words):
        GameCode.parse(f"YU1-{rules}-AAAAAAB")


def test_a_code_is_text() -> None:
    with pytest.raises(InvalidCodeError):
        GameCode.parse(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidCodeError):
        GameCode.parse(1)  # type: ignore[arg-type]


@pytest.mark.parametrize("deal", [-1, 26**7, 10**20])
def test_deal_numbers_outside_the_seven_letters_are_refused(deal: int) -> None:
    with pytest.raises(InvalidCodeError, match="outside"):
        GameCode(Rules(), deal)


def test_invalid_code_error_is_a_value_error() -> None:
    assert issubclass(InvalidCodeError, YukonError)
    assert issubclass(InvalidCodeError, ValueError)


@pytest.mark.parametrize("text", ["YU1-C-AAAAAA\u0131", "YU1-\u017f-AAAAAAB"])
def test_non_ascii_letters_are_refused(text: str) -> None:
    with pytest.raises(InvalidCodeError):
        GameCode.parse(text)


# -- seeded codes: 26 base32 characters, the 128-bit seed of a secret deal ----------------------

SEED = bytes(range(16))
SEED_TEXT = "AAAQEAYEAUDAOCAJBIFQYDIOB4"  # RFC 4648 base32 of 00 01 02 ... 0f


def test_a_seed_is_written_in_rfc_4648_base32() -> None:
    assert base64.b32encode(SEED).decode() == SEED_TEXT + "======"
    code = GameCode(Rules.parse("CT"), SEED)
    assert str(code) == f"YU1-CT-{SEED_TEXT}"
    assert code.seeded and code.deal == SEED
    assert GameCode.parse(str(code)) == code
    assert not GameCode.parse("YU1-C-AAAAAAB").seeded
    assert len(str(GameCode(Rules.parse("MEGT"), b"\xff" * 16))) == MAX_CODE == 35


@given(st.binary(min_size=16, max_size=16), st.sampled_from(ALL_RULES))
def test_every_seed_round_trips_in_any_case_and_with_spaces(seed: bytes, rules: str) -> None:
    code = GameCode(Rules.parse(rules), seed)
    text = str(code)
    assert text == text.upper() and len(text) == len(f"YU1-{rules}-") + SEED_CHARS
    for variant in (text, text.lower(), f"  {text.swapcase()}\t\n"):
        assert GameCode.parse(variant) == code


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # not one of the two lengths
        (f"YU1-C-{SEED_TEXT[:-1]}", "7 letters A-Z (a deal number) or 26 characters"),
        (f"YU1-C-{SEED_TEXT}A", "7 letters A-Z (a deal number) or 26 characters"),
        # base32 has no 0, 1, 8 or 9
        (f"YU1-C-{SEED_TEXT[:-2]}1A", "A-Z and 2-7, not '1'"),
        (f"YU1-C-0{SEED_TEXT[1:]}", "A-Z and 2-7, not '0'"),
        (f"YU1-C-{SEED_TEXT[:-2]}?A", "A-Z and 2-7"),
        # the last character carries 3 bits and 2 zero bits: one spelling per seed
        (f"YU1-C-{SEED_TEXT[:-1]}5", "last character is one of A E I M Q U Y 4"),
        (f"YU1-C-{SEED_TEXT[:-1]}B", "last character is one of A E I M Q U Y 4"),
        (f"YU1-C-{SEED_TEXT[:10]} {SEED_TEXT[11:]}", "A-Z and 2-7, not ' '"),
    ],
)
def test_malformed_seeds_are_refused_saying_why(text: str, words: str) -> None:
    with pytest.raises(InvalidCodeError) as caught:
        GameCode.parse(text)
    assert words in str(caught.value)
    assert repr(text) in str(caught.value)


def test_a_seed_is_told_from_a_deal_number_by_its_length() -> None:
    """Any 26-letter part is a seed, any 7-letter one a number: never the other way."""
    assert GameCode.parse("YU1-C-" + "B" * 7).deal == base26("B" * 7)
    assert GameCode.parse("YU1-C-" + "A" * 26).deal == bytes(16)
