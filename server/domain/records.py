"""The records of a race that the domain, storage and the hub share: a finished race and
its results, a running race and its actions as the journal keeps them, rating changes, a
player's standing, a stored run raced as a ghost.

They sit apart from the hub's effects (``server.rooms.effects``) so that storage depends on
what a race *is*, not on the vocabulary in which the hub asks for I/O.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .streaks import Streak

__all__ = [
    "PlayerResult",
    "RaceRecord",
    "RatingChange",
    "Standing",
    "LiveRace",
    "LiveAction",
    "GhostRun",
]


@dataclass(frozen=True, slots=True)
class PlayerResult:
    player_id: int
    name: str
    rank: int
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    #: A daily attempt after the first: kept, but off the daily board.
    practice: bool
    #: Accepted actions with their time offsets, so the result can be replayed and checked.
    journal: tuple[tuple[int, str], ...]
    #: The player got a hint in this race: ranked after those who did not, on boards too.
    hinted: bool = False
    #: ``Runner.resumed_at``: where in ``journal`` the player came back after a drop.
    resumed_at: tuple[int, ...] = ()
    #: The runner's address key and device id at the race's start ("" for none): the
    #: rating rules' "one address" test reads them at commit; they are not stored.
    address: str = ""
    device: str = ""


@dataclass(frozen=True, slots=True)
class RaceRecord:
    """A finished race, everything storage keeps about it."""

    #: Unique across restarts, so that a retried write is recognised and not doubled.
    uid: str
    race_id: int
    room: str | None
    code: str
    rules: str
    daily_date: dt.date | None
    started_wall: float
    ended_wall: float
    results: tuple[PlayerResult, ...]
    #: A rated race: storing it rates its runners (``RatingChange``, docs/ratings.md).
    rated: bool = False
    #: A rated race dealt a deal the solver had not proven winnable (the stock's rare
    #: fallback, docs/protocol.md 4.34): its pairs are ``unproven`` and move nobody.
    unproven: bool = False
    #: A past day's deal played from the archive (docs/protocol.md 4.28): its results are
    #: practice, kept on that day's archive board only (``archive_bests``).
    archive: bool = False


@dataclass(frozen=True, slots=True)
class RatingChange:
    """A runner's rating after a rated race, as storage committed it (``Hub.committed``):
    rounded as the wire shows it, with the change from the rating before (a player's
    first rated race counts from the default, 1500)."""

    player_id: int
    rating: int
    change: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class Standing:
    """What is shown beside a player's name (storage reads it at hello, the welcome says
    it): the rounded rating (None: no rated race yet), whether it is provisional, and the
    daily streak (docs/ratings.md)."""

    rating: int | None = None
    provisional: bool = True
    streak: Streak = field(default_factory=Streak)


@dataclass(frozen=True, slots=True)
class LiveRace:
    """What it takes to rebuild a running race after a restart, written when it starts."""

    uid: str
    room: str
    code: str
    rules: str
    daily_date: dt.date | None
    attempt: int
    undo: bool
    time_limit: int
    max_players: int
    fixed: bool
    host_id: int
    #: ``(player_id, name)`` in the room's order.
    players: tuple[tuple[int, str], ...]
    started_wall: float
    #: The room allows hints.
    hints: bool = False
    #: The salt of the commitment to a secret deal, revealed with its code.
    salt: str | None = None
    #: A daily attempt that is practice (a later attempt, or a player younger than
    #: ``HubConfig.daily_min_age_s`` when it began), or a ghost race.
    practice: bool = False
    #: A ghost race: the stored run raced (its race's id and its runner's name), which a
    #: restart fetches again to bring the ghost back.
    ghost_race: str | None = None
    ghost_player: str | None = None
    #: A rated race (docs/ratings.md): still rated when rebuilt.
    rated: bool = False
    #: An archive run (a past day's deal as practice): a restart keeps it one.
    archive: bool = False
    #: A race the quick-race pool formed (docs/protocol.md 4.26): rebuilt as a quick room.
    quick: bool = False
    #: An invite-only room's key (docs/protocol.md 4.32): a rebuilt room stays invite-only.
    invite_key: str | None = None
    #: The deal was proven winnable (``room.winnable``, docs/protocol.md 4.34): a rebuilt
    #: race says so still, and a rated one counts for ratings only if it was.
    winnable: bool = False


@dataclass(slots=True)  # not frozen: built for every move, and a frozen __init__ costs 4x
class LiveAction:
    """One accepted action of a running race: a move text, ``undo``, ``resign``,
    ``abandon``, ``leave``, or ``hint`` (the player got a first hint: the run is hinted)."""

    uid: str
    n: int
    player_id: int
    seq: int | None
    at_ms: int
    action: str


@dataclass(frozen=True, slots=True)
class GhostRun:
    """A stored run to race as a ghost (``Hub.ghost_answered``, ``Hub.restore``): found
    by the I/O layer (``server.domain.replays``), which has checked that it may be raced.

    ``code`` and ``salt`` are the deal the ghost room deals (the run's own); ``daily`` is
    set when that deal is today's daily, still secret: the room then keeps its code
    hidden as a daily room does, and the run's actions never leave the server."""

    race: str
    name: str
    code: str
    salt: str | None
    daily: dt.date | None
    #: ``(ms, action)``: the run's accepted actions at their times on its race clock.
    actions: tuple[tuple[int, str], ...]
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    hinted: bool
