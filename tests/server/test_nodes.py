"""Two hubs as two nodes of a cluster, wired by an in-memory relay, on one fake clock.

Every input goes in as a typed event (``Hub.handle``: ``server.rooms.events``, and what
another node says, ``server.cluster.bus``). The relay here does what ``server.cluster.relay`` does
over Redis, with the same messages: each
hub's ``Handover``, ``Forward``, ``Detach``, ``Release`` and a guest's ``Send`` and
``Close`` become ``server.cluster.bus`` messages (``bus.outgoing``), sent over a
``bus.Transport``: ``OverBytes``, encoded to bytes and decoded again (the real codec, as
over Redis), or ``InProcess``, the objects themselves; and handed to the other hub; the
directory (``Locate``, the seat a hello finds) is read off the hubs. So the session/room
seam (server/rooms/nodes.py) is tested sans I/O: a player on one node races in a room of
the other, resumes through either, and goes home when they leave.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from protocol import GameCode
from protocol.messages import (
    CLOSE_REPLACED,
    Accepted,
    Create,
    Error,
    Hello,
    Join,
    Leave,
    Left,
    MoveMsg,
    Progress,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    Route,
    Start,
    Watch,
    Welcome,
    decode_server,
    encode,
)
from server.cluster.cluster import bus
from server.domain.daily import next_daily_ms
from server.domain.records import LiveAction, LiveRace, Standing
from server.domain.streaks import Streak
from server.rooms import Hub, HubConfig
from server.rooms import events as ev
from server.rooms.effects import (
    Authenticate,
    Close,
    Detach,
    Effect,
    Forward,
    Handover,
    Journal,
    Locate,
    PasswordFailed,
    Persist,
    Release,
    Send,
)

DATA = Path(__file__).resolve().parent.parent / "data"
WINNING = (DATA / "winning-game.txt").read_text().split()
#: Every hub here runs its wall clock at 1 000 000 s: the welcome's countdown (issue 29).
WALL_NEXT_DAILY_MS = next_daily_ms(1_000_000.0)
WIN_CODE, WIN_MOVES = WINNING[0], WINNING[1:]


class Cluster:
    """Hubs by node id; clients by (node, conn); a fake clock; storage's registry."""

    def __init__(self, *nodes: str, password: str | None = None, codec: bool = True) -> None:
        self.now = 100.0
        codes = itertools.count()
        self.hubs = {
            n: Hub(
                HubConfig(countdown_s=0.0, progress_hold_s=0.0, password=password),
                wall_clock=lambda: 1_000_000.0,
                random_deal=lambda: 1,
                new_salt=lambda: "5a17" * 8,
                new_room_code=lambda: f"R{next(codes):04d}",
                node=n,
            )
            for n in nodes
        }
        self.inbox: dict[tuple[str, int], list[Any]] = defaultdict(list)
        self.closed: dict[tuple[str, int], int] = {}
        self.ids = itertools.count(1)
        self.conns = itertools.count(1)
        self.registry: dict[str, tuple[int, str]] = {}
        #: Where each player sits (storage and the directory's part): room code by id.
        self.persisted: list[Persist] = []
        #: What the hubs journaled (storage's part): a takeover rebuilds a race from it.
        self.journal: list[LiveRace | LiveAction] = []
        #: Rooms the directory places on a node that no longer (or not yet) holds them.
        self.stale: dict[str, str] = {}
        #: The same, as one node sees it: (asking node, code) -> the node it is told.
        self.stale_for: dict[tuple[str, str], str] = {}
        #: Messages relayed between the hubs.
        self.relayed = 0
        #: Each player's rating and streak as storage reads them at hello, by name.
        self.standings: dict[str, Standing] = {}
        #: Both transports of the bus: bytes through the real codec (as over Redis), or the
        #: objects themselves, in process.
        self.transport: bus.Transport = (
            bus.OverBytes(lambda to, data: self.receive(to, bus.decode(data)))
            if codec
            else bus.InProcess({n: functools.partial(self.receive, n) for n in nodes})
        )

    def owner(self, code: str) -> str | None:
        if code in self.stale:  # a directory that has not caught up (a takeover under way)
            return self.stale[code]
        return next((n for n, h in self.hubs.items() if code in h.seats()), None)

    def seat(self, player_id: int) -> tuple[str, str] | None:
        """The node and the room where the player has a seat (the directory's answer)."""
        for n, h in self.hubs.items():
            for code, ids in h.seats().items():
                if player_id in ids:
                    return n, code
        return None

    def relay(self, to: str, message: bus.BusMessage) -> None:
        """One message to node ``to``, over the transport (through the real codec both
        ways, unless in process)."""
        self.relayed += 1
        assert bus.decode(bus.encode(message)) == message
        self.transport.send(to, message)

    def receive(self, to: str, got: bus.BusMessage) -> None:
        """A message node ``to`` received: its hub's event, or frames for its clients."""
        if isinstance(got, bus.Deliver):  # frames for the gateway's clients
            for conn in got.conns:
                self.inbox[(to, conn)].append(decode_server(got.data))
            return
        self.apply(to, self.hubs[to].handle(got, self.now))

    def apply(self, node: str, effects: list[Effect]) -> None:
        hub = self.hubs[node]
        for e in effects:
            if isinstance(e, Send):
                if e.conn < 0:  # a guest's: to its gateway
                    route = hub.route(e.conn)
                    assert route is not None
                    progress = isinstance(e.message, Progress)
                    self.relay(route[0], bus.Deliver((route[1],), encode(e.message), progress))
                else:
                    self.inbox[(node, e.conn)].append(e.message)
            elif isinstance(e, Close):
                if e.conn < 0:
                    route = hub.route(e.conn)
                    assert route is not None
                    self.relay(route[0], bus.Shut(route[1], e.code, e.reason))
                else:
                    self.closed[(node, e.conn)] = e.code
            elif isinstance(e, Authenticate):
                if e.name is not None:
                    pid = next(self.ids)
                    token = f"tok-{e.name}"
                    self.registry[token] = (pid, e.name)
                    name = e.name
                else:
                    assert e.token is not None
                    pid, name = self.registry[e.token]
                    token = e.token
                where = self.seat(pid)
                said = ev.Authenticated(
                    e.conn,
                    player_id=pid,
                    name=name,
                    token=token,
                    new=e.name is not None,
                    away=where[0] if where else None,
                    away_room=where[1] if where else None,
                    standing=self.standings.get(name),
                )
                self.apply(node, hub.handle(said, self.now))
            elif isinstance(e, Locate):
                owner = self.stale_for.get((node, e.code)) or self.owner(e.code)
                self.apply(node, hub.handle(ev.Located(e.conn, e.code, owner, e.frame), self.now))
            elif isinstance(e, (Handover, Forward, Detach, Release)):
                found = bus.outgoing(node, e)
                assert found is not None
                self.relay(*found)
            elif isinstance(e, PasswordFailed):  # told to every other node
                for other in list(self.hubs):
                    if other != node:
                        self.relay(other, bus.PasswordFail(e.key))
            elif isinstance(e, Journal):
                self.journal.append(e.entry)
            elif isinstance(e, Persist):
                self.persisted.append(e)
                self.apply(node, hub.committed(e.record.race_id, self.now))

    def connect(self, node: str, asked: str = "") -> tuple[str, int]:
        conn = next(self.conns)
        hub = self.hubs[node]
        self.apply(node, hub.handle(ev.Connected(conn, "10.0.0.1", asked), self.now))
        return (node, conn)

    def send(self, who: tuple[str, int], message: Any) -> None:
        node, conn = who
        self.now += 0.1  # a person's pace: the flood bucket never empties
        self.apply(node, self.hubs[node].handle(ev.Received(conn, encode(message)), self.now))

    def disconnect(self, who: tuple[str, int]) -> None:
        node, conn = who
        self.apply(node, self.hubs[node].handle(ev.Disconnected(conn), self.now))

    def hello(
        self,
        node: str,
        name: str | None = None,
        token: str | None = None,
        *,
        follow: bool = False,
        asked: str = "",
    ) -> Any:
        who = self.connect(node, asked)
        self.send(who, Hello(1, name=name, token=token, follow=follow))
        assert isinstance(self.inbox[who][0], Welcome), self.inbox[who]
        return who

    def last(self, who: tuple[str, int], kind: type) -> Any:
        found = [m for m in self.inbox[who] if isinstance(m, kind)]
        assert found, f"no {kind.__name__} in {self.inbox[who]}"
        return found[-1]


