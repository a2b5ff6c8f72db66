"""Two runners of a rated race from one address (issue 40 item 4, docs/ratings.md "One
address"), on both backends: the pair goes to the review queue and still counts, unless a
second link joins them (one device id, or both names registered from that address within
24 h), and then it counts nothing between them; recompute replays the decision."""

from __future__ import annotations

import dataclasses
import json

from sqlalchemy import select
from sqlalchemy.engine import Connection

from server.domain.pairs import LINK_WINDOW_S
from server.domain.records import PlayerResult, RaceRecord
from server.storage.moderation_models import ReviewItem
from server.storage.pairs_models import RatingPairRow
from server.storage.sql import SqlStore

from .test_sql import T0, race, res

HOME = "203.0.113.7"


def from_(result: PlayerResult, address: str = HOME, device: str = "") -> PlayerResult:
    return dataclasses.replace(result, address=address, device=device)


def rated(record: RaceRecord) -> RaceRecord:
    return dataclasses.replace(record, rated=True)


def reasons(conn: Connection) -> list[str]:
    t = RatingPairRow.__table__
    return [r.reason for r in conn.execute(select(t).order_by(t.c.race_id)).all()]


def queued(conn: Connection) -> list[dict[str, object]]:
    t = ReviewItem.__table__
    return [dict(r._mapping) for r in conn.execute(select(t).order_by(t.c.id)).all()]


async def test_one_address_alone_queues_the_pair_and_it_still_counts(store: SqlStore) -> None:
    a = await store.register_player(name="ann", now=T0, address=HOME)
    b = await store.register_player(name="bob", now=T0 - LINK_WINDOW_S - 1, address=HOME)
    changes = await store.record_race(rated(race(from_(res(a, rank=1)), from_(res(b, rank=2)))))
    assert all(ch.change != 0 for ch in changes.values())
    assert await store.run_sync(reasons) == ["counted"]
    [item] = await store.run_sync(queued)
    assert item["kind"] == "address" and item["player_id"] == a.player_id
    assert item["other_id"] == b.player_id
    assert json.loads(str(item["evidence"])) == {"address": HOME, "link": None, "counted": True}


async def test_names_registered_there_within_a_day_are_linked_and_count_nothing(
    store: SqlStore,
) -> None:
    a = await store.register_player(name="ann", now=T0, address=HOME)
    b = await store.register_player(name="bob", now=T0 + LINK_WINDOW_S, address=HOME)  # the edge
    c = await store.register_player(name="cyd", now=T0)  # elsewhere, no address kept
    changes = await store.record_race(
        rated(
            race(
                from_(res(a, rank=1)),
                from_(res(b, rank=2, time_ms=70_000)),
                from_(res(c, rank=3, time_ms=80_000), address="198.51.100.1"),
            )
        )
    )
    assert await store.run_sync(reasons) == ["linked", "counted", "counted"]
    # ann and bob still play cyd: both ratings move, by their games against cyd alone.
    assert all(changes[p.player_id].change != 0 for p in (a, b, c))
    [item] = await store.run_sync(queued)
    assert json.loads(str(item["evidence"]))["link"] == "registered"
    assert (await store.recompute_ratings()).identical


async def test_one_device_links_names_registered_anywhere_and_anywhen(store: SqlStore) -> None:
    a = await store.register_player(name="ann", now=T0)
    b = await store.register_player(name="bob", now=T0 - 30 * LINK_WINDOW_S)
    device = "d" * 24
    changes = await store.record_race(
        rated(race(from_(res(a, rank=1), device=device), from_(res(b, rank=2), device=device)))
    )
    assert {ch.change for ch in changes.values()} == {0}
    assert await store.run_sync(reasons) == ["linked"]
    [item] = await store.run_sync(queued)
    assert json.loads(str(item["evidence"]))["link"] == "device"
    assert (await store.recompute_ratings()).identical


async def test_two_addresses_or_none_queue_nothing(store: SqlStore) -> None:
    a = await store.register_player(name="ann", now=T0, address=HOME)
    b = await store.register_player(name="bob", now=T0, address=HOME)
    await store.record_race(
        rated(race(from_(res(a, rank=1)), from_(res(b, rank=2), address="198.51.100.1")))
    )
    await store.record_race(rated(race(res(a, rank=1), res(b, rank=2), ended=T0 + 1)))
    assert await store.run_sync(reasons) == ["counted", "counted"]
    assert await store.run_sync(queued) == []


async def test_a_rated_race_on_an_unproven_deal_moves_nobody(store: SqlStore) -> None:
    """docs/ratings.md: the winnable stock's rare fallback (a deal not proven by the
    start) is stored with its pairs ``unproven``, counted by nobody, replayed as such."""
    a = await store.register_player(name="ann", now=T0)
    b = await store.register_player(name="bob", now=T0)
    record = dataclasses.replace(rated(race(res(a, rank=1), res(b, rank=2))), unproven=True)
    changes = await store.record_race(record)
    assert {ch.change for ch in changes.values()} == {0}
    assert await store.run_sync(reasons) == ["unproven"]
    assert (await store.recompute_ratings()).identical
