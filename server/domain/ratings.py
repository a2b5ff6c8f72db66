"""Ratings: Glicko-2, a race counted as the pairwise games of its runners (docs/ratings.md).

Pure: no clock, no database. ``rate_race`` takes every runner's rating before the race and
their ranks, and returns every runner's rating after it; storage calls it once per rated
result, in the transaction that stores the result, and ``yukon db recompute-ratings``
calls it again over every stored rated race to prove the stored numbers come back.

A race of n runners is one rating period in which each runner played n - 1 games, one
against each other runner: a win against those ranked below, a loss against those ranked
above, a draw against those sharing the rank (the ranks of docs/protocol.md 4.12:
unhinted wins by time, hinted wins, then the rest by cards home, score and the longer
time). Every runner is rated against the others' ratings *before* the race, so the order
in which runners are listed changes nothing. This is Glicko-2's own multi-game period,
the way lichess and others extend it beyond two players (docs/ratings.md says why).

Floating point only, the same operations in the same order every time: Python's floats
are IEEE doubles everywhere, so a recomputation gives the same bits, which the database's
double columns keep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RATING",
    "DEFAULT_DEVIATION",
    "DEFAULT_VOLATILITY",
    "TAU",
    "PROVISIONAL_RACES",
    "Rating",
    "Runner",
    "Game",
    "Rated",
    "Counted",
    "rate_race",
    "glicko2",
    "pairwise",
    "is_provisional",
]

#: Glicko's defaults for a player who has no rating yet (Glickman, "Example of the
#: Glicko-2 system", 2013): the quick-race pool uses them for an unrated player too.
DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
#: The system constant: how much the volatility may change in a period. Glickman suggests
#: 0.3 to 1.2; 0.5 is the middle ground (a race is a short period, few games in it).
TAU = 0.5
#: Glicko-2's scale factor between the Glicko scale and its own (173.7178 = 400 / ln 10).
SCALE = 173.7178
#: The volatility iteration stops when the bracket is this narrow (Glickman's value).
EPSILON = 0.000001
#: A rating is provisional until the player has finished this many rated races: after 10
#: two-runner races the deviation of a new player is about 110, lichess's line between a
#: provisional rating and a settled one (docs/ratings.md works it out).
PROVISIONAL_RACES = 10


@dataclass(frozen=True, slots=True)
class Rating:
    """A rating on the Glicko scale: rating, deviation, volatility."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY


@dataclass(frozen=True, slots=True)
class Runner:
    """One runner of a rated race: who, their rating before it, and their rank in it."""

    player_id: int
    before: Rating
    rank: int
    #: A BOT account (docs/bots.md): its games move a human's rating by half.
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Game:
    """One pairwise game of a race, from one runner's side: the opponent, the opponent's
    rating and deviation before the race, and the score (1 win, 0.5 draw, 0 loss)."""

    opponent: int
    rating: float
    deviation: float
    score: float


@dataclass(frozen=True, slots=True)
class Rated:
    """A runner's rating after the race, with what it was computed from."""

    player_id: int
    before: Rating
    after: Rating
    games: tuple[Game, ...]


def is_provisional(races: int) -> bool:
    """Is a rating from ``races`` rated races still provisional?"""
    return races < PROVISIONAL_RACES


#: ``(lower id, higher id) -> "rank" | "draw"``: the pairs of a race that count and how
#: (``server.domain.pairs`` decides); None: every pair counts, by rank.
Counted = Mapping[tuple[int, int], str]


