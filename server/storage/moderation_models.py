"""The tables of fair play and moderation (issue 40, migration 0014), as SQLAlchemy models.

Kept apart from ``models.py``; ``schema.py`` imports both, so that every table is in
``Base.metadata`` for Alembic and for the test that compares models and migrations.

The design is lichess's Modlog: every operator action is one row of ``moderation_log``
(who, when, what, to whom, why, and what it changed), and an undo is one more row that
names the entry it undoes. The other tables hold the state those actions left (a mark,
a closed account, a voided result), each row pointing at the log entry that made it and
the one that lifted it, so the state can always be explained from the log, and nothing
is ever deleted to undo something.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    Boolean,
    CheckConstraint,
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
    "MARK_KINDS",
    "REFUND_MARKS",
    "QUEUE_STATES",
    "ModerationEntry",
    "AccountMark",
    "ReviewItem",
    "AccountState",
    "VoidedResult",
    "RatingRefund",
]

#: What an operator can mark an account as (docs/fairplay.md): ``engine`` (a solver or a
#: script played its runs), ``boost`` (rating farming: it lost or won on purpose),
#: ``alt`` (a second account of someone), ``bot`` (a program not registered as a bot).
MARK_KINDS = ("engine", "boost", "alt", "bot")
#: The marks that give their player's opponents back what their rated races cost them
#: (``rating_refunds``), and after which that player's rated races move nobody's rating
#: (their pairs do not count: ``marked`` in ``rating_pairs``), as lichess does.
REFUND_MARKS = ("engine", "boost")
#: A review queue entry is ``open`` until an operator acts: ``closed`` (acted on, by a
#: mark) or ``dismissed`` (nothing to do).
QUEUE_STATES = ("open", "closed", "dismissed")


class ModerationEntry(Base):
    """One operator action (the audit log, ``yukon mod log``): never updated, never deleted.

    ``action`` is what was done (``mark``, ``unmark``, ``rename``, ``close``, ``reopen``,
    ``mute``, ``unmute``, ``void``, ``dismiss``, ``undo``, and what the server itself does
    later, such as ``hide``); ``details`` (JSON) says exactly what it changed, so that an
    undo knows what to put back (an undo's entry adds, under ``undo``, what it did
    besides, such as refunds taken back: written in its own transaction, before it
    commits). An undo is an entry of its own whose ``undoes`` names the
    entry it undid: unique, so an entry is undone at most once."""

    __tablename__ = "moderation_log"
    __table_args__ = (Index("ix_moderation_log_player", "player_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: Who did it: the operator's name (``yukon mod --by``, the OS user by default), or
    #: ``server`` for what the server does by itself.
    operator: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(16))
    #: The account acted on, and its name at the time (the name stays when the account
    #: is renamed, and if the row is gone).
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id", ondelete="SET NULL"))
    name: Mapped[str | None] = mapped_column(String(20))
    #: The race acted on (a void), or the race a flag or report was about.
    race_id: Mapped[int | None] = mapped_column(ForeignKey("races.id", ondelete="SET NULL"))
    reason: Mapped[str] = mapped_column(Text)
    #: JSON object: what the action changed (the mark's id, the old and new names, ...).
    details: Mapped[str] = mapped_column(Text, default="{}", server_default=text("'{}'"))
    undoes: Mapped[int | None] = mapped_column(ForeignKey("moderation_log.id"), unique=True)


class AccountMark(Base):
    """A mark on an account, from the entry that made it to the one that lifted it
    (``undone_at`` None: in force). At most one mark of each kind is in force per account;
    marking again after an unmark is a new row, so the rows are the account's history."""

    __tablename__ = "account_marks"
    __table_args__ = (
        CheckConstraint("kind IN ('engine', 'boost', 'alt', 'bot')", name="kind"),
        Index(
            "uq_account_marks_in_force",
            "player_id",
            "kind",
            unique=True,
            sqlite_where=text("undone_at IS NULL"),
            postgresql_where=text("undone_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(8))
    reason: Mapped[str] = mapped_column(Text)
    marked_by: Mapped[str] = mapped_column(String(64))
    marked_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: The entry that made the mark (``mark``, or the ``undo`` of an ``unmark``).
    log_id: Mapped[int] = mapped_column(ForeignKey("moderation_log.id"))
    undone_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    undone_by: Mapped[str | None] = mapped_column(String(64))
    #: The entry that lifted it (``unmark``, or the ``undo`` of the ``mark``).
    undone_log_id: Mapped[int | None] = mapped_column(ForeignKey("moderation_log.id"))


class ReviewItem(Base):
    """One entry of the review queue (``yukon mod queue``): a rule flagged a run
    (``flag``, with the figures in ``evidence``), a player reported another (``report``:
    ``reporter_id`` reported ``player_id`` about ``race_id``, in their words ``note``),
    two runners of a race came from one address (``address``, the other in ``other_id``),
    or the sandbag watch reported a player (``sandbag``). It stays ``open`` until an
    operator closes it with a mark of its player or dismisses it."""

    __tablename__ = "review_queue"
    __table_args__ = (
        CheckConstraint("state IN ('open', 'closed', 'dismissed')", name="state"),
        Index("ix_review_queue_state", "state", "id"),
        Index("ix_review_queue_player", "player_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: Whom the entry is about.
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    #: Who reported them (a report).
    reporter_id: Mapped[int | None] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    #: The other account of a pair (an address shared, a sandbag's opponent).
    other_id: Mapped[int | None] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    race_id: Mapped[int | None] = mapped_column(ForeignKey("races.id", ondelete="CASCADE"))
    result_id: Mapped[int | None] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    #: Which rule flagged the run (a flag), or the report's category.
    rule: Mapped[str | None] = mapped_column(String(32))
    #: JSON object: the figures behind the entry (a flag's signals and thresholds).
    evidence: Mapped[str] = mapped_column(Text, default="{}", server_default=text("'{}'"))
    #: A report's own words.
    note: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(10), default="open", server_default="open")
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    closed_by: Mapped[str | None] = mapped_column(String(64))
    #: The entry that closed or dismissed it.
    closed_log_id: Mapped[int | None] = mapped_column(ForeignKey("moderation_log.id"))


class AccountState(Base):
    """What an operator (or the server) changed about an account besides marks: closed
    (its sockets close, it cannot say hello), muted (no chat, no reactions), hidden (off
    the public boards, by the automatic rule of docs/fairplay.md when the operator turns
    it on). No row: open, not muted, not hidden."""

    __tablename__ = "account_states"

    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    closed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    muted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    changed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: The entry of the last change.
    log_id: Mapped[int | None] = mapped_column(ForeignKey("moderation_log.id"))


class VoidedResult(Base):
    """A stored result an operator voided (``yukon mod void``): it leaves the boards and
    counts for nothing, but stays stored. One row per result; a void of a whole race is
    one entry and a row for each of its results. At most one void in force per result."""

    __tablename__ = "voided_results"
    __table_args__ = (
        Index(
            "uq_voided_results_in_force",
            "result_id",
            unique=True,
            sqlite_where=text("undone_at IS NULL"),
            postgresql_where=text("undone_at IS NULL"),
        ),
        Index("ix_voided_results_race", "race_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    race_id: Mapped[int] = mapped_column(ForeignKey("races.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    voided_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    log_id: Mapped[int] = mapped_column(ForeignKey("moderation_log.id"))
    undone_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    undone_log_id: Mapped[int | None] = mapped_column(ForeignKey("moderation_log.id"))


class RatingRefund(Base):
    """Rating points given back to an opponent of an ``engine`` or ``boost`` mark, for one
    race of the marked player (``server.storage.refunds``: capped per race, never above
    the opponent's peak + 20). ``after_rating_id`` is the last ``ratings`` row at the time
    it was applied, so ``yukon db recompute-ratings`` can apply it at the same point of
    the order of rated races; the rating before and after say what it did."""

    __tablename__ = "rating_refunds"
    __table_args__ = (UniqueConstraint("mark_id", "player_id", "race_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    mark_id: Mapped[int] = mapped_column(ForeignKey("account_marks.id", ondelete="CASCADE"))
    #: The entry that applied it.
    log_id: Mapped[int] = mapped_column(ForeignKey("moderation_log.id"))
    #: Who got the points back, and for which race of the marked player.
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    race_id: Mapped[int] = mapped_column(ForeignKey("races.id", ondelete="CASCADE"))
    points: Mapped[float] = mapped_column(Double)
    rating_before: Mapped[float] = mapped_column(Double)
    rating_after: Mapped[float] = mapped_column(Double)
    after_rating_id: Mapped[int | None] = mapped_column(Integer)
    refunded_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: The entry that took it back, if one did (an ``unmark``, or the ``undo`` of the
    #: ``mark``), and the last ``ratings`` row at that time (migration 0020): where the
    #: points came off again in the order of rated races, which a recomputation follows.
    undone_log_id: Mapped[int | None] = mapped_column(ForeignKey("moderation_log.id"))
    undone_after_rating_id: Mapped[int | None] = mapped_column(Integer)
