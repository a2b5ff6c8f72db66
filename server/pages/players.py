"""``/players/NAME``: a player's page (docs/protocol.md 4.27), HTML with the rating's
history drawn as inline SVG, or JSON (the wire's ``player_page`` fields)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ..domain.leaderboard import player_page
from ..domain.replays import message_json
from ..storage.ratings import PlayerStats
from .common import TEMPLATES, format_time, player_href, short_date

#: The chart's drawing box, in SVG user units (it scales to the page's width).
CHART_W, CHART_H, CHART_PAD = 600, 160, 12


@dataclass(frozen=True, slots=True)
class RatingChart:
    """A rating history drawn as an SVG polyline: numbers only, so nothing a player typed
    goes into the drawing."""

    points: str
    low: int
    high: int
    first_ms: int
    last_ms: int
    last_x: float
    last_y: float


def rating_chart(ratings: tuple[tuple[int, int], ...]) -> RatingChart | None:
    """The history's points in the chart's box (oldest at the left, evenly spaced by race,
    so a burst of races in one evening does not squash into a line); None without any."""
    if not ratings:
        return None
    values = [r for _, r in ratings]
    low, high = min(values), max(values)
    span = max(high - low, 50)  # a flat history still draws as a line, mid-height
    mid = (high + low) / 2
    inner_w, inner_h = CHART_W - 2 * CHART_PAD, CHART_H - 2 * CHART_PAD
    n = len(values)
    xy = []
    for i, v in enumerate(values):
        x = CHART_PAD + (inner_w * i / (n - 1) if n > 1 else inner_w / 2)
        y = CHART_PAD + inner_h * (0.5 - (v - mid) / span)
        xy.append((round(x, 1), round(y, 1)))
    return RatingChart(
        points=" ".join(f"{x},{y}" for x, y in xy),
        low=low,
        high=high,
        first_ms=ratings[0][0],
        last_ms=ratings[-1][0],
        last_x=xy[-1][0],
        last_y=xy[-1][1],
    )


def player_json(stats: PlayerStats) -> dict[str, Any]:
    """``/players/NAME?format=json``: the fields of ``player_page``."""
    data = message_json(player_page(stats))
    return data


def render_player_html(stats: PlayerStats) -> str:
    """A player's page (``templates/player.html``): rating, its chart as inline SVG,
    races, wins, best times, the daily streak. No script; the name is escaped."""

    def day(ms: int) -> str:
        return short_date(dt.datetime.fromtimestamp(ms / 1000, dt.UTC).date())

    return TEMPLATES.get_template("player.html").render(
        p=stats,
        chart=rating_chart(stats.ratings),
        width=CHART_W,
        height=CHART_H,
        day=day,
        time=format_time,
        json_href=player_href(stats.name) + "?format=json",
    )
