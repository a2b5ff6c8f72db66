"""A room alone (server/rooms/room/): no hub, no connections, a fake clock.

The room is driven through its own methods with an ``Outside`` that records what the room
delivers to whom, the effects it emits, the races it persists and the timers it sets; the
engine and the race are the real ones. ``test_rooms.py`` drives the same code through
``Hub``, as a client sees it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest

from protocol import GameCode
from protocol.commitment import commitment
from protocol.messages import (
    Accepted,
    Countdown,
    Error,
    Message,
    Progress,
    Refused,
    Result,
)
from protocol.messages import Race as RaceMsg
from protocol.messages import Room as RoomMsg
from server.domain.records import LiveAction, LiveRace, RaceRecord
from server.rooms import HubConfig
from server.rooms.effects import Effect, Journal
from server.rooms.room import TRANSITIONS, IllegalTransition, Refusal, Room, RoomState

from .test_rooms import SALT, STUCK_CODE, STUCK_MOVE, WIN_CODE, WIN_MOVES

WALL = 1_700_000_000.0


@dataclass(eq=False)
class Seat:
    """A member as the room sees it (the hub's players are these, and more)."""

    id: int
    name: str
    connected: bool = True
    spectator: bool = False
    room: Room[Any] | None = None
    rating: int | None = None
    provisional: bool = True
    bot: bool = False
    address: str = ""
    device: str = ""


@dataclass
class FakeOutside:
    """What a room reaches: every delivery, effect, persisted race and timer recorded."""

    config: HubConfig = field(default_factory=HubConfig)
    now: float = 100.0
    delivered: list[tuple[str, Message]] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    persisted: list[RaceRecord] = field(default_factory=list)
    timers: list[tuple[float, str]] = field(default_factory=list)
    vacated_rooms: list[str] = field(default_factory=list)
    races: int = 0

    def wall(self) -> float:
        return WALL

    def deliver(self, member: Seat, message: Message) -> None:
        if member.connected:
            self.delivered.append((member.name, message))

    def emit(self, effect: Effect) -> None:
        self.effects.append(effect)

    def persist(self, room: Room[Seat], record: RaceRecord) -> None:
        self.persisted.append(record)

    def timer(self, when: float, kind: str, room: Room[Seat]) -> None:
        self.timers.append((when, kind))

    def new_race_id(self) -> tuple[int, str]:
        self.races += 1
        return self.races, f"boot-{self.races}"

    def random_deal(self) -> int:
        return 1

    def new_salt(self) -> str:
        return SALT

    def redeal(self, room: Room[Seat]) -> None:
        """A plain random deal (the hub's ``Deals`` and its stock have tests of their own)."""
        room.fixed = None
        room.deal = GameCode(room.rules, self.random_deal())
        room.salt = self.new_salt()

    def vacated(self, room: Room[Seat]) -> None:
        self.vacated_rooms.append(room.code)

    def to(self, name: str) -> list[Message]:
        """What ``name`` was delivered, in order; forgotten once read."""
        mine = [m for who, m in self.delivered if who == name]
        self.delivered = [(who, m) for who, m in self.delivered if who != name]
        return mine


def kinds(messages: list[Message]) -> list[str]:
    return [m.TYPE for m in messages]


def lobby(
    outside: FakeOutside, code: str = WIN_CODE, *, secret: bool = False, **members: Seat
) -> Room[Seat]:
    """A room on deal ``code`` (drawn in secret, with a salt, if ``secret``) whose first
    member hosts it; the others join as players."""
    seats = list(members.values())
    deal = GameCode.parse(code)
    room = Room(
        outside,
        "ZEBRA",
        seats[0],
        deal.rules,
        None if secret else deal,
        deal,
        4,
        True,
        600,
        salt=SALT if secret else None,
    )
    room.seat_player(seats[0])
    for seat in seats[1:]:
        assert room.enter(seat, outside.now, spectator=False) is None
    return room


def racing(outside: FakeOutside, room: Room[Seat]) -> None:
    """Everyone ready, the host starts, the countdown runs out: the race is on."""
    for m in room.players[1:]:
        assert room.set_ready(m, True, outside.now) is None
    assert room.start(room.host, outside.now) is None
    assert (outside.now + outside.config.countdown_s, "countdown") in outside.timers
    outside.now += outside.config.countdown_s
    room.countdown_over(outside.now)
    assert room.state == "racing"


def test_two_players_race_to_a_win_and_the_result_waits_for_the_commit() -> None:
    out = FakeOutside()
    ann, bob = Seat(1, "ann"), Seat(2, "bob")
    room = lobby(out, secret=True, ann=ann, bob=bob)
    assert ann.room is room and bob.room is room
    out.delivered.clear()
    racing(out, room)
    for name in ("ann", "bob"):
        got = out.to(name)
        assert kinds(got)[:3] == ["room", "countdown", "room"]  # bob's ready, the start
        assert isinstance(got[1], Countdown) and got[1].ms == 3000
        races = [m for m in got if isinstance(m, RaceMsg)]
        assert len(races) == 1 and races[0].seq == 0 and races[0].state == "playing"
    [live] = [e.entry for e in out.effects if isinstance(e, Journal)]
    assert isinstance(live, LiveRace)
    assert live.uid == "boot-1" and live.players == ((1, "ann"), (2, "bob"))
    assert live.salt == SALT and live.host_id == 1

    for seq, move in enumerate(WIN_MOVES, 1):
        out.now += 0.5
        assert room.move(ann, seq, move, out.now) is None
    answers = out.to("ann")
    accepted = [m for m in answers if isinstance(m, Accepted)]
    assert [a.seq for a in accepted] == list(range(1, len(WIN_MOVES) + 1))
    assert accepted[-1].state == "won"
    actions = [e.entry for e in out.effects if isinstance(e, Journal)][1:]
    assert all(isinstance(a, LiveAction) for a in actions)
    assert [a.n for a in actions if isinstance(a, LiveAction)] == list(range(1, len(WIN_MOVES) + 1))
    assert out.persisted == []  # bob still races

    assert room.resign(bob, out.now) is None
    [record] = out.persisted
    assert record.uid == "boot-1" and record.room == "ZEBRA" and record.code == WIN_CODE
    assert [(r.name, r.rank, r.outcome) for r in record.results] == [
        ("ann", 1, "won"),
        ("bob", 2, "resigned"),
    ]
    assert room.finishing and room.state == "racing"
    assert not [m for _, m in out.delivered if isinstance(m, Result)]  # not before the commit

    room.committed(record.race_id + 1, out.now)  # another race's commit: nothing
    assert room.result is None
    out.delivered.clear()
    room.committed(record.race_id, out.now)
    assert room.state == "finished" and not room.finishing
    for name in ("ann", "bob"):
        result, room_msg = out.to(name)
        assert isinstance(result, Result)
        assert result.code == WIN_CODE and result.salt == SALT and result.race == "boot-1"
        assert [r.name for r in result.ranks] == ["ann", "bob"]
        assert isinstance(room_msg, RoomMsg) and room_msg.state == "finished"
        assert room_msg.code == WIN_CODE
        assert room_msg.commitment == commitment(GameCode.parse(WIN_CODE), SALT)


def test_a_refused_request_returns_the_refusal_and_sends_nothing() -> None:
    out = FakeOutside()
    ann, bob, cat = Seat(1, "ann"), Seat(2, "bob"), Seat(3, "cat")
    room = lobby(out, ann=ann, bob=bob)
    assert room.enter(cat, out.now, spectator=True) is None
    out.delivered.clear()

    assert room.move(ann, 1, WIN_MOVES[0], out.now) == Refusal(
        "no_race", "the race has not started", 1
    )
    assert room.start(bob, out.now) == Refusal("not_host", "only the host (ann) starts the race")
    assert room.start(ann, out.now) == Refusal("not_ready", "not ready yet: bob")
    assert room.set_ready(cat, True, out.now) == Refusal(
        "not_player", "spectators watch; they cannot play"
    )
    assert out.delivered == [] and out.effects == []

    racing(out, room)
    out.delivered.clear()
    assert room.move(cat, 1, WIN_MOVES[0], out.now) == Refusal(
        "not_player", "spectators watch; they cannot play", 1
    )
    assert room.set_ready(bob, False, out.now) == Refusal(
        "wrong_state", "ready is for the lobby, before the race"
    )
    assert room.enter(Seat(4, "dan"), out.now, spectator=False) == Refusal(
        "race_running", "this room is racing; watch it, or join after"
    )
    assert room.leave(bob, out.now) == Refusal(
        "in_race", "you are racing: resign first, then leave"
    )
    assert room.move(ann, 1, WIN_MOVES[0], out.now) is None
    assert room.move(ann, 0, WIN_MOVES[0], out.now) == Refusal(
        "stale_seq", "seq 0 is older than the last 1", 0
    )
    assert out.to("cat") == [] and out.to("bob") == []
    # An illegal move is the race's answer, not a refusal of the room: ``refused`` to ann.
    assert room.move(ann, 2, "KS>1", out.now) is None
    [refused] = out.to("ann")[1:]
    assert isinstance(refused, Refused) and refused.seq == 2


def test_a_spectator_gets_progress_and_no_race_of_their_own() -> None:
    out = FakeOutside()
    ann, bob, cat = Seat(1, "ann"), Seat(2, "bob"), Seat(3, "cat")
    room = lobby(out, ann=ann, bob=bob)
    racing(out, room)
    out.now += 1.0
    assert room.enter(cat, out.now, spectator=True) is None
    assert cat.spectator and cat.room is room
    got = out.to("cat")
    assert kinds(got) == ["room", "progress"]  # the resync: no race view for a spectator
    assert isinstance(got[0], RoomMsg) and got[0].you == "spectator" and got[0].spectators == 1
    assert isinstance(got[1], Progress) and got[1].elapsed_ms == 1000
    assert [p.name for p in got[1].players] == ["ann", "bob"]

    out.delivered.clear()
    assert room.move(ann, 1, WIN_MOVES[0], out.now) is None
    assert out.to("cat") == []  # held for newer moves
    due = out.now + out.config.progress_hold_s
    assert (due, "progress") in out.timers
    out.now = due
    room.progress_timer(out.now)
    [shown] = out.to("cat")
    assert isinstance(shown, Progress)
    assert {p.name: p.moves for p in shown.players} == {"ann": 1, "bob": 0}
    assert out.to("bob") == [shown]
    assert [m for m in out.to("ann") if isinstance(m, Progress)] == []  # the mover knew


def test_held_progress_is_released_before_a_later_frame() -> None:
    out = FakeOutside()
    ann, bob = Seat(1, "ann"), Seat(2, "bob")
    room = lobby(out, ann=ann, bob=bob)
    racing(out, room)
    out.delivered.clear()
    assert room.move(ann, 1, WIN_MOVES[0], out.now) is None
    assert room.progress_due is not None and out.to("bob") == []

    out.now += 0.01  # within the hold, ann's connection goes: the room tells bob
    ann.connected = False
    room.disconnected(out.now)
    got = out.to("bob")
    assert kinds(got) == ["progress", "room", "progress"]
    held, changed, now = got
    assert isinstance(held, Progress) and isinstance(now, Progress)
    assert {p.name: p.moves for p in held.players}["ann"] == 1
    assert isinstance(changed, RoomMsg)
    assert [(p.name, p.connected) for p in changed.players] == [("ann", False), ("bob", True)]
    assert room.progress_due is None
    room.progress_timer(out.now + 1.0)  # the hold's timer finds nothing held
    assert out.to("bob") == []


def test_the_last_player_leaving_closes_the_room_and_spectators_are_told() -> None:
    out = FakeOutside()
    ann, cat = Seat(1, "ann"), Seat(3, "cat")
    room = lobby(out, ann=ann)
    assert room.enter(cat, out.now, spectator=True) is None
    out.delivered.clear()
    assert room.leave(ann, out.now) is None
    assert ann.room is None and cat.room is None and not cat.spectator
    [closed] = out.to("cat")
    assert isinstance(closed, Error) and closed.code == "room_closed"
    assert out.vacated_rooms == ["ZEBRA"]


def test_a_stuck_runner_and_a_rematch_on_a_new_secret_deal() -> None:
    out = FakeOutside()
    ann = Seat(1, "ann")
    room = lobby(out, STUCK_CODE, ann=ann)
    racing(out, room)
    assert room.move(ann, 1, STUCK_MOVE, out.now) is None
    assert room.resign(ann, out.now) is None
    [record] = out.persisted
    room.committed(record.race_id, out.now)
    assert room.state == "finished"
    assert room.rematch(ann, out.now) is None
    assert room.state == "lobby" and room.fixed is None and room.salt == SALT
    assert str(room.deal) != STUCK_CODE  # drawn from ``random_deal``: deal 1
    assert room.rematch(ann, out.now) == Refusal(
        "wrong_state", "a rematch follows a finished race (it is lobby)"
    )


def test_a_room_goes_only_where_its_transitions_allow() -> None:
    """The table is the whole story: a room walks lobby, countdown and racing through its
    own methods, each step one the table holds, and a transition it does not hold is a
    programming error, raised, the state left as it was."""
    outside = FakeOutside()
    room = lobby(outside, ann=Seat(1, "ann"), bob=Seat(2, "bob"))
    seen = [room.state]
    assert room.set_ready(room.players[1], True, outside.now) is None
    assert room.start(room.host, outside.now) is None
    seen.append(room.state)
    outside.now += outside.config.countdown_s
    room.countdown_over(outside.now)
    seen.append(room.state)
    assert seen == [RoomState.LOBBY, RoomState.COUNTDOWN, RoomState.RACING]
    assert all(b in TRANSITIONS[a] for a, b in itertools.pairwise(seen))
    assert room.state == "racing"  # the values are the wire's strings
    with pytest.raises(IllegalTransition, match="racing cannot go to lobby"):
        room._enter(RoomState.LOBBY)
    assert room.state is RoomState.RACING
    room.lost()
    assert room.state is RoomState.LOST
    for state in RoomState:
        with pytest.raises(IllegalTransition):
            room._enter(state)
    assert not TRANSITIONS[RoomState.LOST]
    assert set(TRANSITIONS) == set(RoomState)


def test_held_progress_is_due_on_the_grid_and_never_later_than_the_hold() -> None:
    """Rooms' held progress shares the slots of a grid (one timer for all of them), and
    goes out at most ``hold`` after the move that held it (docs/protocol.md 4.11)."""
    from server.rooms.room import PROGRESS_GRID_S, progress_due

    hold = 0.1
    dues = set()
    for k in range(1000):
        now = 1000.0 + k * 0.0007
        due = progress_due(now, hold)
        assert now + hold - PROGRESS_GRID_S - 1e-9 <= due <= now + hold
        dues.add(round(due, 6))
    assert len(dues) <= 0.7 / PROGRESS_GRID_S + 2  # 1,000 holds over 0.7 s: ~30 slots
    assert progress_due(104.0, hold) == 104.1  # on the grid: the hold itself
    assert progress_due(5.0, 0.01) == 5.01  # a hold shorter than the grid: as it is
