"""Hints: the next move of a winning line, for a runner in a room that allows them.

An answer comes from the player's cache of lines already found, or else from the solver
(a ``Solve`` effect, answered in ``Hub.hint_ready`` or ``Hub.hint_failed``); the first
hint a runner receives marks their run (docs/solver.md, "Hints").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from protocol import Game
from protocol.messages import HintAnswer

from ..domain.race import Runner
from .effects import Solve
from .play import Play
from .room import Refusal, Room
from .shared import Part, Shared
from .state import _Conn, _Player

__all__ = ["Hints"]

log = logging.getLogger("yukon.rooms")

#: Most hint answers a player's cache keeps (a winning line adds one per move of it).
_HINT_CACHE = 2048


@dataclass(eq=False)
class _HintJob:
    """A hint on its way: whose, for which race, and the position and ``seq`` it is for."""

    player: _Player
    uid: str
    position: str
    seq: int


class Hints(Part):
    """The hints asked for, on their way to the solver and back."""

    def __init__(self, shared: Shared, play: Play) -> None:
        super().__init__(shared)
        self._play = play
        #: Hints being worked out (``Solve`` effects not answered yet), by request number.
        self._jobs: dict[int, _HintJob] = {}
        self._ids = 0

    def ask(self, c: _Conn, p: _Player, now: float) -> None:
        """The next move of a winning line from the runner's position, from the cache of
        lines already found or else from the solver (``Solve``: answered in ``ready``)."""
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        runner = room.hint_runner(p, now)
        if isinstance(runner, Refusal):
            self._play.refuse(c, runner)
            return
        pending = self._jobs.get(p.hint_request) if p.hint_request is not None else None
        if pending is not None and pending.uid == room.uid:  # (one of an earlier race: ignored)
            self._error(c, "wrong_state", "your last hint is still being worked out; wait for it")
            return
        position = runner.game.position()
        if p.hint_uid != room.uid:
            p.hint_uid, p.hint_answers = room.uid, {}
        known = p.hint_answers.get(position)
        if known is not None:
            self._give(room, p, runner, HintAnswer(runner.last_seq, *known), now)
            return
        if len(self._jobs) >= self._config.hint_queue_limit:
            self._error(c, "unavailable", "the server is working out many hints; ask again soon")
            return
        self._ids += 1
        request = self._ids
        self._jobs[request] = _HintJob(p, room.uid, position, runner.last_seq)
        p.hint_request = request
        self._out.append(Solve(p.id, request, position, self._config.hint_budget_nodes))

    def ready(
        self,
        player_id: int,
        request: int,
        *,
        verdict: str,
        moves: tuple[str, ...],
        now: float,
    ) -> None:
        """The solver worked out a hint's position: ``verdict`` ``won`` (``moves`` is the
        winning line), ``lost``, or ``unknown`` (``moves`` is then the line to the most
        advanced position its search reached, ``Solution.best``: its first move is
        answered as ``best``, not proven; none, ``unknown``). Remember it, and answer the
        player if they still race the race they asked in (the answer names the position's
        ``seq``)."""
        job = self._take_job(player_id, request)
        if job is None:
            return
        p = job.player
        known: tuple[str, str | None]
        if verdict == "won" and moves:
            known = ("win", moves[0])
        elif verdict == "unknown" and moves:
            known = ("best", moves[0])  # only this position: the line is not known to win
        else:
            known = ("lost" if verdict == "lost" else "unknown", None)
        if p.hint_uid == job.uid:  # (not if the player has asked in another race since)
            answers = p.hint_answers
            if len(answers) > _HINT_CACHE:
                answers.clear()
            if known[0] == "win":
                # Every position along the line: a player who follows it is answered at once.
                game = Game.from_position(job.position)
                for move in moves:
                    answers[game.position()] = ("win", move)
                    game.play(move)
            answers[job.position] = known
        room = self._room_of(job)
        if room is not None:
            assert room.race is not None
            room.enforce_limit(now)
            runner = room.race.runners.get(p.name)
            if runner is not None and not runner.done:
                self._give(room, p, runner, HintAnswer(job.seq, *known), now)

    def failed(self, player_id: int, request: int) -> None:
        """The solver could not run (its worker process died): the player may ask again."""
        job = self._take_job(player_id, request)
        if job is None:
            return
        p = job.player
        c = self._conns.get(p.conn) if p.conn is not None else None
        if c is not None and self._room_of(job) is not None:
            self._error(c, "unavailable", "the hint could not be worked out just now; ask again")

    def _take_job(self, player_id: int, request: int) -> _HintJob | None:
        """The hint job ``request`` of this player, done now: the player may ask again."""
        job = self._jobs.pop(request, None)
        if job is None or job.player.id != player_id:
            return None
        if job.player.hint_request == request:
            job.player.hint_request = None
        return job

    def _room_of(self, job: _HintJob) -> Room[_Player] | None:
        """The room of a hint's race, if its player still races there."""
        p = job.player
        room = p.room
        if self._players.get(p.id) is not p or room is None or p.spectator:
            return None
        if not room.races(job.uid) or not self._play.alive(room):
            return None
        return room

    def _give(
        self, room: Room[_Player], p: _Player, runner: Runner, answer: HintAnswer, now: float
    ) -> None:
        """Send a hint; the first one a runner receives that tells something (a move, or
        no win) marks their run as hinted. ``unknown`` tells nothing: it marks nothing."""
        if p.conn is None:  # not received: kept in the cache for when they ask again
            return
        if answer.verdict != "unknown":
            room.hinted(p, runner, now)
        self._send(p, answer)
