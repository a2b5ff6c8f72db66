"""Boards in the SQL store: the daily's, a deal's and the archive's leaderboards, ranked
from the kept bests, with the asking player's own entry.

A part of ``SqlStore`` (server/storage/sql.py), kept apart because boards are reads with
their own ranking queries, used by the leaderboard and the pages.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, and_, func, select, tuple_, union_all

from .base import StoreBase, _archive_bests, _bests, _players, _races, _results
from .visibility import on_the_boards

__all__ = ["BoardsStore", "BoardEntry", "Board"]


@dataclass(frozen=True, slots=True)
class BoardEntry:
    rank: int
    player_id: int
    name: str
    outcome: str
    time_ms: int
    moves: int
    score: int
    foundations: int
    undos: int
    #: The player got a hint in that race (such rows rank after all the others).
    hinted: bool = False
    #: The race's id (``races.uid``): what a replay of the row's run asks for.
    race: str | None = None


@dataclass(frozen=True, slots=True)
class Board:
    """One page of a leaderboard; ``you`` is the asking player's own row, if they have one."""

    total: int
    offset: int
    rows: tuple[BoardEntry, ...]
    you: BoardEntry | None


def _board_entry(row: Any, rank: int) -> BoardEntry:
    """A board row from a result row selected with ``BoardsStore._entry_columns``."""
    return BoardEntry(
        rank,
        row.player_id,
        row.name,
        row.outcome,
        row.time_ms,
        row.moves,
        row.score,
        row.foundations,
        row.undos,
        row.hinted,
        row.race,
    )


