"""Speed of the leaderboards on PostgreSQL at a realistic size.

Run from the repository root, either way::

    python -m bench.leaderboard
    python bench/leaderboard.py --results 200000 --days 10 --players 20000 --repeat 20

Without ``--db`` it creates a fresh database ``yukon_bench_<random>`` on the server given by
``--server`` (default ``postgresql://postgres@127.0.0.1:5432``) and drops it at the end,
unless ``--keep``. It builds the schema with the real migrations (so with their indexes),
then fills it with PostgreSQL ``COPY``: ``--players`` players and ``--results`` results of
the daily deal spread over ``--days`` days (one race row per result, as a daily attempt
is), about 3 % of them practice (a second attempt). Outcomes are drawn to look real: about
70 % won in 1-20 minutes with 80-300 moves, the rest resigned, out of time or stuck with
0-51 cards on the foundations. The ``moves`` and ``daily_attempts`` tables stay empty: no
board reads them. Then ``VACUUM (ANALYZE)``, which is what autovacuum does to a freshly
filled table within a minute or so: afterwards every heap page is all-visible, so counting
a board is an index-only scan. ``--no-vacuum`` measures the other case instead: ANALYZE
only, with autovacuum turned off for the filled tables, so that no page is all-visible
and every index-only scan also reads the table, as it does for the newest rows (today's
board) on a live server between two autovacuum runs.

A database given with ``--db`` that already holds results (say one kept by ``--keep``) is
measured as it is, without filling.

It times ``SqlStore``'s own methods, each ``--repeat`` times over random dates and players
(from ``--seed``), after a few untimed warm-up calls: the daily board's top 50, a page of 50
deep in it (at 80 % of the day's rows), "around me" (21 rows centred on a player), the top
50 as the server asks for it (with the asking player, so with a ``you`` row), a deal board
(each player's best result on one day's deal, from ``deal_bests``) and a player's history.
Each figure is wall time for the whole call, as the server sees it: every SQL round trip,
SQLAlchemy and the driver included. The three daily-board calls and the deal board are held
to the 10 ms target. Finally it prints ``EXPLAIN (ANALYZE, BUFFERS)`` of every statement of
one call of the slowest of those four: its custom plan, and also its generic plan where
that differs (the driver prepares each statement, and after five runs PostgreSQL may
switch to the generic plan, made without the parameter values).

This is a measurement, not a test: it never fails on timing and always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import math
import os
import platform
import random
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

if __package__ in (None, ""):  # run as ``python bench/leaderboard.py``: find ``server``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from bench.engine import cpu_model
from protocol import GameCode, Rules
from protocol.codes import MAX_DEAL
from server.storage.migrate import upgrade
from server.storage.models import board_key
from server.storage.sql import Board, SqlStore, normalize_url

#: Target for each daily-board median, in milliseconds.
TARGET_MS = 10.0

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432"

#: Rows per COPY.
BATCH = 25_000
#: Share of a day's results that are practice (a later attempt, off the daily board).
PRACTICE_SHARE = 0.03
WIN_SHARE = 0.70
#: The server's default time limit for the daily deal (``daily_time_limit``), in ms.
DAILY_LIMIT_MS = 1_800_000
#: A won game: 52 cards up (10 points each) and every one of the 21 face-down cards
#: turned (5 points each).
WON_SCORE = 52 * 10 + 21 * 5
#: Each player's best counted result per deal, from the results (as migration 0006).
BESTS_SQL = (
    "INSERT INTO deal_bests (code, player_id, result_id, board_key)"
    " SELECT code, player_id, id, board_key FROM ("
    "  SELECT code, player_id, id, board_key, row_number() OVER"
    "   (PARTITION BY code, player_id ORDER BY board_key, id) AS n"
    "  FROM results WHERE NOT practice"
    " ) AS ranked WHERE n = 1"
)
#: The tables the bench fills.
FILLED = ("players", "races", "results", "deal_bests")
#: Warm-up calls per timed operation, not counted.
WARMUP = 3

PLAYER_COLUMNS = ("id", "name", "name_key", "token_hash", "created_at")
RACE_COLUMNS = ("id", "uid", "code", "rules", "room", "daily_date", "started_at", "ended_at")
RESULT_COLUMNS = (
    "id",
    "race_id",
    "player_id",
    "code",
    "daily_date",
    "practice",
    "outcome",
    "time_ms",
    "moves",
    "score",
    "foundations",
    "rank",
    "undos",
    "board_key",
    "finished_at",
)


@dataclass(frozen=True, slots=True)
class Day:
    date: dt.date
    code: str
    #: Counted (first) attempts: the rows of the daily board.
    counted: int
    results: int
    #: Players with a counted result that day, for "around me".
    players: tuple[int, ...]


@dataclass(slots=True)
class Timing:
    name: str
    ms: list[float]
    rows: list[int]
    #: Whether the figure is held to ``TARGET_MS``.
    board: bool
    odd: int = 0


# -- the machine ------------------------------------------------------------------------------


def memory_gib() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def say(message: str) -> None:
    print(message, flush=True)


# -- the database -----------------------------------------------------------------------------


async def admin(server: str, sql: str) -> None:
    """One statement on the server's ``postgres`` database, outside a transaction."""
    engine = create_async_engine(normalize_url(f"{server}/postgres"), isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.exec_driver_sql(sql)
    finally:
        await engine.dispose()


async def driver(conn: AsyncConnection) -> Any:
    """The asyncpg connection under a SQLAlchemy connection (for COPY and VACUUM)."""
    raw = await conn.get_raw_connection()
    return raw.driver_connection


async def scalar(store: SqlStore, sql: str, **params: Any) -> Any:
    async with store.engine.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar()


# -- filling ----------------------------------------------------------------------------------


def draw_outcome(rng: random.Random) -> tuple[str, int, int, int, int, int]:
    """outcome, time_ms, moves, score, foundations, undos of one plausible game."""
    undos = min(20, int(rng.expovariate(0.8)))
    if rng.random() < WIN_SHARE:
        time_ms = 60_000 + int(1_140_000 * rng.random() ** 2)  # 1-20 min, most are quick
        return "won", time_ms, rng.randint(80, 300), WON_SCORE, 52, undos
    foundations = rng.randint(0, 51)
    score = foundations * 10 + rng.randint(0, 21) * 5
    moves = rng.randint(5, 300)
    kind = rng.random()
    if kind < 0.5:
        return "resigned", rng.randint(10_000, DAILY_LIMIT_MS - 1), moves, score, foundations, undos
    if kind < 0.75:
        return "timeout", DAILY_LIMIT_MS, moves, score, foundations, undos
    return "stuck", rng.randint(30_000, DAILY_LIMIT_MS - 1), moves, score, foundations, undos


async def fill(store: SqlStore, *, players: int, results: int, days: int, seed: int) -> None:
    rng = random.Random(seed)
    boot = secrets.token_hex(4)
    today = dt.datetime.now(dt.UTC).date()
    dates = [today - dt.timedelta(days=days - i) for i in range(days)]  # up to yesterday
    rules = Rules.parse("C")
    started = time.perf_counter()
    async with store.engine.connect() as conn:
        pg = await driver(conn)

        say(f"  players: {players:,} ...")
        joined = dt.datetime.combine(dates[0], dt.time(), dt.UTC) - dt.timedelta(days=30)
        for lo in range(1, players + 1, BATCH):
            people = []
            for pid in range(lo, min(players, lo + BATCH - 1) + 1):
                name = f"Player{pid:07d}"
                token_hash = hashlib.sha256(f"bench-{seed}-{pid}".encode()).hexdigest()
                created = joined + dt.timedelta(seconds=rng.randrange(30 * 86_400))
                people.append((pid, name, name.casefold(), token_hash, created))
            await pg.copy_records_to_table("players", records=people, columns=PLAYER_COLUMNS)
        say(f"  players done in {time.perf_counter() - started:.1f} s")

        base, extra = divmod(results, days)
        next_id = 1
        done = 0
        for i, date in enumerate(dates):
            n_day = base + (1 if i < extra else 0)
            code = str(GameCode(rules, rng.randrange(MAX_DEAL + 1)))
            n_practice = int(n_day * PRACTICE_SHARE)
            n_counted = min(players, n_day - n_practice)
            n_practice = n_day - n_counted if n_counted else 0
            counted = rng.sample(range(1, players + 1), n_counted)
            entries = [(rng.randrange(86_400_000), pid, False) for pid in counted]
            entries += [
                (rng.randrange(86_400_000), rng.choice(counted), True) for _ in range(n_practice)
            ]
            entries.sort()  # ids follow the finishing order, as they do on a live server
            midnight = dt.datetime.combine(date, dt.time(), dt.UTC)
            for lo in range(0, len(entries), BATCH):
                races = []
                rows = []
                for at_ms, pid, practice in entries[lo : lo + BATCH]:
                    outcome, time_ms, moves, score, foundations, undos = draw_outcome(rng)
                    ended = midnight + dt.timedelta(milliseconds=at_ms)
                    begun = ended - dt.timedelta(milliseconds=time_ms)
                    key = board_key(
                        won=outcome == "won",
                        time_ms=time_ms,
                        moves=moves,
                        foundations=foundations,
                        score=score,
                    )
                    races.append(
                        (next_id, f"{boot}-{next_id}", code, "C", None, date, begun, ended)
                    )
                    rows.append(
                        (
                            next_id,
                            next_id,
                            pid,
                            code,
                            date,
                            practice,
                            outcome,
                            time_ms,
                            moves,
                            score,
                            foundations,
                            1,
                            undos,
                            key,
                            ended,
                        )
                    )
                    next_id += 1
                await pg.copy_records_to_table("races", records=races, columns=RACE_COLUMNS)
                await pg.copy_records_to_table("results", records=rows, columns=RESULT_COLUMNS)
                done += len(rows)
            elapsed = time.perf_counter() - started
            say(
                f"  day {i + 1}/{days} {date}: {n_day:,} results ({n_practice:,} practice);"
                f" {done:,}/{results:,} in {elapsed:.1f} s"
            )
        for table in ("players", "races", "results"):
            await pg.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
            )
        # What the writer keeps as it stores each result (SqlStore._keep_best), here in
        # one pass, as migration 0006 does: each player's best counted result per deal.
        await pg.execute(BESTS_SQL)
    say(f"  filled in {time.perf_counter() - started:.1f} s")