@pytest.mark.parametrize("codec", [True, False], ids=["over-bytes", "in-process"])
def test_a_player_on_another_node_races_in_the_room_and_goes_home_after(codec: bool) -> None:
    cl = Cluster("A", "B", codec=codec)
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    assert cl.owner(code) == "A"

    cl.send(bob, Join(code))
    room = cl.last(bob, Room)
    assert room.room == code and [p.name for p in room.players] == ["ann", "bob"]
    assert cl.hubs["A"].connections == 2  # ann, and bob's guest
    cl.send(bob, Ready(True))
    cl.send(ann, Start())
    cl.apply("A", cl.hubs["A"].tick(cl.now))
    assert isinstance(cl.last(bob, Race), Race)

    for seq, move in enumerate(WIN_MOVES, start=1):
        cl.send(bob, MoveMsg(seq, move))
        reply = cl.last(bob, Accepted)
        assert reply.seq == seq
    assert reply.state == "won"
    cl.send(ann, Resign())
    result = cl.last(bob, Result)
    assert [(r.name, r.outcome) for r in result.ranks] == [("bob", "won"), ("ann", "resigned")]
    assert len(cl.persisted) == 1  # one race, one owner, one record

    # Leaving, bob goes home: his next room is made on his own node.
    cl.send(bob, Leave())
    assert isinstance(cl.inbox[bob][-1], Left)
    assert cl.hubs["A"].connections == 1
    cl.send(bob, Create())
    assert cl.owner(cl.last(bob, Room).room) == "B"


