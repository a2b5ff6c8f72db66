"""One race: every player's game on the same deal, one clock, and the ranking.

Plain state: it takes decoded moves and the server's monotonic time, and returns the
messages to answer with. ``rooms.Hub`` decides who may call it and when.
"""

from __future__ import annotations

import bisect
import enum
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeVar

from protocol import Game, GameCode, IllegalMoveError, InvalidMoveError, UndoError
from protocol.messages import Accepted, PlayerProgress, RankEntry, Refused, Undone
from solver import solve

__all__ = [
    "PlayerState",
    "Runner",
    "Race",
    "Ghost",
    "rank_runners",
    "REPLY_MEMORY",
    "FINISH_BUDGET_NODES",
]

log = logging.getLogger("yukon.race")

#: How many recent replies a runner keeps so that a resent ``seq`` is answered again.
REPLY_MEMORY = 64
#: Positions the solver may search for a ``finish`` (docs/protocol.md 4.24). Every card is
#: face up then, and a winning line is found within a few dozen positions (1 to 20 ms with
#: the C search); the bound keeps the worst case to a few tens of milliseconds on the
#: event loop, and a node budget, not a time, gives the same answer on every server.
FINISH_BUDGET_NODES = 5_000
#: Searches for a ``finish`` that found no win, per runner and race: past them a
#: ``finish`` is refused without one, so that no runner can keep the event loop busy with
#: a search after every move (an honest one rarely needs a second: a position with every
#: card face up is nearly always won).
FINISH_SEARCHES = 8
#: What a runner's ``replies`` keep for a ``finish`` answered with its moves: the answer
#: to a resend is the runner's race state, as the first answer was (``Room.finish``).
FINISH_REPLY = "finish"


class PlayerState(enum.StrEnum):
    """Where a player stands in a race (the wire's ``state`` and ``outcome`` values)."""

    PLAYING = "playing"
    STUCK = "stuck"
    WON = "won"
    RESIGNED = "resigned"
    TIMEOUT = "timeout"
    ABANDONED = "abandoned"


_Reply = TypeVar("_Reply", Accepted, Refused, Undone)
_REPLY_TYPES: dict[str, type[Accepted | Refused | Undone]] = {
    k.TYPE: k for k in (Accepted, Refused, Undone)
}
#: Each reply type's fields as one tuple (``_remember``): a C getter, not a loop per move.
_REPLY_FIELDS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    k.TYPE: attrgetter(*(f.name for f in k.FIELDS)) for k in (Accepted, Refused, Undone)
}


@dataclass
class Runner:
    """One player's side of a race."""

    name: str
    game: Game
    state: PlayerState = PlayerState.PLAYING
    #: Milliseconds from the start to the moment the player was done (won, resigned, ...).
    time_ms: int | None = None
    last_seq: int = 0
    #: The recent replies by seq, each kept as a tuple of its type and field values: a
    #: tuple of plain values drops out of the garbage collector's sight, a message object
    #: would stay in it, and one per move of every player made its passes long
    #: (docs/performance.md).
    replies: OrderedDict[int, tuple[Any, ...]] = field(default_factory=OrderedDict)
    #: Every accepted action's time offset and text (``"7S>4"`` or ``"undo"``), in two
    #: lists rather than a tuple per action, for the same reason as ``replies``: a
    #: server holds every action of thousands of races (see ``journal``).
    journal_ms: list[int] = field(default_factory=list)
    journal_actions: list[str] = field(default_factory=list)
    #: How many moves the player took back.
    undos: int = 0
    #: The journal's length each time the player came back to the race after losing its
    #: connection (a resume, on this node or after a restart): the fair-play signals leave
    #: out the interval spanning the outage and the burst a client resends then
    #: (``server.domain.signals.resume_marks``).
    resumed_at: list[int] = field(default_factory=list)
    #: Out of the race for good: won, resigned, out of time, abandoned, or stuck with no undo.
    done: bool = False
    #: The player got a hint: a win ranks after every unhinted win (``rank_runners``).
    hinted: bool = False
    #: ``finish`` searches that found no win in this race (``FINISH_SEARCHES``).
    finish_misses: int = 0
    #: The figures last shown of this runner in ``progress``, and the entry made of them
    #: (``Race.progress``): made again only when one of them changed.
    shown: tuple[tuple[Any, ...], PlayerProgress] | None = field(default=None, repr=False)

    @property
    def journal(self) -> list[tuple[int, str]]:
        """Every accepted action with its time offset: ``(ms, "7S>4")`` or ``(ms, "undo")``."""
        return list(zip(self.journal_ms, self.journal_actions, strict=True))

    def note(self, ms: int, action: str) -> None:
        self.journal_ms.append(ms)
        self.journal_actions.append(action)


