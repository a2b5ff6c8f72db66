"""``server/pages/web/session.js``'s pure logic for issue 28, run under Node.

The headline of the results (told from the ranks alone, so that it never contradicts the
table), the name box's count and refusal, the lobby's lines as lists (a rematch is one line,
not a "not ready" per player), the words of a touch screen, and the `finish` of a run whose
cards are all face up: offered only then, sent with a seq, answered by a whole `race`,
refused with a reason, and sent again after a drop like any unanswered move.
"""

from __future__ import annotations

from typing import Any

from protocol import Game

from .node import HERE, run_node
from .test_app import CODE, winning_line

CHECK = HERE / "session_check.mjs"


def room(state: str, ready: dict[str, bool], host: str = "alice") -> dict[str, Any]:
    return {
        "t": "room",
        "room": "K7WQM",
        "host": host,
        "state": state,
        "max_players": 4,
        "rules": "C",
        "undo": True,
        "hints": False,
        "time_limit": 1800,
        "you": "player",
        "spectators": 0,
        "code": CODE,
        "commitment": None,
        "players": [{"name": n, "ready": r, "connected": True} for n, r in ready.items()],
    }


def race(game: Game, seq: int, state: str = "playing") -> dict[str, Any]:
    return {
        "t": "race",
        "view": game.view(),
        "seq": seq,
        "score": 0,
        "moves": seq,
        "state": state,
        "elapsed_ms": 1000,
        "time_limit": 1800,
    }


def entry(rank: int, name: str, outcome: str, hinted: bool = False) -> dict[str, Any]:
    return {
        "rank": rank,
        "name": name,
        "outcome": outcome,
        "time_ms": 215_900,
        "moves": 90,
        "score": 500,
        "foundations": 52 if outcome == "won" else 6,
        "hinted": hinted,
    }


def test_headlines_names_and_lists() -> None:
    three = [
        entry(1, "ann", "won"),
        entry(2, "bob", "won", hinted=True),
        entry(3, "cy", "resigned"),
    ]
    out = run_node(
        CHECK,
        {
            "headlines": [
                [{"ranks": three}, "ann"],
                [{"ranks": three}, "bob"],
                [{"ranks": three}, "cy"],
                [{"ranks": three}, "dee"],
                [{"ranks": [entry(1, "ann", "won")]}, "ann"],
                [{"ranks": [entry(1, "ann", "timeout")]}, "ann"],
            ],
            "names": ["", "   ", "bob", "x" * 21, "👍" * 20, "  alice  "],
            "lists": [[], ["a"], ["a", "b"], ["a", "b", "c"]],
        },
    )
    assert out["headlines"] == [
        "You won in 3:35.9, #1 of 3",
        "You won with hints in 3:35.9, #2 of 3",
        "You finished #3 of 3 (resigned)",
        "The race is over",
        "You won in 3:35.9",
        "You finished #1 of 1 (out of time)",
    ]
    assert out["names"] == [
        {"ok": False, "text": "type a name: 1-20 characters"},
        {"ok": False, "text": "type a name: 1-20 characters"},
        {"ok": True, "text": "3/20"},
        {"ok": False, "text": "21/20: 1 too many"},
        {"ok": True, "text": "20/20"},  # code points, not UTF-16 units
        {"ok": True, "text": "5/20"},
    ]
    assert out["lists"] == ["", "a", "a and b", "a, b and c"]


def test_a_rematch_and_readiness_read_as_lists() -> None:
    everyone = {"alice": True, "bob": True, "carol": True}
    nobody = {"alice": True, "bob": False, "carol": False}
    steps: list[list[Any]] = [
        ["receive", room("finished", everyone)],
        ["receive", room("lobby", nobody)],
        ["look"],
        ["receive", room("lobby", everyone)],
        ["look"],
    ]
    out = run_node(
        CHECK,
        {
            "scenarios": [
                {"me": "bob", "steps": steps},
                {"me": "bob", "touch": True, "steps": steps[:3]},
                {"me": "alice", "steps": steps[:3]},
            ]
        },
    )
    keys, touch, host = out["scenarios"]
    assert keys[2]["status"] == "rematch: a new deal; press Ready (space)"
    assert keys[4]["status"] == "bob and carol are ready"
    assert touch[2]["status"] == "rematch: a new deal; press Ready"
    assert host[2]["status"] == "rematch: a new deal; you start it once the others are ready"


