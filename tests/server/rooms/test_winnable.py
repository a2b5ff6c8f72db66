"""Winnable deals in the hub (issue 40, item 4; ``server.rooms.deals``) on the fake clock:
the stock filled by ``Prove`` and ``DealProven``, rooms dealt from it (plain, rated,
quick, rematches), the empty stock's deal proven on the spot and dealt again while no card
is out, a verdict never told once the race runs, and ``create.winnable``'s refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol import GameCode, Rules
from protocol.commitment import commitment
from protocol.messages import Create, Daily, Error, Rematch, Resign, Room
from server.rooms import HubConfig
from server.rooms import events as ev
from server.rooms.effects import Effect, Prove
from server.rooms.play import WINNABLE_CODE_TEXT, WINNABLE_RATED_TEXT

from ..test_quick import Pooled, paired
from ..test_rooms import SALT, WIN_CODE, Clients, error_codes, lobby, start, to

CONFIG = HubConfig(winnable_stock=3)
Verdict = Callable[[Prove], str]


def won(_: Prove) -> str:
    return "won"


def proofs(effects: list[Effect]) -> list[Prove]:
    return [e for e in effects if isinstance(e, Prove)]


def answer(cl: Clients, effects: list[Effect], verdict: Verdict = won) -> list[Effect]:
    """Answer every ``Prove`` in ``effects``, and those the answers ask for, as the
    solver's lane would (one by one), with ``verdict``; every effect of the answers."""
    out: list[Effect] = []
    queue = proofs(effects)
    while queue:
        p = queue.pop(0)
        event = ev.DealProven(p.rules, p.seed, verdict(p), p.room)
        got = cl._record(cl.hub.handle(event, cl.now))
        out += got
        queue += proofs(got)
    return out


def filled(cl: Clients) -> list[Prove]:
    """The stock filled from the server's start; the proofs it asked for."""
    asked: list[Prove] = []

    def record(p: Prove) -> str:
        asked.append(p)
        return "won"

    answer(cl, cl._record(cl.hub.handle(ev.FillStock(), cl.now)), record)
    assert cl.hub.winnable_stock.size() == 3
    return asked


def code_of(p: Prove) -> str:
    return str(GameCode(Rules.parse(p.rules), p.seed))


def test_the_stock_fills_in_the_background_and_a_room_takes_a_proven_deal() -> None:
    cl = Clients(CONFIG)
    first = cl.hub.handle(ev.FillStock(), cl.now)
    assert [(p.rules, p.room, p.budget_nodes) for p in proofs(first)] == [
        ("C", "", CONFIG.winnable_budget_nodes)
    ] * 2  # two out at once: the lane is never queued up behind the stock
    asked = []

    def record(p: Prove) -> str:
        asked.append(p)
        return "lost" if len(asked) == 2 else "won"  # one lost: dropped, one more asked

    answer(cl, first, record)
    assert len(asked) == 4 and cl.hub.winnable_stock.size() == 3
    kept = [p for i, p in enumerate(asked) if i != 1]
    ann = cl.hello("ann")
    effects = cl.send(ann, Create(rules="C"))
    [room] = [m for m in to(effects, ann) if isinstance(m, Room)]
    assert room.winnable and room.code is None
    # The oldest proven deal, behind a fresh salt's commitment; the stock is refilled.
    assert room.commitment == commitment(code_of(kept[0]), SALT)
    assert cl.deals_drawn == 1  # drawn as ever, then set aside for the proven one
    assert [p.room for p in proofs(effects)] == [""]
    assert cl.hub.winnable_stock.size() == 2
    answer(cl, effects)
    assert cl.hub.winnable_stock.size() == 3