async def no_autovacuum(store: SqlStore) -> None:
    async with store.engine.connect() as conn:
        pg = await driver(conn)
        for table in FILLED:
            await pg.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
    say(f"  autovacuum turned off for {', '.join(FILLED)} (--no-vacuum)")


async def analyze(store: SqlStore, *, vacuum: bool) -> None:
    started = time.perf_counter()
    command = "VACUUM (ANALYZE)" if vacuum else "ANALYZE"
    say(f"  {command} ...")
    async with store.engine.connect() as conn:
        pg = await driver(conn)
        await pg.execute(f"{command} {', '.join(FILLED)}")
    say(f"  {command} done in {time.perf_counter() - started:.1f} s")


async def read_days(store: SqlStore) -> list[Day]:
    """The daily deals in the database with their sizes and players."""
    async with store.engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "SELECT daily_date, min(code) AS code,"
                    " count(*) FILTER (WHERE NOT practice) AS counted, count(*) AS results,"
                    " array_agg(player_id) FILTER (WHERE NOT practice) AS players"
                    " FROM results WHERE daily_date IS NOT NULL"
                    " GROUP BY daily_date ORDER BY daily_date"
                )
            )
        ).all()
    return [
        Day(row.daily_date, row.code, row.counted, row.results, tuple(row.players or ()))
        for row in rows
    ]


