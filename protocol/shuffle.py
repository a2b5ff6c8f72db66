"""The deterministic shuffle and the deal (spec sections 2 and 7).

SplitMix64 is specified so that every implementation, in any language, deals the same
cards for the same number; Python's own ``random`` is not, so it is never used here.
"""

from __future__ import annotations

__all__ = ["splitmix64", "shuffled_deck", "deal_columns", "COLUMN_SIZES", "FACE_DOWN"]

_MASK = (1 << 64) - 1

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


def shuffled_deck(deal: int) -> list[int]:
    """Fisher-Yates from the top down, drawing from SplitMix64 seeded with ``deal``."""
    deck = list(range(52))
    draws = splitmix64(deal)
    for k, i in enumerate(range(51, 0, -1)):
        j = draws[k] % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_columns(deal: int) -> list[list[int]]:
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
