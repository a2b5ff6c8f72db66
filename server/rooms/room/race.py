"""``RoomRace``: the race of a room: it starts, its moves, undos, finishes and
resignations, its time limits, the ghost of a ghost room, hints, the journal, and its end:
the record stored, then the result after the commit.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

from protocol import GameCode
from protocol.messages import RankEntry, Result

from ...domain.daily import code_public, code_public_at
from ...domain.race import Ghost, Race, Runner
from ...domain.records import LiveAction, LiveRace, PlayerResult, RaceRecord, RatingChange
from ..effects import Journal
from ..timers import TimerKind
from .kinds import M, Refusal, RoomState
from .views import RoomViews

__all__ = ["RoomRace", "rated_ranks"]

log = logging.getLogger("yukon.rooms")


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


class RoomRace(RoomViews[M]):
    """A room that races: from ``start_race`` to ``committed``."""

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
        self.links = {m.name: (m.address, m.device) for m in self.players}
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
                    invite_key=self.invite_key,
                    winnable=self.winnable,
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

    def resign(self, p: M, now: float, seq: int | None = None) -> Refusal | None:
        """Runner ``p`` gives up. With a ``seq`` it is checked and numbered as a move is
        (a resend is answered again with the race state, not refused), journaled with it,
        and answered with ``race``; without one (an older client), as it always was."""
        if seq is not None:
            numbered = self._new_action(p, seq, now)
            if not isinstance(numbered, Runner):
                return numbered
            runner = numbered
        else:
            plain = self.runner(p, None)
            if isinstance(plain, Refusal):
                return plain
            runner = plain
            self.enforce_limit(now)
            if runner.done:
                return Refusal("finished", f"your race is over ({runner.state.value})")
        race = self.race
        assert race is not None
        race.resign(runner, now, seq)
        self.journal(p.id, seq, "resign", race.elapsed_ms(now))
        log.info("room %s: %s resigned", self.code, p.name)
        if seq is not None:
            self.send(p, self.race_msg(runner, now))
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
                    resumed_at=tuple(r.resumed_at),
                    address=self.links.get(r.name, ("", ""))[0],
                    device=self.links.get(r.name, ("", ""))[1],
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
                    unproven=self.rated and not self.winnable,
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
        bots = {m.name for m in self.members() if m.bot}
        if bots:  # a BOT badge in the result (docs/bots.md)
            ranks = tuple(dataclasses.replace(e, bot=True) if e.name in bots else e for e in ranks)
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

    # -- the journal ------------------------------------------------------------------------

    def journal(self, player_id: int, seq: int | None, action: str, ms: int) -> None:
        self.journal_n += 1
        self._emit(Journal(LiveAction(self.uid, self.journal_n, player_id, seq, ms, action)))

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
