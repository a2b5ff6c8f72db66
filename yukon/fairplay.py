"""``yukon serve``'s fair-play options: every threshold of ``signals.Thresholds`` and the
automatic hide (issue 40 items 1 and 2; docs/fairplay.md, "Setting the thresholds").

One flag and one environment variable a threshold, as every other setting of ``yukon
serve`` (README, "Settings"), so that a deployment sets one figure without restating
the others. Kept out of ``cli.py``, which holds the options every server needs; these
only an operator tuning the detector touches.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from server.domain.signals import DEFAULT_THRESHOLDS, AutoHide, FairPlay

__all__ = ["THRESHOLD_OPTIONS", "add_fairplay_options", "fairplay_from"]


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


#: (flag, ``Thresholds`` field, parser, help): the variable is ``YUKON_`` and the flag in
#: capitals with ``_`` for ``-`` (``--flag-cv``: ``YUKON_FLAG_CV``).
THRESHOLD_OPTIONS: tuple[tuple[str, str, Callable[[str], float | int], str], ...] = (
    ("flag-cv", "cv_below", _number, "flag a run whose whole-run CV of intervals is below this"),
    (
        "flag-window-cv",
        "window_cv_below",
        _number,
        "flag a run whose lowest CV over any --flag-window intervals is below this",
    ),
    ("flag-window", "window", _whole, "intervals in the window of --flag-window-cv"),
    ("flag-fast-ms", "fast_ms", _whole, "an interval under this many ms is too fast for a hand"),
    (
        "flag-fast-count",
        "fast_count_at_least",
        _whole,
        "flag a run with at least this many intervals under --flag-fast-ms",
    ),
    (
        "flag-pace-percentile",
        "pace_percentile_above",
        _number,
        "flag a run whose sustained pace is beyond this percentile of stored human runs of"
        " its rule set",
    ),
    (
        "flag-pace-history",
        "pace_min_history",
        _whole,
        "the pace rule speaks only once this many human runs of the rule set are stored",
    ),
    (
        "flag-pace-window-ms",
        "pace_window_ms",
        _whole,
        "the busiest stretch (ms) the sustained pace is measured over",
    ),
    ("flag-offset-ms", "offset_ms", _whole, "ms added to every interval before a CV"),
    (
        "flag-min-intervals",
        "min_intervals",
        _whole,
        "a run with fewer kept intervals than this is not judged",
    ),
)


def _env_name(flag: str) -> str:
    return "YUKON_" + flag.upper().replace("-", "_")


def add_fairplay_options(p: argparse.ArgumentParser) -> None:
    """Add a flag for every threshold and ``--auto-hide`` to ``yukon serve``'s parser;
    each default is the environment's value, else the built-in one."""
    for flag, name, parse, help in THRESHOLD_OPTIONS:
        env = _env_name(flag)
        p.add_argument(
            f"--{flag}",
            dest=name,
            type=parse,
            default=os.environ.get(env, str(getattr(DEFAULT_THRESHOLDS, name))),
            metavar="N",
            help=f"{help} ({env})",
        )
    p.add_argument(
        "--auto-hide",
        default=os.environ.get("YUKON_AUTO_HIDE", "off"),
        metavar="K/H",
        help="hide a player with K flagged runs within H hours from the public boards, as"
        " an operator's hide (undone by yukon mod undo); off: never (YUKON_AUTO_HIDE)",
    )


def fairplay_from(args: argparse.Namespace) -> FairPlay:
    """The thresholds and the hide from the parsed options; ValueError naming the flag
    (``--flag-cv: cv_below must be from 0 to 10 (got 25.0)``) if one means nothing."""
    values: dict[str, Any] = {}
    for flag, name, _, _ in THRESHOLD_OPTIONS:
        value = getattr(args, name)
        try:  # one field at a time, so the error names the flag that is wrong
            replace(DEFAULT_THRESHOLDS, **{name: value})
        except (ValueError, TypeError) as exc:
            raise ValueError(f"--{flag}: {exc}") from None
        values[name] = value
    try:
        auto_hide = AutoHide.parse(args.auto_hide)
    except ValueError as exc:
        raise ValueError(f"--auto-hide: {exc}") from None
    return FairPlay(thresholds=replace(DEFAULT_THRESHOLDS, **values), auto_hide=auto_hide)
