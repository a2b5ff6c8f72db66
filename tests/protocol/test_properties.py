"""Property tests: random deals, every rules field, random playouts (hypothesis)."""

from __future__ import annotations

import itertools
import random
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    CARD_TEXT,
    UNDO_DEPTH,
    Game,
    GameCode,
    IllegalMoveError,
    Rules,
    UndoError,
)
from protocol.moves import MOVE_TEXT
from protocol.position import UNKNOWN, parse_position

ALL_RULES = [
    v + "".join(opts)
    for v in "CRSAM"
    for n in range(4)
    for opts in itertools.combinations("EGT", n)
]
ALL_MOVES = [text for row in MOVE_TEXT for text in row]

deals = st.integers(min_value=0, max_value=26**7 - 1)
rules_fields = st.sampled_from(ALL_RULES)
randoms = st.randoms(use_true_random=False)


def check_position(game: Game) -> None:
    """52 distinct cards, 21 minus the flips face down, and a notation that round-trips."""
    text = game.position()
    data = parse_position(text)
    on_foundations = [suit * 13 + r for suit, h in enumerate(data.foundations) for r in range(h)]
    in_columns = [card for column in data.columns for card in column]
    assert UNKNOWN not in in_columns
    cards = on_foundations + in_columns
    assert len(cards) == 52
    assert sorted(cards) == list(range(52))
    assert Game.from_position(text).position() == text
    for n, column in enumerate(data.columns, start=1):
        assert game.face_down_count(n) == data.face_down[n - 1]
        assert len(game.column(n)) == len(column)
        assert not column or data.face_down[n - 1] < len(column)


def snapshot(game: Game) -> tuple[str, int, int]:
    return game.position(), game.score, game.move_count


def check_refused(game: Game, move: str) -> None:
    before = snapshot(game)
    can_undo = game.can_undo()
    try:
        game.play(move)
    except IllegalMoveError as exc:
        assert exc.reason
        assert exc.move == move
    else:
        raise AssertionError(f"{move} is not in legal_moves() but was played")
    assert snapshot(game) == before
    assert game.can_undo() == can_undo


def check_every_listed_move(game: Game, moves: list[str]) -> None:
    position, score, count = snapshot(game)
    for move in moves:
        twin = game.copy()
        played = twin.play(move)
        assert played.move == move
        expected = (10 if move.endswith(">F") else 0) + (5 if played.turned_up else 0)
        assert played.points == expected
        assert twin.score == score + played.points
        assert twin.move_count == count + 1
        assert twin.undo() == move
        assert (twin.position(), twin.score) == (position, score)
        assert twin.move_count == count + 1


def pick(moves: list[str], rnd: random.Random) -> str:
    """A random legal move, leaning towards foundation moves so that playouts get somewhere."""
    up = [m for m in moves if m.endswith(">F")]
    return rnd.choice(up if up and rnd.random() < 0.5 else moves)


def down_cards(game: Game) -> int:
    return sum(game.face_down_count(n) for n in range(1, 8))


@settings(max_examples=60, deadline=None)
@given(deal=deals, rules=rules_fields)
def test_every_deal_has_21_face_down_and_31_face_up_cards(deal: int, rules: str) -> None:
    game = Game.from_deal(deal, rules)
    assert [len(game.column(n)) for n in range(1, 8)] == [1, 6, 7, 8, 9, 10, 11]
    assert down_cards(game) == 21
    assert sum(t.isupper() for n in range(1, 8) for t in game.column(n)) == 31
    check_position(game)
    same = Game.from_deal(deal, "C").position()
    assert game.position().partition(" ")[2] == same.partition(" ")[2]


