"""The heartbeat's thread and its watchdog (``server.cluster.heartbeat``) against a real Redis.

Timings are shortened (renewals every 0.2 s, a 0.6 s stall limit, a 0.6 s node TTL, codes
and seats every 0.6 s for 1.2 s) so
that lapses show within a second or two; the node uses the module's constants
(docs/cluster.md, "Leases"). Without Redis the tests are skipped, except under
``CI=true``, where that is a failure.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Iterator

import msgpack
import pytest
import redis

from bench.tcp_proxy import TcpProxy
from server.cluster.heartbeat import POLL_S, Heartbeat

REDIS = os.environ.get("YUKON_TEST_REDIS", "redis://127.0.0.1:6379/0")
EVERY = 0.2
STALL = 0.6
NODE_TTL_MS = 600
LEASE_TTL_MS = 1000
LONG_EVERY = 0.6
LONG_TTL_MS = 1200


@pytest.fixture
def r() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(REDIS, socket_connect_timeout=2)
    try:
        client.ping()
    except Exception as exc:
        message = f"Redis at {REDIS} is unreachable: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def prefix(r: redis.Redis) -> Iterator[str]:
    p = f"yukon-test-{secrets.token_hex(4)}:"
    try:
        yield p
    finally:
        for key in r.scan_iter(match=f"{p}*"):
            r.delete(key)


def make(
    prefix: str, url: str = REDIS, **kw: object
) -> tuple[Heartbeat, list[tuple[list[str], list[str]]]]:
    lost: list[tuple[list[str], list[str]]] = []
    kw.setdefault("long_every_s", LONG_EVERY)
    kw.setdefault("long_ttl_ms", LONG_TTL_MS)
    hb = Heartbeat(
        url,
        "n1",
        prefix=prefix,
        loop=asyncio.get_running_loop(),
        on_lost=lambda rooms, codes: lost.append((rooms, codes)),
        renew_every_s=EVERY,
        stall_limit_s=STALL,
        node_ttl_ms=NODE_TTL_MS,
        lease_ttl_ms=LEASE_TTL_MS,
        **kw,  # type: ignore[arg-type]
    )
    return hb, lost


async def beating(hb: Heartbeat, seconds: float) -> None:
    """Be the live loop for ``seconds``: stamp every 50 ms."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        hb.beat()
        await asyncio.sleep(0.05)


async def test_it_renews_the_heartbeat_rooms_seats_and_codes_the_loop_published(
    r: redis.Redis, prefix: str
) -> None:
    hb, lost = make(prefix)
    hb.publish({"ABCDE": [7, 8]}, ["FGHJK", "ABCDE"], {"ABCDE": [(9, "eve")]})
    hb.start()
    try:
        await beating(hb, 1.5)  # past every TTL: only renewals keep the keys
        watchers = r.get(f"{prefix}watchers:ABCDE")
        assert watchers is not None and msgpack.unpackb(watchers) == [[9, "eve"]]
        assert r.get(f"{prefix}node:n1") == b"n1"
        assert r.get(f"{prefix}room:ABCDE") == b"n1"
        assert r.get(f"{prefix}room:FGHJK") == b"n1"
        assert r.get(f"{prefix}seat:7") == b"ABCDE"
        assert r.get(f"{prefix}seat:8") == b"ABCDE"
        assert 0 < r.pttl(f"{prefix}node:n1") <= NODE_TTL_MS
        assert NODE_TTL_MS < r.pttl(f"{prefix}room:ABCDE") <= LEASE_TTL_MS
        assert LEASE_TTL_MS - 3 * EVERY * 1000 < r.pttl(f"{prefix}seat:7") <= LONG_TTL_MS
        assert LEASE_TTL_MS - 3 * EVERY * 1000 < r.pttl(f"{prefix}room:FGHJK") <= LONG_TTL_MS
        assert hb.renewals >= 5 and lost == []
        # A new publication replaces the old: a room it no longer names (closed) goes at
        # the next renewal; its seats lapse.
        hb.publish({}, ["FGHJK"])
        await beating(hb, 1.5)
        assert r.get(f"{prefix}room:ABCDE") is None and r.get(f"{prefix}seat:7") is None
        assert r.get(f"{prefix}room:FGHJK") == b"n1"
    finally:
        await asyncio.to_thread(hb.stop)
    assert not hb.alive


