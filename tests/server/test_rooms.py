"""The room and race state machine (server/rooms/) driven by fake clients on a fake clock.

No sockets and no sleeping: each test calls ``Hub.connect/receive/tick/disconnect/committed``
with a time of its choosing and looks at the effects that come back. Messages are read as
the objects in ``Send`` effects; only what a client sends goes through ``encode``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol import Game, GameCode, IllegalMoveError, InvalidMoveError, Rules
from protocol.commitment import commitment
from protocol.messages import (
    CLOSE_REPLACED,
    CLOSE_VERSION,
    PROTOCOL_VERSION,
    Accepted,
    Countdown,
    Create,
    Daily,
    DailyDeal,
    Error,
    Finish,
    Hello,
    History,
    Join,
    Leave,
    Left,
    MoveMsg,
    Progress,
    Ready,
    Refused,
    Rematch,
    Resign,
    Result,
    Room,
    RoomPlayer,
    Start,
    Undo,
    Undone,
    Watch,
    Welcome,
    encode,
)
from protocol.messages import Race as RaceMsg
from server.domain.daily import candidate_code, code_public, code_public_at, next_daily_ms
from server.domain.race import REPLY_MEMORY
from server.domain.records import LiveAction, LiveRace, RaceRecord
from server.rooms import CLOSE_POLICY, ROOM_ALPHABET, Hub, HubConfig
from server.rooms.effects import (
    Authenticate,
    BeginDaily,
    Close,
    Effect,
    Forget,
    Handover,
    Journal,
    Persist,
    Prove,
    Query,
    Send,
)

DATA = Path(__file__).resolve().parent.parent / "data"
WINNING = (DATA / "winning-game.txt").read_text().split()
WIN_CODE, WIN_MOVES = WINNING[0], WINNING[1:]
#: ``random_deal`` returns 1 unless a test says otherwise: the deal of the winning line.
assert str(GameCode.parse(WIN_CODE)) == "YU1-C-AAAAAAB"
#: Deal 1045: its only legal move is JH>1, and after it there is none.
STUCK_CODE = "YU1-C-AAAABOF"
STUCK_MOVE = "JH>1"
#: The salt of every commitment the fake clients' hub makes.
SALT = "5a17" * 8
#: Letters that are neither a rank nor a suit, so no room code can look like a card.
_PLAIN = "EFGLMNPRUVWXYZ"


def room_codes() -> Iterator[str]:
    yield from ("ZEBRA", "WALTZ", "GRUMP")
    for letters in itertools.product(_PLAIN, repeat=5):
        yield "".join(letters)


# -- the fake clients -------------------------------------------------------------------------


class Clients:
    """A Hub with deterministic randomness, a fake clock, and an inbox per connection.

    Every effect any call returns is also recorded: ``inbox[conn]`` lists the messages sent
    to ``conn`` in order, ``closed[conn]`` its Close, ``persisted`` the races to store.
    """

    def __init__(
        self,
        config: HubConfig | None = None,
        *,
        deals: Iterable[int] = (1,),
        codes: Iterable[str] | None = None,
    ) -> None:
        self.config = config or HubConfig()
        self.now = 100.0
        self._deals = list(deals)
        self.deals_drawn = 0
        code_iter = iter(codes) if codes is not None else room_codes()
        #: The wall clock (seconds since the epoch) the hub reads: dates, the daily's codes.
        self.wall = 0.0
        self.hub = Hub(
            self.config,
            wall_clock=lambda: self.wall,
            random_deal=self._deal,
            new_salt=lambda: SALT,
            new_room_code=lambda: next(code_iter),
            boot_id="b007",  # race ids (``result.race``) are fixed too
        )
        # Storage's part, played here: registered names and their tokens, daily attempts.
        self.registry: dict[str, tuple[int, str, str]] = {}
        #: When each player registered (wall time), by id.
        self.registered: dict[int, float] = {}
        #: The BOT accounts among them (``hello.bot``), by id.
        self.bots: set[int] = set()
        self.attempts: dict[int, int] = defaultdict(int)
        #: While set, daily attempts wait in ``held`` until ``number_dailies`` (storage slow).
        self.hold_daily = False
        self.held: list[BeginDaily] = []
        self._player_ids = itertools.count(1)
        self.inbox: dict[int, list[Any]] = defaultdict(list)
        self.closed: dict[int, Close] = {}
        self.persisted: list[RaceRecord] = []
        self.journal: list[LiveRace | LiveAction] = []
        self.tokens: dict[str, str] = {}
        self.names: dict[int, str] = {}
        self.seqs: dict[str, int] = defaultdict(int)
        self.race_start = 0.0
        self._ids = itertools.count(1)

    def _deal(self) -> int:
        self.deals_drawn += 1
        return self._deals.pop(0) if len(self._deals) > 1 else self._deals[0]

    def _storage(self, e: Effect) -> list[Effect]:
        """Answer an effect that needs storage the way the SQL store does."""
        hub, now = self.hub, self.now
        if isinstance(e, Authenticate):
            if e.name is not None:
                if e.name.casefold() in self.registry:
                    return hub.hello_refused(e.conn, code="name_taken", text="taken", now=now)
                pid = next(self._player_ids)
                self.registry[e.name.casefold()] = (pid, e.name, f"tok{pid}")
                self.registered[pid] = self.wall
                if e.bot:
                    self.bots.add(pid)
                return hub.authenticated(
                    e.conn,
                    player_id=pid,
                    name=e.name,
                    token=f"tok{pid}",
                    now=now,
                    registered=self.wall,
                    bot=e.bot,
                )
            for pid, name, token in self.registry.values():
                if token == e.token:
                    return hub.authenticated(
                        e.conn,
                        player_id=pid,
                        name=name,
                        token=token,
                        now=now,
                        registered=self.registered.get(pid, 0.0),
                        bot=pid in self.bots,
                    )
            return hub.hello_refused(e.conn, code="bad_token", text="unknown token", now=now)
        assert isinstance(e, BeginDaily)
        if self.hold_daily:
            self.held.append(e)
            return []
        self.attempts[e.player_id] += 1
        return hub.daily_begun(
            e.player_id,
            date=e.date,
            attempt=self.attempts[e.player_id],
            deal=candidate_code(b"test", e.date, Rules.parse("C")),
            par=99,
            now=now,
        )

    def number_dailies(self) -> list[Effect]:
        """Storage answers the daily attempts it held."""
        held, self.held, self.hold_daily = self.held, [], False
        return self._record([e for b in held for e in self._storage(b)])

    def _record(self, effects: list[Effect]) -> list[Effect]:
        resolved: list[Effect] = []
        for e in effects:
            if isinstance(e, (Authenticate, BeginDaily)):
                resolved.extend(self._record(self._storage(e)))
                continue
            resolved.append(e)
            if isinstance(e, Send):
                self.inbox[e.conn].append(e.message)
            elif isinstance(e, Close):
                assert e.conn not in self.closed, "closed twice"
                self.closed[e.conn] = e
            elif isinstance(e, Persist):
                self.persisted.append(e.record)
            elif isinstance(e, Journal):
                self.journal.append(e.entry)
        return resolved

    def _at(self, at: float | None) -> float:
        if at is not None:
            assert at >= self.now, "the fake clock never goes back"
            self.now = at
        return self.now

    # Hub entry points.

    def connect(self, at: float | None = None, *, address: str = "") -> int:
        conn = next(self._ids)
        assert self._record(self.hub.connect(conn, self._at(at), address=address)) == []
        return conn

    def send(self, conn: int, message: Any, at: float | None = None) -> list[Effect]:
        return self.raw(conn, encode(message), at)

    def raw(self, conn: int, data: bytes | str, at: float | None = None) -> list[Effect]:
        return self._record(self.hub.receive(conn, data, self._at(at)))

    def tick(self, at: float | None = None) -> list[Effect]:
        return self._record(self.hub.tick(self._at(at)))

    def after_hold(self) -> list[Effect]:
        """The clock moves on past the room's progress hold: a held progress goes out."""
        return self.tick(self.now + self.config.progress_hold_s)

    def disconnect(self, conn: int, at: float | None = None) -> list[Effect]:
        return self._record(self.hub.disconnect(conn, self._at(at)))

    def commit(self, race_id: int, at: float | None = None) -> list[Effect]:
        return self._record(self.hub.committed(race_id, self._at(at)))

    # Conveniences.

    def hello(self, name: str) -> int:
        conn = self.connect()
        effects = self.send(conn, Hello(PROTOCOL_VERSION, name))
        [welcome] = to(effects, conn)
        assert isinstance(welcome, Welcome), welcome
        self.tokens[welcome.name] = welcome.token
        self.names[conn] = welcome.name
        return conn

    def resume(self, name: str, at: float | None = None) -> tuple[int, list[Effect]]:
        conn = self.connect(at)
        effects = self.send(conn, Hello(PROTOCOL_VERSION, token=self.tokens[name]))
        self.names[conn] = name
        return conn, effects

    def move(self, conn: int, text: str, at: float | None = None) -> list[Effect]:
        name = self.names[conn]
        self.seqs[name] += 1
        return self.send(conn, MoveMsg(self.seqs[name], text), at)

    def undo(self, conn: int, at: float | None = None) -> list[Effect]:
        name = self.names[conn]
        self.seqs[name] += 1
        return self.send(conn, Undo(self.seqs[name]), at)

    def play(self, conn: int, moves: Iterable[str], step: float = 0.25) -> list[Effect]:
        """Play moves ``step`` seconds apart; each one must be accepted."""
        out: list[Effect] = []
        for text in moves:
            effects = self.move(conn, text, self.now + step)
            [reply] = [m for m in to(effects, conn) if not isinstance(m, Progress)]
            assert isinstance(reply, Accepted), reply
            out += effects
        return out

    def messages(self, conn: int, kind: type[Any] | None = None) -> list[Any]:
        return [m for m in self.inbox[conn] if kind is None or isinstance(m, kind)]

    def last(self, conn: int, kind: type[Any]) -> Any:
        found = self.messages(conn, kind)
        assert found, f"no {kind.__name__} for conn {conn}"
        return found[-1]

    def all_messages(self) -> Iterator[Any]:
        for messages in self.inbox.values():
            yield from messages


def sends(effects: Iterable[Effect]) -> list[tuple[int, Any]]:
    return [(e.conn, e.message) for e in effects if isinstance(e, Send)]


def to(effects: Iterable[Effect], conn: int) -> list[Any]:
    return [m for c, m in sends(effects) if c == conn]


def kinds(effects: Iterable[Effect], conn: int) -> list[str]:
    return [m.TYPE for m in to(effects, conn)]


def error_codes(effects: Iterable[Effect], conn: int) -> list[str]:
    return [m.code for m in to(effects, conn) if isinstance(m, Error)]


def receivers(effects: Iterable[Effect]) -> set[int]:
    return {c for c, _ in sends(effects)}


def persists(effects: Iterable[Effect]) -> list[RaceRecord]:
    return [e.record for e in effects if isinstance(e, Persist)]


def closes(effects: Iterable[Effect]) -> list[Close]:
    return [e for e in effects if isinstance(e, Close)]


def room_msg(**changes: Any) -> Room:
    fields: dict[str, Any] = {
        "room": "ZEBRA",
        "you": "player",
        "host": "ann",
        "state": "lobby",
        "rules": "C",
        "code": None,
        "max_players": 4,
        "undo": True,
        "time_limit": 1800,
        "players": (),
        "spectators": 0,
    }
    fields.update(changes)
    if "commitment" not in changes:  # the default deal, drawn in secret: committed to
        fields["commitment"] = commitment(GameCode(Rules.parse(fields["rules"]), 1), SALT)
    return Room(**fields)


def lobby(
    cl: Clients,
    players: Iterable[str] = ("ann", "bob"),
    watchers: Iterable[str] = (),
    **create: Any,
) -> dict[str, int]:
    """Hello everyone; the first player creates a room, the others join and are ready."""
    names = list(players)
    conns = {name: cl.hello(name) for name in [*names, *watchers]}
    host = conns[names[0]]
    [room] = [m for m in to(cl.send(host, Create(**create)), host) if isinstance(m, Room)]
    for name in names[1:]:
        assert error_codes(cl.send(conns[name], Join(room.room)), conns[name]) == []
        assert error_codes(cl.send(conns[name], Ready()), conns[name]) == []
    for name in watchers:
        assert error_codes(cl.send(conns[name], Watch(room.room)), conns[name]) == []
    return conns


