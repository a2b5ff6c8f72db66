"""A node's heartbeat and leases, renewed by a thread of their own (docs/cluster.md, "Leases").

The event loop of a node can lag by seconds under overload (a shared core, a burst of
work). Were the heartbeat (``node:{id}``, ``NODE_TTL_MS``) renewed by a task on that loop,
a live but slow node would look dead to the others, which would take its races over and
send its players off to resume. So a daemon thread renews it, with a synchronous Redis
client of its own: the thread waits in socket I/O and in ``Event.wait`` without the GIL,
and a thread waiting for the GIL gets it within the interpreter's switch interval (5 ms)
however busy the loop is, so it keeps time under CPU load.

What it renews is what the loop last published (``publish``: the rooms here with their
members, and the room codes reserved for new rooms). A room created since then was one of
those codes, whose lease (the same ``room:{CODE}`` key) is renewed as a code until the
next publication names it as a room. Rooms are renewed every time; reserved codes and
seats only when new or changed, and all of them every ``LONG_EVERY_S`` with a TTL that
outlasts that (``LONG_TTL_MS``): they point resumes and joins at rooms and decide no
ownership, and renewing them every second was most of Redis's work per move. Whenever
the node's own key is found lapsed (a stall, an outage, Redis restarted empty), everything
is renewed again at once. A room that closed (no longer published) has its key deleted
at the next renewal, so an invite link stops naming this node within a second or so.
A room the renewal finds held by another node was
taken over: the thread hands its code back to the loop (``on_lost``, through
``call_soon_threadsafe``), which drops it.

A watchdog keeps a hung process from living on through this thread: the loop stamps a
monotonic time every ``BEAT_EVERY_S`` (``beat``); while the stamp is older than
``STALL_LIMIT_S`` the thread renews nothing, so a node whose loop is stuck for good loses
its heartbeat ``NODE_TTL_MS`` later and is taken over, as a dead node is. A stall that
ends in time is bridged: the thread looks for a fresh stamp every ``POLL_S`` while it
withholds, and renews at once when it sees one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgpack
import redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from .relay import (
    LEASE_TTL_MS,
    LONG_EVERY_S,
    LONG_TTL_MS,
    NODE_TTL_MS,
    RENEW_EVERY_S,
    RENEW_SCRIPT,
)

__all__ = ["BEAT_EVERY_S", "STALL_LIMIT_S", "Heartbeat", "Snapshot"]

log = logging.getLogger("yukon.heartbeat")

#: How often the loop stamps the time it is alive (and publishes what to renew: every
#: ``RENEW_EVERY_S``): the stamp is at most this stale when a stall begins.
BEAT_EVERY_S = 0.25
#: The thread renews only while the loop stamped within this many seconds. Its last
#: renewal before it withholds is made within ``2 * POLL_S`` of the limit, so the
#: heartbeat of a loop stuck for good lapses 6.8-7 s after the loop's last stamp
#: (``STALL_LIMIT_S + NODE_TTL_MS``), and another node's sweep (every ``RENEW_EVERY_S``)
#: takes its races over about 8 s after the stall began: within the 10 s of issue 20. A
#: stall that ends within ``6.8 - BEAT_EVERY_S - POLL_S`` (about 6.4 s) never lets the
#: heartbeat lapse.
STALL_LIMIT_S = 4.0
#: While withholding, how often the thread looks for a fresh stamp.
POLL_S = 0.1
#: A renewal that takes longer has failed (Redis away or overloaded): the next one is due.
SOCKET_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Snapshot:
    """What the loop last published: rooms here (code -> members' ids), reserved codes,
    and the rooms' spectators (code -> ids and names; ``Relay.watchers`` reads them).
    Replaced whole, never changed: the thread reads it without a lock."""

    rooms: dict[str, list[int]] = field(default_factory=dict)
    codes: tuple[str, ...] = ()
    watchers: dict[str, list[tuple[int, str]]] = field(default_factory=dict)


class Heartbeat:
    """The thread that renews a node's heartbeat, leases and seats (module docstring).

    ``on_lost(rooms, codes)`` runs on ``loop`` with the rooms and reserved codes another
    node holds now. The timings are arguments so a test can shorten them; the node uses
    the module's constants.
    """

    def __init__(
        self,
        url: str,
        node: str,
        *,
        prefix: str,
        loop: asyncio.AbstractEventLoop,
        on_lost: Callable[[list[str], list[str]], None],
        renew_every_s: float = RENEW_EVERY_S,
        stall_limit_s: float = STALL_LIMIT_S,
        node_ttl_ms: int = NODE_TTL_MS,
        lease_ttl_ms: int = LEASE_TTL_MS,
        long_every_s: float = LONG_EVERY_S,
        long_ttl_ms: int = LONG_TTL_MS,
    ) -> None:
        self.node = node
        self.prefix = prefix
        self.loop = loop
        self.on_lost = on_lost
        self.renew_every_s = renew_every_s
        self.stall_limit_s = stall_limit_s
        self.node_ttl_ms = node_ttl_ms
        self.lease_ttl_ms = lease_ttl_ms
        self.long_every_s = long_every_s
        self.long_ttl_ms = long_ttl_ms
        # One connection, no retries with back-off (redis-py's default waits up to
        # seconds between tries): a renewal takes at most a socket timeout, then the
        # next is due. One retry without delay reconnects a link Redis dropped.
        self._redis = redis.Redis.from_url(
            url,
            socket_timeout=SOCKET_TIMEOUT_S,
            socket_connect_timeout=SOCKET_TIMEOUT_S,
            retry=Retry(NoBackoff(), 1),
        )
        self._script = self._redis.register_script(RENEW_SCRIPT)
        self.snapshot = Snapshot()
        #: The loop's last sign of life (``time.monotonic``).
        self.stamp = time.monotonic()
        #: While set the thread renews nothing (``Cluster.paused``, a test hook).
        self.paused = False
        #: The last renewal reached Redis; when it first did again after failing.
        self.up = True
        self.recovered_at = 0.0
        #: Renewals done, and renewals withheld because the loop had stalled.
        self.renewals = 0
        self.withheld = 0
        #: What the last renewals wrote of the codes and seats (seat: player id -> room
        #: code), and when all of them are due again (``time.monotonic``; 0: at once).
        self._codes_kept: set[str] = set()
        self._seats_kept: dict[int, str] = {}
        #: The rooms the last renewal renewed: one the publication no longer names (it
        #: closed) has its key deleted at the next renewal, if it still holds this node.
        self._rooms_kept: set[str] = set()
        self._all_due = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    # -- the loop's side ----------------------------------------------------------------

    def beat(self) -> None:
        """The loop is alive: called on it every ``BEAT_EVERY_S``."""
        self.stamp = time.monotonic()

    def publish(
        self,
        rooms: dict[str, list[int]],
        codes: Sequence[str],
        watchers: dict[str, list[tuple[int, str]]] | None = None,
    ) -> None:
        """What to renew from now on (called on the loop, which made these and no longer
        changes them)."""
        self.snapshot = Snapshot(rooms, tuple(codes), watchers or {})

    def start(self) -> None:
        self._thread.start()

    def halt(self) -> None:
        """Renew nothing more (the thread ends at its next wake-up); does not wait."""
        self._stop.set()

    def stop(self) -> None:
        """Stop renewing and wait for the thread (at most one renewal's time)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(SOCKET_TIMEOUT_S * 3)
        with contextlib.suppress(RedisError, OSError):
            self._redis.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # -- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        stalled = False
        while True:
            age = time.monotonic() - self.stamp
            if self.paused:
                wait = self.renew_every_s
            elif age > self.stall_limit_s:
                if not stalled:
                    stalled = True
                    log.warning(
                        "heartbeat: the event loop has not run for %.1f s; the heartbeat is"
                        " withheld (past %d s more, other nodes take this node's races over)",
                        age,
                        self.node_ttl_ms // 1000,
                    )
                self.withheld += 1
                wait = POLL_S
            else:
                if stalled:
                    stalled = False
                    log.warning("heartbeat: the event loop runs again; renewing")
                self.renew_once()
                # Due in a second; but the last renewal before a stall's limit is made as
                # near the limit as a poll allows, so a stall gets the most of the TTL.
                age = time.monotonic() - self.stamp
                wait = min(self.renew_every_s, max(POLL_S, self.stall_limit_s - age - POLL_S))
            if self._stop.wait(wait):
                return

    def renew_once(self) -> bool:
        """One renewal of the heartbeat, the published rooms, and the codes and seats that
        are new, changed or due (one Lua call), then of the rooms' spectators
        (``watchers:{CODE}``, a pipeline); rooms and codes found held by another node go
        to ``on_lost``. False if Redis could not be reached."""
        snap = self.snapshot
        full = time.monotonic() >= self._all_due
        try:
            fresh, lost = self._renew(snap, full)
            if not fresh and not full:  # the node's key had lapsed: keys may be gone
                fresh, more = self._renew(snap, True)
                lost |= more
                full = True
            kept = [c for c in snap.watchers if c not in lost]
            if kept:
                pipe = self._redis.pipeline(transaction=False)
                for code in kept:
                    data = msgpack.packb([list(m) for m in snap.watchers[code]])
                    pipe.set(f"{self.prefix}watchers:{code}", data, px=self.lease_ttl_ms)
                pipe.execute()
        except (RedisError, OSError) as exc:
            if self.up:
                log.warning("heartbeat: redis unreachable (%s)", type(exc).__name__)
            self.up = False
            self._all_due = 0.0  # what reached Redis is unknown: all of it next time
            return False
        if full:
            self._all_due = time.monotonic() + self.long_every_s
        if not self.up:
            self.up = True
            self.recovered_at = time.monotonic()
            log.info("heartbeat: redis is back; leases renewed")
        self.renewals += 1
        if lost:
            lost_rooms = [c for c in snap.rooms if c in lost]
            lost_codes = [c for c in snap.codes if c in lost and c not in snap.rooms]
            with contextlib.suppress(RuntimeError):  # the loop closed: the node is stopping
                self.loop.call_soon_threadsafe(self.on_lost, lost_rooms, lost_codes)
        return True

    def _renew(self, snap: Snapshot, full: bool) -> tuple[bool, set[str]]:
        """The Lua call: the heartbeat, every room, and the codes and seats not yet written
        as they are now (all of them if ``full``), and the deletion of the keys of rooms
        and codes no longer published. Whether the node's key was still there, and the
        codes of rooms and reserved codes another node holds."""
        rooms = list(snap.rooms)
        codes = [c for c in snap.codes if c not in snap.rooms]
        seats = {pid: code for code, ids in snap.rooms.items() for pid in ids}
        kept = self._seats_kept
        if full:
            new_codes, new_seats = codes, seats
        else:
            new_codes = [c for c in codes if c not in self._codes_kept]
            new_seats = {pid: code for pid, code in seats.items() if kept.get(pid) != code}
        # A player who left a room that is still here: their seat goes now (if it still
        # names that room), not 30 s later, so a resume is not sent to the room they left.
        # A room that went (over, or taken over: its new owner writes the same seats)
        # leaves its seats to lapse.
        dropped = {
            pid: code for pid, code in kept.items() if pid not in seats and code in snap.rooms
        }
        # A room that closed here (or a reserved code whose room opened and closed between
        # two publications) stops pointing joins and invite links at this node now, not
        # when its lease lapses (5 s; a code's 30 s): its key goes if it still names this
        # node. A room another node took over holds that node's id, and is not touched.
        named = snap.rooms.keys() | set(codes)
        closed = [c for c in (self._rooms_kept | self._codes_kept) if c not in named]
        p = self.prefix
        keys = [f"{p}node:{self.node}"]
        keys += [f"{p}room:{c}" for c in rooms]
        keys += [f"{p}room:{c}" for c in new_codes]
        keys += [f"{p}seat:{pid}" for pid in new_seats]
        keys += [f"{p}seat:{pid}" for pid in dropped]
        keys += [f"{p}room:{c}" for c in closed]
        args: list[str | int] = [self.node, self.node_ttl_ms, self.lease_ttl_ms, len(rooms)]
        args += [self.long_ttl_ms, len(new_codes), len(dropped) + len(closed)]
        args += list(new_seats.values())
        args += list(dropped.values())
        args += [self.node] * len(closed)
        fresh, lost_keys = self._script(keys=keys, args=args)
        lost = {k.decode().rsplit(":", 1)[1] for k in lost_keys}
        # What the publication no longer names is forgotten: named again, it is new.
        self._codes_kept = {c for c in codes if c not in lost}
        self._seats_kept = seats
        self._rooms_kept = {c for c in rooms if c not in lost}
        return bool(fresh), lost