def _joined_through_b(cl: Cluster) -> tuple[tuple[str, int], tuple[str, int], str]:
    """ann's room on A; bob, whose client follows routes, joins it through B."""
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob", follow=True)
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(bob, Join(code))
    return ann, bob, code


def test_a_following_client_is_routed_to_its_rooms_node_and_resumes_there() -> None:
    cl = Cluster("A", "B")
    ann, bob, code = _joined_through_b(cl)
    # The join's answer first, then the route: bob's client has its room before it moves.
    kinds = [type(m).__name__ for m in cl.inbox[bob]]
    assert kinds[-2:] == ["Room", "Route"], kinds
    assert cl.inbox[bob][-1] == Route("A", code)

    # The client closes its connection to B and opens one to A (``?node=A``).
    cl.disconnect(bob)
    bob2 = cl.hello("A", token="tok-bob", follow=True, asked="A")
    assert cl.inbox[bob2][0] == Welcome(
        1, "bob", "tok-bob", 60, code, next_daily_ms=WALL_NEXT_DAILY_MS
    )
    assert cl.last(bob2, Room).you == "player"
    assert not any(isinstance(m, Route) for m in cl.inbox[bob2])  # here already
    assert cl.hubs["A"].connections == 2  # ann and bob, both A's own

    cl.send(bob2, Ready(True))
    cl.send(ann, Start())
    cl.apply("A", cl.hubs["A"].tick(cl.now))
    cl.send(bob2, MoveMsg(1, WIN_MOVES[0]))
    assert cl.last(bob2, Accepted).seq == 1


def test_the_route_may_come_before_the_old_session_is_seen_gone() -> None:
    """The client's new hello on the owner can arrive before its gateway's detach: the
    guest is replaced (4001 to the old socket, closed already), and nothing is lost."""
    cl = Cluster("A", "B")
    ann, bob = _racing_across(cl, follow=True)
    assert any(isinstance(m, Route) for m in cl.inbox[bob])
    bob2 = cl.hello("A", token="tok-bob", follow=True, asked="A")
    assert cl.last(bob2, Race).seq == 1
    cl.disconnect(bob)  # the gateway's detach comes late: it must not touch bob2
    cl.send(bob2, MoveMsg(2, WIN_MOVES[1]))
    assert cl.last(bob2, Accepted).seq == 2
    assert [(p.name, p.connected) for p in cl.last(ann, Room).players] == [
        ("ann", True),
        ("bob", True),
    ]


def test_what_the_client_sent_just_before_it_moved_is_still_its_players() -> None:
    """bob says ready on B right after his join's answer, and follows the route at once:
    his hello on A replaces his guest there before B's relay brings the ready. That late
    frame is bob's (his connection on A takes it), not a stranger's to bounce (the load
    bench found such readies lost: rooms that never started)."""
    cl = Cluster("A", "B")
    ann, bob, _ = _joined_through_b(cl)
    assert isinstance(cl.inbox[bob][-1], Route)
    bob2 = cl.hello("A", token="tok-bob", follow=True, asked="A")  # the new socket first
    late = encode(Ready(True))  # then the frame B relays, sent before the move
    cl.apply("A", cl.hubs["A"].guest_frame(("B", bob[1]), late, cl.now))
    assert [(p.name, p.ready) for p in cl.last(ann, Room).players] == [
        ("ann", True),
        ("bob", True),
    ]
    assert cl.last(bob2, Room).players[1].ready
    # Later than that, a frame on the old route is not bob's any more: sent back home.
    cl.now += 11
    effects = cl.hubs["A"].guest_frame(("B", bob[1]), encode(Ready(False)), cl.now)
    assert [type(e).__name__ for e in effects] == ["Release"]


def test_a_balancer_that_ignores_the_route_is_not_asked_again_and_the_relay_serves() -> None:
    cl = Cluster("A", "B")
    ann = cl.hello("A", "ann")
    # bob's client asked for A (a route it followed) but the balancer brought it to B.
    bob = cl.hello("B", "bob", follow=True, asked="A")
    cl.send(ann, Create(code=WIN_CODE))
    cl.send(bob, Join(cl.last(ann, Room).room))
    assert cl.last(bob, Room).you == "player"
    assert not any(isinstance(m, Route) for m in cl.inbox[bob])


def test_a_client_that_does_not_follow_is_never_routed() -> None:
    cl = Cluster("A", "B")
    _ann, bob = _racing_across(cl)
    assert not any(isinstance(m, Route) for m in cl.inbox[bob])
    bob2 = cl.hello("B", token="tok-bob")  # a resume through B: relayed, as before
    assert cl.last(bob2, Race).seq == 1
    assert not any(isinstance(m, Route) for m in cl.inbox[bob2])


