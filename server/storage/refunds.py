"""Rating refunds for the opponents of an ``engine`` or ``boost`` mark (issue 40, item 5).

Pure arithmetic, no database: ``ModerationStore.refunds`` reads the inputs (the marked
player's rated races and each opponent's stored ``ratings`` row in them, the opponents'
current ratings and peaks) and this module says what each opponent gets back;
``moderation_refunds`` applies it in the mark's transaction (``rating_refunds`` rows, the
new current ratings) and takes it back in the unmark's (``taken_back``, below).

The rules, as lichess refunds the victims of a cheater:

- the marked player's **last 40 rated races of the 5 days** before the mark count;
- in each, an opponent gets back what **the game against the marked player** cost them,
  **at most 150 points** a race (a game that gained them points gives nothing back);
- an opponent's refunds together never take their rating **above their peak + 20**
  (their highest rating ever, before or after any race, or after an earlier refund);
- an opponent who holds an engine or boost mark of their own gets nothing, and a race
  already refunded to an opponent (by an earlier mark of the same player) is not
  refunded twice.

What one game of a race cost: a race is rated as Glicko-2's multi-game period (docs/
ratings.md), in which a runner's rating moves by ``SCALE · φ′² · Σ g(φⱼ)(sⱼ − Eⱼ)``, a
sum over the runner's games; the game against the marked player is one term of that sum,
``SCALE · φ′² · g(φⱼ)(sⱼ − Eⱼ)``, computed from the stored row alone (the rating and
deviation before, the deviation after, and the game's opponent figures and score). In a
two-runner race it is the whole change, as in lichess.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..domain.ratings import DEFAULT_RATING, SCALE, Game

__all__ = [
    "REFUND_RACES",
    "REFUND_DAYS",
    "REFUND_CAP",
    "PEAK_MARGIN",
    "OpponentRow",
    "MarkedRace",
    "Opponent",
    "Refund",
    "game_cost",
    "plan_refunds",
    "taken_back",
]

#: The marked player's newest rated races that count.
REFUND_RACES = 40
#: ... of the days before the mark.
REFUND_DAYS = 5
#: The most points one race gives back to one opponent.
REFUND_CAP = 150.0
#: A refund never takes a rating above its holder's peak plus this.
PEAK_MARGIN = 20.0


@dataclass(frozen=True, slots=True)
class OpponentRow:
    """An opponent's stored rating change in one of the marked player's races (their
    ``ratings`` row): what the cost of the game against the marked player comes from."""

    player_id: int
    rating_before: float
    deviation_before: float
    #: The deviation after the race (φ′ of the race's rating period).
    deviation_after: float
    #: Every pairwise game of the race, from this opponent's side.
    games: tuple[Game, ...]


@dataclass(frozen=True, slots=True)
class MarkedRace:
    """One rated race of the marked player: its id, when it was rated (wall seconds), and
    every other runner's row."""

    race_id: int
    rated_at: float
    opponents: tuple[OpponentRow, ...]


@dataclass(frozen=True, slots=True)
class Opponent:
    """An opponent's rating now, and the highest it ever was."""

    rating: float
    peak: float


@dataclass(frozen=True, slots=True)
class Refund:
    """Points given back to one opponent for one race, and their rating after it (the
    refunds of one opponent apply in the order of the races, oldest first)."""

    player_id: int
    race_id: int
    #: What the race's game against the marked player cost them (before any cap).
    cost: float
    points: float
    rating_before: float
    rating_after: float


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def game_cost(row: OpponentRow, marked: int) -> float:
    """The rating points the game against ``marked`` took from the row's player in that
    race (negative: it gave them points); 0.0 if they did not play ``marked``."""
    game = next((g for g in row.games if g.opponent == marked), None)
    if game is None:
        return 0.0
    mu = (row.rating_before - DEFAULT_RATING) / SCALE
    mu_j = (game.rating - DEFAULT_RATING) / SCALE
    phi_j = game.deviation / SCALE
    new_phi = row.deviation_after / SCALE
    g = _g(phi_j)
    expected = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
    return -(SCALE * new_phi * new_phi * g * (game.score - expected))


def plan_refunds(
    *,
    marked: int,
    races: Sequence[MarkedRace],
    opponents: Mapping[int, Opponent],
    now: float,
    excluded: Collection[int] = (),
    refunded: Collection[tuple[int, int]] = (),
) -> list[Refund]:
    """What a mark of ``marked`` at ``now`` (wall seconds) gives back, by the rules of
    this module's docstring: one ``Refund`` per opponent and race that gives points, in
    the order they apply (by opponent id, then race, oldest first).

    ``races``: the marked player's rated races (any order, any age: those that count
    are chosen here); ``opponents``: the current rating and peak of each opponent in
    them; ``excluded``: opponents who get nothing (their own engine or boost mark);
    ``refunded``: ``(opponent, race)`` pairs refunded before."""
    since = now - REFUND_DAYS * 86_400
    recent = [r for r in races if since <= r.rated_at <= now]
    recent.sort(key=lambda r: (r.rated_at, r.race_id))
    counted = recent[-REFUND_RACES:]
    done = set(refunded)
    due: dict[int, list[tuple[int, float]]] = {}
    for race in counted:
        for row in race.opponents:
            pid = row.player_id
            if pid == marked or pid in excluded or (pid, race.race_id) in done:
                continue
            cost = game_cost(row, marked)
            if cost > 0:
                due.setdefault(pid, []).append((race.race_id, cost))
    out: list[Refund] = []
    for pid in sorted(due):
        now_rating = opponents[pid].rating
        ceiling = opponents[pid].peak + PEAK_MARGIN
        for race_id, cost in due[pid]:
            points = min(cost, REFUND_CAP, max(0.0, ceiling - now_rating))
            if points <= 0:
                break
            out.append(Refund(pid, race_id, cost, points, now_rating, now_rating + points))
            now_rating += points
    return out


def taken_back(rating: float, points: float, given_on: float, gave: float) -> float:
    """A rating with a refund of ``points`` taken back: the rating it was given on, to
    the last bit, if it is still what the refund made it (``gave``), else ``points``
    lower (floating point: ``(x + p) - p`` need not be ``x``)."""
    return given_on if rating == gave else rating - points
