"""``RoomViews``: what a member is shown of the room: the ``room`` and ``race`` messages,
the deal's code when it may be public, and everything again after a resume (``resync``).
"""

from __future__ import annotations

from protocol.commitment import commitment
from protocol.messages import Countdown, Progress, RoomPlayer
from protocol.messages import Race as RaceMsg
from protocol.messages import Room as RoomMsg

from ...domain.daily import code_public
from ...domain.race import Runner
from .kinds import M, RoomState
from .progress import RoomProgress

__all__ = ["RoomViews"]


class RoomViews(RoomProgress[M]):
    """A room that shows itself: its messages, resent after a resume."""

    def resync(self, p: M, now: float) -> None:
        """After a resume: the room, the player's own race, progress, and any result."""
        self.send(p, self.room_msg(p))
        race = self.race
        if race is not None and self.state in (RoomState.RACING, RoomState.FINISHED):
            runner = race.runners.get(p.name)
            if runner is not None and not p.spectator:
                self.send(p, self.race_msg(runner, now))
            self.send(
                p,
                Progress(
                    race.elapsed_ms(now), race.progress(self.connected()), race.ghost_progress(now)
                ),
            )
        if self.state == RoomState.COUNTDOWN:
            self.send(p, Countdown(max(0, int((self.countdown_until - now) * 1000))))
        if self.result is not None:
            self.send(p, self.result)

    def room_changed(self, now: float, *, progress: bool = True, skip: M | None = None) -> None:
        """Every member (but ``skip``) gets the room again, and progress if it is racing."""
        for m in self.members():
            if m is not skip:
                self.send(m, self.room_msg(m))
        if progress and self.race is not None and self.state == RoomState.RACING:
            self.progress(now, skip=skip)

    def public_code(self) -> str | None:
        """A daily deal's code stays secret until ``code_public``; a race's, until its end."""
        if self.daily is not None:
            return str(self.deal) if code_public(self.daily, self._wall()) else None
        return (
            str(self.deal) if self.fixed is not None or self.state == RoomState.FINISHED else None
        )

    def room_msg(self, viewer: M) -> RoomMsg:
        code = self.public_code()
        return RoomMsg(
            room=self.code,
            you="spectator" if viewer.spectator else "player",
            host=self.host.name,
            state=self.state.value,
            rules=str(self.rules),
            code=code,
            max_players=self.max_players,
            undo=self.undo,
            hints=self.hints,
            time_limit=self.time_limit,
            players=tuple(
                RoomPlayer(
                    m.name,
                    m is self.host or m.name in self.ready,
                    m.connected,
                    m.rating,
                    m.provisional and m.rating is not None,
                    m.bot,
                )
                for m in self.players
            ),
            spectators=len(self.spectators),
            commitment=commitment(self.deal, self.salt) if self.salt else None,
            salt=self.salt if code else None,
            ghost=self.ghost.name if self.ghost else None,
            rated=self.rated,
            quick=self.quick,
            bots=self.bots,
            key=self.invite_key,
            winnable=self.winnable,
        )

    def race_msg(self, runner: Runner, now: float) -> RaceMsg:
        assert self.race is not None
        game = runner.game
        return RaceMsg(
            view=game.view(),
            elapsed_ms=self.race.elapsed_ms(now),
            time_limit=self.time_limit,
            seq=runner.last_seq,
            score=game.score,
            moves=game.move_count,
            state=runner.state.value,
        )
