"""Glicko-2 over a race's pairwise games (server/domain/ratings.py, docs/ratings.md).

The 4-runner race, worked by hand (Glickman, "Example of the Glicko-2 system", 2013, steps
1 to 8; every intermediate rounded to 4 places, as the paper does). Runners before the race
(rating r, deviation RD, volatility 0.06) and their ranks:

    runner 1: r 1500, RD 200, rank 3      runner 2: r 1400, RD 30,  rank 4
    runner 3: r 1550, RD 100, rank 1      runner 4: r 1700, RD 300, rank 2

Step 2, the Glicko-2 scale (mu = (r - 1500) / 173.7178, phi = RD / 173.7178):
    1: mu  0.0000 phi 1.1513     2: mu -0.5756 phi 0.1727
    3: mu  0.2878 phi 0.5756     4: mu  1.1513 phi 1.7269
    g(phi_j) = 1 / sqrt(1 + 3 phi_j^2 / pi^2):  g1 0.8443, g2 0.9955, g3 0.9531, g4 0.7242

Pairwise scores by rank: runner 3 beat everyone; 4 beat 1 and 2; 1 beat 2.
Step 3 and 4, E = 1 / (1 + exp(-g_j (mu - mu_j))), v = 1 / sum g_j^2 E (1 - E),
sum = sum g_j (s_j - E), delta = v * sum:
    1: E vs 2 0.6395, vs 3 0.4318, vs 4 0.3028; v 1.7790; sum -0.2720; delta -0.4839
    2: E vs 1 0.3808, vs 3 0.3051, vs 4 0.2226; v 2.2150; sum -0.7736; delta -1.7134
    3: E vs 1 0.5605, vs 2 0.7026, vs 4 0.3486; v 1.9929; sum  1.1390; delta  2.2699
    4: E vs 1 0.7255, vs 2 0.8480, vs 3 0.6949; v 2.1631; sum -0.2793; delta -0.6041
Step 5, the new volatility (Illinois iteration, tau 0.5): sigma' 0.059996, 0.060002,
0.060007, 0.059998.
Step 6, phi* = sqrt(phi^2 + sigma'^2); step 7, phi' = 1 / sqrt(1 / phi*^2 + 1 / v),
mu' = mu + phi'^2 * sum; step 8, r' = 173.7178 mu' + 1500, RD' = 173.7178 phi':
    1: phi* 1.1529  phi' 0.8722  mu' -0.2069  ->  r' 1464.06  RD' 151.52
    2: phi* 0.1828  phi' 0.1815  mu' -0.6011  ->  r' 1395.58  RD'  31.52
    3: phi* 0.5788  phi' 0.5355  mu'  0.6144  ->  r' 1606.74  RD'  93.03
    4: phi* 1.7280  phi' 1.1200  mu'  0.8010  ->  r' 1639.14  RD' 194.56
Runner 1's games are Glickman's own example (1464.06, 151.52, 0.05999 in the paper).
"""

from __future__ import annotations

import math

import pytest

from server.domain.ratings import (
    DEFAULT_DEVIATION,
    DEFAULT_RATING,
    PROVISIONAL_RACES,
    Game,
    Rating,
    Runner,
    glicko2,
    is_provisional,
    pairwise,
    rate_race,
)

RUNNERS = [
    Runner(1, Rating(1500, 200), 3),
    Runner(2, Rating(1400, 30), 4),
    Runner(3, Rating(1550, 100), 1),
    Runner(4, Rating(1700, 300), 2),
]

#: The docstring's hand computation: (mu, phi, v, sum, sigma') for each runner.
HAND = {
    1: (0.0000, 1.1513, 1.7790, -0.2720, 0.059996),
    2: (-0.5756, 0.1727, 2.2150, -0.7736, 0.060002),
    3: (0.2878, 0.5756, 1.9929, 1.1390, 0.060007),
    4: (1.1513, 1.7269, 2.1631, -0.2793, 0.059998),
}
#: Its results: (r', RD', sigma').
HAND_AFTER = {
    1: (1464.06, 151.52, 0.059996),
    2: (1395.58, 31.52, 0.060002),
    3: (1606.74, 93.03, 0.060007),
    4: (1639.14, 194.56, 0.059998),
}


def test_a_four_runner_race_against_the_hand_computation() -> None:
    after = {r.player_id: r.after for r in rate_race(RUNNERS)}
    for pid, (r, rd, sigma) in HAND_AFTER.items():
        assert after[pid].rating == pytest.approx(r, abs=0.01)
        assert after[pid].deviation == pytest.approx(rd, abs=0.01)
        assert after[pid].volatility == pytest.approx(sigma, abs=0.000001)


def test_the_hand_computations_steps_6_to_8_give_its_results() -> None:
    """The docstring's rounded intermediates, carried through steps 6 to 8 by hand,
    land within rounding of the module's figures."""
    after = {r.player_id: r.after for r in rate_race(RUNNERS)}
    for pid, (mu, phi, v, total, sigma) in HAND.items():
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        new_phi = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
        new_mu = mu + new_phi**2 * total
        assert 173.7178 * new_mu + 1500 == pytest.approx(after[pid].rating, abs=0.1)
        assert 173.7178 * new_phi == pytest.approx(after[pid].deviation, abs=0.1)


def test_glickmans_published_example() -> None:
    """Glickman's paper: 1500/200 beats 1400/30, loses to 1550/100 and 1700/300."""
    games = [Game(2, 1400, 30, 1.0), Game(3, 1550, 100, 0.0), Game(4, 1700, 300, 0.0)]
    after = glicko2(Rating(1500, 200, 0.06), games)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_pairwise_scores_follow_the_ranks_and_ties_draw() -> None:
    runners = [
        Runner(1, Rating(), 1),
        Runner(2, Rating(), 2),
        Runner(3, Rating(), 2),
    ]
    games = pairwise(runners)
    assert [(g.opponent, g.score) for g in games[1]] == [(2, 1.0), (3, 1.0)]
    assert [(g.opponent, g.score) for g in games[2]] == [(1, 0.0), (3, 0.5)]
    assert [(g.opponent, g.score) for g in games[3]] == [(1, 0.0), (2, 0.5)]


def test_the_order_runners_are_listed_in_changes_nothing() -> None:
    forward = {r.player_id: r.after for r in rate_race(RUNNERS)}
    backward = {r.player_id: r.after for r in rate_race(list(reversed(RUNNERS)))}
    assert forward == backward


def test_a_race_alone_changes_nothing() -> None:
    [only] = rate_race([Runner(7, Rating(), 1)])
    assert only.after == only.before == Rating(DEFAULT_RATING, DEFAULT_DEVIATION)


def test_two_new_players_move_symmetrically() -> None:
    won, lost = rate_race([Runner(1, Rating(), 1), Runner(2, Rating(), 2)])
    assert won.after.rating > DEFAULT_RATING > lost.after.rating
    assert won.after.rating - DEFAULT_RATING == pytest.approx(DEFAULT_RATING - lost.after.rating)


def test_provisional_until_enough_races() -> None:
    """docs/ratings.md: a new player's deviation after PROVISIONAL_RACES two-runner races
    against settled players (1500, RD 60), won and lost in turn, is below 110."""
    assert is_provisional(PROVISIONAL_RACES - 1)
    assert not is_provisional(PROVISIONAL_RACES)
    r = Rating()
    for i in range(PROVISIONAL_RACES):
        r = glicko2(r, [Game(9, 1500, 60, 1.0 if i % 2 == 0 else 0.0)])
    assert r.deviation < 110