def test_a_resume_through_another_node_routes_a_following_client() -> None:
    cl = Cluster("A", "B")
    _ann, bob = _racing_across(cl)
    cl.disconnect(bob)
    bob2 = cl.hello("B", token="tok-bob", follow=True)
    kinds = [type(m).__name__ for m in cl.inbox[bob2]]
    assert kinds[0] == "Welcome" and kinds[-1] == "Route", kinds
    assert kinds.index("Race") < kinds.index("Route")


def test_nodes_that_disagree_on_where_a_room_is_answer_no_such_room_and_route_nobody() -> None:
    """The directory names B for a room B does not hold (its lease moved, the room is not
    rebuilt yet): A hands the join to B, whose guest is not looked up again; the join is
    refused and the session goes home. No route, no hand-over back and forth."""
    cl = Cluster("A", "B")
    bob = cl.hello("A", "bob", follow=True)
    cl.stale["GHOST"] = "B"
    cl.send(bob, Join("GHOST"))
    assert isinstance(cl.inbox[bob][-1], Error) and cl.inbox[bob][-1].code == "no_such_room"
    assert not any(isinstance(m, Route) for m in cl.inbox[bob])
    assert cl.hubs["B"].connections == 0 and cl.hubs["A"].peers() == set()
    # bob is home on A: what he asks next is served there.
    cl.send(bob, Create())
    assert cl.owner(cl.last(bob, Room).room) == "A"


def test_two_nodes_each_believing_the_other_holds_a_room_bounce_nothing() -> None:
    """A asks the directory and is told B; B, asked for the same room, is told A (a lease
    moving during a takeover, seen at two moments). Each hands its join to the other once,
    the other serves it as a guest's and answers no_such_room without asking again, and
    both sessions are home: a bounded number of relay messages, no route, no guest left."""
    cl = Cluster("A", "B")
    ann = cl.hello("A", "ann", follow=True)
    bob = cl.hello("B", "bob", follow=True)
    cl.stale_for[("A", "SPLIT")] = "B"
    cl.stale_for[("B", "SPLIT")] = "A"
    cl.send(ann, Join("SPLIT"))
    cl.send(bob, Watch("SPLIT"))
    for who in (ann, bob):
        last = cl.inbox[who][-1]
        assert isinstance(last, Error) and last.code == "no_such_room", cl.inbox[who]
        assert not any(isinstance(m, Route) for m in cl.inbox[who])
    assert cl.relayed <= 8  # per join: the hand-over, the answer, the release (and a detach)
    assert cl.hubs["A"].connections == 1 and cl.hubs["B"].connections == 1  # own sockets
    assert cl.hubs["A"].peers() == set() and cl.hubs["B"].peers() == set()
    # Both are home: a room each makes is made on its own node.
    cl.send(ann, Create())
    cl.send(bob, Create())
    assert cl.owner(cl.last(ann, Room).room) == "A"
    assert cl.owner(cl.last(bob, Room).room) == "B"


def test_a_player_moving_to_a_node_that_dies_on_the_way_resumes_where_the_race_went() -> None:
    """bob is routed from B to A, his room's node; he closes his socket on B, and A dies
    before his hello reaches it. The balancer sends ``?node=A`` to a live node (B, A's
    backup), which took the race over from the journal: bob resumes there with every
    move he had accepted, is not routed again (he asked for A, and the room is here), and
    races on; ann resumes on B too. One result, every move once."""
    cl = Cluster("A", "B")
    _ann, bob = _racing_across(cl, follow=True)
    assert Route("A", cl.last(bob, Room).room) in cl.inbox[bob]
    live = next(e for e in cl.journal if isinstance(e, LiveRace))
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]
    assert len(actions) == 1

    cl.disconnect(bob)  # the client follows: its socket on B goes first
    del cl.hubs["A"]  # A dies before the new socket reaches it
    cl.apply("B", cl.hubs["B"].handle(ev.NodeGone("A"), cl.now))
    cl.now += 4  # B's sweep takes the race over
    cl.apply("B", cl.hubs["B"].handle(ev.Restore(live, actions, alive_ms=1_000), cl.now))

    bob2 = cl.hello("B", token="tok-bob", follow=True, asked="A")
    assert cl.inbox[bob2][0].room == live.room
    assert cl.last(bob2, Race).seq == 1  # his accepted move is there, once
    assert not any(isinstance(m, Route) for m in cl.inbox[bob2])
    ann2 = cl.hello("B", token="tok-ann", follow=True)
    assert isinstance(cl.last(ann2, Race), Race)
    assert not any(isinstance(m, Route) for m in cl.inbox[ann2])
    for seq, move in enumerate(WIN_MOVES[1:], start=2):
        cl.send(bob2, MoveMsg(seq, move))
        assert cl.last(bob2, Accepted).seq == seq
    cl.send(ann2, Resign())
    result = cl.last(bob2, Result)
    assert [(r.name, r.outcome) for r in result.ranks] == [("bob", "won"), ("ann", "resigned")]
    assert len(cl.persisted) == 1
    (persisted,) = cl.persisted
    bobs = next(r for r in persisted.record.results if r.name == "bob")
    assert [move for _, move in bobs.journal] == WIN_MOVES


