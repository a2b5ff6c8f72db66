"""A room: its members, its race, its clock and its messages, as a unit of its own.

A ``Room`` holds everything of one room (members, host, ready, the countdown, the race, the
ids and journal numbering, the held ``progress``, a ghost and its timer, the result, a daily
attempt's fields) and does everything a room does: members enter and leave, ready, the
countdown, the race's moves, undos and resignations, time limits, the end of the race and
its result after the commit, rematches, the ghost's timer, the journal's entries, a
member's resync, and the ``room`` and ``race`` messages.

It sees the world only through ``Outside`` (docs/architecture.md): a message delivered to
a member, wherever that member's session is (a connection here, or a guest whose gateway
is another node: the room cannot tell); a storage effect (``Journal``, ``Persist``); a
timer; the clocks; the config; a new deal, salt or race id. It never sees a connection,
the hub's tables, a flood bucket, an address or a node. A request it refuses for a room
reason returns a ``Refusal`` (the error's code, text and ``seq``), which the session
answers to its connection; the room itself answers nobody.

Members are ``Member`` records (the hub's players): an id, a name, whether their session
is connected, and the seat the room keeps on them (``room``, ``spectator``). A room is
rebuilt from its journal (``Room.rebuild``): after a restart, and when another node takes
it over (docs/cluster.md), which is how a room is handed over.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from protocol import GameCode, Rules
from protocol.commitment import commitment
from protocol.messages import (
    Accepted,
    Countdown,
    Error,
    Message,
    Progress,
    RankEntry,
    Refused,
    Result,
    RoomPlayer,
    Undone,
)
from protocol.messages import (
    Race as RaceMsg,
)
from protocol.messages import (
    Room as RoomMsg,
)

from ..domain.daily import code_public, code_public_at
from ..domain.race import Ghost, Race, Runner
from ..domain.records import GhostRun, LiveAction, LiveRace, PlayerResult, RaceRecord, RatingChange
from .config import HubConfig
from .effects import Effect, Journal
from .timers import TimerKind

__all__ = [
    "OVERTAKE",
    "TRANSITIONS",
    "IllegalTransition",
    "Member",
    "Outside",
    "Refusal",
    "Room",
    "RoomState",
]

log = logging.getLogger("yukon.rooms")


class RoomState(enum.StrEnum):
    """A room's state. The values are the wire's (``room.state``, docs/protocol.md 3.3,
    ``protocol.messages.ROOM_STATES``), but for ``LOST``, which no client sees: another
    node holds the room now, and what is left of it here answers nothing."""

    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"
    LOST = "lost"


#: The states a room may go to from each state, as data (as h11 writes its own): the one
#: place that changes a room's state (``Room._enter``) checks it. A lobby races at once
#: for a daily attempt and when its race is rebuilt from the journal (``Room.rebuild``);
#: any state may be lost to another node; nothing comes back from lost.
TRANSITIONS: dict[RoomState, frozenset[RoomState]] = {
    RoomState.LOBBY: frozenset({RoomState.COUNTDOWN, RoomState.RACING, RoomState.LOST}),
    RoomState.COUNTDOWN: frozenset({RoomState.RACING, RoomState.LOST}),
    RoomState.RACING: frozenset({RoomState.FINISHED, RoomState.LOST}),
    RoomState.FINISHED: frozenset({RoomState.LOBBY, RoomState.LOST}),
    RoomState.LOST: frozenset(),
}


class IllegalTransition(RuntimeError):
    """A room was told to go to a state its own can not lead to: a bug in the server,
    never a player's doing (a player's wrong request is refused before, with
    ``wrong_state``)."""


#: Frames that go out without first releasing a held ``progress``: the answers to a
#: player's own moves (they may overtake it, docs/protocol.md 4.11), and progress itself.
OVERTAKE = (Accepted, Refused, Undone, Progress)


class Member(Protocol):
    """A member as a room sees it: who, whether connected, and the seat the room keeps.

    ``room`` and ``spectator`` are the room's to set (a member enters, leaves, or is left
    alone when the room closes); the session reads ``room`` to route a request."""

    id: int
    name: str
    spectator: bool
    room: Room[Any] | None
    #: The member's rating, rounded (None: none yet), and whether it is provisional: what
    #: ``room`` shows beside the name (the hub sets both, docs/ratings.md).
    rating: int | None
    provisional: bool

    @property
    def connected(self) -> bool: ...


M = TypeVar("M", bound=Member)


class Outside(Protocol[M]):
    """Everything a room may do or know beyond itself (the hub's ``Play`` is one)."""

    @property
    def now(self) -> float:
        """The time of the event at hand (monotonic seconds)."""
        ...

    @property
    def config(self) -> HubConfig:
        """The server's numbers (``countdown_s``, ``progress_hold_s``)."""
        ...

    def wall(self) -> float:
        """Wall time (seconds since the epoch): dates, the daily deal, records."""
        ...

    def deliver(self, member: M, message: Message) -> None:
        """Send ``message`` to ``member``'s session, if it is connected (here or away)."""
        ...

    def emit(self, effect: Effect) -> None:
        """A storage effect (``Journal``)."""
        ...

    def persist(self, room: Room[M], record: RaceRecord) -> None:
        """The race is over: store it; the commit comes back as ``Room.committed``."""
        ...

    def timer(self, when: float, kind: TimerKind, room: Room[M]) -> None:
        """Wake the room at ``when``: ``countdown``, ``progress``, ``ghost``, ``limit``."""
        ...

    def new_race_id(self) -> tuple[int, str]:
        """A race id unique in this process, and the race's uid across restarts."""
        ...

    def random_deal(self) -> int | bytes: ...

    def new_salt(self) -> str: ...

    def vacated(self, room: Room[M]) -> None:
        """The last player left: the room is gone (its code, its counts)."""
        ...


def rated_ranks(
    ranks: Sequence[RankEntry], ids: Mapping[str, int], ratings: Mapping[int, RatingChange]
) -> tuple[RankEntry, ...]:
    """A rated race's ranks with each runner's rating after it and its change (as storage
    committed them, docs/protocol.md 4.27)."""
    out = []
    for entry in ranks:
        change = ratings.get(ids.get(entry.name, -1))
        if change is not None:
            entry = dataclasses.replace(entry, rating=change.rating, rating_change=change.change)
        out.append(entry)
    return tuple(out)


class Refusal(NamedTuple):
    """A request the room refused: the session answers it as an ``error``."""

    code: str
    text: str
    seq: int | None = None


#: Held progress is due on this grid of the server's clock (``progress_due``).
PROGRESS_GRID_S = 0.025


def progress_due(now: float, hold: float) -> float:
    """When a progress held at ``now`` goes out: ``hold`` later, rounded down to the grid
    (so between ``hold - PROGRESS_GRID_S`` and ``hold``: the protocol's "up to" holds).

    Why: every room whose hold ends in the same slot of the grid is then released by one
    timer, in one turn of the event loop, instead of each room waking the server on its
    own; at a move a second per player, those wake-ups cost the server more CPU than
    the frames themselves (docs/performance.md, issue 27).
    """
    target = now + hold
    if hold <= PROGRESS_GRID_S:
        return target
    due = math.floor(target / PROGRESS_GRID_S + 1e-9) * PROGRESS_GRID_S
    if target - due < 1e-9:  # on the grid already (within rounding)
        return target
    return due


class Room(Generic[M]):
    """One room, from its creation to its last player leaving (see the module docstring)."""

    def __init__(
        self,
        outside: Outside[M],
        code: str,
        host: M,
        rules: Rules,
        fixed: GameCode | None,
        deal: GameCode,
        max_players: int,
        undo: bool,
        time_limit: int,
        *,
        daily: dt.date | None = None,
        attempt: int = 0,
        practice: bool = False,
        hints: bool = False,
        salt: str | None = None,
        ghost: GhostRun | None = None,
        rated: bool = False,
        archive: bool = False,
    ) -> None:
        self._outside = outside
        # Bound once: the move path reaches them without a lookup on ``outside``.
        self._deliver = outside.deliver
        self._emit = outside.emit
        self._timer = outside.timer
        self._config = outside.config
        self._wall = outside.wall
        self.code = code
        self.host = host
        self.rules = rules
        self.fixed = fixed
        self.deal = deal
        self.max_players = max_players
        self.undo = undo
        self.time_limit = time_limit
        self.players: list[M] = []
        self.spectators: list[M] = []
        self.ready: set[str] = set()
        self.state = RoomState.LOBBY
        self.countdown_until = 0.0
        self.race: Race | None = None
        self.race_id = 0
        self.started_wall = 0.0
        self.finishing = False
        self.result: Result | None = None
        #: The date of the daily deal this private room plays, None for a normal room.
        self.daily = daily
        self.attempt = attempt
        #: A daily attempt kept off the boards: a later attempt, or a player too young.
        self.practice = practice
        #: Player ids by name, fixed when the race starts (a player may leave before the end).
        self.ids: dict[str, int] = {}
        #: The race's id across restarts (``RaceRecord.uid``), and its journal's next number.
        self.uid = ""
        self.journal_n = 0
        #: Runners may ask for hints (never in a daily room).
        self.hints = hints
        #: The salt of the commitment to a deal the server drew in secret (None for a deal
        #: the host chose by its code, which is public anyway): revealed with the code.
        self.salt = salt
        #: When a held ``progress`` is due (monotonic seconds), or None: nothing held.
        self.progress_due: float | None = None
        #: Whose moves the held ``progress`` shows: one runner (who then does not get it:
        #: their ``accepted`` told them), or None once a second runner moved in the hold.
        self.progress_mover: M | None = None
        #: A ghost room: the stored run raced alongside each race of the room (``ghost``).
        self.ghost = ghost
        #: When the ghost's figures next change (monotonic seconds): its timer, or None.
        self.ghost_due: float | None = None
        #: Its races change their runners' ratings (docs/ratings.md; never a daily or a
        #: ghost room: ``Play`` creates those unrated).
        self.rated = rated
        #: A room the quick-race pool formed (``quick.Quick.seat``; docs/protocol.md 4.26).
        self.quick = False
        #: A past day's deal played from the archive (``daily`` is that day, whose code is
        #: public): practice, never cut at the code's publication, on the archive board.
        self.archive = archive

    def members(self) -> list[M]:
        return self.players + self.spectators

    def connected(self) -> dict[str, bool]:
        """Which players are connected, by name (what ``progress`` shows)."""
        return {m.name: m.connected for m in self.players}

    @property
    def private(self) -> bool:
        """A daily or ghost room: nobody joins or watches it by its code."""
        return self.daily is not None or self.ghost is not None

    # -- members ----------------------------------------------------------------------------

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
        """A member is connected again: they get what they missed, the others see them."""
        self.resync(p, now)
        self.room_changed(now, skip=p)

    def hand_over_if_away(self) -> None:
        """A host who is away must not hold the others back from starting or a rematch."""
        host = self.host
        if not host.connected:
            present = [m for m in self.players if m.connected]
            if present:
                self.ready.add(host.name)  # a host never says ready; keep them counted so
                self.host = present[0]

    # -- the lobby --------------------------------------------------------------------------

    def _as_player(self, p: M) -> Refusal | None:
        if p.spectator:
            return Refusal("not_player", "spectators watch; they cannot play")
        return None

    def _enter(self, state: RoomState) -> None:
        """Go to ``state``, if ``TRANSITIONS`` allows it from the room's own."""
        if state not in TRANSITIONS[self.state]:
            raise IllegalTransition(f"room {self.code}: {self.state} cannot go to {state}")
        self.state = state

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
            self.fixed = None  # a rematch is always a new deal, drawn at random
            self.deal = GameCode(self.rules, self._outside.random_deal())
            self.salt = self._outside.new_salt()
        self.room_changed(now, progress=False)
        return None

    # -- the race ---------------------------------------------------------------------------

    def start_race(self, now: float) -> None:
        self.race_id, self.uid = self._outside.new_race_id()
        race = self.race = Race(
            self.deal,
            [m.name for m in self.players],
            started=now,
            time_limit_s=self.time_limit,
            undo=self.undo,
        )
        self.started_wall = self._wall()
        self.ids = {m.name: m.id for m in self.players}
        self.journal_n = 0
        self._enter(RoomState.RACING)
        self.result = None
        self.limit_timers(race, now)
        self._emit(
            Journal(
                LiveRace(
                    uid=self.uid,
                    room=self.code,
                    code=str(self.deal),
                    rules=str(self.rules),
                    daily_date=self.daily,
                    attempt=self.attempt,
                    undo=self.undo,
                    time_limit=self.time_limit,
                    max_players=self.max_players,
                    fixed=self.fixed is not None,
                    host_id=self.host.id,
                    players=tuple((m.id, m.name) for m in self.players),
                    started_wall=self.started_wall,
                    hints=self.hints,
                    salt=self.salt,
                    practice=self.practice,
                    ghost_race=self.ghost.race if self.ghost else None,
                    ghost_player=self.ghost.name if self.ghost else None,
                    rated=self.rated,
                    archive=self.archive,
                    quick=self.quick,
                )
            )
        )
        self.ghost_begins(race, now)
        log.info(
            "room %s: race %d started with %d players", self.code, self.race_id, len(self.players)
        )
        for m in self.players:
            runner = race.runners[m.name]
            self.send(m, self.race_msg(runner, now))
        self.room_changed(now)
        self.check_over()

    def runner(self, p: M, seq: int | None) -> Runner | Refusal:
        """``p``'s runner in the race, or why they have none."""
        if p.spectator:
            return Refusal("not_player", "spectators watch; they cannot play", seq)
        race = self.race
        if race is None or self.state not in (RoomState.RACING, RoomState.FINISHED):
            return Refusal("no_race", "the race has not started", seq)
        runner = race.runners.get(p.name)
        if runner is None:
            return Refusal("not_player", "you are not in this race", seq)
        return runner

    def move(self, p: M, seq: int, move: str | None, now: float) -> Refusal | None:
        """A move (``move`` None: an undo) of runner ``p``; the answer goes to ``p``."""
        runner = self._new_action(p, seq, now)
        if not isinstance(runner, Runner):
            return runner
        race = self.race
        assert race is not None
        before = runner.state
        reply = (
            race.move(runner, seq, move, now) if move is not None else race.undo(runner, seq, now)
        )
        self._deliver(p, reply)
        if reply.TYPE != "refused":
            self.journal(p.id, seq, move or "undo", race.elapsed_ms(now))
            if runner.state is before:
                # Nobody's race ended: a runner is done only by a change of its state
                # (the time limit's ends are ``enforce_limit``'s, which checks itself).
                self._hold_progress(p, now)
            else:  # won, stuck, or unstuck: everyone sees it at once
                self.progress(now)
                self.check_over()
        return None

    def _new_action(self, p: M, seq: int, now: float) -> Runner | Refusal | None:
        """The runner for a new move, undo or finish of ``p`` with ``seq`` (the time limit
        enforced first); or a refusal; or None: ``seq`` was answered before, and its answer
        has gone again (``_answer_again``)."""
        runner = self.runner(p, seq)
        if isinstance(runner, Refusal):
            return runner
        self.enforce_limit(now)
        if seq <= runner.last_seq:
            return self._answer_again(p, runner, seq, now)
        if runner.done:
            return Refusal("finished", f"your race is over ({runner.state.value})", seq)
        return runner

    def _answer_again(self, p: M, runner: Runner, seq: int, now: float) -> Refusal | None:
        """A resent ``seq`` (of a move, an undo or a finish) gets its first answer again."""
        race = self.race
        assert race is not None
        if race.finished_by(runner, seq):  # a finish's answer: the race state, as it is
            self.send(p, self.race_msg(runner, now))
            return None
        reply = race.replay_of(runner, seq)
        if reply is None:
            return Refusal("stale_seq", f"seq {seq} is older than the last {runner.last_seq}", seq)
        self._deliver(p, reply)  # an answer to their own move: it may overtake progress
        return None

    def finish(self, p: M, seq: int, now: float) -> Refusal | None:
        """Runner ``p`` asks the server to play out their game, every card face up
        (docs/protocol.md 4.24): checked as a move is; then the moves are played, each
        journaled as the runner's own with this ``seq``, at the clock of the request; the
        answer is ``race`` (or ``refused`` ``cannot_finish``), then ``progress`` to all."""
        runner = self._new_action(p, seq, now)
        if not isinstance(runner, Runner):
            return runner
        race = self.race
        assert race is not None
        played = race.finish(runner, seq, now)
        if not isinstance(played, list):
            self._deliver(p, played)
            return None
        ms = race.elapsed_ms(now)
        for move in played:
            self.journal(p.id, seq, move, ms)
        log.info("room %s: %s finished with %d moves", self.code, p.name, len(played))
        self.send(p, self.race_msg(runner, now))
        self.progress(now)
        self.check_over()
        return None

    def over_for(self, p: M) -> bool:
        """Is the race over for member ``p``, so that going elsewhere (``join``, ``create``,
        ``daily``, ``ghost``) may leave the room for them (docs/protocol.md 4.14)? For a
        spectator always; in a finished room; for a runner who is done and only waits."""
        if p.spectator or self.state == RoomState.FINISHED:
            return True
        race = self.race
        if self.state != RoomState.RACING or race is None:
            return False
        runner = race.runners.get(p.name)
        return runner is None or runner.done

    def resign(self, p: M, now: float) -> Refusal | None:
        runner = self.runner(p, None)
        if isinstance(runner, Refusal):
            return runner
        race = self.race
        assert race is not None
        self.enforce_limit(now)
        if runner.done:
            return Refusal("finished", f"your race is over ({runner.state.value})")
        race.resign(runner, now)
        self.journal(p.id, None, "resign", race.elapsed_ms(now))
        log.info("room %s: %s resigned", self.code, p.name)
        self.progress(now)
        self.check_over()
        return None

    def enforce_limit(self, now: float) -> None:
        """Past the time limit nobody plays on, whether or not the timer has fired yet; nor
        on a daily attempt once its day's code is public (``code_public``: only a race
        resumed after a restart, whose down time was not charged, can run that long)."""
        race = self.race
        if race is None or self.state != RoomState.RACING:
            return
        if race.expire(now) or (
            self.daily is not None
            and not self.archive
            and code_public(self.daily, self._wall())
            and race.cut(now)
        ):
            self.progress(now)
            self.check_over()

    def limit_timers(self, race: Race, now: float) -> None:
        """Wake up at the race's time limit, and a daily attempt also when its code goes
        public if that comes first (wall time, so a moved clock at worst ends it late:
        every move checks too). That is never the case for an attempt begun on its day
        with the usual limit, so no timer holds an ordinary room for a day."""
        self._timer(race.deadline, TimerKind.LIMIT, self)
        if self.daily is not None and not self.archive:
            public = now + max(0.0, code_public_at(self.daily) - self._wall())
            if public < race.deadline:
                self._timer(public, TimerKind.LIMIT, self)

    def check_over(self) -> None:
        """A race whose players are all done goes to storage; the result follows the commit."""
        race = self.race
        if (
            self.state == RoomState.RACING
            and race is not None
            and not self.finishing
            and race.is_over()
        ):
            self.finishing = True
            ranks = {e.name: e for e in race.ranks()}
            rows = tuple(
                PlayerResult(
                    player_id=self.ids[r.name],
                    name=r.name,
                    rank=ranks[r.name].rank,
                    outcome=r.state.value,
                    time_ms=ranks[r.name].time_ms,
                    moves=r.game.move_count,
                    score=r.game.score,
                    foundations=r.game.cards_on_foundations,
                    undos=r.undos,
                    practice=self.practice,
                    journal=tuple(r.journal),
                    hinted=r.hinted,
                )
                for r in race.runners.values()
            )
            self._outside.persist(
                self,
                RaceRecord(
                    uid=self.uid,
                    race_id=self.race_id,
                    room=None if self.daily else self.code,
                    code=str(self.deal),
                    rules=str(self.rules),
                    daily_date=self.daily,
                    started_wall=self.started_wall,
                    ended_wall=self._wall(),
                    results=rows,
                    rated=self.rated,
                    archive=self.archive,
                ),
            )

    def committed(
        self, race_id: int, now: float, ratings: Mapping[int, RatingChange] | None = None
    ) -> None:
        """Storage has committed race ``race_id``: now, and only now, announce the result,
        with the ratings storing it changed (``ratings``, by player id: a rated race)."""
        if self.race_id != race_id:
            return
        assert self.race is not None
        self.finishing = False
        self._enter(RoomState.FINISHED)
        code = self.public_code()
        ranks = self.race.ranks()
        if ratings:
            ranks = rated_ranks(ranks, self.ids, ratings)
        result = self.result = Result(
            code=code,
            ranks=ranks,
            salt=self.salt if code else None,
            race=self.uid,
            ghost=self.race.ghost_rank(ranks),
        )
        log.info(
            "room %s: race %d over, %s; winner %s",
            self.code,
            race_id,
            code or "a secret deal",
            result.ranks[0].name if result.ranks else "-",
        )
        for m in self.members():
            self.send(m, result)
        self.hand_over_if_away()
        self.room_changed(now, progress=False)

    def lost(self) -> None:
        """Another node holds the room now: its timers find nothing to do here."""
        self.finishing = False
        self._enter(RoomState.LOST)

    # -- hints ------------------------------------------------------------------------------

    def hint_runner(self, p: M, now: float) -> Runner | Refusal:
        """``p``'s runner if they may have a hint now, or why not."""
        if p.spectator:
            return Refusal("not_player", "spectators watch; they cannot ask for hints")
        if not self.hints:
            what = "a daily deal" if self.daily is not None else "this room"
            return Refusal("hints_disabled", f"{what} allows no hints")
        race = self.race
        if race is None or self.state not in (RoomState.RACING, RoomState.FINISHED):
            return Refusal("no_race", "the race has not started")
        runner = race.runners.get(p.name)
        if runner is None:
            return Refusal("not_player", "you are not in this race")
        self.enforce_limit(now)
        if runner.done:
            return Refusal("finished", f"your race is over ({runner.state.value})")
        return runner

    def races(self, uid: str) -> bool:
        """Race ``uid`` is this room's, and running."""
        return self.uid == uid and self.race is not None and self.state == RoomState.RACING

    def hinted(self, p: M, runner: Runner, now: float) -> None:
        """A hint goes to ``p``: the first one marks their run (and the journal)."""
        assert self.race is not None
        if not runner.hinted:
            runner.hinted = True
            self.journal(p.id, None, "hint", self.race.elapsed_ms(now))
            log.info("room %s: %s got a hint; the run ranks after unhinted ones", self.code, p.name)

    # -- the ghost of a ghost room ----------------------------------------------------------

    def ghost_begins(self, race: Race, now: float) -> None:
        """A ghost room's race starts (or is rebuilt): its recorded run starts with it."""
        run = self.ghost
        if run is None:
            return
        race.ghost = Ghost(
            run.name,
            GameCode.parse(run.code),
            run.actions,
            outcome=run.outcome,
            time_ms=run.time_ms,
            moves=run.moves,
            score=run.score,
            foundations=run.foundations,
            hinted=run.hinted,
        )
        self._ghost_timer(race, now)

    def _ghost_timer(self, race: Race, now: float) -> None:
        """Wake up when the ghost's figures next change, while the race runs."""
        ghost = race.ghost
        nxt = None if ghost is None else ghost.next_mark(race.elapsed_ms(now))
        self.ghost_due = None if nxt is None else race.started + nxt / 1000
        if self.ghost_due is not None:
            self._timer(self.ghost_due, TimerKind.GHOST, self)

    def ghost_moves(self, now: float) -> None:
        """The ghost's timer: it played on (its recorded actions up to now). Everyone sees
        it as they would a live opponent's move: held with the others' moves
        (``_hold_progress``), or at once when its state changes (won, stuck, done)."""
        race = self.race
        due = self.ghost_due
        if (
            race is None
            or race.ghost is None
            or due is None
            or due > now
            or self.state != RoomState.RACING
            or self.finishing
        ):
            return
        before = race.ghost.progress(max(0, race.elapsed_ms(due) - 1)).state
        self._ghost_timer(race, now)
        shown = race.ghost_progress(now)
        assert shown is not None
        if shown.state != before or shown.time_ms is not None:
            self.progress(now)
        else:
            self._hold_progress(None, now)

    # -- progress ---------------------------------------------------------------------------

    def _hold_progress(self, mover: M | None, now: float) -> None:
        """A move's ``progress`` waits ``progress_hold_s`` for newer moves in the room.

        Why: four fast players make a progress per move for each of them; held, one
        snapshot goes out per room per hold, built and encoded once, whatever the rate,
        and not to a runner whose own moves are all it shows. Any other frame to a member
        releases it first (``send``), so it never arrives after something that happened
        later.
        """
        hold = self._config.progress_hold_s
        if hold <= 0:  # no hold: at once, to everyone (the worked examples of the docs)
            self.progress(now)
        elif self.progress_due is None:
            self.progress_due = progress_due(now, hold)
            self.progress_mover = mover
            self._timer(self.progress_due, TimerKind.PROGRESS, self)
        elif self.progress_mover is not mover:
            self.progress_mover = None

    def progress_timer(self, now: float) -> None:
        """The held ``progress``'s timer: out it goes, if it is still held and due."""
        due = self.progress_due
        if due is not None and due <= now:
            self.release_progress()

    def release_progress(self) -> None:
        """A held ``progress`` goes out now (before a frame that must not overtake it)."""
        due, mover = self.progress_due, self.progress_mover
        self.progress_due = self.progress_mover = None
        if due is not None and self.race is not None and self.state == RoomState.RACING:
            self.progress(self._outside.now, skip=mover)

    def progress(self, now: float, *, skip: M | None = None) -> None:
        assert self.race is not None
        if self.progress_due is not None:  # a held one goes out now, to everyone
            self.progress_due = self.progress_mover = None
            skip = None
        race = self.race
        msg = Progress(
            race.elapsed_ms(now), race.progress(self.connected()), race.ghost_progress(now)
        )
        for m in self.members():
            if m is not skip:
                self.send(m, msg)

    def send(self, m: M, message: Message) -> None:
        """Send to a member. Any frame but the answers to their own moves first releases
        the held ``progress`` (``_hold_progress``), so that it never arrives after
        something that happened later."""
        if self.progress_due is not None and not isinstance(message, OVERTAKE):
            self.release_progress()
        self._deliver(m, message)

    # -- the journal, resync, messages ------------------------------------------------------

    def journal(self, player_id: int, seq: int | None, action: str, ms: int) -> None:
        self.journal_n += 1
        self._emit(Journal(LiveAction(self.uid, self.journal_n, player_id, seq, ms, action)))

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
                )
                for m in self.players
            ),
            spectators=len(self.spectators),
            commitment=commitment(self.deal, self.salt) if self.salt else None,
            salt=self.salt if code else None,
            ghost=self.ghost.name if self.ghost else None,
            rated=self.rated,
            quick=self.quick,
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

    # -- a room rebuilt from its journal ----------------------------------------------------

    @classmethod
    def rebuild(
        cls,
        outside: Outside[M],
        live: LiveRace,
        players: list[M],
        actions: list[LiveAction],
        alive_ms: int,
        now: float,
        *,
        race_id: int,
        ghost: GhostRun | None = None,
    ) -> Room[M]:
        """A race that was running, rebuilt from its journal (after a restart, or on the
        node that took the room over). Its clock resumes at ``alive_ms`` (the last moment
        the journal knew it was alive): the time the room was away is not charged.
        ``resume`` then sets its timers and tells whoever is connected."""
        host = next((p for p in players if p.id == live.host_id), players[0])
        code = GameCode.parse(live.code)
        room = cls(
            outside,
            live.room,
            host,
            code.rules,
            code if live.fixed else None,
            code,
            live.max_players,
            live.undo,
            live.time_limit,
            daily=live.daily_date,
            attempt=live.attempt,
            practice=live.practice or live.attempt > 1,
            hints=live.hints,
            salt=live.salt,
            ghost=ghost,
            rated=live.rated,
            archive=live.archive,
        )
        room.quick = live.quick
        room.players = players
        room.ready = {p.name for p in players}
        for p in players:
            p.room = room
            p.spectator = False
        room.race_id = race_id
        room.uid = live.uid
        room.ids = {p.name: p.id for p in players}
        room.started_wall = live.started_wall
        started = now - alive_ms / 1000
        race = Race(
            code,
            [p.name for p in players],
            started=started,
            time_limit_s=live.time_limit,
            undo=live.undo,
        )
        room.race = race
        room._enter(RoomState.RACING)
        names = {pid: name for pid, name in live.players}
        for a in sorted(actions, key=lambda a: a.n):
            runner = race.runners[names[a.player_id]]
            at = started + a.at_ms / 1000
            if a.action == "resign":
                race.resign(runner, at)
            elif a.action == "hint":
                runner.hinted = True
            elif a.action in ("abandon", "leave"):
                # Out of the room for good (the result stays in the race).
                if a.action == "abandon":
                    race.abandon(runner, at)
                gone = next(p for p in players if p.id == a.player_id)
                if gone in room.players:
                    room.players.remove(gone)
                    room.ready.discard(gone.name)
                    gone.room = None
            elif a.action == "undo":
                assert a.seq is not None
                race.undo(runner, a.seq, at)
            else:
                assert a.seq is not None
                reply = race.move(runner, a.seq, a.action, at)
                if reply.TYPE == "refused":  # cannot happen with an intact journal
                    log.error("restore %s: journaled move %s refused", live.uid, a.action)
            room.journal_n = max(room.journal_n, a.n)
        if room.host not in room.players and room.players:
            room.host = room.players[0]
        return room

    def resume(self, now: float) -> None:
        """A rebuilt room runs again: its timers, any limit passed meanwhile, the end of a
        race over meanwhile, and what a member connected meanwhile missed (a takeover)."""
        race = self.race
        assert race is not None
        self.limit_timers(race, now)
        self.ghost_begins(race, now)
        self.enforce_limit(now)
        self.check_over()
        for p in self.members():
            if p.connected:
                self.resync(p, now)
