"""What a server is in its cluster: one design for a node alone and a node of many.

``RaceServer`` carries out the hub's effects; those about other nodes (``Locate``,
``Handover``, ``Forward``, ...), the frames for guests, where a player's room is at their
hello, who owns a room code, the lock on a day's deal, and what happens at start and stop
go to its ``Node``, whichever kind it is. There is no "alone" branch in the executor, the
HTTP pages or the start-up: a server without ``--redis`` is a cluster of one (``Alone``),
a server with it a node of a cluster over Redis (``server.cluster.cluster.Cluster``). Anchor:
Colyseus's ``LocalPresence``, the in-memory stand-in for its Redis presence that makes a
single process the same program as a fleet.

A cluster of one is simple because nothing is elsewhere: every room code is this node's
to give, every room it does not hold is nowhere, every lock is free, and its start-up
rebuilds every race its journal holds (it was the only node that could have run them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Protocol

from ..domain.replays import live_ghost
from ..rooms import events as ev
from ..rooms.effects import ClusterEffect, Effect, Locate, PasswordFailed, Resumed
from ..rooms.hub import Hub
from ..runtime.metrics import Metrics
from ..storage.sql import SqlStore

__all__ = ["Alone", "Node", "NodeHost"]

log = logging.getLogger("yukon.node")


class NodeHost(Protocol):
    """What a node needs of the server that hosts it (``server.runtime.executor``'s
    ``RaceServer`` is one): the hub, its effects carried out, tasks kept, frames delivered
    to its own connections, moves counted. A node sees no more of the server than this, so
    the cluster's code never imports the executor (``server.app`` builds both)."""

    hub: Hub
    metrics: Metrics

    def apply(self, effects: Iterable[Effect]) -> None:
        """Carry out the hub's effects, in order."""

    def keep(self, task: asyncio.Task[None]) -> None:
        """Hold a reference to ``task`` until it ends (its failure is logged)."""

    def deliver(self, conn: int, data: bytes, *, progress: bool) -> None:
        """A frame for this node's connection ``conn``, sent by its room's node."""

    def count_moves(self, effects: list[Effect], conn: int, arrived: float, done: float) -> None:
        """Count the moves ``effects`` accepted for ``conn`` in the node's figures."""


class Node(Protocol):
    """A server's place in its cluster, as the executor, the pages and ``app`` use it."""

    #: This node's id ("" alone: nothing else needs to tell it apart).
    node: str

    async def start(self) -> None:
        """Before the first client: take what is this node's to run (a restart's races, a
        dead node's), and start whatever keeps the node's place in the cluster."""

    async def stop(self) -> None:
        """Stop keeping the node's place (before the clients are closed)."""

    async def close(self) -> None:
        """Last, after storage finished: let go of the cluster for good."""

    def effect(self, e: ClusterEffect) -> None:
        """Carry out an effect about other nodes."""

    def to_guest(self, conn: int, key: int, data: bytes, *, progress: bool) -> None:
        """A frame for guest ``conn`` (a session of another node)."""

    def close_guest(self, conn: int, code: int, reason: str) -> None:
        """Close guest ``conn`` (its gateway closes its client)."""

    def flush_guests(self) -> None:
        """The event's frames for guests are all given: send them."""

    async def locate_player(
        self, player_id: int, conn: int, *, resume: bool
    ) -> tuple[str, str] | None:
        """At a hello: the other node and room code where the player has their room, or
        None (here, or nowhere)."""

    async def owner(self, code: str) -> str | None:
        """The node that holds room ``code``, as the directory says (None: none)."""

    async def lock(self, name: str) -> bool:
        """Take the cluster-wide lock ``name`` (the day's deal is chosen once)."""


class Alone:
    """A cluster of one: this node is the whole directory (see the module docstring)."""

    node = ""

    def __init__(self, server: NodeHost, store: SqlStore) -> None:
        self.server = server
        self.hub = server.hub
        self.store = store

    async def start(self) -> None:
        """Races that were running when the server last stopped (or crashed) go on: they
        are rebuilt before the first client can say hello, so a resume always finds its
        race. Alone, every race of the journal was this server's."""
        loop = asyncio.get_running_loop()
        for live, actions, alive_ms in await self.store.live_races():
            ghost = await live_ghost(self.store, live)
            self.server.apply(self.hub.restore(live, actions, alive_ms, loop.time(), ghost=ghost))

    async def stop(self) -> None:
        """Nothing keeps a place: there is nobody to tell."""

    async def close(self) -> None:
        """Nothing to let go of."""

    def effect(self, e: ClusterEffect) -> None:
        """A ``Locate`` is answered at once: a room this node does not hold is nowhere.
        A wrong password, or a player's newest session, is told to every other node:
        there is none. The rest name
        another node, which a cluster of one never has: a bug, logged, never a crash."""
        if isinstance(e, Locate):
            located = ev.Located(e.conn, e.code, None, e.frame)
            loop = asyncio.get_running_loop()
            loop.call_soon(lambda: self.server.apply(self.hub.handle(located, loop.time())))
            return
        if isinstance(e, (PasswordFailed, Resumed)):  # no other node to tell
            return
        log.error("%s on a server alone: no other node to carry it out", type(e).__name__)

    def to_guest(self, conn: int, key: int, data: bytes, *, progress: bool) -> None:
        log.error("conn %d: a frame for a guest on a server alone: dropped", conn)

    def close_guest(self, conn: int, code: int, reason: str) -> None:
        log.error("conn %d: a guest closed on a server alone: ignored", conn)

    def flush_guests(self) -> None:
        """No guests: nothing is ever held."""

    async def locate_player(
        self, player_id: int, conn: int, *, resume: bool
    ) -> tuple[str, str] | None:
        """The player's room, if any, is here."""
        return None

    async def owner(self, code: str) -> str | None:
        """A room this node does not hold is nowhere."""
        return None

    async def lock(self, name: str) -> bool:
        """Nobody else could take it."""
        return True