def test_an_empty_stock_deals_a_fresh_deal_proven_on_the_spot() -> None:
    cl = Clients(CONFIG)  # the stock never filled
    ann = cl.hello("ann")
    effects = cl.send(ann, Create())
    [room] = [m for m in to(effects, ann) if isinstance(m, Room)]
    assert not room.winnable
    assert room.commitment == commitment(WIN_CODE, SALT)  # the fresh deal, deal 1
    [mine] = [p for p in proofs(effects) if p.room]
    assert (mine.room, mine.seed) == (room.room, 1)
    # The room's proof comes first; the stock's own are answered too.
    after = answer(cl, [mine])
    [now] = [m for m in to(after, ann) if isinstance(m, Room)]
    assert now.winnable and now.commitment == room.commitment  # the same deal, proven
    assert cl.hub.winnable_stock.figures.empty == 1


def test_a_deal_proven_lost_before_the_race_is_dealt_again() -> None:
    cl = Clients(CONFIG, deals=(7, 8, 9))
    ann = cl.hello("ann")
    effects = cl.send(ann, Create())
    [mine] = [p for p in proofs(effects) if p.room]
    again = cl._record(cl.hub.handle(ev.DealProven("C", 7, "lost", mine.room), cl.now))
    [room] = [m for m in to(again, ann) if isinstance(m, Room)]
    # Nothing of deal 7 was dealt: a fresh one (8), proven the same way, a new commitment.
    assert not room.winnable
    assert room.commitment == commitment(str(GameCode(Rules.parse("C"), 8)), SALT)
    [next_proof] = proofs(again)
    assert (next_proof.seed, next_proof.room) == (8, mine.room)
    # The stock has filled meanwhile: the next loss takes a proven deal from it.
    asked: list[Prove] = []

    def record(p: Prove) -> str:
        asked.append(p)
        return "won"

    answer(cl, [p for p in proofs(effects) if not p.room], record)
    assert cl.hub.winnable_stock.size() == 3
    last = cl._record(cl.hub.handle(ev.DealProven("C", 8, "unknown", mine.room), cl.now))
    [room] = [m for m in to(last, ann) if isinstance(m, Room)]
    assert room.winnable and room.commitment == commitment(code_of(asked[0]), SALT)


def test_after_its_tries_a_room_races_unproven_and_says_so() -> None:
    cl = Clients(HubConfig(winnable_stock=3, winnable_tries=2), deals=(7, 8, 9))
    ann = cl.hello("ann")
    cl.send(ann, Create())
    cl._record(cl.hub.handle(ev.DealProven("C", 7, "lost", "ZEBRA"), cl.now))
    last = cl._record(cl.hub.handle(ev.DealProven("C", 8, "lost", "ZEBRA"), cl.now))
    assert to(last, ann) == [] and proofs(last) == []  # the second deal stays, unproven
    assert not cl.last(ann, Room).winnable


def test_a_verdict_that_comes_once_the_race_runs_is_never_told() -> None:
    cl = Clients(CONFIG)
    conns = lobby(cl, ["ann", "bob"])  # its deal's proof went out, not answered yet
    start(cl, conns["ann"])
    for verdict in ("lost", "won"):
        late = cl._record(cl.hub.handle(ev.DealProven("C", 1, verdict, "ZEBRA"), cl.now))
        assert late == []  # a word on the cards, mid-race, would say something of them
    assert not cl.last(conns["ann"], Room).winnable


def test_winnable_false_gives_a_plain_random_deal() -> None:
    cl = Clients(CONFIG)
    filled(cl)
    ann = cl.hello("ann")
    effects = cl.send(ann, Create(winnable=False))
    [room] = [m for m in to(effects, ann) if isinstance(m, Room)]
    assert not room.winnable and room.commitment == commitment(WIN_CODE, SALT)
    assert proofs(effects) == [] and cl.hub.winnable_stock.size() == 3