def pairwise(
    runners: Sequence[Runner], counted: Counted | None = None
) -> dict[int, tuple[Game, ...]]:
    """Each runner's games against every other runner, by rank (lower is better), in the
    order of the opponents' ids: the sums then add in one order whatever order the
    runners come in, so a recomputation gives the same bits. With ``counted``, only the
    pairs in it are games, a ``"draw"`` pair scored 0.5 whatever the ranks."""
    games: dict[int, tuple[Game, ...]] = {}
    runners = sorted(runners, key=lambda r: r.player_id)
    for me in runners:
        mine = []
        for other in runners:
            if other.player_id == me.player_id:
                continue
            how = "rank"
            if counted is not None:
                key = (min(me.player_id, other.player_id), max(me.player_id, other.player_id))
                if key not in counted:
                    continue
                how = counted[key]
            if how == "draw" or me.rank == other.rank:
                score = 0.5
            else:
                score = 1.0 if me.rank < other.rank else 0.0
            mine.append(
                Game(
                    opponent=other.player_id,
                    rating=other.before.rating,
                    deviation=other.before.deviation,
                    score=score,
                )
            )
        games[me.player_id] = tuple(mine)
    return games


def rate_race(runners: Sequence[Runner], counted: Counted | None = None) -> list[Rated]:
    """Every runner's rating after a race (in the order given); a race of fewer than two
    runners changes nothing (there is nobody to have played), and neither does it for a
    runner none of whose pairs counts (``counted``): their rating stays as it was, with
    no games (not a period without games, which would widen the deviation)."""
    if len(runners) < 2:
        return [Rated(r.player_id, r.before, r.before, ()) for r in runners]
    games = pairwise(runners, counted)
    bots = {r.player_id for r in runners if r.bot}
    return [
        Rated(
            r.player_id,
            r.before,
            _after(r, games[r.player_id], bots) if games[r.player_id] else r.before,
            games[r.player_id],
        )
        for r in runners
    ]


def _after(runner: Runner, games: Sequence[Game], bots: set[int]) -> Rating:
    """The runner's rating after their games. A human's games against BOT accounts move
    them by half (docs/ratings.md): halfway from the rating their games against humans
    alone give to the one all their games give. A bot's own rating moves in full."""
    full = glicko2(runner.before, games)
    if runner.bot or not any(g.opponent in bots for g in games):
        return full
    humans = glicko2(runner.before, [g for g in games if g.opponent not in bots])
    return Rating(
        (humans.rating + full.rating) / 2,
        (humans.deviation + full.deviation) / 2,
        (humans.volatility + full.volatility) / 2,
    )


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def glicko2(player: Rating, games: Sequence[Game]) -> Rating:
    """One Glicko-2 rating period (Glickman 2013, steps 2 to 8) for one player.

    With no games only the deviation grows (step 6). The volatility's new value is found
    by the Illinois algorithm (step 5.1 to 5.5 of the paper)."""
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.deviation / SCALE
    sigma = player.volatility
    if not games:
        return Rating(
            player.rating, min(math.sqrt(phi * phi + sigma * sigma) * SCALE, 350.0), sigma
        )
    # Step 3: the estimated variance v; step 4: the estimated improvement delta.
    inv_v = 0.0
    total = 0.0
    for game in games:
        mu_j = (game.rating - DEFAULT_RATING) / SCALE
        phi_j = game.deviation / SCALE
        g = _g(phi_j)
        e = _e(mu, mu_j, phi_j)
        inv_v += g * g * e * (1.0 - e)
        total += g * (game.score - e)
    v = 1.0 / inv_v
    delta = v * total
    # Step 5: the new volatility.
    a = math.log(sigma * sigma)
    tau2 = TAU * TAU

    def f(x: float) -> float:
        ex = math.exp(x)
        d = phi * phi + v + ex
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / tau2

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * TAU) < 0:
            k += 1
        big_b = a - k * TAU
    f_a = f(big_a)
    f_b = f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2.0
        big_b, f_b = big_c, f_c
    new_sigma = math.exp(big_a / 2.0)
    # Step 6: the pre-period deviation; step 7: the new deviation and rating.
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * total
    # Step 8: back to the Glicko scale.
    return Rating(new_mu * SCALE + DEFAULT_RATING, new_phi * SCALE, new_sigma)