def start(cl: Clients, host: int) -> list[Effect]:
    """The host starts; the countdown runs out; the race begins at ``cl.race_start``."""
    assert error_codes(cl.send(host, Start()), host) == []
    cl.race_start = cl.now + cl.config.countdown_s
    return cl.tick(cl.race_start)


def race(
    cl: Clients,
    players: Iterable[str] = ("ann", "bob"),
    watchers: Iterable[str] = (),
    **create: Any,
) -> dict[str, int]:
    conns = lobby(cl, players, watchers, **create)
    start(cl, conns[next(iter(players))])
    return conns


def view_after(code: str, moves: Iterable[str]) -> Game:
    game = Game.from_code(code)
    for move in moves:
        game.play(move)
    return game


def illegal_reason(code: str, move: str) -> str:
    with pytest.raises(IllegalMoveError) as caught:
        Game.from_code(code).play(move)
    return caught.value.reason


# -- handshake --------------------------------------------------------------------------------


def test_the_deals_these_tests_use_are_what_they_think() -> None:
    game = Game.from_code(WIN_CODE)
    for move in WIN_MOVES:
        game.play(move)
    assert game.is_won()
    stuck = Game.from_code(STUCK_CODE)
    assert stuck.legal_moves() == [STUCK_MOVE]
    stuck.play(STUCK_MOVE)
    assert stuck.is_stuck()


def test_hello_is_answered_with_a_welcome_and_a_token() -> None:
    cl = Clients()
    conn = cl.connect()
    effects = cl.send(conn, Hello(PROTOCOL_VERSION, "  ann  "))
    # next_daily_ms: to the next 00:00 UTC by the hub's wall clock (issue 29)
    welcome = Welcome(PROTOCOL_VERSION, "ann", "tok1", 60, next_daily_ms=next_daily_ms(cl.wall))
    assert effects == [Send(conn, welcome)]
    other = cl.connect()
    assert to(cl.send(other, Hello(PROTOCOL_VERSION, "bob")), other) == [
        Welcome(PROTOCOL_VERSION, "bob", "tok2", 60, next_daily_ms=next_daily_ms(cl.wall))
    ]


def test_welcome_reports_the_configured_resume_window() -> None:
    cl = Clients(HubConfig(resume_window_s=90))
    conn = cl.connect()
    [welcome] = to(cl.send(conn, Hello(PROTOCOL_VERSION, "ann")), conn)
    assert welcome.resume_s == 90


def test_an_unsupported_version_gets_an_error_and_close_4000() -> None:
    cl = Clients()
    conn = cl.connect()
    effects = cl.send(conn, Hello(PROTOCOL_VERSION + 1, "ann"))
    assert len(effects) == 2
    [error] = to(effects, conn)
    assert error.code == "version"
    assert str(PROTOCOL_VERSION) in error.text
    [close] = closes(effects)
    assert (close.conn, close.code) == (conn, CLOSE_VERSION) == (conn, 4000)
    assert cl.send(conn, Hello(PROTOCOL_VERSION, "ann")) == []


@pytest.mark.parametrize(
    "name",
    ["", "   ", "n" * 21, "an\x07n", "an\nn", "ann\u200b", "a\u202eb", "\x00"],
    ids=["empty", "blank", "21 chars", "bell", "newline", "zero width", "rtl", "nul"],
)
def test_a_bad_name_is_refused_and_changes_nothing(name: str) -> None:
    cl = Clients()
    conn = cl.connect()
    effects = cl.send(conn, Hello(PROTOCOL_VERSION, name))
    assert error_codes(effects, conn) == ["name_invalid"]
    assert closes(effects) == []
    assert kinds(cl.send(conn, Hello(PROTOCOL_VERSION, "ann")), conn) == ["welcome"]


def test_a_name_of_twenty_characters_is_fine() -> None:
    cl = Clients()
    conn = cl.connect()
    [welcome] = to(cl.send(conn, Hello(PROTOCOL_VERSION, " " + "n" * 20 + " ")), conn)
    assert welcome.name == "n" * 20


@pytest.mark.parametrize("name", ["ANN", " Ann ", "aNn"])
def test_a_name_in_use_is_taken_whatever_its_case(name: str) -> None:
    cl = Clients()
    cl.hello("ann")
    conn = cl.connect()
    effects = cl.send(conn, Hello(PROTOCOL_VERSION, name))
    assert error_codes(effects, conn) == ["name_taken"]
    assert kinds(cl.send(conn, Hello(PROTOCOL_VERSION, "bob")), conn) == ["welcome"]


def test_a_hello_needs_a_name_or_a_token() -> None:
    cl = Clients()
    conn = cl.connect()
    assert error_codes(cl.send(conn, Hello(PROTOCOL_VERSION)), conn) == ["name_invalid"]


def test_a_second_hello_is_refused() -> None:
    cl = Clients()
    conn = cl.hello("ann")
    assert error_codes(cl.send(conn, Hello(PROTOCOL_VERSION, "bob")), conn) == ["already_hello"]


@pytest.mark.parametrize(
    "message", [MoveMsg(1, "7S>4"), Create(), Join("ZEBRA"), Start(), Resign(), Leave()]
)
def test_everything_before_hello_is_refused(message: Any) -> None:
    cl = Clients()
    conn = cl.connect()
    effects = cl.send(conn, message)
    assert effects == [Send(conn, to(effects, conn)[0])]
    assert error_codes(effects, conn) == ["hello_first"]


def test_no_hello_in_time_closes_the_connection_at_the_tick() -> None:
    cl = Clients()
    slow = cl.connect(at=100.0)
    quick = cl.connect(at=101.0)
    cl.send(quick, Hello(PROTOCOL_VERSION, "ann"))
    assert cl.tick(109.999) == []
    effects = cl.tick(110.0)
    assert [(c.conn, c.code) for c in closes(effects)] == [(slow, CLOSE_POLICY)]
    assert CLOSE_POLICY == 1008
    assert cl.tick(111.0) == []
    assert quick not in cl.closed
    assert cl.send(slow, Hello(PROTOCOL_VERSION, "bob")) == []


# -- the life of a room -----------------------------------------------------------------------


def test_the_whole_life_of_a_room() -> None:
    cl = Clients(deals=[1, 2])
    ann, bob, sue = cl.hello("ann"), cl.hello("bob"), cl.hello("sue")

    # Create: a random deal under rules C; the host is in and counts as ready.
    effects = cl.send(ann, Create(rules="C"))
    assert [e for e in effects if not isinstance(e, Prove)] == [
        Send(ann, room_msg(players=(RoomPlayer("ann", True, True),))),
    ]

    # Others join (lower case is fine) and watch: everyone sees who is there.
    effects = cl.send(bob, Join("zebra"))
    two = (RoomPlayer("ann", True, True), RoomPlayer("bob", False, True))
    assert sends(effects) == [(ann, room_msg(players=two)), (bob, room_msg(players=two))]
    effects = cl.send(sue, Watch("ZEBRA"))
    assert to(effects, ann) == [room_msg(players=two, spectators=1)]
    assert to(effects, sue)[0] == room_msg(players=two, spectators=1, you="spectator")
    assert {type(m) for m in to(effects, sue)} == {Room}

    # Ready: everyone sees it.
    effects = cl.send(bob, Ready())
    ready = (RoomPlayer("ann", True, True), RoomPlayer("bob", True, True))
    assert to(effects, ann) == [room_msg(players=ready, spectators=1)]
    assert to(effects, sue) == [room_msg(players=ready, spectators=1, you="spectator")]

    # Start: a countdown for everyone, then nothing until the countdown is over.
    t0 = cl.now
    effects = cl.send(ann, Start())
    for conn in (ann, bob, sue):
        assert to(effects, conn)[0] == Countdown(3000)
        assert [m.TYPE for m in to(effects, conn)] == ["countdown", "room"]
        assert to(effects, conn)[1].state == "countdown"
    assert cl.hub.next_deadline() == t0 + 3.0
    assert cl.tick(t0 + 1.0) == []
    assert cl.tick(t0 + 2.999) == []

    # The race: both players get the same view at the same tick; the spectator none.
    effects = cl.tick(t0 + 3.0)
    start_view = Game.from_code(WIN_CODE).view()
    assert "??" in start_view
    race_msgs = [(c, m) for c, m in sends(effects) if isinstance(m, RaceMsg)]
    expected = RaceMsg(start_view, 0, 1800, 0, 0, 0, "playing")
    assert race_msgs == [(ann, expected), (bob, expected)]
    for conn in (ann, bob, sue):
        room = [m for m in to(effects, conn) if isinstance(m, Room)]
        assert [r.state for r in room] == ["racing"]
        assert room[0].code is None
        [progress] = [m for m in to(effects, conn) if isinstance(m, Progress)]
        assert progress.elapsed_ms == 0
        assert [(p.name, p.state, p.connected) for p in progress.players] == [
            ("ann", "playing", True),
            ("bob", "playing", True),
        ]

    # A legal move: accepted for the mover at once, and progress for the others once the
    # room's hold (100 ms, for newer moves to replace it) is over. The mover gets none:
    # it would show nothing but their own move, which their accepted told them.
    effects = cl.send(ann, MoveMsg(1, "6h>7"), at=t0 + 4.5)
    assert sends(effects) == [(ann, Accepted(1, "6H>7", "9S", 5, 1, 0, "playing", 1500))]
    due = cl.hub.next_deadline()
    assert due == pytest.approx(t0 + 4.6)
    assert cl.tick(due - 0.001) == []
    effects = cl.tick(due)
    for conn in (bob, sue):
        [progress] = [m for m in to(effects, conn) if isinstance(m, Progress)]
        assert progress.elapsed_ms == 1600
        mine = progress.players[0]
        assert (mine.name, mine.foundations, mine.score, mine.moves) == ("ann", 0, 5, 1)
    assert receivers(effects) == {bob, sue}

    # Refused moves: the engine's reason, only to the mover, and nothing else.
    effects = cl.send(bob, MoveMsg(1, "KD>1"), at=t0 + 5)
    assert effects == [Send(bob, Refused(1, "illegal", illegal_reason(WIN_CODE, "KD>1")))]
    effects = cl.send(bob, MoveMsg(2, "hello"))
    with pytest.raises(InvalidMoveError) as caught:
        Game.from_code(WIN_CODE).play("hello")
    assert effects == [Send(bob, Refused(2, "invalid", str(caught.value)))]

    # The end: the last one done sends the race to storage, and nobody hears yet.
    effects = cl.send(ann, Resign(), at=t0 + 6)
    assert persists(effects) == []
    assert {m.TYPE for m in to(effects, bob)} == {"progress"}
    effects = cl.send(bob, Resign(), at=t0 + 7)
    [record] = persists(effects)
    assert record.race_id == 1
    assert record.code == WIN_CODE
    assert record.room == "ZEBRA"
    assert record.rules == "C"
    assert [(r.name, r.rank, r.outcome, r.time_ms) for r in record.results] == [
        ("ann", 1, "resigned", 3000),
        ("bob", 2, "resigned", 4000),
    ]
    assert record.results[0].journal == ((1500, "6H>7"),)
    assert not any(isinstance(m, Result) for m in cl.all_messages())
    assert all(m.code is None for m in cl.all_messages() if isinstance(m, Room))

    # Stored: now the result and the code, for players and spectators alike.
    effects = cl.commit(1, at=t0 + 8)
    for conn in (ann, bob, sue):
        [result] = [m for m in to(effects, conn) if isinstance(m, Result)]
        assert result.code == WIN_CODE
        assert [(e.rank, e.name, e.outcome, e.time_ms, e.moves, e.score) for e in result.ranks] == [
            (1, "ann", "resigned", 3000, 1, 5),
            (2, "bob", "resigned", 4000, 0, 0),
        ]
        [room] = [m for m in to(effects, conn) if isinstance(m, Room)]
        assert (room.state, room.code) == ("finished", WIN_CODE)
    assert cl.commit(1) == []

    # Rematch: any player, not a spectator (issue 28: bob is not the host); a new deal,
    # back to the lobby, nobody ready but the host, who stays host. Once is enough.
    assert error_codes(cl.send(sue, Rematch()), sue) == ["not_player"]
    effects = cl.send(bob, Rematch())
    rematch_commitment = commitment("YU1-C-AAAAAAC", SALT)
    assert to(effects, bob) == [room_msg(players=two, spectators=1, commitment=rematch_commitment)]
    assert to(effects, ann) == [room_msg(players=two, spectators=1, commitment=rematch_commitment)]
    assert error_codes(cl.send(ann, Rematch()), ann) == ["wrong_state"]
    assert cl.deals_drawn == 2
    assert error_codes(cl.send(ann, Start()), ann) == ["not_ready"]
    cl.send(bob, Ready())
    effects = start(cl, ann)
    new_view = Game.from_code(GameCode.parse("YU1-C-AAAAAAC")).view()
    assert new_view != start_view
    assert [m.view for m in to(effects, ann) if isinstance(m, RaceMsg)] == [new_view]
    assert [m.view for m in to(effects, bob) if isinstance(m, RaceMsg)] == [new_view]


