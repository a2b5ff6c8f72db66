"""Replays and post-mortems of stored runs: storage and the solver to wire messages.

A run is addressed by its race's id (``races.uid``, the ``race`` of a ``result``, a board
row or a history row) and its player's name. Like ``leaderboard.py`` this is read-only
and outside the race logic, and it keeps the protocol's rule on secrets
(docs/protocol.md 4.5, 4.22): a race still running is refused (``race_running``), and so
is a run whose deal is still secret (``not_public``): a daily attempt until
``daily.code_public`` says its day's code may be shown, and any race on a daily code not
public yet. A race in an ordinary room is stored only once every runner is done, and its
code (drawn in secret or not) is revealed with its result, as it is stored.

The post-mortem (``solver.postmortem``) runs in a worker process of its own (its lane of
the server's ``solving.SolverPool``), one at a time, never on the event loop, with the
hints' node budget per solve. It has its own process rather than the hints' so that a
post-mortem never delays a hint in a running race. Answers are cached in memory
(``CACHE_SIZE`` runs, the least recently asked forgotten first): a post-mortem is
deterministic for its budget and a restart only costs its recomputation, so it needs no
table. At most ``QUEUE_LIMIT`` different post-mortems are on their way at once (asked
over the wire and over HTTP together); beyond, the answer is ``unavailable``.
Two requests for the same run share one computation.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections import OrderedDict
from typing import Any

from protocol import GameCode, InvalidCodeError
from protocol.messages import (
    MAX_LINE,
    MAX_REPLAY_PAGE,
    MAX_WASTED,
    Error,
    Ghost,
    Message,
    PostMortemAnswer,
    Replay,
    ReplayPage,
)
from solver.postmortem import PostMortem, postmortem

from ..domain.records import GhostRun, LiveRace
from ..rooms.postmortems import QUEUE_LIMIT
from ..runtime.solving import Lane, SolverPool
from ..storage.sql import SqlStore, StoredRun
from .daily import code_public_at
from .leaderboard import Leaderboards

__all__ = ["Replays", "CACHE_SIZE", "QUEUE_LIMIT", "ghost_run", "live_ghost", "message_json"]

log = logging.getLogger("yukon.replays")

#: Post-mortems kept in memory. One is a few hundred bytes (a line of about 100 moves) and
#: at most about 9 KiB (the longest line and wasted list a message carries).
CACHE_SIZE = 1024

_UNAVAILABLE = "the database cannot be reached just now; ask again later"


def _unix_ms(when: dt.datetime) -> int:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def message_json(message: Message) -> dict[str, Any]:
    """A message's fields as JSON data, named as on the wire (the HTTP form)."""
    return {f.name: f.kind.wire(getattr(message, f.name)) for f in message.FIELDS}


def _page(run: StoredRun, offset: int, limit: int | None) -> ReplayPage:
    actions = run.actions[offset:] if limit is None else run.actions[offset : offset + limit]
    return ReplayPage(
        race=run.race,
        player=run.name,
        code=run.code,
        rules=run.rules,
        room=run.room,
        date=run.daily_date.isoformat() if run.daily_date is not None else None,
        practice=run.practice,
        finished_ms=_unix_ms(run.finished_at),
        players=run.players,
        rank=run.rank,
        outcome=run.outcome,
        time_ms=run.time_ms,
        moves=run.moves,
        score=run.score,
        foundations=run.foundations,
        undos=run.undos,
        hinted=run.hinted,
        total=len(run.actions),
        offset=offset,
        actions=actions,
    )


def ghost_run(run: StoredRun, *, salt: str | None = None, daily: dt.date | None = None) -> GhostRun:
    """What the hub needs of a stored run to race it as a ghost (``server.rooms.ghosts``)."""
    return GhostRun(
        race=run.race,
        name=run.name,
        code=run.code,
        salt=salt,
        daily=daily,
        actions=run.actions,
        outcome=run.outcome,
        time_ms=run.time_ms,
        moves=run.moves,
        score=run.score,
        foundations=run.foundations,
        hinted=run.hinted,
    )


