"""``server/pages/web/announce.js`` under Node, on a fake clock: the live region is given at
most one text a gap, a burst becomes one announcement with only the latest line of each
kind, and the same words twice are still news."""

from __future__ import annotations

from .node import HERE, run_node

CHECK = HERE / "announce_check.mjs"


def test_a_burst_is_one_announcement_with_each_kind_s_latest_line() -> None:
    events = [
        [0, "say", "the race starts in 3", "countdown"],
        [100, "say", "7S to column 4", "status"],
        [200, "say", "that card cannot go there", "refusal"],
        [300, "say", "8H to column 2", "status"],
        [500, "flush"],
        [1000, "say", "the race starts in 2", "countdown"],
        [1100, "flush"],
        [1900, "say", "the race starts in 1", "countdown"],
        [2100, "flush"],
        [3200, "say", "the race starts in 1", "countdown"],
    ]
    told = run_node(CHECK, {"gap": 1000, "events": events})["told"]
    assert told == [
        [0, "the race starts in 3"],
        # Within the gap: held back; the later status replaced the earlier one, the
        # refusal (a kind of its own) kept; the countdown's newer second came first.
        [1000, "that card cannot go there; 8H to column 2; the race starts in 2"],
        [2100, "the race starts in 1"],
        # The same words again: changed (a no-break space), so the region reads them.
        [3200, "the race starts in 1\u00a0"],
    ]


def test_nothing_is_told_without_news_and_empty_text_is_none() -> None:
    events = [[0, "say", "", "status"], [1500, "flush"], [3000, "flush"]]
    assert run_node(CHECK, {"gap": 1000, "events": events})["told"] == []
