"""The quick-race pool: who waits, with what rating, since when; which rooms to form.

A sans-I/O state machine (docs/architecture.md): ``enter``, ``leave`` and ``match`` take
plain values and the time, and ``match`` returns the groups to seat, each already out of
the pool. It knows nothing of connections, rooms, nodes or the database: ratings come in
as numbers (the hub's ``Quick`` part asks storage for them), so a test drives it with a
fake clock and real ratings, and the cluster's pooler runs the very same code over the
entries it keeps in Redis (docs/cluster.md, "The quick-race pool").

Matching (docs/protocol.md 4.26). Each waiting player accepts opponents within a rating
*band* around their own that widens with waiting: ``band_base + band_per_s * waited``,
and without limit once they have waited ``max_wait_s``. At each ``match`` the longest
waiting player goes first (the most urgent), taking the players within *their* band,
nearest rating first:

- a full room (``max_players``) forms at once;
- a smaller one (``min_players`` or more) once the first player has waited ``fill_s``:
  a race soon beats a fuller room later;
- at ``max_wait_s`` the band has no limit, so anyone waiting with them races with them:
  nobody waits past ``max_wait_s`` while somebody else waits too.

A player alone waits on: bots are not players, the pool never makes one up. Players meet
only their own *lane*: accounts with a mark in force wait apart and race only each other.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "UNLIMITED_BAND",
    "Group",
    "Pool",
    "PoolConfig",
    "PoolStatus",
    "Waiter",
    "usual_window",
]

#: The ``band`` reported once a player's band has no limit (any rating matches).
UNLIMITED_BAND = 9999


@dataclass(frozen=True)
class PoolConfig:
    """The operator's numbers (``yukon serve --quick-min --quick-max --quick-wait``)."""

    min_players: int = 2
    max_players: int = 4
    #: Nobody waits longer than this for a race while another player waits too.
    max_wait_s: float = 20.0
    #: A room smaller than ``max_players`` forms once its first player waited this long.
    fill_s: float = 6.0
    #: The rating half-width a player accepts on entering, and how fast it widens.
    band_base: float = 75.0
    band_per_s: float = 25.0

    def __post_init__(self) -> None:
        if not 2 <= self.min_players <= self.max_players <= 8:
            raise ValueError("quick race rooms need 2 <= min <= max <= 8 players")
        if self.max_wait_s <= 0 or self.fill_s < 0 or self.band_base < 0 or self.band_per_s < 0:
            raise ValueError("quick race times and bands must not be negative")

    def band(self, waited_s: float) -> float:
        """The rating half-width accepted after waiting ``waited_s`` seconds."""
        if waited_s >= self.max_wait_s:
            return float("inf")
        return self.band_base + self.band_per_s * max(0.0, waited_s)


@dataclass(frozen=True, slots=True)
class Waiter:
    """One player in the pool: who, their rating, since when (the pool's clock)."""

    player: int
    rating: float
    joined: float
    #: Who may meet whom: "" the players, "marked" those with a mark in force (engine,
    #: boost, alt: they meet only each other, docs/fairplay.md). Never across lanes.
    lane: str = ""


@dataclass(frozen=True, slots=True)
class Group:
    """Players to seat in one new room, the longest waiting first."""

    players: tuple[Waiter, ...]

    @property
    def spread(self) -> float:
        """The gap between the highest and the lowest rating in the room."""
        ratings = [w.rating for w in self.players]
        return max(ratings) - min(ratings)


@dataclass(frozen=True, slots=True)
class PoolStatus:
    """What a waiting player is told (``pool``): how many wait, how long, the band."""

    waiting: int
    waited_ms: int
    max_wait_ms: int
    band: int


