"""The one way a race time is written, in the terminal client and on the web page.

Pure (no clock): it only formats milliseconds. Shared so that the same race never reads
"00:51.7" in one place and "0:51.7" in another.
"""

from __future__ import annotations

__all__ = ["format_ms"]


def format_ms(ms: int | None, *, tenths: bool = True) -> str:
    """``83456`` as ``1:23.4``; an hour and more as ``1:02:03.4``; None as ``-``.

    Tenths are cut, not rounded, as on a stopwatch: a running clock never shows a time it
    has not reached, and the final time reads as the clock stopped at.
    """
    if ms is None:
        return "-"
    ms = max(0, ms)
    seconds, rest = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    text = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
    return f"{text}.{rest // 100}" if tenths else text
