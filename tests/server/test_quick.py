"""The quick-race pool in the hub (``server/rooms/quick.py``) on a fake clock: ``quick``,
``pool``, rooms formed by rating and by waiting time, leaving, disconnecting."""

from __future__ import annotations

from typing import Any

from protocol.commitment import commitment
from protocol.messages import Countdown, Create, Error, Left, Pool, Quick, Room
from protocol.messages import Race as RaceMsg
from server.rooms import HubConfig
from server.rooms.effects import Effect, Rate
from server.rooms.pool import UNLIMITED_BAND

from .test_rooms import SALT, Clients


class Pooled(Clients):
    """Fake clients whose storage knows each player's rating (``Rate``)."""

    def __init__(self, config: HubConfig | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.ratings: dict[str, float] = {}
        self.usual: str | None = None
        #: Player ids looked up, in order; while ``hold`` is set they wait in ``held``.
        self.rated: list[int] = []
        self.hold = False
        self.held: list[Rate] = []  # type: ignore[assignment]

    def _record(self, effects: list[Effect]) -> list[Effect]:
        out = super()._record([e for e in effects if not isinstance(e, Rate)])
        for e in effects:
            if isinstance(e, Rate):
                if self.hold:
                    self.held.append(e)
                    continue
                out.extend(self._answer(e))
        return out

    def _answer(self, e: Rate) -> list[Effect]:
        self.rated.append(e.player_id)
        name = next(n for pid, n, _ in self.registry.values() if pid == e.player_id)
        rating = self.ratings.get(name, 1500.0)
        return self._record(
            self.hub.quick_rated(e.player_id, rating=rating, usual=self.usual, now=self.now)
        )

    def answer_held(self) -> None:
        held, self.held, self.hold = self.held, [], False
        for e in held:
            self._answer(e)

    def quick(self, conn: int, *, leave: bool = False, at: float | None = None) -> list[Any]:
        before = len(self.inbox[conn])
        self.send(conn, Quick(leave=leave), at)
        return self.inbox[conn][before:]


def paired(cl: Pooled) -> tuple[int, int]:
    """alice and bob, near in rating, in the pool until their room of two forms."""
    a, b = cl.hello("alice"), cl.hello("bob")
    cl.quick(a)
    cl.quick(b)
    cl.tick(cl.now + 6.0)
    return a, b


def pools(inbox: list[Any]) -> list[Pool]:
    return [m for m in inbox if isinstance(m, Pool)]


def test_two_players_of_near_rating_race_after_the_fill_time() -> None:
    cl = Pooled()
    a, b = cl.hello("alice"), cl.hello("bob")
    cl.ratings.update(alice=1500, bob=1540)
    [first] = cl.quick(a)
    assert first == Pool("waiting", 1, 0, 20_000, 75, None)
    [joined] = pools(cl.quick(b, at=cl.now + 1.0))
    assert (joined.state, joined.waiting, joined.band) == ("waiting", 2, 75)
    # alice hears there are two now
    assert pools(cl.inbox[a])[-1].waiting == 2
    start = cl.now
    cl.tick(start + 4.0)  # a room of two waits for a third until alice waited 6 s
    assert not [m for m in cl.inbox[a] if isinstance(m, Room)]
    cl.tick(start + 5.0)
    rooms = [m for m in cl.inbox[a] if isinstance(m, Room)]
    assert rooms, "alice waited 6 s: the room of two forms"
    first_room = rooms[0]
    assert first_room.quick and first_room.state == "lobby"
    assert [p.name for p in first_room.players] == ["alice", "bob"]
    assert all(p.ready for p in first_room.players)
    assert first_room.code is None and first_room.commitment == commitment(
        cl.hub._rooms[first_room.room].deal, SALT
    )
    # the usual order: room, then the countdown, then the room counting down
    after = cl.inbox[b][cl.inbox[b].index(rooms[0]) if rooms[0] in cl.inbox[b] else 0 :]
    kinds = [type(m).__name__ for m in after if not isinstance(m, Pool)]
    assert kinds[:3] == ["Room", "Countdown", "Room"]
    cl.tick(cl.now + cl.config.countdown_s)
    assert any(isinstance(m, RaceMsg) for m in cl.inbox[a])
    assert any(isinstance(m, RaceMsg) for m in cl.inbox[b])


def test_four_players_of_near_rating_race_at_once_the_far_one_waits() -> None:
    cl = Pooled()
    names = ["ann", "ben", "cat", "dan", "eve"]
    conns = {n: cl.hello(n) for n in names}
    cl.ratings.update(ann=1500, ben=1510, cat=2100, dan=1490, eve=1520)
    for n in names:
        cl.quick(conns[n])
    room = next(m for m in cl.inbox[conns["ann"]] if isinstance(m, Room))
    assert sorted(p.name for p in room.players) == ["ann", "ben", "dan", "eve"]
    assert room.max_players == 4
    assert not [m for m in cl.inbox[conns["cat"]] if isinstance(m, Room)]
    assert pools(cl.inbox[conns["cat"]])[-1].state == "waiting"


def test_a_far_rating_is_matched_once_the_band_widens() -> None:
    cl = Pooled()
    a, b = cl.hello("alice"), cl.hello("bob")
    cl.ratings.update(alice=1200, bob=1600)  # 400 apart: 75 + 25 s/s reaches it at 13 s
    cl.quick(a)
    cl.quick(b)
    start = cl.now
    t = start
    while t < start + 12.5:
        t += 0.5
        cl.tick(t)
    assert not [m for m in cl.inbox[a] if isinstance(m, Room)]
    cl.tick(start + 13.0)
    assert [m for m in cl.inbox[a] if isinstance(m, Room)]


def test_nobody_waits_past_the_limit_and_the_limit_is_the_operators() -> None:
    cl = Pooled(HubConfig(quick_max_wait_s=8.0, quick_fill_s=2.0))
    a, b = cl.hello("alice"), cl.hello("bob")
    cl.ratings.update(alice=800, bob=2800)
    [status] = cl.quick(a)
    assert status.max_wait_ms == 8000
    cl.quick(b)
    start = cl.now
    cl.tick(start + 7.5)
    assert not [m for m in cl.inbox[a] if isinstance(m, Room)]
    cl.tick(start + 8.0)
    assert [m for m in cl.inbox[a] if isinstance(m, Room)]


def test_alone_the_pool_says_so_and_when_others_usually_play() -> None:
    cl = Pooled()
    cl.usual = "most races start 18:00-22:00 UTC"
    a = cl.hello("alice")
    [status] = cl.quick(a)
    assert (status.waiting, status.usual) == (1, "most races start 18:00-22:00 UTC")
    cl.tick(cl.now + 60.0)
    assert not [m for m in cl.inbox[a] if isinstance(m, (Room, Countdown))]
    again = pools(cl.quick(a))[-1]
    assert again.waited_ms == 60_000 and again.band == UNLIMITED_BAND


def test_leave_disconnect_and_another_room_take_a_player_out() -> None:
    cl = Pooled()
    a, b, c = cl.hello("alice"), cl.hello("bob"), cl.hello("carol")
    cl.quick(a)
    [left] = cl.quick(a, leave=True)
    assert left.state == "left" and left.waiting == 0
    cl.quick(b)
    cl.disconnect(b)
    cl.quick(c)
    cl.send(c, Create())  # another room: out of the pool first
    assert pools(cl.inbox[c])[-1].state == "left"
    assert any(isinstance(m, Room) for m in cl.inbox[c])
    cl.tick(cl.now + 30.0)
    assert cl.hub._quick.pool.waiters() == []


def test_not_while_in_a_room() -> None:
    cl = Pooled()
    a = cl.hello("alice")
    cl.send(a, Create())
    [err] = cl.quick(a)
    assert isinstance(err, Error) and err.code == "already_in_room"


def test_a_player_who_leaves_while_looked_up_never_waits() -> None:
    cl = Pooled()
    a = cl.hello("alice")
    cl.hold = True
    cl.quick(a)
    cl.quick(a, leave=True)
    cl.answer_held()
    assert cl.hub._quick.pool.waiters() == []
    assert pools(cl.inbox[a])[-1].state == "left"


def test_after_a_quick_race_quick_again_leaves_the_finished_room() -> None:
    cl = Pooled()
    a, b = paired(cl)
    cl.tick(cl.now + cl.config.countdown_s)
    from protocol.messages import Resign

    cl.send(a, Resign())
    cl.send(b, Resign())
    [record] = cl.persisted
    cl.commit(record.race_id)
    out = cl.quick(a)
    assert isinstance(out[0], Left) and isinstance(out[-1], Pool)


def test_a_quick_race_rebuilt_after_a_restart_is_still_quick() -> None:
    """The journal keeps a quick race quick (``LiveRace.quick``, ``live_races.quick``): the
    process that rebuilds it (a restart, or the node taking it over) seats its runners in
    a quick, rated room, as before."""
    from server.domain.records import LiveRace

    from .test_rooms import to

    cl = Pooled()
    paired(cl)
    cl.tick(cl.now + cl.config.countdown_s)
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    assert live.quick and live.rated

    after = Pooled()
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    after.hub.restore(live, [], alive_ms=1_000, now=after.now)
    conn, effects = after.resume("alice", at=after.now + 1)
    [room] = [m for m in to(effects, conn) if isinstance(m, Room)]
    assert room.quick and room.rated and room.state == "racing"


def test_a_quick_room_adopted_from_a_dead_nodes_snapshot_is_still_quick() -> None:
    """A quick room in its countdown has no journal: the node adopting it from its dead
    owner's snapshot (``lobbies``) keeps it quick and rated, and a snapshot without the
    flag (written by an older node) gives an ordinary room, as that node would have."""
    from .test_rooms import to

    cl = Pooled()
    paired(cl)
    [(code, snap)] = cl.hub.lobbies().items()
    assert snap["quick"] and snap["rated"]

    for older, quick in ((False, True), (True, False)):
        after = Pooled()
        after.registry = cl.registry
        after.tokens = dict(cl.tokens)
        seen = {k: v for k, v in snap.items() if not (older and k == "quick")}
        after.hub.adopt_lobby(code, seen, after.now)
        conn, effects = after.resume("alice", at=after.now + 1)
        [room] = [m for m in to(effects, conn) if isinstance(m, Room)]
        assert room.quick is quick and room.rated
