"""``server/pages/web/rules.js`` agrees with the Python engine, position by position.

The browser client highlights where a card may go and keeps its copy of the view in step
with ``accepted`` messages using its own JavaScript rules. If they drifted from
``protocol/``, the client would offer moves the server refuses, or draw a board the runner
does not have. So Python plays random games from random deals under all 40 rules fields
(five variants times the options E, G, T), writes each position as the runner's view,
and one Node process gives rules.js's answer for each: the view parsed and written back,
the legal moves (the same list, in the same order), the destinations of every card that
can move, and the view after the next move with the card it turned up. Mutated views check
that rules.js refuses exactly the text the engine refuses. All seeded: a failure repeats.
"""

from __future__ import annotations

import functools
import random
from collections import Counter, defaultdict
from typing import Any

import pytest

from protocol import Game, InvalidPositionError
from protocol.position import parse_position

from .node import HERE, ROOT, run_node

CHECK = HERE / "rules_check.mjs"
SEED = 19
POSITIONS = 6000
MALFORMED = 1500
ALL_RULES = [
    variant + e + g + t
    for variant in "CRSAM"
    for e in ("", "E")
    for g in ("", "G")
    for t in ("", "T")
]
_SUITS = "SHDC"
_RANKS = "A23456789TJQK"


def _record(game: Game, rng: random.Random, move: str | None) -> dict[str, Any]:
    """One position: what Python says, and what to ask rules.js."""
    view = game.view()
    moves = game.legal_moves()
    expected: dict[str, list[str]] = defaultdict(list)
    for m in moves:
        card, dest = m.split(">")
        expected[card].append(dest)
    # Every card that might move (face up, or a foundation's top), and one that cannot.
    cards = [c for n in range(1, 8) for c in game.column(n) if c != "??"]
    for suit, height in zip(_SUITS, game.foundation_heights(), strict=True):
        if height:
            cards.append(_RANKS[height - 1] + suit)
    cards.append(rng.choice([r + s for r in _RANKS for s in _SUITS]))
    after = turned = None
    if move is not None:
        played = game.copy().play(move)
        turned = played.turned_up
        copy = game.copy()
        copy.play(move)
        after = copy.view()
    return {
        "view": view,
        "cards": cards,
        "move": move,
        "turned": turned,
        "expect_moves": moves,
        "expect_destinations": {c: sorted(expected.get(c, [])) for c in cards},
        "expect_after": after,
    }


def _choose(rng: random.Random, moves: list[str]) -> str:
    """Random play that still gets somewhere: half the time a foundation move when there is
    one, so that foundations fill, columns empty and take-backs become possible."""
    up = [m for m in moves if m.endswith(">F")]
    if up and rng.random() < 0.5:
        return rng.choice(up)
    return rng.choice(moves)


