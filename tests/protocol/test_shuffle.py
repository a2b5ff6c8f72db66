"""The shuffle and the deal (spec sections 2 and 7), and the deal vectors (section 10)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from protocol import CARD_TEXT, Game, GameCode
from protocol.shuffle import COLUMN_SIZES, FACE_DOWN, deal_columns, shuffled_deck, splitmix64

DATA = Path(__file__).resolve().parent.parent / "data"
VECTORS = [
    tuple(line.split("\t"))
    for line in (DATA / "deal-vectors.txt").read_text().splitlines()
    if line.strip()
]
MASK = (1 << 64) - 1
ALL_RULES = [
    v + "".join(opts)
    for v in "CRSAM"
    for n in range(4)
    for opts in itertools.combinations("EGT", n)
]
# Deal numbers spread over the whole range 0..ZZZZZZZ, plus both ends.
SPREAD = [0, 1, 2, 25, 26, 27, 26**7 - 1, 26**7 - 2, *range(12_345, 26**7, 26**7 // 150)]


def reference_deck(n: int) -> list[int]:
    """Section 7, written out again: SplitMix64 feeding Fisher-Yates from the top down."""
    state = n
    deck = list(range(52))
    for i in range(51, 0, -1):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        j = z % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def reference_deal(n: int) -> tuple[list[list[int]], list[int]]:
    """Section 2, written out again: columns and their face-down counts."""
    deck = iter(reference_deck(n))
    columns: list[list[int]] = [[] for _ in range(7)]
    down = [0] * 7
    for r in range(1, 8):
        for col in range(r, 8):
            columns[col - 1].append(next(deck))
            if col != r:
                down[col - 1] += 1
    for _ in range(4):
        for col in range(2, 8):
            columns[col - 1].append(next(deck))
    assert next(deck, None) is None
    return columns, down


def test_splitmix64_known_outputs() -> None:
    # The published first outputs of SplitMix64 seeded with 0.
    assert splitmix64(0)[:3] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert len(splitmix64(0)) == 51


@pytest.mark.parametrize("deal", SPREAD[:40])
def test_shuffle_follows_the_spec(deal: int) -> None:
    deck = shuffled_deck(deal)
    assert deck == reference_deck(deal)
    assert sorted(deck) == list(range(52))


@pytest.mark.parametrize("deal", SPREAD[:40])
def test_deal_follows_the_spec(deal: int) -> None:
    columns, down = reference_deal(deal)
    assert deal_columns(deal) == columns
    assert list(FACE_DOWN) == down


def test_column_sizes() -> None:
    assert COLUMN_SIZES == (1, 6, 7, 8, 9, 10, 11)
    assert FACE_DOWN == (0, 1, 2, 3, 4, 5, 6)
    assert sum(COLUMN_SIZES) == 52
    assert sum(FACE_DOWN) == 21


def test_21_face_down_and_31_face_up_cards_in_every_deal() -> None:
    for deal in SPREAD:
        game = Game.from_deal(deal)
        sizes = [len(game.column(n)) for n in range(1, 8)]
        down = [game.face_down_count(n) for n in range(1, 8)]
        assert sizes == [1, 6, 7, 8, 9, 10, 11]
        assert down == [0, 1, 2, 3, 4, 5, 6]
        assert [sizes[i] - down[i] for i in range(7)] == [1, 5, 5, 5, 5, 5, 5]
        tokens = [t for n in range(1, 8) for t in game.column(n)]
        assert sum(t.islower() for t in tokens) == 21
        assert sum(t.isupper() for t in tokens) == 31
        assert sorted(t.upper() for t in tokens) == sorted(CARD_TEXT)
        assert game.foundation_heights() == (0, 0, 0, 0)
        assert game.score == 0
        assert game.move_count == 0


def test_the_spec_example_deal() -> None:
    assert Game.from_code("YU1-C-AAAAAAB").position() == (
        "C ---- 7H/9s6HQSAD9H8S/4h9c2H4CKC3HTS/8djsjd2S6S6D3C3D/8h5h5dahKD7SQCAS2C"
        "/5ckh7d6ctdJCACQD4S9D/jh3s4dkstcth8C5SQH2D7C"
    )


def test_there_are_deal_vectors() -> None:
    assert len(VECTORS) >= 10
    assert all(len(v) == 2 for v in VECTORS)


@pytest.mark.parametrize(("code", "position"), VECTORS, ids=[v[0] for v in VECTORS])
def test_deal_vector(code: str, position: str) -> None:
    game = Game.from_code(code)
    assert game.position() == position
    assert str(game.code) == code
    assert position.split(" ")[0] == code.split("-")[1]
    # The vectors are also reproduced from the deal number and rules directly.
    parsed = GameCode.parse(code)
    assert Game.from_deal(parsed.deal, parsed.rules).position() == position
    assert Game.from_deal(parsed.deal, str(parsed.rules)).position() == position


def test_same_deal_same_layout_under_every_rules() -> None:
    layouts = set()
    for rules in ALL_RULES:
        position = Game.from_code(f"YU1-{rules}-AAAAAAB").position()
        head, _, rest = position.partition(" ")
        assert head == rules
        layouts.add(rest)
    assert len(layouts) == 1


def test_different_deals_differ() -> None:
    layouts = {Game.from_deal(deal).position() for deal in SPREAD}
    assert len(layouts) == len(set(SPREAD))