async def test_codes_and_seats_are_written_when_new_or_changed_and_all_renewed_less_often(
    r: redis.Redis, prefix: str
) -> None:
    """Rooms are renewed every time; a seat or a reserved code only when new, changed or
    due (every ``long_every_s``), and all of it at once when the node's own key had lapsed
    (here: Redis lost the keys)."""
    hb, lost = make(prefix, long_every_s=3600.0, long_ttl_ms=60_000)
    hb.publish({"ABCDE": [7, 8]}, ["FGHJK"])
    assert await asyncio.to_thread(hb.renew_once)
    assert r.get(f"{prefix}seat:7") == b"ABCDE" and r.get(f"{prefix}room:FGHJK") == b"n1"
    r.delete(f"{prefix}seat:7", f"{prefix}room:FGHJK", f"{prefix}room:ABCDE")
    # Not due: what was written stays unwritten; the room is renewed every time.
    assert await asyncio.to_thread(hb.renew_once)
    assert r.get(f"{prefix}seat:7") is None and r.get(f"{prefix}room:FGHJK") is None
    assert r.get(f"{prefix}room:ABCDE") == b"n1"
    # A changed seat, a new one and a new code are written at the next renewal.
    hb.publish({"ABCDE": [8], "LMNPQ": [7, 9]}, ["FGHJK", "RSTVW"])
    assert await asyncio.to_thread(hb.renew_once)
    assert r.get(f"{prefix}seat:7") == b"LMNPQ" and r.get(f"{prefix}seat:9") == b"LMNPQ"
    assert r.get(f"{prefix}room:RSTVW") == b"n1"
    assert r.get(f"{prefix}room:FGHJK") is None
    # bob (8) leaves ABCDE, still here: his seat goes at once. Room LMNPQ goes (over, or
    # taken over: its new owner writes the same seats), so its seats are left to lapse;
    # and a seat another node wrote since (7, in another room) is not touched.
    r.set(f"{prefix}seat:7", "XYZWV")
    hb.publish({"ABCDE": []}, [])
    assert await asyncio.to_thread(hb.renew_once)
    assert r.get(f"{prefix}seat:8") is None
    assert r.get(f"{prefix}seat:7") == b"XYZWV" and r.get(f"{prefix}seat:9") == b"LMNPQ"
    hb.publish({"ABCDE": [8], "LMNPQ": [7, 9]}, ["FGHJK", "RSTVW"])
    # The node's key lapsed (Redis restarted empty, say): everything again, at once.
    for key in r.scan_iter(match=f"{prefix}*"):
        r.delete(key)
    assert await asyncio.to_thread(hb.renew_once)
    for key, value in [("seat:7", b"LMNPQ"), ("seat:8", b"ABCDE"), ("room:FGHJK", b"n1")]:
        assert r.get(f"{prefix}{key}") == value
    assert 30_000 < r.pttl(f"{prefix}seat:8") <= 60_000
    assert lost == []


async def test_a_closed_room_or_spent_code_is_deleted_at_once_unless_another_node_holds_it(
    r: redis.Redis, prefix: str
) -> None:
    """An invite link must stop naming a node for a room closed there: the key of a room
    (or of a reserved code) the publication no longer names is deleted at the next
    renewal, not left to its lease (5 s) or a code's 30 s; a key another node took over
    since is that node's, and stays."""
    hb, lost = make(prefix, long_every_s=3600.0, long_ttl_ms=60_000)
    hb.publish({"ABCDE": [7], "LMNPQ": [8], "RSTVW": [9]}, ["FGHJK", "XYZ23"])
    assert await asyncio.to_thread(hb.renew_once)
    for code in ("ABCDE", "LMNPQ", "RSTVW", "FGHJK", "XYZ23"):
        assert r.get(f"{prefix}room:{code}") == b"n1", code
    r.set(f"{prefix}room:RSTVW", "n2")  # taken over by n2 (its lease had lapsed)
    # ABCDE closes; LMNPQ stays; RSTVW is no longer here; code FGHJK was spent on a room
    # that opened and closed between two publications; XYZ23 is still reserved.
    hb.publish({"LMNPQ": [8]}, ["XYZ23"])
    assert await asyncio.to_thread(hb.renew_once)
    assert r.get(f"{prefix}room:ABCDE") is None
    assert r.get(f"{prefix}room:FGHJK") is None
    assert r.get(f"{prefix}room:LMNPQ") == b"n1" and r.get(f"{prefix}room:XYZ23") == b"n1"
    assert r.get(f"{prefix}room:RSTVW") == b"n2"
    assert r.get(f"{prefix}seat:7") == b"ABCDE"  # seats of a room gone lapse, as before
    # Nothing is deleted twice or later: a key written since by another node stays.
    r.set(f"{prefix}room:ABCDE", "n2")
    assert await asyncio.to_thread(hb.renew_once)
    assert r.get(f"{prefix}room:ABCDE") == b"n2"
    assert lost == []


async def test_a_reserved_code_is_renewed_when_due(r: redis.Redis, prefix: str) -> None:
    hb, _ = make(prefix)
    hb.publish({}, ["FGHJK"])
    hb.start()
    try:
        await beating(hb, 0.3)
        r.delete(f"{prefix}room:FGHJK")
        await beating(hb, LONG_EVERY + 0.3)
        assert r.get(f"{prefix}room:FGHJK") == b"n1"
    finally:
        await asyncio.to_thread(hb.stop)


async def test_rooms_and_codes_another_node_holds_are_handed_back_to_the_loop(
    r: redis.Redis, prefix: str
) -> None:
    hb, lost = make(prefix)
    hb.publish({"ABCDE": [7], "LMNPQ": [9]}, ["FGHJK", "RSTVW"])
    r.set(f"{prefix}room:ABCDE", "n2")  # taken over by n2
    r.set(f"{prefix}room:RSTVW", "n3")  # a reserved code lost while its lease lapsed
    hb.start()
    try:
        await beating(hb, 0.5)
    finally:
        await asyncio.to_thread(hb.stop)
    assert lost, "on_lost never ran on the loop"
    assert lost[0] == (["ABCDE"], ["RSTVW"])
    assert r.get(f"{prefix}room:ABCDE") == b"n2"  # not overwritten
    assert r.get(f"{prefix}room:LMNPQ") == b"n1"


