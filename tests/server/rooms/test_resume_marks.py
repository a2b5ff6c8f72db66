"""A runner's return after a drop is marked in their run (``PlayerResult.resumed_at``), so
the fair-play signals leave out the interval spanning the outage and the burst a client
resends then (issue 40 item 1; docs/fairplay.md "What is left out")."""

from __future__ import annotations

from protocol.messages import Resign
from server.domain.signals import of_journal

from ..test_rooms import WIN_MOVES, Clients, race


def test_a_resume_mid_race_is_marked_where_it_came_and_its_burst_left_out() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    t = cl.race_start
    ann = conns["ann"]
    cl.move(ann, WIN_MOVES[0], at=t + 1.0)
    cl.move(ann, WIN_MOVES[1], at=t + 2.5)
    cl.disconnect(ann, at=t + 3.0)
    ann, _ = cl.resume("ann", at=t + 20.0)
    # What the client had not seen accepted comes again at once, in one write.
    for move in WIN_MOVES[2:5]:
        cl.move(ann, move, at=t + 20.01)
    cl.move(ann, WIN_MOVES[5], at=t + 22.0)
    cl.send(ann, Resign(seq=7), at=t + 23.0)
    cl.send(conns["bob"], Resign(), at=t + 24.0)
    [record] = cl.persisted
    runs = {r.name: r for r in record.results}
    assert runs["ann"].resumed_at == (2,)
    assert runs["bob"].resumed_at == ()
    figures = of_journal(record.code, runs["ann"].journal, resumed_at=runs["ann"].resumed_at)
    assert figures.resumes == 1
    # Kept: the first interval (1.5 s) only; the 17.5 s outage, the three resent moves
    # 0 ms apart and the interval out of the burst are left out, so no "fast" interval.
    assert figures.fast_count == 0
    assert 17_500 not in figures.intervals and 0 not in figures.intervals
    without = of_journal(record.code, runs["ann"].journal)
    assert without.fast_count == 2 and without.resumes == 0


def test_a_player_who_drops_before_the_race_or_after_their_end_is_not_marked() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    t = cl.race_start
    cl.send(conns["ann"], Resign(), at=t + 1.0)
    cl.disconnect(conns["ann"], at=t + 2.0)
    cl.resume("ann", at=t + 3.0)
    cl.send(conns["bob"], Resign(), at=t + 4.0)
    [record] = cl.persisted
    assert all(r.resumed_at == () for r in record.results)
