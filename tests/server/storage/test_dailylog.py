"""The daily's log in the database: a kept day is appended in its own transaction, a rival
choice appends nothing, concurrent appends keep one chain, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime as dt

from protocol import GameCode, Rules
from protocol.commitment import commitment
from protocol.dailylog import EntryKind, verify_chain
from server.domain.daily import DailyChoice
from server.storage import dailylog
from server.storage.sql import SqlStore

CLASSIC = Rules.parse("C")
NOON = dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC).timestamp()
SALT = "5a" * 16


def _choice(day: int, seed: int, salt: str | None = SALT) -> DailyChoice:
    return DailyChoice(dt.date(2026, 12, day), GameCode(CLASSIC, seed), 0, 1, ("AS>F",), 10, salt)


async def test_a_kept_day_is_in_the_log_once(store: SqlStore) -> None:
    first = await store.save_daily_deal(_choice(7, 1), now=NOON)
    # A rival process's choice of the same day keeps the first and appends nothing.
    assert await store.save_daily_deal(_choice(7, 2, "6b" * 16), now=NOON + 1) == first
    await store.save_daily_deal(_choice(8, 3), now=NOON + 86_400)
    # A day from before commitments has none to log.
    await store.save_daily_deal(_choice(9, 4, None), now=NOON + 2 * 86_400)
    entries = await dailylog.entries(store.engine)
    assert [(e.n, e.kind, e.date) for e in entries] == [
        (0, EntryKind.DAY, "2026-12-07"),
        (1, EntryKind.DAY, "2026-12-08"),
    ]
    assert entries[0].body == {
        "commitment": commitment(GameCode(CLASSIC, 1), SALT),
        "rules": "C",
    }
    assert entries[0].at == "2026-12-07T12:00:00Z"
    check = verify_chain([e.to_json() for e in entries])
    assert check.ok and check.head is not None and check.head.n == 1
    assert [e.n for e in await dailylog.entries(store.engine, since=1)] == [1]


async def test_appends_at_once_keep_one_chain(store: SqlStore) -> None:
    # Several processes of a cluster appending at the same moment: each takes its own
    # place (the losers of a place retry from the new head) and the chain stays whole.
    await asyncio.gather(
        *(
            dailylog.append(
                store.engine, EntryKind.BOARD, "2026-12-07", NOON, {"action": "void", "race": i}
            )
            for i in range(6)
        ),
        store.save_daily_deal(_choice(10, 5), now=NOON),
    )
    entries = await dailylog.entries(store.engine)
    assert len(entries) == 7
    assert verify_chain([e.to_json() for e in entries]).ok
    races = {e.body["race"] for e in entries if e.kind is EntryKind.BOARD}
    assert races == set(range(6))
