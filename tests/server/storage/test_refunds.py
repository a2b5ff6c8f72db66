"""The refund arithmetic of an engine or boost mark (server/storage/refunds.py), pure: the
cost of one game from a race rated by ``server.domain.ratings``, the cap per race, the ceiling of
peak + 20, the last 40 races of 5 days, and who gets nothing."""

from __future__ import annotations

import itertools

import pytest

from server.domain.ratings import Rated, Rating, Runner, rate_race
from server.storage.refunds import (
    PEAK_MARGIN,
    REFUND_CAP,
    REFUND_DAYS,
    REFUND_RACES,
    MarkedRace,
    Opponent,
    OpponentRow,
    game_cost,
    plan_refunds,
)

CHEAT = 1
NOW = 1_800_000_000.0
DAY = 86_400.0


def row(rated: Rated) -> OpponentRow:
    return OpponentRow(
        rated.player_id,
        rated.before.rating,
        rated.before.deviation,
        rated.after.deviation,
        rated.games,
    )


def race(race_id: int, at: float, *runners: Runner) -> MarkedRace:
    """A race rated by the real system, as the store would read it back for CHEAT."""
    rated = rate_race(runners)
    return MarkedRace(race_id, at, tuple(row(r) for r in rated if r.player_id != CHEAT))


def settled(pid: int, rank: int, rating: float = 1500.0) -> Runner:
    return Runner(pid, Rating(rating, 60.0, 0.06), rank)


def test_a_two_runner_races_cost_is_the_whole_loss() -> None:
    rated = rate_race([settled(CHEAT, 1, 1600.0), settled(2, 2, 1550.0)])
    victim = next(r for r in rated if r.player_id == 2)
    loss = victim.before.rating - victim.after.rating
    assert loss > 0
    assert game_cost(row(victim), CHEAT) == pytest.approx(loss, abs=1e-9)
    # And the winner's "cost" is a gain: negative.
    winner = next(r for r in rated if r.player_id == CHEAT)
    assert game_cost(row(winner), 2) == pytest.approx(winner.before.rating - winner.after.rating)


def test_a_races_games_add_up_to_the_change_and_only_the_marked_ones_counts() -> None:
    """Four runners: each one's change is the sum of its games' terms, so the game
    against the marked player is one part of it, and the rest is not refunded."""
    runners = [settled(CHEAT, 1), settled(2, 3, 1450.0), settled(3, 2, 1700.0), settled(4, 4)]
    rated = rate_race(runners)
    for r in rated:
        total = sum(game_cost(row(r), g.opponent) for g in r.games)
        assert total == pytest.approx(r.before.rating - r.after.rating, abs=1e-9)
    victim = next(r for r in rated if r.player_id == 2)  # lost to 1 and 3, beat 4
    part = game_cost(row(victim), CHEAT)
    assert part > 0 and game_cost(row(victim), 3) > 0 > game_cost(row(victim), 4)
    assert game_cost(row(victim), 99) == 0.0  # never played 99


def test_each_race_gives_back_at_most_the_cap() -> None:
    """Two new players (1500, RD 350): the loser loses about 162, more than the cap."""
    marked = race(10, NOW - 60, Runner(CHEAT, Rating(), 1), Runner(2, Rating(), 2))
    cost = game_cost(marked.opponents[0], CHEAT)
    assert cost > REFUND_CAP
    [refund] = plan_refunds(
        marked=CHEAT, races=[marked], opponents={2: Opponent(1338.0, 1500.0)}, now=NOW
    )
    assert (refund.player_id, refund.race_id) == (2, 10)
    assert refund.cost == cost and refund.points == REFUND_CAP
    assert (refund.rating_before, refund.rating_after) == (1338.0, 1338.0 + REFUND_CAP)


def test_refunds_never_take_a_rating_above_its_peak_plus_20() -> None:
    races = [
        race(n, NOW - 3600 * n, settled(CHEAT, 1), settled(2, 2, 1500.0 - n)) for n in (1, 2, 3)
    ]
    costs = {r.race_id: game_cost(r.opponents[0], CHEAT) for r in races}
    # Room for the two oldest races' costs and part of the newest's.
    rating, peak = 1450.0, 1450.0 + costs[3] + costs[2] + costs[1] / 2 - PEAK_MARGIN
    got = plan_refunds(marked=CHEAT, races=races, opponents={2: Opponent(rating, peak)}, now=NOW)
    assert [r.race_id for r in got] == [3, 2, 1]  # oldest first
    assert [r.points for r in got[:2]] == [costs[3], costs[2]]
    assert got[2].points == pytest.approx(costs[1] / 2)
    assert got[-1].rating_after == pytest.approx(peak + PEAK_MARGIN)
    for before, after in itertools.pairwise(got):
        assert after.rating_before == before.rating_after
    # At the ceiling already: nothing.
    at_top = Opponent(peak + PEAK_MARGIN, peak)
    assert plan_refunds(marked=CHEAT, races=races, opponents={2: at_top}, now=NOW) == []


def test_only_the_last_40_rated_races_of_5_days_count() -> None:
    old = race(1, NOW - REFUND_DAYS * DAY - 1, settled(CHEAT, 1), settled(2, 2))
    edge = race(2, NOW - REFUND_DAYS * DAY, settled(CHEAT, 1), settled(3, 2))
    recent = [
        race(100 + n, NOW - 60 * (50 - n), settled(CHEAT, 1), settled(4, 2)) for n in range(45)
    ]
    later = race(999, NOW + 1, settled(CHEAT, 1), settled(5, 2))  # after the mark
    opponents = {pid: Opponent(1400.0, 2000.0) for pid in (2, 3, 4, 5)}
    got = plan_refunds(
        marked=CHEAT, races=[old, *recent, edge, later], opponents=opponents, now=NOW
    )
    assert {r.race_id for r in got} == {100 + n for n in range(5, 45)}
    assert len(got) == REFUND_RACES
    # With fewer recent races, the one at the edge of the 5 days counts.
    got = plan_refunds(marked=CHEAT, races=[old, edge], opponents=opponents, now=NOW)
    assert [(r.player_id, r.race_id) for r in got] == [(3, 2)]


def test_a_game_won_or_drawn_against_the_marked_player_gives_nothing_back() -> None:
    beaten = race(1, NOW - 60, settled(CHEAT, 2), settled(2, 1))
    drawn_higher = race(2, NOW - 60, settled(CHEAT, 1), settled(3, 1, 1800.0))
    opponents = {2: Opponent(1500.0, 1600.0), 3: Opponent(1700.0, 1800.0)}
    # A draw against a weaker player costs the stronger one points: that is refunded.
    got = plan_refunds(marked=CHEAT, races=[beaten, drawn_higher], opponents=opponents, now=NOW)
    assert [(r.player_id, r.race_id) for r in got] == [(3, 2)]


def test_marked_opponents_and_races_refunded_before_get_nothing() -> None:
    races = [race(n, NOW - 60 * n, settled(CHEAT, 1), settled(2, 3), settled(3, 2)) for n in (1, 2)]
    opponents = {2: Opponent(1400.0, 1600.0), 3: Opponent(1400.0, 1600.0)}
    everyone = plan_refunds(marked=CHEAT, races=races, opponents=opponents, now=NOW)
    assert {(r.player_id, r.race_id) for r in everyone} == {(2, 1), (2, 2), (3, 1), (3, 2)}
    got = plan_refunds(
        marked=CHEAT, races=races, opponents=opponents, now=NOW, excluded={3}, refunded={(2, 2)}
    )
    assert [(r.player_id, r.race_id) for r in got] == [(2, 1)]
