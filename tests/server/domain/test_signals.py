"""server.domain.signals: the figures, the exclusions and each flag rule at its threshold's edge."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from server.domain.signals import (
    DEFAULT_THRESHOLDS,
    Thresholds,
    compute,
    face_up_from,
    judge,
    of_journal,
)

WINNING = (Path(__file__).resolve().parents[2] / "data" / "winning-game.txt").read_text().split()


def times_of(intervals: list[int], start: int = 1_000) -> list[int]:
    """Action times from intervals (the first action at ``start``)."""
    return [start, *itertools.accumulate(intervals, initial=start)][1:]


def rules(intervals: list[int], **kwargs: object) -> set[str]:
    return {f.rule for f in judge(compute(times_of(intervals), **kwargs))}  # type: ignore[arg-type]


def test_times_of_builds_one_more_time_than_intervals() -> None:
    assert times_of([5, 7]) == [1_000, 1_005, 1_012]


def test_cv_at_its_edge_drops_the_first_interval_and_adds_a_tenth_of_a_second() -> None:
    # 200 and 400 ms alternating: 300 and 500 with the offset, CV exactly 0.25 (not below).
    run = [5_000] + [200, 400] * 20
    signals = compute(times_of(run))
    assert signals.cv == 0.25
    assert "cv" not in rules(run)
    # 210 and 390: CV 0.09 / 0.4 = 0.225 < 0.25.
    assert "cv" in rules([5_000] + [210, 390] * 20)


def test_window_cv_at_its_edge() -> None:
    # A varied run with one stretch of 14 intervals at CV exactly 0.10 (100/1000: 800 and
    # 1000 ms, each + 0.1 s), the default threshold.
    varied = [400, 3_000, 900, 2_500, 600, 4_000] * 4
    edge = varied + [800, 1_000] * 7 + varied
    signals = compute(times_of(edge))
    assert signals.window_cv == DEFAULT_THRESHOLDS.window_cv_below == 0.10
    assert "window_cv" not in rules(edge)
    below = varied + [801, 999] * 7 + varied
    assert rules(below) == {"window_cv"}


def test_fast_intervals_count_from_three_and_fifty_ms_is_not_fast() -> None:
    varied = [400, 3_000, 900, 2_500, 600, 4_000] * 5
    assert "fast" not in rules([*varied, 49, 49, *varied])
    assert "fast" not in rules([*varied, 50, 50, 50, *varied])
    assert "fast" in rules([*varied, 49, 49, 49, *varied])
    assert compute(times_of([*varied, 10, 3000, 20])).fast_count == 2


def test_pace_flags_only_with_enough_human_history() -> None:
    bot = [300] * 200  # 100 intervals in 30 s: 3.33 moves a second, varied timing aside
    humans = sorted(0.5 + i / 1_000 for i in range(200))
    few = compute(times_of(bot), human_paces=humans[:199])
    assert few.pace_percentile == 100.0
    assert "pace" not in {f.rule for f in judge(few)}
    enough = compute(times_of(bot), human_paces=humans)
    flags = {f.rule: f.evidence for f in judge(enough)}
    assert flags["pace"]["history"] == 200
    # Beyond the 99.9th percentile means faster than all but a thousandth: at 100.0 of 200, yes.
    assert compute(times_of([2_000] * 30), human_paces=humans).pace_percentile == 0.0


def test_sustained_pace_is_the_busiest_thirty_seconds() -> None:
    # 60 intervals of 500 ms (30 s), then slow: the busiest 30 s hold 60 intervals, 2 a second.
    signals = compute(times_of([500] * 60 + [5_000] * 10))
    assert signals.pace == 2.0
    # A short run is divided by the full 30 s: 10 moves in 1 s is 0.33 a second.
    assert round(compute(times_of([100] * 10)).pace, 2) == 0.33


def test_short_runs_are_not_judged() -> None:
    limit = DEFAULT_THRESHOLDS.min_intervals
    assert rules([20] * (limit - 1)) == set()
    assert rules([20] * limit) == {"cv", "window_cv", "fast"}


def test_resends_after_a_resume_and_the_closing_stretch_are_left_out() -> None:
    human = [1_500, 900, 2_200, 1_200, 3_100, 800] * 5  # 30 intervals, actions 0..30
    # A resume before action 10: actions 10..13 are resent at 5 ms apart, 14 is the first after.
    burst = [*human[:9], 20000, 5, 5, 5, 1000, *human[9:]]
    resent = {10, 11, 12, 13}
    assert rules(burst) == {"fast"}
    signals = compute(times_of(burst), resent=resent, after_resume={14})
    assert signals.fast_count == 0
    assert 20_000 not in signals.intervals
    assert judge(signals) == []
    # The closing stretch: every card face up from action 31 on, then ten sends home at 30 ms.
    closing = human + [30] * 10
    assert "fast" in rules(closing)
    assert rules(closing, face_up_from=len(human) + 1) == set()


def test_thresholds_are_settable() -> None:
    run = [5_000] + [210, 390] * 20
    assert "cv" not in {f.rule for f in judge(compute(times_of(run)), Thresholds(cv_below=0.2))}


def test_a_bot_at_twenty_ms_a_move_is_flagged() -> None:
    humans = sorted(random.Random(1).uniform(0.2, 1.2) for _ in range(500))
    signals = compute(times_of([20] * 90), human_paces=humans)
    assert {f.rule for f in judge(signals)} == {"cv", "window_cv", "fast", "pace"}


def test_runs_at_human_pace_are_not_flagged() -> None:
    """Log-normal intervals, median 1.5 s, sigma 0.5 of the log: 200 runs of 120, none flagged."""
    rng = random.Random(40)
    history = sorted(
        compute(times_of([int(1_500 * rng.lognormvariate(0, 0.5)) for _ in range(120)])).pace
        for _ in range(300)
    )
    for _ in range(200):
        run = [int(1_500 * rng.lognormvariate(0, 0.5)) for _ in range(120)]
        signals = compute(times_of(run), human_paces=history)
        assert judge(signals) == [], signals.as_json()


def test_a_stored_journal_leaves_out_the_sends_home_once_every_card_is_face_up() -> None:
    code, moves = WINNING[0], WINNING[1:]
    point = face_up_from(code, moves)
    assert point is not None and 0 < point < len(moves)
    # A human pace while cards are face down, then the rest sent home 30 ms apart.
    rng = random.Random(3)
    ms, journal = 0, []
    for i, move in enumerate(moves):
        ms += int(1_500 * rng.lognormvariate(0, 0.5)) if i < point else 30
        journal.append((ms, move))
    assert judge(of_journal(code, journal)) == []
    assert "fast" in {f.rule for f in judge(compute([t for t, _ in journal]))}
    assert face_up_from(code, ["KD>7"]) is None  # an action that does not replay
    assert face_up_from("C-0001234", moves) is None  # nor a code


def test_resume_marks_take_the_burst_at_each_mark_and_nothing_past_the_end() -> None:
    from server.domain.signals import BURST_MS, resume_marks

    times = [0, 1000, 9000, 9000 + BURST_MS - 1, 9000 + 2 * BURST_MS - 2, 12000, 13000]
    resent, after = resume_marks(times, [2])
    assert after == {2} and resent == {2, 3, 4}
    # An interval of exactly BURST_MS ends the burst.
    resent, after = resume_marks([0, 500, 500 + BURST_MS], [1])
    assert after == {1} and resent == frozenset()
    # A mark with no action after it (the player came back and did nothing) marks nothing.
    assert resume_marks([0, 500], [2]) == (frozenset(), frozenset())
