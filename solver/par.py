"""``par``: a winning line without its wasted moves (and ``kept_moves``: which it keeps).

Replays in the engine only (``protocol.Game``); no search. ``docs/solver.md`` ("Par").
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.game import Game
from protocol.position import parse_position

from .state import _canonical, _data, _text_of


def _replay(start: str, moves: Sequence[str]) -> Game | None:
    game = Game.from_position(start)
    try:
        for move in moves:
            game.play(move)
    except ValueError:
        return None
    return game


def _wins(start: str, moves: Sequence[str]) -> bool:
    game = _replay(start, moves)
    return game is not None and game.is_won()


def _game_key(game: Game) -> tuple[tuple[int, ...], tuple[int, ...]]:
    data = parse_position(game.position())
    return _canonical(data.columns, data.face_down, data.foundations)


def _cut_loops(start: str, moves: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Drop every stretch of moves that comes back to a position seen before.

    Positions count as the same whatever the order of their columns; the moves after a
    cut are renumbered to the columns of the earlier position. Each move carries its index
    in the line it came from, which survives the cuts (``kept_moves`` reports them).
    """
    while True:
        game = Game.from_position(start)
        seen: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, str]] = {
            _game_key(game): (0, game.position())
        }
        cut: tuple[int, int, str, str] | None = None
        for j, (_, move) in enumerate(moves, start=1):
            game.play(move)
            key = _game_key(game)
            if key in seen:
                i, before = seen[key]
                cut = (i, j, before, game.position())
                break
            seen[key] = (j, game.position())
        if cut is None:
            return moves
        i, j, before, after = cut
        mapping = _column_map(after, before)
        moves = moves[:i] + [(n, _renumber(m, mapping)) for n, m in moves[j:]]


def _column_map(after: str, before: str) -> list[int]:
    """For each column of ``after``, the column of ``before`` with the same cards."""
    a = after.rsplit(" ", 1)[1].split("/")
    b = before.rsplit(" ", 1)[1].split("/")
    free = list(range(7))
    mapping = [-1] * 7
    for k, text in enumerate(a):
        if text:
            m = b.index(text)
            mapping[k] = m
            free.remove(m)
    for k, text in enumerate(a):
        if not text:
            m = next(x for x in free if not b[x])
            mapping[k] = m
            free.remove(m)
    return mapping


def _renumber(move: str, mapping: list[int]) -> str:
    card, dest = move.split(">")
    if dest == "F":
        return move
    return f"{card}>{mapping[int(dest) - 1] + 1}"


def par(moves: Sequence[str], start: Game | str) -> list[str]:
    """The winning line ``moves`` from ``start`` without its wasted moves.

    First every loop is cut (a stretch of moves after which the position, columns in any
    order, is one seen before). Then, repeatedly, single moves and pairs of moves of the
    same card are dropped wherever the rest of the line still replays and wins. The
    result is never longer than ``moves`` and still wins from ``start`` (``ValueError``
    if ``moves`` itself does not).
    """
    return [m for _, m in _par_line(moves, start)]


def kept_moves(moves: Sequence[str], start: Game | str) -> list[int]:
    """Which moves of the winning line ``moves`` ``par`` keeps: their indices (0-based),
    in order. ``len(kept_moves(m, s)) == len(par(m, s))``; the moves are the same up to the
    numbering of columns (a cut loop renumbers the moves after it). The post-mortem of a
    won run names the others as wasted."""
    return [n for n, _ in _par_line(moves, start)]


def _par_line(moves: Sequence[str], start: Game | str) -> list[tuple[int, str]]:
    """``par``'s line, each move with its index in ``moves``."""
    start_text = _text_of(_data(start))
    if not _wins(start_text, moves):
        raise ValueError("par needs a line that wins from the given start")
    line = _cut_loops(start_text, list(enumerate(moves)))
    improved = True
    while improved:
        improved = False
        i = len(line) - 1
        while i >= 0:
            trial = line[:i] + line[i + 1 :]
            if _wins(start_text, [m for _, m in trial]):
                line = _cut_loops(start_text, trial)
                improved = True
                i = min(i, len(line)) - 1
                continue
            card = line[i][1].split(">")[0]
            for j in range(i + 1, len(line)):
                if line[j][1].split(">")[0] != card:
                    continue
                trial = line[:i] + line[i + 1 : j] + line[j + 1 :]
                if _wins(start_text, [m for _, m in trial]):
                    line = _cut_loops(start_text, trial)
                    improved = True
                    break
            i = min(i, len(line)) - 1
    return line
