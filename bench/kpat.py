"""kpat's Yukon deals: our verdicts beside kpat's own, and every contradiction between them.

Run from the repository root::

    python -m bench.kpat --testdir DIR            # kpat's files already in DIR
    python -m bench.kpat --testdir DIR --run-kpat # let kpat write them first

Nothing of kpat is in this repository: its verdicts and layouts are written on the machine
by kpat itself (Debian package ``kpat``; ``apt-get install kpat``), with its hidden
command-line options for testing its solvers, into ``DIR``:

* ``DIR/kpat-solve*.txt``: the output of ``kpat --solve 10 --start 1 --end 1000`` (10 is
  kpat's Yukon; several files for parts of the range are read together), one line ``N
  won|lost|unknown (T ms)`` per deal number ``N``: kpat's verdicts on its own deals.
  ``--run-kpat`` runs it (with ``QT_QPA_PLATFORM=offscreen``) when
  ``DIR/kpat-solve.txt`` is missing.
* any files ``DIR/<game>-<number>-<1|0>`` from ``kpat --generate --testdir DIR``: a saved
  game (kpat's XML "legacy" format) of a random deal ``number`` of game ``game`` that
  kpat's solver decided (``1`` won, ``0`` lost; it keeps no undecided one). kpat has no
  option that writes the layout of a *numbered* deal, so the bench deals kpat's deals
  ``1..1000`` itself (``kpat_deck``: the shuffle kpat documents as Windows FreeCell's
  generator over its deck in rank-then-suit order, and Yukon's deal) and checks that
  dealing against every such file: each file's cards must be exactly what the same
  number deals (Klondike's files, games 0, 13 and 18, check the shuffle; Yukon's, game
  10, the shuffle and the Yukon deal). A file of game 10 is also solved, as one more deal
  with a kpat verdict. (``--generate`` keeps drawing deals of each game in turn until
  100 are decided; on game 8 kpat decides about one deal in a thousand, so in practice it
  writes Klondike's files and never reaches Yukon's.)

Each deal is converted to our position notation (Classic rules: kpat's Yukon builds down
in alternating colours, only a king goes into an empty column, and a card never comes back
from its foundation) and solved with ``--budget`` seconds (default 3) of CPU time
(``time.process_time``, so the machine's load does not decide the verdicts; ``--wall`` for
``time.perf_counter``). Every winning line is replayed in a fresh engine (``Game.play``).
With ``--checkpoint FILE`` our outcomes are appended to FILE as they come and a later run
solves only the deals not in it (kpat's verdicts are read afresh, so the cross-check can be
made again as kpat's files grow). The report gives won / lost / unknown, the time per
deal, and the cross-check: a deal we prove lost that kpat wins, or one kpat calls lost
that we win with a replayed line, is a contradiction, and each is listed. The exit status
is 1 if there is one (or a file does not match the dealing), else 0; the figures
themselves are a measurement, not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/kpat.py``: find ``protocol``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.engine import cpu_model, percentile
from protocol import Game
from solver import search_implementation, solve

#: kpat's game number of Yukon, and of its Klondike games (draw one, draw three, general).
YUKON = 10
KLONDIKE = (0, 13, 18)
#: kpat's suits in its deck order (``KCardDeck::Suit``), as our suit letters.
KPAT_SUITS = "CDHS"
#: Our suit order (``protocol.cards.SUITS``): a card's index is ``suit * 13 + rank - 1``.
OUR_SUITS = "SHDC"
VERDICT_LINE = re.compile(r"^(\d+) (won|lost|unknown) \(")
SAVED_NAME = re.compile(r"^(\d+)-(\d+)-([01])$")
TARGET_UNKNOWN = 0.005


def card_index(kpat_suit: int, rank: int) -> int:
    """Our card index of kpat's card (suit 0-3 clubs, diamonds, hearts, spades; rank 1-13)."""
    return OUR_SUITS.index(KPAT_SUITS[kpat_suit]) * 13 + rank - 1


def kpat_deck(number: int) -> list[int]:
    """The deck of kpat's deal ``number``, as our card indices; kpat deals from its end.

    kpat builds its deck rank by rank (aces first), each rank in suit order clubs,
    diamonds, hearts, spades, and shuffles it with the generator of Windows FreeCell
    (kpat's comment says so, to share FreeCell's game numbers): ``seed = 214013 * seed +
    2531011`` modulo 2**32, ``r = (seed >> 16) & 0x7fff``, then swap positions ``i - 1``
    and ``r % i`` for ``i`` from 52 down to 2.
    """
    cards = [card_index(s, r) for r in range(1, 14) for s in range(4)]
    seed = number & 0xFFFFFFFF
    for i in range(len(cards), 1, -1):
        seed = (214013 * seed + 2531011) & 0xFFFFFFFF
        j = ((seed >> 16) & 0x7FFF) % i
        cards[i - 1], cards[j] = cards[j], cards[i - 1]
    return cards