def test_every_player_gets_the_race_at_the_same_tick_and_the_clock_starts_there() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob", "cat", "dan"])
    effects = start(cl, conns["ann"])
    race_msgs = [m for _, m in sends(effects) if isinstance(m, RaceMsg)]
    assert len(race_msgs) == 4
    assert len(set(race_msgs)) == 1
    effects = cl.move(conns["cat"], "6H>7", at=cl.race_start + 0.25)
    assert to(effects, conns["cat"])[0].elapsed_ms == 250


def test_the_countdown_length_is_configurable() -> None:
    cl = Clients(HubConfig(countdown_s=5))
    conns = lobby(cl, ["ann"])
    t0 = cl.now
    assert to(cl.send(conns["ann"], Start()), conns["ann"])[0] == Countdown(5000)
    assert cl.tick(t0 + 4.9) == []
    assert "race" in kinds(cl.tick(t0 + 5), conns["ann"])


def test_a_move_during_the_countdown_finds_no_race() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann"])
    cl.send(conns["ann"], Start())
    effects = cl.send(conns["ann"], MoveMsg(1, "6H>7"))
    assert error_codes(effects, conns["ann"]) == ["no_race"]
    assert to(effects, conns["ann"])[0].seq == 1


# -- room codes and room errors ----------------------------------------------------------------


def test_default_room_codes_are_five_unambiguous_characters() -> None:
    assert len(ROOM_ALPHABET) == 32
    assert not set("0O1I") & set(ROOM_ALPHABET)
    assert set(ROOM_ALPHABET) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    hub = Hub(HubConfig(bucket_capacity=1000))
    codes = set()
    for n in range(60):
        hub.connect(n, 0.0)
        hub.receive(n, encode(Hello(PROTOCOL_VERSION, f"p{n}")), 0.0)
        hub.authenticated(n, player_id=n, name=f"p{n}", token=f"t{n}", now=0.0)
        [send] = [e for e in hub.receive(n, encode(Create()), 0.0) if not isinstance(e, Prove)]
        assert isinstance(send, Send)
        code = send.message.room
        assert len(code) == 5
        assert set(code) <= set(ROOM_ALPHABET)
        codes.add(code)
    assert len(codes) == 60
    assert hub.rooms == 60


def test_a_room_code_in_use_is_drawn_again() -> None:
    cl = Clients(codes=["ZEBRA", "ZEBRA", "WALTZ"])
    ann, bob = cl.hello("ann"), cl.hello("bob")
    assert to(cl.send(ann, Create()), ann)[0].room == "ZEBRA"
    assert to(cl.send(bob, Create()), bob)[0].room == "WALTZ"


@pytest.mark.parametrize("typed", ["zebra", "Zebra", " ZEBRA ", "zEbRa"])
def test_join_accepts_lower_case(typed: str) -> None:
    cl = Clients()
    ann, bob = cl.hello("ann"), cl.hello("bob")
    cl.send(ann, Create())
    [room] = to(cl.send(bob, Join(typed)), bob)
    assert room.room == "ZEBRA"
    assert [p.name for p in room.players] == ["ann", "bob"]


def test_joining_an_unknown_room() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    effects = cl.send(ann, Join("NOPE2"))
    assert error_codes(effects, ann) == ["no_such_room"]
    assert error_codes(cl.send(ann, Watch("NOPE2")), ann) == ["no_such_room"]


def test_a_full_room_takes_no_more_players_but_takes_spectators() -> None:
    cl = Clients()
    lobby(cl, ["ann", "bob"], max_players=2)
    cat = cl.hello("cat")
    effects = cl.send(cat, Join("ZEBRA"))
    assert error_codes(effects, cat) == ["room_full"]
    assert receivers(effects) == {cat}
    assert to(cl.send(cat, Watch("ZEBRA")), cat)[0].you == "spectator"


def test_the_player_limit_defaults_to_four() -> None:
    cl = Clients()
    lobby(cl, ["ann", "bob", "cat", "dan"])
    eve = cl.hello("eve")
    assert error_codes(cl.send(eve, Join("ZEBRA")), eve) == ["room_full"]


@pytest.mark.parametrize("stage", ["countdown", "racing", "storing"])
def test_joining_during_a_race_is_refused_but_watching_is_not(stage: str) -> None:
    cl = Clients()
    conns = lobby(cl, ["ann"])
    cl.send(conns["ann"], Start())
    if stage != "countdown":
        cl.tick(cl.now + 3)
    if stage == "storing":
        cl.send(conns["ann"], Resign())
        assert cl.persisted
    bob = cl.hello("bob")
    assert error_codes(cl.send(bob, Join("ZEBRA")), bob) == ["race_running"]
    assert error_codes(cl.send(bob, Watch("ZEBRA")), bob) == []


def test_joining_after_the_race_is_over_is_allowed() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    cl.send(conns["ann"], Resign())
    cl.commit(1)
    bob = cl.hello("bob")
    [room] = [m for m in to(cl.send(bob, Join("ZEBRA")), bob) if isinstance(m, Room)]
    assert room.state == "finished"
    assert error_codes(cl.move(bob, "6H>7"), bob) == ["not_player"]


def test_only_the_host_starts() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"])
    effects = cl.send(conns["bob"], Start())
    assert error_codes(effects, conns["bob"]) == ["not_host"]
    assert "ann" in to(effects, conns["bob"])[0].text
    assert receivers(effects) == {conns["bob"]}


def test_the_host_starts_only_when_everyone_is_ready() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob", "cat"])
    cl.send(conns["cat"], Ready(False))
    effects = cl.send(conns["ann"], Start())
    assert error_codes(effects, conns["ann"]) == ["not_ready"]
    assert "cat" in to(effects, conns["ann"])[0].text
    assert "bob" not in to(effects, conns["ann"])[0].text
    assert cl.tick(cl.now + 10) == []
    cl.send(conns["cat"], Ready(True))
    assert error_codes(cl.send(conns["ann"], Start()), conns["ann"]) == []


def test_starting_twice_is_refused() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann"])
    cl.send(conns["ann"], Start())
    assert error_codes(cl.send(conns["ann"], Start()), conns["ann"]) == ["wrong_state"]


def test_ready_is_for_the_lobby() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    assert error_codes(cl.send(conns["bob"], Ready()), conns["bob"]) == ["wrong_state"]


def test_create_or_join_while_in_a_room_is_refused() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"])
    lobby(cl, ["cy"])  # room WALTZ
    for conn in conns.values():
        assert error_codes(cl.send(conn, Create()), conn) == ["already_in_room"]
        assert error_codes(cl.send(conn, Join("WALTZ")), conn) == ["already_in_room"]
        assert error_codes(cl.send(conn, Watch("WALTZ")), conn) == ["already_in_room"]
        assert error_codes(cl.send(conn, Daily()), conn) == ["already_in_room"]
    assert cl.hub.rooms == 2


def finished_race(cl: Clients, names: Iterable[str] = ("ann", "bob")) -> dict[str, int]:
    """A race in room ZEBRA in which everyone resigned, stored: the room is finished."""
    conns = race(cl, names)
    for conn in conns.values():
        cl.send(conn, Resign(), at=cl.now + 1)
    cl.commit(cl.persisted[-1].race_id)
    return conns


def test_a_finished_room_is_left_on_the_way_to_the_next_room() -> None:
    """Issue 28, items 1 and 3: from a room whose race is over, ``join``, ``watch`` and
    ``create`` leave it as ``leave`` would (``left`` first, the others told), then do
    what they ask; before, ``already_in_room`` made the player leave by hand."""
    cl = Clients()
    conns = finished_race(cl, ["ann", "bob", "cat"])
    ann, bob, cat = conns["ann"], conns["bob"], conns["cat"]
    cy = lobby(cl, ["cy"])["cy"]  # room WALTZ, in its lobby
    effects = cl.send(ann, Join("WALTZ"))
    assert kinds(effects, ann) == ["left", "room"]
    assert to(effects, ann)[0] == Left("ZEBRA") and to(effects, ann)[1].room == "WALTZ"
    assert [p.name for p in to(effects, bob)[-1].players] == ["bob", "cat"]
    assert [p.name for p in to(effects, cy)[-1].players] == ["cy", "ann"]
    effects = cl.send(bob, Watch("WALTZ"))
    assert kinds(effects, bob)[:2] == ["left", "room"] and to(effects, bob)[1].you == "spectator"
    # The last player of ZEBRA goes on to a room of their own: ZEBRA closes.
    effects = cl.send(cat, Create())
    assert kinds(effects, cat) == ["left", "room"] and to(effects, cat)[1].room == "GRUMP"
    assert cl.hub.rooms == 2
    # A spectator's race is always over for them: watching goes on elsewhere too.
    effects = cl.send(bob, Watch("GRUMP"))
    assert to(effects, bob)[0] == Left("WALTZ") and to(effects, bob)[1].room == "GRUMP"
    # Even a join that then fails has left the room.
    effects = cl.send(bob, Join("NOPES"))
    assert kinds(effects, bob) == ["left", "error"] and error_codes(effects, bob) == [
        "no_such_room"
    ]


def test_a_runner_who_is_done_may_go_on_while_the_others_race() -> None:
    """A runner whose own run is over only waits for the others: going elsewhere leaves
    the room (they stay in the race and its result); a runner still racing cannot."""
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann, bob = conns["ann"], conns["bob"]
    lobby(cl, ["cy"])  # WALTZ
    assert error_codes(cl.send(bob, Join("WALTZ")), bob) == ["already_in_room"]
    assert "finish or resign" in to(cl.send(bob, Create()), bob)[0].text
    cl.send(ann, Resign(), at=cl.now + 1)
    effects = cl.send(ann, Join("WALTZ"))
    assert kinds(effects, ann) == ["left", "room"]
    assert [e.action for e in cl.journal if isinstance(e, LiveAction)][-1] == "leave"
    [record] = persists(cl.send(bob, Resign(), at=cl.now + 1))
    assert [r.name for r in record.results] == ["ann", "bob"]


def test_a_daily_from_a_finished_room_leaves_it_first() -> None:
    """``daily`` from any room whose race is over (not only one's own finished attempt)
    leaves it, with ``left``, then the attempt begins (issue 28, item 3)."""
    cl = Clients()
    conns = finished_race(cl)
    ann = conns["ann"]
    effects = cl.send(ann, Daily())
    assert kinds(effects, ann)[:3] == ["left", "daily_deal", "race"]
    assert to(effects, ann)[0] == Left("ZEBRA")
    # From the finished attempt: the next attempt, with a left for the finished one.
    daily_room = [m for m in to(effects, ann) if isinstance(m, Room)][-1].room
    cl.send(ann, Resign(), at=cl.now + 1)
    cl.commit(cl.persisted[-1].race_id)
    effects = cl.send(ann, Daily())
    assert to(effects, ann)[0] == Left(daily_room)
    assert kinds(effects, ann)[1:3] == ["daily_deal", "race"]


def test_joining_the_room_you_are_in_gives_its_state_again() -> None:
    """Issue 28, item 4: an invite link reloaded mid-race resumed, then said "you are in
    room XSLP6; leave it first". A ``join`` or ``watch`` of one's own room is the resync
    of a resume, and the role stays as it is."""
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, sue = conns["ann"], conns["sue"]
    cl.move(ann, WIN_MOVES[0], at=cl.race_start + 1)
    for typed in ("ZEBRA", " zebra "):
        effects = cl.send(ann, Join(typed))
        assert kinds(effects, ann) == ["room", "race", "progress"]
        assert to(effects, ann)[1].seq == 1 and to(effects, ann)[0].you == "player"
    effects = cl.send(sue, Join("ZEBRA"))
    assert kinds(effects, sue) == ["room", "progress"] and to(effects, sue)[0].you == "spectator"
    effects = cl.send(ann, Watch("ZEBRA"))
    assert to(effects, ann)[0].you == "player"
    assert receivers(effects) == {ann}


def test_create_with_both_rules_and_a_code_is_refused() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    effects = cl.send(ann, Create(rules="C", code=WIN_CODE))
    assert error_codes(effects, ann) == ["bad_rules"]
    assert cl.hub.rooms == 0


