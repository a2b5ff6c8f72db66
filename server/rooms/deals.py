"""``Deals``: which secret deal a room with a random deal is dealt, and the stock behind it.

A room that wants a winnable deal (``create.winnable``, on by default for a room without
a code; always for a rated or quick room: issue 40, item 4) takes one the solver proved
won from the stock (``domain.stock.DealStock``), which the I/O layer keeps filled in the
background (``Prove`` effects on the solver's stock lane, answered by ``DealProven``).

When the stock holds none for the room's rules (a burst of rooms, a rule set nobody asked
for before), the room is dealt a fresh secret deal at once, shown as not proven
(``room.winnable`` false), and that deal is proven on the spot: most deals take the
solver a millisecond, so the answer is usually back within the lobby or the countdown.
Won: the room says ``winnable`` true. Lost or unknown, while no card has been dealt (the
lobby or the countdown): the room is dealt again (the stock's, if it has one now, or
another fresh deal proven the same way, ``winnable_tries`` deals at most), with a new
commitment. Once the race has begun the deal stays as it is and the verdict is never
told (it would say something about the cards): the room keeps ``winnable`` false, the
documented fallback (docs/protocol.md 4.3).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from protocol import GameCode

from ..domain.stock import DealStock
from .effects import Prove
from .room import Room, RoomState
from .shared import Part, Shared
from .state import _Player

__all__ = ["Deals"]

log = logging.getLogger("yukon.rooms")

#: The states in which a room's deal may still be swapped: no card has left the server.
_UNDEALT = (RoomState.LOBBY, RoomState.COUNTDOWN)


class Deals(Part):
    """The deal of every new race of a room with a random deal, and the stock of proven
    deals it is drawn from."""

    def __init__(
        self,
        shared: Shared,
        *,
        random_deal: Callable[[], int | bytes],
        new_salt: Callable[[], str],
        stock_seed: Callable[[], int | bytes],
    ) -> None:
        super().__init__(shared)
        self._random_deal = random_deal
        self._new_salt = new_salt
        cfg = shared.config
        # The stock's candidates come from a source of their own: a room's deal drawn
        # meanwhile is the same whether the stock is filling or not (the hub's tests fix
        # ``random_deal``'s sequence).
        self.stock = DealStock(
            stock_seed,
            target=cfg.winnable_stock,
            always=cfg.winnable_rules,
            keep_rules=cfg.winnable_rule_sets,
            in_flight=cfg.winnable_in_flight,
        )
        #: Rooms waiting for the proof of their deal (dealt when the stock was empty), by
        #: code: how many deals each was dealt so far.
        self._proving: dict[str, int] = {}

    def deal(self, room: Room[_Player], *, drawn: bool = False) -> None:
        """A new secret deal for ``room``'s next race (its creation, a rematch, an adopted
        lobby): proven won from the stock if it wants one and the stock has one; else
        fresh, and, if it wants one, proven on the spot (``proven``). ``drawn``: the
        room's deal is a fresh secret one nobody has seen (a room just made): kept as
        its fresh deal, not drawn again."""
        room.fixed = None
        if not room.wants_winnable:
            if not drawn:
                self._fresh(room)
            return
        self._proving.pop(room.code, None)
        if not self._from_stock(room):
            if drawn:
                room.winnable = False
            else:
                self._fresh(room)
            self._prove(room, 1)
        self.fill()

    def fill(self) -> None:
        """Ask the solver for the candidates the stock wants (``DealStock.wanted``)."""
        budget = self._config.winnable_budget_nodes
        for rules, seed in self.stock.wanted():
            self._out.append(Prove(rules, seed, budget))

    def proven(self, rules: str, seed: int | bytes, verdict: str, room_code: str) -> None:
        """The solver's verdict on a candidate: the stock's own, or the deal of room
        ``room_code`` that was dealt while the stock was empty."""
        if not room_code:
            self.stock.proven(rules, seed, verdict)
            self.fill()
            return
        tries = self._proving.pop(room_code, 0)
        room = self._rooms.get(room_code)
        if (
            room is None
            or tries == 0
            or room.state not in _UNDEALT
            or room.deal.deal != seed
            or str(room.rules) != rules
        ):
            return  # gone, dealt again since, or racing: the verdict is never told
        if verdict == "won":
            room.winnable = True
        elif verdict == "failed" or tries >= self._config.winnable_tries:
            log.warning("room %s: no deal proven winnable (%s); dealt unproven", room_code, verdict)
            return
        elif self._from_stock(room):
            self.fill()
        else:
            self._fresh(room)
            self._prove(room, tries + 1)
        room.room_changed(self._shared.now, progress=False)

    # -- helpers ------------------------------------------------------------------------

    def _from_stock(self, room: Room[_Player]) -> bool:
        seed = self.stock.draw(str(room.rules))
        if seed is None:
            return False
        room.deal = GameCode(room.rules, seed)
        room.salt = self._new_salt()
        room.winnable = True
        return True

    def _fresh(self, room: Room[_Player]) -> None:
        room.deal = GameCode(room.rules, self._random_deal())
        room.salt = self._new_salt()
        room.winnable = False

    def _prove(self, room: Room[_Player], tries: int) -> None:
        self._proving[room.code] = tries
        budget = self._config.winnable_budget_nodes
        self._out.append(Prove(str(room.rules), room.deal.deal, budget, room.code))