# -- timing -----------------------------------------------------------------------------------


Call = Callable[[], Awaitable[Any]]


async def time_calls(name: str, calls: list[Call], *, board: bool) -> Timing:
    for call in calls[:WARMUP]:
        await call()
    timing = Timing(name, [], [], board)
    clock = time.perf_counter
    for call in calls[WARMUP:]:
        start = clock()
        answer = await call()
        timing.ms.append((clock() - start) * 1000)
        timing.rows.append(len(answer.rows))
    timing.ms.sort()
    return timing


async def run_timings(store: SqlStore, days: list[Day], repeat: int, seed: int) -> list[Timing]:
    rng = random.Random(seed + 1)
    n = repeat + WARMUP
    counted_days = [d for d in days if d.players]

    def day() -> Day:
        return rng.choice(counted_days)

    timings: list[Timing] = []
    daily = store.daily_board

    top: list[Call] = [partial(daily, date=day().date, offset=0, limit=50) for _ in range(n)]
    timings.append(await time_calls("daily top 50", top, board=True))

    deep: list[Call] = []
    for _ in range(n):
        d = day()
        deep.append(partial(daily, date=d.date, offset=int(d.counted * 0.8), limit=50))
    timings.append(await time_calls("daily page at 80 %", deep, board=True))

    odd = 0

    async def around(date: dt.date, player_id: int) -> Board:
        nonlocal odd
        board = await daily(date=date, player_id=player_id, around=True, limit=21)
        if board.you is None or all(e.player_id != player_id for e in board.rows):
            odd += 1  # a page that misses the player's own row: reported, not fatal
        return board

    mine: list[Call] = []
    for _ in range(n):
        d = day()
        mine.append(partial(around, d.date, rng.choice(d.players)))
    timing = await time_calls("daily around me (21)", mine, board=True)
    timing.odd = odd
    timings.append(timing)

    asker: list[Call] = []
    for _ in range(n):
        d = day()
        asker.append(
            partial(daily, date=d.date, offset=0, limit=50, player_id=rng.choice(d.players))
        )
    timings.append(await time_calls("daily top 50 + you", asker, board=False))

    deal: list[Call] = [
        partial(store.deal_board, code=day().code, offset=0, limit=50) for _ in range(n)
    ]
    timings.append(await time_calls("deal board top 50", deal, board=True))

    history: list[Call] = [
        partial(store.history, player_id=rng.choice(day().players), offset=0, limit=20)
        for _ in range(n)
    ]
    timings.append(await time_calls("history (20)", history, board=False))
    return timings