@pytest.mark.parametrize(
    "create",
    [
        Create(rules="X"),
        Create(rules="CTE"),
        Create(rules="CEE"),
        Create(rules="CX"),
        Create(code="YU1-C-AAA"),
        Create(code="YU2-C-AAAAAAB"),
        Create(code="YU1-Q-AAAAAAB"),
        Create(code="hello"),
    ],
    ids=repr,
)
def test_bad_rules_or_a_bad_code_is_refused(create: Create) -> None:
    cl = Clients()
    ann = cl.hello("ann")
    effects = cl.send(ann, create)
    assert error_codes(effects, ann) == ["bad_rules"]
    assert to(effects, ann)[0].text
    assert cl.hub.rooms == 0
    assert cl.deals_drawn == 0


def test_an_empty_rules_field_is_refused() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    assert error_codes(cl.send(ann, Create(rules="")), ann) == ["bad_rules"]


def test_the_room_shows_its_options() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    [room] = to(cl.send(ann, Create(rules="rt", max_players=2, undo=False, time_limit=60)), ann)
    assert room == room_msg(
        rules="RT",
        max_players=2,
        undo=False,
        time_limit=60,
        players=(RoomPlayer("ann", True, True),),
    )


def test_a_game_code_decides_the_rules() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    [room] = to(cl.send(ann, Create(code="yu1-set-aaaaaab")), ann)
    assert (room.rules, room.code) == ("SET", "YU1-SET-AAAAAAB")
    assert cl.deals_drawn == 0


def test_leaving_hands_the_room_on_and_the_last_one_closes_it() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"], ["sue"])
    effects = cl.send(conns["ann"], Leave())
    assert to(effects, conns["ann"]) == [Left("ZEBRA")]
    [room] = to(effects, conns["bob"])
    assert room.host == "bob"
    assert [p.name for p in room.players] == ["bob"]
    effects = cl.send(conns["bob"], Leave())
    assert error_codes(effects, conns["sue"]) == ["room_closed"]
    assert cl.hub.rooms == 0
    assert error_codes(cl.send(conns["sue"], Leave()), conns["sue"]) == ["not_in_room"]
    assert error_codes(cl.send(conns["ann"], Join("ZEBRA")), conns["ann"]) == ["no_such_room"]


def test_a_racing_player_must_resign_before_leaving() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    assert error_codes(cl.send(conns["ann"], Leave()), conns["ann"]) == ["in_race"]
    cl.send(conns["ann"], Resign())
    assert error_codes(cl.send(conns["ann"], Leave()), conns["ann"]) == []


# -- the game code ----------------------------------------------------------------------------


def test_a_random_deals_code_is_secret_until_the_result() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    cl.play(conns["ann"], WIN_MOVES[:5])
    cl.send(conns["ann"], Resign())
    cl.disconnect(conns["bob"])
    bob, _ = cl.resume("bob")  # a resume sends the room again
    lee = cl.hello("lee")
    cl.send(lee, Watch("ZEBRA"))  # so does a new spectator
    cl.send(lee, Leave())
    cl.send(bob, Resign())
    assert len(cl.persisted) == 1  # over and stored, but not yet committed
    seen = list(cl.all_messages())
    assert sum(isinstance(m, Room) for m in seen) > 5
    for message in seen:
        assert WIN_CODE not in repr(message)
        assert "AAAAAAB" not in repr(message)
    # Every member had the commitment from the start; the salt came with the code.
    committed = commitment(WIN_CODE, SALT)
    for message in seen:
        if isinstance(message, Room):
            assert (message.commitment, message.salt) == (committed, None)
        assert SALT not in repr(message)
    effects = cl.commit(1)
    for conn in (conns["ann"], bob, conns["sue"]):
        msgs = to(effects, conn)
        assert [(m.code, m.salt) for m in msgs if isinstance(m, Result)] == [(WIN_CODE, SALT)]
        assert [(m.code, m.salt, m.commitment) for m in msgs if isinstance(m, Room)] == [
            (WIN_CODE, SALT, committed)
        ]


def test_a_host_chosen_code_is_shown_from_the_start() -> None:
    cl = Clients(deals=[99])
    ann, bob = cl.hello("ann"), cl.hello("bob")
    [room] = to(cl.send(ann, Create(code=STUCK_CODE)), ann)
    assert room.code == STUCK_CODE
    assert room.rules == "C"
    assert (room.commitment, room.salt) == (None, None)  # public: nothing to commit to
    [room] = to(cl.send(bob, Join("ZEBRA")), bob)
    assert room.code == STUCK_CODE
    cl.send(bob, Ready())
    effects = start(cl, ann)
    assert all(m.code == STUCK_CODE for m in to(effects, bob) if isinstance(m, Room))
    [race_msg] = [m for m in to(effects, bob) if isinstance(m, RaceMsg)]
    assert race_msg.view == Game.from_code(STUCK_CODE).view()


def test_a_rematch_after_a_chosen_code_is_a_new_secret_deal() -> None:
    cl = Clients(deals=[7])
    conns = race(cl, ["ann"], code=STUCK_CODE)
    cl.send(conns["ann"], Resign())
    cl.commit(1)
    [room] = to(cl.send(conns["ann"], Rematch()), conns["ann"])
    assert (room.state, room.code) == ("lobby", None)
    effects = start(cl, conns["ann"])
    [race_msg] = [m for m in to(effects, conns["ann"]) if isinstance(m, RaceMsg)]
    assert race_msg.view == Game.from_code(GameCode.parse("YU1-C-AAAAAAH")).view()
    cl.send(conns["ann"], Resign())
    [result] = [m for m in to(cl.commit(2), conns["ann"]) if isinstance(m, Result)]
    assert result.code == "YU1-C-AAAAAAH"


def test_a_rematch_needs_a_finished_race() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann"])
    assert error_codes(cl.send(conns["ann"], Rematch()), conns["ann"]) == ["wrong_state"]
    start(cl, conns["ann"])
    assert error_codes(cl.send(conns["ann"], Rematch()), conns["ann"]) == ["wrong_state"]
    cl.send(conns["ann"], Resign())
    # Stored but not yet committed: still not finished.
    assert error_codes(cl.send(conns["ann"], Rematch()), conns["ann"]) == ["wrong_state"]
    cl.commit(1)
    assert error_codes(cl.send(conns["ann"], Rematch()), conns["ann"]) == []


def test_a_rematch_clears_ready() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob", "cat"])
    for conn in conns.values():
        cl.send(conn, Resign())
    cl.commit(1)
    [room] = to(cl.send(conns["ann"], Rematch()), conns["cat"])
    assert [(p.name, p.ready) for p in room.players] == [
        ("ann", True),
        ("bob", False),
        ("cat", False),
    ]


# -- endings ----------------------------------------------------------------------------------


def test_a_won_game_ends_with_its_time_and_ranks_first() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"], code=WIN_CODE)
    ann, bob, sue = conns["ann"], conns["bob"], conns["sue"]
    cl.move(bob, "6H>7", at=cl.race_start + 1)
    effects = cl.play(ann, WIN_MOVES)
    last = cl.last(ann, Accepted)
    win_ms = 1000 + len(WIN_MOVES) * 250
    assert (last.state, last.foundations, last.moves, last.elapsed_ms) == (
        "won",
        52,
        len(WIN_MOVES),
        win_ms,
    )
    assert persists(effects) == []
    progress = cl.last(sue, Progress)
    assert (progress.players[0].state, progress.players[0].time_ms) == ("won", win_ms)
    assert error_codes(cl.move(ann, "KD>1"), ann) == ["finished"]
    assert error_codes(cl.send(ann, Resign()), ann) == ["finished"]
    effects = cl.send(bob, Resign(), at=cl.now + 1)
    [record] = persists(effects)
    assert [(r.name, r.outcome, r.rank) for r in record.results] == [
        ("ann", "won", 1),
        ("bob", "resigned", 2),
    ]
    assert len(record.results[0].journal) == len(WIN_MOVES)
    cl.commit(record.race_id)
    result = cl.last(sue, Result)
    assert result.ranks[0].name == "ann"
    assert result.ranks[0].time_ms == win_ms
    assert result.ranks[0].foundations == 52


def test_a_race_of_one_winner_ends_when_they_win() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    effects = cl.play(conns["ann"], WIN_MOVES)
    assert len(persists(effects)) == 1


def test_stuck_without_undo_ends_the_players_race() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], code=STUCK_CODE, undo=False)
    ann, bob = conns["ann"], conns["bob"]
    effects = cl.move(ann, STUCK_MOVE, at=cl.race_start + 2)
    assert to(effects, ann)[0].state == "stuck"
    assert cl.last(bob, Progress).players[0].state == "stuck"
    assert error_codes(cl.move(ann, STUCK_MOVE), ann) == ["finished"]
    effects = cl.move(bob, STUCK_MOVE, at=cl.race_start + 3)
    [record] = persists(effects)
    assert [(r.name, r.outcome, r.time_ms) for r in record.results] == [
        ("ann", "stuck", 2000),
        ("bob", "stuck", 3000),
    ]


def test_stuck_with_undo_may_undo_or_resign() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], code=STUCK_CODE)
    ann, bob = conns["ann"], conns["bob"]
    effects = cl.move(ann, STUCK_MOVE, at=cl.race_start + 2)
    accepted = to(effects, ann)[0]
    assert isinstance(accepted, Accepted)
    assert accepted.state == "stuck"
    assert persists(effects) == []
    assert cl.last(bob, Progress).players[0].state == "stuck"
    assert cl.last(bob, Progress).players[0].time_ms is None

    effects = cl.undo(ann, at=cl.race_start + 3)
    undone = to(effects, ann)[0]
    assert undone == Undone(
        2, STUCK_MOVE, Game.from_code(STUCK_CODE).view(), 0, 1, 0, "playing", undone.elapsed_ms
    )
    assert cl.last(bob, Progress).players[0].state == "playing"

    cl.move(ann, STUCK_MOVE, at=cl.race_start + 4)
    assert cl.last(ann, Accepted).state == "stuck"
    cl.send(ann, Resign(), at=cl.race_start + 5)
    assert cl.last(bob, Progress).players[0].state == "resigned"
    effects = cl.send(bob, Resign(), at=cl.race_start + 6)
    [record] = persists(effects)
    assert [(r.name, r.outcome, r.undos) for r in record.results] == [
        ("ann", "resigned", 1),
        ("bob", "resigned", 0),
    ]
    assert [a for _, a in record.results[0].journal] == [STUCK_MOVE, "undo", STUCK_MOVE]


def test_the_time_limit_ends_the_race_at_the_tick() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"], time_limit=30)
    ann = conns["ann"]
    cl.move(ann, "6H>7", at=cl.race_start + 5)
    assert kinds(cl.after_hold(), conns["bob"]) == ["progress"]
    assert cl.tick(cl.race_start + 29.999) == []
    effects = cl.tick(cl.race_start + 30)
    [record] = persists(effects)
    assert [(r.name, r.outcome, r.time_ms, r.rank) for r in record.results] == [
        ("ann", "timeout", 30000, 1),
        ("bob", "timeout", 30000, 2),
    ]
    for conn in conns.values():
        [progress] = [m for m in to(effects, conn) if isinstance(m, Progress)]
        assert [p.state for p in progress.players] == ["timeout", "timeout"]
    assert error_codes(cl.move(ann, "8C>6"), ann) == ["finished"]
    assert not any(isinstance(m, Result) for m in cl.all_messages())
    cl.commit(1)
    assert cl.last(conns["sue"], Result).ranks[0].outcome == "timeout"


def test_the_time_limit_does_not_touch_players_who_are_done() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], time_limit=60)
    cl.send(conns["ann"], Resign(), at=cl.race_start + 10)
    [record] = persists(cl.tick(cl.race_start + 60))
    assert [(r.outcome, r.time_ms) for r in record.results] == [
        ("resigned", 10000),
        ("timeout", 60000),
    ]


def test_a_move_after_the_time_limit_is_not_played_even_before_the_tick() -> None:
    cl = Clients()
    conns = race(cl, ["ann"], time_limit=30)
    effects = cl.move(conns["ann"], "6H>7", at=cl.race_start + 31)
    assert not any(isinstance(m, Accepted) for m in to(effects, conns["ann"]))


