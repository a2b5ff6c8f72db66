"""The pair rules of a rated race (server/domain/pairs.py), at their thresholds' edges:
3 moves and 10 s, 10 counted races a pair in 24 h, equal foundations drawing when nobody
won; and how ``rate_race`` takes the decision (uncounted runners keep their rating)."""

from __future__ import annotations

from server.domain.pairs import (
    MIN_MOVES,
    MIN_TIME_MS,
    PAIR_LIMIT,
    SANDBAG_REPORT,
    SANDBAG_WARN,
    SANDBAG_WINDOW,
    Pair,
    Run,
    decide,
    quick_resign,
    sandbag_counts,
)
from server.domain.ratings import Rating, Runner, rate_race


def run(
    pid: int, moves: int = 50, time_ms: int = 60_000, outcome: str = "resigned", f: int = 10
) -> Run:
    return Run(pid, moves, time_ms, outcome, f)


def test_a_short_run_moves_nobodys_rating_at_the_edges() -> None:
    assert decide([run(1, moves=MIN_MOVES), run(2, f=11)], {}) == [Pair(1, 2, "counted")]
    assert decide([run(1, moves=MIN_MOVES - 1), run(2)], {}) == [Pair(1, 2, "short")]
    assert decide([run(1, time_ms=MIN_TIME_MS), run(2, f=11)], {})[0].reason == "counted"
    assert decide([run(1, time_ms=MIN_TIME_MS - 1), run(2)], {})[0].reason == "short"
    # Three runners, one short: only the pair without them counts.
    got = decide([run(3, moves=1), run(1), run(2, f=12)], {})
    assert [(p.a, p.b, p.reason) for p in got] == [
        (1, 2, "counted"),
        (1, 3, "short"),
        (2, 3, "short"),
    ]


def test_a_pair_counts_ten_races_in_a_day() -> None:
    assert decide([run(1), run(2, f=11)], {(1, 2): PAIR_LIMIT - 1})[0].reason == "counted"
    assert decide([run(1), run(2, f=11)], {(1, 2): PAIR_LIMIT})[0].reason == "limit"
    assert not Pair(1, 2, "limit").counts and Pair(1, 2, "draw").counts


def test_equal_foundations_draw_when_nobody_won() -> None:
    assert decide([run(1, f=20), run(2, f=20)], {})[0].reason == "draw"
    assert decide([run(1, f=20), run(2, f=21)], {})[0].reason == "counted"
    won = [run(1, outcome="won", f=52), run(2, f=20), run(3, f=20)]
    assert [p.reason for p in decide(won, {})] == ["counted", "counted", "counted"]


def test_rate_race_takes_the_decision() -> None:
    ann, bob = Runner(1, Rating(), 1), Runner(2, Rating(), 2)
    [a, b] = rate_race([ann, bob], {(1, 2): "draw"})
    assert a.after.rating == b.after.rating == 1500.0 and a.games[0].score == 0.5
    [a, b] = rate_race([ann, bob], {})
    assert (a.after, b.after, a.games) == (Rating(), Rating(), ())
    assert rate_race([ann, bob], {(1, 2): "rank"}) == rate_race([ann, bob])


def test_the_sandbag_watch_counts_quick_resigns_to_one_opponent() -> None:
    assert quick_resign(run(1, moves=2, outcome="resigned"))
    assert quick_resign(run(1, time_ms=MIN_TIME_MS - 1, outcome="resigned"))
    assert not quick_resign(run(1, moves=MIN_MOVES, outcome="resigned"))
    assert not quick_resign(run(1, moves=0, outcome="lost"))
    to_bob = (True, frozenset({2}))
    honest = (False, frozenset[int]())
    # Only the last 7 count: a quick resign 8 results back is forgotten.
    recent = [to_bob] * 3 + [honest] * 4 + [to_bob]
    assert sandbag_counts(recent) == {2: SANDBAG_WARN}
    assert sandbag_counts([to_bob] * SANDBAG_REPORT) == {2: 4}
    assert sandbag_counts([to_bob, (True, frozenset({3}))] * 3) == {2: 3, 3: 3}
    assert SANDBAG_WINDOW == 7 and SANDBAG_WARN == 3 and SANDBAG_REPORT == 4


def test_a_second_link_is_one_device_or_registrations_there_within_a_day() -> None:
    from server.domain.pairs import LINK_WINDOW_S, Run, link, shared_address

    def r(pid: int, address: str = "a", device: str = "") -> Run:
        return Run(pid, 50, 60_000, "won", 52, address, device)

    assert [(x.player_id, y.player_id) for x, y in shared_address([r(2), r(1), r(3, "b")])] == [
        (1, 2)
    ]
    assert shared_address([r(1, ""), r(2, "")]) == []  # no address known: nothing shared
    near = {1: ("a", 0.0), 2: ("a", float(LINK_WINDOW_S))}
    far = {1: ("a", 0.0), 2: ("a", float(LINK_WINDOW_S + 1))}
    assert link(r(1), r(2), near) == "registered"
    assert link(r(1), r(2), far) is None
    assert link(r(1), r(2), {1: ("b", 0.0), 2: ("b", 0.0)}) is None  # registered elsewhere
    assert link(r(1, device="x" * 16), r(2, device="x" * 16), far) == "device"
    assert link(r(1, device=""), r(2, device=""), far) is None
    assert decide([r(1), r(2)], {}, linked={(1, 2)}) == [Pair(1, 2, "linked")]
    assert not Pair(1, 2, "linked").counts
