"""``/players/NAME`` and the ratings and streaks of ``/leaderboard`` (docs/protocol.md 1.6
and 4.27), through a real server."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from server.domain.records import PlayerResult, RaceRecord
from server.pages.http import rating_chart

from ..wire import running_server
from .test_http import NOON, TODAY, Clock, add_daily_results, fetch


def rated_race(n: int, ranked: list[tuple[int, str]], ended: float) -> RaceRecord:
    return RaceRecord(
        uid=f"rated-{n}",
        race_id=1000 + n,
        room="ABCDE",
        code="YU1-C-AAAAAAB",
        rules="C",
        daily_date=None,
        started_wall=ended - 60,
        ended_wall=ended,
        results=tuple(
            PlayerResult(
                pid,
                name,
                rank,
                "won" if rank == 1 else "resigned",
                50_000 + rank,
                90,
                500,
                52 if rank == 1 else 10,
                0,
                False,
                (),
            )
            for rank, (pid, name) in enumerate(ranked, start=1)
        ),
        rated=True,
    )


async def test_a_players_page_with_its_chart_and_the_boards_ratings(
    db_url: str, tmp_path: Path
) -> None:
    clock = Clock(NOON)
    async with running_server(db_url, tmp_path, wall_clock=clock) as server:
        await add_daily_results(
            server,
            TODAY,
            [("ann", "won", 61_000, 100, 900, 52), ("<b>o", "resigned", 9_000, 3, 10, 4)],
        )
        ann, bob = 1, 2
        for n in range(3):
            order = [(ann, "ann"), (bob, "<b>o")] if n != 1 else [(bob, "<b>o"), (ann, "ann")]
            await server.store.record_race(rated_race(n, order, NOON - 3600 + 60 * n))

        stats = await server.boards.player_stats("ann")
        assert stats is not None and len(stats.ratings) == 3
        page = await fetch(server, "/players/ANN?format=json")
        assert page.status == 200
        data = page.json()
        assert data == {
            "name": "ann",
            "rating": stats.rating,
            "provisional": True,
            "deviation": stats.deviation,
            "races": 4,
            "wins": 3,
            "best": [{"rules": "C", "time_ms": 50_001}],
            "streak": 1,
            "best_streak": 1,
            "ratings": [list(p) for p in stats.ratings],
            "broke_rules": False,  # no mark (docs/fairplay.md)
            "bot": False,
        }

        html = await fetch(server, "/players/ann")
        assert html.status == 200 and html.headers["content-type"].startswith("text/html")
        text = html.text
        assert f"{stats.rating}?" in text
        chart = rating_chart(stats.ratings)
        assert chart is not None
        assert f'<polyline points="{chart.points}"/>' in text
        assert "<script" not in text

        # A name that needs escaping and encoding: linked from the board, escaped here.
        board = await fetch(server, "/leaderboard")
        assert '<a href="/players/%3Cb%3Eo"><bdi>&lt;b&gt;o</bdi></a>' in board.text
        as_json = (await fetch(server, "/leaderboard?format=json")).json()
        shown = {r["name"]: (r["rating"], r["streak"]) for r in as_json["rows"]}
        bob_stats = await server.boards.player_stats("<b>o")
        assert bob_stats is not None
        assert shown == {"ann": (stats.rating, 1), "<b>o": (bob_stats.rating, 0)}
        bob_page = await fetch(server, "/players/%3Cb%3Eo")
        assert bob_page.status == 200 and "&lt;b&gt;o" in bob_page.text
        assert "<b>o" not in bob_page.text  # only ever escaped

        missing = await fetch(server, "/players/nobody?format=json")
        assert missing.status == 404 and missing.json()["error"] == "unknown_player"
        assert (await fetch(server, "/players/nobody")).status == 404
        assert (await fetch(server, "/players/%FF")).status == 404

        # Two days on, ann's streak is over; the board of the day still shows her now.
        clock.now += 2 * 86_400
        later = (await fetch(server, f"/leaderboard?date={TODAY}&format=json")).json()
        assert {r["name"]: r["streak"] for r in later["rows"]} == {"ann": 0, "<b>o": 0}
        assert dataclasses.asdict(await server.boards.player_stats("ann"))["best_streak"] == 1  # type: ignore[arg-type]


def test_the_chart_spreads_races_evenly_and_keeps_a_flat_history_mid_height() -> None:
    assert rating_chart(()) is None
    one = rating_chart(((0, 1500),))
    assert one is not None and one.points == "300.0,80.0"
    flat = rating_chart(((0, 1500), (1, 1500), (2, 1500)))
    assert flat is not None and flat.points == "12.0,80.0 300.0,80.0 588.0,80.0"
    up = rating_chart(((0, 1400), (5, 1600)))
    assert up is not None and up.points == "12.0,148.0 588.0,12.0"
    assert (up.low, up.high) == (1400, 1600)