def test_winnable_where_it_cannot_hold_is_refused() -> None:
    cl = Clients(CONFIG)
    ann = cl.hello("ann")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"code": WIN_CODE, "winnable": True}, WINNABLE_CODE_TEXT),
        ({"rated": True, "winnable": False}, WINNABLE_RATED_TEXT),
    ]
    for fields, text in cases:
        effects = cl.send(ann, Create(**fields))
        assert error_codes(effects, ann) == ["bad_winnable"]
        [error] = [m for m in to(effects, ann) if isinstance(m, Error)]
        assert error.text == text
    assert cl.hub.rooms == 0
    # A host's code with winnable false is what a code is anyway: a room, not proven.
    [room] = [m for m in to(cl.send(ann, Create(code=WIN_CODE, winnable=False)), ann)]
    assert isinstance(room, Room) and not room.winnable and room.code == WIN_CODE


def test_a_rated_room_and_its_rematch_are_dealt_winnable_deals() -> None:
    cl = Clients(CONFIG)
    asked = filled(cl)
    conns = lobby(cl, ["ann", "bob"], rated=True)
    ann, bob = conns["ann"], conns["bob"]
    first = cl.last(ann, Room)
    assert first.rated and first.winnable
    assert first.commitment == commitment(code_of(asked[0]), SALT)
    start(cl, ann)
    cl.send(ann, Resign())
    cl.send(bob, Resign())
    cl.commit(1)
    answer(cl, [])
    [again] = [m for m in to(cl.send(bob, Rematch()), bob) if isinstance(m, Room)]
    assert again.winnable and again.commitment == commitment(code_of(asked[1]), SALT)


def test_an_unrated_rooms_rematch_is_winnable_too_and_a_plain_ones_is_plain() -> None:
    for winnable in (None, False):
        cl = Clients(CONFIG)
        filled(cl)
        conns = lobby(cl, ["ann", "bob"], winnable=winnable)
        ann, bob = conns["ann"], conns["bob"]
        start(cl, ann)
        cl.send(ann, Resign())
        cl.send(bob, Resign())
        cl.commit(1)
        [again] = [m for m in to(cl.send(bob, Rematch()), bob) if isinstance(m, Room)]
        assert again.winnable == (winnable is None)


def test_a_quick_race_is_dealt_a_winnable_deal() -> None:
    cl = Pooled(CONFIG)
    asked = filled(cl)
    a, _ = paired(cl)
    room = cl.last(a, Room)
    assert room.quick and room.rated and room.winnable
    assert room.commitment == commitment(code_of(asked[0]), SALT)


def test_a_daily_room_says_its_deal_is_winnable() -> None:
    """The daily's deal is chosen proven (its par is the solver's line): ``winnable``."""
    cl = Clients(CONFIG)
    ann = cl.hello("ann")
    effects = cl.send(ann, Daily())
    [room] = [m for m in to(effects, ann) if isinstance(m, Room)]
    assert room.max_players == 1 and room.winnable
    assert proofs(effects) == []  # nothing of the stock's


def test_a_rated_race_on_an_unproven_deal_is_stored_as_such_and_a_proven_one_is_not() -> None:
    """The stock's fallback (a verdict not back when the race starts) never moves a
    rating: the record says ``unproven`` (storage then counts none of its pairs,
    tests/server/storage/test_one_address.py), and the journal keeps ``winnable``."""
    from server.domain.records import LiveRace

    cl = Clients(CONFIG)
    conns = lobby(cl, ["ann", "bob"], rated=True)  # an empty stock: proven on the spot
    start(cl, conns["ann"])  # ... and the verdict has not come back
    cl.send(conns["ann"], Resign())
    cl.send(conns["bob"], Resign())
    [record] = cl.persisted
    assert record.rated and record.unproven
    [live] = [e for e in cl.journal if isinstance(e, LiveRace)]
    assert not live.winnable

    proven = Clients(CONFIG)
    filled(proven)
    conns = lobby(proven, ["ann", "bob"], rated=True)
    start(proven, conns["ann"])
    proven.send(conns["ann"], Resign())
    proven.send(conns["bob"], Resign())
    [record] = proven.persisted
    assert record.rated and not record.unproven
    [live] = [e for e in proven.journal if isinstance(e, LiveRace)]
    assert live.winnable
