"""``server/pages/web/quick.js`` and the `pool` message in ``session.js``, run under Node: what a
waiting player reads (alone: no bots, when others usually play; the count; the wait and
the band counted on with the page's clock), and that a quick room ends the wait."""

from __future__ import annotations

from typing import Any

from .node import HERE, run_node

CHECK = HERE / "quick_check.mjs"


def pool(state: str, waiting: int, waited_ms: int, band: int, usual: str | None = None) -> Any:
    return {
        "t": "pool",
        "state": state,
        "waiting": waiting,
        "waited_ms": waited_ms,
        "max_wait_ms": 20000,
        "band": band,
        "usual": usual,
    }


def test_what_a_waiting_player_reads() -> None:
    alone = {**pool("waiting", 1, 0, 75, "most races start 18:00-22:00 UTC"), "at": 0}
    crowd = {**pool("waiting", 3, 4000, 175), "at": 1000}
    late = {**pool("waiting", 2, 19000, 550), "at": 0}
    out = run_node(CHECK, {"texts": [[alone, 2000], [crowd, 3000], [late, 1500]], "steps": []})
    lone, many, limit = out["texts"]
    assert lone[0].startswith("Nobody else is waiting yet") and "no bots" in lone[0]
    assert lone[1] == "Others usually play then: most races start 18:00-22:00 UTC."
    assert lone[2] == "Waited 0:02 of 0:20, matched within ±125 of your rating."
    assert many == [
        "3 players waiting (you included).",
        "Waited 0:06 of 0:20, matched within ±225 of your rating.",
    ]
    assert limit[-1] == "Waited 0:20 of 0:20, matched any rating."


def test_a_quick_room_or_leaving_ends_the_wait() -> None:
    room = {
        "t": "room",
        "room": "QK7RM",
        "quick": True,
        "max_players": 2,
        "players": [],
        "state": "lobby",
    }
    out = run_node(
        CHECK,
        {
            "texts": [],
            "steps": [
                pool("waiting", 1, 0, 75),
                pool("left", 0, 0, 75),
                pool("waiting", 2, 0, 75),
                room,
            ],
        },
    )
    first, left, again, seated = out["pools"]
    assert first["waiting"] == 1 and first["at"] == 0
    assert left is None and again["at"] == 2000 and seated is None
