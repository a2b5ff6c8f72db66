"""The code that touches Redis: a cluster's directory, its leases, and the relay (with
``server.cluster.heartbeat``, the thread that renews the heartbeat and the leases once a second).

A node (docs/cluster.md) keeps in Redis, under one prefix:

- ``node:{id}``: its heartbeat, ``NODE_TTL_MS``, renewed every ``RENEW_EVERY_S`` (by
  ``server.cluster.heartbeat``'s thread, and here once at start and after a takeover);
- ``room:{CODE}``: the owner of a room, ``LEASE_TTL_MS``, renewed with the heartbeat by one
  Lua call (``RENEW_SCRIPT``) that extends only keys holding its id; a code it reserved
  for a room it may open is the same key, but with ``LONG_TTL_MS``, renewed every
  ``LONG_EVERY_S`` (and when new);
- ``seat:{player_id}``: the room a player is in, ``LONG_TTL_MS``, written when it is new or
  changed and renewed every ``LONG_EVERY_S``;
- ``watchers:{CODE}``: a room's spectators, renewed with it (a takeover seats them again);
- ``lobbies:{id}``: snapshots of the node's rooms with no race running (a hash by code,
  ``LOBBY_TTL_MS``), and ``nodes``: every node that may have left some (a set), so that
  a node taking over adopts a dead node's lobbies;
- ``session:{player_id}``: the node and connection of a player's latest session;
- ``daily:{date}:{rules}``: who chooses that day's deal (a lock);

and listens on the channel ``node:{id}`` for relay messages (``server.cluster.bus``). Nothing
here is the only copy of anything: PostgreSQL holds the races, and fences their writes.
Every call either answers or raises ``RelayDown``; publishing never waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import msgpack
import redis.asyncio as redis
from redis.exceptions import RedisError

from ..rooms import ROOM_ALPHABET
from ..rooms.state import ROOM_CODE_LENGTH

__all__ = [
    "LEASE_TTL_MS",
    "LONG_EVERY_S",
    "LONG_TTL_MS",
    "NODE_TTL_MS",
    "RENEW_EVERY_S",
    "RENEW_SCRIPT",
    "Relay",
    "RelayDown",
]

log = logging.getLogger("yukon.relay")

#: A node's heartbeat lapses this long after its last renewal.
NODE_TTL_MS = 3000
#: A room's lease lapses this long after its last renewal.
LEASE_TTL_MS = 5000
RENEW_EVERY_S = 1.0
#: Seats and reserved codes are renewed this often, and written at once when new or
#: changed. Neither decides who owns anything: a seat points a resume at a room, a code
#: keeps other nodes from opening a room of that code, and a takeover claims a room from
#: a dead holder whatever the key's age (``claim``). Renewed with every heartbeat, they
#: were most of Redis's work per move (docs/performance.md, issue 26).
LONG_EVERY_S = 10.0
#: ... and lapse this long after their last renewal: past two missed renewals.
LONG_TTL_MS = 30_000
#: Codes a node keeps reserved for rooms it may open (``take_code``): enough for a burst
#: of creates between two refills (one is started as soon as half are used).
CODE_POOL = 256
#: A node's lobby snapshots outlive its last renewal this long: long enough for another
#: node to find them after its death, short enough that nothing stale comes back later.
LOBBY_TTL_MS = 60_000
#: Connections to Redis for calls (the channel has one more of its own).
MAX_CONNECTIONS = 16
#: Relay messages held while Redis is away; beyond, the oldest are dropped.
OUTGOING_LIMIT = 100_000

#: Renew a node's keys: ARGV[1] the node, ARGV[2] the node TTL, ARGV[3] the lease TTL,
#: ARGV[4] how many room keys come first in KEYS (after the node key), ARGV[5] the long
#: TTL (of reserved codes and seats), ARGV[6] how many code keys follow the rooms, ARGV[7]
#: how many seat keys come last to be dropped; the seat keys between are set (ARGV[8..]
#: their values, then the dropped ones' codes: each is deleted only if it still names that
#: room). A room or code key held by another node is not touched and comes back in the
#: answer's second element: that room was taken over (that code is another's). A missing
#: one is taken again. The first element is 0 if the node's own key had lapsed (a stall,
#: an outage, Redis restarted empty): whoever renewed only what changed renews everything.
RENEW_SCRIPT = """
local fresh = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local lost = {}
local rooms = tonumber(ARGV[4])
local held = rooms + tonumber(ARGV[6])
for i = 2, held + 1 do
  local holder = redis.call('GET', KEYS[i])
  if holder == false or holder == ARGV[1] then
    local ttl = ARGV[3]
    if i > rooms + 1 then ttl = ARGV[5] end
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ttl)
  else
    table.insert(lost, KEYS[i])
  end