# -- EXPLAIN ----------------------------------------------------------------------------------


def literal(value: Any) -> str:
    """A parameter value as SQL text, for ``EXECUTE name(...)``."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.date | dt.datetime):
        return f"'{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


def shape(plan: Sequence[str]) -> list[str]:
    """The plan's nodes without costs, timings or values: equal shapes are the same plan."""
    return [line.split("  (cost=")[0].strip() for line in plan if "(cost=" in line]


async def explain(store: SqlStore, call: Call) -> None:
    """Capture every statement one call runs, then EXPLAIN (ANALYZE, BUFFERS) each.

    The driver runs each statement as a prepared statement, and after five runs PostgreSQL
    may keep a generic plan (made without the parameter values) instead of planning each
    run afresh; so each statement is explained both ways, the generic plan only when it
    differs.
    """
    captured: list[tuple[str, Any]] = []

    def listen(
        _conn: Connection,
        _cursor: Any,
        statement: str,
        parameters: Any,
        _context: Any,
        _executemany: bool,
    ) -> None:
        captured.append((statement, parameters))

    event.listen(store.engine.sync_engine, "before_cursor_execute", listen)
    try:
        await call()
    finally:
        event.remove(store.engine.sync_engine, "before_cursor_execute", listen)
    statements = [
        (s, tuple(p or ()))
        for s, p in captured
        if s.lstrip().upper().startswith(("SELECT", "WITH"))
    ]
    for i, (statement, parameters) in enumerate(statements, start=1):
        say(f"-- statement {i}/{len(statements)}, parameters {parameters}")
        say(statement.strip())
        execute = "EXECUTE bench_plan"
        if parameters:
            execute += "(" + ", ".join(literal(v) for v in parameters) + ")"
        plans: dict[str, list[str]] = {}
        async with store.engine.connect() as conn:
            pg = await driver(conn)
            await pg.execute("PREPARE bench_plan AS " + statement)
            try:
                for mode in ("force_custom_plan", "force_generic_plan"):
                    await pg.execute(f"SET plan_cache_mode = {mode}")
                    rows = await pg.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {execute}")
                    plans[mode] = [row[0] for row in rows]
            finally:
                await pg.execute("DEALLOCATE bench_plan; RESET plan_cache_mode")
        custom, generic = plans["force_custom_plan"], plans["force_generic_plan"]
        same = shape(custom) == shape(generic)
        say(f"  custom plan{' (the generic plan is the same)' if same else ''}:")
        for line in custom:
            say(f"    {line}")
        if not same:
            say("  generic plan (used once PostgreSQL prefers it for the prepared statement):")
            for line in generic:
                say(f"    {line}")
        say("")


