"""A rated room always gets a fresh secret deal (issue 40, item 4): ``create`` with
``rated`` and a ``code`` is refused with ``rated_code``; a rated room made from rules is
dealt a secret deal (a commitment, no code shown), and its rematch draws another."""

from __future__ import annotations

from protocol.commitment import commitment
from protocol.messages import Create, Error, Rematch, Resign, Room
from server.rooms.play import RATED_CODE_TEXT

from ..test_rooms import SALT, WIN_CODE, Clients, error_codes, race, to


def test_rated_with_a_code_is_refused_with_a_clear_error() -> None:
    cl = Clients()
    ann = cl.hello("ann")
    effects = cl.send(ann, Create(code=WIN_CODE, rated=True))
    assert error_codes(effects, ann) == ["rated_code"]
    [error] = [m for m in to(effects, ann) if isinstance(m, Error)]
    assert error.text == RATED_CODE_TEXT
    assert error.text == "a rated room always gets a fresh secret deal: give rules, not a code"
    assert cl.hub.rooms == 0 and cl.deals_drawn == 0
    # The same code unrated is a room; rated from rules is one too.
    assert [type(m) for m in to(cl.send(ann, Create(code=WIN_CODE)), ann)] == [Room]


def test_a_rated_rooms_deal_is_secret_and_its_rematch_is_fresh() -> None:
    cl = Clients(deals=(1, 2, 3))
    conns = race(cl, ["ann", "bob"], rated=True)
    ann, bob = conns["ann"], conns["bob"]
    first = cl.last(ann, Room)
    assert first.rated and first.code is None
    assert first.commitment == commitment("YU1-C-AAAAAAB", SALT)
    cl.send(ann, Resign())
    cl.send(bob, Resign())
    cl.commit(1)
    [again] = [m for m in to(cl.send(bob, Rematch()), bob) if isinstance(m, Room)]
    assert again.rated and again.code is None
    assert again.commitment == commitment("YU1-C-AAAAAAC", SALT)
    assert cl.deals_drawn == 2