end
local drops = tonumber(ARGV[7])
local sets = #KEYS - drops
for i = held + 2, sets do
  redis.call('SET', KEYS[i], ARGV[i + 6 - held], 'PX', ARGV[5])
end
local first = sets - held + 6
for j = 1, drops do
  if redis.call('GET', KEYS[sets + j]) == ARGV[first + j] then
    redis.call('DEL', KEYS[sets + j])
  end
end
return {fresh, lost}
"""

#: Take a room's lease: KEYS[1] the room, ARGV[1] this node, ARGV[2] the dead holder it may
#: replace ("" none), ARGV[3] the TTL.
_CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder == false or (ARGV[2] ~= '' and holder == ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  return 1
end
return 0
"""


#: Where room KEYS[1] lives, and whether that node has a heartbeat (its key is ARGV[1]
#: followed by its id): a join's look-up in one round trip instead of two.
_LOCATE = """
local owner = redis.call('GET', KEYS[1])
if owner == false then
  return false
end
return {owner, redis.call('EXISTS', ARGV[1] .. owner)}
"""


class RelayDown(Exception):
    """Redis cannot be reached just now."""


class Relay:
    """One node's link to Redis: the directory, leases, and messages to other nodes."""

    def __init__(
        self,
        url: str,
        node: str,
        *,
        prefix: str = "yukon:",
        on_message: Callable[[bytes], None],
        on_gap: Callable[[], None] = lambda: None,
    ) -> None:
        self.url = url
        self.node = node
        self.prefix = prefix
        self.on_message = on_message
        #: Called when the channel is listened to again after it broke: what was published
        #: to it meanwhile is lost (pub/sub keeps nothing), so the node resyncs what it
        #: relays (``Cluster.on_gap``).
        self.on_gap = on_gap
        # A bounded pool whose callers wait their turn: a burst of look-ups (hundreds of
        # joins at once) queues instead of failing as an outage would.
        pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=5.0,
            socket_timeout=2.0,
            socket_connect_timeout=2.0,
        )
        self._redis: redis.Redis = redis.Redis(connection_pool=pool)
        #: Its own connection for the channel: no read timeout (a quiet channel is not an
        #: outage); a ping every few seconds finds a dead link instead.
        self._sub: redis.Redis = redis.Redis.from_url(
            url,
            socket_connect_timeout=2.0,
            socket_keepalive=True,
            health_check_interval=5,
            client_name=f"{prefix}sub:{node}",  # CLIENT LIST names the node's channel
        )
        self._pool: deque[str] = deque()
        self._filling: asyncio.Task[None] | None = None
        self._outgoing: deque[tuple[str, bytes]] = deque()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._renew = self._redis.register_script(RENEW_SCRIPT)
        self._claim = self._redis.register_script(_CLAIM)
        self._locate = self._redis.register_script(_LOCATE)
        #: The lobby snapshots last written, encoded, by code (written again on change).
        self._lobbies: dict[str, bytes] | None = None
        #: Redis answered the last call.
        self.up = False
        self.published = 0
        self.received = 0

    def key(self, kind: str, name: object) -> str:
        return f"{self.prefix}{kind}:{name}"

    @property
    def client(self) -> redis.Redis:
        """The pooled client, for a part with keys of its own (``server.cluster.quickpool``)."""
        return self._redis

    async def call(self, coro: Any) -> Any:
        """Await a call of ``client``: its answer, or ``RelayDown``."""
        return await self._call(coro)

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Check Redis answers (a node that cannot reach it at start refuses to start), and
        begin listening and sending."""
        try:
            await self._redis.ping()
        except (RedisError, OSError) as exc:
            raise RelayDown(f"{type(exc).__name__}: {exc}") from exc
        self.up = True
        self._tasks = [
            asyncio.create_task(self._listen(), name="relay listen"),
            asyncio.create_task(self._send(), name="relay send"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(RedisError, OSError):
            await self._redis.delete(self.key("node", self.node))
        await self._redis.aclose()
        await self._sub.aclose()

    async def _call(self, coro: Any) -> Any:
        try:
            answer = await coro
        except (RedisError, OSError) as exc:
            if self.up:
                log.warning("redis unreachable (%s)", type(exc).__name__)
            self.up = False
            raise RelayDown(str(exc)) from exc
        if not self.up:
            log.info("redis reachable again")
        self.up = True
        return answer

    # -- the relay ----------------------------------------------------------------------------

    def publish(self, node: str, data: bytes) -> None:
        """Queue a message (``server.cluster.bus``, encoded) for ``node``; a task sends queued
        messages in pipelines."""
        self._outgoing.append((self.key("node", node), data))
        if len(self._outgoing) > OUTGOING_LIMIT:
            self._outgoing.popleft()
        self._wake.set()

    async def _send(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._outgoing:
                batch = [self._outgoing.popleft() for _ in range(min(500, len(self._outgoing)))]
                pipe = self._redis.pipeline(transaction=False)
                for channel, data in batch:
                    pipe.publish(channel, data)
                try:
                    await self._call(pipe.execute())
                    self.published += len(batch)
                except RelayDown:
                    self._outgoing.extendleft(reversed(batch))
                    await asyncio.sleep(0.5)

    async def _listen(self) -> None:
        """Read this node's channel; resubscribe after an outage."""
        channel = self.key("node", self.node)
        broke = False
        while True:
            pubsub = self._sub.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(channel)
                if broke:
                    broke = False
                    log.warning("relay: listening again; what was sent meanwhile is lost")
                    try:
                        self.on_gap()
                    except Exception:
                        log.exception("relay: resyncing after a gap failed")
                async for item in pubsub.listen():
                    data = item.get("data")
                    if not isinstance(data, bytes):
                        continue
                    self.received += 1
                    try:
                        self.on_message(data)
                    except Exception:
                        log.exception("relay: a message failed")
            except (RedisError, OSError) as exc:
                broke = True
                if self.up:
                    log.warning("relay: redis unreachable (%s)", type(exc).__name__)
                self.up = False
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]

    # -- the directory ------------------------------------------------------------------------

    def take_code(self) -> str:
        """A room code this node reserved, for a new room here; "" if it holds none (Redis
        away). The lease on it goes on with the room (``renew``)."""
        if not self.up:  # its leases may lapse meanwhile: no new room while away
            return ""
        if len(self._pool) < CODE_POOL // 2 and (self._filling is None or self._filling.done()):
            self._filling = asyncio.create_task(self._refill())
        return self._pool.popleft() if self._pool else ""

    async def _refill(self) -> None:
        with contextlib.suppress(RelayDown):
            await self._fill_pool()

    def reserved(self) -> list[str]:
        return list(self._pool)

    def drop_codes(self, codes: Iterable[str]) -> None:
        """Reserved codes another node holds now (its lease lapsed): no room gets them."""
        gone = set(codes)
        if gone:
            self._pool = deque(c for c in self._pool if c not in gone)

    async def refresh(self) -> None:
        """Once a second on the loop: top the code pool up, and while Redis is away try
        it, so that ``up`` (and with it ``take_code``) comes back with Redis."""
        if not self.up:
            await self._call(self._redis.ping())
        await self._fill_pool()

    async def renew(
        self, rooms: Iterable[str], seats: dict[int, str]
    ) -> tuple[list[str], list[str]]:
        """Renew the heartbeat, the leases of ``rooms`` and of the reserved codes, and
        ``seats``; then top up the code pool. Returns the rooms another node holds now
        (taken over: this node must drop them) and the reserved codes lost likewise."""
        codes = list(rooms)
        here = set(codes)
        pool = [c for c in self._pool if c not in here]
        keys = [self.key("node", self.node)]
        keys += [self.key("room", c) for c in codes + pool]
        keys += [self.key("seat", p) for p in seats]
        args: list[Any] = [self.node, NODE_TTL_MS, LEASE_TTL_MS, len(codes)]
        args += [LONG_TTL_MS, len(pool), 0]
        args += list(seats.values())
        _, lost_keys = await self._call(self._renew(keys=keys, args=args))
        lost = {k.decode().rsplit(":", 1)[1] for k in lost_keys}
        if lost:
            self._pool = deque(c for c in self._pool if c not in lost)
        await self._fill_pool()
        return [c for c in codes if c in lost], [c for c in pool if c in lost]

    async def _fill_pool(self) -> None:
        while len(self._pool) < CODE_POOL:
            want = CODE_POOL - len(self._pool)
            codes = [
                "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH))
                for _ in range(want)
            ]
            pipe = self._redis.pipeline(transaction=False)
            for code in codes:
                pipe.set(self.key("room", code), self.node, nx=True, px=LONG_TTL_MS)
            answers = await self._call(pipe.execute())
            self._pool.extend(c for c, ok in zip(codes, answers, strict=True) if ok)

    async def keep_watchers(self, rooms: dict[str, list[tuple[int, str]]]) -> None:
        """Note each room's spectators (ids and names) for ``LEASE_TTL_MS``, renewed with
        its lease: a node that takes a room over seats them again (``watchers``), so that
        a spectator resumes watching as a runner resumes racing. Spectators are not
        journaled: they are not part of the race, and losing them with Redis costs a
        spectator one ``watch``."""
        if not rooms:
            return
        pipe = self._redis.pipeline(transaction=False)
        for code, members in rooms.items():
            data = msgpack.packb([list(m) for m in members], use_bin_type=True)
            pipe.set(self.key("watchers", code), data, px=LEASE_TTL_MS)
        await self._call(pipe.execute())

    async def register(self) -> None:
        """Count this node among those whose lobbies a takeover looks for (``nodes``)."""
        await self._call(self._redis.sadd(self.key("nodes", "all"), self.node))

    async def keep_lobbies(self, snapshots: dict[str, dict[str, Any]]) -> None:
        """Keep this node's lobby snapshots (``Hub.lobbies``) for ``LOBBY_TTL_MS``; the
        hash is written again only when one changed, else its expiry is renewed."""
        encoded = {c: msgpack.packb(s, use_bin_type=True) for c, s in snapshots.items()}
        key = self.key("lobbies", self.node)
        # Unchanged: renew the expiry, unless the hash is gone (Redis restarted empty).
        if encoded == self._lobbies and (
            not encoded or await self._call(self._redis.pexpire(key, LOBBY_TTL_MS))
        ):
            return
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(key)
        if encoded:
            pipe.hset(key, mapping=encoded)  # type: ignore[arg-type]
            pipe.pexpire(key, LOBBY_TTL_MS)
        await self._call(pipe.execute())
        self._lobbies = encoded

    async def nodes(self) -> tuple[set[str], set[str]]:
        """The other nodes that registered (``register``): those with a heartbeat, and
        those without (gone: their lobbies, if any are left, are to be adopted)."""
        found = await self._call(self._redis.smembers(self.key("nodes", "all")))
        names = {n.decode() for n in found} - {self.node}
        alive = await self.alive(names)
        return alive, names - alive

    async def lobbies_of(self, node: str, code: str | None = None) -> dict[str, dict[str, Any]]:
        """The lobby snapshots ``node`` kept (only ``code``'s, if given), by code."""
        key = self.key("lobbies", node)
        if code is not None:
            one = await self._call(self._redis.hget(key, code))
            return {code: msgpack.unpackb(one, raw=False)} if one else {}
        found = await self._call(self._redis.hgetall(key))
        return {c.decode(): msgpack.unpackb(v, raw=False) for c, v in found.items()}

    async def forget_node(self, node: str) -> None:
        """``node`` is gone and its lobbies were taken: it is no longer looked at."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.srem(self.key("nodes", "all"), node)
        pipe.delete(self.key("lobbies", node))
        await self._call(pipe.execute())

    async def watchers(self, code: str) -> list[tuple[int, str]]:
        """The spectators room ``code``'s owner last noted (``keep_watchers``)."""
        data = await self._call(self._redis.get(self.key("watchers", code)))
        if not data:
            return []
        return [(int(pid), str(name)) for pid, name in msgpack.unpackb(data, raw=False)]

    async def owner(self, code: str) -> str | None:
        """The node that holds room ``code`` (or reserved it), or None."""
        found = await self._call(self._redis.get(self.key("room", code)))
        return found.decode() if found else None

    async def locate(self, code: str) -> tuple[str, bool] | None:
        """The node that holds room ``code`` (or reserved it) and whether it has a
        heartbeat, or None: ``owner`` and ``alive`` in one round trip, for a join."""
        found = await self._call(
            self._locate(keys=[self.key("room", code)], args=[self.key("node", "")])
        )
        if not found:
            return None
        owner, alive = found
        return (owner.decode() if isinstance(owner, bytes) else str(owner)), bool(alive)

    async def seat(self, player_id: int) -> str | None:
        """The room player ``player_id`` is in, if its owner renews it."""
        found = await self._call(self._redis.get(self.key("seat", player_id)))
        return found.decode() if found else None

    async def claim(self, code: str, dead: str = "") -> bool:
        """Take room ``code``'s lease if nobody holds it, or only ``dead`` does (a node
        without a heartbeat): a takeover's first step. One of two nodes trying wins."""
        return bool(
            await self._call(
                self._claim(
                    keys=[self.key("room", code)], args=[self.node, dead or "", LEASE_TTL_MS]
                )
            )
        )

    async def release(self, code: str) -> None:
        """Give up a lease at once if it is still this node's (a takeover that failed)."""
        key = self.key("room", code)
        holder = await self._call(self._redis.get(key))
        if holder is not None and holder.decode() == self.node:
            await self._call(self._redis.delete(key))

    async def alive(self, nodes: Iterable[str]) -> set[str]:
        """Which of ``nodes`` have a heartbeat."""
        names = sorted(set(nodes))
        if not names:
            return set()
        found = await self._call(self._redis.mget([self.key("node", n) for n in names]))
        return {n for n, v in zip(names, found, strict=True) if v is not None}

    async def session(self, player_id: int, conn: int) -> tuple[str, int] | None:
        """Note the player's newest session (here, ``conn``); the one before, if any."""
        old = await self._call(
            self._redis.set(
                self.key("session", player_id), f"{self.node} {conn}", ex=86_400, get=True
            )
        )
        if not old:
            return None
        node, _, number = old.decode().partition(" ")
        return node, int(number)

    async def lock(self, name: str, ttl_ms: int) -> bool:
        """A lock held for ``ttl_ms`` by this node (``SET NX``); True if it got it."""
        return bool(
            await self._call(self._redis.set(self.key("lock", name), self.node, nx=True, px=ttl_ms))
        )