async def live_ghost(store: SqlStore, live: LiveRace) -> GhostRun | None:
    """The ghost a journaled race raced, fetched again from storage, for a race rebuilt
    after a restart or taken over from a node that died (None: it raced no ghost)."""
    if live.ghost_race is None or live.ghost_player is None:
        return None
    run = await store.run(race=live.ghost_race, name=live.ghost_player)
    if run is None:  # cannot happen: stored races are never deleted
        log.error("race %s: its ghost's run is gone; it goes on alone", live.uid)
        return None
    return ghost_run(run, salt=live.salt, daily=live.daily_date)


def _answer(run: StoredRun, found: PostMortem, budget: int) -> PostMortemAnswer:
    return PostMortemAnswer(
        race=run.race,
        player=run.name,
        status=found.status,
        last_winnable=found.last_winnable,
        losing_move=found.losing_move,
        lost_from=found.lost_from,
        line=found.line[:MAX_LINE],
        par=found.par,
        kept=found.kept,
        wasted=found.wasted[:MAX_WASTED],
        wasted_total=len(found.wasted),
        budget=budget,
    )


class Replays:
    """Answers ``replay`` and ``postmortem`` (and their HTTP forms) for one server."""

    def __init__(
        self,
        store: SqlStore,
        boards: Leaderboards,
        *,
        budget_nodes: int,
        solver: SolverPool,
        queue_limit: int = QUEUE_LIMIT,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.store = store
        #: The wall clock and the daily deals (``Leaderboards.still_secret``).
        self.boards = boards
        #: Positions each solve of a post-mortem may search (the hints' budget).
        self.budget_nodes = budget_nodes
        self.queue_limit = queue_limit
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, int], PostMortemAnswer] = OrderedDict()
        self._working: dict[tuple[str, int], asyncio.Future[Message]] = {}
        #: The solver's worker processes (its post-mortem lane); closing it cancels the
        #: jobs awaited, so that a server stops without waiting for a long post-mortem.
        self.solver = solver
        #: Post-mortems worked out by the solver since the start (tests, logs).
        self.computed = 0

    # -- finding a run, and whether it may be shown -----------------------------------------

    async def find(self, race: str, player: str) -> StoredRun | Error:
        """The stored run, or the ``error`` that refuses it (docs/protocol.md 4.22)."""
        found = await self._stored(race, player)
        if isinstance(found, Error):
            return found
        try:
            hidden = await self._secret_until(found)
        except Exception as exc:
            log.warning("replay: database unavailable (%s)", type(exc).__name__)
            return Error("unavailable", _UNAVAILABLE)
        if hidden is not None:
            return Error("not_public", hidden)
        return found

    async def _stored(self, race: str, player: str) -> StoredRun | Error:
        """The stored run, whether or not it may be shown; or the error that says why not
        (no such race or runner, still running, the database away)."""
        try:
            state = await self.store.race_state(race=race)
            if state is None:
                return Error("no_such_race", f"no finished race has the id {race[:40]!r}")
            if state == "running":
                return Error(
                    "race_running",
                    "that race is still running: its runs are shown once it is over",
                )
            run = await self.store.run(race=race, name=player)
            if run is None:
                return Error("no_such_player", f"nobody called {player[:20]!r} ran in that race")
        except Exception as exc:
            log.warning("replay: database unavailable (%s)", type(exc).__name__)
            return Error("unavailable", _UNAVAILABLE)
        return run

    async def _secret_until(self, run: StoredRun) -> str | None:
        """Why the run's deal may not be shown yet, or None if it may."""
        wall = self.boards.wall()
        if run.daily_date is not None and wall < code_public_at(run.daily_date):
            at = dt.datetime.fromtimestamp(code_public_at(run.daily_date), dt.UTC)
            return (
                f"the daily deal of {run.daily_date.isoformat()} and its runs are shown from"
                f" {at:%Y-%m-%d %H:%M} UTC"
            )
        try:
            code = GameCode.parse(run.code)
        except InvalidCodeError:  # pragma: no cover - every stored code was parsed once
            return None
        if await self.boards.still_secret(code):
            return "that race's deal is still secret"
        return None

    # -- replay -------------------------------------------------------------------------------

    async def replay(self, m: Replay) -> Message:
        """A ``replay_page`` of up to ``MAX_REPLAY_PAGE`` actions from ``m.offset``."""
        found = await self.find(m.race, m.player)
        if isinstance(found, Error):
            return found
        return _page(found, min(m.offset, len(found.actions)), MAX_REPLAY_PAGE)

    async def replay_whole(self, race: str, player: str) -> Message:
        """The whole run in one ``ReplayPage`` (every action): the HTTP form, which has no
        frame limit. Never sent over the websocket."""
        found = await self.find(race, player)
        if isinstance(found, Error):
            return found
        return _page(found, 0, None)

    # -- ghost ----------------------------------------------------------------------------------

    async def ghost(self, m: Ghost, player_id: int) -> GhostRun | Error:
        """The run ``m`` asks to race, or the error that refuses it (docs/protocol.md 4.23).

        A run that may be replayed may be raced. Besides, a player whose own counted
        attempt at today's daily deal is stored may race another player's run on today's
        daily board (``race`` nil, or that run's id): as practice, on a deal whose code
        stays secret, and the run's actions never leave the server (``GhostRun.daily``).
        """
        today = self.boards.today()
        if m.race is None:
            try:
                race = await self.store.counted_daily(date=today, name=m.player)
            except Exception as exc:
                log.warning("ghost: database unavailable (%s)", type(exc).__name__)
                return Error("unavailable", _UNAVAILABLE)
            if race is None:
                return Error(
                    "no_such_player",
                    f"{m.player[:20]!r} has no finished run on today's daily board",
                )
        else:
            race = m.race
        found = await self._stored(race, m.player)
        if isinstance(found, Error):
            return found
        try:
            hidden = await self._secret_until(found)
            if hidden is None:
                return ghost_run(found)
            if found.daily_date != today or found.practice:
                return Error("not_public", hidden)
            # A run on today's board: raced only after one's own counted attempt is over.
            mine = await self.store.counted_daily(date=today, player_id=player_id)
            choice = await self.boards.dailies.stored(today)
        except Exception as exc:
            log.warning("ghost: database unavailable (%s)", type(exc).__name__)
            return Error("unavailable", _UNAVAILABLE)
        if mine is None:
            return Error(
                "not_public",
                "a run of today's daily deal is raced only after your own counted attempt"
                " at it is over: play the daily first",
            )
        salt = choice.salt if choice is not None and str(choice.code) == found.code else None
        return ghost_run(found, salt=salt, daily=today)

    # -- post-mortem ---------------------------------------------------------------------------

    async def postmortem(self, race: str, player: str) -> Message:
        """The solver's post-mortem of the run: from the cache, from a computation already
        on its way, or worked out now in the solver's worker process."""
        found = await self.find(race, player)
        if isinstance(found, Error):
            return found
        key = (found.race, found.player_id)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        working = self._working.get(key)
        if working is not None:
            return await asyncio.shield(working)
        if len(self._working) >= self.queue_limit:
            return Error(
                "unavailable", "the server is working out many post-mortems; ask again soon"
            )
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._working[key] = future
        try:
            answer = await self._compute(found)  # answers every failure with an error
            future.set_result(answer)
        finally:
            del self._working[key]
            if not future.done():  # cancelled (the server is closing): so are the others
                future.cancel()
        return answer

    async def _compute(self, run: StoredRun) -> Message:
        try:
            found: PostMortem = await self.solver.run(
                Lane.POSTMORTEM,
                postmortem,
                run.code,
                [action for _, action in run.actions],
                budget_nodes=self.budget_nodes,
            )
        except Exception as exc:  # the worker died, a stored run did not replay, closing
            log.warning("postmortem of %s: the solver failed (%s)", run.race, type(exc).__name__)
            return Error("unavailable", "the post-mortem could not be worked out just now")
        self.computed += 1
        answer = _answer(run, found, self.budget_nodes)
        self._cache[(run.race, run.player_id)] = answer
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        log.info(
            "postmortem of %s, %s: %s (%d solves, %d positions)",
            run.race,
            run.name,
            found.status,
            found.solves,
            found.nodes,
        )
        return answer