class Race:
    """Players racing on one deal from one starting moment on the server's clock."""

    def __init__(
        self,
        code: GameCode,
        names: list[str],
        *,
        started: float,
        time_limit_s: int,
        undo: bool,
    ) -> None:
        self.code = code
        self.started = started
        self.time_limit_s = time_limit_s
        self.undo_allowed = undo
        self.runners: dict[str, Runner] = {}
        #: A recorded run raced alongside (a ghost room), not a runner: it never holds
        #: the race up and is never stored with it.
        self.ghost: Ghost | None = None
        for name in names:
            runner = Runner(name, Game.from_code(code))
            self.runners[name] = runner
            self._settle(runner, 0)

    # -- time ---------------------------------------------------------------------------

    def elapsed_ms(self, now: float) -> int:
        # Rounded, not truncated: a time rebuilt from a journaled offset comes out exact.
        return max(0, round((now - self.started) * 1000))

    @property
    def deadline(self) -> float:
        return self.started + self.time_limit_s

    def expire(self, now: float) -> bool:
        """At the time limit everyone still racing is out of time; True if anything changed."""
        if now < self.deadline:
            return False
        changed = False
        for runner in self.runners.values():
            if not runner.done:
                # A player stuck at the bell stays "stuck"; anyone still moving ran out of time.
                state = (
                    PlayerState.STUCK if runner.state is PlayerState.STUCK else PlayerState.TIMEOUT
                )
                self._finish(runner, state, self.time_limit_s * 1000)
                changed = True
        return changed

    def cut(self, now: float) -> bool:
        """End the race now, before its time limit: everyone still racing is out of time at
        the current clock (a daily attempt still running when its day's code goes public).
        True if anything changed."""
        ms = min(self.elapsed_ms(now), self.time_limit_s * 1000)
        changed = False
        for runner in self.runners.values():
            if not runner.done:
                state = (
                    PlayerState.STUCK if runner.state is PlayerState.STUCK else PlayerState.TIMEOUT
                )
                self._finish(runner, state, ms)
                changed = True
        return changed

    # -- actions ------------------------------------------------------------------------

    def replay_of(self, runner: Runner, seq: int) -> Accepted | Refused | Undone | None:
        """The answer already given to ``seq``, so a resend is answered, not played twice
        (None also for a ``finish`` that played its moves: ``finished_by``)."""
        kept = runner.replies.get(seq)
        if kept is None or kept[0] == FINISH_REPLY:
            return None
        kind: type[Accepted | Refused | Undone] = _REPLY_TYPES[kept[0]]
        return kind(*kept[1:])

    def move(self, runner: Runner, seq: int, text: str, now: float) -> Accepted | Refused:
        try:
            played = runner.game.play(text)
        except InvalidMoveError as exc:
            return self._remember(runner, Refused(seq, "invalid", str(exc)))
        except IllegalMoveError as exc:
            return self._remember(runner, Refused(seq, "illegal", exc.reason))
        ms = self.elapsed_ms(now)
        runner.note(ms, played.move)
        self._settle(runner, ms)
        game = runner.game
        return self._remember(
            runner,
            Accepted(
                seq=seq,
                move=played.move,
                turned=played.turned_up,
                score=game.score,
                moves=game.move_count,
                foundations=game.cards_on_foundations,
                state=runner.state.value,
                elapsed_ms=ms,
            ),
        )

    @staticmethod
    def finished_by(runner: Runner, seq: int) -> bool:
        """``seq`` was a ``finish`` that played its moves, or a numbered ``resign``: its
        answer is the race state."""
        kept = runner.replies.get(seq)
        return kept is not None and kept[0] == FINISH_REPLY

    def finish(self, runner: Runner, seq: int, now: float) -> list[str] | Refused:
        """Play out the runner's game when no card of it is face down: a winning line from
        the solver, within ``FINISH_BUDGET_NODES``, played move by move on the runner's
        game as accepted moves, all at the clock of the request (docs/protocol.md 4.24).
        Returns the moves played (each to be journaled), or the refusal.

        Nothing is revealed: every card of the position is face up, so the player knows
        it already; the line is only the bookkeeping the player would otherwise click."""
        game = runner.game
        if any(game.face_down_count(n) for n in range(1, 8)):
            return self._remember(
                runner, Refused(seq, "cannot_finish", "some cards are still face down")
            )
        no_win = Refused(seq, "cannot_finish", "no win found from here: play on")
        if runner.finish_misses >= FINISH_SEARCHES:
            return self._remember(runner, no_win)
        found = solve(game, budget_nodes=FINISH_BUDGET_NODES)
        if found.verdict != "won" or not found.moves:
            runner.finish_misses += 1
            return self._remember(runner, no_win)
        ms = self.elapsed_ms(now)
        played = []
        for text in found.moves:
            move = game.play(text).move
            runner.note(ms, move)
            played.append(move)
        self._settle(runner, ms)
        runner.last_seq = seq
        runner.replies[seq] = (FINISH_REPLY,)
        if len(runner.replies) > REPLY_MEMORY:
            runner.replies.popitem(last=False)
        return played

    def undo(self, runner: Runner, seq: int, now: float) -> Undone | Refused:
        if not self.undo_allowed:
            return self._remember(runner, Refused(seq, "undo_disabled", "this room allows no undo"))
        try:
            move = runner.game.undo()
        except UndoError as exc:
            return self._remember(runner, Refused(seq, "nothing_to_undo", str(exc)))
        ms = self.elapsed_ms(now)
        runner.note(ms, "undo")
        runner.undos += 1
        runner.state = PlayerState.PLAYING
        self._settle(runner, ms)
        game = runner.game
        return self._remember(
            runner,
            Undone(
                seq=seq,
                move=move,
                view=game.view(),
                score=game.score,
                moves=game.move_count,
                foundations=game.cards_on_foundations,
                state=runner.state.value,
                elapsed_ms=ms,
            ),
        )

    def resign(self, runner: Runner, now: float, seq: int | None = None) -> None:
        """The runner gives up; with a ``seq`` it is remembered as that seq's answer (the
        race state, as for ``finish``), so that a resend is answered, not refused."""
        self._finish(runner, PlayerState.RESIGNED, self.elapsed_ms(now))
        if seq is not None:
            runner.last_seq = seq
            runner.replies[seq] = (FINISH_REPLY,)
            if len(runner.replies) > REPLY_MEMORY:
                runner.replies.popitem(last=False)

    def abandon(self, runner: Runner, now: float) -> None:
        """A player who stayed disconnected past the resume window."""
        self._finish(runner, PlayerState.ABANDONED, self.elapsed_ms(now))

    def is_over(self) -> bool:
        return all(r.done for r in self.runners.values())

    # -- reports ------------------------------------------------------------------------

    def progress(self, connected: dict[str, bool]) -> tuple[PlayerProgress, ...]:
        """Every runner's figures, in the race's order. A room's progress goes out a few
        times a second with one runner changed since the last: each runner's entry is
        kept with the figures it was made of and made again only when one changed
        (a frozen message costs more to build than its figures cost to compare)."""
        out = []
        for r in self.runners.values():
            game = r.game
            figures = (
                r.state,
                game.cards_on_foundations,
                game.score,
                game.move_count,
                r.time_ms,
                connected.get(r.name, False),
            )
            shown = r.shown
            if shown is None or shown[0] != figures:
                state, foundations, score, moves, time_ms, on = figures
                shown = r.shown = (
                    figures,
                    PlayerProgress(r.name, state.value, foundations, score, moves, time_ms, on),
                )
            out.append(shown[1])
        return tuple(out)

    def ranks(self) -> tuple[RankEntry, ...]:
        return rank_runners(list(self.runners.values()), self.time_limit_s * 1000)

    def ghost_progress(self, now: float) -> PlayerProgress | None:
        """The ghost where it stands on the race clock at ``now`` (None: no ghost)."""
        return None if self.ghost is None else self.ghost.progress(self.elapsed_ms(now))

    def ghost_rank(self, ranks: tuple[RankEntry, ...]) -> RankEntry | None:
        """The ghost's whole run as a rank entry, its ``rank`` the place it would take
        among ``ranks`` (which it does not change)."""
        ghost = self.ghost
        if ghost is None:
            return None
        mine = _key(
            ghost.hinted,
            ghost.outcome == "won",
            ghost.time_ms,
            ghost.moves,
            ghost.foundations,
            ghost.score,
        )
        ahead = sum(
            1
            for e in ranks
            if _key(e.hinted, e.outcome == "won", e.time_ms, e.moves, e.foundations, e.score) < mine
        )
        return RankEntry(
            rank=min(8, ahead + 1),
            name=ghost.name,
            outcome=ghost.outcome,
            time_ms=ghost.time_ms,
            moves=ghost.moves,
            score=ghost.score,
            foundations=ghost.foundations,
            hinted=ghost.hinted,
        )

    # -- internals ----------------------------------------------------------------------

    def _settle(self, runner: Runner, ms: int) -> None:
        """After a change: a won game is done; a stuck one is done only if undo is off."""
        game = runner.game
        if game.is_won():
            self._finish(runner, PlayerState.WON, ms)
        elif game.is_stuck():
            if self.undo_allowed:
                runner.state = PlayerState.STUCK
            else:
                self._finish(runner, PlayerState.STUCK, ms)

    def _finish(self, runner: Runner, state: PlayerState, ms: int) -> None:
        if runner.done:
            return
        runner.done = True
        runner.state = state
        runner.time_ms = ms

    @staticmethod
    def _remember(runner: Runner, reply: _Reply) -> _Reply:
        runner.last_seq = reply.seq
        kind: str = reply.TYPE
        runner.replies[reply.seq] = (kind, *_REPLY_FIELDS[kind](reply))
        if len(runner.replies) > REPLY_MEMORY:
            runner.replies.popitem(last=False)
        return reply