# -- report -----------------------------------------------------------------------------------


def verdict(t: Timing, median: float) -> str:
    if not t.board:
        return "(context)"
    return "met" if median <= TARGET_MS else "MISSED"


def report(timings: list[Timing]) -> None:
    say(
        f"  {'call':24} {'median':>9} {'p90':>9} {'max':>9} {'rows':>6}"
        f"   median <= {TARGET_MS:g} ms"
    )
    for t in timings:
        median = statistics.median(t.ms)
        rows = statistics.median(t.rows)
        extra = f"  ({t.odd} pages without the player's row)" if t.odd else ""
        say(
            f"  {t.name:24} {median:6.2f} ms {percentile(t.ms, 90):6.2f} ms"
            f" {t.ms[-1]:6.2f} ms {rows:6g}   {verdict(t, median)}{extra}"
        )


async def describe(store: SqlStore, days: list[Day]) -> None:
    version = await scalar(store, "SHOW server_version")
    settings = []
    for name in ("shared_buffers", "work_mem", "effective_cache_size", "random_page_cost", "jit"):
        settings.append(f"{name}={await scalar(store, f'SHOW {name}')}")
    size = await scalar(store, "SELECT pg_size_pretty(pg_database_size(current_database()))")
    players = await scalar(store, "SELECT count(*) FROM players")
    races = await scalar(store, "SELECT count(*) FROM races")
    results = sum(d.results for d in days)
    others = await scalar(store, "SELECT count(*) FROM results WHERE daily_date IS NULL")
    moves = await scalar(store, "SELECT count(*) FROM moves")
    counted = [d.counted for d in days]
    say(f"cpu       {cpu_model()}; {os.cpu_count()} cores; {memory_gib()} RAM")
    say(
        f"python    {platform.python_version()} ({platform.python_implementation()})"
        f" on {platform.system()} {platform.machine()}"
    )
    say(f"postgres  {version}; {', '.join(settings)}")
    say(f"database  {size}")
    say(
        f"rows      players {players:,}; races {races:,}; results {results + others:,}"
        f" ({results:,} daily over {len(days)} days, {others:,} others);"
        f" moves {moves:,} (left empty: no board reads it)"
    )
    if counted:
        say(
            f"          daily board rows per day (counted attempts): min {min(counted):,},"
            f" median {statistics.median(counted):,g}, max {max(counted):,}"
        )
    visible = await scalar(
        store,
        "SELECT round(100.0 * relallvisible / greatest(relpages, 1)) FROM pg_class"
        " WHERE relname = 'results'",
    )
    say(
        f"          all-visible pages of results: {visible} % (as of the last VACUUM or"
        " ANALYZE; below 100 % an index-only scan also reads the table)"
    )
    for index in ("results", "ix_results_daily_board", "ix_results_code_board"):
        rel = await scalar(store, "SELECT pg_size_pretty(pg_relation_size(:r))", r=index)
        say(f"          size of {index}: {rel}")


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.leaderboard",
        description="Time the daily-deal leaderboards on a filled PostgreSQL database.",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="database to use (default: a fresh yukon_bench_<random> on --server, dropped after)",
    )
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        metavar="URL",
        help=f"where the fresh database is made (default {DEFAULT_SERVER})",
    )
    parser.add_argument("--keep", action="store_true", help="do not drop the fresh database")
    parser.add_argument(
        "--results", type=int, default=1_000_000, metavar="N", help="results (default 1000000)"
    )
    parser.add_argument("--days", type=int, default=30, metavar="D", help="days (default 30)")
    parser.add_argument(
        "--players", type=int, default=50_000, metavar="P", help="players (default 50000)"
    )
    parser.add_argument(
        "--repeat", type=int, default=50, metavar="R", help="timed calls of each kind (default 50)"
    )
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    parser.add_argument(
        "--no-vacuum",
        action="store_true",
        help="ANALYZE only after filling, and autovacuum off: no page is all-visible",
    )
    args = parser.parse_args(argv)
    if min(args.results, args.days, args.players, args.repeat) < 1:
        parser.error("--results, --days, --players and --repeat must be at least 1")
    return args


