"""``RoomLobby``: a room's members and its lobby: they enter (to race or to watch),
leave, lose their connection and come back, or their resume window passes; in the lobby
they say ready, the host starts the countdown, and after a race anyone asks for the
rematch.
"""

from __future__ import annotations

import logging

from protocol.messages import Countdown, Error

from ..timers import TimerKind
from .kinds import M, Refusal, RoomState
from .race import RoomRace

__all__ = ["RoomLobby"]

log = logging.getLogger("yukon.rooms")


class RoomLobby(RoomRace[M]):
    """A room with members: who enters and leaves, and its lobby."""

    def seat_player(self, p: M) -> None:
        """A player seated without a word to anyone: the room's first, its host (the
        creator then tells the room), or one of a room being rebuilt."""
        self.players.append(p)
        p.room = self
        p.spectator = False

    def seat_spectator(self, p: M) -> None:
        """A spectator seated without a word to anyone (a room being rebuilt)."""
        self.spectators.append(p)
        p.room = self
        p.spectator = True

    def enter(self, p: M, now: float, *, spectator: bool) -> Refusal | None:
        """A player joins (or watches) the room by its code."""
        if not spectator:
            if p.bot and not self.bots:
                return Refusal("no_bots", "this room does not take BOT accounts: ask its host")
            if self.state not in (RoomState.LOBBY, RoomState.FINISHED):
                return Refusal("race_running", "this room is racing; watch it, or join after")
            if len(self.players) >= self.max_players:
                return Refusal(
                    "room_full", f"room {self.code} is full ({self.max_players} players)"
                )
            self.players.append(p)
        else:
            self.spectators.append(p)
        p.room = self
        p.spectator = spectator
        if spectator:
            self.room_changed(now, progress=False, skip=p)
            self.resync(p, now)
        else:
            self.room_changed(now, progress=False)
        return None

    def leave(self, p: M, now: float) -> Refusal | None:
        """A member leaves (the session then tells them ``left``); a runner resigns first."""
        race = self.race
        if not p.spectator and race is not None and self.state == RoomState.RACING:
            runner = race.runners.get(p.name)
            if runner is not None and not runner.done:
                return Refusal("in_race", "you are racing: resign first, then leave")
            if runner is not None:  # a restart must not bring them back into the room
                self.journal(p.id, None, "leave", race.elapsed_ms(now))
        self.remove_member(p, now)
        return None

    def remove_member(self, p: M, now: float) -> None:
        if p in self.players:
            self.players.remove(p)
        if p in self.spectators:
            self.spectators.remove(p)
        self.ready.discard(p.name)
        p.room = None
        p.spectator = False
        if self.host is p and self.players:
            self.host = self.players[0]
        if not self.players:
            for s in list(self.spectators):
                self.send(s, Error("room_closed", f"room {self.code} closed: every player left"))
                s.room = None
                s.spectator = False
            self.spectators.clear()
            self._outside.vacated(self)
            log.info("room %s closed", self.code)
            return
        self.room_changed(now)

    def expire(self, p: M, now: float) -> None:
        """The member's resume window passed: abandon any race, leave the room."""
        race = self.race
        if race is not None and self.state == RoomState.RACING and not p.spectator:
            runner = race.runners.get(p.name)
            if runner is not None and not runner.done:
                race.abandon(runner, now)
                self.journal(p.id, None, "abandon", race.elapsed_ms(now))
                log.info("room %s: %s abandoned the race", self.code, p.name)
                self.check_over()
        self.remove_member(p, now)

    def disconnected(self, now: float) -> None:
        """A member's session lost its connection (``connected`` is False already)."""
        if self.state in (RoomState.LOBBY, RoomState.FINISHED):
            self.hand_over_if_away()
        self.room_changed(now)

    def reconnected(self, p: M, now: float) -> None:
        """A member is connected again: they get what they missed, the others see them.
        A runner's return is marked in their race (``Runner.resumed_at``): what their
        client resends now comes in a burst that says nothing of how they play."""
        race = self.race
        runner = race.runners.get(p.name) if race is not None else None
        if runner is not None and not runner.done:
            runner.resumed_at.append(len(runner.journal_ms))
        self.resync(p, now)
        self.room_changed(now, skip=p)

    # -- the lobby --------------------------------------------------------------------------

    def _as_player(self, p: M) -> Refusal | None:
        if p.spectator:
            return Refusal("not_player", "spectators watch; they cannot play")
        return None

    def _as_host(self, p: M, state: RoomState, action: str, wrong_state: str) -> Refusal | None:
        """None if ``p`` hosts the room and it is in ``state``; else why not."""
        if p.spectator:
            return Refusal("not_player", "spectators watch; they cannot play")
        if self.host is not p:
            return Refusal("not_host", f"only the host ({self.host.name}) {action}")
        if self.state != state:
            return Refusal("wrong_state", f"{wrong_state} (it is {self.state})")
        return None

    def set_ready(self, p: M, ready: bool, now: float) -> Refusal | None:
        refusal = self._as_player(p)
        if refusal is not None:
            return refusal
        if self.state != RoomState.LOBBY:
            return Refusal("wrong_state", "ready is for the lobby, before the race")
        if ready:
            self.ready.add(p.name)
        else:
            self.ready.discard(p.name)
        self.room_changed(now, progress=False)
        return None

    def start(self, p: M, now: float) -> Refusal | None:
        refusal = self._as_host(
            p, RoomState.LOBBY, "starts the race", "the room is not in the lobby"
        )
        if refusal is not None:
            return refusal
        waiting = [m.name for m in self.players if m is not p and m.name not in self.ready]
        if waiting:
            return Refusal("not_ready", "not ready yet: " + ", ".join(waiting))
        cfg = self._config
        self._enter(RoomState.COUNTDOWN)
        self.countdown_until = now + cfg.countdown_s
        self._timer(self.countdown_until, TimerKind.COUNTDOWN, self)
        countdown = Countdown(int(cfg.countdown_s * 1000))
        for m in self.members():
            self.send(m, countdown)
        self.room_changed(now, progress=False)
        return None

    def countdown_over(self, now: float) -> None:
        """The countdown's timer: the race starts if the countdown is still on."""
        if self.state == RoomState.COUNTDOWN and self.countdown_until <= now:
            self.start_race(now)

    def rematch(self, p: M, now: float) -> Refusal | None:
        """Any racing member, not only the host, may ask for the rematch once the race is
        over (issue 28: "race again" for everyone); its effect is the same whoever asks."""
        refusal = self._as_player(p)
        if refusal is not None:
            return refusal
        if self.state != RoomState.FINISHED:
            return Refusal("wrong_state", f"a rematch follows a finished race (it is {self.state})")
        if self.daily is not None and self.ghost is None:
            return Refusal("wrong_state", "a daily deal has no rematch; ask for the daily again")
        self._enter(RoomState.LOBBY)
        self.race = None
        self.result = None
        self.ghost_due = None
        self.ready.clear()
        if self.ghost is None:  # a ghost room races the same run on its deal again
            # a rematch is always a new deal, drawn in secret (winnable if the room wants)
            self._outside.redeal(self)
        self.room_changed(now, progress=False)
        return None
