"""The shuffle and the deal (spec sections 2 and 7), and the deal vectors (section 10)."""

from __future__ import annotations

import hashlib
import itertools
import struct
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import CARD_TEXT, Game, GameCode, Rules
from protocol.shuffle import (
    COLUMN_SIZES,
    FACE_DOWN,
    deal_columns,
    sha256_words,
    shuffled_deck,
    splitmix64,
    uniform_below,
)

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


# -- seeded deals (rules.md section 2, "The shuffle of a seeded deal") ---------------------------

SEEDED_VECTORS = [
    tuple(line.split("\t"))
    for line in (DATA / "seeded-deal-vectors.txt").read_text().splitlines()
    if line.strip()
]


def reference_seeded_deck(seed: bytes) -> list[int]:
    """Section 2, written out again from the text alone: SHA-256 of the seed and a 4-byte
    big-endian counter, read as big-endian 32-bit words, feeding Fisher-Yates from the top
    down with rejection."""
    words: list[int] = []
    for counter in range(64):
        block = hashlib.sha256(seed + struct.pack(">I", counter)).digest()
        words.extend(struct.unpack(">8I", block))
    it = iter(words)
    deck = list(range(52))
    for i in range(51, 0, -1):
        n = i + 1
        while True:
            w = next(it)
            if w < 2**32 - (2**32 % n):
                break
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def test_the_word_stream_is_sha256_in_counter_mode() -> None:
    words = sha256_words(bytes(16))
    first = hashlib.sha256(bytes(16) + b"\0\0\0\0").digest()
    second = hashlib.sha256(bytes(16) + b"\0\0\0\1").digest()
    expected = struct.unpack(">8I", first) + struct.unpack(">8I", second)
    assert [next(words) for _ in range(16)] == list(expected)
    assert expected[:3] == (0xDE47C9B2, 0x7EB8D300, 0xDBB5F2C3)  # as rules.md says


def test_a_draw_at_or_above_the_last_whole_multiple_is_thrown_away() -> None:
    # 2^32 mod 52 = 48: words from 2^32 - 48 up would make the first 48 values likelier.
    top = 2**32 - 48
    assert uniform_below(iter([top, 2**32 - 1, top + 5, 104 + 7]), 52) == 7
    assert uniform_below(iter([top - 1]), 52) == (top - 1) % 52
    # A power of two divides 2^32: nothing is ever thrown away.
    assert uniform_below(iter([2**32 - 1]), 32) == 31


@pytest.mark.parametrize(
    "seed",
    [
        bytes(16),
        bytes(range(16)),
        b"\xff" * 16,
        *(hashlib.sha256(bytes([n])).digest()[:16] for n in range(20)),
    ],
)
def test_seeded_shuffle_follows_the_spec(seed: bytes) -> None:
    deck = shuffled_deck(seed)
    assert deck == reference_seeded_deck(seed)
    assert sorted(deck) == list(range(52))


@given(st.binary(min_size=16, max_size=16))
@settings(max_examples=300, deadline=None)
def test_every_seed_deals_52_distinct_cards_as_the_spec_says(seed: bytes) -> None:
    deck = shuffled_deck(seed)
    assert deck == reference_seeded_deck(seed)
    game = Game.from_code(GameCode(Rules(), seed))
    tokens = [t for n in range(1, 8) for t in game.column(n)]
    assert sorted(t.upper() for t in tokens) == sorted(CARD_TEXT)
    assert [game.face_down_count(n) for n in range(1, 8)] == list(FACE_DOWN)


def test_the_first_card_is_uniform_over_many_seeds() -> None:
    """Pearson's chi-squared over 10,400 seeds (200 expected per card, 51 degrees of
    freedom): a fair shuffle exceeds 110 with probability below 1e-5, and the seeds are
    fixed, so the test is deterministic. A biased draw (``word % 52`` on 6-bit words, where
    the first 12 cards come twice as often) lands far above it."""
    n = 10_400
    counts = Counter(
        shuffled_deck(hashlib.sha256(b"uniform" + k.to_bytes(4, "big")).digest()[:16])[0]
        for k in range(n)
    )
    expected = n / 52
    chi2 = sum((counts.get(card, 0) - expected) ** 2 / expected for card in range(52))
    assert chi2 < 110, chi2
    # ... and the same statistic does catch a biased shuffle.
    biased = Counter(
        (hashlib.sha256(b"uniform" + k.to_bytes(4, "big")).digest()[0] & 63) % 52 for k in range(n)
    )
    assert sum((biased.get(c, 0) - expected) ** 2 / expected for c in range(52)) > 110


def test_a_seed_is_16_bytes() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        shuffled_deck(bytes(15))
    with pytest.raises(ValueError, match="16 bytes"):
        GameCode(Rules(), bytes(17))


def test_there_are_seeded_vectors() -> None:
    assert len(SEEDED_VECTORS) >= 6
    assert {len(GameCode.parse(code).deal_text) for code, _ in SEEDED_VECTORS} == {26}


@pytest.mark.parametrize(("code", "position"), SEEDED_VECTORS, ids=[v[0] for v in SEEDED_VECTORS])
def test_seeded_deal_vector(code: str, position: str) -> None:
    parsed = GameCode.parse(code)
    assert parsed.seeded
    game = Game.from_code(code)
    assert game.position() == position
    assert str(game.code) == code
    assert Game.from_code(code.lower()).position() == position
    assert Game.from_deal(parsed.deal, parsed.rules).position() == position


def test_a_vector_throws_a_draw_away() -> None:
    """The seed ``00 .. 00 EC 5B 55`` (found by searching) draws ``0xFFFFFFF1`` for i = 26,
    at or above the last multiple of 27 below 2^32: a shuffle that skipped the rejection
    would deal it differently, so its vector catches one."""
    seed = bytes.fromhex("00000000000000000000000000ec5b55")
    assert str(GameCode(Rules(), seed)) in {code for code, _ in SEEDED_VECTORS}

    def without_rejection(seed: bytes) -> list[int]:
        words = sha256_words(seed)
        deck = list(range(52))
        for i in range(51, 0, -1):
            j = next(words) % (i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        return deck

    assert shuffled_deck(seed) != without_rejection(seed)
    assert shuffled_deck(bytes(16)) == without_rejection(bytes(16))
