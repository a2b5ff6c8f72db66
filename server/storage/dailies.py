"""The daily deal in the SQL store: the deal chosen for a day and rules, and each player's
counted attempt at it.

A part of ``SqlStore`` (server/storage/sql.py), kept apart because the daily's rule (one
counted attempt a day, the same deal for everyone) is its own small contract.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from protocol import GameCode
from protocol.dailylog import EntryKind

from ..domain.daily import DailyChoice
from . import dailylog
from .base import StoreBase, _attempts, _daily_deals, _utc

__all__ = ["DailiesStore"]


class DailiesStore(StoreBase):
    """The day's deal and each player's counted attempt."""

    async def begin_daily(self, *, player_id: int, date: dt.date, now: float) -> int:
        """Number this player's attempt at ``date``'s deal (1 counts; later ones are practice)."""
        for _ in range(5):
            try:
                async with self.engine.begin() as conn:
                    last = (
                        await conn.execute(
                            select(func.max(_attempts.c.attempt)).where(
                                _attempts.c.player_id == player_id,
                                _attempts.c.daily_date == date,
                            )
                        )
                    ).scalar()
                    attempt = (last or 0) + 1
                    await conn.execute(
                        insert(_attempts).values(
                            player_id=player_id,
                            daily_date=date,
                            attempt=attempt,
                            started_at=_utc(now),
                        )
                    )
                return attempt
            except IntegrityError:  # two attempts began at once; number again
                continue
        raise RuntimeError("could not number the daily attempt")

    async def daily_deal(self, *, date: dt.date, rules: str) -> DailyChoice | None:
        """The deal chosen for ``date`` under ``rules``, if one was."""
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(_daily_deals).where(
                        _daily_deals.c.daily_date == date, _daily_deals.c.rules == rules
                    )
                )
            ).first()
        if row is None:
            return None
        return DailyChoice(
            date=row.daily_date,
            code=GameCode.parse(row.code),
            candidate=row.candidate,
            par=row.par,
            line=tuple(row.line.split()),
            nodes=row.nodes,
            salt=row.salt,
        )

    async def save_daily_deal(self, choice: DailyChoice, *, now: float) -> DailyChoice:
        """Keep ``choice`` for its date, unless one was kept first: return the kept one.

        A day with a commitment is appended to the daily's log in the same transaction
        (docs/protocol.md 4.29); should another process take the log's next place at the
        same moment, the transaction is tried again from the new head."""
        rules = str(choice.code.rules)
        for _ in range(8):
            try:
                async with self.engine.begin() as conn:
                    await conn.execute(
                        insert(_daily_deals).values(
                            daily_date=choice.date,
                            rules=rules,
                            code=str(choice.code),
                            candidate=choice.candidate,
                            par=choice.par,
                            line=" ".join(choice.line),
                            nodes=choice.nodes,
                            chosen_at=_utc(now),
                            salt=choice.salt,
                        )
                    )
                    if choice.commitment is not None:
                        await dailylog.append_in(
                            conn,
                            EntryKind.DAY,
                            choice.date.isoformat(),
                            now,
                            {"commitment": choice.commitment, "rules": rules},
                        )
                return choice
            except IntegrityError:  # another server process chose first, or took the log's place
                kept = await self.daily_deal(date=choice.date, rules=rules)
                if kept is not None:
                    return kept
        raise RuntimeError(f"the daily deal of {choice.date} could not be kept")
