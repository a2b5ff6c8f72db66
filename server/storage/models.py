"""The tables, as SQLAlchemy models. Alembic migrations (``migrations/``) create them;
nothing calls ``create_all``. A test checks that autogenerate finds no difference.

Results carry a precomputed ``board_key`` (lower is better) so that every leaderboard is one
index range: winners without a hint by time then moves, then winners with one, then the
rest by cards on foundations, score and time (the later first). See ``board_key``.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from .declarative import Base

__all__ = [
    "Base",
    "Player",
    "RaceRow",
    "ResultRow",
    "MoveRow",
    "DailyAttempt",
    "DailyDealRow",
    "DealBest",
    "ArchiveBest",
    "Setting",
    "RatingRow",
    "PlayerRating",
    "board_key",
]


class Player(Base):
    """A registered name. Only a hash of the player's secret token is kept."""

    __tablename__ = "players"
    #: A unique index rather than a constraint: migration 0006 adds it without copying the
    #: table on SQLite.
    __table_args__ = (Index("uq_players_name_skeleton", "name_skeleton", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(20))
    #: ``protocol.messages.name_key``: names are unique without regard to case and to
    #: compatibility forms (fullwidth letters).
    name_key: Mapped[str] = mapped_column(String(80), unique=True)
    #: ``protocol.messages.name_skeleton``: nor may two names look alike (TR39). None only
    #: for a player whose name already looked like an older player's when migration 0006
    #: came (docs/limits.md): the older one holds the skeleton.
    name_skeleton: Mapped[str | None] = mapped_column(String(400))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: A BOT account (``hello.bot`` at registration, for good; docs/bots.md, migration 0018).
    bot: Mapped[bool] = mapped_column(Boolean, server_default=false())
    #: The key of the address the name was registered from (``limits.address_key``;
    #: migration 0019), for the rating rules' second link (docs/ratings.md "One address").
    #: None: registered before 0019, or from no address (a test's hub).
    registered_from: Mapped[str | None] = mapped_column(String(64))


class RaceRow(Base):
    """One race: a room's race, or one player's attempt at a daily deal."""

    __tablename__ = "races"
    #: A room's last race, for its closed invite link (``/r/CODE``, migration 0010).
    __table_args__ = (Index("ix_races_room_ended", "room", "ended_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: The server's id for the race, so a retried write is recognised and not doubled.
    uid: Mapped[str] = mapped_column(String(40), unique=True)
    code: Mapped[str] = mapped_column(String(48))
    rules: Mapped[str] = mapped_column(String(8))
    room: Mapped[str | None] = mapped_column(String(16))
    daily_date: Mapped[dt.date | None] = mapped_column(Date)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: A rated race (a quick race, or a private room its host marked rated; migration
    #: 0011): its results changed its runners' ratings (``ratings``).
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class ResultRow(Base):
    """One player's result in one race."""

    __tablename__ = "results"
    __table_args__ = (
        UniqueConstraint("race_id", "player_id"),
        # The daily board: today's counted results in board order.
        Index("ix_results_daily_board", "daily_date", "practice", "board_key", "id"),
        # A deal's board (best per player) and a player's history.
        Index("ix_results_code_board", "code", "player_id", "board_key"),
        # A player's history, newest first by when each race finished.
        Index("ix_results_player_finished", "player_id", "finished_at", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    race_id: Mapped[int] = mapped_column(ForeignKey("races.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    #: Copied from the race so that each board is one index on this table.
    code: Mapped[str] = mapped_column(String(48))
    daily_date: Mapped[dt.date | None] = mapped_column(Date)
    #: A daily attempt after the first: shown in history, kept off the daily board.
    practice: Mapped[bool] = mapped_column(Boolean, default=False)
    outcome: Mapped[str] = mapped_column(String(16))
    time_ms: Mapped[int] = mapped_column(BigInteger)
    moves: Mapped[int] = mapped_column(Integer)
    score: Mapped[int] = mapped_column(Integer)
    foundations: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    #: How many times the player took a move back.
    undos: Mapped[int] = mapped_column(Integer, default=0)
    #: The player got a hint in that race: ranked after every result without one.
    hinted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    board_key: Mapped[int] = mapped_column(BigInteger)
    finished_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: A past day's deal played from the archive (``daily_date`` that day, ``practice``
    #: true): on that day's archive board only (migration 0012).
    archive: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class DealBest(Base):
    """Each player's best counted (not practice) result on each deal, kept by the writer in
    the transaction that stores the result (``SqlStore._insert_race``).

    A deal's board is these rows in board order: one index range, like the daily board,
    instead of ranking every result of the deal per player on each request (migration 0006;
    bench/leaderboard.py). Among equal results the first stored stays the best."""

    __tablename__ = "deal_bests"
    __table_args__ = (Index("ix_deal_bests_board", "code", "board_key", "result_id"),)

    #: 48: the width game codes get with secret deals (``YU1-C-`` and 26 characters).
    code: Mapped[str] = mapped_column(String(48), primary_key=True)
    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    board_key: Mapped[int] = mapped_column(BigInteger)


class ArchiveBest(Base):
    """Each player's best archive run of each day (a past daily deal played as practice,
    docs/protocol.md 4.28), kept by the writer like ``deal_bests``: the day's archive board
    is these rows in board order, one index range (migration 0012). Archive runs are
    never in ``deal_bests`` nor on the daily board: they are practice."""

    __tablename__ = "archive_bests"
    __table_args__ = (Index("ix_archive_bests_board", "daily_date", "board_key", "result_id"),)

    daily_date: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    board_key: Mapped[int] = mapped_column(BigInteger)


class MoveRow(Base):
    """Every accepted action of a result, in order, with its time on the server's clock."""

    __tablename__ = "moves"

    result_id: Mapped[int] = mapped_column(
        ForeignKey("results.id", ondelete="CASCADE"), primary_key=True
    )
    n: Mapped[int] = mapped_column(Integer, primary_key=True)
    at_ms: Mapped[int] = mapped_column(BigInteger)
    #: Move notation such as ``7S>4``, or ``undo``.
    move: Mapped[str] = mapped_column(String(8))


class DailyAttempt(Base):
    """A player began the daily deal. Written when the deal is sent, so the first attempt
    is known to be the first even if it never finishes."""

    __tablename__ = "daily_attempts"

    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    daily_date: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    attempt: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class DailyDealRow(Base):
    """The deal chosen for a date and rules: the first candidate the solver proved winnable.

    Stored so that a day's deal never changes once chosen, even across a restart or a solver
    upgrade that would now pick another candidate."""

    __tablename__ = "daily_deals"

    daily_date: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    rules: Mapped[str] = mapped_column(String(8), primary_key=True)
    code: Mapped[str] = mapped_column(String(48))
    #: Which candidate of the date it was (0 for the first).
    candidate: Mapped[int] = mapped_column(Integer)
    #: The length of the solver's winning line without its wasted moves.
    par: Mapped[int] = mapped_column(Integer)
    #: That line, in move notation separated by spaces.
    line: Mapped[str] = mapped_column(Text)
    #: Positions searched over every candidate tried for the date.
    nodes: Mapped[int] = mapped_column(BigInteger)
    chosen_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: The salt of the day's commitment (None for a day chosen before commitments).
    salt: Mapped[str | None] = mapped_column(String(32))


class Setting(Base):
    """Server-wide values that must survive restarts, such as the daily-deal secret."""

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


_WIN_TIME_BITS = 41
_MOVE_BITS = 20
_TIME_BITS = 34
_SCORE_BITS = 20
#: The flag bits above the fields: every result that is not a win after every win, and a
#: hinted win after every unhinted one (migration 0010; from 0005 to 0010 a hinted result
#: of any outcome came after every unhinted one, at bit 62, with "not won" at bit 61).
NOT_WON_BIT = 62
HINTED_WIN_BIT = 61


def board_key(
    *, won: bool, time_ms: int, moves: int, foundations: int, score: int, hinted: bool = False
) -> int:
    """One signed 64-bit integer that sorts results in board order (lower is better), the
    order of a race's ranks (``race.rank_runners``, docs/protocol.md 4.12).

    Wins without a hint: ``time_ms`` then ``moves``; then wins with one, in the same order.
    Then every other result, hinted or not: more cards on foundations, then higher score,
    then more time (giving up early never gains a place). Equal keys are ties and share a
    rank. Stored: a change here needs a migration that recomputes it, as 0010 did.
    """
    # A field past its range saturates, and so do the fields after it: what it cut off
    # would have decided, so the rest must not (two saturated results tie).
    most_moves = (1 << _MOVE_BITS) - 1
    if won:
        flag = (1 << HINTED_WIN_BIT) if hinted else 0
        t = min(time_ms, (1 << _WIN_TIME_BITS) - 1)
        m = most_moves if time_ms > t else min(moves, most_moves)
        return flag | (t << _MOVE_BITS) | m
    missing = 52 - foundations
    most_score = (1 << _SCORE_BITS) - 1
    score_gap = most_score - min(score, most_score)
    most_time = (1 << _TIME_BITS) - 1
    t = 0 if score > most_score else most_time - min(time_ms, most_time)
    fields = (missing << (_TIME_BITS + _SCORE_BITS)) | (score_gap << _TIME_BITS) | t
    return (1 << NOT_WON_BIT) | fields


class LiveRaceRow(Base):
    """A race still running: enough to rebuild it after a restart or a crash. Deleted in the
    same transaction that stores its result."""

    __tablename__ = "live_races"

    uid: Mapped[str] = mapped_column(String(40), primary_key=True)
    room: Mapped[str] = mapped_column(String(16))
    code: Mapped[str] = mapped_column(String(48))
    rules: Mapped[str] = mapped_column(String(8))
    daily_date: Mapped[dt.date | None] = mapped_column(Date)
    attempt: Mapped[int] = mapped_column(Integer)
    undo: Mapped[bool] = mapped_column(Boolean)
    time_limit: Mapped[int] = mapped_column(Integer)
    max_players: Mapped[int] = mapped_column(Integer)
    fixed: Mapped[bool] = mapped_column(Boolean)
    host_id: Mapped[int] = mapped_column(Integer)
    #: JSON: ``[[player_id, name], ...]`` in the room's order.
    players: Mapped[str] = mapped_column(Text)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: The race clock at the last checkpoint: where it resumes after a crash.
    alive_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    #: The room allows hints (a player's first hint is journaled as the action ``hint``).
    hints: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: The salt of the commitment to a deal the server drew in secret (None for a deal
    #: chosen by its code): revealed with the code at the race's end.
    salt: Mapped[str | None] = mapped_column(String(32))
    #: A daily attempt that is practice: a later attempt, or a player younger than
    #: ``--daily-min-age`` when it began (migration 0006).
    practice: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: The node that writes this race (docs/cluster.md; "" for a server alone), and the
    #: fencing token: bumped by each takeover; writes carry the pair they hold (0009).
    owner: Mapped[str] = mapped_column(String(40), default="", server_default=text("''"))
    epoch: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    #: A ghost race: the stored run it races, by its race's id and runner's name, fetched
    #: again to bring the ghost back after a restart (migration 0008).
    ghost_race: Mapped[str | None] = mapped_column(String(40))
    ghost_player: Mapped[str | None] = mapped_column(String(20))
    #: A rated race (migration 0011): it stays rated when rebuilt after a restart.
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: An archive run (a past day's deal as practice, migration 0012): rebuilt as one.
    archive: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: A race the quick-race pool formed (migration 0013): rebuilt as a quick room.
    quick: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: An invite-only room's key (migration 0021): rebuilt still invite-only.
    invite_key: Mapped[str | None] = mapped_column(String(32))
    #: The deal was proven winnable (migration 0022): a rebuilt race still says so.
    winnable: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class LiveActionRow(Base):
    """One accepted action of a running race, in order."""

    __tablename__ = "live_actions"

    race_uid: Mapped[str] = mapped_column(
        ForeignKey("live_races.uid", ondelete="CASCADE"), primary_key=True
    )
    n: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int | None] = mapped_column(Integer)
    at_ms: Mapped[int] = mapped_column(BigInteger)
    action: Mapped[str] = mapped_column(String(8))


class RatingRow(Base):
    """One runner's rating change in one rated race, with everything it was computed from
    (migration 0011; docs/ratings.md): the rating, deviation and volatility before and
    after, and each pairwise game (the opponent, their rating and deviation before the
    race, the score). Written in the transaction that stores the result; ``yukon db
    recompute-ratings`` computes every row again from the stored results and compares."""

    __tablename__ = "ratings"
    __table_args__ = (
        # A player's rating history, oldest first (the chart), and their latest row.
        Index("ix_ratings_player", "player_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    race_id: Mapped[int] = mapped_column(ForeignKey("races.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    result_id: Mapped[int] = mapped_column(
        ForeignKey("results.id", ondelete="CASCADE"), unique=True
    )
    rated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    rating_before: Mapped[float] = mapped_column(Double)
    deviation_before: Mapped[float] = mapped_column(Double)
    volatility_before: Mapped[float] = mapped_column(Double)
    rating: Mapped[float] = mapped_column(Double)
    deviation: Mapped[float] = mapped_column(Double)
    volatility: Mapped[float] = mapped_column(Double)
    #: JSON: ``[[opponent_id, rating, deviation, score], ...]``, the pairwise games.
    games: Mapped[str] = mapped_column(Text)


class PlayerRating(Base):
    """A player's current rating: their latest ``ratings`` row's figures, kept in the same
    transaction, so that a room, a board or the quick-race pool reads one row a player.
    A player with no rated race has no row (and no rating: the defaults apply)."""

    __tablename__ = "player_ratings"

    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    rating: Mapped[float] = mapped_column(Double)
    deviation: Mapped[float] = mapped_column(Double)
    volatility: Mapped[float] = mapped_column(Double)
    #: Rated races finished (the rating is provisional below ``ratings.PROVISIONAL_RACES``).
    races: Mapped[int] = mapped_column(Integer)
    rated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