def rank_runners(runners: list[Runner], limit_ms: int) -> tuple[RankEntry, ...]:
    """Winners without a hint by time then moves, then winners with one in the same order;
    then every runner who did not win, hinted or not, by cards on foundations, score, then
    time, the later first (docs/protocol.md 4.12). So ranks and headlines tell one story
    (issue 28): every win above every non-win, and giving up early never gains a place.

    Runners with equal keys share a rank and the next rank skips (1, 1, 3).
    """

    def key(r: Runner) -> tuple[int, int, int, int]:
        time_ms = r.time_ms if r.time_ms is not None else limit_ms
        game = r.game
        won = r.state is PlayerState.WON
        return _key(r.hinted, won, time_ms, game.move_count, game.cards_on_foundations, game.score)

    ordered = sorted(runners, key=key)
    entries = []
    rank = 0
    previous: tuple[int, int, int, int] | None = None
    for position, r in enumerate(ordered, start=1):
        k = key(r)
        if k != previous:
            rank = position
            previous = k
        entries.append(
            RankEntry(
                rank=rank,
                name=r.name,
                outcome=r.state.value,
                time_ms=r.time_ms if r.time_ms is not None else limit_ms,
                moves=r.game.move_count,
                score=r.game.score,
                foundations=r.game.cards_on_foundations,
                hinted=r.hinted,
            )
        )
    return tuple(entries)


