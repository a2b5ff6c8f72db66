"""The terminal client checks a past daily against the server's daily's log: a good chain
and day are said so, an edited entry is a broken log, a rewritten chain is a warning
against the head it kept, a commitment the log does not hold is a warning, and a server
with no log (or none at all) is "unchecked", never an error. Against a real server."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from sqlalchemy import text

from client.dailylog import HeadMemory, check_day, judge, log_url
from protocol.dailylog import EntryKind, make_entry

from ..server.wire import running_server, url

NOON = dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC).timestamp()
TODAY = dt.date(2026, 12, 7)


class Clock:
    def __call__(self) -> float:
        return NOON


def test_the_log_is_beside_the_websocket_address() -> None:
    assert log_url("ws://h:8765") == "http://h:8765/daily/log?format=json"
    assert log_url("wss://e.org/yukon/") == "https://e.org/yukon/daily/log?format=json"


def test_judging_what_a_server_sent() -> None:
    day = make_entry(
        None,
        EntryKind.DAY,
        "2026-12-01",
        "2026-12-01T00:00:00Z",
        {"commitment": "ab" * 32, "rules": "C"},
    )
    served = {"entries": [day.to_json()]}
    good, head = judge(served, "2026-12-01", "ab" * 32, None)
    assert good.good and head is not None and head.hash == day.hash
    swapped, _ = judge(served, "2026-12-01", "cd" * 32, None)
    assert not swapped.good and "NOT the one" in swapped.text
    missing, _ = judge(served, "2026-11-30", "ab" * 32, None)
    assert not missing.good and "not in the daily's log" in missing.text
    junks: list[object] = [None, [], {"entries": 3}, {"entries": [{"n": 0}]}]
    for junk in junks:
        verdict, kept = judge(junk, "2026-12-01", "ab" * 32, None)
        assert not verdict.good and kept is None


async def test_a_past_day_checked_against_a_real_server(tmp_path: Path) -> None:
    heads = HeadMemory(tmp_path / "config")
    db = f"sqlite:///{tmp_path}/y.db"
    async with running_server(db, tmp_path, wall_clock=Clock()) as server:
        past = TODAY - dt.timedelta(days=3)
        choice = await server.boards.dailies.get(past)
        good = await check_day(url(server), past.isoformat(), choice.commitment, heads)
        assert good.good and "chain intact" in good.text, good.text
        kept = heads.load(url(server))
        assert kept is not None
        # The operator rewrites the past: the day's commitment changed and every later
        # hash recomputed, so the chain verifies on its own; it no longer extends the
        # head this client kept.
        async with server.store.engine.begin() as conn:
            rows = (
                await conn.execute(text("SELECT n, kind, day, at, body FROM daily_log ORDER BY n"))
            ).all()
            await conn.execute(text("DELETE FROM daily_log"))
            previous = None
            for n, kind, day, at, body in rows:
                fields = json.loads(body)
                if day == past.isoformat():
                    fields["commitment"] = "0" * 64
                previous = make_entry(previous, EntryKind(kind), day, at, fields)
                await conn.execute(
                    text(
                        "INSERT INTO daily_log (n, kind, day, at, body, prev, hash, appended_at)"
                        " VALUES (:n, :k, :d, :a, :b, :p, :h, CURRENT_TIMESTAMP)"
                    ),
                    {
                        "n": n,
                        "k": kind,
                        "d": day,
                        "a": at,
                        "b": json.dumps(fields),
                        "p": previous.prev,
                        "h": previous.hash,
                    },
                )
        warned = await check_day(url(server), past.isoformat(), "0" * 64, heads)
        assert (
            not warned.good
            and warned.text.startswith("WARNING")
            and "does not extend" in warned.text
        )
        assert heads.load(url(server)) == kept  # never replaced by a chain that does not extend it
        # An edit without recomputing the hash is a broken log.
        async with server.store.engine.begin() as conn:
            await conn.execute(text("UPDATE daily_log SET at = '2000-01-01T00:00:00Z' WHERE n = 0"))
        broken = await check_day(url(server), past.isoformat(), choice.commitment, heads)
        assert not broken.good and "broken" in broken.text
        port = server.port
    gone = await check_day(f"ws://127.0.0.1:{port}", past.isoformat(), choice.commitment, heads)
    assert not gone.good and "could not be fetched" in gone.text
    assert not (await check_day("nonsense", "2026-12-01", None, heads)).good
