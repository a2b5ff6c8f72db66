"""The daily deal: a private room per attempt, dealt once storage has numbered it.

``ask`` reserves the room first (``Shared.daily_rooms``) and asks storage to number the
attempt (``BeginDaily``); ``begun`` deals it, ``refused`` says why not. The deal itself
and when its code goes public are ``server.domain.daily``'s.
"""

from __future__ import annotations

import datetime as dt
import logging

from protocol import GameCode
from protocol.commitment import commitment
from protocol.messages import DailyDeal

from ..domain.daily import counts_on_board, next_daily_ms, parse_archive_date, utc_date
from .effects import BeginDaily
from .play import Play
from .room import Room
from .shared import Part, Shared
from .state import _Conn, _Player

__all__ = ["Dailies"]

log = logging.getLogger("yukon.rooms")


class Dailies(Part):
    """Daily attempts, from the player's ask to the race that starts with the deal."""

    def __init__(self, shared: Shared, play: Play) -> None:
        super().__init__(shared)
        self._play = play

    def ask(self, c: _Conn, p: _Player, now: float, archive: str | None = None) -> None:
        """``daily``: today's deal, or with ``archive`` (a ``YYYY-MM-DD``) a past day's deal
        as practice, refused with ``not_archived`` unless that day's code is public."""
        date = utc_date(self._wall())
        if archive is not None:
            day = parse_archive_date(archive, self._wall())
            if isinstance(day, str):
                self._error(c, "not_archived", day)
                return
            date = day
        # A room whose race is over for the player (their finished attempt, a finished
        # race elsewhere) makes way for the attempt: left, with ``left`` (issue 28).
        if not self._play.leave_over(c, p, now):
            return
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return
        if not self._attempts_left(c, p, now):
            return
        # Every refusal comes before storage numbers the attempt: the room is reserved now.
        if self._play.rooms_full():
            self._error(c, "server_full", "this server has no room for another room; try later")
            return
        code = self._play.free_room_code()
        if code is None:
            self._play.no_code(c)
            return
        self._daily_rooms[p.id] = code
        p.daily_pending = True
        self._out.append(BeginDaily(c.id, p.id, date, archive=archive is not None))

    def _attempts_left(self, c: _Conn, p: _Player, now: float) -> bool:
        """May the player begin one more attempt (``max_attempts_per_player`` and
        ``..._per_address`` per ``attempt_window_s``)? Counts it if so: every attempt
        is stored, so practice without end is storage without end (issue 40, item 8)."""
        mine, theirs = self._shared.player_attempts, self._shared.address_attempts
        who = str(p.id)
        if mine.full(who, now) or (c.key and theirs.full(c.key, now)):
            wait = max(mine.retry_after(who, now), theirs.retry_after(c.key, now) if c.key else 0)
            self._error(
                c,
                "too_many_attempts",
                f"too many daily attempts in the last hour: try again in {max(1, round(wait))} s",
            )
            return False
        mine.add(who, now)
        if c.key:
            theirs.add(c.key, now)
        return True

    def begun(
        self,
        player_id: int,
        *,
        date: dt.date,
        attempt: int,
        deal: GameCode,
        par: int | None = None,
        salt: str | None = None,
        archive: bool = False,
        now: float,
    ) -> None:
        """The day's deal is known (``server.domain.daily``) and storage numbered the attempt: deal
        it now; the player's clock starts as it is sent. ``par`` goes to the player with it.

        Addressed by player, not connection: a player who reconnected meanwhile gets the deal
        on the new connection, and one who dropped meanwhile finds the attempt running when
        they resume, as after any drop during a race. The room was reserved when the player
        asked (``ask``), so nothing here refuses a numbered attempt: only a player whose
        resume window ran out meanwhile has used it without playing.
        """
        code = self._daily_rooms.pop(player_id, None)
        p = self._players.get(player_id)
        if p is None or not p.daily_pending or code is None or code in self._rooms:
            log.info("player %d: daily attempt %d began with nobody to play it", player_id, attempt)
            return
        p.daily_pending = False
        if p.room is not None:  # cannot happen: a pending daily refuses create and join
            log.warning("%s: daily attempt %d began while in a room", p.name, attempt)
            return
        young = not counts_on_board(p.registered, self._wall(), self._config.daily_min_age_s)
        room = Room(
            self._play,
            code,
            p,
            deal.rules,
            None,
            deal,
            1,
            True,
            self._config.daily_time_limit,
            daily=date,
            attempt=attempt,
            practice=attempt > 1 or young or archive,
            salt=salt,
            archive=archive,
        )
        room.winnable = par is not None  # the daily is chosen proven: its par is the line's
        room.seat_player(p)
        self._rooms[code] = room
        log.info(
            "%s began daily %s, attempt %d%s",
            p.name,
            date,
            attempt,
            " (archive practice)"
            if archive
            else " (practice: registered too recently)"
            if young and attempt == 1
            else "",
        )
        self._send(
            p,
            DailyDeal(
                date.isoformat(),
                attempt,
                room.practice,
                str(deal.rules),
                par,
                commitment=commitment(deal, salt) if salt else None,
                archive=archive,
                next_daily_ms=next_daily_ms(self._wall()),
            ),
        )
        room.start_race(now)

    def refused(self, player_id: int, *, code: str, text: str) -> None:
        """The attempt could not begin (``code``, ``text``): the player may ask again."""
        self._daily_rooms.pop(player_id, None)
        p = self._players.get(player_id)
        if p is not None:
            p.daily_pending = False
            c = self._conns.get(p.conn) if p.conn is not None else None
            if c is not None:
                self._error(c, code, text)