@settings(max_examples=100, deadline=None)
@given(deal=deals, rules=rules_fields)
def test_game_codes_round_trip(deal: int, rules: str) -> None:
    code = GameCode(Rules.parse(rules), deal)
    text = str(code)
    assert len(text) == len("YU1--") + len(rules) + 7
    assert GameCode.parse(text) == code
    assert GameCode.parse(text.lower()) == code
    assert Game.from_code(text).position() == Game.from_deal(deal, rules).position()


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_random_playout(deal: int, rules: str, rnd: random.Random) -> None:
    game = Game.from_deal(deal, rules)
    flips = 0
    take_backs = 0
    for step in range(120):
        check_position(game)
        assert game.score >= 0
        assert down_cards(game) == 21 - flips
        if not take_backs:
            assert game.score == 10 * game.cards_on_foundations + 5 * flips
        moves = game.legal_moves()
        assert len(set(moves)) == len(moves)
        assert game.is_stuck() == (not moves and not game.is_won())
        check_every_listed_move(game, moves)
        listed = set(moves)
        if step % 40 == 0:
            # Exactly the listed moves are legal: every other card and destination is refused.
            for move in ALL_MOVES:
                if move not in listed:
                    check_refused(game, move)
        else:
            for move in rnd.sample(ALL_MOVES, 8):
                if move not in listed:
                    check_refused(game, move)
        if not moves:
            break
        move = pick(moves, rnd)
        was_up = move[:2] not in {t for n in range(1, 8) for t in game.column(n)}
        played = game.play(move)
        flips += played.turned_up is not None
        take_backs += was_up
        assert game.move_count == step + 1


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_undo_restores_exactly(deal: int, rules: str, rnd: random.Random) -> None:
    game = Game.from_deal(deal, rules)
    model: deque[tuple[str, int, str]] = deque(maxlen=UNDO_DEPTH)
    count = 0
    for _ in range(250):
        moves = game.legal_moves()
        if model and (not moves or rnd.random() < 0.3):
            position, score, move = model.pop()
            assert game.undo() == move
            assert game.position() == position
            assert game.score == score
        elif moves:
            move = pick(moves, rnd)
            model.append((game.position(), game.score, move))
            game.play(move)
            count += 1
        else:
            break
        assert game.move_count == count
        assert game.can_undo() == bool(model)
        assert game.score >= 0
    if not model:
        try:
            game.undo()
        except UndoError:
            pass
        else:
            raise AssertionError("undo with nothing to take back")


@settings(max_examples=40, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_a_view_follows_the_real_game(deal: int, rules: str, rnd: random.Random) -> None:
    game = Game.from_deal(deal, rules)
    view = Game.from_position(game.view())
    assert view.view().count("??") == 21
    for _ in range(100):
        # Legality never depends on face-down cards.
        fresh = Game.from_position(game.view())
        assert sorted(fresh.legal_moves()) == sorted(game.legal_moves())
        assert sorted(view.legal_moves()) == sorted(game.legal_moves())
        assert view.view() == game.view()
        assert view.position() == game.view()
        moves = game.legal_moves()
        if not moves:
            break
        move = pick(moves, rnd)
        played = game.play(move)
        assert view.play(move, reveal=played.turned_up) == played
        assert view.score == game.score
    assert view.is_won() == game.is_won()
    assert view.is_stuck() == game.is_stuck()


@settings(max_examples=100, deadline=None)
@given(deal=deals, rules=rules_fields, rnd=randoms)
def test_position_notation_round_trips_with_unknown_cards(
    deal: int, rules: str, rnd: random.Random
) -> None:
    game = Game.from_deal(deal, rules)
    for _ in range(rnd.randrange(30)):
        moves = game.legal_moves()
        if not moves:
            break
        game.play(pick(moves, rnd))
    # Hide a random subset of the face-down cards.
    tokens = [game.column(n) for n in range(1, 8)]
    hidden = [[t if not t.islower() or rnd.random() < 0.5 else "??" for t in c] for c in tokens]
    head = game.position().rsplit(" ", 1)[0]
    text = head + " " + "/".join("".join(c) for c in hidden)
    assert Game.from_position(text).position() == text
    data = parse_position(text)
    known = [c for column in data.columns for c in column if c != UNKNOWN]
    assert len(set(known)) == len(known)
    unknown = sum(column.count(UNKNOWN) for column in data.columns)
    assert len(known) + unknown + game.cards_on_foundations == 52
    assert {CARD_TEXT[c] for c in known} <= set(CARD_TEXT)
