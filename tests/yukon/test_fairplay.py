"""``yukon serve``'s fair-play options: every threshold and ``--auto-hide``, by flag and by
environment, defaults as built in, and a setting that means nothing refused in one line
naming its flag (docs/fairplay.md, "Setting the thresholds")."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from server.domain.signals import DEFAULT_THRESHOLDS, AutoHide, Thresholds
from yukon import cli
from yukon.fairplay import THRESHOLD_OPTIONS

from .test_cli import _serve_options, yukon


def test_every_threshold_has_a_flag_and_the_defaults_are_the_built_in_ones() -> None:
    assert {name for _, name, _, _ in THRESHOLD_OPTIONS} == {
        f.name for f in dataclasses.fields(Thresholds)
    }
    options: Any = _serve_options()
    assert options.fairplay.thresholds == DEFAULT_THRESHOLDS
    assert options.fairplay.auto_hide is None  # off unless the operator turns it on


def test_flags_and_variables_set_each_threshold_and_a_flag_wins() -> None:
    options: Any = _serve_options(
        "--flag-cv", "0.3", "--flag-window-cv", "0.10", "--flag-window", "20",
        "--flag-fast-ms", "40", "--flag-fast-count", "5", "--flag-pace-percentile", "99.5",
        "--flag-pace-history", "500", "--flag-pace-window-ms", "20000",
        "--flag-offset-ms", "0", "--flag-min-intervals", "30", "--auto-hide", "3/24",
        env={"YUKON_FLAG_CV": "0.9", "YUKON_AUTO_HIDE": "9/9"},
    )  # fmt: skip
    assert options.fairplay.thresholds == Thresholds(
        cv_below=0.3,
        window_cv_below=0.10,
        window=20,
        fast_ms=40,
        fast_count_at_least=5,
        pace_percentile_above=99.5,
        pace_min_history=500,
        pace_window_ms=20_000,
        offset_ms=0,
        min_intervals=30,
    )
    assert options.fairplay.auto_hide == AutoHide(3, 24.0)
    options = _serve_options(env={"YUKON_FLAG_WINDOW_CV": "0.1", "YUKON_AUTO_HIDE": "2/0.5"})
    assert options.fairplay.thresholds.window_cv_below == 0.1
    assert options.fairplay.auto_hide == AutoHide(2, 0.5)
    assert _serve_options("--auto-hide", "off").fairplay.auto_hide is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("--flag-cv", "25"), ("--flag-cv", "cv_below", "0 to 10")),
        (("--flag-window-cv", "-0.1"), ("--flag-window-cv",)),
        (("--flag-window", "1"), ("--flag-window", "2 to 1000")),
        (("--flag-fast-count", "0"), ("--flag-fast-count", "at least 1")),
        (("--flag-pace-percentile", "101"), ("--flag-pace-percentile", "0 to 100")),
        (("--flag-pace-percentile", "nan"), ("--flag-pace-percentile",)),
        (("--flag-pace-window-ms", "10"), ("--flag-pace-window-ms",)),
        (("--flag-min-intervals", "-1"), ("--flag-min-intervals",)),
        (("--flag-fast-ms", "fast"), ("--flag-fast-ms", "whole number")),
        (("--auto-hide", "3"), ("--auto-hide", "K/H")),
        (("--auto-hide", "0/24"), ("--auto-hide", "flag count")),
        (("--auto-hide", "3/0"), ("--auto-hide", "hours")),
        (("--auto-hide", "3/x"), ("--auto-hide", "K/H")),
    ],
)
def test_a_threshold_that_means_nothing_is_one_line_naming_its_flag(
    argv: tuple[str, ...], words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process (the same parser and checks as ``yukon serve``; none of these
    starts a server); the last test runs one as a process."""
    try:
        status = cli.main(["serve", *argv])
    except SystemExit as exc:  # argparse's own refusals exit, as in a process
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err, err
    assert err.count("\n") == 1, err
    for word in words:
        assert word in err, err


def test_yukon_serve_refuses_a_bad_threshold_as_a_process() -> None:
    result = yukon("serve", "--flag-cv", "25", "--auto-hide", "3/24")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == "yukon serve: --flag-cv: cv_below must be from 0 to 10 (got 25.0)\n"


def test_thresholds_and_auto_hide_check_themselves() -> None:
    with pytest.raises(ValueError, match="cv_below"):
        Thresholds(cv_below=float("inf"))
    with pytest.raises(ValueError, match="window"):
        Thresholds(window=True)  # a bool is not a count
    assert AutoHide.parse(" OFF ") is None and AutoHide.parse("1/1") == AutoHide(1, 1.0)
    assert AutoHide(3, 24).describe() == "3/24" and AutoHide(3, 24).window_s == 86_400
