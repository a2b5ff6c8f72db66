"""Alembic migrations on both backends: up from empty, down to base, up again, and the
models (what the code queries) match what the migrations create."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from server.storage import migrate
from server.storage.models import board_key
from server.storage.schema import metadata
from server.storage.sql import NameTakenError, SqlStore

TABLES = {
    "players",
    "races",
    "results",
    "moves",
    "daily_attempts",
    "daily_deals",
    "deal_bests",
    "archive_bests",
    "settings",
    "live_races",
    "live_actions",
    "ratings",
    "player_ratings",
    # issue 40: fair play and moderation (0014)
    "moderation_log",
    "account_marks",
    "review_queue",
    "account_states",
    "voided_results",
    "rating_refunds",
    # issue 40 item 6: the daily's log (0015)
    "daily_log",
    "rating_pairs",
    "run_signals",
}
INDEXES = {"ix_results_daily_board", "ix_results_code_board", "ix_results_player_finished"}
AT = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    s = SqlStore(db_url)
    try:
        yield s
    finally:
        await s.close()


async def tables(store: SqlStore) -> set[str]:
    def names(conn: Connection) -> set[str]:
        return set(inspect(conn).get_table_names())

    result: set[str] = await store.run_sync(names)
    return result


async def differences(store: SqlStore) -> list[Any]:
    def compare(conn: Connection) -> list[Any]:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "compare_server_default": True,
                "render_as_batch": conn.dialect.name == "sqlite",
            },
        )
        return list(compare_metadata(context, metadata))

    result: list[Any] = await store.run_sync(compare)
    return result


def test_there_is_one_head() -> None:
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(migrate.alembic_config()).get_heads()
    assert heads == [migrate.head()]


async def test_upgrade_from_empty_reaches_head(store: SqlStore) -> None:
    assert await migrate.current(store) is None
    assert await tables(store) == set()

    assert await migrate.upgrade(store) == migrate.head()
    assert await tables(store) == TABLES | {"alembic_version"}

    def indexes(conn: Connection) -> set[str]:
        return {ix["name"] for ix in inspect(conn).get_indexes("results") if ix["name"]}

    assert await store.run_sync(indexes) >= INDEXES
    # Upgrading again is a no-op.
    assert await migrate.upgrade(store) == migrate.head()


async def test_downgrade_to_base_and_up_again(store: SqlStore) -> None:
    await migrate.upgrade(store)
    assert await migrate.downgrade(store, "base") is None
    assert await tables(store) - {"alembic_version"} == set()

    assert await migrate.upgrade(store) == migrate.head()
    assert await tables(store) == TABLES | {"alembic_version"}
    # And the store works on the re-created tables.
    alice = await store.register_player(name="alice", now=0.0)
    assert await store.find_player(token=alice.token) == alice


def ann_and_races(conn: Connection, races: int) -> None:
    """Player 1, ann, and races 1..``races`` on ``YU1-C-AAAAAAB``, as any revision has them."""
    conn.execute(
        text(
            "INSERT INTO players (id, name, name_key, token_hash, created_at)"
            " VALUES (1, 'ann', 'ann', 'h', :at)"
        ),
        {"at": AT},
    )
    for n in range(1, races + 1):
        conn.execute(
            text(
                "INSERT INTO races (id, uid, code, rules, started_at)"
                " VALUES (:n, :uid, 'YU1-C-AAAAAAB', 'C', :at)"
            ),
            {"n": n, "uid": f"u{n}", "at": AT},
        )


async def test_0005_moves_old_board_keys_below_the_hint_flag(store: SqlStore) -> None:
    """Before 0005 "not won" was bit 62 of ``board_key``; 0005 gives that bit to hints and
    moves "not won" to bit 61, for the results already stored too (and back on downgrade)."""
    won_key = (60_000 << 20) | 100
    lost_key = (1 << 62) | (12 << 54) | 345
    await migrate.upgrade(store, "0004")

    def insert(conn: Connection) -> None:
        ann_and_races(conn, 2)
        for n, key in ((1, won_key), (2, lost_key)):
            conn.execute(
                text(
                    "INSERT INTO results (id, race_id, player_id, code, practice, outcome,"
                    " time_ms, moves, score, foundations, rank, undos, board_key, finished_at)"
                    " VALUES (:n, :n, 1, 'YU1-C-AAAAAAB', false, 'won', 0, 0, 0, 0, 1, 0,"
                    " :key, :at)"
                ),
                {"n": n, "key": key, "at": AT},
            )

    def keys(conn: Connection) -> list[tuple[int, bool]]:
        rows = conn.execute(text("SELECT board_key, hinted FROM results ORDER BY id"))
        return [(int(k), bool(h)) for k, h in rows]

    def old_keys(conn: Connection) -> list[int]:
        rows = conn.execute(text("SELECT board_key FROM results ORDER BY id"))
        return [int(k) for (k,) in rows]

    await store.run_sync(insert)
    assert await migrate.upgrade(store, "0009") == "0009"  # 0010 keys results anew
    assert await store.run_sync(keys) == [(won_key, False), (lost_key - (1 << 61), False)]

    def hint_one(conn: Connection) -> None:
        conn.execute(
            text("UPDATE results SET hinted = true, board_key = board_key + :h WHERE id = 1"),
            {"h": 1 << 62},
        )

    await store.run_sync(hint_one)
    await migrate.downgrade(store, "0004")
    assert await store.run_sync(old_keys) == [won_key, lost_key]


async def test_0010_keys_stored_results_by_the_order_of_one_story(store: SqlStore) -> None:
    """Issue 28: 0010 recomputes every stored result's board key by the new order (a
    hinted win after the unhinted wins, before every non-win; equal non-wins the longer
    first), each runner's rank in their race, each player's best per deal; and every
    name's skeleton without default-ignorable code points (a later name that now looks
    like an older one keeps itself, without a skeleton). Down again, all as before."""
    await migrate.upgrade(store, "0009")
    names = ["Alice", "Alice\u180b", "bob", "carol", "B\u17b4ob"]
    # race, player, outcome, time, moves, score, foundations, hinted
    stored = [
        (1, 1, "won", 90_000, 120, 625, 52, True),  # hinted win: was below both resigns
        (1, 3, "resigned", 6_000, 0, 0, 0, False),
        (1, 4, "resigned", 32_000, 6, 0, 0, False),
        (2, 1, "resigned", 1_000, 1, 0, 0, False),  # alice's best on this deal: was this
        (2, 4, "won", 80_000, 100, 625, 52, False),
        (3, 1, "won", 95_000, 130, 625, 52, True),  # (her first hinted win is now)
    ]

    def old_key(outcome: str, t: int, moves: int, score: int, found: int, hinted: bool) -> int:
        flag = (1 << 62) if hinted else 0
        if outcome == "won":
            return flag | (t << 20) | moves
        return flag | (1 << 61) | ((52 - found) << 54) | (((1 << 20) - 1 - score) << 34) | t

    def insert(conn: Connection) -> None:
        for i, name in enumerate(names, start=1):
            conn.execute(
                text(
                    "INSERT INTO players (id, name, name_key, name_skeleton, token_hash,"
                    " created_at) VALUES (:id, :name, :key, :skel, :hash, :at)"
                ),
                {"id": i, "name": name, "key": f"k{i}", "skel": name, "hash": f"h{i}", "at": AT},
            )
        if conn.dialect.name == "postgresql":  # ids given by hand: the sequence follows
            conn.execute(text("SELECT setval(pg_get_serial_sequence('players', 'id'), 100)"))
        for race_id in (1, 2, 3):
            conn.execute(
                text(
                    "INSERT INTO races (id, uid, code, rules, started_at)"
                    " VALUES (:n, :uid, 'YU1-C-AAAAAAB', 'C', :at)"
                ),
                {"n": race_id, "uid": f"u{race_id}", "at": AT},
            )
        for n, (race_id, pid, outcome, t, moves, score, found, hinted) in enumerate(stored, 1):
            key = old_key(outcome, t, moves, score, found, hinted)
            conn.execute(
                text(
                    "INSERT INTO results (id, race_id, player_id, code, practice, outcome,"
                    " time_ms, moves, score, foundations, rank, undos, hinted, board_key,"
                    " finished_at) VALUES (:n, :race, :pid, 'YU1-C-AAAAAAB', false, :outcome,"
                    " :t, :moves, :score, :found, 0, 0, :hinted, :key, :at)"
                ),
                {
                    "n": n,
                    "race": race_id,
                    "pid": pid,
                    "outcome": outcome,
                    "t": t,
                    "moves": moves,
                    "score": score,
                    "found": found,
                    "hinted": hinted,
                    "key": key,
                    "at": AT,
                },
            )
            conn.execute(
                text(
                    "INSERT INTO deal_bests (code, player_id, result_id, board_key)"
                    " VALUES ('YU1-C-AAAAAAB', :pid, :n, :key)"
                    " ON CONFLICT (code, player_id) DO UPDATE"
                    " SET result_id = excluded.result_id, board_key = excluded.board_key"
                    " WHERE excluded.board_key < deal_bests.board_key"
                ),
                {"pid": pid, "n": n, "key": key},
            )

    def read(conn: Connection) -> tuple[list[tuple[int, int]], list[int], list[Any]]:
        results = [
            (int(k), int(r))
            for k, r in conn.execute(text("SELECT board_key, rank FROM results ORDER BY id"))
        ]
        bests = [
            int(r)
            for (r,) in conn.execute(text("SELECT result_id FROM deal_bests ORDER BY player_id"))
        ]
        skeletons = [
            s for (s,) in conn.execute(text("SELECT name_skeleton FROM players ORDER BY id"))
        ]
        return results, bests, skeletons

    await store.run_sync(insert)
    before = await store.run_sync(read)
    assert before[1] == [4, 2, 5]
    await migrate.upgrade(store, "0010")
    results, bests, skeletons = await store.run_sync(read)
    assert [k for k, _ in results] == [
        board_key(won=o == "won", time_ms=t, moves=m, foundations=f, score=sc, hinted=h)
        for _, _, o, t, m, sc, f, h in stored
    ]
    assert [r for _, r in results] == [1, 3, 2, 2, 1, 1]
    assert bests == [1, 2, 5]  # alice's hinted win is now her best
    assert skeletons == ["alice", None, "bob", "carol", None]
    # Today's board query reads later revisions' tables too (fair play's filters).
    await migrate.upgrade(store)
    board = await store.deal_board(code="YU1-C-AAAAAAB")
    assert [(e.rank, e.name) for e in board.rows] == [(1, "carol"), (2, "Alice"), (3, "bob")]
    with pytest.raises(NameTakenError):
        await store.register_player(name="alice\u180d", now=0.0)
    await migrate.downgrade(store, "0009")
    results, bests, skeletons = await store.run_sync(read)
    assert [k for k, _ in results] == [k for k, _ in before[0]]
    assert [r for _, r in results] == [3, 1, 2, 2, 1, 1]
    assert bests == before[1]
    assert skeletons == ["alice", "alice\u180b", "bob", "carol", "b\u17b4ob"]


async def test_the_models_match_the_migrations(store: SqlStore) -> None:
    await migrate.upgrade(store)
    assert await differences(store) == []


async def test_the_comparison_does_see_differences(store: SqlStore) -> None:
    """Guard against a comparison that finds nothing because it looks at nothing."""
    await migrate.upgrade(store)
    await migrate.downgrade(store, "base")
    found = await differences(store)
    added = {diff[1].name for diff in found if diff[0] == "add_table"}
    assert added == TABLES


async def test_0006_keeps_each_players_best_result_per_deal(store: SqlStore) -> None:
    """0006 fills ``deal_bests`` from the results already stored: per deal and player the
    best counted one (the first stored among equal ones); practice is left out."""
    await migrate.upgrade(store, "0005")
    rows = [  # id, player, code, practice, board_key
        (1, 1, "YU1-C-AAAAAAB", False, 500),
        (2, 1, "YU1-C-AAAAAAB", False, 300),
        (3, 1, "YU1-C-AAAAAAB", False, 300),  # equal to 2, stored later
        (4, 1, "YU1-C-AAAAAAB", True, 100),  # practice
        (5, 2, "YU1-C-AAAAAAB", False, 900),
        (6, 1, "YU1-C-AAAAAAC", False, 700),
        (7, 2, "YU1-C-AAAAAAC", True, 1),  # only practice on this deal
    ]

    def insert(conn: Connection) -> None:
        for pid, name in ((1, "ann"), (2, "bob")):
            conn.execute(
                text(
                    "INSERT INTO players (id, name, name_key, token_hash, created_at)"
                    " VALUES (:id, :name, :name, :name, :at)"
                ),
                {"id": pid, "name": name, "at": AT},
            )
        for rid, pid, code, practice, key in rows:
            conn.execute(
                text(
                    "INSERT INTO races (id, uid, code, rules, started_at)"
                    " VALUES (:n, :uid, :code, 'C', :at)"
                ),
                {"n": rid, "uid": f"u{rid}", "code": code, "at": AT},
            )
            conn.execute(
                text(
                    "INSERT INTO results (id, race_id, player_id, code, practice, outcome,"
                    " time_ms, moves, score, foundations, rank, undos, board_key, finished_at)"
                    " VALUES (:n, :n, :pid, :code, :practice, 'won', 0, 0, 0, 0, 1, 0,"
                    " :key, :at)"
                ),
                {"n": rid, "pid": pid, "code": code, "practice": practice, "key": key, "at": AT},
            )

    def bests(conn: Connection) -> list[tuple[str, int, int, int]]:
        found = conn.execute(
            text(
                "SELECT code, player_id, result_id, board_key FROM deal_bests"
                " ORDER BY code, player_id"
            )
        )
        return [(str(c), int(p), int(r), int(k)) for c, p, r, k in found]

    await store.run_sync(insert)
    await migrate.upgrade(store, "0006")
    assert await store.run_sync(bests) == [
        ("YU1-C-AAAAAAB", 1, 2, 300),
        ("YU1-C-AAAAAAB", 2, 5, 900),
        ("YU1-C-AAAAAAC", 1, 6, 700),
    ]
    # The board in its order, read as today's board query reads it (which also reads
    # later revisions' columns and tables, so it cannot run at 0006 itself).
    board = await store.run_sync(
        lambda conn: [
            str(n)
            for (n,) in conn.execute(
                text(
                    "SELECT p.name FROM deal_bests b JOIN players p ON p.id = b.player_id"
                    " WHERE b.code = 'YU1-C-AAAAAAB' ORDER BY b.board_key, b.result_id"
                )
            )
        ]
    )
    assert board == ["ann", "bob"]
    await migrate.downgrade(store, "0005")
    assert "deal_bests" not in await tables(store)


async def test_0006_gives_names_their_skeletons_and_keeps_those_that_collide(
    store: SqlStore,
) -> None:
    """Names registered before 0006 that now collide (look alike, or differ only in
    compatibility forms) all stay, with their tokens and results; the oldest holds the
    keys, and a new name that looks like any of them is refused."""
    await migrate.upgrade(store, "0005")
    names = ["Alice", "\u0410lice", "\uff21lice", "bob", "AIice"]

    def insert(conn: Connection) -> None:
        for i, name in enumerate(names, start=1):
            conn.execute(
                text(
                    "INSERT INTO players (id, name, name_key, token_hash, created_at)"
                    " VALUES (:id, :name, :key, :hash, :at)"
                ),
                {"id": i, "name": name, "key": name.casefold(), "hash": f"h{i}", "at": AT},
            )
        if conn.dialect.name == "postgresql":  # ids given by hand: the sequence follows
            conn.execute(text("SELECT setval(pg_get_serial_sequence('players', 'id'), 100)"))
        conn.execute(
            text(
                "INSERT INTO races (id, uid, code, rules, started_at)"
                " VALUES (1, 'u1', 'YU1-C-AAAAAAB', 'C', :at)"
            ),
            {"at": AT},
        )
        conn.execute(
            text(
                "INSERT INTO results (id, race_id, player_id, code, practice, outcome,"
                " time_ms, moves, score, foundations, rank, undos, board_key, finished_at)"
                " VALUES (1, 1, 2, 'YU1-C-AAAAAAB', false, 'won', 0, 0, 0, 0, 1, 0, 5, :at)"
            ),
            {"at": AT},
        )

    def players(conn: Connection) -> list[tuple[int, str, str, str | None]]:
        rows = conn.execute(
            text("SELECT id, name, name_key, name_skeleton FROM players ORDER BY id")
        )
        return [(int(i), str(n), str(k), s) for i, n, k, s in rows]

    def result_count(conn: Connection) -> int:
        return int(conn.execute(text("SELECT count(*) FROM results")).scalar_one())

    await store.run_sync(insert)
    await migrate.upgrade(store, "0006")
    after = await store.run_sync(players)
    assert [(i, n) for i, n, _, _ in after] == list(enumerate(names, start=1))
    keys = {i: (k, s) for i, _, k, s in after}
    assert keys[1] == ("alice", "alice")  # the oldest keeps the key and the skeleton
    assert keys[2][1] is None and keys[3][1] is None and keys[5][1] is None
    assert keys[3][0] == "alice\ue0003"  # its NFKC key was taken: a key of its own
    assert keys[4] == ("bob", "bob")
    assert await store.run_sync(result_count) == 1  # nothing lost with the players
    for lookalike in ("ALICE", "\u0410lice", "A1ice"):
        with pytest.raises(NameTakenError):
            await store.register_player(name=lookalike, now=0.0)
    await store.register_player(name="Alicia", now=0.0)
    await migrate.downgrade(store, "0005")
    before = await store.run_sync(
        lambda conn: [str(k) for (k,) in conn.execute(text("SELECT name_key FROM players"))]
    )
    assert sorted(before) == sorted([n.casefold() for n in names] + ["alicia"])


SEEDED = "YU1-MEGT-77777777777777777777777774"  # 35 characters: the longest code
TODAY = dt.datetime.now(dt.UTC).date()
#: Days chosen before 0007, with 7-letter codes: the past, today, and tomorrow.
DAYS = {
    TODAY - dt.timedelta(days=1): "YU1-C-QWERTYU",
    TODAY: "YU1-C-TODAYAA",
    TODAY + dt.timedelta(days=1): "YU1-C-TMRWAAA",
}


async def test_0007_widens_codes_and_keeps_every_row(store: SqlStore) -> None:
    """0007 widens the code columns to 48 characters. On SQLite that copies each table, and
    a copy must not lose the rows that refer to it (dropping ``results`` with foreign keys on
    would delete its ``moves``); stored races keep their codes, without a salt, and so do
    past days and a today already played. Tomorrow, chosen ahead with a 7-letter code that
    anyone could work out, is forgotten, to be chosen again as a seeded deal."""
    await migrate.upgrade(store, "0005")

    def insert(conn: Connection) -> None:
        ann_and_races(conn, 1)
        conn.execute(
            text(
                "INSERT INTO results (id, race_id, player_id, code, practice, outcome,"
                " time_ms, moves, score, foundations, rank, undos, board_key, finished_at)"
                " VALUES (1, 1, 1, 'YU1-C-AAAAAAB', false, 'won', 0, 0, 0, 0, 1, 0, 7, :at)"
            ),
            {"at": AT},
        )
        conn.execute(text("INSERT INTO moves (result_id, n, at_ms, move) VALUES (1, 1, 5, 'AD>F')"))
        conn.execute(
            text(
                "INSERT INTO live_races (uid, room, code, rules, attempt, undo, time_limit,"
                " max_players, fixed, host_id, players, started_at, alive_ms)"
                " VALUES ('L1', 'ROOM', 'YU1-C-AAAAAAC', 'C', 0, true, 60, 2, false, 1,"
                " '[[1, \"ann\"]]', :at, 0)"
            ),
            {"at": AT},
        )
        conn.execute(
            text(
                "INSERT INTO live_actions (race_uid, n, player_id, seq, at_ms, action)"
                " VALUES ('L1', 1, 1, 1, 10, 'AD>F')"
            )
        )
        for date, code in DAYS.items():
            conn.execute(
                text(
                    "INSERT INTO daily_deals (daily_date, rules, code, candidate, par, line,"
                    " nodes, chosen_at) VALUES (:d, 'C', :code, 0, 1, 'AD>F', 9, :at)"
                ),
                {"d": date, "code": code, "at": AT},
            )
        # Somebody began today's attempt (on a server older than 0007): today stays.
        conn.execute(
            text(
                "INSERT INTO daily_attempts (player_id, daily_date, attempt, started_at)"
                " VALUES (1, :d, 1, :at)"
            ),
            {"d": TODAY, "at": AT},
        )

    def counts(conn: Connection) -> dict[str, int]:
        tables = ("races", "results", "moves", "live_races", "live_actions", "daily_deals")
        return {t: conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in tables}

    def salts(conn: Connection) -> list[Any]:
        return [
            *conn.execute(text("SELECT code, salt FROM daily_deals")).all(),
            *conn.execute(text("SELECT code, salt FROM live_races")).all(),
        ]

    def long_code(conn: Connection) -> None:
        conn.execute(text("UPDATE results SET code = :c"), {"c": SEEDED})

    await store.run_sync(insert)
    before = await store.run_sync(counts)
    assert before == {t: 1 for t in before} | {"daily_deals": 3}
    assert await migrate.upgrade(store) == migrate.head()
    before["daily_deals"] = 2
    assert await store.run_sync(counts) == before
    assert sorted(await store.run_sync(salts)) == [
        ("YU1-C-AAAAAAC", None),
        ("YU1-C-QWERTYU", None),
        ("YU1-C-TODAYAA", None),
    ]
    await store.run_sync(long_code)  # PostgreSQL would refuse 35 characters in VARCHAR(32)
    # Going back would have to cut the seeded code: refused, and nothing changes.
    with pytest.raises(RuntimeError, match="longer than 32"):
        await migrate.downgrade(store, "0005")
    assert await migrate.current(store) == migrate.head()
    assert await store.run_sync(counts) == before
    # However a migration ended, the store's connections refer with foreign keys again.
    async with store.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1


async def test_0007_forgets_today_when_nobody_has_played_it(store: SqlStore) -> None:
    await migrate.upgrade(store, "0005")

    def insert(conn: Connection) -> None:
        conn.execute(
            text(
                "INSERT INTO daily_deals (daily_date, rules, code, candidate, par, line, nodes,"
                " chosen_at) VALUES (:d, 'C', 'YU1-C-TODAYAA', 0, 1, 'AD>F', 9, :at)"
            ),
            {"d": TODAY, "at": AT},
        )

    def days(conn: Connection) -> list[Any]:
        return list(conn.execute(text("SELECT daily_date FROM daily_deals")).all())

    await store.run_sync(insert)
    await migrate.upgrade(store)
    assert await store.run_sync(days) == []
