"""One node of a cluster: the relay between its hub and the other nodes (docs/cluster.md).

``RaceServer`` hands this the hub's cluster effects (``Locate``, ``Handover``, ``Forward``,
``Detach``, ``Release``) and every ``Send`` or ``Close`` for a guest; this turns them into
relay messages (``server.cluster.relay``, the only code that touches Redis) and turns the
messages other nodes send into the hub's entry points. Its ``Heartbeat`` thread renews the
node's heartbeat and leases once a second, off the event loop, from what the loop last
published (``server.cluster.heartbeat``: a slow loop is not a dead node; a stuck one is). Once a
second, on the loop, it drops rooms another node took, closes sessions away on nodes that
died, and takes over races whose node died: the lease first (Redis), then the fencing
token and the journal in one PostgreSQL transaction, then ``Hub.restore``, the restart
path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from ..domain.replays import live_ghost
from ..rooms import events as ev
from ..rooms.effects import Effect, Locate, PasswordFailed, PoolEnter, PoolLeave, Resumed
from ..storage.sql import SqlStore
from . import bus
from .heartbeat import BEAT_EVERY_S, Heartbeat
from .quickpool import ClusterPool
from .relay import NODE_TTL_MS, RENEW_EVERY_S, Relay, RelayDown

if TYPE_CHECKING:
    from .node import NodeHost

__all__ = ["Cluster"]

log = logging.getLogger("yukon.cluster")

#: How long a resume waits, at most, for its room's new owner after a node died.
TAKEOVER_WAIT_S = 6.0
#: How long, at most, a guest that came while a takeover ran waits for it (``on_message``).
HOLD_LIMIT_S = 5.0
#: After Redis comes back, how long a node waits before it judges other nodes dead.
GRACE_AFTER_OUTAGE_S = 2 * RENEW_EVERY_S + NODE_TTL_MS / 1000


class Cluster:
    """A node's side of the cluster: its relay, leases and takeovers."""

    def __init__(self, server: NodeHost, relay: Relay, store: SqlStore) -> None:
        self.server = server
        self.hub = server.hub
        self.relay = relay
        #: How messages reach other nodes: encoded, on their Redis channels.
        self.transport: bus.Transport = bus.OverBytes(relay.publish)
        self.store = store
        self.node = relay.node
        self._tasks: list[asyncio.Task[None]] = []
        #: The thread that renews the heartbeat and leases (made in ``start``, on the loop).
        self.heartbeat: Heartbeat | None = None
        #: Figures for /metrics and the log.
        self.takeovers = 0
        self.rooms_lost = 0
        self.relay_gaps = 0
        #: The other nodes alive at the last sweep (each wrong password is told to them).
        self.others: set[str] = set()
        self._paused = False
        #: A sweep and a resume's takeover must not take the same race at once.
        self._taking: set[str] = set()
        #: Guests that came while a takeover ran (their ``attach``, then their frames), in
        #: order. The lease names this node before the room is rebuilt here, so a gateway
        #: may hand a member's resume over in between: it waits for the room.
        self._held: list[bus.BusMessage] = []
        self._held_routes: set[tuple[str, int]] = set()
        #: The frame being sent to guests (``to_guest``): its message's id, its bytes,
        #: whether it is a ``progress``, and the guests it goes to by gateway.
        self._group_key: int | None = None
        self._group_data = b""
        self._group_progress = False
        self._group: dict[str, list[int]] = {}
        #: The cluster's quick-race pool (issue 29; ``server.cluster.quickpool``).
        self.quick = ClusterPool(server, relay)

    @property
    def paused(self) -> bool:
        """Test hook: while set, the node neither renews its leases (the heartbeat thread
        included) nor sweeps, as if its link to Redis were paused; it keeps racing and
        writing, and the fence must stop it."""
        return self._paused

    @paused.setter
    def paused(self, value: bool) -> None:
        self._paused = value
        if self.heartbeat is not None:
            self.heartbeat.paused = value

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Reach Redis (``RelayDown`` if it cannot), reserve codes and take over what is
        orphaned, before clients come; then start the heartbeat's thread and the loop's
        beat and sweep."""
        relay = self.relay
        await relay.start()
        self.heartbeat = Heartbeat(
            relay.url,
            self.node,
            prefix=relay.prefix,
            loop=asyncio.get_running_loop(),
            on_lost=self._lost,
        )
        self.heartbeat.paused = self._paused
        with contextlib.suppress(RelayDown):
            await self.relay.register()
        with contextlib.suppress(RelayDown):
            await self._renew()
        with contextlib.suppress(RelayDown):
            await self._sweep(former=True)
        self._publish()
        self.heartbeat.start()
        self.quick.start()
        self._tasks = [
            asyncio.create_task(self._beat(), name="cluster beat"),
            asyncio.create_task(self._run(), name="cluster"),
        ]

    async def stop(self) -> None:
        """Stop sweeping and renewing (the thread is joined: nothing renews the node's
        key after this, so ``Relay.close`` can delete it for good)."""
        await self.quick.stop()
        if self.heartbeat is not None:
            self.heartbeat.halt()  # at once: the join below waits for a free worker thread
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.heartbeat is not None:
            await asyncio.to_thread(self.heartbeat.stop)

    async def close(self) -> None:
        """Last, after storage finished: the node's keys go, for good (``Relay.close``)."""
        await self.relay.close()

    async def owner(self, code: str) -> str | None:
        """The node the directory says holds room ``code`` (``RelayDown``: unreachable)."""
        return await self.relay.owner(code)

    async def lock(self, name: str) -> bool:
        """One node of the cluster chooses the day's deal (a lock for two minutes)."""
        return await self.relay.lock(name, ttl_ms=120_000)

    async def _beat(self) -> None:
        """The loop's sign of life for the heartbeat's watchdog, every ``BEAT_EVERY_S``,
        and once a second what the thread renews. Nothing here waits on I/O: a beat late
        is the loop late."""
        beats = round(RENEW_EVERY_S / BEAT_EVERY_S)
        n = 0
        while True:
            await asyncio.sleep(BEAT_EVERY_S)
            assert self.heartbeat is not None
            self.heartbeat.beat()
            n += 1
            if n % beats == 0:
                self._publish()

    async def _run(self) -> None:
        """Once a second: the code pool and the lobby snapshots (state, not liveness: they
        live 60 s), then (unless Redis was just away) the sweeps."""
        assert self.heartbeat is not None
        heartbeat = self.heartbeat
        quiet_until = 0.0
        while True:
            await asyncio.sleep(RENEW_EVERY_S)
            if self.paused:
                continue
            try:
                down = not self.relay.up
                await self.relay.refresh()
                await self.relay.keep_lobbies(self.hub.lobbies())
                now = time.monotonic()
                # Back from an outage (the relay's link, or the heartbeat's): every node's
                # heartbeat may have lapsed while Redis was away from all of them. Give the
                # others time to renew before anything counts as dead, so an outage takes
                # no room over.
                quiet_until = max(quiet_until, heartbeat.recovered_at + GRACE_AFTER_OUTAGE_S)
                if down:
                    quiet_until = max(quiet_until, now + GRACE_AFTER_OUTAGE_S)
                    log.info("cluster: redis is back")
                # A node that cannot renew its own heartbeat judges no other node dead.
                if now < quiet_until or not heartbeat.up:
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

    def _publish(self) -> None:
        """Hand the heartbeat's thread what to renew: the rooms here, their members and
        spectators, and the reserved codes (a room made from one before the next publication is
        covered by the code's lease: the same key)."""
        if self.heartbeat is not None:
            self.heartbeat.publish(self.hub.seats(), self.relay.reserved(), self.hub.watchers())

    async def _renew(self) -> None:
        """Renew at once, on the loop (at start, and for a race just taken over: resumes
        look its seats up); the thread renews the same keys from then on."""
        seats = self.hub.seats()
        self._publish()
        lost, _ = await self.relay.renew(
            seats, {pid: code for code, ids in seats.items() for pid in ids}
        )
        for code in lost:
            self._lose(code)
        await self.relay.keep_watchers(self.hub.watchers())
        await self.relay.keep_lobbies(self.hub.lobbies())

    def _lost(self, rooms: list[str], codes: list[str]) -> None:
        """The heartbeat's thread found these rooms and reserved codes held by another
        node (run on the loop). A room dropped since the snapshot is dropped once only."""
        self.relay.drop_codes(codes)
        for code in rooms:
            if self.hub.has_room(code):
                self._lose(code)
        if rooms or codes:
            self._publish()

    def _lose(self, code: str) -> None:
        """Room ``code`` belongs to another node now: drop it here."""
        self.rooms_lost += 1
        uid = self.hub.race_uids().get(code)
        if uid is not None:
            self.store.epochs.pop(uid, None)
        self.server.apply(self.hub.handle(ev.RoomLost(code), self._now()))

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
            self.server.apply(self.hub.handle(ev.NodeGone(node), self._now()))

    async def _sweep(self, *, former: bool = False) -> None:
        """Take over running races whose node has no heartbeat. ``former`` (at start):
        races this node's id owns but this process does not hold are a former process's
        under the same id (a node restarted by its supervisor faster than its heartbeat
        lapsed, so nobody judged it dead): it takes them itself."""
        if former:
            for uid, room, owner, epoch in await self.store.live_owners([self.node]):
                if not self.hub.has_room(room):
                    await self.take_over(uid, room, owner, epoch)
        # The owners first (a row per node), the races only of those that died: every
        # node sweeps every second, and reading every race each time cost each node as
        # much as the whole cluster's races (docs/performance.md).
        others = await self.store.race_owners() - {self.node}
        if others:
            dead = others - await self.relay.alive(o for o in others if o)
            if dead:
                for uid, room, owner, epoch in await self.store.live_owners(dead):
                    await self.take_over(uid, room, owner, epoch)
        self.others, gone = await self.relay.nodes()
        for node in sorted(gone):
            for code, snapshot in (await self.relay.lobbies_of(node)).items():
                await self.adopt(node, code, snapshot)
            await self.relay.forget_node(node)

    async def adopt(self, owner: str, code: str, snapshot: dict[str, Any] | None = None) -> bool:
        """Take room ``code``, a room without a race, from the dead ``owner``: its lease,
        then the room rebuilt from the snapshot the owner kept (``Hub.adopt_lobby``)."""
        key = f"lobby {code}"
        if key in self._taking or self.hub.has_room(code):
            return False
        self._taking.add(key)
        try:
            if snapshot is None:
                snapshot = (await self.relay.lobbies_of(owner, code)).get(code)
                if snapshot is None:
                    return False
            if not await self.relay.claim(code, owner):
                return False
            self.server.apply(self.hub.handle(ev.AdoptLobby(code, snapshot, owner), self._now()))
            if not self.hub.has_room(code):
                await self.relay.release(code)
                return False
            self.takeovers += 1
            log.info("room %s: lobby taken over from node %s", code, owner)
            with contextlib.suppress(RelayDown):
                await self._renew()  # its seats, at once: resumes look them up
            return True
        finally:
            self._done_taking(key)

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
            ghost = await live_ghost(self.store, live)
            try:
                watchers = await self.relay.watchers(room)
            except RelayDown:  # they watch again with a ``watch``; the race goes on
                watchers = []
            restore = ev.Restore(live, actions, alive_ms, ghost, watchers)
            self.server.apply(self.hub.handle(restore, self._now()))
            self.takeovers += 1
            log.info("room %s: race %s taken over from node %s", room, uid, owner or "-")
            with contextlib.suppress(RelayDown):
                await self._renew()  # its seats, at once: resumes look them up
            return True
        finally:
            self._done_taking(uid)

    def _done_taking(self, key: str) -> None:
        """A takeover (``key``: a race's uid, or ``lobby CODE``) is over: once none runs,
        the guests held meanwhile are served, in the order they came."""
        self._taking.discard(key)
        if not self._taking:
            self._serve_held()

    def _serve_held(self) -> None:
        """Serve the guests held while takeovers ran (``on_message``), in order."""
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
            await self._newest_session(player_id, conn)
        except RelayDown:
            if seated:  # their room is here, or nowhere: nothing to look up
                return None
            raise
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
        if owner is not None:  # no race: a lobby, if its owner kept one
            return await self.adopt(owner, code)
        return False

    # -- effects out ------------------------------------------------------------------------

    def effect(self, e: Effect) -> None:
        """A cluster effect of the hub, carried out: a message to another node
        (``bus.outgoing``), a look-up in the directory, or a wrong password told to all."""
        self.flush_guests()
        if isinstance(e, Locate):
            task = asyncio.create_task(self._locate(e))
            self.server.keep(task)
            return
        if isinstance(e, (PoolEnter, PoolLeave)):  # issue 29: the cluster's pool
            self.quick.effect(e)
            return
        if isinstance(e, PasswordFailed):
            for node in self.others:
                self.transport.send(node, bus.PasswordFail(e.key))
            return
        if isinstance(e, Resumed):
            self.server.keep(asyncio.create_task(self._resumed(e)))
            return
        found = bus.outgoing(self.node, e)
        if found is None:
            log.warning("cluster: no message for %s", type(e).__name__)
            return
        node, message = found
        if isinstance(message, bus.Frame):
            self.server.metrics.frames_forwarded.inc()
        self.transport.send(node, message)

    async def _resumed(self, e: Resumed) -> None:
        """A hello served from memory: this is the player's newest session (a follower's
        on its room's node, whose gateway the directory still named), as for a hello
        storage answers (``locate_player``). Redis away: the next hello notes it."""
        try:
            await self._newest_session(e.player_id, e.conn)
        except RelayDown:
            log.info("player %d: the directory is away; their session is not noted", e.player_id)

    async def _newest_session(self, player_id: int, conn: int) -> None:
        """Note ``conn`` here as the player's newest session, and close the one before it
        if it was on another node (4001: one session per player in the cluster)."""
        old = await self.relay.session(player_id, conn)
        if old is not None and old[0] != self.node:
            self.transport.send(old[0], bus.Kick(old[1]))

    async def _locate(self, e: Locate) -> None:
        try:
            found = await self.relay.locate(e.code)  # the owner and its heartbeat at once
            owner = found[0] if found is not None else None
            if found is not None and owner != self.node and not found[1]:
                owner = None  # its node died; a resume will find the race once taken
        except RelayDown:
            text = (
                "the cluster's directory is unreachable, so rooms of other nodes cannot"
                " be joined just now; try again shortly"
            )
            self.server.apply(self.hub.handle(ev.Unreachable(e.conn, text), self._now()))
            return
        located = ev.Located(e.conn, e.code, owner, e.frame)
        self.server.apply(self.hub.handle(located, self._now()))

    def to_guest(self, conn: int, key: int, data: bytes, *, progress: bool) -> None:
        """A frame (``data``, the message whose id is ``key``) for guest ``conn``. A room
        sends one message to each of its members in turn: the guests of one gateway that
        get the same message one after another are sent it in one relay message (fan-out
        per node, ``sendm``), so a room's ``progress`` crosses Redis once per gateway, not
        once per member. Held until another message comes (``flush_guests``)."""
        route = self.hub.route(conn)
        if route is None:
            return
        if key != self._group_key:
            self.flush_guests()
            self._group_key, self._group_data, self._group_progress = key, data, progress
        self._group.setdefault(route[0], []).append(route[1])

    def flush_guests(self) -> None:
        """Publish the frame held for guests (``to_guest``): before anything else goes to
        a gateway, so that each guest's frames keep their order."""
        if not self._group:
            self._group_key = None
            return
        data, progress = self._group_data, self._group_progress
        for node, conns in self._group.items():
            self.transport.send(node, bus.Deliver(tuple(conns), data, progress))
        self._group = {}
        self._group_key = None

    def close_guest(self, conn: int, code: int, reason: str) -> None:
        self.flush_guests()
        route = self.hub.route(conn)
        if route is not None:
            self.transport.send(route[0], bus.Shut(route[1], code, reason))

    # -- messages in ------------------------------------------------------------------------

    def on_gap(self) -> None:
        """This node's channel broke and is listened to again: relay messages sent to it
        meanwhile are lost (pub/sub delivers at most once). Every session it relays, both
        ways, is closed with 1012, so that each client resumes and gets the room as it
        stands (a lost move was either journaled, and the resume's ``seq`` says so, or
        not, and the client resends it): a silent loss becomes a resume."""
        self.relay_gaps += 1
        self.server.apply(self.hub.handle(ev.RelayGap(), self._now()))

    def on_message(self, data: bytes) -> None:
        """A relay message from another node (``bus``); a new guest waits while a takeover
        runs (``_held``), and so do its frames. One this node cannot read is dropped."""
        try:
            m = bus.decode(data)
        except bus.BusError as exc:
            log.warning("relay: a message was dropped: %s", exc)
            return
        if isinstance(m, (bus.Attach, bus.Frame, bus.DetachMsg)):
            route = (m.gateway, m.conn)
            if (isinstance(m, bus.Attach) and self._taking) or route in self._held_routes:
                if not self._held:  # a takeover stuck (a database lock) must not hold
                    # every guest of this node: after HOLD_LIMIT_S they are served as
                    # they are (one whose room is not here yet goes home, and resumes)
                    asyncio.get_running_loop().call_later(HOLD_LIMIT_S, self._serve_held)
                self._held_routes.add(route)
                self._held.append(m)
                return
        self._handle(m)

    def _handle(self, m: bus.BusMessage) -> None:
        if isinstance(m, bus.Deliver):
            for conn in m.conns:
                self.server.deliver(conn, m.data, progress=m.progress)
            return
        now = self._now()
        effects = self.hub.handle(m, now)  # what another node says is a hub event
        if isinstance(m, bus.Frame):
            guest = self.hub.guest_conn((m.gateway, m.conn))
            if guest is not None:  # a relayed move is this node's to count, as its own are
                self.server.count_moves(effects, guest, now, self._now())
        self.server.apply(effects)