async def bench(args: argparse.Namespace, url: str) -> None:
    store = SqlStore(url)
    try:
        revision = await upgrade(store)
        say(f"schema    migrated to revision {revision}")
        if (await scalar(store, "SELECT count(*) FROM results")) == 0:
            say(
                f"filling   {args.players:,} players, {args.results:,} results"
                f" over {args.days} days (seed {args.seed}), COPY in batches of {BATCH:,}"
            )
            if args.no_vacuum:
                await no_autovacuum(store)
            await fill(
                store,
                players=args.players,
                results=args.results,
                days=args.days,
                seed=args.seed,
            )
            await analyze(store, vacuum=not args.no_vacuum)
        else:
            say("filling   skipped: the database already holds results; measuring them")
        days = await read_days(store)
        if not any(d.players for d in days):
            say("no daily results to measure")
            return
        say("")
        await describe(store, days)
        say("")
        say(
            f"timing    {args.repeat} calls of each (after {WARMUP} warm-up calls), random dates"
            f" and players (seed {args.seed}); wall time of the whole SqlStore call"
        )
        timings = await run_timings(store, days, args.repeat, args.seed)
        report(timings)
        boards = [t for t in timings if t.board]
        slowest = max(boards, key=lambda t: statistics.median(t.ms))
        say("")
        say(f"EXPLAIN (ANALYZE, BUFFERS) of one '{slowest.name}' call, the slowest median:")
        say("")
        rng = random.Random(args.seed + 2)
        d = rng.choice([d for d in days if d.players])
        player = rng.choice(d.players)
        calls: dict[str, Call] = {
            "daily top 50": lambda: store.daily_board(date=d.date, offset=0, limit=50),
            "daily page at 80 %": lambda: store.daily_board(
                date=d.date, offset=int(d.counted * 0.8), limit=50
            ),
            "daily around me (21)": lambda: store.daily_board(
                date=d.date, player_id=player, around=True, limit=21
            ),
            "deal board top 50": lambda: store.deal_board(code=d.code, offset=0, limit=50),
        }
        say(f"(date {d.date}, {d.counted:,} rows on its board, player {player})")
        await explain(store, calls[slowest.name])
    finally:
        await store.close()


async def amain(args: argparse.Namespace) -> None:
    say("Yukon leaderboard benchmark (PostgreSQL)")
    if args.db:
        await bench(args, args.db)
        return
    name = f"yukon_bench_{secrets.token_hex(4)}"
    server = args.server.rstrip("/")
    await admin(server, f'CREATE DATABASE "{name}"')
    url = f"{server}/{name}"
    say(f"database  {url} (fresh{', kept afterwards' if args.keep else ', dropped afterwards'})")
    try:
        await bench(args, url)
    finally:
        if args.keep:
            say(f"kept      {url}  (measure again: python -m bench.leaderboard --db {url})")
        else:
            await admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            say(f"dropped   {name}")


def main(argv: list[str] | None = None) -> int:
    asyncio.run(amain(parse_args(argv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