def test_a_player_gone_past_the_resume_window_abandons() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, bob = conns["ann"], conns["bob"]
    cl.move(bob, "6H>7", at=cl.race_start + 1)
    effects = cl.disconnect(bob, at=cl.race_start + 5)
    assert persists(effects) == []
    cl.send(ann, Resign(), at=cl.race_start + 10)
    assert cl.persisted == []
    assert cl.tick(cl.race_start + 64.9) == []
    effects = cl.tick(cl.race_start + 65)
    [record] = persists(effects)
    assert [(r.name, r.outcome, r.time_ms, r.rank) for r in record.results] == [
        ("ann", "resigned", 10000, 2),
        ("bob", "abandoned", 65000, 1),
    ]
    progress = [m for m in to(effects, ann) if isinstance(m, Progress)][-1]
    assert [(p.name, p.state, p.connected) for p in progress.players] == [
        ("ann", "resigned", True),
        ("bob", "abandoned", False),
    ]
    cl.commit(record.race_id)
    assert [e.outcome for e in cl.last(conns["sue"], Result).ranks] == ["abandoned", "resigned"]


def test_ranks_winners_by_time_then_the_rest_with_shared_ranks() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob", "cat", "dan", "eve"], max_players=8)
    t = cl.race_start
    cl.move(conns["bob"], "6H>7", at=t + 1)  # 5 points
    cl.send(conns["bob"], Resign(), at=t + 2)
    cl.send(conns["cat"], Resign(), at=t + 3)
    cl.send(conns["dan"], Resign(), at=t + 3)
    cl.send(conns["eve"], Resign(), at=t + 4)
    effects = cl.play(conns["ann"], WIN_MOVES)
    [record] = persists(effects)
    cl.commit(record.race_id)
    result = cl.last(conns["eve"], Result)
    # Equal non-wins: the one who played on longer first (issue 28).
    assert [(e.rank, e.name, e.outcome) for e in result.ranks] == [
        (1, "ann", "won"),
        (2, "bob", "resigned"),
        (3, "eve", "resigned"),
        (4, "cat", "resigned"),
        (4, "dan", "resigned"),
    ]


def test_the_result_is_announced_only_after_the_commit() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    cl.send(conns["ann"], Resign())
    effects = cl.send(conns["bob"], Resign())
    assert len(persists(effects)) == 1
    cl.tick(cl.now + 10_000)  # however long storage takes
    assert not any(isinstance(m, Result) for m in cl.all_messages())
    assert cl.commit(99) == []
    effects = cl.commit(1)
    assert {c for c, m in sends(effects) if isinstance(m, Result)} == set(conns.values())


# -- sequence numbers and undo ------------------------------------------------------------------


def test_a_resent_seq_is_answered_again_and_not_played_twice() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann, bob = conns["ann"], conns["bob"]
    first = cl.send(ann, MoveMsg(1, "6H>7"), at=cl.race_start + 1)
    accepted = to(first, ann)[0]
    again = cl.send(ann, MoveMsg(1, "6H>7"), at=cl.race_start + 2)
    assert again == [Send(ann, accepted)]
    different = cl.send(ann, MoveMsg(1, "8C>6"), at=cl.race_start + 3)
    assert different == [Send(ann, accepted)]
    effects = cl.send(ann, MoveMsg(2, "8C>6"))
    assert to(effects, ann)[0].moves == 2
    cl.after_hold()
    assert cl.last(bob, Progress).players[0].moves == 2


def test_a_resent_refusal_is_the_same_refusal() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    ann = conns["ann"]
    refused = cl.send(ann, MoveMsg(1, "KD>1"))
    assert cl.send(ann, MoveMsg(1, "KD>1")) == refused
    assert cl.send(ann, MoveMsg(1, "6H>7")) == refused
    assert to(cl.send(ann, MoveMsg(2, "6H>7")), ann)[0].moves == 1


def test_a_resent_undo_is_not_undone_twice() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    ann = conns["ann"]
    cl.send(ann, MoveMsg(1, "6H>7"))
    cl.send(ann, MoveMsg(2, "8C>6"))
    undone = cl.send(ann, Undo(3))
    assert cl.send(ann, Undo(3)) == [Send(ann, to(undone, ann)[0])]
    assert to(undone, ann)[0].view == view_after(WIN_CODE, ["6H>7"]).view()


def test_an_old_seq_never_answered_is_stale() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    ann = conns["ann"]
    cl.send(ann, MoveMsg(5, "6H>7"))
    effects = cl.send(ann, MoveMsg(3, "8C>6"))
    assert error_codes(effects, ann) == ["stale_seq"]
    assert to(effects, ann)[0].seq == 3
    assert receivers(effects) == {ann}
    assert to(cl.send(ann, MoveMsg(6, "8C>6")), ann)[0].moves == 2


def test_a_seq_too_old_to_remember_is_stale() -> None:
    cl = Clients(HubConfig(bucket_capacity=1000))
    conns = race(cl, ["ann"])
    ann = conns["ann"]
    cl.send(ann, MoveMsg(1, "6H>7"))
    for seq in range(2, REPLY_MEMORY + 3):
        cl.send(ann, MoveMsg(seq, "KD>1"))
    assert error_codes(cl.send(ann, MoveMsg(1, "6H>7")), ann) == ["stale_seq"]
    assert error_codes(cl.send(ann, MoveMsg(3, "KD>1")), ann) == []
    assert cl.last(ann, Refused).seq == 3


def test_undo_in_a_room_without_undo_is_refused() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], undo=False)
    ann = conns["ann"]
    cl.send(ann, MoveMsg(1, "6H>7"))
    effects = cl.send(ann, Undo(2))
    assert effects == [Send(ann, Refused(2, "undo_disabled", "this room allows no undo"))]
    assert to(cl.send(ann, MoveMsg(3, "8C>6")), ann)[0].moves == 2


def test_undo_with_nothing_to_undo_is_refused() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    effects = cl.send(conns["ann"], Undo(1))
    [refused] = to(effects, conns["ann"])
    assert isinstance(refused, Refused)
    assert (refused.seq, refused.code) == (1, "nothing_to_undo")


def test_an_undo_is_shown_to_the_player_and_as_progress_to_everyone() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann, bob = conns["ann"], conns["bob"]
    cl.send(ann, MoveMsg(1, "6H>7"))
    effects = cl.send(ann, Undo(2))
    undone = to(effects, ann)[0]
    assert undone == Undone(
        2, "6H>7", Game.from_code(WIN_CODE).view(), 0, 1, 0, "playing", undone.elapsed_ms
    )
    assert to(effects, bob) == []  # held, then shown as the room's latest progress
    [progress] = to(cl.after_hold(), bob)
    assert (progress.players[0].score, progress.players[0].moves) == (0, 1)


# -- progress: held per room --------------------------------------------------------------------


def test_moves_within_the_hold_make_one_progress_with_the_latest_standings() -> None:
    cl = Clients(HubConfig(bucket_capacity=1000))
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, bob, sue = conns["ann"], conns["bob"], conns["sue"]
    t = cl.race_start + 1
    cl.move(ann, "6H>7", at=t)
    cl.move(bob, "6H>7", at=t + 0.01)
    effects = cl.move(ann, "8C>6", at=t + 0.02)
    assert kinds(effects, bob) == [] and kinds(effects, sue) == []
    due = cl.hub.next_deadline()
    assert due == pytest.approx(t + 0.1)  # from the first move: later ones wait no longer
    effects = cl.tick(due)
    for conn in (ann, bob, sue):  # two runners moved: everyone gets it
        [progress] = to(effects, conn)
        assert [(p.name, p.moves) for p in progress.players] == [("ann", 2), ("bob", 1)]
        assert progress.elapsed_ms == 1100
    assert cl.after_hold() == []  # nothing held any more


def test_a_room_frame_releases_the_held_progress_first_and_errors_do_not() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, bob, sue = conns["ann"], conns["bob"], conns["sue"]
    cl.move(ann, "6H>7", at=cl.race_start + 1)
    effects = cl.send(bob, Start())  # bob's mistake: an error for bob, nothing for the rest
    assert receivers(effects) == {bob} and kinds(effects, bob) == ["error"]
    effects = cl.disconnect(bob)
    # The held progress (ann's move; a snapshot of the room as it is when it goes) goes
    # before the room that shows bob gone, then the progress of that; ann's own move
    # alone is no news to ann.
    assert kinds(effects, sue) == ["progress", "room", "progress"]
    held = to(effects, sue)[0]
    assert [(p.name, p.moves, p.connected) for p in held.players] == [
        ("ann", 1, True),
        ("bob", 0, False),
    ]
    assert kinds(effects, ann) == ["room", "progress"]
    assert cl.after_hold() == []


def test_a_finished_runner_is_shown_at_once() -> None:
    cl = Clients(HubConfig(bucket_capacity=1000))
    conns = race(cl, ["ann", "bob"])
    cl.play(conns["ann"], WIN_MOVES[:-1], step=0.001)  # never a full hold between moves
    effects = cl.move(conns["ann"], WIN_MOVES[-1])
    [progress] = to(effects, conns["bob"])
    assert progress.players[0].state == "won"


def test_with_no_hold_every_move_makes_a_progress() -> None:
    cl = Clients(HubConfig(progress_hold_s=0))
    conns = race(cl, ["ann", "bob"])
    effects = cl.move(conns["ann"], "6H>7")
    assert kinds(effects, conns["bob"]) == ["progress"]
    assert kinds(effects, conns["ann"]) == ["accepted", "progress"]


# -- resuming ---------------------------------------------------------------------------------


def test_a_resume_mid_race_brings_back_the_whole_state() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, bob = conns["ann"], conns["bob"]
    t = cl.race_start
    cl.move(ann, "6H>7", at=t + 1)
    cl.move(ann, "8C>6", at=t + 2)
    cl.move(ann, "KD>1", at=t + 3)  # refused; still the last seq
    effects = cl.disconnect(ann, at=t + 5)
    assert receivers(effects) == {bob, conns["sue"]}
    [room] = [m for m in to(effects, bob) if isinstance(m, Room)]
    assert [(p.name, p.connected) for p in room.players] == [("ann", False), ("bob", True)]
    # The progress the last move left held goes first, then the one showing ann gone.
    assert kinds(effects, bob) == ["progress", "room", "progress"]
    progress = cl.last(bob, Progress)
    assert [(p.name, p.connected) for p in progress.players] == [("ann", False), ("bob", True)]

    cl.move(bob, "6H>7", at=t + 10)
    assert kinds(cl.after_hold(), conns["sue"]) == ["progress"]
    assert cl.tick(t + 20) == []
    new, effects = cl.resume("ann", at=t + 30)
    msgs = to(effects, new)
    assert [m.TYPE for m in msgs] == ["welcome", "room", "race", "progress"]
    assert msgs[0] == Welcome(
        PROTOCOL_VERSION,
        "ann",
        cl.tokens["ann"],
        60,
        msgs[1].room,
        next_daily_ms=next_daily_ms(cl.wall),
    )
    assert msgs[1].room == "ZEBRA", "the welcome names the room whose state follows"
    assert msgs[1].state == "racing"
    expected = view_after(WIN_CODE, ["6H>7", "8C>6"])
    assert msgs[2] == RaceMsg(expected.view(), 30000, 1800, 3, 10, 2, "playing")
    assert msgs[3].elapsed_ms == 30000
    assert [(p.name, p.moves) for p in msgs[3].players] == [("ann", 2), ("bob", 1)]

    # The clock kept running, and the race goes on from the next seq.
    effects = cl.move(new, "7H>6", at=t + 31)
    assert to(effects, new)[0] == Accepted(4, "7H>6", None, 10, 3, 0, "playing", 31000)
    assert ann not in receivers(effects)


def test_the_others_see_a_resumed_player_connected_again() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    bob = conns["bob"]
    cl.disconnect(conns["ann"], at=cl.race_start + 5)
    assert [p.connected for p in cl.last(bob, Room).players] == [False, True]
    cl.resume("ann", at=cl.race_start + 6)
    assert [p.connected for p in cl.last(bob, Room).players] == [True, True]
    assert [p.connected for p in cl.last(bob, Progress).players] == [True, True]


def test_a_second_connection_with_the_token_replaces_the_first() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    old = conns["ann"]
    new, effects = cl.resume("ann", at=cl.race_start + 2)
    [close] = closes(effects)
    assert (close.conn, close.code) == (old, CLOSE_REPLACED) == (old, 4001)
    assert old not in receivers(effects)
    assert kinds(effects, new) == ["welcome", "room", "race", "progress"]
    # The old connection is dead to the hub: nothing it sends counts.
    assert cl.send(old, MoveMsg(1, "6H>7")) == []
    # Its disconnect, when the socket layer reports it, changes nothing for the player.
    assert cl.disconnect(old) == []
    effects = cl.move(new, "6H>7", at=cl.race_start + 3)
    assert to(effects, new)[0].moves == 1
    [progress] = to(cl.after_hold(), conns["bob"])
    assert progress.players[0].connected


