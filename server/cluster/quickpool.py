"""The quick-race pool of a cluster: one pool for every node, in Redis (docs/cluster.md).

Each node keeps its own waiting players in its hub (``rooms.quick.Quick``: their status,
their ``pool`` messages) and mirrors them into one Redis hash, ``quick:pool`` (player id
-> rating, wall time entered, gateway node): ``PoolEnter`` and ``PoolLeave`` effects.
Twice a second every node reads the hash's size (the ``waiting`` every player is shown)
and tries for the pooler's lease, ``quick:lease``: ``SET NX PX`` with a fencing token
from ``INCR quick:epoch``, renewed by its holder. The holder alone matches: it reads the
hash, runs the pool's own rule (``rooms.pool.match``, the same code as a single node,
on wall time), and takes each group out of the hash with one Lua call that checks the
lease still holds its token and every player is still there (a pooler that lost its
lease, or a player who left meanwhile, takes nothing). It places the room on the node of
the group's longest waiting player (its gateway) with ``QuickSeat``; that node seats its
own players and sends the others in through their gateways (``QuickJoin``: each goes as
with their own ``join``: the relay, and ``route`` for a client that follows).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING

from ..rooms.effects import Effect, PoolEnter, PoolLeave
from ..rooms.pool import PoolConfig, Waiter, match
from . import bus
from .relay import Relay, RelayDown

if TYPE_CHECKING:
    from .node import NodeHost

__all__ = ["ClusterPool"]

log = logging.getLogger("yukon.cluster")

#: How often each node counts the pool, and the pooler matches it.
EVERY_S = 0.5
#: The pooler's lease lapses this long after its last renewal (its node died: another
#: takes over within that, and the pool is intact in Redis).
LEASE_MS = 2000

#: Take a group out of the pool, only for the lease's holder with its token, and only if
#: every one of them still waits: KEYS lease, pool; ARGV token, ids...
_TAKE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 2, #ARGV do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then return 0 end
end
for i = 2, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end
return 1
"""
#: Renew the lease if this holder still has it: KEYS lease; ARGV token, ttl.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


class ClusterPool:
    """A node's side of the cluster's pool (see the module docstring)."""

    def __init__(self, server: NodeHost, relay: Relay) -> None:
        self.server = server
        self.hub = server.hub
        self.relay = relay
        self.node = relay.node
        cfg = self.hub.config
        self.config = PoolConfig(
            min_players=cfg.quick_min_players,
            max_players=cfg.quick_max_players,
            max_wait_s=cfg.quick_max_wait_s,
            fill_s=min(cfg.quick_fill_s, cfg.quick_max_wait_s),
        )
        redis = relay.client
        self._take = redis.register_script(_TAKE)
        self._renew = redis.register_script(_RENEW)
        self._pool = relay.key("quick", "pool")
        self._lease = relay.key("quick", "lease")
        self._epoch = relay.key("quick", "epoch")
        #: The lease's value while this node holds it ("node:token"), else None.
        self.token: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_count = -1

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="quick pool")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self.token is not None:  # let another node take over at once
            with contextlib.suppress(RelayDown):
                await self.relay.call(self._renew(keys=[self._lease], args=[self.token, 1]))

    # -- effects of the hub -----------------------------------------------------------------

    def effect(self, e: Effect) -> None:
        """``PoolEnter`` or ``PoolLeave``: the player's entry in the cluster's pool."""
        task = asyncio.create_task(self._write(e))
        self.server.keep(task)

    async def _write(self, e: Effect) -> None:
        redis = self.relay.client
        try:
            if isinstance(e, PoolEnter):
                entry = json.dumps([e.rating, e.joined, self.node, e.lane])
                await self.relay.call(redis.hset(self._pool, str(e.player_id), entry))
            elif isinstance(e, PoolLeave):
                await self.relay.call(redis.hdel(self._pool, str(e.player_id)))
        except RelayDown:
            pass  # logged by the relay; a stale entry is dropped when its node does not seat it

    # -- the loop -------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(EVERY_S)
            try:
                await self._round()
            except RelayDown:
                self.token = None
            except Exception:
                log.exception("quick pool: a round failed")

    async def _round(self) -> None:
        redis = self.relay.client
        count = int(await self.relay.call(redis.hlen(self._pool)))
        if count != self._last_count:
            self._last_count = count
            self.server.apply(self.hub.quick_count(count, self._now()))
        if not await self._hold():
            return
        raw = await self.relay.call(redis.hgetall(self._pool))
        entries: dict[int, tuple[float, float, str, str]] = {}
        for key, value in raw.items():
            try:
                # [rating, joined, node, lane]; a node of an older release writes no lane.
                rating, joined, node, *lane = json.loads(value)
                entries[int(key)] = (float(rating), float(joined), str(node), str(*lane[:1]))
            except (ValueError, TypeError):
                await self.relay.call(redis.hdel(self._pool, key))
        waiters = [Waiter(pid, r, joined, lane) for pid, (r, joined, _, lane) in entries.items()]
        for group in match(waiters, self.config, time.time()):
            ids = [w.player for w in group.players]
            taken = await self.relay.call(
                self._take(keys=[self._lease, self._pool], args=[self.token or "", *ids])
            )
            if not taken:
                continue
            gateways = tuple(entries[pid][2] for pid in ids)
            seat = bus.QuickSeat(tuple(ids), gateways)
            log.info("quick pool: a room of %d placed on node %s", len(ids), gateways[0])
            if gateways[0] == self.node:
                self.server.apply(self.hub.handle(seat, self._now()))
            else:
                self.relay.publish(gateways[0], bus.encode(seat))

    async def _hold(self) -> bool:
        """Hold the pooler's lease: renew it, or take it if nobody holds it."""
        if self.token is not None:
            renewed = await self.relay.call(
                self._renew(keys=[self._lease], args=[self.token, LEASE_MS])
            )
            if renewed:
                return True
            self.token = None
        redis = self.relay.client
        if await self.relay.call(redis.exists(self._lease)):
            return False
        epoch = int(await self.relay.call(redis.incr(self._epoch)))
        token = f"{self.node}:{epoch}"
        if await self.relay.call(redis.set(self._lease, token, nx=True, px=LEASE_MS)):
            self.token = token
            log.info("quick pool: this node matches the cluster's pool (token %d)", epoch)
            return True
        return False

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def __repr__(self) -> str:  # pragma: no cover: for logs
        return f"ClusterPool({self.node}, token={self.token!r})"