def _key(
    hinted: bool, won: bool, time_ms: int, moves: int, foundations: int, score: int
) -> tuple[int, int, int, int]:
    """The order of ``rank_runners`` (and of ``storage.models.board_key``): unhinted wins,
    then hinted wins, each by time then moves; then every other run by cards on
    foundations, score, then time (later first)."""
    if won:
        return (1 if hinted else 0, time_ms, moves, 0)
    return (2, -foundations, -score, -time_ms)


class Ghost:
    """A recorded run raced alongside a live one: its figures at each moment of the race
    clock, worked out once by playing its actions on the engine.

    Only counts leave it (``progress``: foundations, score, moves, state), as a live
    opponent's progress shows: never a card or a move. ``marks`` are the race-clock
    times at which something shown changes, so the hub wakes up exactly then.
    """

    def __init__(
        self,
        name: str,
        code: GameCode,
        actions: tuple[tuple[int, str], ...],
        *,
        outcome: str,
        time_ms: int,
        moves: int,
        score: int,
        foundations: int,
        hinted: bool,
    ) -> None:
        self.name = name
        self.outcome = outcome
        self.time_ms = time_ms
        self.moves = moves
        self.score = score
        self.foundations = foundations
        self.hinted = hinted
        game = Game.from_code(code)
        #: ``(ms, state, foundations, score, moves)`` after each action, from the deal on.
        self._states: list[tuple[int, str, int, int, int]] = [(0, "playing", 0, 0, 0)]
        for ms, action in actions:
            try:
                if action == "undo":
                    game.undo()
                else:
                    game.play(action)
            except (InvalidMoveError, IllegalMoveError, UndoError) as exc:  # a stored run
                log.error("ghost %s: action %r does not replay (%s)", name, action, exc)
                break
            state = "won" if game.is_won() else "stuck" if game.is_stuck() else "playing"
            figures = (ms, state, game.cards_on_foundations, game.score, game.move_count)
            if ms < self._states[-1][0]:  # never back in time
                figures = (self._states[-1][0], *figures[1:])
            self._states.append(figures)
        self._times = [s[0] for s in self._states]
        #: When its figures change, in order: each action's time, and its end.
        self.marks = sorted({*self._times[1:], time_ms})

    def progress(self, elapsed_ms: int) -> PlayerProgress:
        """Where the run stood ``elapsed_ms`` into its race: after every action it took
        by then, and done (its outcome, its time) from ``time_ms`` on."""
        if elapsed_ms >= self.time_ms:
            return PlayerProgress(
                self.name,
                self.outcome,
                self.foundations,
                self.score,
                self.moves,
                self.time_ms,
                True,
            )
        _, state, foundations, score, moves = self._states[
            bisect.bisect_right(self._times, elapsed_ms) - 1
        ]
        return PlayerProgress(self.name, state, foundations, score, moves, None, True)

    def next_mark(self, elapsed_ms: int) -> int | None:
        """The first time after ``elapsed_ms`` at which its figures change, or None."""
        i = bisect.bisect_right(self.marks, elapsed_ms)
        return self.marks[i] if i < len(self.marks) else None