class BoardsStore(StoreBase):
    """The daily, deal and archive boards."""

    def _entry_columns(self) -> Sequence[Any]:
        r = _results.c
        return (
            r.id,
            r.board_key,
            r.player_id,
            _players.c.name,
            r.outcome,
            r.time_ms,
            r.moves,
            r.score,
            r.foundations,
            r.undos,
            r.hinted,
            _races.c.uid.label("race"),
        )

    async def daily_board(
        self,
        *,
        date: dt.date,
        offset: int = 0,
        limit: int = 20,
        player_id: int | None = None,
        around: bool = False,
    ) -> Board:
        """The counted (first) attempts at ``date``'s deal, best first.

        With ``around`` the page is centred on ``player_id``'s row; a player with no row gets
        an empty page. ``you`` is that player's row whenever they have one.
        """
        r = _results.c
        scope = and_(r.daily_date == date, r.practice.is_(False))
        return await self._board(scope, offset, limit, player_id, around)

    async def deal_board(
        self,
        *,
        code: str,
        offset: int = 0,
        limit: int = 20,
        player_id: int | None = None,
        around: bool = False,
    ) -> Board:
        """Each player's best counted result on the deal ``code``, best first: the rows the
        writer keeps in ``deal_bests``, so one index range like the daily board."""
        b = _bests.c
        return await self._board(
            b.code == code, offset, limit, player_id, around, table=_bests, id_column=b.result_id
        )

    async def archive_board(
        self,
        *,
        date: dt.date,
        offset: int = 0,
        limit: int = 20,
        player_id: int | None = None,
        around: bool = False,
    ) -> Board:
        """Each player's best archive run of ``date``'s deal (practice from the archive,
        docs/protocol.md 4.28), best first: the rows the writer keeps in ``archive_bests``."""
        a = _archive_bests.c
        return await self._board(
            a.daily_date == date,
            offset,
            limit,
            player_id,
            around,
            table=_archive_bests,
            id_column=a.result_id,
        )

    async def _board(
        self,
        scope: Any,
        offset: int,
        limit: int,
        player_id: int | None,
        around: bool,
        *,
        table: Table = _results,
        id_column: Any = None,
    ) -> Board:
        """One page of a board, with absolute ranks.

        The board is the rows of ``table`` (``results``, or ``deal_bests`` whose
        ``id_column`` names the result) that ``scope`` selects, in (``board_key``, result
        id) order. Built for boards of tens of thousands of rows (bench/leaderboard.py):
        the page's ids come from the index alone (OFFSET skips index entries, not joined
        rows), results and names are joined for the page only, one counting pass gives the
        total, the asker's rank and place, and "around me" walks the index both ways from
        the asker's row.
        """
        t = table.c
        rid = t.id if id_column is None else id_column
        # Marked, closed and hidden accounts and voided results are read past, never
        # deleted (visibility.py): lifting the mark or the void brings the row back.
        scope = and_(scope, on_the_boards(t.player_id, rid))
        key = t.board_key
        order = (key, rid)
        async with self.engine.connect() as conn:
            mine = None
            if player_id is not None:
                mine = (
                    await conn.execute(
                        select(rid.label("id"), key.label("board_key"))
                        .where(scope, t.player_id == player_id)
                        .order_by(*order)
                        .limit(1)
                    )
                ).first()
            you_rank = 0
            if mine is None:
                total = (
                    await conn.execute(select(func.count()).select_from(table).where(scope))
                ).scalar_one()
                if around:
                    return Board(total, 0, (), None)
                keys: Any = select(rid.label("id")).where(scope).order_by(*order)
                keys = keys.offset(offset).limit(limit)
            else:
                mine_key = tuple_(mine.board_key, mine.id)
                total, better, position = (
                    await conn.execute(
                        select(
                            func.count(),
                            func.count().filter(key < mine.board_key),
                            func.count().filter(tuple_(key, rid) < mine_key),
                        )
                        .select_from(table)
                        .where(scope)
                    )
                ).one()
                you_rank = 1 + better
                if around:
                    offset = max(0, position - limit // 2)
                    head = position - offset  # rows of the page above mine
                    above = (
                        select(rid.label("id"))
                        .where(scope, tuple_(key, rid) < mine_key)
                        .order_by(key.desc(), rid.desc())
                        .limit(head)
                        .subquery()
                    )
                    below = (
                        select(rid.label("id"))
                        .where(scope, tuple_(key, rid) >= mine_key)
                        .order_by(*order)
                        .limit(limit - head)
                        .subquery()
                    )
                    keys = union_all(select(above.c.id), select(below.c.id))
                else:
                    keys = select(rid.label("id")).where(scope).order_by(*order)
                    keys = keys.offset(offset).limit(limit)
            page_ids = keys.subquery()
            r = _results.c
            page = (
                await conn.execute(
                    select(*self._entry_columns())
                    .select_from(page_ids)
                    .join(_results, r.id == page_ids.c.id)
                    .join(_players, _players.c.id == r.player_id)
                    .join(_races, _races.c.id == r.race_id)
                    .order_by(r.board_key, r.id)
                )
            ).all()
            first_rank = 0
            if page:
                # ``offset`` rows are above page[0]; those tied with it share its rank.
                tied = (
                    await conn.execute(
                        select(func.count())
                        .select_from(table)
                        .where(scope, key == page[0].board_key, rid < page[0].id)
                    )
                ).scalar_one()
                first_rank = 1 + offset - tied
        rows = []
        previous_key = None
        rank = first_rank
        you = None
        for i, row in enumerate(page):
            if previous_key is not None and row.board_key != previous_key:
                rank = offset + i + 1
            previous_key = row.board_key
            entry = _board_entry(row, rank)
            rows.append(entry)
            if mine is not None and row.id == mine.id:
                you = entry
        if mine is not None and you is None:
            you = await self._entry(mine.id, you_rank)
        return Board(total, offset, tuple(rows), you)

    async def _entry(self, result_id: int, rank: int) -> BoardEntry:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(*self._entry_columns())
                    .join(_players, _players.c.id == _results.c.player_id)
                    .join(_races, _races.c.id == _results.c.race_id)
                    .where(_results.c.id == result_id)
                )
            ).one()
        return _board_entry(row, rank)
