"""``server/pages/web/player.js``'s pure helpers, run under Node: the rating history's chart is
drawn as the server's ``/players/NAME`` draws it (``server.pages.http.rating_chart``), and the
words beside names (a provisional rating, a change, a streak)."""

from __future__ import annotations

from server.pages.http import rating_chart

from .node import HERE, run_node

CHECK = HERE / "player_check.mjs"

CHARTS = [
    [[1, 1500]],
    [[1, 1500], [2, 1500], [3, 1500]],
    [[1, 1400], [2, 1600]],
    [[1, 1662], [2, 1590], [3, 1611], [4, 1702], [5, 1688]],
]


def test_the_chart_and_the_words() -> None:
    out = run_node(
        CHECK,
        {
            "charts": CHARTS,
            "ratings": [[None, True], [1662, True], [1662, False]],
            "changes": [None, 12, -5, 0],
            "streaks": [[0, 0], [3, 5], [0, 2]],
        },
    )
    for ratings, points in zip(CHARTS, out["charts"], strict=True):
        chart = rating_chart(tuple((t, r) for t, r in ratings))
        assert chart is not None
        assert " ".join(f"{float(x)},{float(y)}" for x, y in points) == chart.points
    assert out["ratings"] == ["", "1662?", "1662"]
    assert out["changes"] == ["", "+12", "−5", "±0"]
    assert out["streaks"] == [
        "no daily streak yet: win today's daily deal to start one",
        "daily streak 3 (best 5)",
        "daily streak 0 (best 2)",
    ]