@functools.cache
def generate_positions(count: int = POSITIONS, seed: int = SEED) -> list[dict[str, Any]]:
    """``count`` positions from random play (with the odd undo) on random deals, cycling
    through every rules field; plus every position of the known winning game."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    path = ROOT / "tests" / "data" / "winning-game.txt"
    code, *winning = path.read_text().split()
    for rules in ("C", "CT", "CEGT"):
        game = Game.from_deal(Game.from_code(code).code.deal, rules)  # type: ignore[union-attr]
        for move in [*winning, None]:
            if move is not None and move not in game.legal_moves():
                move = None  # G may refuse a block the winning line moves under C
            out.append(_record(game, rng, move))
            if move is None:
                break
            game.play(move)
    game_number = 0
    while len(out) < count:
        rules = ALL_RULES[game_number % len(ALL_RULES)]
        game_number += 1
        game = Game.from_deal(rng.randrange(26**7), rules)
        for _ in range(rng.randint(10, 250)):
            moves = game.legal_moves()
            move = _choose(rng, moves) if moves else None
            out.append(_record(game, rng, move))
            if move is None or len(out) >= count:
                break
            game.play(move)
            if rng.random() < 0.03:
                game.undo()
    return out


def _mutants(views: list[str], count: int, seed: int = SEED) -> list[str]:
    """Views with one small change: a character replaced, dropped, doubled or two cards
    swapped. Only upper case, ``?``, digits, ``-``, ``/`` and space go in, because the
    engine also reads known face-down cards in lower case, which a view never has."""
    rng = random.Random(seed)
    alphabet = "A23456789TJQKSHDC?-/ 1ZEGM"
    out = []
    for _ in range(count):
        text = rng.choice(views)
        i = rng.randrange(len(text))
        kind = rng.randrange(4)
        if kind == 0:
            text = text[:i] + rng.choice(alphabet) + text[i + 1 :]
        elif kind == 1:
            text = text[:i] + text[i + 1 :]
        elif kind == 2:
            text = text[:i] + text[i] + text[i:]
        else:
            j = rng.randrange(len(text))
            a, b = sorted((i - i % 2, j - j % 2))
            text = text[:a] + text[b : b + 2] + text[a + 2 : b] + text[a : a + 2] + text[b + 2 :]
        out.append(text)
    return out


def _engine_accepts(text: str) -> bool:
    try:
        parse_position(text)
    except InvalidPositionError:
        return False
    return True


def test_rules_js_agrees_with_the_engine() -> None:
    positions = generate_positions()
    views = [p["view"] for p in positions]
    mutants = _mutants(views, MALFORMED)
    asked = [{k: p[k] for k in ("view", "cards", "move", "turned")} for p in positions]
    answer = run_node(CHECK, {"positions": asked, "malformed": mutants})

    mismatches: list[str] = []
    for p, got in zip(positions, answer["positions"], strict=True):
        where = f"view {p['view']!r}"
        if "error" in got:
            mismatches.append(f"{where}: rules.js threw {got['error']!r}")
            continue
        if got["roundtrip"] != p["view"]:
            mismatches.append(f"{where}: formatView(parseView(v)) gave {got['roundtrip']!r}")
        if got["moves"] != p["expect_moves"]:
            missing = sorted(set(p["expect_moves"]) - set(got["moves"]))
            extra = sorted(set(got["moves"]) - set(p["expect_moves"]))
            mismatches.append(
                f"{where}: legalMoves differ: missing {missing}, extra {extra}"
                f" (order: python {p['expect_moves']}, js {got['moves']})"
            )
        for card, dests in p["expect_destinations"].items():
            if got["destinations"][card] != dests:
                mismatches.append(
                    f"{where}: destinations({card}) python {dests}, js {got['destinations'][card]}"
                )
        if got["after"] != p["expect_after"]:
            mismatches.append(
                f"{where}: applyAccepted({p['move']!r}, {p['turned']!r}) gave"
                f" {got['after']!r}, python {p['expect_after']!r}"
            )
    for text, error in zip(mutants, answer["malformed"], strict=True):
        if _engine_accepts(text) != (error is None):
            said = "accepted" if error is None else f"refused ({error})"
            mismatches.append(f"malformed view {text!r}: rules.js {said}, the engine did not")
    assert not mismatches, f"{len(mismatches)} mismatches; the first:\n" + "\n".join(
        mismatches[:10]
    )


@pytest.mark.slow
def test_the_positions_cover_every_rule() -> None:
    """The random positions do reach what the rules options change: otherwise agreement
    would prove less than it seems."""
    positions = generate_positions()
    seen: Counter[str] = Counter()
    for p in positions:
        rules = p["view"].split(" ")[0]
        seen["rules " + rules] += 1
        columns = p["view"].split(" ")[2].split("/")
        for move in p["expect_moves"]:
            card, dest = move.split(">")
            if dest == "F":
                seen["foundation move"] += 1
            elif card not in p["view"].split(" ")[2]:
                seen["take-back"] += 1
            elif not columns[int(dest) - 1]:
                seen["to an empty column" + (" (not a king)" if card[0] != "K" else "")] += 1
        if "G" in rules:
            unlimited = Game.from_position(p["view"].replace(rules, rules.replace("G", ""), 1))
            if len(unlimited.legal_moves()) > len(p["expect_moves"]):
                seen["group limit refuses a move"] += 1
        if p["turned"]:
            seen["a card turned"] += 1
        if not p["expect_moves"]:
            seen["won" if p["view"].split(" ")[1] == "KKKK" else "stuck"] += 1
    wanted = [
        *(f"rules {r}" for r in ALL_RULES),
        "foundation move",
        "take-back",
        "to an empty column",
        "to an empty column (not a king)",
        "group limit refuses a move",
        "a card turned",
        "won",
        "stuck",
    ]
    assert [w for w in wanted if not seen[w]] == [], dict(seen)


def _calls(*calls: list[Any]) -> list[dict[str, Any]]:
    return list(run_node(CHECK, {"calls": list(calls)})["calls"])


START = (
    "C ---- 7H/??6HQSAD9H8S/????2H4CKC3HTS/??????2S6S6D3C3D/????????KD7SQCAS2C"
    "/??????????JCACQD4S9D/????????????8C5SQH2D7C"
)


def test_hand_written_edge_cases() -> None:
    tb = "CT -A-- KD7SQCAS2C/??6HQSAD9H8S7H/????2H4CKC3HTS/??????2S6S6D3C3D/????5D/"
    tb += "??????????JCACQD4S9D/????????????8C5SQH2D7C"
    results = _calls(
        # The example of protocol.md 4.7: a king to an empty column uncovers the ace of hearts.
        [
            "applyAccepted",
            "C ---- /??6HQSAD9H8S7H/????2H4CKC3HTS/??????2S6S6D3C3D/????????KD7SQCAS2C"
            "/??????????JCACQD4S9D/????????????8C5SQH2D7C",
            "KD>1",
            "AH",
        ],
        ["destinations", START, "6H"],
        ["destinations", START, "KD"],  # column 1 is not empty: a king has nowhere to go
        # Take-back (rules.md 13): the ace of hearts, on its foundation, may come back onto
        # the two of clubs that tops column 1, and only there.
        ["destinations", tb, "AH"],
        ["destinations", tb.replace("CT", "C", 1), "AH"],  # not without T
        ["applyAccepted", tb, "AH>1", None],
        ["applyAccepted", tb, "AH>1", "9S"],  # a take-back never turns a card
        ["legalMoves", "C QKKK KS//////"],  # a lone king may change empty columns
        ["isWon", "C KKKK //////"],
        ["isStuck", "C TKKK ??JSQS//////"],
        ["legalMoves", "C TKKK ??JSQS//////"],
        # King to an empty column only without E; any card with E.
        ["destinations", "C JKKK QSKS//////", "QS"],
        ["destinations", "CE JKKK QSKS//////", "QS"],
        ["destinations", "C QKKK KS//////", "KS"],
        ["applyAccepted", START, "6H>7", None],  # turns a card: the turned card is needed
        ["applyAccepted", START, "9S>7", None],  # 9S is face down here
        ["applyAccepted", START, "7h>2", None],  # accepted.move is canonical
        ["cardLabel", "TH"],
        ["cardLabel", "??"],
        ["parseCard", "10h"],
    )
    assert results == [
        {
            "ok": "C ---- KD7SQCAS2C/??6HQSAD9H8S7H/????2H4CKC3HTS/??????2S6S6D3C3D/??????AH"
            "/??????????JCACQD4S9D/????????????8C5SQH2D7C"
        },
        {"ok": ["7"]},
        {"ok": []},
        {"ok": ["1"]},
        {"ok": []},
        {"ok": tb.replace("CT -A-- KD7SQCAS2C", "CT ---- KD7SQCAS2CAH")},
        {"error": "AH>1: a take-back never turns a card"},
        {"ok": ["KS>F", "KS>2", "KS>3", "KS>4", "KS>5", "KS>6", "KS>7"]},
        {"ok": True},
        {"ok": True},
        {"ok": []},
        {"ok": []},
        {"ok": ["2", "3", "4", "5", "6", "7"]},
        {"ok": ["2", "3", "4", "5", "6", "7", "F"]},
        {"error": "6H>7 uncovers a face-down card, but no turned card was given"},
        {"error": "9S>7: the 9S is neither face up in a column nor on top of its foundation"},
        {"error": 'not a canonical move: "7h>2"'},
        {"ok": "ten of hearts"},
        {"ok": "face-down card"},
        {"ok": {"rank": 10, "suit": "H", "text": "TH"}},
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("C ----", "a view has three fields"),
        ("X ---- ///////", "rules field"),
        ("CTE ---- ///////", "rules field"),
        ("C --- ///////", "foundations field"),
        ("C ---X ///////", "is not a rank or -"),
        ("C ---- //////", "cards plus ?? make 0, not 52"),
        ("C KKKK ////////", "expected 7 columns"),
        ("C QKKK K//////", "two characters each"),
        ("C QKKK ks//////", "is not a card"),
        ("C QKKK KS??//////", "face-down card lies on a face-up card"),
        ("C JKKK QS/??/////", "its top card is face down"),
        ("C KKKK KS//////", "KS appears twice"),
        ("C  ---- ///////", "three fields"),
    ],
)
def test_malformed_views_are_refused_with_a_message(text: str, message: str) -> None:
    [result] = _calls(["parseView", text])
    assert message in result.get("error", ""), result
    with pytest.raises(InvalidPositionError):
        parse_position(text)
