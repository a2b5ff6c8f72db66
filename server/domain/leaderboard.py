"""Answers to leaderboard and history requests, from storage to wire messages.

Read-only and outside the race logic: the hub only forwards these requests (``Query``).
What may be shown is decided here: a daily deal's game code stays hidden until
``daily.code_public`` says so, and nothing about a day shows before it begins.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

from protocol import GameCode, InvalidCodeError
from protocol.messages import (
    BestTime,
    Board,
    BoardPage,
    BoardRow,
    Error,
    History,
    HistoryPage,
    HistoryRow,
    Message,
    Player,
    PlayerPage,
)

from ..storage.ratings import PlayerStats
from ..storage.sql import Board as StoredBoard
from ..storage.sql import BoardEntry, SqlStore
from .daily import DailyDeals, code_public, day_begun, next_daily_ms, utc_date

__all__ = ["Leaderboards"]

#: Not a game code, so no result has it: what a deal board of a secret code looks up.
_NO_RESULTS = "-"


def _row(e: BoardEntry) -> BoardRow:
    return BoardRow(
        e.rank,
        e.name,
        e.outcome,
        e.time_ms,
        e.moves,
        e.score,
        e.foundations,
        e.undos,
        e.hinted,
        e.race,
    )


def player_page(s: PlayerStats) -> PlayerPage:
    """A player's stored figures as the wire's ``player_page`` (``/players/NAME`` too)."""
    return PlayerPage(
        name=s.name,
        rating=s.rating,
        provisional=s.provisional,
        deviation=s.deviation,
        races=s.races,
        wins=s.wins,
        best=tuple(BestTime(rules, t) for rules, t in s.best),
        streak=s.streak,
        best_streak=s.best_streak,
        ratings=s.ratings,
        broke_rules=s.broke_rules,
        bot=s.bot,
    )


def _unix_ms(when: dt.datetime) -> int:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


class Leaderboards:
    def __init__(
        self,
        store: SqlStore,
        *,
        wall: Callable[[], float],
        dailies: DailyDeals,
    ) -> None:
        self.store = store
        #: The wall clock (seconds since the epoch): what may be shown depends on it.
        self.wall = wall
        self.dailies = dailies

    def today(self) -> dt.date:
        return utc_date(self.wall())

    async def still_secret(self, code: GameCode) -> bool:
        """Is ``code`` a daily deal whose code is not public yet (yesterday's until a while
        after midnight, today's, tomorrow's)? An answer must not confirm it."""
        wall = self.wall()
        today = utc_date(wall)
        for days in (-1, 0, 1):
            date = today + dt.timedelta(days=days)
            if code_public(date, wall):
                continue
            choice = await self.dailies.stored(date)
            if choice is not None and choice.code == code:
                return True
        return False

    async def answer(self, message: Message, player_id: int) -> Message:
        if isinstance(message, Board):
            return await self._board(message, player_id)
        if isinstance(message, History):
            return await self._history(message, player_id)
        if isinstance(message, Player):
            return await self.player(message.name)
        raise TypeError(f"not a query: {message!r}")

    async def _board(self, m: Board, player_id: int) -> Message:
        """A board's page, with the countdown to the next daily (issue 29) on every one."""
        page = await self._board_page(m, player_id)
        if isinstance(page, BoardPage):
            page = dataclasses.replace(page, next_daily_ms=next_daily_ms(self.wall()))
        return page

    async def _board_page(self, m: Board, player_id: int) -> Message:
        wall = self.wall()
        today = utc_date(wall)
        if m.kind == "archive":
            return await self._archive(m, player_id)
        if m.kind == "daily":
            if m.code is not None:
                return Error("bad_field", "a daily board is chosen by date, not by code")
            try:
                date = dt.date.fromisoformat(m.date) if m.date is not None else today
            except ValueError:
                return Error("bad_field", f"date {m.date!r} is not a date like 2026-11-29")
            if not day_begun(date, wall):  # nothing about a day shows before it: not its par
                return self._page(m, date.isoformat(), None, StoredBoard(0, m.offset, (), None))
            board = await self.store.daily_board(
                date=date, offset=m.offset, limit=m.limit, player_id=player_id, around=m.around
            )
            return await self._day_page(m, date, board)
        if m.code is None:
            return Error("bad_field", "a deal board needs a game code")
        try:
            parsed = GameCode.parse(m.code)
        except InvalidCodeError as exc:
            return Error("bad_rules", str(exc))
        # A daily code not public yet is answered exactly as a code nobody has played:
        # the same query on a code that has no results, so not even its timing differs.
        shown = _NO_RESULTS if await self.still_secret(parsed) else str(parsed)
        board = await self.store.deal_board(
            code=shown, offset=m.offset, limit=m.limit, player_id=player_id, around=m.around
        )
        return await self.with_standings(self._page(m, None, str(parsed), board), board, today)

    # -- ratings and streaks (docs/protocol.md 4.27) ---------------------------------------

    async def with_standings(
        self, page: BoardPage, board: StoredBoard, today: dt.date, *, streaks: bool = False
    ) -> BoardPage:
        """A board page whose rows show each player's current rating (and, ``streaks``:
        a daily board's, their daily streak), ``board`` being the stored page it shows."""
        entries = [*board.rows, *([board.you] if board.you else [])]
        found = await self.store.standings([e.player_id for e in entries], today=today)

        def shown(row: BoardRow, entry: BoardEntry) -> BoardRow:
            s = found[entry.player_id]
            streak = s.streak.current(today) if streaks else None
            return dataclasses.replace(row, rating=s.rating, streak=streak)

        return dataclasses.replace(
            page,
            rows=tuple(shown(r, e) for r, e in zip(page.rows, board.rows, strict=True)),
            you=shown(page.you, board.you) if page.you and board.you else page.you,
        )

    async def player_stats(self, name: str) -> PlayerStats | None:
        """A player's page by name, with the streak by the server's own date."""
        return await self.store.player_stats(name=name, today=self.today())

    async def player(self, name: str) -> Message:
        """The answer to ``player``: the page, or ``unknown_player``."""
        stats = await self.player_stats(name)
        if stats is None:
            return Error("unknown_player", f"no player is called {name!r}")
        return player_page(stats)

    async def _day_page(self, m: Board, date: dt.date, board: StoredBoard) -> BoardPage:
        """A board of one day (its daily board, its archive board) with what may be shown
        of its deal now: code, par, commitment and salt (docs/protocol.md 4.5)."""
        choice = await self.dailies.stored(date)
        code = str(choice.code) if choice is not None and code_public(date, self.wall()) else None
        par = choice.par if choice is not None else None
        page = await self.with_standings(
            self._page(m, date.isoformat(), code, board, par),
            board,
            utc_date(self.wall()),
            streaks=m.kind == "daily",
        )
        if choice is None or choice.salt is None:
            return page
        # The commitment is public from the day's start; its salt comes with the code.
        return dataclasses.replace(
            page, commitment=choice.commitment, salt=choice.salt if code else None
        )

    async def _archive(self, m: Board, player_id: int) -> Message:
        """A day's archive board (docs/protocol.md 4.28): each player's best archive run of
        that day's deal. A day not in the archive yet (its code still secret) has none, and
        its page says nothing of the day, not even its par: nothing of today leaks."""
        if m.code is not None:
            return Error("bad_field", "an archive board is chosen by date, not by code")
        try:
            date = dt.date.fromisoformat(m.date or "")
        except ValueError:
            return Error(
                "bad_field", f"an archive board needs a date like 2026-11-29, not {m.date!r}"
            )
        if not code_public(date, self.wall()):
            return self._page(m, date.isoformat(), None, StoredBoard(0, m.offset, (), None))
        board = await self.store.archive_board(
            date=date, offset=m.offset, limit=m.limit, player_id=player_id, around=m.around
        )
        return await self._day_page(m, date, board)

    @staticmethod
    def _page(
        m: Board, date: str | None, code: str | None, board: StoredBoard, par: int | None = None
    ) -> BoardPage:
        return BoardPage(
            kind=m.kind,
            date=date,
            code=code,
            total=board.total,
            offset=board.offset,
            rows=tuple(_row(e) for e in board.rows),
            you=_row(board.you) if board.you else None,
            par=par,
        )

    async def _history(self, m: History, player_id: int) -> HistoryPage:
        history = await self.store.history(player_id=player_id, offset=m.offset, limit=m.limit)
        wall = self.wall()
        rows = tuple(
            HistoryRow(
                finished_ms=_unix_ms(h.finished_at),
                code=None
                if h.daily_date is not None and not code_public(h.daily_date, wall)
                else h.code,
                room=h.room,
                date=h.daily_date.isoformat() if h.daily_date else None,
                practice=h.practice,
                outcome=h.outcome,
                rank=h.rank,
                players=h.players,
                time_ms=h.time_ms,
                moves=h.moves,
                score=h.score,
                foundations=h.foundations,
                undos=h.undos,
                hinted=h.hinted,
                race=h.race,
            )
            for h in history.rows
        )
        return HistoryPage(history.games, history.wins, history.best_time_ms, history.offset, rows)
