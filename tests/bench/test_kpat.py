"""bench.kpat: kpat's deals dealt as kpat deals them, its files read, contradictions found."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.kpat import (
    Outcome,
    contradictions,
    klondike_columns,
    kpat_deck,
    main,
    position,
    read_saved,
    read_verdicts,
    solve_one,
    yukon_columns,
    yukon_position,
)
from protocol import Game
from solver import solve

# The start of a file kpat 22.12 (Debian bookworm) wrote with ``kpat --generate``: its
# Klondike deal 1001255843, first three tableau piles (kpat's suits: 0 clubs, 1 diamonds,
# 2 hearts, 3 spades). The bench deals the same cards from the number alone.
KPAT_FILE = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE kpat>
<dealer id="18" options="1" number="1001255843" moves="0" started="0" data="">
	<pile index="5" z="0">
		<card suit="1" value="8" faceup="1" z="1"/>
	</pile>
	<pile index="6" z="0">
		<card suit="1" value="2" faceup="0" z="1"/>
		<card suit="0" value="8" faceup="1" z="2"/>
	</pile>
	<pile index="7" z="0">
		<card suit="3" value="5" faceup="0" z="1"/>
		<card suit="1" value="1" faceup="0" z="2"/>
		<card suit="3" value="1" faceup="1" z="3"/>
	</pile>
</dealer>
"""


def test_the_shuffle_deals_kpats_cards(tmp_path: Path) -> None:
    path = tmp_path / "0-1001255843-1"
    path.write_text(KPAT_FILE, encoding="utf-8")
    saved = read_saved(path)
    assert (saved.game, saved.number, saved.verdict) == (0, 1001255843, "won")
    assert saved.columns[:3] == klondike_columns(1001255843)[:3]
    # 8D; 2d 8C; 5s ad AS in our indices (suits S H D C)
    assert saved.columns[0] == [(2 * 13 + 7, True)]
    assert saved.columns[2] == [(4, False), (26, False), (0, True)]


def test_a_yukon_deal_is_a_legal_start() -> None:
    for number in (1, 2, 617, 1000, 2**31 - 1):
        assert sorted(kpat_deck(number)) == list(range(52))
        columns = yukon_columns(number)
        assert [len(c) for c in columns] == [1, 6, 7, 8, 9, 10, 11]
        assert [sum(not up for _, up in c) for c in columns] == [0, 1, 2, 3, 4, 5, 6]
        game = Game.from_position(yukon_position(number))
        assert game.position() == position(columns)
        assert game.legal_moves()
    assert yukon_position(1) != yukon_position(2)


def test_kpats_verdicts_are_read(tmp_path: Path) -> None:
    out = tmp_path / "kpat-solve.txt"
    out.write_text("1 won (12 ms)\n2 lost (3 ms)\n3 unknown (900 ms)\nall_moves 7\n")
    assert read_verdicts(out) == {1: "won", 2: "lost", 3: "unknown"}


def test_a_won_deal_is_replayed_and_contradictions_are_named() -> None:
    won = solve_one(("deal 1", yukon_position(1), "lost", 30.0, False))
    assert won.verdict == "won" and won.replayed
    lost = Outcome("deal 9", "won", "lost", 0.1, 10, False)
    fine = Outcome("deal 8", "unknown", "lost", 0.1, 10, False)
    assert contradictions([won, lost, fine]) == [
        "deal 1: kpat calls it lost, our line wins it (replayed)",
        "deal 9: we prove it lost, kpat wins it",
    ]


def test_a_run_resumes_from_its_checkpoint_and_reads_kpat_afresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "kpat-solve-1.txt").write_text("1 won (1 ms)\n")
    checkpoint = tmp_path / "ours.jsonl"
    argv = ["--testdir", str(tmp_path), "--end", "2", "--checkpoint", str(checkpoint), "--quiet"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "no verdict for 1 deals" in first
    assert len(checkpoint.read_text().splitlines()) == 3  # the settings, then two deals
    (tmp_path / "kpat-solve-2.txt").write_text("2 won (0 ms)\n")
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert "resumed 2 deals" in again and "no verdict" not in again
    assert len(checkpoint.read_text().splitlines()) == 3  # nothing solved again
    with pytest.raises(SystemExit):
        main([*argv, "--budget", "1"])


def test_the_deals_kpat_calls_lost_that_a_block_move_wins() -> None:
    """kpat 22.12 says its Yukon deals 172 and 833 are lost (``kpat --solve 10``): its
    solver sends a two up at once, but these wins put a block whose bottom is an ace on
    a two that could go up. The line replays in a fresh engine (docs/solver.md, "The kpat
    cross-check")."""
    for number, k, move, base in ((172, 6, "AD>2", "2C"), (833, 1, "AC>4", "2H")):
        start = yukon_position(number)
        solution = solve(start, budget_nodes=100_000)
        assert solution.verdict == "won" and solution.moves[k] == move
        game = Game.from_position(start)
        for played in solution.moves[:k]:
            game.play(played)
        columns = game.position().split(" ")[2].split("/")
        assert columns[int(move[-1]) - 1].endswith(base)  # the two it goes onto, on top
        [source] = [c for c in columns if move[:2] in c]
        assert not source.endswith(move[:2])  # cards lie on the ace: a block moves
        for played in solution.moves[k:]:
            game.play(played)
        assert game.is_won()
