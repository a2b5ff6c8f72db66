"""The effects executor: runs a ``Hub`` behind the transport and carries out its effects.

Every effect the hub returns is carried out here, in one ``match`` over the closed union
``server.rooms.effects.Effect`` ending in ``assert_never``: an effect nobody handles is a type
error (``mypy --strict``), never a silent drop. Effects that wait (the database, the
solver, a cluster's directory) run as tasks and report back through the hub's entry
points; the rest (frames, closes, the journal) are done before ``_apply`` returns, without
awaiting anything.

Everything it needs is given to its constructor: the transport (``server.runtime.connection``)
and the server's ``Node`` (``server.cluster.node``: a cluster of one, or a ``Cluster`` node over
Redis) are built here, from the parts given.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from ssl import SSLContext
from typing import Any, assert_never
from urllib.parse import parse_qs, urlsplit

from websockets.frames import CloseCode
from websockets.http11 import Request

from protocol.messages import (
    CLOSE_TOO_SLOW,
    NODE_ID_CHARS,
    Error,
    Ghost,
    HintAnswer,
    Message,
    Progress,
    Replay,
    Route,
    encode,
)
from solver import Solution, solve

from ..cluster.node import Alone, Node, NodeHost
from ..cluster.relay import RelayDown
from ..domain.daily import NoWinnableDealError, utc_date
from ..domain.leaderboard import Leaderboards
from ..domain.ratings import DEFAULT_RATING
from ..domain.records import LiveRace, Standing
from ..domain.replays import Replays
from ..domain.stock import prove
from ..rooms import Hub
from ..rooms import events as ev
from ..rooms.effects import (
    Authenticate,
    BeginDaily,
    Close,
    Detach,
    Effect,
    Examine,
    Forget,
    Forward,
    Handover,
    Journal,
    Locate,
    PasswordFailed,
    Persist,
    PoolEnter,
    PoolLeave,
    Prove,
    Query,
    QuickInvite,
    Rate,
    Release,
    Resumed,
    Send,
    Solve,
)
from ..rooms.pool import usual_window
from ..rooms.reports import ReportRequest
from ..storage.journal import JournalWriter
from ..storage.reports import file_report
from ..storage.spool import ResultWriter
from ..storage.sql import NameTakenError, SqlStore
from .connection import HttpHandler, Listener, Peer, binary_frame
from .limits import Network, client_address
from .metrics import Live, Metrics
from .solving import Lane, SolverPool

__all__ = ["RaceServer", "QUERY_CONCURRENCY", "QUERY_QUEUE"]

log = logging.getLogger("yukon.server")

_UNAVAILABLE: dict[str, Any] = {
    "code": "unavailable",
    "text": "the server cannot reach its database just now; try again shortly",
}
_BUSY = Error(
    "unavailable", "the server is answering too many requests just now; try again shortly"
)

#: Board and history requests being answered at once, for every client together, and
#: how many more may wait for their turn (beyond: ``unavailable``). The database's pool
#: holds more connections than this, so a hello or a result always finds one free
#: however many reads are asked for: they never queue behind leaderboard reads.
QUERY_CONCURRENCY = 4
QUERY_QUEUE = 64
#: How long the quick-race pool keeps "when others usually play" before reading it again.
USUAL_S = 600.0

#: The start of YU1-C-AAAAAAB: the hint worker's first job, to load the solver.
_WARM_UP = (
    "C ---- 7H/9s6HQSAD9H8S/4h9c2H4CKC3HTS/8djsjd2S6S6D3C3D/8h5h5dahKD7SQCAS2C"
    "/5ckh7d6ctdJCACQD4S9D/jh3s4dkstcth8C5SQH2D7C"
)


def _asked(peer: Peer) -> str:
    """The node a client's URL asks for (``?node=ID``: a route it followed, docs/protocol.md
    4.25), or "". Only a hint: a node serves whoever reaches it."""
    if peer.request is None:
        return ""
    query = urlsplit(peer.request.path).query
    if "node=" not in query:
        return ""
    asked = parse_qs(query).get("node", [""])[-1]
    return asked if len(asked) <= 64 and NODE_ID_CHARS.issuperset(asked) else ""


def _report_args(request: ReportRequest) -> dict[str, Any]:
    """A report the hub let through, as ``file_report`` takes it (its ``at`` is ``now``)."""
    return {
        "reporter_id": request.reporter_id,
        "player": request.player,
        "race": request.race,
        "reason": request.reason,
        "room": request.room,
        "room_mates": request.room_mates,
        "now": request.at,
    }


class RaceServer:
    """Runs a ``Hub`` behind the websocket transport and carries out its effects.

    ``solver`` runs hints and post-mortems (``server.runtime.solving``); ``node`` builds this
    server's place in its cluster from it (``server.app`` passes a ``Cluster`` over Redis;
    none: ``Alone``, a cluster of one); ``pages`` builds the
    plain-HTTP handler of the same port from this server (``server.pages.http.HttpPages``).
    """

    def __init__(
        self,
        hub: Hub,
        store: SqlStore,
        writer: ResultWriter,
        boards: Leaderboards,
        journal: JournalWriter | None = None,
        *,
        solver: SolverPool | None = None,
        node: Callable[[NodeHost], Node] | None = None,
        pages: Callable[[RaceServer], HttpHandler] | None = None,
        trusted_proxies: tuple[Network, ...] = (),
    ) -> None:
        self.hub = hub
        self.store = store
        self.writer = writer
        self.boards = boards
        self.journal = journal
        #: The solver's worker processes: hints here, post-mortems in ``replays``.
        self.solver = solver if solver is not None else SolverPool()
        #: Replays and post-mortems of stored runs (``server.domain.replays``).
        self.replays = Replays(
            store, boards, budget_nodes=hub.config.hint_budget_nodes, solver=self.solver
        )
        self.metrics = Metrics(
            Live(
                connections=lambda: self.hub.connections,
                rooms=lambda: self.hub.rooms,
                races_running=lambda: self.hub.races_running,
                results_pending=lambda: self.writer.pending,
                db_write_failures=lambda: self.writer.failures,
                db_write_retries=lambda: self.writer.retries,
                hints_in_progress=lambda: self.hints_in_progress,
                winnable_stock=lambda: self.hub.winnable_stock.size(),
                winnable_unproven=lambda: self.hub.winnable_stock.figures.empty,
            ),
            node=hub.node,
        )
        #: Set on SIGTERM: clients are told the server is restarting (1012), not leaving.
        self.closing_for_restart = False
        #: Proxies whose ``X-Forwarded-For`` names the client's address (``limits``).
        self.trusted_proxies = trusted_proxies
        #: The sockets: websockets, and plain HTTP answered by ``pages``' handler.
        self.listener = Listener(self, http=pages(self) if pages is not None else None)
        self._peers: dict[int, Peer] = {}
        self._timer: asyncio.Handle | None = None
        self._timer_at = 0.0
        self._tasks: set[asyncio.Task[None]] = set()
        #: Board and history reads (``_query``): at most ``QUERY_CONCURRENCY`` at once.
        self._reads = asyncio.Semaphore(QUERY_CONCURRENCY)
        self._reads_waiting = 0
        #: When others usually play (``pool.usual_window``), and when it was read (issue 29).
        self._usual: tuple[float, str | None] | None = None
        self.query_queue = QUERY_QUEUE
        #: This server's place in its cluster (``server.cluster.node``): a node of a cluster over
        #: Redis (``server.cluster.cluster``, docs/cluster.md), or a cluster of one. Either
        #: carries out the hub's cluster effects; nothing here asks which it is.
        self.node: Node = node(self) if node is not None else Alone(self, store)

    async def start(self, host: str, port: int, *, ssl: SSLContext | None = None) -> None:
        """Listen on ``host:port`` (port 0 picks a free one); with ``ssl``, wss:// only."""
        await self.listener.start(host, port, ssl=ssl)
        # The stock of winnable deals starts filling now, in the background (``_prove``).
        self._apply(self.hub.handle(ev.FillStock(), self._now()))

    @property
    def port(self) -> int:
        return self.listener.port

    @property
    def http(self) -> HttpHandler | None:
        """What answers plain HTTP on this port (``pages`` built from this server)."""
        return self.listener.http

    @property
    def hints_in_progress(self) -> int:
        """Hints being worked out in the solver's process now (for ``/metrics``)."""
        return self.solver.in_flight(Lane.HINT)

    async def close(self, code: int = 1001, reason: str = "server shutting down") -> None:
        """Stop listening, close every client with ``code`` (1001 going away, or 1012 for a
        restart), then finish storage work: nothing accepted is left unwritten."""
        await self.listener.close(code, reason)
        self.solver.close()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._timer is not None:
            self._timer.cancel()

    # -- the transport's events (``connection.Handler``) -------------------------------------

    def opened(self, peer: Peer) -> None:
        conn = peer.conn
        self._peers[conn] = peer
        log.debug("conn %d open from %s", conn, peer.remote_address)
        self._apply(
            self.hub.connect(conn, self._now(), address=self.address(peer), asked=_asked(peer))
        )
        self.metrics.connections_opened.inc()

    def message(self, peer: Peer, data: bytes | str) -> None:
        loop = self.listener.loop
        conn = peer.conn
        arrived = loop.time()
        try:
            effects = self.hub.receive(conn, data, arrived)
            self._apply(effects)
        except Exception:  # a bug, not bad input: this client only, as websockets would
            log.exception("conn %d: the server failed on a message", conn)
            peer.fail(CloseCode.INTERNAL_ERROR, "internal error")
            return
        self.count_moves(effects, conn, arrived, loop.time())

    def control(self, peer: Peer) -> None:
        self._apply(self.hub.control(peer.conn, self._now()))

    def closed(self, peer: Peer) -> None:
        conn = peer.conn
        if self._peers.pop(conn, None) is None:
            return
        self._apply(self.hub.disconnect(conn, self._now()))
        log.debug("conn %d closed (%s)", conn, peer.protocol.close_code)

    def address(self, peer: Peer, request: Request | None = None) -> str:
        """The client's address: the peer's, or the one a trusted proxy forwards in
        ``request`` (the websocket's upgrade by default; a plain HTTP request's for the
        pages, which count per-address budgets the same way)."""
        address = peer.remote_address[0] if peer.remote_address else ""
        request = request if request is not None else peer.request
        if not self.trusted_proxies or request is None:
            return address
        forwarded = request.headers.get_all("X-Forwarded-For")
        return client_address(address, forwarded, self.trusted_proxies)

    def count_moves(self, effects: list[Effect], conn: int, arrived: float, done: float) -> None:
        """Count the answer to a move (of ``conn``) in ``effects``, and how long it took.
        A guest's move (a cluster's relay) is counted by its room's owner, which answers
        it, so the node's figures hold every move its races accepted."""
        for e in effects:
            if isinstance(e, Send) and e.conn == conn:
                kind = e.message.TYPE
                if kind in ("accepted", "undone"):
                    self.metrics.moves_accepted.inc()
                elif kind == "refused":
                    self.metrics.moves_refused.inc()
                else:
                    continue
                if conn < 0:  # a guest's: the frame and its answer crossed the relay
                    self.metrics.moves_relayed.inc()
                self.metrics.move_ack.observe(done - arrived)
                return

    # -- effects ------------------------------------------------------------------------------

    def apply(self, effects: Iterable[Effect]) -> None:
        """Carry out effects that did not come from a frame (a restored race's, a task's)."""
        self._apply(effects)

    def _apply(self, effects: Iterable[Effect]) -> None:
        # A message sent to several clients (a room's progress) is encoded, and framed,
        # once: the same bytes go to every peer (``connection.binary_frame``).
        encoded: dict[int, bytes] = {}
        framed: dict[int, bytes] = {}
        node = self.node
        for effect in effects:
            match effect:
                case Send(conn, message):
                    key = id(message)
                    data = encoded.get(key)
                    if data is None:
                        data = encoded[key] = encode(message)
                    peer = self._peers.get(conn)
                    if peer is not None:
                        frame = framed.get(key)
                        if frame is None:
                            frame = framed[key] = binary_frame(data)
                        if not peer.send_frame(frame, is_progress=isinstance(message, Progress)):
                            self._too_slow(peer)
                    elif conn < 0:  # a guest: relayed to its gateway
                        if isinstance(message, Route):
                            self.metrics.routes_sent.inc()
                        progress = isinstance(message, Progress)
                        node.to_guest(conn, key, data, progress=progress)
                case Close(conn, code, reason, at_once):
                    peer = self._peers.get(conn)
                    if peer is not None:
                        if at_once:
                            peer.fail(code, reason)
                        else:
                            peer.close(code, reason)
                    elif conn < 0:
                        node.close_guest(conn, code, reason)
                case Journal(entry):
                    if isinstance(entry, LiveRace) and entry.hints:
                        # a race with hints begins: start the solver now
                        self.solver.warm(Lane.HINT, solve, _WARM_UP, budget_nodes=1)
                    if self.journal is not None:
                        self.journal.add(entry)
                case Persist():
                    self._spawn(self._persist(effect))
                case Authenticate():
                    self._spawn(self._authenticate(effect))
                case BeginDaily():
                    self._spawn(self._begin_daily(effect))
                case Query():
                    self._spawn(self._query(effect))
                case Forget():
                    self._spawn(self._forget(effect))
                case Solve():
                    self._spawn(self._solve(effect))
                case Examine():
                    self._spawn(self._examine(effect))
                case Prove():
                    self._spawn(self._prove(effect))
                case Rate():
                    self._spawn(self._rate(effect))
                case (
                    Locate()
                    | Handover()
                    | Forward()
                    | Detach()
                    | Release()
                    | PasswordFailed()
                    | Resumed()
                    | PoolEnter()
                    | PoolLeave()
                    | QuickInvite()
                ):
                    node.effect(effect)
                case _:
                    assert_never(effect)
        node.flush_guests()
        self._schedule()

    def _too_slow(self, peer: Peer) -> None:
        log.warning("conn %d is not reading; closing it", peer.conn)
        peer.discard()
        peer.close(CLOSE_TOO_SLOW, "too slow: not reading")

    def deliver(self, conn: int, data: bytes, *, progress: bool) -> None:
        """A frame the owner of this connection's room sent it (a cluster's relay)."""
        peer = self._peers.get(conn)
        if peer is not None and not peer.send(data, is_progress=progress):
            self._too_slow(peer)

    def keep(self, task: asyncio.Task[None]) -> None:
        """Hold on to a task until it is done (``close`` waits for it)."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        self.keep(asyncio.create_task(work))

    def _now(self) -> float:
        return self.listener.loop.time()

    async def _persist(self, effect: Persist) -> None:
        """Results are announced only once committed; the writer retries through outages."""
        record = effect.record
        try:
            ratings = await self.writer.write(record)
        except Exception:  # refused for good: logged and set aside by the writer
            return
        self._apply(self.hub.committed(record.race_id, self._now(), ratings))

    async def _authenticate(self, effect: Authenticate) -> None:
        hub = self.hub
        new = False
        away: tuple[str, str] | None = None
        try:
            if effect.name is not None:
                identity = await self.store.register_player(
                    name=effect.name, now=time.time(), bot=effect.bot, address=effect.address
                )
                standing = Standing()  # a name just registered has no rating, no streak
                new = True
            else:
                assert effect.token is not None
                found = await self.store.find_player_standing(
                    token=effect.token, today=utc_date(self.boards.wall())
                )
                if found is None:
                    self._apply(
                        hub.hello_refused(
                            effect.conn,
                            code="bad_token",
                            text="unknown token: say hello with your name to register",
                            now=self._now(),
                        )
                    )
                    return
                identity, standing = found
            away = await self.node.locate_player(
                identity.player_id, effect.conn, resume=effect.token is not None
            )
        except RelayDown:
            self._apply(
                hub.hello_refused(
                    effect.conn,
                    code="unavailable",
                    text="the cluster's directory is unreachable, so your room cannot be"
                    " found just now; try again shortly",
                    now=self._now(),
                )
            )
            return
        except NameTakenError:
            self._apply(
                hub.hello_refused(
                    effect.conn,
                    code="name_taken",
                    text=f"the name {effect.name!r} (or one that looks like it) is taken:"
                    " choose another, or, if it is yours, open your name's link from a"
                    " device that has it",
                    now=self._now(),
                )
            )
            return
        except Exception as exc:
            log.warning("hello: database unavailable (%s)", type(exc).__name__)
            self._apply(hub.hello_refused(effect.conn, **_UNAVAILABLE, now=self._now()))
            return
        self._apply(
            hub.authenticated(
                effect.conn,
                player_id=identity.player_id,
                name=identity.name,
                token=identity.token,
                now=self._now(),
                registered=identity.created,
                new=new,
                away=away[0] if away is not None else None,
                away_room=away[1] if away is not None else None,
                standing=standing,
                bot=identity.bot,
            )
        )

    async def _rate(self, effect: Rate) -> None:
        """A player enters the quick-race pool (issue 29): their rating, and when others
        usually play (read again at most every ``USUAL_S``)."""
        rating: float | None
        try:
            found = await self.store.current_ratings([effect.player_id])
            rating = found.get(effect.player_id, (DEFAULT_RATING, 0.0))[0]
            now = time.time()
            if self._usual is None or self._usual[0] + USUAL_S <= now:
                self._usual = (now, usual_window(await self.store.race_hours(now=now)))
        except Exception as exc:
            log.warning("quick: database unavailable (%s)", type(exc).__name__)
            rating = None
        usual = self._usual[1] if self._usual is not None else None
        hub = self.hub
        self._apply(hub.quick_rated(effect.player_id, rating=rating, usual=usual, now=self._now()))

    async def _forget(self, effect: Forget) -> None:
        try:
            await self.store.forget_player(player_id=effect.player_id)
        except Exception as exc:  # the name stays taken; nothing else depends on it
            log.warning("could not forget player %d (%s)", effect.player_id, type(exc).__name__)

    async def _begin_daily(self, effect: BeginDaily) -> None:
        # The day's deal first (chosen once a day, usually ahead of time: ``server.domain.daily``),
        # then the attempt's number, so an attempt is never used up on a deal not dealt.
        try:
            if effect.archive:
                # A past day from the archive: the deal stored for it, never a new choice
                # (a day the server has no deal for was never a daily).
                stored = await self.boards.dailies.stored(effect.date)
                if stored is None:
                    self._apply(
                        self.hub.daily_refused(
                            effect.player_id,
                            code="not_archived",
                            text=f"this server had no daily deal on {effect.date}",
                            now=self._now(),
                        )
                    )
                    return
                choice = stored
            else:
                choice = await self.boards.dailies.get(effect.date)
            attempt = await self.store.begin_daily(
                player_id=effect.player_id, date=effect.date, now=time.time()
            )
        except NoWinnableDealError as exc:
            log.error("daily: %s", exc)
            self._apply(
                self.hub.daily_refused(
                    effect.player_id,
                    code="unavailable",
                    text="no daily deal today: the solver proved no candidate winnable",
                    now=self._now(),
                )
            )
            return
        except Exception as exc:
            log.warning("daily: database unavailable (%s)", type(exc).__name__)
            self._apply(self.hub.daily_refused(effect.player_id, **_UNAVAILABLE, now=self._now()))
            return
        self._apply(
            self.hub.daily_begun(
                effect.player_id,
                date=effect.date,
                attempt=attempt,
                deal=choice.code,
                par=choice.par,
                salt=choice.salt,
                archive=effect.archive,
                now=self._now(),
            )
        )

    async def _query(self, effect: Query) -> None:
        """Answer a board or history request, ``QUERY_CONCURRENCY`` at most at once.

        Reads wait for their turn here, not in the database's pool: a flood of them would
        otherwise take every pooled connection, and hellos and results would wait behind
        them (or fail on the pool's timeout). Past ``query_queue`` waiting, a read is
        refused at once (``unavailable``) rather than kept, with its memory, in a queue.
        """
        reply: Message
        if self._reads.locked() and self._reads_waiting >= self.query_queue:
            reply = _BUSY
        else:
            self._reads_waiting += 1
            try:
                await self._reads.acquire()
            finally:
                self._reads_waiting -= 1
            try:
                if isinstance(effect.message, Ghost):
                    found = await self.replays.ghost(effect.message, effect.player_id)
                    self._apply(self.hub.ghost_answered(effect.conn, found, self._now()))
                    return
                if isinstance(effect.message, ReportRequest):  # issue 40: a player's report
                    reply = await file_report(self.store.engine, **_report_args(effect.message))
                elif isinstance(effect.message, Replay):
                    reply = await self.replays.replay(effect.message)
                else:
                    reply = await self.boards.answer(effect.message, effect.player_id)
            except Exception as exc:
                log.warning("query: database unavailable (%s)", type(exc).__name__)
                reply = Error(**_UNAVAILABLE)
            finally:
                self._reads.release()
        self._apply(self.hub.query_answered(effect.conn, reply, self._now()))

    async def _examine(self, effect: Examine) -> None:
        """A post-mortem (``server.domain.replays``: storage, then the solver's process)."""
        m = effect.message
        reply = await self.replays.postmortem(m.race, m.player)
        self._apply(self.hub.postmortem_answered(effect.conn, reply, self._now()))

    async def _solve(self, effect: Solve) -> None:
        """Work a hint out off the event loop, then hand the verdict to the hub."""
        started = time.perf_counter()
        try:
            solution: Solution = await self.solver.run(
                Lane.HINT, solve, effect.position, budget_nodes=effect.budget_nodes
            )
        except asyncio.CancelledError:  # the server is closing
            return
        except Exception as exc:  # the worker died (BrokenProcessPool), or we are closing
            log.warning("hint: the solver failed (%s)", type(exc).__name__)
            self.metrics.hint_failures.inc()
            self._apply(self.hub.hint_failed(effect.player_id, effect.request, now=self._now()))
            return
        effects = self.hub.hint_ready(
            effect.player_id,
            effect.request,
            verdict=solution.verdict,
            moves=solution.best,  # the winning line, or an unknown's best guess
            now=self._now(),
        )
        # Counted (verdict and time) only when the answer goes out, which marks the run as
        # hinted: a player who asks and drops must not read the verdict on the public
        # /metrics while their run is not marked.
        sent = [
            e.message for e in effects if isinstance(e, Send) and isinstance(e.message, HintAnswer)
        ]
        if sent:
            verdict = "best" if sent[0].verdict == "best" else solution.verdict
            self.metrics.hint_solved(verdict, time.perf_counter() - started)
        self._apply(effects)

    async def _prove(self, effect: Prove) -> None:
        """Prove a deal for the stock of winnable deals (or a room's, dealt while it was
        empty) on the solver's stock lane, then hand the verdict to the hub."""
        try:
            verdict = await self.solver.run(
                Lane.STOCK, prove, effect.rules, effect.seed, effect.budget_nodes
            )
        except asyncio.CancelledError:  # the server is closing
            return
        except Exception as exc:  # the worker died (BrokenProcessPool), or we are closing
            log.warning("winnable deals: the solver failed (%s)", type(exc).__name__)
            verdict = "failed"
        self.metrics.winnable_proofs.labels(verdict).inc()
        event = ev.DealProven(effect.rules, effect.seed, verdict, effect.room)
        self._apply(self.hub.handle(event, self._now()))

    def _schedule(self) -> None:
        # The deadline is kept beside the handle: uvloop's ``call_at`` for a time already
        # past gives a handle without ``when()``.
        deadline = self.hub.next_deadline()
        if self._timer is not None:
            if deadline is not None and self._timer_at == deadline:
                return
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            self._timer = self.listener.loop.call_at(deadline, self._tick)
            self._timer_at = deadline

    def _tick(self) -> None:
        self._timer = None
        listener = self.listener
        listener.hold()  # the tick's frames (every room's progress) leave together
        try:
            self._apply(self.hub.tick(self._now()))
        finally:
            listener.release()
