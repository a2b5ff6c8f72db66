"""Position notation (spec section 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import CARD_TEXT, Game, InvalidPositionError, Rules, YukonError
from protocol.position import UNKNOWN, format_position, parse_position

DATA = Path(__file__).resolve().parent.parent / "data"
VECTORS = [
    tuple(line.split("\t"))
    for line in (DATA / "deal-vectors.txt").read_text().splitlines()
    if line.strip()
]
POSITIONS = [position for _, position in VECTORS]
START = Game.from_code("YU1-C-AAAAAAB").position()
RANKS = "A23456789TJQK"


def make(rules: str, foundations: str, *columns: str) -> str:
    """Position text; the one ``*`` in a column stands for every card not yet placed, face down."""
    used: set[str] = set()
    for suit, ch in zip("SHDC", foundations, strict=True):
        if ch != "-":
            used.update(r + suit for r in RANKS[: RANKS.index(ch) + 1])
    for column in columns:
        text = column.replace("*", "")
        used.update(text[i : i + 2].upper() for i in range(0, len(text), 2))
    rest = "".join(t.lower() for t in CARD_TEXT if t not in used)
    return f"{rules} {foundations} {'/'.join(col.replace('*', rest) for col in columns)}"


@pytest.mark.parametrize("position", POSITIONS)
def test_vectors_parse_and_print_identically(position: str) -> None:
    data = parse_position(position)
    assert format_position(data.rules, data.foundations, data.columns, data.face_down) == position
    assert Game.from_position(position).position() == position


def test_parsed_data_of_a_deal() -> None:
    data = parse_position(START)
    assert data.rules == Rules()
    assert data.foundations == [0, 0, 0, 0]
    assert [len(c) for c in data.columns] == [1, 6, 7, 8, 9, 10, 11]
    assert data.face_down == [0, 1, 2, 3, 4, 5, 6]
    assert CARD_TEXT[data.columns[0][0]] == "7H"
    assert CARD_TEXT[data.columns[1][0]] == "9S"  # written "9s": face down
    assert sorted(c for col in data.columns for c in col) == list(range(52))


def test_foundations_field_gives_heights_in_suit_order() -> None:
    # Section 8's example: "3-A-" is spades up to 3 and the ace of diamonds.
    text = make("C", "3-A-", "*KH", "", "", "", "", "", "")
    data = parse_position(text)
    assert data.foundations == [3, 0, 1, 0]
    assert Game.from_position(text).foundation_heights() == (3, 0, 1, 0)
    assert Game.from_position(text).cards_on_foundations == 4
    assert Game.from_position(text).position() == text


def test_an_empty_column_is_empty_text() -> None:
    text = make("C", "----", "KS", "", "*7C", "", "", "", "")
    assert text.startswith("C ---- KS//")
    game = Game.from_position(text)
    assert game.column(1) == ["KS"]
    assert game.column(2) == []
    assert game.position() == text


def test_a_won_position() -> None:
    text = "C KKKK //////"
    data = parse_position(text)
    assert data.foundations == [13, 13, 13, 13]
    assert data.columns == [[]] * 7
    assert Game.from_position(text).position() == text


@pytest.mark.parametrize("rules", ["C", "CT", "REG", "SGT", "AEGT", "MT"])
def test_rules_field(rules: str) -> None:
    text = START.replace("C ", rules + " ", 1)
    assert parse_position(text).rules == Rules.parse(rules)
    assert Game.from_position(text).position() == text


# -- ?? ---------------------------------------------------------------------------------------


def test_a_view_writes_every_face_down_card_as_unknown() -> None:
    view = Game.from_code("YU1-C-AAAAAAB").view()
    assert view == (
        "C ---- 7H/??6HQSAD9H8S/????2H4CKC3HTS/??????2S6S6D3C3D/????????KD7SQCAS2C"
        "/??????????JCACQD4S9D/????????????8C5SQH2D7C"
    )
    data = parse_position(view)
    assert sum(col.count(UNKNOWN) for col in data.columns) == 21
    assert data.face_down == [0, 1, 2, 3, 4, 5, 6]
    game = Game.from_position(view)
    assert game.position() == view
    assert game.view() == view
    assert game.column(2) == ["??", "6H", "QS", "AD", "9H", "8S"]


def test_known_and_unknown_face_down_cards_mix() -> None:
    text = START.replace("9s6H", "??6H").replace("4h9c", "4h??")
    assert Game.from_position(text).position() == text


@pytest.mark.parametrize("position", POSITIONS)
def test_vector_views_round_trip(position: str) -> None:
    view = Game.from_position(position).view()
    assert view.count("??") == 21
    assert Game.from_position(view).position() == view


def test_unknown_cards_must_make_52() -> None:
    view = Game.from_code("YU1-C-AAAAAAB").view()
    with pytest.raises(InvalidPositionError, match="cards plus \\?\\? make 51, not 52"):
        parse_position(view.replace("/??6H", "/6H"))
    with pytest.raises(InvalidPositionError, match="cards plus \\?\\? make 53, not 52"):
        parse_position(view.replace("/??6H", "/????6H"))


# -- refused texts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # a card twice
        (START.replace("7H/", "6H/", 1), "6H appears twice"),
        (START.replace("7H/", "9S/", 1), "9S appears twice"),
        (make("C", "A---", "*KH", "AS", "", "", "", "", ""), "AS appears twice"),
        # 51 or 53 cards
        (START.replace("7H/", "/", 1), "cards make 51, not 52: missing 7H"),
        (START.replace("/9s6H", "/9s6H") + "KS", "KS appears twice"),
        # a token that is not a card
        (START.replace("7H/", "XX/", 1), "'XX' is not a card"),
        (START.replace("7H/", "1H/", 1), "'1H' is not a card"),
        (START.replace("QS", "Qs"), "'Qs' is not a card"),
        (START.replace("7H/", "10H/", 1), "two characters"),
        (START.replace("7H/", "7H7/", 1), "two characters"),
        # face-down on face-up
        (START.replace("9s6H", "6H9s"), "face-down card '9s' lies on a face-up card"),
        (START.replace("4h9c2H", "4h2H??").replace("/??6H", "/9s6H"), "face-down"),
        # the top card face down
        (START.replace("7H/", "7h/", 1), "column 1: its top card is face down"),
        (START.replace("7H/", "??/", 1), "column 1: its top card is face down"),
        # column count
        (START.rsplit("/", 1)[0], "expected 7 columns"),
        (START + "/", "expected 7 columns"),
        # foundations field
        (START.replace("----", "X---"), "'X' for S is not a rank or -"),
        (START.replace("----", "--a-"), "'a' for D is not a rank or -"),
        (START.replace("----", "---"), "four characters"),
        (START.replace("----", "-----"), "four characters"),
        # rules field
        (START.replace("C ", "c ", 1), "not canonical"),
        (START.replace("C ", "ct ", 1), "not canonical"),
        (START.replace("C ", "X ", 1), "rules field"),
        (START.replace("C ", "CTE ", 1), "rules field.*out of order"),
        (START.replace("C ", "CTT ", 1), "rules field.*repeated"),
        # fields
        (START.replace("C ---- ", "C "), "three fields"),
        (START.replace(" ----", "  ----"), "three fields"),
        (START.replace(" ", "\t"), "three fields"),
        ("", "three fields"),
    ],
)
def test_invalid_positions_are_refused_with_a_reason(text: str, words: str) -> None:
    with pytest.raises(InvalidPositionError, match=words):
        parse_position(text)
    with pytest.raises(InvalidPositionError):
        Game.from_position(text)


def test_a_position_is_text() -> None:
    with pytest.raises(InvalidPositionError):
        parse_position(None)  # type: ignore[arg-type]


def test_invalid_position_error_is_a_value_error() -> None:
    assert issubclass(InvalidPositionError, YukonError)
    assert issubclass(InvalidPositionError, ValueError)


def test_surrounding_whitespace_is_ignored() -> None:
    assert Game.from_position(f"  {START}\n").position() == START