def test_a_wrong_token_is_refused() -> None:
    cl = Clients()
    cl.hello("ann")
    conn = cl.connect()
    effects = cl.send(conn, Hello(PROTOCOL_VERSION, "ann", token="tok999"))
    assert effects == [Send(conn, to(effects, conn)[0])]
    assert error_codes(effects, conn) == ["bad_token"]
    assert kinds(cl.send(conn, Hello(PROTOCOL_VERSION, "bob")), conn) == ["welcome"]


def test_after_the_window_the_place_is_gone_but_the_identity_stays() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"])
    cl.disconnect(conns["bob"], at=200.0)
    assert cl.tick(259.9) == []
    effects = cl.tick(260.0)
    [room] = to(effects, conns["ann"])
    assert [p.name for p in room.players] == ["ann"]
    conn = cl.connect()
    # The token is a lasting identity: bob is bob again, only out of the room.
    effects = cl.send(conn, Hello(PROTOCOL_VERSION, token=cl.tokens["bob"]))
    assert kinds(effects, conn) == ["welcome"]
    assert to(effects, conn)[0].name == "bob"
    other = cl.connect()
    assert error_codes(cl.send(other, Hello(PROTOCOL_VERSION, "BOB")), other) == ["name_taken"]


def test_within_the_window_the_name_stays_taken() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    cl.disconnect(ann, at=200.0)
    conn = cl.connect(at=259.0)
    assert error_codes(cl.send(conn, Hello(PROTOCOL_VERSION, "ann")), conn) == ["name_taken"]


def test_the_resume_window_is_configurable() -> None:
    cl = Clients(HubConfig(resume_window_s=5))
    conns = race(cl, ["ann", "bob"])
    cl.disconnect(conns["bob"], at=cl.race_start + 1)
    cl.send(conns["ann"], Resign())
    assert persists(cl.tick(cl.race_start + 5.9)) == []
    assert len(persists(cl.tick(cl.race_start + 6))) == 1


def test_a_token_past_its_window_does_not_resume_even_before_the_tick() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    cl.disconnect(conns["ann"], at=cl.race_start + 1)
    conn = cl.connect(at=cl.race_start + 62)
    effects = cl.send(conn, Hello(PROTOCOL_VERSION, token=cl.tokens["ann"]))
    assert kinds(effects, conn) == ["welcome"]  # ann, but no longer in the race
    progress = cl.last(conns["bob"], Progress)
    assert progress.players[0].state == "abandoned"


def test_a_reconnect_resets_the_window() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    t = cl.race_start
    cl.disconnect(conns["bob"], at=t + 1)
    new, _ = cl.resume("bob", at=t + 50)
    cl.disconnect(new, at=t + 55)
    cl.send(conns["ann"], Resign(), at=t + 56)
    assert persists(cl.tick(t + 61)) == []
    assert persists(cl.tick(t + 114)) == []
    [record] = persists(cl.tick(t + 115))
    assert record.results[1].outcome == "abandoned"


def test_a_resume_in_the_lobby_gets_the_room() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"])
    cl.disconnect(conns["bob"])
    new, effects = cl.resume("bob")
    assert kinds(effects, new) == ["welcome", "room"]
    assert error_codes(cl.send(new, Ready(False)), new) == []


def test_a_resume_during_the_countdown_gets_the_time_left() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"])
    cl.send(conns["ann"], Start(), at=200.0)
    cl.disconnect(conns["bob"], at=200.5)
    new, effects = cl.resume("bob", at=201.0)
    assert to(effects, new)[-1] == Countdown(2000)
    effects = cl.tick(203.0)
    assert kinds(effects, new)[0] == "race"


def test_a_resume_after_the_race_gets_the_result() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    cl.disconnect(conns["bob"], at=cl.race_start + 1)
    cl.send(conns["ann"], Resign(), at=cl.race_start + 2)
    new, _ = cl.resume("bob", at=cl.race_start + 3)
    cl.send(new, Resign())
    cl.commit(1)
    newer, effects = cl.resume("bob")
    assert kinds(effects, newer) == ["welcome", "room", "race", "progress", "result"]


def test_a_resume_outside_any_room_is_just_a_welcome() -> None:
    cl = Clients()
    cl.disconnect(cl.hello("ann"))
    new, effects = cl.resume("ann")
    assert kinds(effects, new) == ["welcome"]


# -- spectators -------------------------------------------------------------------------------


def test_spectators_see_progress_cannot_play_and_get_the_result() -> None:
    cl = Clients()
    conns = race(cl, ["ann"], ["sue"])
    ann, sue = conns["ann"], conns["sue"]
    assert cl.messages(sue, RaceMsg) == []
    assert cl.last(sue, Room).you == "spectator"
    cl.move(ann, "6H>7")
    cl.after_hold()
    assert cl.last(sue, Progress).players[0].score == 5
    for message in (MoveMsg(1, "8C>6"), Undo(1), Ready(), Start(), Rematch()):
        effects = cl.send(sue, message)
        assert error_codes(effects, sue) == ["not_player"], message
        assert receivers(effects) == {sue}
    assert error_codes(cl.send(sue, Resign()), sue) == ["not_player"]
    cl.send(ann, Resign())
    cl.commit(1)
    assert cl.last(sue, Result).ranks[0].name == "ann"


def test_watching_mid_race_shows_the_room_and_progress_but_no_cards() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    cl.move(conns["ann"], "6H>7", at=cl.race_start + 1)
    sue = cl.hello("sue")
    effects = cl.send(sue, Watch("ZEBRA"), at=cl.race_start + 2)
    assert set(kinds(effects, sue)) == {"room", "progress"}
    assert cl.last(sue, Room).you == "spectator"
    assert cl.last(sue, Progress).players[0].moves == 1
    assert cl.last(conns["ann"], Room).spectators == 1


def test_a_spectator_may_leave_at_any_time() -> None:
    cl = Clients()
    conns = race(cl, ["ann"], ["sue"])
    effects = cl.send(conns["sue"], Leave())
    assert error_codes(effects, conns["sue"]) == []
    assert cl.last(conns["ann"], Room).spectators == 0


# -- bad input --------------------------------------------------------------------------------


def test_a_move_before_the_race_finds_no_race() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann", "bob"])
    for message in (MoveMsg(1, "6H>7"), Undo(1), Resign()):
        effects = cl.send(conns["bob"], message)
        assert error_codes(effects, conns["bob"]) == ["no_race"]
        assert receivers(effects) == {conns["bob"]}


def test_a_move_outside_a_room_is_not_in_room() -> None:
    cl = Clients()
    race(cl, ["ann"])
    tom = cl.hello("tom")
    for message in (MoveMsg(1, "6H>7"), Undo(1), Resign(), Ready(), Start(), Rematch(), Leave()):
        effects = cl.send(tom, message)
        assert error_codes(effects, tom) == ["not_in_room"], message
        assert receivers(effects) == {tom}


def test_a_move_error_carries_the_seq() -> None:
    cl = Clients()
    tom = cl.hello("tom")
    [error] = to(cl.send(tom, MoveMsg(7, "6H>7")), tom)
    assert (error.code, error.seq) == ("not_in_room", 7)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xc1\xc1\xc1", "bad_msgpack"),
        (encode(MoveMsg(1, "6H>7"))[:-2], "bad_msgpack"),
        ("a text frame", "bad_frame"),
        (b"\x93\x01\x02\x03", "bad_message"),
        (b"\x81\xa1t\xa4nope", "unknown_type"),
        (b"\x82\xa1t\xa4move\xa3seq\xc3", "bad_field"),
        (b"\x00" * 20000, "too_big"),
    ],
    ids=["garbage", "truncated", "text", "array", "unknown", "bool seq", "big"],
)
def test_malformed_input_gets_its_code_and_changes_nothing(data: bytes | str, code: str) -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    before = {c: len(cl.inbox[c]) for c in conns.values()}
    effects = cl.raw(conns["bob"], data)
    assert len(effects) == 1
    assert error_codes(effects, conns["bob"]) == [code]
    assert to(effects, conns["bob"])[0].text
    assert {c: len(cl.inbox[c]) for c in conns.values()} == {
        **before,
        conns["bob"]: before[conns["bob"]] + 1,
    }
    effects = cl.move(conns["bob"], "6H>7")
    assert to(effects, conns["bob"])[0] == Accepted(1, "6H>7", "9S", 5, 1, 0, "playing", 0)


def test_persistent_garbage_closes_the_connection() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    bob = conns["bob"]
    limit = cl.config.strike_limit
    for n in range(limit):
        effects = cl.raw(bob, b"\xc1", at=cl.now + 0.5)
        assert closes(effects) == [], n
    effects = cl.raw(bob, b"\xc1", at=cl.now + 0.5)
    assert error_codes(effects, bob) == ["bad_msgpack"]
    [close] = closes(effects)
    assert (close.conn, close.code) == (bob, CLOSE_POLICY)
    assert receivers(effects) == {bob}
    assert cl.raw(bob, encode(MoveMsg(1, "6H>7"))) == []


def test_garbage_spread_beyond_the_window_is_forgiven() -> None:
    cl = Clients(HubConfig(strike_limit=3, strike_window_s=10))
    conn = cl.hello("ann")
    for n in range(12):  # never more than two within ten seconds
        assert closes(cl.raw(conn, b"\xc1", at=100.0 + n * 5)) == []
    assert closes(cl.raw(conn, b"\xc1", at=155.5)) == []  # three: 150, 155, 155.5
    assert closes(cl.raw(conn, b"\xc1", at=155.6)) != []  # four


def test_every_kind_of_malformed_message_counts_as_a_strike() -> None:
    cl = Clients(HubConfig(strike_limit=4))
    conn = cl.connect()
    cl.send(conn, MoveMsg(1, "6H>7"))  # hello_first
    cl.raw(conn, "text")  # bad_frame
    cl.raw(conn, b"\xc1")  # bad_msgpack
    cl.raw(conn, b"\x81\xa1t\xa4nope")  # unknown_type
    effects = cl.raw(conn, b"\x90")  # bad_message
    assert closes(effects) != []


def test_refusals_and_game_errors_are_not_strikes() -> None:
    cl = Clients(HubConfig(bucket_capacity=1000))
    conns = race(cl, ["ann"])
    tom = cl.hello("tom")
    for n in range(1, 30):
        cl.send(conns["ann"], MoveMsg(n, "KD>1"))
        cl.send(tom, MoveMsg(n, "KD>1"))
        cl.send(tom, Join("NOPE2"))
    assert cl.closed == {}


def test_flooding_beyond_the_token_bucket_closes_the_connection() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    bob = conns["bob"]
    burst = int(cl.config.bucket_capacity)
    cl.now += 100  # the bucket is full again
    seq = 0
    for _ in range(burst):
        seq += 1
        effects = cl.send(bob, MoveMsg(seq, "KD>1"))
        assert closes(effects) == []
        assert to(effects, bob)[0].TYPE == "refused"
    effects = cl.send(bob, MoveMsg(seq + 1, "6H>7"))
    [close] = effects
    assert isinstance(close, Close)
    assert (close.conn, close.code) == (bob, CLOSE_POLICY)
    assert cl.send(bob, MoveMsg(seq + 2, "6H>7"), at=cl.now + 100) == []
    assert to(cl.move(conns["ann"], "6H>7"), conns["ann"])[0].moves == 1


def test_the_token_bucket_refills_over_time() -> None:
    cl = Clients(HubConfig(bucket_capacity=5, bucket_rate=2))
    conn = cl.hello("ann")  # one token
    for _ in range(4):
        assert closes(cl.send(conn, Leave())) == []
    assert closes(cl.send(conn, Leave(), at=cl.now + 0.5)) == []  # one token back
    assert closes(cl.send(conn, Leave(), at=cl.now + 0.2)) != []


def test_a_steady_player_never_floods() -> None:
    cl = Clients()
    conns = race(cl, ["ann"])
    # 145 moves four a second: well under 20 a second, far over 40 in all.
    assert len(persists(cl.play(conns["ann"], WIN_MOVES, step=0.25))) == 1
    assert cl.closed == {}


