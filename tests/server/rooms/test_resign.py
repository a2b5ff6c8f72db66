"""A resign with a ``seq`` (issue 40, item 7): numbered like a move, answered with
``race``, answered again (not refused) when resent, journaled with its seq, and after a
crash that lost it from the journal, resent and played; one without a seq behaves as an
older client's always did."""

from __future__ import annotations

from protocol.messages import Error, MoveMsg, Progress, Resign
from protocol.messages import Race as RaceMsg
from server.domain.records import LiveAction, LiveRace

from ..test_rooms import WIN_MOVES, Clients, race, to


def test_a_numbered_resign_is_answered_and_a_resend_is_answered_again() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann = conns["ann"]
    cl.move(ann, WIN_MOVES[0])
    effects = cl.send(ann, Resign(seq=2))
    answers = to(effects, ann)
    [answer] = [m for m in answers if isinstance(m, RaceMsg)]
    assert answer.state == "resigned" and answer.seq == 2
    assert any(isinstance(m, Progress) for m in to(effects, conns["bob"]))
    # Resent (the client did not see the answer): the same answer, no error, no progress.
    again = to(cl.send(ann, Resign(seq=2)), ann)
    assert [type(m) for m in again] == [RaceMsg] and again[0].state == "resigned"
    # A new seq once done: finished, as for a move.
    [late] = [m for m in to(cl.send(ann, Resign(seq=3)), ann) if isinstance(m, Error)]
    assert late.code == "finished" and late.seq == 3
    [journaled] = [e for e in cl.journal if isinstance(e, LiveAction) and e.action == "resign"]
    assert journaled.seq == 2


def test_a_resign_without_a_seq_is_as_it_was() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    effects = cl.send(conns["ann"], Resign())
    assert not [m for m in to(effects, conns["ann"]) if isinstance(m, RaceMsg)]
    [journaled] = [e for e in cl.journal if isinstance(e, LiveAction) and e.action == "resign"]
    assert journaled.seq is None
    [again] = [m for m in to(cl.send(conns["ann"], Resign()), conns["ann"]) if isinstance(m, Error)]
    assert again.code == "finished" and again.seq is None


def test_a_resign_the_journal_lost_is_resent_and_played() -> None:
    cl = Clients()
    conns = race(cl, ["ann", "bob"])
    ann = conns["ann"]
    cl.move(ann, WIN_MOVES[0], at=cl.race_start + 1)
    cl.send(ann, Resign(seq=2), at=cl.race_start + 2)
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    actions = [e for e in cl.journal if isinstance(e, LiveAction)]
    assert [a.action for a in actions] == [WIN_MOVES[0], "resign"]

    # The crash lost the resign's group: the rebuilt race says seq 1; the client resends.
    after = Clients()
    after.registry = cl.registry
    after.tokens = dict(cl.tokens)
    after.hub.restore(live, actions[:1], alive_ms=1_500, now=after.now)
    conn, effects = after.resume("ann", at=after.now + 1)
    [resumed] = [m for m in to(effects, conn) if isinstance(m, RaceMsg)]
    assert resumed.seq == 1 and resumed.state == "playing"
    [answer] = [m for m in to(after.send(conn, Resign(seq=2)), conn) if isinstance(m, RaceMsg)]
    assert answer.state == "resigned"

    # With the resign journaled, the rebuilt race has it, and its seq: a resend is answered.
    again = Clients()
    again.registry = cl.registry
    again.tokens = dict(cl.tokens)
    again.hub.restore(live, actions, alive_ms=2_500, now=again.now)
    conn, effects = again.resume("ann", at=again.now + 1)
    [resumed] = [m for m in to(effects, conn) if isinstance(m, RaceMsg)]
    assert resumed.seq == 2 and resumed.state == "resigned"
    assert [type(m) for m in to(again.send(conn, Resign(seq=2)), conn)] == [RaceMsg]
    assert not [
        m for m in to(again.send(conn, MoveMsg(3, "AS>F")), conn) if not isinstance(m, Error)
    ]
