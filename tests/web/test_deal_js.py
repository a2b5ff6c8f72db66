"""``server/pages/web/deal.js`` deals what ``protocol/`` deals, and plays a run as the engine does.

The browser client replays a run from its game code and actions (docs/protocol.md 4.22)
with its own JavaScript deal, so it must agree with the Python shuffle on every code:
the vectors of tests/data (numbered and seeded deals, one that throws a draw away), a few
hundred random codes of both kinds, with WebCrypto's SHA-256 and with the fallback of
commit.js. And the positions of random runs with undos must be the engine's views.
"""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import pytest

from protocol import Game

from .node import HERE, ROOT, run_node

CHECK = HERE / "deal_check.mjs"
DATA = ROOT / "tests" / "data"
SEED = 21


def _vectors() -> list[tuple[str, str]]:
    rows = []
    for name in ("deal-vectors.txt", "seeded-deal-vectors.txt"):
        for line in Path(DATA / name).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                code, position = line.split("\t")
                rows.append((code, position))
    return rows


def _random_codes(rng: random.Random, n: int) -> list[str]:
    codes = []
    for i in range(n):
        rules = (
            rng.choice("CRSAM")
            + rng.choice(["", "E"])
            + rng.choice(["", "G"])
            + rng.choice(["", "T"])
        )
        if i % 2:
            deal = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(7))
        else:
            deal = base64.b32encode(rng.randbytes(16)).decode().rstrip("=")
        codes.append(f"YU1-{rules}-{deal}")
    return codes


def _run(rng: random.Random, code: str) -> tuple[list[list[Any]], list[list[Any]]]:
    """A random run with undos: its actions, and the engine's view and move count after each."""
    game = Game.from_code(code)
    actions: list[list[Any]] = []
    expected: list[list[Any]] = [[game.view(), game.move_count]]
    for ms in range(rng.randrange(20, 120)):
        moves = game.legal_moves()
        if game.can_undo() and (not moves or rng.random() < 0.2):
            game.undo()
            actions.append([ms * 100, "undo"])
        elif moves:
            move = rng.choice(moves)
            game.play(move)
            actions.append([ms * 100, move])
        else:
            break
        expected.append([game.view(), game.move_count])
    return actions, expected


@pytest.mark.parametrize("subtle", [True, False], ids=["webcrypto", "fallback"])
def test_deal_js_deals_as_the_engine_does(subtle: bool) -> None:
    rng = random.Random(SEED)
    vectors = _vectors()
    codes = [c for c, _ in vectors] + _random_codes(rng, 300)
    expected = [p for _, p in vectors] + [
        Game.from_code(c).position() for c in codes[len(vectors) :]
    ]
    out = run_node(CHECK, {"codes": codes, "runs": [], "subtle": subtle})
    assert len(out["codes"]) == len(codes)
    for code, got, want in zip(codes, out["codes"], expected, strict=True):
        assert got == want, code


def test_deal_js_plays_runs_as_the_engine_does() -> None:
    rng = random.Random(SEED + 1)
    runs, expected = [], []
    for code in _random_codes(rng, 60):
        actions, views = _run(rng, code)
        runs.append({"code": code, "actions": actions})
        expected.append(views)
    out = run_node(CHECK, {"codes": [], "runs": runs, "subtle": True})
    assert out["runs"] == expected
    assert sum(a[1] == "undo" for r in runs for a in r["actions"]) > 100