def test_one_players_bad_input_never_changes_another_players_race() -> None:
    def run(noisy: bool) -> dict[str, list[Any]]:
        cl = Clients(HubConfig(strike_limit=100, bucket_capacity=1000))
        conns = race(cl, ["ann", "bob"])
        ann, bob = conns["ann"], conns["bob"]
        for n, move in enumerate(WIN_MOVES[:30]):
            cl.move(ann, move, at=cl.race_start + 1 + n)
            if noisy:
                cl.raw(bob, b"\xc1")
                cl.raw(bob, b"\x81\xa1t\xa4move")
                cl.send(bob, MoveMsg(10**6 + n, "KD>1"))
                cl.send(bob, MoveMsg(1, "zz"))
                cl.send(bob, Undo(10**6 + n))
                cl.send(bob, Start())
                cl.send(bob, Create())
                cl.send(bob, Join("WALTZ"))
                cl.send(bob, Hello(PROTOCOL_VERSION, "ann"))
        cl.send(ann, Resign())
        cl.send(bob, Resign())
        cl.commit(1)
        return {"ann": cl.messages(ann), "bob": [m for m in cl.messages(bob) if m.TYPE != "error"]}

    quiet, noisy = run(False), run(True)
    assert noisy["ann"] == quiet["ann"]
    assert [m for m in noisy["bob"] if not isinstance(m, Refused)] == [
        m for m in quiet["bob"] if not isinstance(m, Refused)
    ]


def test_a_disconnect_of_an_unknown_or_anonymous_connection_is_harmless() -> None:
    cl = Clients()
    assert cl.disconnect(42) == []
    conn = cl.connect()
    assert cl.disconnect(conn) == []
    assert cl.hub.connections == 0
    assert cl.tick(cl.now + 100) == []


def test_a_room_emptied_during_the_countdown_starts_no_race() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann"])
    cl.send(conns["ann"], Start())
    cl.send(conns["ann"], Leave())
    assert cl.hub.rooms == 0
    assert persists(cl.tick(cl.now + 3)) == []


# -- hidden information -----------------------------------------------------------------------


def face_down_cards(code: str) -> set[str]:
    """The cards dealt face down, as text (``position()`` writes them in lower case)."""
    position = Game.from_code(code).position()
    columns = position.split(" ")[2]
    return {
        tok.upper()
        for col in columns.split("/")
        for tok in (col[i : i + 2] for i in range(0, len(col), 2))
        if tok.islower()
    }


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a message, fields of nested records and lists included."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from strings_in(getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from strings_in(item)
    elif value is not None:
        yield str(value)


def assert_no_leak(messages: list[Any], hidden: set[str]) -> set[str]:
    """No face-down card appears before the Accepted that turned it up; returns those turned."""
    turned: set[str] = set()
    for i, message in enumerate(messages):
        if isinstance(message, Accepted) and message.turned is not None:
            assert message.turned in hidden, (i, message)  # again after an undo is fine
            turned.add(message.turned)
        secret = hidden - turned
        for text in strings_in(message):
            for card in secret:
                assert card not in text, (i, card, message)
        if isinstance(message, (RaceMsg, Undone)):
            tokens = [
                tok
                for col in message.view.split(" ")[2].split("/")
                for tok in (col[j : j + 2] for j in range(0, len(col), 2))
            ]
            assert not any(t.islower() for t in tokens), message
    return turned


def test_face_down_cards_are_never_sent_before_they_turn_up() -> None:
    cl = Clients(HubConfig(bucket_capacity=1000))  # a random deal: deal 1, the winning line
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, bob, sue = conns["ann"], conns["bob"], conns["sue"]
    hidden = face_down_cards(WIN_CODE)
    assert len(hidden) == 21

    # Bob turns up two cards, tries a face-down one, then leaves for a while.
    cl.play(bob, WIN_MOVES[:2])
    cl.move(bob, "QH>F")
    cl.move(bob, "AS>F")
    cl.disconnect(bob, at=cl.now + 1)

    # Ann turns a card, takes it back, turns it again, and plays the game out.
    cl.play(ann, WIN_MOVES[:1])
    cl.undo(ann, at=cl.now + 1)
    cl.play(ann, WIN_MOVES[:60])
    bob2, _ = cl.resume("bob", at=cl.now + 1)
    cl.undo(bob2)
    cl.play(ann, WIN_MOVES[60:])
    cl.move(bob2, "5D>F")
    cl.send(bob2, Resign())
    cl.commit(1)

    assert assert_no_leak(cl.inbox[ann], hidden) == hidden
    bob_seen = cl.inbox[bob] + cl.inbox[bob2]
    assert assert_no_leak(bob_seen, hidden) == {"9S", "TH"}
    assert assert_no_leak(cl.inbox[sue], hidden) == set()
    # The check looks where it should: ann's turned cards do reach ann, and the result came.
    assert any(isinstance(m, Accepted) and m.turned == "9S" for m in cl.inbox[ann])
    assert any(isinstance(m, Undone) for m in cl.inbox[ann])
    assert any(isinstance(m, RaceMsg) for m in cl.inbox[bob2])
    assert cl.last(sue, Result).code == WIN_CODE


# -- restarts -----------------------------------------------------------------------------------


def test_a_restored_race_asks_for_the_moves_its_journal_lost() -> None:
    """After a crash the journal may lack the last few accepted moves. The restored race says
    how far it got (``race.seq``); the client resends the rest and the engine checks them."""
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann = conns["ann"]
    for n, move in enumerate(WIN_MOVES[:6], start=1):
        cl.move(ann, move, at=cl.race_start + n)
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]
    assert [a.action for a in actions] == WIN_MOVES[:6]
    view_before = cl.last(ann, Accepted)

    # A new process: the same players in storage, and a journal that lost the last two moves.
    after = Clients()
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    effects = after.hub.restore(live, actions[:4], alive_ms=4_500, now=after.now)
    assert persists(effects) == []
    conn, effects = after.resume("ann", at=after.now + 2)
    [resumed] = [m for m in to(effects, conn) if isinstance(m, RaceMsg)]
    assert resumed.seq == 4 and resumed.moves == 4
    # The clock resumed at 4.5 s, not at the time the server was away.
    assert resumed.elapsed_ms == 6_500
    for seq in (5, 6):
        effects = after.send(conn, MoveMsg(seq, WIN_MOVES[seq - 1]))
        [accepted] = [m for m in to(effects, conn) if isinstance(m, Accepted)]
        assert accepted.move == WIN_MOVES[seq - 1]
    assert (accepted.score, accepted.moves) == (view_before.score, view_before.moves)
    # Bob was restored too; he has the resume window to come back, like any dropped player.
    assert after.hub.races_running == 1


def test_a_race_taken_over_by_a_node_that_sent_its_player_elsewhere_before_is_served_here() -> None:
    """A cluster's node remembers ann from an earlier session of hers whose room was on
    node y (her session went there: away). It then takes over a race of hers (restore):
    her resume is served here, not handed over to y again (the compose drill lost a player
    so), and she has a fresh resume window, not what was left of the old one."""
    cl = Clients(HubConfig(resume_window_s=60))
    conns = race(cl, ["ann", "bob"])
    cl.move(conns["ann"], WIN_MOVES[0], at=cl.race_start + 1)
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]
    ann_id, _, ann_token = cl.registry["ann"]

    after = Clients(HubConfig(resume_window_s=60))
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    after.hub = Hub(after.config, wall_clock=lambda: after.wall, boot_id="b007", node="x")
    old = after.connect()
    [auth] = after.hub.receive(old, encode(Hello(PROTOCOL_VERSION, token=ann_token)), after.now)
    assert isinstance(auth, Authenticate)
    effects = after.hub.authenticated(
        old,
        player_id=ann_id,
        name="ann",
        token=ann_token,
        now=after.now,
        away="y",
        away_room="YROOM",
    )
    assert any(isinstance(e, Handover) and e.node == "y" for e in effects)
    after.disconnect(old, at=after.now + 30)  # gone from here, her place kept

    gone = after.now  # her window here ends at gone + 60
    after.hub.restore(live, actions, alive_ms=1_000, now=gone + 10)
    after.tick(gone + 62)  # her old window is over, the new one (to gone + 70) not
    assert [e.action for e in after.journal if isinstance(e, LiveAction)] == []
    conn, effects = after.resume("ann", at=after.now + 1)
    assert not any(isinstance(e, Handover) for e in effects)
    [raced] = [m for m in to(effects, conn) if isinstance(m, RaceMsg)]
    assert raced.seq == 1


def test_an_abandon_and_a_leave_are_journaled_and_restored() -> None:
    cl = Clients(HubConfig(resume_window_s=5))
    conns = race(cl, ["ann", "bob", "cat"])
    t = cl.race_start
    cl.send(conns["cat"], Resign(), at=t + 1)
    cl.send(conns["cat"], Leave(), at=t + 2)
    cl.disconnect(conns["bob"], at=t + 3)
    cl.tick(t + 9)  # bob's window is over: abandoned
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]
    assert [a.action for a in actions] == ["resign", "leave", "abandon"]

    after = Clients(HubConfig(resume_window_s=5))
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    after.hub.restore(live, actions, alive_ms=9_000, now=after.now)
    conn, effects = after.resume("ann", at=after.now + 1)
    room = next(m for m in to(effects, conn) if isinstance(m, Room))
    assert [p.name for p in room.players] == ["ann"]  # cat left, bob was abandoned
    progress = next(m for m in to(effects, conn) if isinstance(m, Progress))
    assert {p.name: p.state for p in progress.players} == {
        "ann": "playing",
        "bob": "abandoned",
        "cat": "resigned",
    }


# -- the daily deal: attempts are numbered only when they start (issue 16, item 9) ------------


def test_a_full_server_refuses_a_daily_before_numbering_it() -> None:
    cl = Clients(HubConfig(max_rooms=1))
    bob = cl.hello("bob")
    cl.send(bob, Create())
    ann = cl.hello("ann")
    assert error_codes(cl.send(ann, Daily()), ann) == ["server_full"]
    assert cl.attempts == {}  # nothing numbered: the refusal did not use up the attempt
    cl.send(bob, Leave())
    cl.send(ann, Daily())
    deal = cl.last(ann, DailyDeal)
    assert (deal.attempt, deal.practice) == (1, False)


def test_a_room_taken_while_a_daily_is_numbered_does_not_burn_the_attempt() -> None:
    cl = Clients(HubConfig(max_rooms=1))
    ann, bob = cl.hello("ann"), cl.hello("bob")
    cl.hold_daily = True
    assert error_codes(cl.send(ann, Daily()), ann) == []
    # The last room is reserved for ann's attempt while storage numbers it.
    assert error_codes(cl.send(bob, Create()), bob) == ["server_full"]
    cl.number_dailies()
    deal = cl.last(ann, DailyDeal)
    assert (deal.attempt, deal.practice) == (1, False)
    assert cl.hub.races_running == 1


def test_a_player_who_drops_while_the_daily_is_numbered_resumes_into_it() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    cl.hold_daily = True
    cl.send(ann, Daily())
    cl.disconnect(ann, at=cl.now + 1)
    cl.number_dailies()
    assert cl.attempts[1] == 1
    conn, effects = cl.resume("ann", at=cl.now + 2)
    race_msg = next(m for m in to(effects, conn) if isinstance(m, RaceMsg))
    assert race_msg.state == "playing"  # the counted attempt runs; it was not thrown away
    cl.number_dailies()
    assert error_codes(cl.send(conn, Daily()), conn) == ["already_in_room"]


# -- the daily deal: its code stays secret while an attempt of its day can run (item 8) -------

#: 00:00 UTC on 30 November 2026: the end of 29 November.
MIDNIGHT = dt.datetime(2026, 11, 30, tzinfo=dt.UTC).timestamp()
DAY_29 = dt.date(2026, 11, 29)


def test_an_attempt_begun_at_23_59_ends_without_its_code_after_midnight() -> None:
    cl = Clients()
    cl.wall = MIDNIGHT - 60
    ann = cl.hello("ann")
    cl.send(ann, Daily())
    assert cl.last(ann, DailyDeal).date == "2026-11-29"
    # Its limit comes long before 00:35: no second timer holds the room until then.
    assert [t[2] for t in cl.hub._timers].count("limit") == 1
    cl.wall = MIDNIGHT + 1  # 00:00:01: the day is over, its attempts are not
    cl.send(ann, Resign(), at=cl.now + 61)
    [record] = cl.persisted
    cl.commit(record.race_id)
    assert cl.last(ann, Result).code is None
    assert cl.last(ann, Room).code is None
    cl.wall = code_public_at(DAY_29)  # every attempt of the day has had its whole time
    cl.send(ann, Leave(), at=cl.now + 1)
    assert not code_public(DAY_29, code_public_at(DAY_29) - 1)
    assert code_public(DAY_29, code_public_at(DAY_29))


