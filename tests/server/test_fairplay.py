"""Fair play through a real server (issue 40 items 1, 2 and 5): the operator's thresholds
reach where runs are judged, and nothing of the detector ever reaches a client.

The runs are timed by the test client's sleeps and measured on the server's clock, so the
figures asserted are ranges with a wide margin, never exact values."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgpack
from sqlalchemy import select
from sqlalchemy.engine import Connection

from protocol.messages import (
    SERVER_TYPES,
    Board,
    BoardPage,
    MoveMsg,
    Player,
    PlayerPage,
    Resign,
    Result,
    Room,
    Watch,
)
from server.domain.signals import (
    DEFAULT_THRESHOLDS,
    FairPlay,
    Signals,
    Thresholds,
    judge,
)
from server.runtime.executor import RaceServer
from server.storage.moderation_models import ReviewItem
from server.storage.signals_models import RunSignals

from .wire import Client, open_client, room_with, running_server, start_race, winning_line

#: Every name the detector uses for what it stores (``Signals.as_json``, a flag's evidence,
#: the queue's columns): none may be a key of anything a client receives.
DETECTOR_WORDS = frozenset(
    {
        "cv", "window_cv", "fast", "fast_count", "pace", "pace_pct", "pace_percentile",
        "intervals", "signals", "flag", "flags", "flagged", "evidence", "rule", "rules_fired",
        "below", "under_ms", "at_least", "percentile", "review", "queue", "hidden", "auto",
    }
)  # fmt: skip


async def stored(server: RaceServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def read(conn: Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        sig = [dict(r._mapping) for r in conn.execute(select(RunSignals.__table__))]
        queue = [dict(r._mapping) for r in conn.execute(select(ReviewItem.__table__))]
        return sig, queue

    return await server.store.run_sync(read)


def as_signals(figures: dict[str, Any]) -> Signals:
    """A stored run's figures as ``judge`` takes them (the intervals only counted)."""
    return Signals(
        intervals=(0,) * int(figures["n"]),
        cv=figures["cv"],
        window_cv=figures["window_cv"],
        fast_count=int(figures["fast"]),
        pace=float(figures["pace"]),
        pace_percentile=figures["pace_pct"],
        history=int(figures["history"]),
    )


async def play(client: Client, moves: list[str], gaps_s: list[float]) -> None:
    """Send ``moves`` with the pauses ``gaps_s`` (cycled) between them, then resign."""
    for seq, move in enumerate(moves, start=1):
        await client.send(MoveMsg(seq, move))
        await asyncio.sleep(gaps_s[seq % len(gaps_s)])
    await client.send(Resign())


async def test_a_changed_threshold_flags_a_run_the_default_would_not(
    db_url: str, tmp_path: Path
) -> None:
    """Steps of 150 and 450 ms: a CV of about 0.375 (with the 0.1 s offset), above the
    default 0.25 and below the operator's 0.6; no step under 50 ms (a step would have to
    shrink by 100 ms on a loaded machine); 24 kept intervals."""
    strict = Thresholds(cv_below=0.6)
    async with running_server(db_url, tmp_path, fairplay=FairPlay(thresholds=strict)) as server:
        code, line = winning_line()
        ann, bob = await open_client(server, "ann"), await open_client(server, "bob")
        await room_with(ann, bob, code=code)
        await start_race(ann, bob)
        await bob.send(Resign())
        await play(ann, line[:25], [0.15, 0.45])
        await ann.expect(Result)
        signals, queue = await stored(server)
        [run] = [s for s in signals if json.loads(s["flags"])]
        figures = json.loads(run["figures"])
        assert figures["n"] == 24 and figures["fast"] == 0
        assert 0.25 < figures["cv"] < 0.6 and figures["window_cv"] > 0.14, figures
        assert judge(as_signals(figures), DEFAULT_THRESHOLDS) == []  # the default: no flag
        assert [f.rule for f in judge(as_signals(figures), strict)] == ["cv"]
        [flag] = queue
        assert flag["rule"] == "cv" and json.loads(flag["evidence"])["below"] == 0.6
        for c in (ann, bob):
            await c.ws.close()


def keys_of(value: Any) -> set[str]:
    """Every map key anywhere in a decoded frame."""
    if isinstance(value, dict):
        return {str(k) for k in value} | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list | tuple):
        return {k for v in value for k in keys_of(v)}
    return set()


def test_no_server_message_has_a_field_of_the_detector() -> None:
    for kind, cls in SERVER_TYPES.items():
        names = {f.name for f in cls.FIELDS}
        assert not names & DETECTOR_WORDS, (kind, names & DETECTOR_WORDS)


async def test_no_frame_a_client_receives_carries_the_detector(db_url: str, tmp_path: Path) -> None:
    """A bot at 20 ms a move is flagged (all of cv, window_cv and fast); every frame every
    client got (the bot, its opponent, a watcher), through the race, its result, the
    bot's player page and the board, has no key of the detector, and the bot's own page
    and result rows have the same fields as its opponent's."""
    async with running_server(db_url, tmp_path) as server:
        code, line = winning_line()
        bot, bob = await open_client(server, "bot"), await open_client(server, "bob")
        room = await room_with(bot, bob, code=code)
        watcher = await open_client(server, "cyd")
        await watcher.send(Watch(room.room))
        await watcher.expect(Room)
        await start_race(bot, bob)
        await bob.send(Resign())
        await play(bot, line[:60], [0.02])
        result = await bot.expect(Result)
        await bob.expect(Result)
        _, queue = await stored(server)
        assert {q["rule"] for q in queue} == {"cv", "window_cv", "fast"}  # flagged indeed
        pages: dict[str, PlayerPage] = {}
        for c in (bot, bob, watcher):
            for name in ("bot", "bob"):
                await c.send(Player(name))
                pages[name] = await c.expect(PlayerPage)
            await c.send(Board("deal", code=code))
            await c.expect(BoardPage)
        rows = {r.name: r for r in result.ranks}
        assert type(rows["bot"]) is type(rows["bob"])
        assert {f.name for f in type(pages["bot"]).FIELDS} == {
            f.name for f in type(pages["bob"]).FIELDS
        }
        for c in (bot, bob, watcher):
            assert c.raw, "every client got frames"
            for data in c.raw:
                frame = msgpack.unpackb(data, raw=False)
                assert not keys_of(frame) & DETECTOR_WORDS, frame
                assert b"window_cv" not in data and b"evidence" not in data
        assert any(isinstance(f, Result) for f in watcher.frames)  # it watched to the end
        for c in (bot, bob, watcher):
            await c.ws.close()
