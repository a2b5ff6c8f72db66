"""My own race as the client keeps it: the engine's copy of my position, in step with the
server, what is picked, and the moves it sends (pure; Session in state.py holds it)."""

from __future__ import annotations

from dataclasses import dataclass

from protocol import Game, YukonError
from protocol.messages import (
    Accepted,
    PlayerProgress,
    Race,
    Undone,
)

from .cards import SUIT_ORDER, label

#: A second Enter within this many seconds is a double tap.
DOUBLE_TAP_S = 0.4
#: Player states that end a race for good (``stuck`` too, in a room without undo).
DONE_STATES = frozenset({"won", "resigned", "timeout", "abandoned"})
#: ``Pick.source`` of a card picked from a foundation (a take-back, option T).
FOUNDATION = 0
#: What a ``finish`` (docs/protocol.md 4.24) is in ``RaceBoard.pending`` and ``played``,
#: where a move is its text and an undo None: sent again as a ``finish`` after a drop.
FINISH = "finish"
#: ``pending``'s and ``played``'s mark for a numbered ``resign`` (answered with ``race``).
RESIGN = "resign"

_RANKS = "A23456789TJQK"


@dataclass(frozen=True)
class Pick:
    """The card the player holds: from column ``source`` (1-7), or a foundation (0)."""

    source: int
    card: str


@dataclass(frozen=True)
class Status:
    """The status line: the last thing worth telling the player."""

    text: str = ""
    kind: str = "info"  # info, good, error
    #: Counts up with every status said, so that a newer one can be told from an older.
    serial: int = 0