def test_a_guest_whose_race_is_over_goes_on_from_its_own_node() -> None:
    """Issue 28: a player whose race is over in a room on another node (a guest there)
    goes straight on to a room on a third node, or to a new room of their own: the owner
    leaves the room for them (``left``) and hands the request back to their own node,
    which serves it as after a ``leave``."""
    cl = Cluster("A", "B", "C")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cy = cl.hello("C", "cy")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(bob, Join(code))
    cl.send(bob, Ready(True))
    cl.send(ann, Start())
    cl.apply("A", cl.hubs["A"].tick(cl.now))
    cl.send(ann, Resign())
    cl.send(bob, Resign())
    cl.last(bob, Result)
    cl.send(cy, Create())
    elsewhere = cl.last(cy, Room).room
    assert cl.owner(elsewhere) == "C"

    cl.send(bob, Join(elsewhere))
    left = [m for m in cl.inbox[bob] if isinstance(m, Left)]
    assert left == [Left(code)]
    room = cl.last(bob, Room)
    assert room.room == elsewhere and [p.name for p in room.players] == ["cy", "bob"]
    assert [p.name for p in cl.last(ann, Room).players] == ["ann"]
    assert cl.hubs["A"].connections == 1  # bob's guest there is gone
    # A spectator (whose race is always over) on another node creates a room of their
    # own: it is made on their own node, as after a leave.
    dan = cl.hello("B", "dan")
    cl.send(dan, Watch(code))
    assert cl.last(dan, Room).you == "spectator" and cl.hubs["A"].connections == 2
    cl.send(dan, Create())
    assert [m for m in cl.inbox[dan] if isinstance(m, Left)] == [Left(code)]
    assert cl.owner(cl.last(dan, Room).room) == "B"
    assert cl.hubs["A"].connections == 1


def test_a_room_nowhere_is_no_such_room_and_a_spectator_watches_from_another_node() -> None:
    cl = Cluster("A", "B", "C")
    ann = cl.hello("A", "ann")
    cy = cl.hello("C", "cy")
    cl.send(cy, Join("NOPE1"))
    assert isinstance(cl.inbox[cy][-1], Error) and cl.inbox[cy][-1].code == "no_such_room"
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(cy, Watch(code))
    assert cl.last(cy, Room).you == "spectator"
    assert cl.last(ann, Room).spectators == 1


def test_a_resume_through_another_node_reaches_the_race_and_replaces_the_old_session() -> None:
    cl = Cluster("A", "B", "C")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(bob, Join(code))
    cl.send(bob, Ready(True))
    cl.send(ann, Start())
    cl.apply("A", cl.hubs["A"].tick(cl.now))
    cl.send(bob, MoveMsg(1, WIN_MOVES[0]))

    # bob says hello again on C while his session on B still stands.
    bob2 = cl.hello("C", token="tok-bob")
    assert cl.closed.get(bob) == CLOSE_REPLACED
    race = cl.last(bob2, Race)
    assert race.seq == 1  # the owner's race, where he left it
    cl.send(bob2, MoveMsg(2, WIN_MOVES[1]))
    assert cl.last(bob2, Accepted).seq == 2
    cl.disconnect(bob)  # the old socket goes: nothing changes for the new one
    cl.send(bob2, MoveMsg(3, WIN_MOVES[2]))
    assert cl.last(bob2, Accepted).seq == 3

    # A dropped guest is a disconnected player on the owner, as on a single node.
    cl.disconnect(bob2)
    room = cl.last(ann, Room)
    assert [(p.name, p.connected) for p in room.players] == [("ann", True), ("bob", False)]


def test_a_lost_room_closes_its_members_for_a_resume_elsewhere() -> None:
    cl = Cluster("A", "B")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(bob, Join(code))
    cl.apply("A", cl.hubs["A"].drop_room(code, cl.now))
    assert cl.closed[ann] == 1012 and cl.closed[bob] == 1012
    assert cl.hubs["A"].rooms == 0 and cl.hubs["A"].connections == 1  # ann's own socket
    # bob is forgotten on B: his next hello asks storage and the directory again.
    bob2 = cl.hello("B", token="tok-bob")
    assert cl.inbox[bob2][-1] == Welcome(
        1, "bob", "tok-bob", 60, None, next_daily_ms=WALL_NEXT_DAILY_MS
    )