@dataclass
class Pool:
    """The waiting players and the matching rule (see the module docstring)."""

    config: PoolConfig = field(default_factory=PoolConfig)
    _waiters: dict[int, Waiter] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._waiters)

    def __contains__(self, player: object) -> bool:
        return player in self._waiters

    def waiters(self) -> list[Waiter]:
        """Everyone waiting, the longest waiting first."""
        return sorted(self._waiters.values(), key=lambda w: (w.joined, w.player))

    def enter(self, player: int, rating: float, now: float, lane: str = "") -> Waiter:
        """``player`` waits from ``now`` in ``lane``; entering again keeps their place (and
        time), in the lane given now (a mark made while they wait moves them)."""
        w = self._waiters.get(player)
        if w is None:
            w = self._waiters[player] = Waiter(player, rating, now, lane)
        elif w.lane != lane:
            w = self._waiters[player] = Waiter(player, w.rating, w.joined, lane)
        return w

    def leave(self, player: int) -> bool:
        """``player`` no longer waits; False if they were not waiting."""
        return self._waiters.pop(player, None) is not None

    def status(self, player: int, now: float, *, waiting: int | None = None) -> PoolStatus:
        """What ``player`` is told; ``waiting``: the count to show (a cluster's, whole)."""
        w = self._waiters.get(player)
        waited = max(0.0, now - w.joined) if w is not None else 0.0
        band = self.config.band(waited)
        return PoolStatus(
            waiting=len(self._waiters) if waiting is None else waiting,
            waited_ms=int(waited * 1000),
            max_wait_ms=int(self.config.max_wait_s * 1000),
            band=UNLIMITED_BAND if band == float("inf") else min(UNLIMITED_BAND, round(band)),
        )

    def match(self, now: float) -> list[Group]:
        """The rooms to form now; their players leave the pool (see the module docstring)."""
        groups = match(self._waiters.values(), self.config, now)
        for g in groups:
            for w in g.players:
                del self._waiters[w.player]
        return groups


def match(waiters: Iterable[Waiter], config: PoolConfig, now: float) -> list[Group]:
    """The groups to form from ``waiters`` at ``now`` (pure: the cluster's pooler calls it
    on the entries it read from Redis). The longest waiting player picks first."""
    by_age = sorted(waiters, key=lambda w: (w.joined, w.player))
    by_rating = sorted(by_age, key=lambda w: (w.rating, w.joined, w.player))
    ratings = [w.rating for w in by_rating]
    taken: set[int] = set()
    groups: list[Group] = []
    for anchor in by_age:
        if anchor.player in taken:
            continue
        waited = now - anchor.joined
        band = config.band(waited)
        lo = bisect.bisect_left(ratings, anchor.rating - band)
        hi = bisect.bisect_right(ratings, anchor.rating + band)
        near = [
            w
            for w in by_rating[lo:hi]
            if w.player not in taken and w is not anchor and w.lane == anchor.lane
        ]
        if len(near) + 1 < config.min_players:
            continue
        full = len(near) + 1 >= config.max_players
        if not full and waited < config.fill_s:
            continue
        near.sort(key=lambda w: (abs(w.rating - anchor.rating), w.joined, w.player))
        chosen = (anchor, *near[: config.max_players - 1])
        taken.update(w.player for w in chosen)
        groups.append(Group(tuple(sorted(chosen, key=lambda w: (w.joined, w.player)))))
    return groups


def usual_window(hours: Sequence[int], *, least: int = 20, share: float = 0.5) -> str | None:
    """When others usually play, from the UTC hours races started at (``hours[h]``: how
    many stored races started in hour ``h``): the shortest run of consecutive hours (it
    may wrap past midnight) holding ``share`` of them, as "most races start 18:00-22:00
    UTC"; None with fewer than ``least`` races, too few to say anything true."""
    if len(hours) != 24:
        raise ValueError("24 hourly counts expected")
    total = sum(hours)
    if total < least:
        return None
    need = share * total
    for length in range(1, 25):
        best: tuple[int, int] | None = None
        for start in range(24):
            n = sum(hours[(start + i) % 24] for i in range(length))
            if n >= need and (best is None or n > best[1]):
                best = (start, n)
        if best is not None:
            start = best[0]
            end = (start + length) % 24
            if length == 24:
                return "races start at every hour of the day"
            return f"most races start {start:02d}:00-{end:02d}:00 UTC"
    return None  # pragma: no cover: length 24 always holds everything
