"""Sliding-window budgets: the limit at its edge, the window's edge, bounded memory."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.rooms.windows import SlidingCounts


def test_the_limit_and_the_window_at_their_edges() -> None:
    w = SlidingCounts(limit=3, window_s=10.0)
    assert all(w.spend("a", t) for t in (0.0, 1.0, 2.0))
    assert w.full("a", 9.99) and not w.spend("a", 9.99)
    assert w.retry_after("a", 5.0) == 5.0
    # At exactly 10 s the first event has left the window.
    assert not w.full("a", 10.0) and w.spend("a", 10.0)
    assert w.count("b", 0.0) == 0 and w.spend("b", 0.0)  # keys apart


def test_no_limit_counts_nothing() -> None:
    w = SlidingCounts(limit=0, window_s=10.0)
    assert all(w.spend("a", 0.0) for _ in range(100)) and len(w) == 0


def test_memory_is_bounded_by_keys_and_by_the_limit() -> None:
    w = SlidingCounts(limit=5, window_s=60.0, max_keys=100)
    for i in range(1000):
        w.add(f"k{i}", float(i) / 100)
    assert len(w) == 100
    for _ in range(1000):
        w.add("hot", 1.0)
    assert w.count("hot", 1.0) == 5


@given(st.lists(st.floats(0, 100, allow_nan=False), max_size=60), st.integers(1, 8))
def test_never_more_than_the_limit_in_any_window(times: list[float], limit: int) -> None:
    w = SlidingCounts(limit=limit, window_s=5.0)
    kept = [t for t in sorted(times) if w.spend("a", t)]
    for t in kept:
        assert sum(1 for u in kept if t - 5.0 < u <= t) <= limit
