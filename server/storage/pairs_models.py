"""The pairs of each rated race as they were decided when it was committed (migration
0016; ``server.domain.pairs``; docs/ratings.md "Rating farming"): which pairs counted and
why, so that ``yukon db recompute-ratings`` replays the decisions rather than deciding
again. A rated race stored before 0016 has no rows here: all its pairs count, by rank."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from .declarative import Base

__all__ = ["RatingPairRow"]


class RatingPairRow(Base):
    """One pair of one rated race: ``a`` < ``b`` (player ids), ``reason`` one of
    ``counted``, ``draw`` (counted as a draw), ``short``, ``limit``, or ``marked`` (a
    runner held an engine or boost mark: ``ratings.rate``)."""

    __tablename__ = "rating_pairs"
    __table_args__ = (
        # The pair's counted races of the last 24 hours (the limit of 10).
        Index("ix_rating_pairs_pair", "a", "b", "race_id"),
    )

    race_id: Mapped[int] = mapped_column(
        ForeignKey("races.id", ondelete="CASCADE"), primary_key=True
    )
    a: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"), primary_key=True)
    b: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"), primary_key=True)
    reason: Mapped[str] = mapped_column(String(8))
