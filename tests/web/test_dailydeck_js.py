"""``server/pages/web/dailydeck.js`` under Node (issue 29): the countdown from the server's
``next_daily_ms`` on a monotonic clock, never ``Date``; each name's deck settings; suits
as letters; the archive's link (``#archive=YYYY-MM-DD``)."""

from __future__ import annotations

from .node import HERE, run_node


def test_the_countdown_the_deck_and_the_archive_link() -> None:
    seen = run_node(HERE / "dailydeck_check.mjs", None)
    assert seen["before"] == ""  # nothing before the server said
    assert seen["start"] == "Next daily deal in 6:00:00"
    assert seen["later"] == "Next daily deal in 4:57:57"
    assert seen["done"] == "The next daily deal is here"
    assert seen["unchanged"] == "Next daily deal in 4:57:57"
    assert seen["again"] == "Next daily deal in 0:01:30"
    assert seen["fresh"] == {"four": False, "letters": False}
    assert seen["glyphs"] == "♠♥♦♣" and seen["letters"] == "SHDC"
    assert seen["bob"] == {"four": False, "letters": False}  # per name
    assert seen["ann"] == {"four": True, "letters": True}
    assert seen["broken"] == {"four": False, "letters": False}
    assert seen["links"] == ["2026-11-28", None, None, None]
    assert seen["before_day"] == "2026-02-28"