def _racing_across(cl: Cluster, *, follow: bool = False) -> tuple[tuple[str, int], tuple[str, int]]:
    """ann on A hosts a race; bob races in it from B (away there, a guest on A)."""
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob", follow=follow)
    cl.send(ann, Create(code=WIN_CODE))
    cl.send(bob, Join(cl.last(ann, Room).room))
    cl.send(bob, Ready(True))
    cl.send(ann, Start())
    cl.apply("A", cl.hubs["A"].tick(cl.now))
    cl.send(bob, MoveMsg(1, WIN_MOVES[0]))
    return ann, bob


def test_a_gateway_that_missed_relay_messages_sends_its_away_sessions_to_resume() -> None:
    cl = Cluster("A", "B")
    ann, bob = _racing_across(cl)
    cl.apply("B", cl.hubs["B"].relay_gap(cl.now))
    assert cl.closed[bob] == 1012 and ann not in cl.closed
    # The owner was told: bob is disconnected there, his resume window runs.
    assert [(p.name, p.connected) for p in cl.last(ann, Room).players] == [
        ("ann", True),
        ("bob", False),
    ]
    bob2 = cl.hello("B", token="tok-bob")
    assert cl.last(bob2, Race).seq == 1  # the race as it stands, from its owner


def test_an_owner_that_missed_relay_messages_sends_its_guests_to_resume() -> None:
    cl = Cluster("A", "B")
    ann, bob = _racing_across(cl)
    cl.apply("A", cl.hubs["A"].relay_gap(cl.now))
    assert cl.closed[bob] == 1012 and ann not in cl.closed  # ann is A's own: no relay
    assert cl.hubs["A"].connections == 1
    assert not cl.last(ann, Room).players[1].connected
    bob2 = cl.hello("B", token="tok-bob")
    cl.send(bob2, MoveMsg(2, WIN_MOVES[1]))
    assert cl.last(bob2, Accepted).seq == 2


def test_a_lobby_whose_node_died_is_adopted_with_its_members_settings_and_deal() -> None:
    cl = Cluster("A", "B")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cy = cl.hello("B", "cy")
    cl.send(ann, Create(max_players=3, undo=False, time_limit=600))
    before = cl.last(ann, Room)
    cl.send(bob, Join(before.room))
    cl.send(bob, Ready(True))
    cl.send(cy, Watch(before.room))
    snapshots = cl.hubs["A"].lobbies()
    assert list(snapshots) == [before.room]

    del cl.hubs["A"]  # A dies; B adopts the lobby from the snapshot A kept
    cl.apply("B", cl.hubs["B"].node_gone("A", cl.now))
    assert cl.closed[bob] == 1012 and cl.closed[cy] == 1012
    cl.apply("B", cl.hubs["B"].adopt_lobby(before.room, snapshots[before.room], cl.now))
    assert cl.hubs["B"].has_room(before.room)

    ann2 = cl.hello("B", token="tok-ann")
    assert cl.inbox[ann2][0].room == before.room  # the welcome names it
    room = cl.last(ann2, Room)
    assert (room.host, room.max_players, room.undo, room.time_limit) == ("ann", 3, False, 600)
    assert room.commitment == before.commitment  # the same secret deal
    assert [(p.name, p.ready, p.connected) for p in room.players] == [
        ("ann", True, True),
        ("bob", True, False),
    ]
    assert room.spectators == 1
    bob2 = cl.hello("B", token="tok-bob")
    cy2 = cl.hello("B", token="tok-cy")
    assert cl.last(cy2, Room).you == "spectator"
    cl.send(ann2, Start())
    cl.apply("B", cl.hubs["B"].tick(cl.now))
    assert isinstance(cl.last(bob2, Race), Race)


def test_a_lobby_adopted_before_its_node_is_seen_gone_keeps_the_members_relayed_there() -> None:
    cl = Cluster("A", "B")
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(bob, Join(code))
    snapshot = cl.hubs["A"].lobbies()[code]
    del cl.hubs["A"]  # A dies; B's sweep adopts its lobby before B's peer check sees it
    cl.apply("B", cl.hubs["B"].adopt_lobby(code, snapshot, cl.now, owner="A"))
    assert cl.closed[bob] == 1012  # bob's session, relayed to A, resumes here
    bob2 = cl.hello("B", token="tok-bob")
    room = cl.last(bob2, Room)
    assert (room.room, [p.name for p in room.players]) == (code, ["ann", "bob"])


def test_a_finished_room_is_adopted_as_its_rematch_would_make_it() -> None:
    cl = Cluster("A", "B")
    ann = cl.hello("A", "ann")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(ann, Start())
    cl.apply("A", cl.hubs["A"].tick(cl.now))
    assert cl.hubs["A"].lobbies() == {}  # a race is journaled: the journal hands it over
    cl.send(ann, Resign())
    assert cl.last(ann, Room).state == "finished"
    snapshot = cl.hubs["A"].lobbies()[code]
    assert snapshot["deal"] is None and snapshot["fixed"] is None  # the old deal is spent

    del cl.hubs["A"]
    cl.apply("B", cl.hubs["B"].adopt_lobby(code, snapshot, cl.now))
    ann2 = cl.hello("B", token="tok-ann")
    room = cl.last(ann2, Room)
    assert (room.state, room.code) == ("lobby", None)  # a new deal, drawn in secret
    assert room.commitment is not None


