"""The game: moves, flips, foundations, options, score, undo, end of game (spec sections 3-6).

Positions are written in position notation (section 8). ``make`` fills in the cards a test
does not care about, face down, wherever a column holds a ``*``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import (
    CARD_TEXT,
    UNDO_DEPTH,
    Game,
    GameCode,
    IllegalMoveError,
    InvalidMoveError,
    Played,
    RevealError,
    UndoError,
)

DATA = Path(__file__).resolve().parent.parent / "data"
WINNING = (DATA / "winning-game.txt").read_text().split()
WIN_CODE, WIN_MOVES = WINNING[0], WINNING[1:]
RANKS = "A23456789TJQK"


def make(rules: str, foundations: str, *columns: str) -> str:
    """Position text; the one ``*`` in a column stands for every card not yet placed, face down."""
    used: set[str] = set()
    for suit, ch in zip("SHDC", foundations, strict=True):
        if ch != "-":
            used.update(r + suit for r in RANKS[: RANKS.index(ch) + 1])
    for column in columns:
        text = column.replace("*", "")
        used.update(text[i : i + 2].upper() for i in range(0, len(text), 2))
    rest = "".join(t.lower() for t in CARD_TEXT if t not in used)
    assert len(columns) == 7
    return f"{rules} {foundations} {'/'.join(col.replace('*', rest) for col in columns)}"


def state(game: Game) -> tuple[str, int, int]:
    return game.position(), game.score, game.move_count


def refused(game: Game, move: str, reason: str | None = None) -> IllegalMoveError:
    """Assert the move is illegal, with ``reason`` if given, and that nothing changed."""
    before = state(game)
    can_undo = game.can_undo()
    with pytest.raises(IllegalMoveError) as caught:
        game.play(move)
    if reason is not None:
        assert caught.value.reason == reason
        assert str(caught.value) == f"illegal move {move}: {reason}"
    assert caught.value.move == move
    assert state(game) == before
    assert game.can_undo() == can_undo
    assert move not in game.legal_moves()
    return caught.value


def legal(game: Game, move: str, reveal: str | None = None) -> Played:
    assert move in game.legal_moves()
    return game.play(move, reveal=reveal)


# -- the deal and construction ---------------------------------------------------------------


def test_from_code_from_deal_and_code_attribute() -> None:
    game = Game.from_code("YU1-CT-QWERTYU")
    assert str(game.code) == "YU1-CT-QWERTYU"
    assert str(game.rules) == "CT"
    assert game.code is not None
    assert Game.from_deal(game.code.deal, "CT").position() == game.position()
    assert Game.from_code(GameCode.parse("yu1-ct-qwertyu")).position() == game.position()
    assert Game.from_position(game.position()).code is None


def test_a_new_game_starts_at_zero() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    assert game.score == 0
    assert game.move_count == 0
    assert not game.can_undo()
    assert not game.is_won()
    assert not game.is_stuck()
    assert game.legal_moves()
    assert game.column(1) == ["7H"]
    assert game.column(2) == ["9s", "6H", "QS", "AD", "9H", "8S"]
    assert game.face_down_count(7) == 6
    assert repr(game) == f"Game.from_position({game.position()!r})"


# -- tableau moves ------------------------------------------------------------------------


def test_seed_000_unordered_group_moves_onto_the_8_of_hearts() -> None:
    # 7S KD 3C AH form no sequence; only the 7 of spades is tested against the 8 of hearts.
    game = Game.from_position(make("C", "----", "8H", "7SKD3CAH", "*KS", "", "", "", ""))
    played = legal(game, "7S>1")
    assert played == Played("7S>1", None, 0)
    assert game.position() == make("C", "----", "8H7SKD3CAH", "", "*KS", "", "", "", "")
    assert game.column(1) == ["8H", "7S", "KD", "3C", "AH"]
    assert game.score == 0
    assert game.move_count == 1


def test_an_unordered_group_uncovering_a_card_flips_it() -> None:
    text = make("C", "----", "8H", "*7SKD3CAH", "KS", "", "", "", "")
    game = Game.from_position(text)
    under = game.column(2)[-5]
    played = legal(game, "7S>1")
    assert played == Played("7S>1", under.upper(), 5)
    assert game.column(2)[-1] == under.upper()
    assert game.score == 5


def test_only_the_picked_card_is_tested() -> None:
    game = Game.from_position(make("C", "----", "8H", "7SKD3CAH", "*KS", "", "", "", ""))
    refused(game, "3C>1", "a 3 of clubs needs a red 4")
    refused(game, "AH>1", "an ace of hearts needs a black 2")
    refused(game, "KD>1", "a king of diamonds can only go to an empty column")


def test_a_group_moves_from_any_depth_and_never_splits() -> None:
    game = Game.from_position(make("C", "----", "4D", "7SKD3CAH", "*KS", "", "", "", ""))
    legal(game, "3C>1")
    assert game.column(1) == ["4D", "3C", "AH"]
    assert game.column(2) == ["7S", "KD"]
    legal(game, "KD>4")
    assert game.column(4) == ["KD"]
    assert game.column(2) == ["7S"]


def test_destination_must_differ_from_source() -> None:
    game = Game.from_position(make("C", "----", "8H7SKD", "8D", "*KS", "", "", "", ""))
    refused(game, "7S>1", "the 7 of spades is already in column 1")
    refused(game, "8H>1", "the 8 of hearts is already in column 1")
    refused(game, "KD>1", "the king of diamonds is already in column 1")
    legal(game, "7S>2")


def test_face_down_cards_cannot_be_picked() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")  # column 2 is 9s 6H QS AD 9H 8S
    refused(game, "9S>4", "the 9 of spades is not face up")
    refused(game, "9S>F", "the 9 of spades is not face up")
    refused(game, "KS>1", "the king of spades is not face up")
    # The 8 of diamonds is at the bottom of column 4, under two more face-down cards.
    refused(game, "8D>1", "the 8 of diamonds is not face up")


def test_nothing_moves_by_itself_besides_the_flip() -> None:
    game = Game.from_position(make("C", "----", "8H", "AD7S", "*KS", "", "", "", ""))
    legal(game, "7S>1")
    assert game.column(2) == ["AD"]
    assert game.foundation_heights() == (0, 0, 0, 0)
    assert "AD>F" in game.legal_moves()


@pytest.mark.parametrize("variant", "CRSM")
def test_an_ace_accepts_nothing(variant: str) -> None:
    game = Game.from_position(make(variant, "----", "AH", "2S", "2H", "KC", "2C", "*2D", "KS"))
    for card in ("2S", "2H", "2C", "2D", "KC", "KS"):
        refused(game, f"{card}>1", "an ace accepts nothing")


def test_in_alaska_an_ace_takes_the_2_of_its_suit() -> None:
    game = Game.from_position(make("A", "----", "AH", "2S", "2H", "KC", "*3H", "", ""))
    refused(game, "2S>1", "a 2 of spades needs the ace of spades or the 3 of spades")
    refused(game, "KC>1", "a king of clubs needs the queen of clubs")
    legal(game, "2H>1")
    assert game.column(1) == ["AH", "2H"]


@pytest.mark.parametrize("variant", "CRSAM")
def test_a_king_never_builds_on_an_ace(variant: str) -> None:
    # Ranks never wrap (section 1), in any variant.
    game = Game.from_position(make(variant, "----", "AS", "KS", "AH", "KH", "*QC", "", ""))
    for king, column in (("KS", 1), ("KH", 1), ("KS", 3), ("KH", 3)):
        assert f"{king}>{column}" not in game.legal_moves()
        refused(game, f"{king}>{column}")


# What a 7 of spades may go on in each variant (section 4), played through the engine.
BUILDS = {
    "C": {"8H", "8D"},
    "R": {"8S", "8H", "8D", "8C"},
    "S": {"8S"},
    "A": {"8S", "6S"},
    "M": {"8H", "8D", "8C"},
}
REFUSALS = {
    "C": "a 7 of spades needs a red 8",
    "R": "a 7 of spades needs an 8",
    "S": "a 7 of spades needs the 8 of spades",
    "A": "a 7 of spades needs the 6 of spades or the 8 of spades",
    "M": "a 7 of spades needs an 8 that is not a spade",
}


@pytest.mark.parametrize("variant", "CRSAM")
@pytest.mark.parametrize("top", ["8S", "8H", "8D", "8C", "6S", "6H", "9S", "9H", "7H", "5S"])
def test_each_variant_builds_as_the_spec_says(variant: str, top: str) -> None:
    game = Game.from_position(make(variant, "----", top, "7S", "*KC", "", "", "", ""))
    if top in BUILDS[variant]:
        played = legal(game, "7S>1")
        assert played.points == 0
        assert game.column(1) == [top, "7S"]
    else:
        refused(game, "7S>1", REFUSALS[variant])


# -- empty columns -----------------------------------------------------------------------------


def test_a_king_with_passengers_goes_into_an_empty_column() -> None:
    game = Game.from_position(make("C", "----", "", "*KD3C9S", "QSAH", "8C", "7D", "6S", "5H"))
    under = game.column(2)[-4].upper()
    played = legal(game, "KD>1")
    assert played == Played("KD>1", under, 5)
    assert game.column(1) == ["KD", "3C", "9S"]
    assert game.column(2)[-1] == under
    assert game.score == 5


def test_an_empty_column_takes_only_a_king() -> None:
    game = Game.from_position(make("C", "----", "", "*KD3C9S", "QSAH", "8C", "7D", "6S", "5H"))
    for card in ("QS", "3C", "9S", "AH", "8C", "7D", "6S", "5H"):
        refused(game, f"{card}>1", "an empty column takes only a king")
    # A king riding as a passenger does not make the group a king's.
    game = Game.from_position(make("C", "----", "", "*QHKS", "8C", "", "", "", ""))
    refused(game, "QH>1", "an empty column takes only a king")
    legal(game, "KS>1")


def test_option_e_an_empty_column_takes_any_card_or_group() -> None:
    text = make("CE", "----", "", "*QD5C", "8H", "9C", "TD", "JS", "QH")
    game = Game.from_position(text)
    moves = game.legal_moves()
    assert {"QD>1", "5C>1", "8H>1", "9C>1", "TD>1", "JS>1", "QH>1"} <= set(moves)
    under = game.column(2)[-3].upper()
    assert legal(game, "QD>1") == Played("QD>1", under, 5)
    assert game.column(1) == ["QD", "5C"]
    # The same without E.
    game = Game.from_position(text.replace("CE", "C", 1))
    for card in ("QD", "5C", "8H", "9C", "TD", "JS", "QH"):
        refused(game, f"{card}>1", "an empty column takes only a king")


# -- group limit -------------------------------------------------------------------------------

# Column 2 holds 21 face-up cards, the 7 of spades at the bottom and the 6 of diamonds next.
BIG = "7S6D" + "AS2S3S4S5S6S8S9STSJSQSKS" + "AH2H3H4H5H6H7H"


def test_option_g_refuses_a_group_of_21_and_allows_20() -> None:
    text = make("CG", "----", "8H", BIG, "*7C", "", "", "", "")
    game = Game.from_position(text)
    assert len(game.column(2)) == 21
    refused(game, "7S>1", "a move may carry at most 20 cards; this one carries 21")
    legal(game, "6D>3")
    assert len(game.column(3)) - game.face_down_count(3) == 21


def test_without_g_a_group_of_21_moves() -> None:
    game = Game.from_position(make("C", "----", "8H", BIG, "*7C", "", "", "", ""))
    legal(game, "7S>1")
    assert len(game.column(1)) == 22
    assert game.column(2) == []


def test_option_g_applies_to_empty_columns_too() -> None:
    game = Game.from_position(make("CEG", "----", "8H", BIG, "*7C", "", "", "", ""))
    refused(game, "7S>4", "a move may carry at most 20 cards; this one carries 21")
    legal(game, "6D>4")
    assert len(game.column(4)) == 20


def test_option_g_in_a_real_game() -> None:
    # Move 44 of the winning line carries 22 cards: fine in Classic, refused under G.
    game = Game.from_code(WIN_CODE.replace("-C-", "-CG-"))
    for move in WIN_MOVES[:43]:
        legal(game, move)
    refused(game, WIN_MOVES[43], "a move may carry at most 20 cards; this one carries 22")


# -- foundations ---------------------------------------------------------------------------


def test_foundations_build_up_in_suit_from_the_ace() -> None:
    game = Game.from_position(make("C", "----", "AS", "2S", "AH", "2H", "3H", "*KC", "AD"))
    refused(game, "2S>F", "the 2 of spades goes up only onto the ace of spades")
    assert legal(game, "AS>F") == Played("AS>F", None, 10)
    assert game.position().split(" ")[1] == "A---"
    legal(game, "2S>F")
    refused(game, "3H>F", "the 3 of hearts goes up only onto the 2 of hearts")
    legal(game, "AH>F")
    assert game.position().split(" ")[1] == "2A--"
    legal(game, "2H>F")
    legal(game, "3H>F")
    legal(game, "AD>F")
    assert game.position().split(" ")[1] == "23A-"
    assert game.foundation_heights() == (2, 3, 1, 0)
    assert game.cards_on_foundations == 6
    assert game.score == 60


def test_a_buried_ace_cannot_go_up() -> None:
    game = Game.from_position(make("C", "----", "AH5S", "*KS", "", "", "", "", ""))
    refused(game, "AH>F", "only the exposed card of a column can go to a foundation")
    game = Game.from_position(make("C", "----", "6D", "AH5S", "*KS", "", "", "", ""))
    legal(game, "5S>1")
    legal(game, "AH>F")


def test_a_foundation_move_uncovering_a_card_flips_it_for_15_points() -> None:
    game = Game.from_position(make("C", "----", "*AH", "KS", "", "", "", "", ""))
    under = game.column(1)[-2].upper()
    assert legal(game, "AH>F") == Played("AH>F", under, 15)
    assert game.score == 15


# -- take-back (option T) ----------------------------------------------------------------------


def test_option_t_takes_the_top_of_a_foundation_back_for_no_points() -> None:
    game = Game.from_position(make("CT", "9---", "TH", "*KD", "", "", "", "", ""))
    assert "9S>1" in game.legal_moves()
    assert legal(game, "9S>1") == Played("9S>1", None, 0)
    assert game.score == 0
    assert game.move_count == 1
    assert game.foundation_heights() == (8, 0, 0, 0)
    assert game.column(1) == ["TH", "9S"]
    # Putting it back up earns another 10.
    assert legal(game, "9S>F") == Played("9S>F", None, 10)
    assert game.score == 10
    assert game.foundation_heights() == (9, 0, 0, 0)
    legal(game, "9S>1")
    legal(game, "9S>F")
    assert game.score == 20
    assert game.move_count == 4


def test_without_t_a_foundation_card_stays_there() -> None:
    game = Game.from_position(make("C", "9---", "TH", "*KD", "", "", "", "", ""))
    refused(game, "9S>1", "a card on a foundation stays there (these rules have no take-back)")
    assert not any(m.startswith("9S>") for m in game.legal_moves())


def test_take_back_rules() -> None:
    game = Game.from_position(make("CT", "9---", "TS", "*KD", "JH", "", "", "", ""))
    refused(game, "9S>1", "a 9 of spades needs a red 10")
    refused(game, "9S>3", "a 9 of spades needs a red 10")
    refused(game, "9S>4", "an empty column takes only a king")
    refused(game, "8S>1", "only the top card of a foundation can come back")
    refused(game, "AS>4", "only the top card of a foundation can come back")
    refused(game, "9S>F", "the 9 of spades is already on its foundation")
    assert not any(m.startswith(("9S>", "8S>")) for m in game.legal_moves())


def test_take_back_of_a_king_to_an_empty_column() -> None:
    game = Game.from_position(make("CT", "K---", "*QH", "", "", "", "", "", ""))
    moves = set(game.legal_moves())
    assert {f"KS>{n}" for n in range(2, 8)} <= moves
    assert "KS>1" not in moves
    legal(game, "KS>4")
    assert game.column(4) == ["KS"]
    assert game.foundation_heights() == (12, 0, 0, 0)
    refused(game, "QS>5", "an empty column takes only a king")


def test_take_back_with_e_goes_to_any_empty_column() -> None:
    game = Game.from_position(make("CET", "9---", "*KD", "", "", "", "", "", ""))
    assert {f"9S>{n}" for n in range(2, 8)} <= set(game.legal_moves())
    legal(game, "9S>2")
    assert game.column(2) == ["9S"]


def test_take_back_follows_the_variant() -> None:
    game = Game.from_position(make("AT", "9---", "TH", "TS", "*KD", "", "", "", ""))
    refused(game, "9S>1", "a 9 of spades needs the 8 of spades or the 10 of spades")
    legal(game, "9S>2")
    assert game.column(2) == ["TS", "9S"]
    game = Game.from_position(make("RT", "9---", "TS", "*KD", "", "", "", "", ""))
    legal(game, "9S>1")


def test_undo_of_a_take_back() -> None:
    game = Game.from_position(make("CT", "9---", "TH", "*KD", "", "", "", "", ""))
    before = game.position()
    legal(game, "9S>1")
    assert game.undo() == "9S>1"
    assert game.position() == before
    assert game.score == 0
    assert game.move_count == 1


# -- flips, score, winning ---------------------------------------------------------------------


def test_flips_are_automatic_and_score_5() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    played = legal(game, "6H>7")
    assert played == Played("6H>7", "9S", 5)
    assert game.column(2) == ["9S"]
    assert game.face_down_count(2) == 0
    assert game.score == 5
    assert game.foundation_heights() == (0, 0, 0, 0)


def test_play_accepts_lenient_text_and_returns_canonical_text() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    assert game.play(" 6h > 7 ").move == "6H>7"
    game = Game.from_position(make("C", "----", "JS", "*TH", "", "", "", "", ""))
    assert game.play("10h>1").move == "TH>1"


@pytest.mark.parametrize("text", ["", "6H", "6H>8", "XX>1", "6H>7>1"])
def test_play_refuses_garbage_and_changes_nothing(text: str) -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    before = state(game)
    with pytest.raises(InvalidMoveError):
        game.play(text)
    assert state(game) == before


def test_the_winning_game_scores_625() -> None:
    assert WIN_CODE.startswith("YU1-C-")
    game = Game.from_code(WIN_CODE)
    flips = 0
    for n, move in enumerate(WIN_MOVES, start=1):
        assert not game.is_won()
        played = legal(game, move)
        assert played.move == move
        flips += played.turned_up is not None
        assert game.move_count == n
        assert game.score >= 0
    assert flips == 21
    assert game.is_won()
    assert not game.is_stuck()
    assert game.score == 625
    assert game.cards_on_foundations == 52
    assert game.foundation_heights() == (13, 13, 13, 13)
    assert game.position() == "C KKKK //////"
    assert game.legal_moves() == []


@pytest.mark.parametrize("rules", ["R", "M", "CE", "CT", "RET", "ME"])
def test_the_winning_line_wins_under_looser_rules_too(rules: str) -> None:
    # Classic builds are also Relaxed and Moosehide builds; E and T only add moves.
    game = Game.from_code(WIN_CODE.replace("-C-", f"-{rules}-"))
    for move in WIN_MOVES:
        legal(game, move)
    assert game.is_won()
    assert game.score == 625


def test_a_won_position() -> None:
    game = Game.from_position("C KKKK //////")
    assert game.is_won()
    assert not game.is_stuck()
    assert game.legal_moves() == []
    with pytest.raises(UndoError):
        game.undo()
    # Under take-back a king may still come down to any empty column.
    game = Game.from_position("CT KKKK //////")
    assert game.is_won()
    assert len(game.legal_moves()) == 4 * 7
    legal(game, "KH>3")
    assert not game.is_won()


@pytest.mark.parametrize("rules", ["C", "CT", "CET", "CEGT", "RT", "MET"])
def test_a_stuck_position(rules: str) -> None:
    # No ace exposed, no empty column, and no two exposed ranks adjacent: nothing can move.
    game = Game.from_position(make(rules, "----", "*2S", "2C", "4S", "4C", "6S", "6C", "8S"))
    assert game.legal_moves() == []
    assert game.is_stuck()
    assert not game.is_won()
    for card in ("2S", "2C", "4S", "4C", "6S", "6C", "8S"):
        for dest in (*"1234567", "F"):
            refused(game, f"{card}>{dest}")


def test_the_same_tops_are_not_stuck_under_relaxed_neighbours() -> None:
    game = Game.from_position(make("R", "----", "*2S", "3C", "4S", "4C", "6S", "6C", "8S"))
    assert set(game.legal_moves()) == {"2S>2", "3C>3", "3C>4"}
    assert not game.is_stuck()


# -- undo ----------------------------------------------------------------------------------------


def test_nothing_to_undo() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    with pytest.raises(UndoError, match="no move to undo"):
        game.undo()
    assert issubclass(UndoError, ValueError)
    legal(game, "6H>7")
    game.undo()
    with pytest.raises(UndoError):
        game.undo()


def test_undo_restores_cards_face_down_state_and_score_not_the_count() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    start = game.position()
    legal(game, "6H>7")
    assert game.score == 5
    assert game.can_undo()
    assert game.undo() == "6H>7"
    assert game.position() == start
    assert game.column(2)[0] == "9s"
    assert game.face_down_count(2) == 1
    assert game.score == 0
    assert game.move_count == 1
    assert not game.can_undo()
    # The move can be played again, and scores again.
    legal(game, "6H>7")
    assert game.score == 5
    assert game.move_count == 2


def test_undo_is_100_deep() -> None:
    assert UNDO_DEPTH == 100
    game = Game.from_code(WIN_CODE)
    history = []
    for move in WIN_MOVES:
        history.append((game.position(), game.score, move))
        legal(game, move)
    count = game.move_count
    assert count == len(WIN_MOVES) > UNDO_DEPTH
    for position, score, move in reversed(history[-UNDO_DEPTH:]):
        assert game.undo() == move
        assert game.position() == position
        assert game.score == score
        assert game.move_count == count
    assert not game.can_undo()
    with pytest.raises(UndoError):
        game.undo()
    # What is left is the position before the oldest move still remembered.
    assert game.position() == history[-UNDO_DEPTH][0]
    # Playing on from there works and can be undone again.
    legal(game, WIN_MOVES[len(WIN_MOVES) - UNDO_DEPTH])
    assert game.undo() == WIN_MOVES[len(WIN_MOVES) - UNDO_DEPTH]


def test_refused_moves_do_not_count() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    refused(game, "7H>1")
    refused(game, "9S>4")
    assert game.move_count == 0
    assert not game.can_undo()


def test_copy_is_independent() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    legal(game, "6H>7")
    twin = game.copy()
    assert state(twin) == state(game)
    assert twin.code == game.code
    legal(twin, "8C>6")
    assert twin.position() != game.position()
    assert game.undo() == "6H>7"
    assert twin.undo() == "8C>6"
    assert twin.undo() == "6H>7"
    assert twin.position() == game.position()


# -- reveal ---------------------------------------------------------------------------------


def test_a_game_that_knows_its_cards_checks_a_given_reveal() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    before = state(game)
    with pytest.raises(RevealError, match="9S"):
        game.play("6H>7", reveal="QH")
    with pytest.raises(RevealError):
        game.play("6H>7", reveal="nonsense")
    assert state(game) == before
    assert game.play("6H>7", reveal="9s").turned_up == "9S"
    game.undo()
    assert game.play("6H>7", reveal="9S").turned_up == "9S"


# -- views: games built with ?? cards -----------------------------------------------------------


def test_a_view_has_the_same_legal_moves_along_a_whole_game() -> None:
    game = Game.from_code(WIN_CODE)
    for move in WIN_MOVES:
        view = Game.from_position(game.view())
        assert sorted(view.legal_moves()) == sorted(game.legal_moves())
        assert view.is_stuck() == game.is_stuck()
        game.play(move)


@pytest.mark.parametrize("deal", [0, 1, 2, 1234, 99_999, 26**7 - 1])
@pytest.mark.parametrize("rules", ["C", "REG", "SGT", "AEGT", "MT"])
def test_a_view_of_a_deal_has_the_same_legal_moves(deal: int, rules: str) -> None:
    game = Game.from_deal(deal, rules)
    view = Game.from_position(game.view())
    assert sorted(view.legal_moves()) == sorted(game.legal_moves())


def test_following_a_game_from_its_view() -> None:
    game = Game.from_code(WIN_CODE)
    view = Game.from_position(game.view())
    for move in WIN_MOVES:
        played = game.play(move)
        assert view.play(move, reveal=played.turned_up) == played
        assert view.view() == game.view()
        assert view.position() == game.view()
        assert view.score == game.score
    assert view.is_won()
    assert view.score == 625


def test_a_view_needs_the_identity_of_a_card_it_turns_up() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    view = Game.from_position(game.view())
    before = state(view)
    with pytest.raises(RevealError, match="reveal"):
        view.play("6H>7")
    for wrong in ("7H", "6H", "nonsense", "??"):
        with pytest.raises(RevealError):
            view.play("6H>7", reveal=wrong)
    assert state(view) == before
    # A move that turns nothing up needs no reveal.
    assert view.play("9H>3") == game.copy().play("9H>3") == Played("9H>3", None, 0)
    played = view.play("6H>7", reveal="9S")
    assert played == Played("6H>7", "9S", 5)
    assert view.column(2) == ["9S"]


def test_a_reveal_cannot_name_a_card_on_a_foundation() -> None:
    text = make("C", "A---", "*2H", "3S", "", "", "", "", "")
    view = Game.from_position(Game.from_position(text).view())
    with pytest.raises(RevealError, match="already in view"):
        view.play("2H>2", reveal="AS")
    with pytest.raises(RevealError, match="already in view"):
        view.play("2H>2", reveal="3S")
    assert view.play("2H>2", reveal="KD").turned_up == "KD"


def test_undo_in_a_view_restores_the_view() -> None:
    game = Game.from_code("YU1-C-AAAAAAB")
    view = Game.from_position(game.view())
    start = view.view()
    view.play("6H>7", reveal="9S")
    assert view.undo() == "6H>7"
    assert view.view() == start
    assert view.score == 0
    assert view.face_down_count(2) == 1
    # The move can be followed again.
    assert view.play("6H>7", reveal="9S").turned_up == "9S"