def yukon_columns(number: int) -> list[list[tuple[int, bool]]]:
    """kpat's Yukon deal ``number``: seven columns, bottom to top, of (card, face up).

    Eleven rounds over the columns, each card taken from the end of the deck: column 0
    gets one card (round 0), column ``j`` one card in each of the rounds ``0 .. j + 4``,
    face down in the rounds before ``j`` (so ``j`` cards face down under five face up).
    """
    deck = kpat_deck(number)
    columns: list[list[tuple[int, bool]]] = [[] for _ in range(7)]
    for rnd in range(11):
        for j in range(7):
            if (j == 0 and rnd == 0) or (j and rnd < j + 5):
                columns[j].append((deck.pop(), rnd >= j or j == 0))
    return columns


def klondike_columns(number: int) -> list[list[tuple[int, bool]]]:
    """kpat's Klondike deal ``number``'s seven tableau columns (to check the shuffle)."""
    deck = kpat_deck(number)
    columns: list[list[tuple[int, bool]]] = [[] for _ in range(7)]
    for rnd in range(7):
        for i in range(rnd, 7):
            columns[i].append((deck.pop(), i == rnd))
    return columns


def position(columns: list[list[tuple[int, bool]]]) -> str:
    """Our position notation of a fresh Yukon layout (Classic rules, empty foundations)."""
    texts = []
    for col in columns:
        if any(up for _, up in col[: len(col) - sum(up for _, up in col)]):
            raise ValueError("a face-up card under a face-down one")
        texts.append("".join(_card_text(c, up) for c, up in col))
    return "C ---- " + "/".join(texts)


