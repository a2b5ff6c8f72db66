"""The session's side of rooms: which room a player's request is for, and the room table.

Each request of a player in a room goes to their ``Room`` (the ``room`` package), whose refusal,
if any, is answered here to the connection as an ``error``. Here live what a room must
not see: the connections, the table of rooms by code and the codes drawn for new ones,
the rooms counted per address, the cluster's ``Locate`` of a room on another node, and
the races waiting for storage's commit. ``Play`` is also the rooms' ``Outside``: what a
room delivers to a member goes to that member's connection, here or a guest's.

The move path (``Hub.receive`` -> ``Play.move`` -> ``Room.move``) is the hot one: it
reaches the shared plumbing through names bound once (``Part``, ``Room.__init__``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from protocol import GameCode, InvalidCodeError, InvalidRulesError, Rules
from protocol.messages import Create, Left, Message

from ..domain.records import RaceRecord, RatingChange
from .deals import Deals
from .effects import Locate, Persist, Send
from .room import Refusal, Room, RoomState
from .shared import Part, Shared
from .state import _Conn, _Player

__all__ = ["Play"]

#: The refusal of ``create`` with ``rated`` and a ``code`` (docs/protocol.md 4.3).
RATED_CODE_TEXT = "a rated room always gets a fresh secret deal: give rules, not a code"
#: The refusals of ``create``'s ``winnable`` where it cannot hold (docs/protocol.md 4.3).
WINNABLE_CODE_TEXT = "a room with a code plays that deal: winnable is for random deals"
WINNABLE_RATED_TEXT = "a rated room is always dealt a winnable deal: leave winnable out"

log = logging.getLogger("yukon.rooms")


class Play(Part):
    """Every room of the hub as the sessions reach it, and the rooms' ``Outside``."""

    def __init__(
        self,
        shared: Shared,
        *,
        random_deal: Callable[[], int | bytes],
        new_salt: Callable[[], str],
        new_room_code: Callable[[], str],
        new_invite_key: Callable[[], str] = lambda: "",
        boot: str,
        stock_seed: Callable[[], int | bytes] | None = None,
    ) -> None:
        super().__init__(shared)
        self.random_deal = random_deal
        #: An invite-only room's key (``Hub``'s: 12 random URL-safe characters).
        self.new_invite_key = new_invite_key
        self.new_salt = new_salt
        #: The deals of rooms with a random deal, and the stock of proven ones (issue 40).
        self.deals = Deals(
            shared,
            random_deal=random_deal,
            new_salt=new_salt,
            stock_seed=stock_seed or random_deal,
        )
        self._new_room_code = new_room_code
        #: Makes race ids unique across restarts (``RaceRecord.uid``).
        self._boot = boot
        #: Rooms existing, by the address (``limits.address_key``) of their creator, and
        #: the address each room counts for, by code.
        self._addr_rooms: dict[str, int] = {}
        self._room_keys: dict[str, str] = {}
        #: Races gone to storage whose result waits for the commit, by race id.
        self._finishing: dict[int, Room[_Player]] = {}
        self._race_ids = 0
        # The rooms' ``Outside``, bound once.
        self.config = shared.config
        self.wall = shared.wall
        self.timer = shared.timer
        self.emit = shared.out.append

    # -- the rooms' ``Outside`` -------------------------------------------------------------

    @property
    def now(self) -> float:
        return self._shared.now

    def deliver(self, member: _Player, message: Message) -> None:
        """A room's frame to a member: to their connection (a guest's goes to its gateway)."""
        if member.conn is not None:
            self._out.append(Send(member.conn, message))

    def persist(self, room: Room[_Player], record: RaceRecord) -> None:
        self._finishing[record.race_id] = room
        self._out.append(Persist(record))

    def next_race_id(self) -> int:
        """A new race id, unique in this process (``RaceRecord.race_id``)."""
        self._race_ids += 1
        return self._race_ids

    def new_race_id(self) -> tuple[int, str]:
        race_id = self.next_race_id()
        return race_id, f"{self._boot}-{race_id}"

    def redeal(self, room: Room[_Player], *, drawn: bool = False) -> None:
        """A new secret deal for the room's next race (``Deals.deal``; ``drawn``: the
        room was just made with a fresh secret deal)."""
        self.deals.deal(room, drawn=drawn)

    def vacated(self, room: Room[_Player]) -> None:
        del self._rooms[room.code]
        self._uncount(room.code)

    def _uncount(self, code: str) -> None:
        key = self._room_keys.pop(code, "")
        if key:
            held = self._addr_rooms.get(key, 0) - 1
            if held > 0:
                self._addr_rooms[key] = held
            else:
                self._addr_rooms.pop(key, None)

    # -- requests ---------------------------------------------------------------------------

    def refuse(self, c: _Conn, refusal: Refusal | None) -> None:
        """Answer a room's refusal, if any, to the connection that asked."""
        if refusal is not None:
            self._error(c, refusal.code, refusal.text, seq=refusal.seq)

    def create(self, c: _Conn, p: _Player, msg: Create, now: float) -> None:
        if not self._may_enter(c, p, now):
            return
        if msg.rules is not None and msg.code is not None:
            self._error(c, "bad_rules", "give either rules or a game code, not both")
            return
        if msg.rated and msg.code is not None:
            # A known deal can be solved before the race (issue 40: a pasted line won a
            # rated race in 4 s), so a rated room is always dealt a fresh secret deal.
            self._error(c, "rated_code", RATED_CODE_TEXT)
            return
        if (msg.winnable and msg.code is not None) or (msg.rated and msg.winnable is False):
            text = WINNABLE_CODE_TEXT if msg.code is not None else WINNABLE_RATED_TEXT
            self._error(c, "bad_winnable", text)
            return
        fixed: GameCode | None = None
        try:
            if msg.code is not None:
                fixed = GameCode.parse(msg.code)
                rules = fixed.rules
            else:
                rules = Rules.parse(msg.rules if msg.rules is not None else "C")
        except (InvalidCodeError, InvalidRulesError) as exc:
            self._error(c, "bad_rules", str(exc))
            return
        code = self.take_room_code(c)
        if code is None:
            return
        deal = fixed or GameCode(rules, self.random_deal())
        room = Room(
            self,
            code,
            p,
            rules,
            fixed,
            deal,
            msg.max_players,
            msg.undo,
            msg.time_limit,
            salt=None if fixed else self.new_salt(),
            hints=msg.hints,
            rated=msg.rated,
        )
        room.bots = msg.bots or p.bot  # a bot's own room takes bots
        if msg.invite_only:
            room.invite_key = self.new_invite_key()
        if fixed is None:  # a random deal: winnable unless the host said no (never if rated)
            room.wants_winnable = msg.rated or msg.winnable is not False
            self.redeal(room, drawn=True)
        self.open_room(c, p, room)
        log.info("%s created room %s (%s)", p.name, code, fixed or rules)
        room.room_changed(now, progress=False)

    def take_room_code(self, c: _Conn) -> str | None:
        """A code for a new room created from ``c``, or None once the error is answered:
        the server's room limit, the address's, or no free code."""
        if self.rooms_full():
            self._error(c, "server_full", "this server has no room for another room; try later")
            return None
        held = self._addr_rooms.get(c.key, 0)
        if c.key and 0 < self._config.max_rooms_per_address <= held:
            self._error(
                c,
                "too_many_rooms",
                f"players from your address have {held} rooms open;"
                " join one, or wait until one closes",
            )
            return None
        code = self.free_room_code()
        if code is None:
            self.no_code(c)
        return code

    def open_room(self, c: _Conn, p: _Player, room: Room[_Player]) -> None:
        """The room exists, counted for ``c``'s address, with ``p`` its host."""
        self._room_keys[room.code] = c.key
        self._addr_rooms[c.key] = self._addr_rooms.get(c.key, 0) + 1
        room.seat_player(p)
        self._rooms[room.code] = room

    def join(
        self,
        c: _Conn,
        p: _Player,
        code: str,
        now: float,
        *,
        spectator: bool,
        located: bool = False,
        key: str | None = None,
    ) -> None:
        """A ``join`` (or, ``spectator``, a ``watch``) of room ``code``; ``key``: the
        invite key it came with. A room that does not admit it (``Room.admits``: an
        invite-only room, a wrong or missing key) is answered exactly as a room that does
        not exist, and counts as a guess (docs/protocol.md 4.32)."""
        here = p.room
        if here is not None and here.code == code.strip().upper() and not p.daily_pending:
            # The room they are in already (an invite link reloaded): its state again, as
            # after a resume, never an error; their role stays (docs/protocol.md 4.14).
            here.resync(p, now)
            return
        if not self._may_enter(c, p, now):
            return
        misses = self._shared.room_misses
        if c.key and misses.full(c.key, now):
            # Not even looked up: a guesser over budget learns nothing more.
            wait = max(1, round(misses.retry_after(c.key, now)))
            self._error(
                c,
                "too_many_guesses",
                f"too many room codes that name no room from your address: try again in {wait} s",
            )
            return
        room = self._rooms.get(code.strip().upper())
        if room is None and self._shared.ask_directory(c, located=located):
            # Not here: the directory knows which node holds it (``Nodes.located``).
            if not c.locating:
                c.locating = True
                self._out.append(Locate(c.id, code.strip().upper(), self._shared.frame))
            return
        if room is None or room.private or not room.admits(key):
            self.no_such_room(c, code, now)
            return
        self.refuse(c, room.enter(p, now, spectator=spectator))

    def no_such_room(self, c: _Conn, code: str, now: float) -> None:
        """A code that names no open room here (nor, on a cluster, anywhere): a miss
        counted against the address's budget of guesses (``too_many_guesses``)."""
        if c.key:
            self._shared.room_misses.add(c.key, now)
        self._error(c, "no_such_room", f"there is no room {code.strip()[:16]!r}")

    def ready(self, c: _Conn, p: _Player, ready: bool, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        self.refuse(c, room.set_ready(p, ready, now))

    def start(self, c: _Conn, p: _Player, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        self.refuse(c, room.start(p, now))

    def move(self, c: _Conn, p: _Player, seq: int, move: str | None, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room", seq=seq)
            return
        refusal = room.move(p, seq, move, now)
        if refusal is not None:
            self._error(c, refusal.code, refusal.text, seq=refusal.seq)

    def finish(self, c: _Conn, p: _Player, seq: int, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room", seq=seq)
            return
        self.refuse(c, room.finish(p, seq, now))

    def resign(self, c: _Conn, p: _Player, seq: int | None, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room", seq=seq)
            return
        self.refuse(c, room.resign(p, now, seq))

    def leave(self, c: _Conn, p: _Player, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        refusal = room.leave(p, now)
        if refusal is not None:
            self.refuse(c, refusal)
            return
        self._send(p, Left(room.code))

    def rematch(self, c: _Conn, p: _Player, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        self.refuse(c, room.rematch(p, now))

    def committed(self, race_id: int, now: float, ratings: Mapping[int, RatingChange]) -> None:
        """Storage has committed race ``race_id``: now, and only now, announce the result."""
        for pid, change in ratings.items():  # the name shows its new rating from now on
            p = self._players.get(pid)
            if p is not None:
                p.rating, p.provisional = change.rating, change.provisional
        room = self._finishing.pop(race_id, None)
        if room is not None and self._rooms.get(room.code) is room:
            self._won_daily(room)
            room.committed(race_id, now, ratings)

    def _won_daily(self, room: Room[_Player]) -> None:
        """A counted daily attempt won moves its player's streak on (what storage would
        now say: the welcome of another device tells the same, docs/ratings.md)."""
        if room.daily is None or room.practice or room.race is None:
            return
        for name, runner in room.race.runners.items():
            p = self._players.get(room.ids.get(name, -1))
            if p is not None and runner.state.value == "won":
                p.streak = p.streak.won(room.daily)

    def alive(self, room: Room[_Player]) -> bool:
        """The room is still this hub's (a timer of a room closed or lost finds it not)."""
        return self._rooms.get(room.code) is room

    def drop(self, code: str) -> Room[_Player] | None:
        """Room ``code`` is no longer here (another node holds it): out of the table and
        the address's count; its timers find nothing to do (``Room.lost``)."""
        room = self._rooms.pop(code, None)
        if room is not None:
            self._uncount(code)
            room.lost()
        return room

    def rooms_full(self) -> bool:
        """No room may open: rooms and reserved daily rooms together reach the limit."""
        return len(self._rooms) + len(self._daily_rooms) >= self._config.max_rooms

    def free_room_code(self) -> str | None:
        """A code no room here holds; in a cluster, one this node reserved in its directory
        (``new_room_code`` gives "" when it holds none: the directory is away)."""
        reserved = self._daily_rooms.values()
        for _ in range(100):  # 32**5 codes: a clash is rare, a run of them means something broke
            code = self._new_room_code()
            if not code:
                return None
            if code not in self._rooms and code not in reserved:
                return code
        return None

    def no_code(self, c: _Conn) -> None:
        """No code for a new room: in a cluster, the directory is away."""
        if self._shared.node:
            self._error(
                c,
                "unavailable",
                "this node holds no free room code just now (the cluster's directory is"
                " unreachable or slow); rooms already racing go on: try again shortly",
            )
        else:
            self._error(c, "server_full", "no free room code; try again later")

    def _may_enter(self, c: _Conn, p: _Player, now: float) -> bool:
        """May this player create or join a room: no daily deal on its way, and in no room,
        or in one whose race is over for them, which they then leave (``leave_over``)."""
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return False
        return self.leave_over(c, p, now)

    def leave_over(self, c: _Conn, p: _Player, now: float) -> bool:
        """On the way to another room (``join``, ``watch``, ``create``, ``daily``,
        ``ghost``): a player whose race is over in their room leaves it, as ``leave`` would
        (``left`` is sent); True once they are in no room. A player in a lobby, a countdown
        or a race they still run gets ``already_in_room``: False (docs/protocol.md 4.14)."""
        room = p.room
        if room is None:
            return True
        if not room.over_for(p):
            what = (
                f"you are racing in room {room.code}: finish or resign first"
                if room.state == RoomState.RACING
                else f"you are in room {room.code}; leave it first"
            )
            self._error(c, "already_in_room", what)
            return False
        refusal = room.leave(p, now)
        if refusal is not None:  # cannot happen: a race over for them never refuses
            self.refuse(c, refusal)
            return False
        self._send(p, Left(room.code))
        return not self._shared.sends_home(c)

    def expire_player(self, p: _Player, now: float) -> None:
        """The resume window passed: abandon any race, leave the room, free the name.

        Only ``p`` itself is forgotten: a cluster's node forgets a player whose session it
        relayed (``Nodes._forget``) while that session's window still runs, and may hold
        a newer player of the same id and token by the time it ends (a member of a race
        it took over since, a guest, a new hello). Removing that one by id left its room
        holding a seat that no hello found again (the compose drill: a resume got a
        welcome naming the room, then nothing)."""
        room = p.room
        if room is not None:
            room.expire(p, now)
        if self._tokens.get(p.token) is p:
            del self._tokens[p.token]
        if self._players.get(p.id) is p:
            del self._players[p.id]
