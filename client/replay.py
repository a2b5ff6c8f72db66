"""A replay of one run, pure: its pages as the server sends them, its positions, and the
post-mortem in words (docs/protocol.md 4.22).

The server answers ``replay`` with the game code and the accepted actions, up to 500 a
page; this deals the code with the shared engine (``protocol.Game``) and plays the
actions (moves and undos) to get every position the runner saw, face-down cards and all.
The screen shows them as the runner saw them (``RaceBoard`` draws only the view). Playing
back uses the recorded times: ``due`` says how many actions have happened by a moment of
the run's clock.
"""

from __future__ import annotations

import bisect

from protocol import Game, YukonError
from protocol.messages import Message, PostMortemAnswer, Race, Replay, ReplayPage

__all__ = ["SPEEDS", "ReplayRun", "postmortem_text"]

#: The playback speeds, in the order ``s`` steps through them.
SPEEDS = (1, 4, 16)


class ReplayRun:
    """One run being replayed: asked for, arriving page by page, then complete."""

    def __init__(self, race: str, player: str) -> None:
        self.race = race
        self.player = player
        #: The first page: the run's figures (``actions`` holds every action once complete).
        self.page: ReplayPage | None = None
        self.actions: list[tuple[int, str]] = []
        #: The server's refusal (its text), if it refused.
        self.refused: str | None = None
        #: Every position: ``games[k]`` after ``k`` actions (the deal as dealt first).
        self.games: list[Game] = []
        #: The move count after each action (an undo takes a move back, not the count).
        self.counts: list[int] = []

    @property
    def key(self) -> tuple[str, str]:
        return (self.race, self.player.casefold())

    @property
    def complete(self) -> bool:
        return bool(self.games)

    def ask(self) -> Replay:
        return Replay(self.race, self.player, offset=len(self.actions))

    def received(self, page: ReplayPage) -> list[Message]:
        """Take a page; the request for the next one, if the run has more."""
        if page.race != self.race or (self.page is not None and page.offset != len(self.actions)):
            return []
        if self.page is None:
            self.page = page
            self.player = page.player
        self.actions.extend(page.actions)
        if page.actions and len(self.actions) < page.total:
            return [self.ask()]
        self._play()
        return []

    def _play(self) -> None:
        assert self.page is not None
        try:
            game = Game.from_code(self.page.code)
            games, counts = [game.copy()], [0]
            for _, action in self.actions:
                if action == "undo":
                    game.undo()
                else:
                    game.play(action)
                games.append(game.copy())
                counts.append(game.move_count)
        except YukonError as exc:  # a server that disagrees with the engine
            self.refused = f"this run cannot be played back here: {exc}"
            return
        self.games, self.counts = games, counts

    @property
    def total(self) -> int:
        return len(self.actions)

    def time_at(self, k: int) -> int:
        """The run's clock (ms) when action ``k`` was accepted (0: the deal)."""
        return self.actions[k - 1][0] if k > 0 else 0

    def due(self, clock_ms: float) -> int:
        """How many actions had been accepted by ``clock_ms`` of the run's clock."""
        return bisect.bisect_right([ms for ms, _ in self.actions], clock_ms)

    def race_at(self, k: int) -> Race:
        """Position ``k`` as the runner's ``race`` message showed it: the view only."""
        game = self.games[k]
        return Race(game.view(), self.time_at(k), 7200, k, game.score, self.counts[k], "playing")


def postmortem_text(pm: PostMortemAnswer) -> str:
    """What the solver says of a run, in words (the browser client says the same)."""
    if pm.status == "won":
        s = "" if pm.wasted_total == 1 else "s"
        par = f" against a par of {pm.par}" if pm.par is not None else ""
        return f"Won, with {pm.wasted_total} wasted move{s}: {pm.kept} kept{par}."
    if pm.status == "lost" and pm.last_winnable is not None and pm.line:
        return (
            f"After move {pm.last_winnable + 1}, {pm.losing_move}, no win was left;"
            f" {pm.line[0]} instead wins."
        )
    if pm.status == "open" and pm.line:
        return (
            f"A win was still left at the end: {pm.line[0]} goes on to win ({len(pm.line)} moves)."
        )
    if pm.status == "unwinnable":
        return "This deal could not be won at all: the solver proved it."
    text = "Unknown: the solver could not decide within its budget"
    if pm.last_winnable is not None:
        text += f"; a win was still left after move {pm.last_winnable}"
    if pm.lost_from is not None:
        text += f"; none after move {pm.lost_from}"
    return text + "."