def test_wrong_passwords_on_one_node_delay_the_address_on_every_node() -> None:
    cl = Cluster("A", "B", password="hunter2")
    for _ in range(4):  # three are free; the fourth costs the address 2 s
        who = cl.connect("A")
        cl.send(who, Hello(1, name="mallory", password="guess"))
    cl.apply("A", cl.hubs["A"].tick(cl.now + 5))
    assert [e.code for e in cl.inbox[who] if isinstance(e, Error)] == ["password"]

    # The same address on the other node: its check waits for the address's turn there.
    who = cl.connect("B")
    cl.send(who, Hello(1, name="mallory", password="hunter2"))
    assert cl.inbox[who] == []
    turn = cl.hubs["B"].next_deadline()
    assert turn is not None and turn >= cl.now + 1.5
    cl.apply("B", cl.hubs["B"].tick(turn))
    assert isinstance(cl.inbox[who][0], Welcome)


def test_alone_a_hub_has_no_node_and_looks_nothing_up() -> None:
    hub = Hub(HubConfig(), new_room_code=lambda: "ZEBRA")
    hub.connect(1, 0.0)
    hub.receive(1, encode(Hello(1, name="ann")), 0.0)
    effects = hub.authenticated(1, player_id=1, name="ann", token="t", now=0.0)
    assert any(isinstance(e, Send) for e in effects)
    effects = hub.receive(1, encode(Join("NOPE1")), 0.0)
    assert [e.message.code for e in effects if isinstance(e, Send)] == ["no_such_room"]
    assert GameCode.parse(WIN_CODE)


def test_a_forgotten_session_s_resume_window_does_not_expire_the_player_taken_over_since() -> None:
    """The compose drill (round 2 with the old HAProxy config): a player that a gateway
    closed and forgot when the owner died (``owner_gone``) left behind a resume window
    for the forgotten ``_Player``; when it ran out, 60 s later, it removed whatever player
    of that id the node held by then, here the member of the race it took over. The
    room kept its seat, but a hello no longer found it: a resume through another node
    got a welcome naming the room and nothing more (the guest was sent home), one
    through this node a welcome with no room."""
    cl = Cluster("A", "B", "C")
    _, bob = _racing_across(cl)
    bob_id = cl.registry["tok-bob"][0]
    live = next(e for e in cl.journal if isinstance(e, LiveRace))
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]

    del cl.hubs["A"]  # A dies: B, bob's gateway, closes his session and forgets him
    cl.apply("B", cl.hubs["B"].node_gone("A", cl.now))
    assert cl.closed[bob] == 1012
    cl.disconnect(bob)  # his socket goes: the forgotten player's window starts
    forgotten_at = cl.now

    cl.now += 2  # B takes the race over; bob resumes on B, ann through C
    cl.apply("B", cl.hubs["B"].restore(live, actions, alive_ms=2_000, now=cl.now))
    bob2 = cl.hello("B", token="tok-bob")
    assert cl.last(bob2, Race).seq == 1
    ann2 = cl.hello("C", token="tok-ann")
    assert isinstance(cl.last(ann2, Race), Race)

    cl.now = forgotten_at + 60.5  # the forgotten session's window is over
    cl.apply("B", cl.hubs["B"].tick(cl.now))
    assert cl.hubs["B"].seated(bob_id)
    cl.send(bob2, MoveMsg(2, WIN_MOVES[1]))
    assert cl.last(bob2, Accepted).seq == 2

    # bob drops and resumes through C, then through B: the race, both times.
    cl.disconnect(bob2)
    bob3 = cl.hello("C", token="tok-bob")
    assert cl.inbox[bob3][0].room == live.room
    assert cl.last(bob3, Race).seq == 2
    cl.disconnect(bob3)
    bob4 = cl.hello("B", token="tok-bob")
    assert cl.last(bob4, Race).seq == 2