def test_finish_is_offered_with_every_card_face_up() -> None:
    line = winning_line()
    game = Game.from_code(CODE)
    start = race(game, 0)
    upto = 0
    while "??" in game.view():
        game.play(line[upto])
        upto += 1
    before = race(game, upto)
    for move in line[upto:]:
        game.play(move)
    won = race(game, upto + 1, "won")
    racing = room("racing", {"bob": True})
    finish = {"t": "finish", "seq": upto + 1}
    out = run_node(
        CHECK,
        {
            "scenarios": [
                # Cards face down: no finish.
                {
                    "me": "bob",
                    "steps": [
                        ["receive", racing],
                        ["receive", start],
                        ["look"],
                        ["call", "finish"],
                        ["look"],
                    ],
                },
                # Every card up: finish, answered by the whole race, won.
                {
                    "me": "bob",
                    "steps": [
                        ["receive", racing],
                        ["receive", before],
                        ["look"],
                        ["call", "finish"],
                        ["look"],
                        ["call", "finish"],
                        ["receive", won],
                        ["look"],
                        ["call", "finish"],
                    ],
                },
                # Refused: the reason, and finish may be asked again.
                {
                    "me": "bob",
                    "steps": [
                        ["receive", racing],
                        ["receive", before],
                        ["call", "finish"],
                        ["receive", {"t": "refused", "seq": upto + 1, "reason": "no win found"}],
                        ["look"],
                    ],
                },
                # A drop before the answer: the resync sends the finish again.
                {
                    "me": "bob",
                    "steps": [
                        ["receive", racing],
                        ["receive", before],
                        ["call", "finish"],
                        ["call", "connectionLost", 0],
                        ["receive", before],
                    ],
                },
            ]
        },
    )
    down, up, refused, dropped = out["scenarios"]
    assert down[2]["canFinish"] is False
    assert down[3] == [] and down[4]["kind"] == "error"
    assert up[2]["canFinish"] is True
    assert up[3] == [finish]
    assert up[4]["finishing"] == upto + 1 and "finishing" in up[4]["status"]
    assert up[5] == []  # not twice
    assert up[6] == []
    assert up[7]["state"] == "won" and up[7]["finishing"] is None
    assert up[7]["foundations"] == 52 and up[7]["lastSeq"] == upto + 1
    assert up[7]["status"] == "finished: all 52 cards home, you won!"
    assert up[8] == []
    assert refused[4]["status"] == "finish: no win found" and refused[4]["finishing"] is None
    assert refused[4]["canFinish"] is True
    assert dropped[4] == [finish]


def test_a_resign_is_numbered_answered_and_resent_after_a_restart_lost_it() -> None:
    game = Game.from_code(CODE)
    start = race(game, 0)
    resigned = race(game, 1, "resigned")
    racing = room("racing", {"bob": True})
    out = run_node(
        CHECK,
        {
            "scenarios": [
                {
                    "me": "bob",
                    "steps": [
                        ["receive", racing],
                        ["receive", start],
                        ["call", "resign"],
                        ["receive", resigned],
                        ["look"],
                        # The restarted server lost it: its race says seq 0; resent.
                        ["call", "connectionLost", 0],
                        ["receive", start],
                        # A server that kept it: nothing to send.
                        ["call", "connectionLost", 0],
                        ["receive", resigned],
                    ],
                },
            ]
        },
    )
    [steps] = out["scenarios"]
    assert steps[2] == [{"t": "resign", "seq": 1}]
    assert steps[3] == []
    assert steps[4]["state"] == "resigned" and steps[4]["lastSeq"] == 1
    assert steps[4]["status"] == "you resigned; the others race on"
    assert steps[6] == [{"t": "resign", "seq": 1}]
    assert steps[8] == []
