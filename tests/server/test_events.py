"""``Hub.handle``: every input of the hub as a typed event (``server.rooms.events``), and
what another node says (``server.cluster.bus``), routed to its entry point.

One hub on a fake clock, driven only through ``handle``: a player says hello, storage
answers, a race is played and committed, a hint and a query are answered, the connection
drops and the player resumes; the cluster's events on a node of its own.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from protocol import GameCode
from protocol.messages import (
    Accepted,
    Create,
    Error,
    Hello,
    History,
    Join,
    MoveMsg,
    Race,
    Ready,
    Resign,
    Result,
    Room,
    Start,
    Welcome,
    encode,
)
from server.cluster.cluster import bus
from server.domain.daily import next_daily_ms
from server.rooms import Hub, HubConfig
from server.rooms import events as ev
from server.rooms.effects import Authenticate, Close, Effect, Locate, Persist, Query, Send

DATA = Path(__file__).resolve().parent.parent / "data"
WINNING = (DATA / "winning-game.txt").read_text().split()
WIN_CODE, WIN_MOVES = WINNING[0], WINNING[1:]


def sent(effects: list[Effect], conn: int) -> list[object]:
    return [e.message for e in effects if isinstance(e, Send) and e.conn == conn]


def test_a_race_from_hello_to_its_committed_result_through_events_alone() -> None:
    wall = 1_796_000_000.0  # the hub's wall clock: the welcome's countdown is from it
    hub = Hub(
        HubConfig(countdown_s=0.0, progress_hold_s=0.0),
        new_room_code=lambda: "ZEBRA",
        wall_clock=lambda: wall,
    )
    now = 10.0
    assert hub.handle(ev.Connected(1, "10.0.0.1"), now) == []
    effects = hub.handle(ev.Received(1, encode(Hello(1, name="ann"))), now)
    assert [type(e) for e in effects] == [Authenticate]
    effects = hub.handle(ev.Authenticated(1, 7, "ann", "tok", new=True), now)
    assert isinstance(sent(effects, 1)[0], Welcome)

    effects = hub.handle(ev.Received(1, encode(Create(code=WIN_CODE))), now)
    assert isinstance(sent(effects, 1)[-1], Room)
    hub.handle(ev.Received(1, encode(Start())), now)
    effects = hub.handle(ev.Tick(), now + 0.1)
    assert any(isinstance(m, Race) for m in sent(effects, 1))
    effects = hub.handle(ev.Received(1, encode(MoveMsg(1, WIN_MOVES[0]))), now + 1)
    accepted = sent(effects, 1)[0]
    assert isinstance(accepted, Accepted) and accepted.seq == 1
    effects = hub.handle(ev.Control(1), now + 1.5)  # a ping: a token, nothing else
    assert effects == []

    effects = hub.handle(ev.Received(1, encode(Resign())), now + 2)
    (persist,) = [e for e in effects if isinstance(e, Persist)]
    assert not any(isinstance(m, Result) for m in sent(effects, 1))  # not before the commit
    effects = hub.handle(ev.Committed(persist.record.race_id), now + 2.5)
    assert any(isinstance(m, Result) for m in sent(effects, 1))

    # A query goes to storage; its answer comes back as an event.
    effects = hub.handle(ev.Received(1, encode(History())), now + 3)
    (query,) = [e for e in effects if isinstance(e, Query)]
    away = Error("unavailable", "the database is away")  # storage's answer, this time
    assert sent(hub.handle(ev.QueryAnswered(query.conn, away), now + 3), 1) == [away]

    # The connection drops; a new one resumes the player with the token (known here: no
    # question to storage).
    hub.handle(ev.Disconnected(1), now + 4)
    hub.handle(ev.Connected(2), now + 5)
    effects = hub.handle(ev.Received(2, encode(Hello(1, token="tok"))), now + 5)
    countdown = next_daily_ms(wall)
    assert sent(effects, 2)[0] == Welcome(1, "ann", "tok", 60, "ZEBRA", next_daily_ms=countdown)


def test_storage_and_solver_refusals_are_events_too() -> None:
    hub = Hub(HubConfig())
    hub.handle(ev.Connected(1), 0.0)
    hub.handle(ev.Received(1, encode(Hello(1, name="ann"))), 0.0)
    effects = hub.handle(ev.HelloRefused(1, "name_taken", "taken"), 0.0)
    assert [m.code for m in sent(effects, 1) if isinstance(m, Error)] == ["name_taken"]
    # Answers for players nobody knows are dropped, not raised.
    assert hub.handle(ev.HintFailed(99, 1), 0.0) == []
    assert hub.handle(ev.DailyRefused(99, "unavailable", "later"), 0.0) == []
    day = dt.date(2026, 12, 3)
    assert hub.handle(ev.DailyBegun(99, day, 1, GameCode.parse(WIN_CODE)), 0.0) == []
    assert hub.handle(ev.HintReady(99, 1, "lost"), 0.0) == []


def test_a_node_s_cluster_events_and_what_other_nodes_say() -> None:
    hub = Hub(HubConfig(), new_room_code=lambda: "ZEBRA", node="A")
    hub.handle(ev.Connected(1), 0.0)
    hub.handle(ev.Received(1, encode(Hello(1, name="ann"))), 0.0)
    hub.handle(ev.Authenticated(1, 7, "ann", "tok", new=True), 0.0)
    effects = hub.handle(ev.Received(1, encode(Join("OTHER"))), 0.0)
    (locate,) = [e for e in effects if isinstance(e, Locate)]
    effects = hub.handle(ev.Unreachable(1, "the directory is away"), 0.1)
    assert [m.code for m in sent(effects, 1) if isinstance(m, Error)] == ["unavailable"]
    hub.handle(ev.Received(1, encode(Join("OTHER"))), 0.2)
    effects = hub.handle(ev.Located(1, "OTHER", None, locate.frame), 0.3)
    assert [m.code for m in sent(effects, 1) if isinstance(m, Error)] == ["no_such_room"]

    # A guest of node B joins ann's room here: attached with its join, a frame of its
    # served, detached; then B is gone.
    hub.handle(ev.Received(1, encode(Create())), 0.5)
    assert hub.has_room("ZEBRA")
    join = encode(Join("ZEBRA"))
    attach = bus.Attach("B", 5, 8, "bob", "tok-bob", 0.0, "10.0.0.2", join, False)
    effects = hub.handle(attach, 1.0)
    assert hub.guest_conn(("B", 5)) is not None and hub.peers() == {"B"}
    assert [p.name for p in sent(effects, 1)[-1].players] == ["ann", "bob"]  # type: ignore[attr-defined]
    effects = hub.handle(bus.Frame("B", 5, encode(Ready(True))), 1.1)
    assert [p.ready for p in sent(effects, 1)[-1].players] == [True, True]  # type: ignore[attr-defined]
    assert hub.handle(bus.Deliver((5,), b"", False), 1.2) == []
    hub.handle(bus.DetachMsg("B", 5), 1.3)
    assert hub.guest_conn(("B", 5)) is None
    hub.handle(ev.NodeGone("B"), 1.4)
    assert hub.peers() == set()

    # The room is lost to another node: its members are closed to resume there.
    effects = hub.handle(ev.RoomLost("ZEBRA"), 2.1)
    assert [e.code for e in effects if isinstance(e, Close)] == [1012]
    assert not hub.has_room("ZEBRA")
    assert hub.handle(ev.RelayGap(), 2.2) == []
    assert hub.handle(bus.PasswordFail("10.0.0.9"), 2.3) == []
