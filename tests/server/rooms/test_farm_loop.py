"""The attacker's farm loop of issue 40 (2026-12-07), as a test: one address registers
four names, the host creates a rated room (a known code is refused now), three puppets
join and resign at once, the host plays one move and resigns later, and a rematch loop
goes round. Every race goes through the hub and is stored as the server stores it (both
backends): the host gains nothing, and ``recompute-ratings`` agrees."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection

from protocol.messages import Create, Join, Ready, Rematch, Resign, Room, Start
from server.storage.moderation_models import ReviewItem
from server.storage.sql import SqlStore

from ..storage.test_sql import register
from ..test_rooms import WIN_CODE, WIN_MOVES, Clients, error_codes, to

LOOPS = 20


async def test_the_farm_loop_gains_the_host_nothing(store: SqlStore) -> None:
    names = ["host", "p1", "p2", "p3"]
    ids = [who.player_id for who in await register(store, *names)]
    cl = Clients()
    conns = {name: cl.hello(name) for name in names}
    host = conns["host"]
    # The known code first: refused, so the host takes a fresh secret deal.
    assert error_codes(cl.send(host, Create(code=WIN_CODE, rated=True)), host) == ["rated_code"]
    [room] = [m for m in to(cl.send(host, Create(rated=True)), host) if isinstance(m, Room)]
    for name in names[1:]:
        cl.send(conns[name], Join(room.room))
    stored = 0
    for loop in range(LOOPS):
        for name in names[1:]:
            cl.send(conns[name], Ready())
        assert error_codes(cl.send(host, Start()), host) == []
        t0 = cl.now + cl.config.countdown_s
        cl.tick(t0)
        for name in names[1:]:
            cl.send(conns[name], Resign(), at=t0 + 0.5)  # the puppets resign at once
        cl.move(host, WIN_MOVES[0], at=t0 + 1)
        cl.send(host, Resign(), at=t0 + 2)  # later: ranked first by the longer time
        record = cl.persisted[-1]
        assert record.rated and record.results[0].name == "host"
        changes = await store.record_race(record)
        stored += 1
        assert all(ch.change == 0 for ch in changes.values())
        cl.commit(record.race_id, at=t0 + 3)
        if loop < LOOPS - 1:
            assert error_codes(cl.send(conns["p1"], Rematch(), at=t0 + 4), conns["p1"]) == []
    assert stored == LOOPS
    assert await store.current_ratings(ids) == {}  # nobody's rating moved at all
    report = await store.recompute_ratings()
    assert report.identical, report.differences
    assert report.races == LOOPS and report.rows == 0

    # The sandbag watch reported each puppet once (their 4th quick resign to the host).
    def queue(conn: Connection) -> list[tuple[str, int, int | None]]:
        t = ReviewItem.__table__
        rows = conn.execute(select(t).order_by(t.c.id)).all()
        return [(r.kind, r.player_id, r.other_id) for r in rows]

    assert await store.run_sync(queue) == [("sandbag", pid, ids[0]) for pid in ids[1:]]