class RaceBoard:
    """My own race: the engine's copy of my position, kept in step with the server."""

    def __init__(self, race: Race, now: float, *, ascii: bool = False) -> None:
        self.ascii = ascii
        #: Moves and undos sent and not answered yet: seq -> move text (None: an undo).
        self.pending: dict[int, str | None] = {}
        #: Moves and undos the server accepted, in order: a server restored after a crash
        #: may have lost the last few, and asks for them again (``resync``).
        self.played: list[tuple[int, str | None]] = []
        self.pick: Pick | None = None
        #: The connection dropped: the next ``race`` is a resync of this one.
        self.resyncing = False
        #: A ``hint`` is on its way; the move a hint gave for the position shown, if any;
        #: and whether the server gave me a hint in this race (my run then ranks after
        #: every run without one).
        self.hint_asked = False
        self.hint: str | None = None
        self.hinted = False
        self._load(race, now)

    def _load(self, race: Race, now: float) -> None:
        self.game = Game.from_position(race.view)
        self.time_limit = race.time_limit
        self.last_seq = race.seq
        self.next_seq = race.seq + 1
        self.score = race.score
        self.moves = race.moves
        self.state = race.state
        self.foundations = self.game.cards_on_foundations
        self.clock_ms = race.elapsed_ms
        self.clock_at = now
        #: The connection is away: the clock stands here until the server's resync.
        self.frozen_ms: int | None = None
        #: When my race ended on the race clock, once the server says so.
        self.final_ms: int | None = None
        self._tap: tuple[float, str] | None = None
        self._legal: list[str] | None = None

    # -- reading ------------------------------------------------------------------------------

    @property
    def rules(self) -> str:
        return str(self.game.rules)

    def column(self, n: int) -> list[str]:
        return self.game.column(n)

    def face_up(self, n: int) -> list[str]:
        """The face-up cards of column ``n``, bottom to top."""
        return self.game.column(n)[self.game.face_down_count(n) :]

    def foundation_tops(self) -> list[str | None]:
        """The top card of each foundation (spades, hearts, diamonds, clubs), or None."""
        return [
            _RANKS[h - 1] + suit if h else None
            for suit, h in zip(SUIT_ORDER, self.game.foundation_heights(), strict=True)
        ]

    def legal_moves(self) -> list[str]:
        if self._legal is None:
            self._legal = self.game.legal_moves()
        return self._legal

    def elapsed_ms(self, now: float) -> int:
        """The race clock: frozen once my race is over, else counted on from the server's."""
        if self.final_ms is not None:
            return self.final_ms
        if self.frozen_ms is not None:
            return self.frozen_ms
        ms = self.clock_ms + int((now - self.clock_at) * 1000)
        return max(0, min(ms, self.time_limit * 1000))

    def can_finish(self) -> bool:
        """Whether the server may play out the win (docs/protocol.md 4.24): my run is
        playing, no card is face down any more, and no finish is on its way already."""
        return (
            self.state == "playing"
            and self.foundations < 52
            and FINISH not in self.pending.values()
            and all(self.game.face_down_count(n) == 0 for n in range(1, 8))
        )

    def finished_by(self, race: Race, now: float) -> None:
        """The ``race`` that answers my ``finish`` (the server's position after the moves
        it played for me, every card home) or my numbered ``resign`` (my state resigned):
        kept among what was played, so a resync resends it; ``hinted`` stays as it was."""
        mark = self.pending.pop(race.seq, FINISH)
        self.played.append((race.seq, mark))
        played, pending = self.played, self.pending
        self._load(race, now)
        self._changed()
        self.played, self.pending = played, pending

    def is_done(self, *, undo: bool = True) -> bool:
        if self.final_ms is not None or self.state in DONE_STATES:
            return True
        return self.state == "stuck" and not undo

    # -- following the server -------------------------------------------------------------

    def _changed(self) -> None:
        self._legal = None
        self._tap = None
        self.hint = None  # a hint is for one position only
        pick = self.pick
        if pick is None:
            return
        if pick.source == FOUNDATION:
            if pick.card not in self.foundation_tops():
                self.pick = None
        elif pick.card not in self.face_up(pick.source):
            self.pick = None

    def _clock(self, elapsed_ms: int, now: float) -> None:
        self.clock_ms, self.clock_at = elapsed_ms, now

    def accepted(self, msg: Accepted, now: float) -> bool:
        """Play an accepted move on my copy; False if my copy cannot follow (out of step)."""
        if msg.seq <= self.last_seq and msg.seq not in self.pending:
            return True  # the answer to a resend of a move already played: nothing new
        self.pending.pop(msg.seq, None)
        self.played.append((msg.seq, msg.move))
        self.last_seq = max(self.last_seq, msg.seq)
        try:
            self.game.play(msg.move, reveal=msg.turned)
        except YukonError:
            return False
        finally:
            self.score, self.moves, self.state = msg.score, msg.moves, msg.state
            self.foundations = msg.foundations
            self._clock(msg.elapsed_ms, now)
            self._changed()
        return True

    def undone(self, msg: Undone, now: float) -> None:
        if msg.seq <= self.last_seq and msg.seq not in self.pending:
            return
        self.pending.pop(msg.seq, None)
        self.played.append((msg.seq, None))
        self.last_seq = max(self.last_seq, msg.seq)
        self.game = Game.from_position(msg.view)
        self.score, self.moves, self.state = msg.score, msg.moves, msg.state
        self.foundations = msg.foundations
        self._clock(msg.elapsed_ms, now)
        self._changed()

    def answered(self, seq: int) -> str | None:
        """A refusal or error for ``seq``: forget it; the move it was, if any."""
        self.last_seq = max(self.last_seq, seq)
        return self.pending.pop(seq, None)

    def observe(self, entry: PlayerProgress, elapsed_ms: int, now: float) -> None:
        """My own line of a ``progress``: my state (a resign has no other answer), my end."""
        self.state = entry.state
        self.foundations = entry.foundations
        if entry.time_ms is not None:
            self.final_ms = entry.time_ms
        self._clock(elapsed_ms, now)

    def resync(self, race: Race, now: float) -> list[tuple[int, str | None]]:
        """The resync after a reconnect: take the server's copy; what to send again.

        Everything up to ``race.seq`` is in ``race.view``. Moves sent after it never
        arrived, or (a server restored after a crash) were accepted and then lost: they
        go again, in order, under the same numbers.
        """
        lost = [(s, m) for s, m in self.played if s > race.seq]
        again = sorted(lost + [(s, m) for s, m in self.pending.items() if s > race.seq])
        played = [(s, m) for s, m in self.played if s <= race.seq]
        self._load(race, now)
        self._changed()
        self.resyncing = False
        self.hint_asked = False  # an answer lost with the connection is not waited for
        self.played = played
        self.pending = dict(again)
        if again:
            self.next_seq = max(self.next_seq, again[-1][0] + 1)
        return again

    # -- sending ------------------------------------------------------------------------------

    def take_seq(self, move: str | None) -> int:
        seq = self.next_seq
        self.next_seq += 1
        self.pending[seq] = move
        return seq

    # -- picking and placement help ---------------------------------------------------------

    def pick_column(self, n: int) -> str | None:
        """Pick the exposed card of column ``n``; a problem for the status line, or None."""
        cards = self.face_up(n)
        if not cards:
            self.pick = None
            return f"column {n} is empty"
        self.pick = Pick(n, cards[-1])
        self._tap = None
        return None

    def pick_card(self, n: int, card: str) -> bool:
        """Pick a face-up ``card`` of column ``n`` directly (a click)."""
        if card not in self.face_up(n):
            return False
        self.pick = Pick(n, card)
        self._tap = None
        return True

    def pick_foundation(self, suit: int | None = None) -> str | None:
        """Pick a foundation's top card, to bring it back (option T)."""
        if not self.game.rules.take_back:
            return "a card on a foundation stays there (these rules have no take-back)"
        tops = self.foundation_tops()
        order = [suit] if suit is not None else list(range(4))
        for s in order:
            top = tops[s]
            if top is not None:
                self.pick = Pick(FOUNDATION, top)
                self._tap = None
                return None
        return "the foundations are empty"

    def step(self, delta: int) -> None:
        """Move the pick ``delta`` cards deeper (negative: towards the exposed card).

        In a column the pick stops at either end; on the foundations it cycles.
        """
        pick = self.pick
        if pick is None:
            return
        self._tap = None
        if pick.source == FOUNDATION:
            tops = [t for t in self.foundation_tops() if t is not None]
            if pick.card in tops:
                i = (tops.index(pick.card) - delta) % len(tops)
                self.pick = Pick(FOUNDATION, tops[i])
            return
        cards = self.face_up(pick.source)
        if pick.card not in cards:
            self.pick = None
            return
        i = max(0, min(len(cards) - 1, cards.index(pick.card) - delta))
        self.pick = Pick(pick.source, cards[i])

    def deeper_or_wrap(self) -> None:
        """The picked column's key again: one card deeper, back to the exposed card at the end."""
        pick = self.pick
        if pick is None or pick.source == FOUNDATION:
            return
        cards = self.face_up(pick.source)
        if pick.card not in cards:
            self.pick = None
            return
        i = cards.index(pick.card)
        self.pick = Pick(pick.source, cards[i - 1] if i > 0 else cards[-1])
        self._tap = None

    def cancel(self) -> None:
        self.pick = None
        self._tap = None

    def hint_parts(self) -> tuple[str, str] | None:
        """The hinted move's card and destination (``"1"``-``"7"`` or ``"F"``), if any."""
        if self.hint is None:
            return None
        card, _, dest = self.hint.partition(">")
        return card, dest

    def lifted(self) -> list[str]:
        """The picked card and every card on top of it (they move together)."""
        pick = self.pick
        if pick is None:
            return []
        if pick.source == FOUNDATION:
            return [pick.card]
        cards = self.face_up(pick.source)
        return cards[cards.index(pick.card) :] if pick.card in cards else []

    def destinations(self) -> frozenset[str]:
        """Where the picked card may go: ``"1"``-``"7"`` and ``"F"``, by the shared engine."""
        pick = self.pick
        if pick is None:
            return frozenset()
        prefix = pick.card + ">"
        return frozenset(m[3:] for m in self.legal_moves() if m.startswith(prefix))

    def tableau_destination(self, card: str) -> int | None:
        """The column a double tap sends ``card`` to: the longest column that takes it,
        then an empty column (for a king, or anything under option E)."""
        prefix = card + ">"
        columns = [int(m[3:]) for m in self.legal_moves() if m.startswith(prefix) and m[3] != "F"]
        filled = sorted(
            (d for d in columns if self.column(d)), key=lambda d: (-len(self.column(d)), d)
        )
        empty = sorted(d for d in columns if not self.column(d))
        ranked = filled + empty
        return ranked[0] if ranked else None

    def move_for(self, dest: str) -> str | None:
        """The move text that drops the picked card on ``dest`` (``"1"``-``"7"`` or ``"F"``)."""
        pick = self.pick
        if pick is None:
            return None
        return f"{pick.card}>{dest}"

    def tap(self, now: float) -> tuple[str | None, str]:
        """Enter on the picked card: ``(move to send or None, what to tell the player)``.

        One tap sends an exposed card to its foundation when it can go. A second tap
        within ``DOUBLE_TAP_S`` looks for a column for the card and the cards on it.
        """
        pick = self.pick
        if pick is None:
            return None, "pick a card first: 1-7, or click it"
        shown = label(pick.card, ascii=self.ascii)
        last, self._tap = self._tap, None
        double = last is not None and last[1] == pick.card and now - last[0] <= DOUBLE_TAP_S
        if not double and pick.source != FOUNDATION:
            home = f"{pick.card}>F"
            if home in self.legal_moves():
                return home, ""
            self._tap = (now, pick.card)
            return None, f"{shown} cannot go to its foundation now; Enter twice finds a column"
        dest = self.tableau_destination(pick.card)
        if dest is None:
            return None, f"no column takes the {shown} now"
        return f"{pick.card}>{dest}", ""
