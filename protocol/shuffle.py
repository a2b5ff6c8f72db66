"""The deterministic shuffles and the deal (docs/rules.md section 2).

Two kinds of deal, one layout. A *numbered* deal (a 7-letter code, 0 to 26^7 - 1) is
shuffled by SplitMix64, specified so that every implementation, in any language, deals the
same cards for the same number. A *seeded* deal (16 bytes the server drew from ``secrets``)
is shuffled from SHA-256 in counter mode with rejection sampling: numbered deals are few
enough to search one by one from a player's view, which a 128-bit seed behind a hash is
not (docs/fairness.md). Python's own ``random`` is never used.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

__all__ = [
    "splitmix64",
    "sha256_words",
    "uniform_below",
    "shuffled_deck",
    "deal_columns",
    "COLUMN_SIZES",
    "FACE_DOWN",
    "SEED_BYTES",
]

_MASK = (1 << 64) - 1
#: A seeded deal's seed is this many bytes (128 bits): docs/rules.md section 2.
SEED_BYTES = 16

#: Cards in each column after the deal.
COLUMN_SIZES = (1, 6, 7, 8, 9, 10, 11)
#: Face-down cards in each column after the deal.
FACE_DOWN = (0, 1, 2, 3, 4, 5, 6)


def splitmix64(seed: int) -> list[int]:
    """The 51 numbers the shuffle draws from ``seed``, in order."""
    state = seed & _MASK
    out = []
    for _ in range(51):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        out.append(z ^ (z >> 31))
    return out


def sha256_words(seed: bytes) -> Iterator[int]:
    """The endless stream of 32-bit draws of a seeded deal: block ``k`` is
    SHA-256(seed || k as 4 bytes big-endian), read as eight big-endian unsigned integers."""
    for k in itertools.count():
        block = hashlib.sha256(seed + k.to_bytes(4, "big")).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")


def _seeded_deck(seed: bytes) -> list[int]:
    """Fisher-Yates from the top down, each ``j`` uniform in ``0..i`` (``uniform_below``),
    so every one of the 52! orders is equally likely (rules.md section 2)."""
    if len(seed) != SEED_BYTES:
        raise ValueError(f"a deal seed is {SEED_BYTES} bytes, not {len(seed)}")
    deck = list(range(52))
    words = sha256_words(seed)
    for i in range(51, 0, -1):
        j = uniform_below(words, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def uniform_below(words: Iterator[int], bound: int) -> int:
    """A number in ``0..bound-1``, every one equally likely, from 32-bit ``words``: a word at
    or above the largest multiple of ``bound`` that fits in 32 bits is thrown away (fewer
    than one deal in seven million throws one away)."""
    limit = (1 << 32) - (1 << 32) % bound
    word = next(words)
    while word >= limit:
        word = next(words)
    return word % bound


def shuffled_deck(deal: int | bytes) -> list[int]:
    """The shuffled deck of a numbered deal (``int``: SplitMix64, Fisher-Yates from the top
    down) or of a seeded one (``bytes``: SHA-256 in counter mode, with rejection)."""
    if isinstance(deal, bytes):
        return _seeded_deck(deal)
    deck = list(range(52))
    draws = splitmix64(deal)
    for k, i in enumerate(range(51, 0, -1)):
        j = draws[k] % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_columns(deal: int | bytes) -> list[list[int]]:
    """The seven columns of ``deal``, bottom to top; the first ``FACE_DOWN[c]`` are face down.

    A Klondike pass of 28 cards (row r puts one card on each column r..7, face up on the
    diagonal), then four rounds of one face-up card on each of columns 2..7.
    """
    deck = shuffled_deck(deal)
    columns: list[list[int]] = [[] for _ in range(7)]
    k = 0
    for row in range(7):
        for col in range(row, 7):
            columns[col].append(deck[k])
            k += 1
    for _ in range(4):
        for col in range(1, 7):
            columns[col].append(deck[k])
            k += 1
    return columns