def test_an_attempt_still_running_when_its_code_goes_public_is_ended() -> None:
    # A longer limit than the publication allows for stands in for a race resumed after a
    # restart, whose down time was not charged to its clock.
    cl = Clients(HubConfig(daily_time_limit=7200))
    cl.wall = start = MIDNIGHT - 60
    ann = cl.hello("ann")
    cl.send(ann, Daily())
    assert [t[2] for t in cl.hub._timers].count("limit") == 2
    public = code_public_at(DAY_29)
    cl.wall = public - 1
    cl.tick(cl.now + (public - 1 - start))
    assert cl.persisted == []  # the 7200 s limit is far off
    cl.wall = public
    cl.tick(cl.now + 1)
    [record] = cl.persisted
    assert [r.outcome for r in record.results] == ["timeout"]
    assert record.results[0].time_ms == int((public - start) * 1000)
    # And a move after it is refused as the race's end, not played.
    assert error_codes(cl.move(ann, WIN_MOVES[0], at=cl.now + 1), ann) == ["finished"]


# -- the daily deal: --daily-min-age (item 10) ------------------------------------------------

HOUR = 3600.0


def test_a_fresh_name_plays_the_daily_as_practice_under_a_minimum_age() -> None:
    cl = Clients(HubConfig(daily_min_age_s=24 * HOUR))
    cl.wall = MIDNIGHT - 30 * HOUR
    old = cl.hello("old")
    cl.wall = MIDNIGHT - 2 * HOUR
    fresh = cl.hello("fresh")  # registered 2 h ago: a name made to try the deal again
    cl.wall = MIDNIGHT - 60
    for conn in (old, fresh):
        cl.send(conn, Daily())
        cl.send(conn, Resign(), at=cl.now + 1)
    deals = {cl.names[c]: cl.last(c, DailyDeal) for c in (old, fresh)}
    assert {n: (d.attempt, d.practice) for n, d in deals.items()} == {
        "old": (1, False),
        "fresh": (1, True),
    }
    results = {r.name: r.practice for record in cl.persisted for r in record.results}
    assert results == {"old": False, "fresh": True}
    # Kept across a restart: the journal carries it.
    lives = {e.players[0][1]: e.practice for e in cl.journal if isinstance(e, LiveRace)}
    assert lives == {"old": False, "fresh": True}


def test_without_a_minimum_age_a_fresh_name_counts() -> None:
    cl = Clients()
    cl.wall = MIDNIGHT - 60
    fresh = cl.hello("fresh")
    cl.send(fresh, Daily())
    assert cl.last(fresh, DailyDeal).practice is False


def test_a_restored_daily_attempt_keeps_its_practice_mark() -> None:
    cl = Clients(HubConfig(daily_min_age_s=24 * HOUR))
    cl.wall = MIDNIGHT - 60
    fresh = cl.hello("fresh")
    cl.send(fresh, Daily())
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    after = Clients(HubConfig(daily_min_age_s=24 * HOUR))
    after.wall = MIDNIGHT - 30
    after.registry, after.registered = cl.registry, cl.registered
    after.tokens = dict(cl.tokens)
    after.hub.restore(live, [], alive_ms=5_000, now=after.now)
    conn, _ = after.resume("fresh", at=after.now + 1)
    after.send(conn, Resign(), at=after.now + 1)
    [record] = after.persisted
    assert [r.practice for r in record.results] == [True]


# -- per-address limits (issue 16) ------------------------------------------------------------


def test_connections_per_address_are_limited_and_an_ipv6_address_counts_by_its_64() -> None:
    hub = Hub(HubConfig(max_connections_per_address=2))
    assert hub.connect(1, 0.0, address="2001:db8:0:1::1") == []
    assert hub.connect(2, 0.0, address="2001:db8:0:1::2") == []
    [close] = hub.connect(3, 0.0, address="2001:db8:0:1:ffff::3")  # the same /64
    assert isinstance(close, Close) and close.code == 1013
    assert hub.connect(4, 0.0, address="2001:db8:0:2::1") == []  # another /64
    assert hub.connect(5, 0.0, address="192.0.2.1") == []
    hub.disconnect(1, 1.0)
    assert hub.connect(6, 1.0, address="2001:db8:0:1::9") == []


def test_registrations_per_address_are_limited_per_window() -> None:
    cl = Clients(HubConfig(max_registrations_per_address=2, registration_window_s=100.0))

    def register(name: str, address: str) -> list[str]:
        conn = cl.connect(address=address)
        effects = cl.send(conn, Hello(PROTOCOL_VERSION, name))
        return [getattr(m, "code", m.TYPE) for m in to(effects, conn)]

    assert register("ann", "192.0.2.1") == ["welcome"]
    assert register("ann", "192.0.2.1") == ["name_taken"]  # not registered: not counted
    assert register("bob", "192.0.2.1") == ["welcome"]
    assert register("cat", "192.0.2.1") == ["too_many_names"]
    assert register("cat", "192.0.2.2") == ["welcome"]
    cl.tick(cl.now + 101)
    assert register("dan", "192.0.2.1") == ["welcome"]


def codes_of(cl: Clients, conn: int) -> list[str]:
    return [m.code for m in cl.messages(conn, Error)]


def test_rooms_per_address_are_limited() -> None:
    cl = Clients(HubConfig(max_rooms_per_address=2))
    codes = []
    for n in range(3):
        conn = cl.connect(address="192.0.2.1")
        cl.send(conn, Hello(PROTOCOL_VERSION, f"p{n}"))
        codes.append(kinds(cl.send(conn, Create()), conn))
    assert codes[:2] == [["room"], ["room"]]
    assert codes_of(cl, conn) == ["too_many_rooms"]
    other = cl.connect(address="192.0.2.2")
    cl.send(other, Hello(PROTOCOL_VERSION, "q"))
    assert kinds(cl.send(other, Create()), other) == ["room"]
    first = conn - 2  # its room closes when it leaves: the address may open another
    cl.send(first, Leave())
    assert kinds(cl.send(conn, Create()), conn) == ["room"]


def test_a_connection_has_at_most_two_queries_being_answered() -> None:
    cl = Clients()
    conn = cl.hello("ann")
    effects = [e for _ in range(3) for e in cl.send(conn, History())]
    assert [e.message for e in effects if isinstance(e, Query)] == [History(), History()]
    assert error_codes(effects, conn) == ["too_many_queries"]
    reply = Error("unavailable", "x")
    assert to(cl.hub.query_answered(conn, reply, cl.now), conn) == [reply]
    assert [e for e in cl.send(conn, History()) if isinstance(e, Query)]


def test_a_name_registered_for_a_connection_gone_meanwhile_is_forgotten() -> None:
    hub = Hub()
    hub.connect(1, 0.0, address="192.0.2.1")
    [auth] = hub.receive(1, encode(Hello(PROTOCOL_VERSION, "ann")), 0.0)
    assert isinstance(auth, Authenticate)
    hub.disconnect(1, 10.0)  # the client gave up waiting
    effects = hub.authenticated(1, player_id=7, name="ann", token="t", now=11.0, new=True)
    assert effects == [Forget(7)]


def test_a_token_hello_that_fails_gives_back_no_registration() -> None:
    hub = Hub(HubConfig(max_registrations_per_address=1))
    hub.connect(2, 0.0, address="192.0.2.1")
    [auth] = hub.receive(2, encode(Hello(PROTOCOL_VERSION, "ann")), 0.0)
    assert isinstance(auth, Authenticate)
    hub.authenticated(2, player_id=1, name="ann", token="a", now=0.0, new=True)
    hub.connect(1, 0.0, address="192.0.2.1")
    hub.receive(1, encode(Hello(PROTOCOL_VERSION, token="t" * 32)), 0.0)
    hub.hello_refused(1, code="unavailable", text="x", now=0.0)  # the database is away
    hub.connect(3, 0.0, address="192.0.2.1")
    # The token hello's failure did not give back ann's registration: the limit holds.
    assert error_codes(hub.receive(3, encode(Hello(PROTOCOL_VERSION, "bob")), 0.0), 3) == [
        "too_many_names"
    ]


# -- finish: the server plays out a game with every card face up (issue 28, item 6) ------


def face_up_after() -> int:
    """How many moves of the winning line leave no card face down."""
    game = Game.from_code(WIN_CODE)
    for n, move in enumerate(WIN_MOVES):
        if not any(game.face_down_count(c) for c in range(1, 8)):
            return n
        game.play(move)
    raise AssertionError("the line never turns every card")


def test_finish_plays_out_the_win_as_the_runner_s_own_moves() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"], ["sue"])
    ann, bob, sue = conns["ann"], conns["bob"], conns["sue"]
    n = face_up_after()
    assert 0 < n < len(WIN_MOVES) - 5
    # With a card face down: refused, nothing played, the seq used up (and answered again).
    cl.play(ann, WIN_MOVES[: n - 1])
    effects = cl.send(ann, Finish(n), at=cl.now + 1)
    refused = Refused(n, "cannot_finish", "some cards are still face down")
    assert to(effects, ann) == [refused] and receivers(effects) == {ann}
    assert to(cl.send(ann, Finish(n)), ann) == [refused]
    cl.seqs["ann"] = n
    cl.play(ann, WIN_MOVES[n - 1 : n])
    # Every card face up: the server plays the rest, all at the clock of the request.
    at = cl.now + 2
    journaled = len(cl.journal)
    effects = cl.send(ann, Finish(n + 2), at=at)
    ms = round((at - cl.race_start) * 1000)
    [mine, progress] = to(effects, ann)
    won = Game.from_code(WIN_CODE)
    for move in WIN_MOVES:
        won.play(move)
    assert isinstance(mine, RaceMsg)
    assert (mine.state, mine.seq, mine.elapsed_ms, mine.view) == ("won", n + 2, ms, won.view())
    assert isinstance(progress, Progress) and progress.players[0].state == "won"
    assert progress.players[0].time_ms == ms
    # (after the progress held for ann's last move, released first)
    assert to(effects, sue)[-1] == progress and to(effects, bob)[-1] == progress
    played = [e for e in cl.journal[journaled:] if isinstance(e, LiveAction)]
    assert all((a.seq, a.at_ms) == (n + 2, ms) for a in played)
    assert len(played) == mine.moves - n
    # A resend gets the same answer; a new request finds the race over.
    assert to(cl.send(ann, Finish(n + 2)), ann) == [mine]
    assert error_codes(cl.send(ann, Finish(n + 3)), ann) == ["finished"]
    # Stored as the runner's accepted moves: the replay plays them to the win.
    [record] = persists(cl.send(bob, Resign(), at=cl.now + 1))
    ann_result = next(r for r in record.results if r.name == "ann")
    assert (ann_result.outcome, ann_result.rank, ann_result.time_ms) == ("won", 1, ms)
    replay = Game.from_code(WIN_CODE)
    for _, move in ann_result.journal:
        replay.play(move)
    assert replay.is_won() and ann_result.moves == mine.moves
    assert ann_result.hinted is False


def test_finish_is_checked_as_a_move_is() -> None:
    cl = Clients()
    conns = lobby(cl, ["ann"], ["sue"])
    ann, sue = conns["ann"], conns["sue"]
    assert error_codes(cl.send(ann, Finish(1)), ann) == ["no_race"]
    start(cl, ann)
    assert error_codes(cl.send(sue, Finish(1)), sue) == ["not_player"]
    outsider = cl.hello("zed")
    assert error_codes(cl.send(outsider, Finish(1)), outsider) == ["not_in_room"]
    cl.play(ann, WIN_MOVES[:3])
    [error] = to(cl.send(ann, Finish(1)), ann)  # a seq answered with a move: its answer
    assert isinstance(error, Accepted) and error.seq == 1
    cl.send(ann, Resign(), at=cl.now + 1)
    [error] = to(cl.send(ann, Finish(9)), ann)
    assert (error.code, error.seq) == ("finished", 9)


def test_a_finished_race_rebuilt_after_a_restart_keeps_the_finish() -> None:
    """The finish's moves are journaled with its seq: a rebuilt race has them all, and a
    resume says the runner won (``race.seq`` the finish's)."""
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann = conns["ann"]
    n = face_up_after()
    cl.play(ann, WIN_MOVES[:n])
    mine = to(cl.send(ann, Finish(n + 1), at=cl.now + 1), ann)[0]
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]
    after = Clients()
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    after.hub.restore(live, actions, alive_ms=60_000, now=after.now)
    conn, effects = after.resume("ann", at=after.now + 1)
    [resumed] = [m for m in to(effects, conn) if isinstance(m, RaceMsg)]
    assert (resumed.state, resumed.seq, resumed.moves, resumed.view) == (
        "won",
        n + 1,
        mine.moves,
        mine.view,
    )