def test_an_adopted_lobby_s_member_remembered_from_an_earlier_session_gets_a_fresh_window() -> None:
    """As a restored race's runners do: a member the adopting node remembers in no room
    (said hello there, left) is seated with a fresh resume window, not with what is left
    of that old session's, which would drop them from the lobby before they came back."""
    cl = Cluster("A", "B", "C")
    bob = cl.hello("B", "bob")
    cl.disconnect(bob)  # B remembers bob in no room; his window there runs to +60 s
    left_at = cl.now
    ann = cl.hello("A", "ann")
    cl.send(ann, Create())
    code = cl.last(ann, Room).room
    bob2 = cl.hello("C", token="tok-bob")
    cl.send(bob2, Join(code))
    assert [p.name for p in cl.last(ann, Room).players] == ["ann", "bob"]

    cl.now = left_at + 50  # A dies; B adopts the lobby
    snapshot = cl.hubs["A"].lobbies()[code]
    del cl.hubs["A"]
    cl.apply("C", cl.hubs["C"].node_gone("A", cl.now))
    cl.apply("B", cl.hubs["B"].adopt_lobby(code, snapshot, cl.now))
    cl.now = left_at + 61  # the old window is over; the new one is not
    cl.apply("B", cl.hubs["B"].tick(cl.now))
    bob3 = cl.hello("B", token="tok-bob")
    assert cl.inbox[bob3][0].room == code
    assert [p.name for p in cl.last(bob3, Room).players] == ["ann", "bob"]


@pytest.mark.parametrize("codec", [True, False], ids=["over-bytes", "in-process"])
def test_a_relayed_player_shows_their_rating_in_the_room_on_its_node(codec: bool) -> None:
    """bob's session stays on B (his client does not follow routes), his room is on A: the
    handover carries what B's hello read (rating, provisional, streak), so A's room shows
    his rating beside his name before any rated race there."""
    cl = Cluster("A", "B", codec=codec)
    cl.standings["bob"] = Standing(1612, False, Streak(dt.date(2026, 12, 2), 4, 9))
    cl.standings["ann"] = Standing(1480, True)
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    cl.send(bob, Join(code))
    assert cl.owner(code) == "A" and not any(isinstance(m, Route) for m in cl.inbox[bob])
    for who in (ann, bob):  # both see it, the local player and the relayed one
        players = {p.name: p for p in cl.last(who, Room).players}
        assert (players["bob"].rating, players["bob"].provisional) == (1612, False)
        assert (players["ann"].rating, players["ann"].provisional) == (1480, True)


def test_a_rating_the_owner_knows_is_kept_and_one_it_lacks_is_taken() -> None:
    """The owner keeps a rating it knows (a rated race there moved it, which the gateway
    did not see) and takes the gateway's for a player it knows without one (an older
    node's handover carried none)."""
    cl = Cluster("A", "B")
    cl.standings["bob"] = Standing(1612, False)
    ann = cl.hello("A", "ann")
    bob = cl.hello("B", "bob")
    cl.send(ann, Create(code=WIN_CODE))
    code = cl.last(ann, Room).room
    owner = cl.hubs["A"]
    pid = cl.registry["tok-bob"][0]
    route = ("B", 9_999)
    # An older node's attach: no standing fields at all.
    older = bus.Attach("B", route[1], pid, "bob", "tok-bob", 0.0, "10.0.0.1", None)
    cl.apply("A", owner.handle(bus.decode(bus.encode(older)), cl.now))
    cl.send(bob, Join(code))
    players = {p.name: p for p in cl.last(bob, Room).players}
    assert players["bob"].rating == 1612  # known without a rating: the gateway's taken

    # Another handover of bob's (another session of his on B) says 1500: A keeps the
    # rating it knows, as it would one a rated race on A moved, which B never saw.
    stale = bus.Attach("B", 9_998, pid, "bob", "tok-bob", 0.0, "10.0.0.1", None, rating=1500)
    cl.apply("A", owner.handle(bus.decode(bus.encode(stale)), cl.now))
    # That session is bob's now (the older one replaced), resynced into the room:
    players = {p.name: p for p in cl.last(("B", 9_998), Room).players}
    assert players["bob"].rating == 1612


def test_a_gateway_forgets_a_session_that_followed_its_route_and_asks_again_later() -> None:
    """bob joins A's room through B and follows the route: his session on B is gone. His
    room closes on A, and within B's resume window he says hello on B again (the balancer
    picked B): B must not trust what it remembered (away on A, in a room that is no
    more) and hand him over there; it asks storage and the directory like any node
    (found by the compose drill: a welcome naming the closed room, then 4001)."""
    cl = Cluster("A", "B")
    ann, bob, code = _joined_through_b(cl)
    assert cl.inbox[bob][-1] == Route("A", code)
    cl.disconnect(bob)
    bob2 = cl.hello("A", token="tok-bob", follow=True, asked="A")
    cl.send(bob2, Leave())
    cl.send(ann, Leave())  # the room closes
    assert cl.owner(code) is None
    cl.disconnect(bob2)

    bob3 = cl.hello("B", token="tok-bob", follow=True)  # back through B, 0.3 s later
    assert cl.inbox[bob3][0].room is None  # no room: the closed one is not named
    cl.send(bob3, Create())
    assert cl.last(bob3, Room).you == "player"
    assert cl.owner(cl.last(bob3, Room).room) == "B"  # served on B, his own node
    assert bob3 not in cl.closed