def _card_text(card: int, up: bool) -> str:
    text = "A23456789TJQK"[card % 13] + OUR_SUITS[card // 13]
    return text if up else text.lower()


def yukon_position(number: int) -> str:
    """Our starting position of kpat's Yukon deal ``number``."""
    return position(yukon_columns(number))


@dataclass(frozen=True, slots=True)
class Saved:
    """A game kpat saved with ``--generate``: its game, deal number, kpat's verdict, and
    its tableau columns (kpat's piles 5 to 11) as (card, face up), bottom to top."""

    game: int
    number: int
    verdict: str
    columns: list[list[tuple[int, bool]]]


def read_saved(path: Path) -> Saved:
    """Read one of kpat's ``--generate`` files (name ``<game>-<number>-<1|0>``)."""
    match = SAVED_NAME.match(path.name)
    if not match:
        raise ValueError(f"{path.name}: not a file of kpat --generate")
    root = ET.parse(path).getroot()
    number = int(root.get("number", "-1"))
    if number != int(match[2]):  # (the XML's id is the game's own: 18 for kpat's Klondike 0)
        raise ValueError(f"{path.name}: its deal number differs from its name")
    piles = {
        int(p.get("index", "-1")): [
            (card_index(int(c.get("suit", "0")), int(c.get("value", "0"))), c.get("faceup") == "1")
            for c in p.iter("card")
        ]
        for p in root.iter("pile")
    }
    columns = [piles.get(5 + i, []) for i in range(7)]
    verdict = "won" if match[3] == "1" else "lost"
    return Saved(int(match[1]), number, verdict, columns)


def read_verdicts(path: Path) -> dict[int, str]:
    """kpat's verdicts from the output of ``kpat --solve 10 --start A --end B``."""
    verdicts = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = VERDICT_LINE.match(line)
        if match:
            verdicts[int(match[1])] = match[2]
    return verdicts


def run_kpat(testdir: Path, start: int, end: int) -> None:
    """Let kpat write its verdicts on its Yukon deals ``start..end`` into ``testdir``."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = testdir / "kpat-solve.txt"
    kpat = shutil.which("kpat") or "/usr/games/kpat"  # where Debian puts it, off root's PATH
    command = [kpat, "--solve", str(YUKON), "--start", str(start), "--end", str(end)]
    print(f"running {' '.join(command)} > {out}", file=sys.stderr, flush=True)
    with open(out, "w", encoding="utf-8") as f:
        subprocess.run(command, stdout=f, stderr=subprocess.DEVNULL, env=env, check=True)


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str  # "deal N" or a saved file's name
    kpat: str  # kpat's verdict: won, lost or unknown
    verdict: str  # ours
    seconds: float
    nodes: int
    replayed: bool  # our winning line won again in a fresh engine (False unless won)


def solve_one(task: tuple[str, str, str, float, bool]) -> Outcome:
    """Solve one deal and replay its winning line in a fresh engine."""
    name, start, kpat, budget, wall = task
    clock = time.perf_counter if wall else time.process_time
    solution = solve(start, budget_seconds=budget, clock=clock)
    replayed = False
    if solution.verdict == "won":
        game = Game.from_position(start)
        for move in solution.moves:
            game.play(move)
        replayed = game.is_won()
    return Outcome(name, kpat, solution.verdict, solution.seconds, solution.nodes, replayed)


def read_checkpoint(path: Path, header: dict[str, object]) -> dict[str, Outcome]:
    """Our outcomes already in ``path`` by deal name (none if it does not exist);
    ``SystemExit`` if it was written with another budget. kpat's verdicts are not taken
    from it: they are read again from its files, which may have grown since."""
    done: dict[str, Outcome] = {}
    if not path.exists():
        return done
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        if first and json.loads(first) != header:
            raise SystemExit(f"{path} was written with other settings: {first.strip()}")
        for text in f:
            try:
                row = json.loads(text)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill: that deal is solved again
            done[row["name"]] = Outcome(**row)
    return done


def check_saved(files: list[Saved]) -> list[str]:
    """Each saved file's cards against the bench's own dealing of its number."""
    wrong = []
    for saved in files:
        dealt = yukon_columns if saved.game == YUKON else klondike_columns
        if saved.columns != dealt(saved.number):
            wrong.append(f"{saved.game}-{saved.number}")
    return wrong


def contradictions(outcomes: list[Outcome]) -> list[str]:
    """Deals where one side proves what the other refutes."""
    found = []
    for o in outcomes:
        if o.verdict == "won" and not o.replayed:
            found.append(f"{o.name}: our winning line did not replay")
        if o.verdict == "lost" and o.kpat == "won":
            found.append(f"{o.name}: we prove it lost, kpat wins it")
        if o.verdict == "won" and o.replayed and o.kpat == "lost":
            found.append(f"{o.name}: kpat calls it lost, our line wins it (replayed)")
    return found


def report(title: str, outcomes: list[Outcome], budget: float, clock: str) -> None:
    n = len(outcomes)
    if not n:
        return
    ours = {v: sum(o.verdict == v for o in outcomes) for v in ("won", "lost", "unknown")}
    theirs = {v: sum(o.kpat == v for o in outcomes) for v in ("won", "lost", "unknown")}
    times = sorted(o.seconds for o in outcomes)
    print()
    print(f"{title}: {n} deals")
    print(f"  {'':10} {'ours':>14} {'kpat':>14}")
    for v in ("won", "lost", "unknown"):
        print(f"  {v:10} {ours[v]:5d} {ours[v] / n:7.1%} {theirs[v]:5d} {theirs[v] / n:7.1%}")
    print(
        f"  time       median {statistics.median(times) * 1000:.1f} ms,"
        f" p95 {percentile(times, 95) * 1000:.1f} ms, max {times[-1] * 1000:.0f} ms"
        f" ({clock}, budget {budget:g} s)"
    )
    print(f"  replayed   {sum(o.replayed for o in outcomes)} of {ours['won']} winning lines")
    pairs: dict[tuple[str, str], int] = {}
    for o in outcomes:
        pairs[(o.verdict, o.kpat)] = pairs.get((o.verdict, o.kpat), 0) + 1
    print(
        "  ours/kpat  "
        + ", ".join(f"{a}/{b} {c}" for (a, b), c in sorted(pairs.items(), key=lambda x: x[0]))
    )
    unknown = [o.name for o in outcomes if o.verdict == "unknown"]
    if unknown:
        print(f"  unknown    {' '.join(u.removeprefix('deal ') for u in unknown)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--testdir", required=True, type=Path, help="kpat's files (see above)")
    parser.add_argument("--run-kpat", action="store_true", help="run kpat --solve if missing")
    parser.add_argument("--start", type=int, default=1, help="first deal number (default 1)")
    parser.add_argument("--end", type=int, default=1000, help="last deal number (default 1000)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds a deal (default 3)")
    parser.add_argument("--wall", action="store_true", help="budget in wall time, not CPU")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--checkpoint", type=Path, metavar="FILE", help="append our outcomes; resume from it"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    if args.budget <= 0 or args.jobs < 1 or not 0 <= args.start <= args.end:
        parser.error("--budget must be positive, --jobs at least 1, 0 <= --start <= --end")
    testdir: Path = args.testdir
    if args.run_kpat and not (testdir / "kpat-solve.txt").exists():
        testdir.mkdir(parents=True, exist_ok=True)
        run_kpat(testdir, args.start, args.end)
    kpat: dict[int, str] = {}
    for verdicts_file in sorted(testdir.glob("kpat-solve*.txt")):
        kpat.update(read_verdicts(verdicts_file))
    saved = [
        read_saved(p)
        for p in sorted(testdir.iterdir())
        if SAVED_NAME.match(p.name) and int(p.name.split("-")[0]) in (YUKON, *KLONDIKE)
    ]
    clock = "wall time" if args.wall else "CPU time"
    print("kpat's Yukon deals beside ours")
    print(f"python  {platform.python_version()} on {platform.system()} {platform.machine()}")
    print(f"cpu     {cpu_model()}, {os.cpu_count()} cores; {args.jobs} job(s)")
    print(f"search  {search_implementation()}; budget {args.budget:g} s of {clock} a deal")
    print(f"load    {' '.join(f'{x:.2f}' for x in os.getloadavg())} (before)")
    wrong = check_saved(saved)
    yukon_files = [s for s in saved if s.game == YUKON]
    print(
        f"dealing {len(saved) - len(wrong)} of {len(saved)} kpat --generate files match the"
        f" bench's dealing of their numbers ({len(yukon_files)} Yukon,"
        f" {len(saved) - len(yukon_files)} Klondike)"
        + (f"; DIFFERENT: {' '.join(wrong)}" if wrong else "")
    )
    missing = [n for n in range(args.start, args.end + 1) if n not in kpat]
    if missing:
        print(
            f"kpat    no verdict for {len(missing)} deals (kpat not run on them: shown as"
            " kpat's unknown, which no verdict of ours can contradict)"
        )
    tasks = [
        (f"deal {n}", yukon_position(n), kpat.get(n, "unknown"), args.budget, args.wall)
        for n in range(args.start, args.end + 1)
    ]
    tasks += [
        (f"file {s.game}-{s.number}", position(s.columns), s.verdict, args.budget, args.wall)
        for s in yukon_files
    ]
    header: dict[str, object] = {"budget": args.budget, "clock": clock}
    done = read_checkpoint(args.checkpoint, header) if args.checkpoint else {}
    outcomes = [dataclasses.replace(done[t[0]], kpat=t[2]) for t in tasks if t[0] in done]
    tasks = [t for t in tasks if t[0] not in done]
    if done:
        print(f"resumed {len(outcomes)} deals from {args.checkpoint}")
    out = None
    if args.checkpoint:
        fresh = not args.checkpoint.exists() or args.checkpoint.stat().st_size == 0
        out = open(args.checkpoint, "a", encoding="utf-8")  # noqa: SIM115
        if fresh:
            out.write(json.dumps(header) + "\n")
    started = time.perf_counter()
    step = max(1, len(tasks) // 20)
    results: Iterator[Outcome]
    pool = multiprocessing.Pool(args.jobs) if args.jobs > 1 else None
    results = pool.imap(solve_one, tasks) if pool else map(solve_one, tasks)
    for outcome in results:
        outcomes.append(outcome)
        if out:
            out.write(json.dumps(dataclasses.asdict(outcome)) + "\n")
            out.flush()
        if not args.quiet and len(outcomes) % step == 0:
            print(
                f"  {len(outcomes)}/{len(tasks)}; {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    if pool:
        pool.close()
        pool.join()
    if out:
        out.close()
    deals = [o for o in outcomes if o.name.startswith("deal ")]
    files = [o for o in outcomes if o.name.startswith("file ")]
    report(f"kpat's deals {args.start}-{args.end}", deals, args.budget, clock)
    report("kpat --generate's Yukon files", files, args.budget, clock)
    found = contradictions(outcomes)
    print()
    print(f"wall    {time.perf_counter() - started:.0f} s")
    print(f"load    {' '.join(f'{x:.2f}' for x in os.getloadavg())} (after)")
    if deals:
        share = sum(o.verdict == "unknown" for o in deals) / len(deals)
        met = "met" if share <= TARGET_UNKNOWN else "NOT met"
        print(f"target  unknown {share:.1%} of kpat's deals (target <= 0.5 %: {met})")
    print(f"cross   {len(found)} contradictions" + "".join(f"\n  {f}" for f in found))
    return 1 if found or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
