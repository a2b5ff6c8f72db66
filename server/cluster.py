"""One node of a cluster: the relay between its hub and the other nodes (docs/cluster.md).

``RaceServer`` hands this the hub's cluster effects (``Locate``, ``Handover``, ``Forward``,
``Detach``, ``Release``) and every ``Send`` or ``Close`` for a guest; this turns them into
relay messages (``server.relay``, the only code that touches Redis) and turns the
messages other nodes send into the hub's entry points. Once a second it renews the
node's leases, drops rooms another node took, closes sessions away on nodes that died,
and takes over races whose node died: the lease first (Redis), then the fencing token
and the journal in one PostgreSQL transaction, then ``Hub.restore``, the restart path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .effects import Detach, Effect, Forward, Handover, Locate, Release
from .relay import NODE_TTL_MS, RENEW_EVERY_S, Relay, RelayDown
from .storage.sql import SqlStore

if TYPE_CHECKING:
    from .connection import RaceServer

__all__ = ["Cluster"]

log = logging.getLogger("yukon.cluster")

#: How long a resume waits, at most, for its room's new owner after a node died.
TAKEOVER_WAIT_S = 6.0
#: After Redis comes back, how long a node waits before it judges other nodes dead.
GRACE_AFTER_OUTAGE_S = 2 * RENEW_EVERY_S + NODE_TTL_MS / 1000


class Cluster:
    """A node's side of the cluster: its relay, leases and takeovers."""

    def __init__(self, server: RaceServer, relay: Relay, store: SqlStore) -> None:
        self.server = server
        self.hub = server.hub
        self.relay = relay
        self.store = store
        self.node = relay.node
        self._task: asyncio.Task[None] | None = None
        #: Figures for /metrics and the log.
        self.takeovers = 0
        self.rooms_lost = 0
        #: Test hook: while set, the node neither renews its leases nor sweeps (as if its
        #: link to Redis were paused); it keeps racing and writing, and the fence must stop it.
        self.paused = False
        #: A sweep and a resume's takeover must not take the same race at once.
        self._taking: set[str] = set()
        #: Guests that came while a takeover ran (their ``attach``, then their frames), in
        #: order. The lease names this node before the room is rebuilt here, so a gateway
        #: may hand a member's resume over in between: it waits for the room.
        self._held: list[list[Any]] = []
        self._held_routes: set[tuple[str, int]] = set()

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Reserve codes and take over what is orphaned, before clients come."""
        with contextlib.suppress(RelayDown):
            await self._renew()
        with contextlib.suppress(RelayDown):
            await self._sweep()
        self._task = asyncio.create_task(self._run(), name="cluster")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        quiet_until = 0.0
        while True:
            await asyncio.sleep(RENEW_EVERY_S)
            if self.paused:
                continue
            try:
                down = not self.relay.up
                await self._renew()
                if down:
                    # Back from an outage: every node's heartbeat may have lapsed while
                    # Redis was away from all of them. Give the others time to renew
                    # before anything counts as dead, so an outage takes no room over.
                    quiet_until = time.monotonic() + GRACE_AFTER_OUTAGE_S
                    log.info("cluster: redis is back; leases renewed")
                if time.monotonic() < quiet_until:
                    continue
                await self._peers()
                await self._sweep()
            except RelayDown:
                pass  # logged by the relay once; our own rooms race on
            except Exception:
                log.exception("cluster: a sweep failed")

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    # -- leases ---------------------------------------------------------------------------

    async def _renew(self) -> None:
        seats = self.hub.seats()
        lost, _ = await self.relay.renew(
            seats, {pid: code for code, ids in seats.items() for pid in ids}
        )
        for code in lost:
            self._lose(code)

    def _lose(self, code: str) -> None:
        """Room ``code`` belongs to another node now: drop it here."""
        self.rooms_lost += 1
        uid = self.hub.race_uids().get(code)
        if uid is not None:
            self.store.epochs.pop(uid, None)
        self.server.apply(self.hub.drop_room(code, self._now()))

    def fenced(self, uids: set[str]) -> None:
        """The database refused journal entries of ``uids``: another node took them."""
        by_uid = {uid: code for code, uid in self.hub.race_uids().items()}
        for uid in uids:
            code = by_uid.get(uid)
            if code is not None:
                log.warning("room %s: fenced by the database (race %s taken over)", code, uid)
                self._lose(code)

    async def _peers(self) -> None:
        """Sessions away on, and guests of, nodes that died are closed or disconnected."""
        peers = self.hub.peers()
        if not peers:
            return
        alive = await self.relay.alive(peers)
        for node in peers - alive:
            log.warning("node %s is gone", node)
            self.server.apply(self.hub.node_gone(node, self._now()))

    async def _sweep(self) -> None:
        """Take over running races whose node has no heartbeat."""
        rows = [r for r in await self.store.live_owners() if r[2] != self.node]
        if not rows:
            return
        alive = await self.relay.alive(r[2] for r in rows if r[2])
        for uid, room, owner, epoch in rows:
            if owner not in alive:
                await self.take_over(uid, room, owner, epoch)

    async def take_over(self, uid: str, room: str, owner: str, epoch: int) -> bool:
        """Take race ``uid`` (room ``room``) from the dead ``owner``: its lease, then its
        fencing token and journal (one transaction), then rebuild it here."""
        if uid in self._taking or self.hub.has_room(room):
            return False
        self._taking.add(uid)
        try:
            if not await self.relay.claim(room, owner):
                return False
            taken = await self.store.take_over(uid=uid, owner=owner, epoch=epoch)
            if taken is None:
                await self.relay.release(room)
                return False
            live, actions, alive_ms = taken
            self.server.apply(self.hub.restore(live, actions, alive_ms, self._now()))
            self.takeovers += 1
            log.info("room %s: race %s taken over from node %s", room, uid, owner or "-")
            with contextlib.suppress(RelayDown):
                await self._renew()  # its seats, at once: resumes look them up
            return True
        finally:
            self._taking.discard(uid)
            if not self._taking:
                held, self._held = self._held, []
                self._held_routes.clear()
                for m in held:
                    self._handle(m)

    # -- where a player is -----------------------------------------------------------------

    async def locate_player(
        self, player_id: int, conn: int, *, resume: bool
    ) -> tuple[str, str] | None:
        """Where a player who says hello here has their room: another node and the room's
        code (their session goes there; the welcome names the room), or None (here, or
        nowhere). Their session elsewhere, if any, is closed (4001). A room whose node died
        is taken over first, here or elsewhere. ``resume``: a hello with a token (a new
        name has no room to look up). Raises ``RelayDown`` if only the directory could say
        (Redis away)."""
        seated = self.hub.seated(player_id) or not resume  # a new name has no room yet
        try:
            old = await self.relay.session(player_id, conn)
        except RelayDown:
            if seated:  # their room is here, or nowhere: nothing to look up
                return None
            raise
        if old is not None and old[0] != self.node:
            self.relay.publish(old[0], ["kick", old[1]])
        if seated:
            return None
        code = await self.relay.seat(player_id)
        if code is None:
            return None
        deadline = time.monotonic() + TAKEOVER_WAIT_S
        while True:
            owner = await self.relay.owner(code)
            if owner == self.node:  # here, or being taken over here: wait for it
                if self.hub.has_room(code) or time.monotonic() > deadline:
                    return None
                await asyncio.sleep(0.1)
                continue
            if owner is None:
                if not await self._take_room(code):
                    return None
                continue
            if owner in await self.relay.alive([owner]):
                return owner, code
            if await self._take_room(code, owner) or time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.25)

    async def _take_room(self, code: str, owner: str | None = None) -> bool:
        for uid, room, holder, epoch in await self.store.live_owners():
            if room == code and holder != self.node and (owner is None or holder == owner):
                return await self.take_over(uid, room, holder, epoch)
        return False

    # -- effects out ------------------------------------------------------------------------

    def effect(self, e: Effect) -> None:
        """A cluster effect of the hub, carried out."""
        relay = self.relay
        if isinstance(e, Forward):
            relay.publish(e.node, ["frame", self.node, e.conn, e.frame])
        elif isinstance(e, Locate):
            task = asyncio.create_task(self._locate(e))
            self.server.keep(task)
        elif isinstance(e, Handover):
            relay.publish(
                e.node,
                [
                    "attach",
                    self.node,
                    e.conn,
                    e.player_id,
                    e.name,
                    e.token,
                    e.registered,
                    e.address,
                    e.frame,
                ],
            )
        elif isinstance(e, Detach):
            relay.publish(e.node, ["detach", self.node, e.conn])
        elif isinstance(e, Release):
            relay.publish(e.node, ["home", e.conn, e.frame])

    async def _locate(self, e: Locate) -> None:
        try:
            owner = await self.relay.owner(e.code)
            if owner is not None and owner != self.node and not await self.relay.alive([owner]):
                owner = None  # its node died; a resume will find the race once taken
        except RelayDown:
            self.server.apply(
                self.hub.unreachable(
                    e.conn,
                    "the cluster's directory is unreachable, so rooms of other nodes cannot"
                    " be joined just now; try again shortly",
                    self._now(),
                )
            )
            return
        self.server.apply(self.hub.located(e.conn, e.code, owner, e.frame, self._now()))

    def to_guest(self, conn: int, data: bytes, *, progress: bool) -> None:
        route = self.hub.route(conn)
        if route is not None:
            self.relay.publish(route[0], ["send", route[1], data, progress])

    def close_guest(self, conn: int, code: int, reason: str) -> None:
        route = self.hub.route(conn)
        if route is not None:
            self.relay.publish(route[0], ["close", route[1], code, reason])

    # -- messages in ------------------------------------------------------------------------

    def on_message(self, m: list[Any]) -> None:
        """A relay message from another node; a new guest waits while a takeover runs
        (``_held``), and so do its frames."""
        kind = m[0]
        if kind in ("attach", "frame", "detach"):
            route = (m[1], m[2])
            if (kind == "attach" and self._taking) or route in self._held_routes:
                self._held_routes.add(route)
                self._held.append(m)
                return
        self._handle(m)

    def _handle(self, m: list[Any]) -> None:
        hub, now, kind = self.hub, self._now(), m[0]
        effects: Iterable[Effect]
        if kind == "send":
            self.server.deliver(m[1], m[2], progress=bool(m[3]))
            return
        if kind == "frame":
            effects = hub.guest_frame((m[1], m[2]), m[3], now)
        elif kind == "attach":
            effects = hub.guest_attach(
                (m[1], m[2]),
                player_id=m[3],
                name=m[4],
                token=m[5],
                registered=m[6],
                address=m[7],
                frame=m[8],
                now=now,
            )
        elif kind == "detach":
            effects = hub.guest_detach((m[1], m[2]), now)
        elif kind == "close":
            effects = hub.closed_by_owner(m[1], m[2], m[3], now)
        elif kind == "home":
            effects = hub.returned(m[1], m[2], now)
        elif kind == "kick":
            effects = hub.kick(m[1], now)
        else:
            log.warning("relay: unknown message %r", kind)
            return
        self.server.apply(effects)
