"""A portfolio against today's single solve (issue 43 item 2): an incomplete pass first.

Run from the repository root::

    python -m bench.portfolio --checkpoint C.jsonl --share 0.1

Solvitaire's "smart" mode spends a tenth of the budget on an incomplete search and keeps
only its wins, then runs the complete one. Ours: the first ``--share`` of the
checkpoint's budget (``bench.winnability``, positions a deal) goes to restarted narrowed
searches (chains of dependent moves, ``solver/dfs.py``; each run twice the cap of the one
before, from 4,000, with seeds that ``solve`` never uses), and a win is kept only when its
line replays to a won game in the engine; the rest of the budget goes to ``solve``.

Since a budget only cuts the same search short, ``solve`` with the rest decides exactly the
checkpoint's deals that it decided within that many positions. So only two kinds of deals
can change: those the checkpoint left unknown (the pass may win them) and those it decided
with more positions than the rest (the portfolio loses them unless the pass wins them).
The bench runs the pass on exactly those and prints what the portfolio gains and loses.
A measurement: it always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

if __package__ in (None, ""):  # run as ``python bench/portfolio.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.winnability import Deal, read_checkpoint
from protocol import Game
from protocol.moves import MOVE_TEXT
from solver import search

#: The seeds of the pass start here: ``solve``'s finder uses 0, 1, 2, ...
SEED_BASE = 1_000_000


def incomplete_pass(code: str, budget: int) -> tuple[bool, int]:
    """Restarted narrowed searches from deal ``code`` within ``budget`` positions: (a win
    replayed in the engine, positions searched)."""
    data = search._data(Game.from_code(code))
    proven = search.proven_set()
    used = 0
    cap = search._FIRST_RUN
    run = 0
    while used < budget:
        finder = search._Run(data, complete=False, seed=SEED_BASE + run, proven=proven)
        finder.advance(min(cap, budget - used))
        used += finder.nodes
        if finder.result is True:
            game = Game.from_code(code)
            for card, _, dest, _, _ in finder.state.journal:
                game.play(MOVE_TEXT[card][dest])
            return game.is_won(), used
        if finder.result is False:
            return False, used  # the narrowed search ran out of positions: no win in it
        run += 1
        cap *= 2
    return False, used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.portfolio", description=__doc__)
    parser.add_argument("--checkpoint", required=True, metavar="FILE")
    parser.add_argument("--share", type=float, default=0.1, metavar="F")
    args = parser.parse_args(argv)
    with open(args.checkpoint, encoding="utf-8") as f:
        header = json.loads(f.readline())
    deals: list[Deal] = sorted(
        read_checkpoint(args.checkpoint, header).values(), key=lambda d: d.index
    )
    budget = int(str(header["budget_nodes"]))
    first = int(budget * args.share)
    rest = budget - first
    unknown = [d for d in deals if d.verdict == "unknown"]
    late = [d for d in deals if d.verdict != "unknown" and d.nodes > rest]
    print(f"portfolio   {args.checkpoint}: {len(deals)} {header['rules']} deals at {budget:,}")
    print(f"            pass {first:,} positions, then solve with {rest:,}")
    print(f"            {len(unknown)} unknown, {len(late)} decided with more than {rest:,}")
    cpu0 = time.process_time()
    gained = [d.index for d in unknown if incomplete_pass(d.code, first)[0]]
    kept = [d.index for d in late if d.verdict == "won" and incomplete_pass(d.code, first)[0]]
    lost = [d.index for d in late if d.index not in kept]
    print(f"gained      {len(gained)} of the unknown deals won by the pass: {gained}")
    print(f"lost        {len(lost)} deals the rest of the budget no longer decides: {lost}")
    change = (len(gained) - len(lost)) / len(deals)
    print(
        f"unknown     {len(unknown) / len(deals):.2%} today, "
        f"{(len(unknown) - len(gained) + len(lost)) / len(deals):.2%} with the portfolio"
        f" ({-change:+.2%}); {time.process_time() - cpu0:.1f} s of CPU for the passes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
