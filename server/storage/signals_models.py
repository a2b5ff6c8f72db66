"""The table of each stored run's fair-play signals (issue 40 item 1, migration 0017).

Kept apart from ``models.py`` like the moderation tables; ``schema.py`` imports it so
the table is in the one ``metadata``."""

from __future__ import annotations

from sqlalchemy import Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .declarative import Base


class RunSignals(Base):
    """A stored run's timing figures (``server/domain/signals.py``), one row a result.

    ``pace`` is a column of its own (the percentile of later runs of ``rules`` is taken
    over it); the other figures and the rules that fired are JSON text. Operators only:
    never sent to players."""

    __tablename__ = "run_signals"
    __table_args__ = (Index("ix_run_signals_rules", "rules", "result_id"),)

    result_id: Mapped[int] = mapped_column(
        ForeignKey("results.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    rules: Mapped[str] = mapped_column(String(16))
    pace: Mapped[float] = mapped_column(Float)
    #: Whether any rule fired (a flagged run is left out of the human history).
    flagged: Mapped[int] = mapped_column(Integer)
    #: JSON object: ``Signals.as_json()``.
    figures: Mapped[str] = mapped_column(Text)
    #: JSON list of the rules that fired.
    flags: Mapped[str] = mapped_column(Text)
