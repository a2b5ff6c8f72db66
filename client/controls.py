"""What the player does: the keys and clicks of a race turned into the messages to send.

The input half of the client's model (``state.Session`` is the other: what the server
says). Pure like it: no Textual, no sockets, no clock of its own. A move the local engine
thinks illegal is still sent, so that the player reads the server's reason; the engine
only helps place a card (the picked card's destinations, where a double tap sends it).

``Controls`` is a base of ``Session`` and reads the fields the server's messages fill
(``room``, ``race``, ``result``, ``me``), declared here for the type checker.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.messages import Finish, Hint, Message, MoveMsg, Resign, Result, Room, Undo

from .race_board import FINISH, FOUNDATION, RESIGN, RaceBoard, Status

__all__ = ["Controls"]


class Controls:
    """The player's side of a session: picks, drops, taps, undo, finish, resign, hints."""

    room: Room | None
    race: RaceBoard | None
    result: Result | None
    me: str | None
    status: Status

    def say(self, text: str, kind: str = "info") -> None:
        self.status = Status(text, kind, self.status.serial + 1)

    @property
    def undo_allowed(self) -> bool:
        return self.room.undo if self.room is not None else True

    # -- what the player does during a race ---------------------------------------------------

    def _playing(self) -> RaceBoard | None:
        race = self.race
        if race is None:
            return None
        if race.is_done(undo=self.undo_allowed):
            self.say(self._waiting_text())
            return None
        return race

    def _waiting_text(self) -> str:
        """What a key of the race says once my own race is over (not an error: nothing
        went wrong, there is just nothing left to play)."""
        race = self.race
        if self.result is not None:
            return "the race is over"
        won = race is not None and race.state == "won"
        return f"{'you won' if won else 'your race is over'}: waiting for the others to finish"

    def _send_move(self, race: RaceBoard, move: str) -> list[Message]:
        race.cancel()
        return [MoveMsg(race.take_seq(move), move)]

    def press_column(self, n: int) -> list[Message]:
        """A column key: pick that column's exposed card, or drop the picked card there;
        on the picked card's own column, go one card deeper."""
        return self._column(n, same=lambda race: race.deeper_or_wrap())

    def _column(self, n: int, *, same: Callable[[RaceBoard], None]) -> list[Message]:
        race = self._playing()
        if race is None:
            return []
        pick = race.pick
        if pick is None:
            problem = race.pick_column(n)
            if problem:
                self.say(problem)
            return []
        if pick.source == n:
            same(race)
            return []
        move = race.move_for(str(n))
        return self._send_move(race, move) if move else []

    def press_foundation(self) -> list[Message]:
        """``f``: the picked card to its foundation; with nothing picked, pick a foundation."""
        race = self._playing()
        if race is None:
            return []
        if race.pick is None or race.pick.source == FOUNDATION:
            if race.pick is not None:
                race.step(-1)
                return []
            if not race.game.rules.take_back:  # f drops a card: say how to get one, as Enter does
                self.say("pick a card first: 1-7, or click it")
                return []
            problem = race.pick_foundation()
            if problem:
                self.say(problem)
            return []
        move = race.move_for("F")
        return self._send_move(race, move) if move else []

    def click_card(self, n: int, card: str, now: float) -> list[Message]:
        """A click on a face-up card: pick it; on the picked card, a tap; else a drop there."""
        race = self._playing()
        if race is None:
            return []
        pick = race.pick
        if pick is not None and pick.card == card:
            return self.tap(now)
        if pick is not None and pick.source != n:
            return self.click_column(n)
        race.pick_card(n, card)
        return []

    def click_column(self, n: int) -> list[Message]:
        """A click on a column (not on a card of it): drop there, or pick its exposed card;
        on the picked card's own column, put it down again."""
        return self._column(n, same=lambda race: race.cancel())

    def click_foundation(self, suit: int) -> list[Message]:
        race = self._playing()
        if race is None:
            return []
        if race.pick is None:
            problem = race.pick_foundation(suit)
            if problem:
                self.say(problem)
            return []
        if race.pick.source == FOUNDATION:
            race.cancel()
            return []
        move = race.move_for("F")
        return self._send_move(race, move) if move else []

    def step(self, delta: int) -> None:
        if self.race is not None:
            self.race.step(delta)

    def cancel(self) -> None:
        if self.race is not None:
            self.race.cancel()

    def tap(self, now: float) -> list[Message]:
        race = self._playing()
        if race is None:
            return []
        move, text = race.tap(now)
        if move is None:
            self.say(text)
            return []
        return self._send_move(race, move)

    def undo(self) -> list[Message]:
        race = self.race
        if race is None:
            return []
        if not self.undo_allowed:
            self.say("this room has no undo", "error")
            return []
        if race.is_done(undo=True):
            self.say(self._waiting_text())
            return []
        race.cancel()
        return [Undo(race.take_seq(None))]

    def finish(self) -> list[Message]:
        """``a``: every card is face up, so the server may play out the win (protocol
        4.24): its moves count as mine, at the clock of the request."""
        race = self._playing()
        if race is None:
            return []
        if FINISH in race.pending.values():
            self.say("finishing…")
            return []
        if not race.can_finish():
            self.say("finish: some cards are still face down; turn them up first")
            return []
        race.cancel()
        self.say("finishing: the server plays out the win…")
        return [Finish(race.take_seq(FINISH))]

    @property
    def may_rematch(self) -> bool:
        """Any racing member may ask for the rematch of a finished ordinary or ghost room
        (protocol 4.13), not only the host; a daily room has none."""
        room = self.room
        if room is None or room.you != "player" or room.state != "finished":
            return False
        return room.max_players > 1 or room.ghost is not None

    def resign(self) -> list[Message]:
        race = self.race
        if race is None or race.is_done(undo=self.undo_allowed):
            return []
        race.cancel()
        # Numbered, so that it is kept and resent after a resume like a move (4.19).
        return [Resign(race.take_seq(RESIGN))]

    @property
    def hints_allowed(self) -> bool:
        return self.room is not None and self.room.hints

    def ask_hint(self) -> list[Message]:
        """``h``: ask the server for the next move of a winning line from here."""
        race = self._playing()
        if race is None:
            return []
        if not self.hints_allowed:
            self.say("this room gives no hints", "error")
            return []
        if race.hint_asked:
            self.say("still thinking about the last hint…")
            return []
        race.hint_asked = True
        self.say("thinking…")
        return [Hint()]
