"""The two kinds of deal: what each shuffle costs, and what a cheat's search costs.

Run from the repository root::

    python -m bench.deals
    python -m bench.deals --deals 20000 --search 1000000 --rounds 5

A numbered deal (a 7-letter code) is one of 26^7; its shuffle is public, and Fisher-Yates
fixes the last cards dealt, face up in every first view, with its first draws. ``cheat``
is the search a cheat writes from docs/rules.md: it tries deal numbers in order and drops
one at the first card that does not match, so a number costs about one SplitMix64 draw.
This prints the shuffles' cost per deal and the cheat's pace in plain Python, and what
that means for the whole numbered space and for the 2^128 seeds of a seeded deal.
(Issue 15 measured a 40-line C loop: every numbered deal in about 16 s on two cores.)

A measurement, not a test: it never fails on timing and always exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from collections.abc import Iterator

from protocol import Game
from protocol.cards import parse_card
from protocol.codes import MAX_DEAL
from protocol.shuffle import SEED_BYTES, shuffled_deck

_MASK = (1 << 64) - 1
_YEAR_S = 365 * 86_400


def last_dealt(view: str) -> list[int]:
    """``deck[51], deck[50], ..., deck[28]``, read back off a first view: the four face-up
    rounds (rules.md section 2), last card dealt first."""
    columns = view.split(" ")[2].split("/")
    shown = [
        [parse_card(col[i : i + 2]) for i in range(0, len(col), 2) if col[i : i + 2] != "??"]
        for col in columns
    ]
    deck: dict[int, int] = {}
    for r in range(4):
        for c in range(1, 7):  # columns 2..7: their round-r card lies on the diagonal card
            deck[28 + r * 6 + (c - 1)] = shown[c][1 + r]
    return [deck[i] for i in range(51, 27, -1)]


def cheat(view: str, limit: int) -> Iterator[int]:
    """Every deal number below ``limit`` whose deal shows ``view``: SplitMix64 as rules.md
    gives it, checking each card the moment Fisher-Yates fixes it."""
    wanted = last_dealt(view)
    for n in range(limit):
        state = n
        deck = list(range(52))
        for k, i in enumerate(range(51, 27, -1)):
            state = (state + 0x9E3779B97F4A7C15) & _MASK
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
            j = (z ^ (z >> 31)) % (i + 1)
            deck[i], deck[j] = deck[j], deck[i]
            if deck[i] != wanted[k]:
                break
        else:
            yield n


def per_deal_us(deals: list[int] | list[bytes], rounds: int) -> float:
    """Median over ``rounds`` of the microseconds one shuffle takes."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for deal in deals:
            shuffled_deck(deal)
        times.append((time.perf_counter() - start) / len(deals) * 1e6)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.deals", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--deals", type=int, default=20_000, help="deals shuffled per round")
    parser.add_argument("--search", type=int, default=1_000_000, help="numbers the cheat tries")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; medians are printed")
    args = parser.parse_args(argv)

    numbered = [(n * 7_919_317) % (MAX_DEAL + 1) for n in range(args.deals)]
    seeded = [hashlib.sha256(n.to_bytes(4, "big")).digest()[:SEED_BYTES] for n in range(args.deals)]
    print(f"shuffle, {args.deals} deals x {args.rounds} rounds (median)")
    print(f"  numbered (SplitMix64)        {per_deal_us(numbered, args.rounds):7.1f} us a deal")
    print(f"  seeded (SHA-256, rejection)  {per_deal_us(seeded, args.rounds):7.1f} us a deal")

    inside = min(args.search - 1, 654_321)
    inside_view = Game.from_deal(inside).view()
    paces, found = [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        found = list(cheat(inside_view, args.search))
        paces.append(args.search / (time.perf_counter() - start))
    pace = statistics.median(paces)
    whole = (MAX_DEAL + 1) / pace
    print(f"cheat's search, {args.search} numbers x {args.rounds} rounds (median)")
    print(f"  found deal {inside} from its first view: {found == [inside]} ({found})")
    print(f"  pace (pure Python, one core)  {pace / 1e6:7.2f} million numbers/s")
    print(f"  all 26^7 numbered deals       {whole / 3600:7.1f} h in Python on one core")
    seeds_years = 2 ** (8 * SEED_BYTES) / (1e9 * 1e6) / _YEAR_S
    print(f"  all 2^128 seeds               {seeds_years:7.1e} years at 10^15 seeds/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