async def test_a_busy_loop_keeps_its_heartbeat(r: redis.Redis, prefix: str) -> None:
    """The test's own thread holds the GIL in pure Python, its stamps fresh, for five
    times the node TTL: the thread still renews in time (the GIL is handed over every
    switch interval)."""
    hb, _ = make(prefix)
    hb.start()
    lapsed = 0
    try:
        await beating(hb, 0.3)
        end = time.monotonic() + 5 * NODE_TTL_MS / 1000
        checks = 0
        while time.monotonic() < end:
            hb.beat()
            sum(i * i for i in range(20_000))  # CPU work holding the GIL between checks
            checks += 1
            if checks % 20 == 0 and r.get(f"{prefix}node:n1") is None:
                lapsed += 1
    finally:
        await asyncio.to_thread(hb.stop)
    assert lapsed == 0
    assert hb.withheld == 0


async def test_a_stalled_loop_loses_its_heartbeat_and_gets_it_back_when_it_runs_again(
    r: redis.Redis, prefix: str
) -> None:
    hb, _ = make(prefix)
    hb.publish({"ABCDE": [7]}, [])
    hb.start()
    try:
        await beating(hb, 0.5)
        assert r.get(f"{prefix}node:n1") == b"n1"
        # No stamp from here on: renewals go on until the stamp is STALL old, then the
        # keys lapse one TTL after the last renewal.
        stalled = time.monotonic()
        while r.get(f"{prefix}node:n1") is not None:
            assert time.monotonic() - stalled < STALL + NODE_TTL_MS / 1000 + 0.5
            await asyncio.sleep(0.02)
        gone_after = time.monotonic() - stalled
        # The last renewal was made near the limit, not a whole period before it.
        assert gone_after > STALL + NODE_TTL_MS / 1000 - 2 * POLL_S - 0.2
        assert hb.withheld > 0
        await asyncio.sleep(LEASE_TTL_MS / 1000)
        assert r.get(f"{prefix}room:ABCDE") is None
        # The loop runs again: renewed within a poll.
        hb.beat()
        await asyncio.sleep(POLL_S * 3)
        assert r.get(f"{prefix}node:n1") == b"n1"
        assert r.get(f"{prefix}room:ABCDE") == b"n1"
    finally:
        await asyncio.to_thread(hb.stop)


async def test_a_stall_shorter_than_limit_and_ttl_is_bridged(r: redis.Redis, prefix: str) -> None:
    """A stall longer than the node TTL but within ``stall limit + TTL`` less the beat's
    and the poll's slack: the heartbeat never lapses."""
    hb, _ = make(prefix)
    hb.start()
    gaps = 0
    try:
        await beating(hb, 0.5)
        # 1.2 s, less the last renewal's slack, a beat, a poll and a margin: 0.75 s
        stall = STALL + NODE_TTL_MS / 1000 - 2 * POLL_S - 0.05 - POLL_S - 0.1
        end = time.monotonic() + stall
        while time.monotonic() < end:
            gaps += r.get(f"{prefix}node:n1") is None
            await asyncio.sleep(0.01)
        await beating(hb, 0.3)
        gaps += r.get(f"{prefix}node:n1") is None
    finally:
        await asyncio.to_thread(hb.stop)
    assert gaps == 0


async def test_paused_renews_nothing(r: redis.Redis, prefix: str) -> None:
    hb, _ = make(prefix)
    hb.paused = True
    hb.start()
    try:
        await beating(hb, 0.6)
        assert r.get(f"{prefix}node:n1") is None
        hb.paused = False
        await beating(hb, 2 * EVERY + 0.1)
        assert r.get(f"{prefix}node:n1") == b"n1"
    finally:
        await asyncio.to_thread(hb.stop)


async def test_redis_away_then_back(r: redis.Redis, prefix: str) -> None:
    host, port = REDIS.split("//", 1)[1].split("/", 1)[0].split(":")
    proxy = TcpProxy(host, int(port))
    await proxy.start()
    url = f"redis://127.0.0.1:{proxy.port}/{REDIS.rsplit('/', 1)[1]}"
    hb, _ = make(prefix, url)
    hb.start()
    try:
        await beating(hb, 0.5)
        assert hb.up and hb.recovered_at == 0.0
        await proxy.cut()
        await beating(hb, 1.0)
        assert not hb.up
        assert r.get(f"{prefix}node:n1") is None  # lapsed: nothing could renew it
        await proxy.restore()
        await beating(hb, 1.0)
        assert hb.up and hb.recovered_at > 0
        assert r.get(f"{prefix}node:n1") == b"n1"
    finally:
        await asyncio.to_thread(hb.stop)
        await proxy.cut()
