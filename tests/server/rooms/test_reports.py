"""The hub's side of ``report`` (server/rooms/reports.py) on the fake clock: not oneself,
the per-player and per-address budgets at their edges and after their window, the
connection's query places; what passes becomes a ``Query`` for storage."""

from __future__ import annotations

from protocol.messages import Error, Report
from server.rooms.config import HubConfig
from server.rooms.effects import Query, Send
from server.rooms.reports import (
    REPORT_WINDOW_S,
    REPORTS_PER_ADDRESS,
    REPORTS_PER_PLAYER,
    ReportRequest,
    Reports,
)
from server.rooms.shared import Shared
from server.rooms.state import _Conn, _Player

WALL = 1_795_000_000.0


def setup(
    players: int = 1, key: str = "10.0.0.1"
) -> tuple[Shared, Reports, list[tuple[_Conn, _Player]]]:
    shared = Shared(HubConfig(), lambda: WALL)
    reports = Reports(shared)
    people = []
    for i in range(1, players + 1):
        c = shared.conns[i] = _Conn(i, 0.0, 40.0, 0.0, key=key)
        p = _Player(i, f"p{i}", f"token{i}", conn=i)
        c.player = p
        people.append((c, p))
    return shared, reports, people


def answer(shared: Shared) -> Query | str:
    """The one effect a report made: its query, or the error's code (the place freed)."""
    [effect] = shared.flush()
    if isinstance(effect, Query):
        c = shared.conns[effect.conn]
        c.queries -= 1  # as Hub.query_answered does
        return effect
    assert isinstance(effect, Send) and isinstance(effect.message, Error)
    return effect.message.code


def test_a_report_becomes_a_query_with_what_storage_needs() -> None:
    shared, reports, [(c, p)] = setup()
    reports.ask(c, p, Report("Bob", race="r-1", reason="pasted a line"), 5.0)
    query = answer(shared)
    assert isinstance(query, Query) and query.player_id == p.id
    assert query.message == ReportRequest(
        reporter_id=p.id, player="Bob", race="r-1", reason="pasted a line", room=None,
        room_mates=frozenset(), at=WALL,
    )  # fmt: skip


def test_oneself_is_refused_in_any_case() -> None:
    shared, reports, [(c, p)] = setup()
    reports.ask(c, p, Report(" P1 "), 0.0)
    assert answer(shared) == "cannot_report_self"


def test_a_player_has_five_reports_an_hour() -> None:
    shared, reports, [(c, p)] = setup()
    for i in range(REPORTS_PER_PLAYER):
        reports.ask(c, p, Report(f"x{i}"), float(i))
        assert isinstance(answer(shared), Query)
    reports.ask(c, p, Report("one more"), 100.0)
    assert answer(shared) == "too_many_reports"
    # The window slides: the first report leaves it exactly an hour after it was made.
    reports.ask(c, p, Report("later"), REPORT_WINDOW_S - 0.001)
    assert answer(shared) == "too_many_reports"
    reports.ask(c, p, Report("later"), REPORT_WINDOW_S)
    assert isinstance(answer(shared), Query)


def test_an_address_has_twenty_reports_an_hour_among_its_players() -> None:
    shared, reports, people = setup(players=REPORTS_PER_ADDRESS // REPORTS_PER_PLAYER + 1)
    for c, p in people[:-1]:
        for i in range(REPORTS_PER_PLAYER):
            reports.ask(c, p, Report(f"x{i}"), 1.0)
            assert isinstance(answer(shared), Query)
    c, p = people[-1]
    reports.ask(c, p, Report("x"), 2.0)
    assert answer(shared) == "too_many_reports"  # its own budget is whole; the address's is not
    other = shared.conns[99] = _Conn(99, 0.0, 40.0, 0.0, key="10.0.0.2")
    other.player = p
    reports.ask(other, p, Report("x"), 2.0)
    assert isinstance(answer(shared), Query)  # another address


def test_a_report_takes_a_query_place_until_it_is_answered() -> None:
    shared, reports, [(c, p)] = setup()
    c.queries = HubConfig().max_queries_per_connection
    reports.ask(c, p, Report("bob"), 0.0)
    assert answer(shared) == "too_many_queries"
    c.queries = 0
    reports.ask(c, p, Report("bob"), 0.0)
    [effect] = shared.flush()
    assert isinstance(effect, Query) and c.queries == 1  # held until the answer
