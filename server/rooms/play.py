"""Rooms and the race inside them: what players do in a room, and the end of its race.

Create, join or watch, ready, start (a countdown, then the race), move and undo, resign,
leave, rematch; the room bookkeeping (hosts, codes, members who leave or expire); the
``progress`` a move produces, held for newer ones; time limits and the end of a race,
whose result waits for storage's commit; and the ``room`` and ``race`` messages.

The move path (``Hub.receive`` -> ``Play.move``) is the hot one: it reaches the shared
plumbing through names bound once (``Part``), at the cost of the hub's own methods.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from protocol import GameCode, InvalidCodeError, InvalidRulesError, Rules
from protocol.commitment import commitment
from protocol.messages import (
    Countdown,
    Create,
    Error,
    Left,
    Progress,
    Result,
    RoomPlayer,
)
from protocol.messages import (
    Race as RaceMsg,
)
from protocol.messages import (
    Room as RoomMsg,
)

from ..daily import code_public, code_public_at
from ..effects import Journal, LiveAction, LiveRace, Locate, Persist, PlayerResult, RaceRecord
from ..race import Ghost, Race, Runner
from .shared import Part, Shared
from .state import _Conn, _Player, _Room

__all__ = ["Play"]

log = logging.getLogger("yukon.rooms")


class Play(Part):
    """Every room of the hub, from its creation to its last member leaving."""

    def __init__(
        self,
        shared: Shared,
        *,
        random_deal: Callable[[], int | bytes],
        new_salt: Callable[[], str],
        new_room_code: Callable[[], str],
        boot: str,
    ) -> None:
        super().__init__(shared)
        self._random_deal = random_deal
        self._new_salt = new_salt
        self._new_room_code = new_room_code
        #: Makes race ids unique across restarts (``RaceRecord.uid``).
        self._boot = boot
        #: Rooms existing, by the address (``limits.address_key``) of their creator.
        self._addr_rooms: dict[str, int] = {}
        #: Races gone to storage whose result waits for the commit, by race id.
        self._finishing: dict[int, _Room] = {}
        self._race_ids = 0

    def next_race_id(self) -> int:
        """A new race id, unique in this process (``RaceRecord.race_id``)."""
        self._race_ids += 1
        return self._race_ids

    def create(self, c: _Conn, p: _Player, msg: Create, now: float) -> None:
        if not self._may_enter(c, p):
            return
        if msg.rules is not None and msg.code is not None:
            self._error(c, "bad_rules", "give either rules or a game code, not both")
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
        deal = fixed or GameCode(rules, self._random_deal())
        room = _Room(code, p, rules, fixed, deal, msg.max_players, msg.undo, msg.time_limit)
        room.salt = None if fixed else self._new_salt()
        room.hints = msg.hints
        self.open_room(c, p, room)
        log.info("%s created room %s (%s)", p.name, code, fixed or rules)
        self.room_changed(room, now, progress=False)

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

    def open_room(self, c: _Conn, p: _Player, room: _Room) -> None:
        """The room exists, counted for ``c``'s address, with ``p`` its host."""
        room.key = c.key
        self._addr_rooms[c.key] = self._addr_rooms.get(c.key, 0) + 1
        room.players.append(p)
        p.room = room
        p.spectator = False
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
    ) -> None:
        if not self._may_enter(c, p):
            return
        room = self._rooms.get(code.strip().upper())
        if room is None and self._shared.node and c.guest is None and not located:
            # Not here: the directory knows which node holds it (``Nodes.located``).
            if not c.locating:
                c.locating = True
                self._out.append(Locate(c.id, code.strip().upper(), self._shared.frame))
            return
        if room is None or room.daily is not None or room.ghost is not None:  # private
            self._error(c, "no_such_room", f"there is no room {code.strip()[:16]!r}")
            return
        if not spectator:
            if room.state not in ("lobby", "finished"):
                self._error(c, "race_running", "this room is racing; watch it, or join after")
                return
            if len(room.players) >= room.max_players:
                self._error(
                    c, "room_full", f"room {room.code} is full ({room.max_players} players)"
                )
                return
            room.players.append(p)
        else:
            room.spectators.append(p)
        p.room = room
        p.spectator = spectator
        if spectator:
            self.room_changed(room, now, progress=False, skip=p)
            self.resync(p, now)
        else:
            self.room_changed(room, now, progress=False)

    def ready(self, c: _Conn, p: _Player, ready: bool, now: float) -> None:
        room = self._room_as_player(c, p)
        if room is None:
            return
        if room.state != "lobby":
            self._error(c, "wrong_state", "ready is for the lobby, before the race")
            return
        if ready:
            room.ready.add(p.name)
        else:
            room.ready.discard(p.name)
        self.room_changed(room, now, progress=False)

    def start(self, c: _Conn, p: _Player, now: float) -> None:
        room = self._room_as_host(c, p, "lobby", "starts the race", "the room is not in the lobby")
        if room is None:
            return
        waiting = [m.name for m in room.players if m is not p and m.name not in room.ready]
        if waiting:
            self._error(c, "not_ready", "not ready yet: " + ", ".join(waiting))
            return
        room.state = "countdown"
        room.countdown_until = now + self._config.countdown_s
        self._timer(room.countdown_until, "countdown", room)
        countdown = Countdown(int(self._config.countdown_s * 1000))
        for m in room.members():
            self._send(m, countdown)
        self.room_changed(room, now, progress=False)

    def start_race(self, room: _Room, now: float) -> None:
        room.race_id = self.next_race_id()
        room.race = Race(
            room.deal,
            [m.name for m in room.players],
            started=now,
            time_limit_s=room.time_limit,
            undo=room.undo,
        )
        room.started_wall = self._wall()
        room.ids = {m.name: m.id for m in room.players}
        room.uid = f"{self._boot}-{room.race_id}"
        room.journal_n = 0
        room.state = "racing"
        room.result = None
        self.limit_timers(room, room.race, now)
        self._out.append(
            Journal(
                LiveRace(
                    uid=room.uid,
                    room=room.code,
                    code=str(room.deal),
                    rules=str(room.rules),
                    daily_date=room.daily,
                    attempt=room.attempt,
                    undo=room.undo,
                    time_limit=room.time_limit,
                    max_players=room.max_players,
                    fixed=room.fixed is not None,
                    host_id=room.host.id,
                    players=tuple((m.id, m.name) for m in room.players),
                    started_wall=room.started_wall,
                    hints=room.hints,
                    salt=room.salt,
                    practice=room.practice,
                    ghost_race=room.ghost.race if room.ghost else None,
                    ghost_player=room.ghost.name if room.ghost else None,
                )
            )
        )
        self.ghost_begins(room, room.race, now)
        log.info(
            "room %s: race %d started with %d players", room.code, room.race_id, len(room.players)
        )
        for m in room.players:
            runner = room.race.runners[m.name]
            self._send(m, self._race_msg(room, runner, now))
        self.room_changed(room, now)
        self.check_over(room)

    def move(self, c: _Conn, p: _Player, seq: int, move: str | None, now: float) -> None:
        runner, race, room = self._runner(c, p, seq)
        if runner is None or race is None or room is None:
            return
        self.enforce_limit(room, now)
        if seq <= runner.last_seq:
            reply = race.replay_of(runner, seq)
            if reply is None:
                self._error(
                    c, "stale_seq", f"seq {seq} is older than the last {runner.last_seq}", seq=seq
                )
            else:
                self._send(p, reply)
            return
        if runner.done:
            self._error(c, "finished", f"your race is over ({runner.state.value})", seq=seq)
            return
        before = runner.state
        reply = (
            race.move(runner, seq, move, now) if move is not None else race.undo(runner, seq, now)
        )
        self._send(p, reply)
        if reply.TYPE != "refused":
            self.journal(room, p.id, seq, move or "undo", race.elapsed_ms(now))
            if runner.state is before:
                self._hold_progress(room, p, now)
            else:  # won, stuck, or unstuck: everyone sees it at once
                self._progress(room, now)
            self.check_over(room)

    def resign(self, c: _Conn, p: _Player, now: float) -> None:
        runner, race, room = self._runner(c, p, None)
        if runner is None or race is None or room is None:
            return
        self.enforce_limit(room, now)
        if runner.done:
            self._error(c, "finished", f"your race is over ({runner.state.value})")
            return
        race.resign(runner, now)
        self.journal(room, p.id, None, "resign", race.elapsed_ms(now))
        log.info("room %s: %s resigned", room.code, p.name)
        self._progress(room, now)
        self.check_over(room)

    def leave(self, c: _Conn, p: _Player, now: float) -> None:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return
        if not p.spectator and room.race is not None and room.state == "racing":
            runner = room.race.runners.get(p.name)
            if runner is not None and not runner.done:
                self._error(c, "in_race", "you are racing: resign first, then leave")
                return
            if runner is not None:  # a restart must not bring them back into the room
                self.journal(room, p.id, None, "leave", room.race.elapsed_ms(now))
        self.remove_member(room, p, now)
        self._send(p, Left(room.code))

    def rematch(self, c: _Conn, p: _Player, now: float) -> None:
        room = self._room_as_host(
            c, p, "finished", "starts a rematch", "a rematch follows a finished race"
        )
        if room is None:
            return
        if room.daily is not None and room.ghost is None:
            self._error(c, "wrong_state", "a daily deal has no rematch; ask for the daily again")
            return
        room.state = "lobby"
        room.race = None
        room.result = None
        room.ghost_due = None
        room.ready.clear()
        if room.ghost is None:  # a ghost room races the same run on its deal again
            room.fixed = None  # a rematch is always a new deal, drawn at random
            room.deal = GameCode(room.rules, self._random_deal())
            room.salt = self._new_salt()
        self.room_changed(room, now, progress=False)

    def enforce_limit(self, room: _Room, now: float) -> None:
        """Past the time limit nobody plays on, whether or not the timer has fired yet; nor
        on a daily attempt once its day's code is public (``code_public``: only a race
        resumed after a restart, whose down time was not charged, can run that long)."""
        race = room.race
        if race is None or room.state != "racing":
            return
        if race.expire(now) or (
            room.daily is not None and code_public(room.daily, self._wall()) and race.cut(now)
        ):
            self._progress(room, now)
            self.check_over(room)

    def limit_timers(self, room: _Room, race: Race, now: float) -> None:
        """Wake up at the race's time limit, and a daily attempt also when its code goes
        public if that comes first (wall time, so a moved clock at worst ends it late:
        every move checks too). That is never the case for an attempt begun on its day
        with the usual limit, so no timer holds an ordinary room for a day."""
        self._timer(race.deadline, "limit", room)
        if room.daily is not None:
            public = now + max(0.0, code_public_at(room.daily) - self._wall())
            if public < race.deadline:
                self._timer(public, "limit", room)

    def check_over(self, room: _Room) -> None:
        """A race whose players are all done goes to storage; the result follows the commit."""
        race = room.race
        if room.state == "racing" and race is not None and not room.finishing and race.is_over():
            room.finishing = True
            self._finishing[room.race_id] = room
            ranks = {e.name: e for e in race.ranks()}
            rows = tuple(
                PlayerResult(
                    player_id=room.ids[r.name],
                    name=r.name,
                    rank=ranks[r.name].rank,
                    outcome=r.state.value,
                    time_ms=ranks[r.name].time_ms,
                    moves=r.game.move_count,
                    score=r.game.score,
                    foundations=r.game.cards_on_foundations,
                    undos=r.undos,
                    practice=room.practice,
                    journal=tuple(r.journal),
                    hinted=r.hinted,
                )
                for r in race.runners.values()
            )
            self._out.append(
                Persist(
                    RaceRecord(
                        uid=room.uid,
                        race_id=room.race_id,
                        room=None if room.daily else room.code,
                        code=str(room.deal),
                        rules=str(room.rules),
                        daily_date=room.daily,
                        started_wall=room.started_wall,
                        ended_wall=self._wall(),
                        results=rows,
                    )
                )
            )

    def committed(self, race_id: int, now: float) -> None:
        """Storage has committed race ``race_id``: now, and only now, announce the result."""
        room = self._finishing.pop(race_id, None)
        if room is not None and room.race_id == race_id and self._rooms.get(room.code) is room:
            assert room.race is not None
            room.finishing = False
            room.state = "finished"
            code = self._public_code(room)
            ranks = room.race.ranks()
            room.result = Result(
                code=code,
                ranks=ranks,
                salt=room.salt if code else None,
                race=room.uid,
                ghost=room.race.ghost_rank(ranks),
            )
            log.info(
                "room %s: race %d over, %s; winner %s",
                room.code,
                race_id,
                code or "a secret deal",
                room.result.ranks[0].name if room.result.ranks else "-",
            )
            for m in room.members():
                self._send(m, room.result)
            self.hand_over_if_away(room)
            self.room_changed(room, now, progress=False)

    def hand_over_if_away(self, room: _Room) -> None:
        """A host who is away must not hold the others back from starting or a rematch."""
        host = room.host
        if host.conn is None:
            present = [m for m in room.players if m.conn is not None]
            if present:
                room.ready.add(host.name)  # a host never says ready; keep them counted so
                room.host = present[0]

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

    def _may_enter(self, c: _Conn, p: _Player) -> bool:
        """May this player create or join a room: in none, and no daily deal on its way?"""
        if p.daily_pending:
            self._error(c, "wrong_state", "your daily deal is on its way")
            return False
        if p.room is not None:
            self._error(c, "already_in_room", f"you are in room {p.room.code}; leave it first")
            return False
        return True

    def _room_as_player(self, c: _Conn, p: _Player) -> _Room | None:
        if p.room is None:
            self._error(c, "not_in_room", "you are not in a room")
            return None
        if p.spectator:
            self._error(c, "not_player", "spectators watch; they cannot play")
            return None
        return p.room

    def _room_as_host(
        self, c: _Conn, p: _Player, state: str, action: str, wrong_state: str
    ) -> _Room | None:
        """The player's room if they host it and it is in ``state``; else answer an error."""
        room = self._room_as_player(c, p)
        if room is None:
            return None
        if room.host is not p:
            self._error(c, "not_host", f"only the host ({room.host.name}) {action}")
            return None
        if room.state != state:
            self._error(c, "wrong_state", f"{wrong_state} (it is {room.state})")
            return None
        return room

    def _runner(
        self, c: _Conn, p: _Player, seq: int | None
    ) -> tuple[Runner | None, Race | None, _Room | None]:
        room = p.room
        if room is None:
            self._error(c, "not_in_room", "you are not in a room", seq=seq)
            return None, None, None
        if p.spectator:
            self._error(c, "not_player", "spectators watch; they cannot play", seq=seq)
            return None, None, None
        race = room.race
        if race is None or room.state not in ("racing", "finished"):
            self._error(c, "no_race", "the race has not started", seq=seq)
            return None, None, None
        runner = race.runners.get(p.name)
        if runner is None:
            self._error(c, "not_player", "you are not in this race", seq=seq)
            return None, None, None
        return runner, race, room

    def remove_member(self, room: _Room, p: _Player, now: float) -> None:
        if p in room.players:
            room.players.remove(p)
        if p in room.spectators:
            room.spectators.remove(p)
        room.ready.discard(p.name)
        p.room = None
        p.spectator = False
        if room.host is p and room.players:
            room.host = room.players[0]
        if not room.players:
            for s in list(room.spectators):
                self._send(s, Error("room_closed", f"room {room.code} closed: every player left"))
                s.room = None
                s.spectator = False
            room.spectators.clear()
            del self._rooms[room.code]
            if room.key:
                held = self._addr_rooms.get(room.key, 0) - 1
                if held > 0:
                    self._addr_rooms[room.key] = held
                else:
                    self._addr_rooms.pop(room.key, None)
            log.info("room %s closed", room.code)
            return
        self.room_changed(room, now)

    def expire_player(self, p: _Player, now: float) -> None:
        """The resume window passed: abandon any race, leave the room, free the name."""
        room = p.room
        if room is not None:
            if room.race is not None and room.state == "racing" and not p.spectator:
                runner = room.race.runners.get(p.name)
                if runner is not None and not runner.done:
                    room.race.abandon(runner, now)
                    self.journal(room, p.id, None, "abandon", room.race.elapsed_ms(now))
                    log.info("room %s: %s abandoned the race", room.code, p.name)
                    self.check_over(room)
            self.remove_member(room, p, now)
        self._tokens.pop(p.token, None)
        self._players.pop(p.id, None)

    # -- the ghost of a ghost room -----------------------------------------------------------

    def ghost_begins(self, room: _Room, race: Race, now: float) -> None:
        """A ghost room's race starts (or is rebuilt): its recorded run starts with it."""
        run = room.ghost
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
        self._ghost_timer(room, race, now)

    def _ghost_timer(self, room: _Room, race: Race, now: float) -> None:
        """Wake up when the ghost's figures next change, while the race runs."""
        ghost = race.ghost
        nxt = None if ghost is None else ghost.next_mark(race.elapsed_ms(now))
        room.ghost_due = None if nxt is None else race.started + nxt / 1000
        if room.ghost_due is not None:
            self._timer(room.ghost_due, "ghost", room)

    def ghost_moves(self, room: _Room, now: float) -> None:
        """The ghost's timer: it played on (its recorded actions up to now). Everyone sees
        it as they would a live opponent's move: held with the others' moves
        (``_hold_progress``), or at once when its state changes (won, stuck, done)."""
        race = room.race
        due = room.ghost_due
        if (
            race is None
            or race.ghost is None
            or due is None
            or due > now
            or room.state != "racing"
            or room.finishing
            or self._rooms.get(room.code) is not room
        ):
            return
        before = race.ghost.progress(max(0, race.elapsed_ms(due) - 1)).state
        self._ghost_timer(room, race, now)
        shown = race.ghost_progress(now)
        assert shown is not None
        if shown.state != before or shown.time_ms is not None:
            self._progress(room, now)
        else:
            self._hold_progress(room, None, now)

    def _hold_progress(self, room: _Room, mover: _Player | None, now: float) -> None:
        """A move's ``progress`` waits ``progress_hold_s`` for newer moves in the room.

        Why: four fast players make a progress per move for each of them; held, one
        snapshot goes out per room per hold, built and encoded once, whatever the rate,
        and not to a runner whose own moves are all it shows. Any other frame to a member
        releases it first (``Shared.send``), so it never arrives after something that happened
        later.
        """
        hold = self._config.progress_hold_s
        if hold <= 0:  # no hold: at once, to everyone (the worked examples of the docs)
            self._progress(room, now)
        elif room.progress_due is None:
            room.progress_due = now + hold
            room.progress_mover = mover
            self._timer(room.progress_due, "progress", room)
        elif room.progress_mover is not mover:
            room.progress_mover = None

    def journal(self, room: _Room, player_id: int, seq: int | None, action: str, ms: int) -> None:
        room.journal_n += 1
        self._out.append(Journal(LiveAction(room.uid, room.journal_n, player_id, seq, ms, action)))

    def resync(self, p: _Player, now: float) -> None:
        """After a resume: the room, the player's own race, progress, and any result."""
        room = p.room
        if room is None:
            return
        self._send(p, self._room_msg(room, p))
        race = room.race
        if race is not None and room.state in ("racing", "finished"):
            runner = race.runners.get(p.name)
            if runner is not None and not p.spectator:
                self._send(p, self._race_msg(room, runner, now))
            self._send(
                p,
                Progress(
                    race.elapsed_ms(now), race.progress(room.connected()), race.ghost_progress(now)
                ),
            )
        if room.state == "countdown":
            self._send(p, Countdown(max(0, int((room.countdown_until - now) * 1000))))
        if room.result is not None:
            self._send(p, room.result)

    def room_changed(
        self, room: _Room, now: float, *, progress: bool = True, skip: _Player | None = None
    ) -> None:
        """Every member (but ``skip``) gets the room again, and progress if it is racing."""
        for m in room.members():
            if m is not skip:
                self._send(m, self._room_msg(room, m))
        if progress and room.race is not None and room.state == "racing":
            self._progress(room, now, skip=skip)

    def _public_code(self, room: _Room) -> str | None:
        """A daily deal's code stays secret until ``code_public``; a race's, until its end."""
        if room.daily is not None:
            return str(room.deal) if code_public(room.daily, self._wall()) else None
        return str(room.deal) if room.fixed is not None or room.state == "finished" else None

    def _room_msg(self, room: _Room, viewer: _Player) -> RoomMsg:
        code = self._public_code(room)
        return RoomMsg(
            room=room.code,
            you="spectator" if viewer.spectator else "player",
            host=room.host.name,
            state=room.state,
            rules=str(room.rules),
            code=code,
            max_players=room.max_players,
            undo=room.undo,
            hints=room.hints,
            time_limit=room.time_limit,
            players=tuple(
                RoomPlayer(m.name, m is room.host or m.name in room.ready, m.conn is not None)
                for m in room.players
            ),
            spectators=len(room.spectators),
            commitment=commitment(room.deal, room.salt) if room.salt else None,
            salt=room.salt if code else None,
            ghost=room.ghost.name if room.ghost else None,
        )

    def _race_msg(self, room: _Room, runner: Runner, now: float) -> RaceMsg:
        assert room.race is not None
        game = runner.game
        return RaceMsg(
            view=game.view(),
            elapsed_ms=room.race.elapsed_ms(now),
            time_limit=room.time_limit,
            seq=runner.last_seq,
            score=game.score,
            moves=game.move_count,
            state=runner.state.value,
        )
