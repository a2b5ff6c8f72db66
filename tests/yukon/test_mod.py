"""``yukon mod`` as an operator runs it, on a real SQLite database: every subcommand, its
audit entry, its refusals (one line, exit 2, never a traceback), and the JSON it prints.
Most run the command's ``main`` in this process (the same parser and code, quicker than a
process each); the last tests run ``yukon`` as a process, as an operator would."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.storage import migrate
from server.storage.moderation import ModerationStore
from server.storage.sql import SqlStore
from tests.server.storage.test_sql import race, register, res
from yukon import cli

from .test_cli import yukon


@dataclasses.dataclass
class Db:
    url: str
    ids: dict[str, int]

    def run(self, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
        try:
            status = cli.main(["mod", *args, "--db", self.url])
        except SystemExit as exc:  # argparse's usage errors exit, as in a process
            status = int(exc.code or 0)
        out, err = capsys.readouterr()
        return status, out, err


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Db]:
    """ann, bob and cyd; a rated race of ann and bob (``race-1``); a flag on ann and a
    report of bob about her."""
    url = f"sqlite:///{tmp_path}/yukon.db"
    ids: dict[str, int] = {}

    async def setup() -> None:
        store = SqlStore(url)
        await migrate.upgrade(store)
        ann, bob, cyd = await register(store, "ann", "bob", "cyd")
        ids.update(ann=ann.player_id, bob=bob.player_id, cyd=cyd.player_id)
        record = race(res(ann, rank=1), res(bob, rank=2), uid="race-1", ended=time.time() - 600)
        await store.record_race(dataclasses.replace(record, rated=True))
        mod = ModerationStore(store.engine)
        ids["flag"] = await mod.enqueue(
            kind="flag",
            player_id=ann.player_id,
            race="race-1",
            rule="cv",
            evidence={"cv": 0.05},
            now=time.time() - 500,
        )
        ids["report"] = await mod.enqueue(
            kind="report",
            player_id=ann.player_id,
            reporter_id=bob.player_id,
            race="race-1",
            note="pasted a line",
            now=time.time() - 400,
        )
        await store.close()

    asyncio.run(setup())
    yield Db(url, ids)


def one_line_refusal(status: int, err: str, *words: str) -> None:
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err


def test_queue_lists_flags_and_reports_newest_first(
    db: Db, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = db.run(capsys, "queue")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"#{db.ids['report']}") and "reported by bob" in lines[0]
    assert "'pasted a line'" in lines[0] and "race race-1" in lines[0]
    assert lines[1].startswith(f"#{db.ids['flag']}") and '{"cv":0.05}' in lines[1]
    status, out, _ = db.run(capsys, "queue", "--json")
    items = json.loads(out)
    assert [(i["kind"], i["player"], i["state"]) for i in items] == [
        ("report", "ann", "open"),
        ("flag", "ann", "open"),
    ]
    assert items[0]["reporter"] == "bob" and items[1]["evidence"] == {"cv": 0.05}


def test_mark_closes_the_queue_and_show_and_log_say_so(
    db: Db, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = db.run(capsys, "mark", "Ann", "engine", "--reason", "solver", "--by", "olga")
    assert status == 0, err
    assert out.strip() == (
        f"entry 1: olga marked ann engine (closed queue entries {db.ids['flag']},"
        f" {db.ids['report']}) (refunded 150 points, 1 opponent(s), 1 race(s)): solver"
    )
    status, out, _ = db.run(capsys, "queue")
    assert out.strip() == "no open entries in the review queue"
    status, out, _ = db.run(capsys, "queue", "--all")
    assert out.count("[closed by olga]") == 2
    status, out, _ = db.run(capsys, "show", "ann")
    assert status == 0
    assert "marks:\n    engine: solver (olga," in out and "entry 1)" in out
    assert "race-1" in out and "won rank 1" in out and "rated" in out
    assert "reported by bob" in out
    # The mark gave bob back what the race cost him (capped at 150): nothing is left due.
    assert "its marks gave back 150 points to 1 opponent(s) for 1 race(s)" in out
    assert "would give back" not in out
    status, out, _ = db.run(capsys, "show", "ann", "--json")
    shown = json.loads(out)
    assert shown["marks"][0]["kind"] == "engine" and shown["marks"][0]["in_force"]
    assert [r["race"] for r in shown["runs"]] == ["race-1"]
    # bob lost to ann in a rated race: the mark of ann refunded bob, as show says.
    assert shown["refunds"] == []
    [given] = shown["refunded"]
    assert (given["player_id"], given["race"], given["points"]) == (db.ids["bob"], "race-1", 150)
    assert given["entry"] == 1 and given["taken_back_by"] is None
    status, out, _ = db.run(capsys, "show", "bob")
    assert "would give back" not in out
    status, out, err = db.run(capsys, "log")
    assert status == 0 and "olga marked ann engine" in out
    status, out, _ = db.run(capsys, "log", "--json")
    [entry] = json.loads(out)
    assert (entry["action"], entry["player"], entry["operator"], entry["reason"]) == (
        "mark",
        "ann",
        "olga",
        "solver",
    )


def test_mark_refusals(db: Db, capsys: pytest.CaptureFixture[str]) -> None:
    db.run(capsys, "mark", "ann", "alt", "--reason", "r")
    status, _, err = db.run(capsys, "mark", "ann", "alt", "--reason", "again")
    one_line_refusal(status, err, "ann is already marked alt (entry 1)", "[already_marked]")
    status, _, err = db.run(capsys, "mark", "zed", "alt", "--reason", "r")
    one_line_refusal(status, err, "no player is named 'zed'", "[unknown_player]")
    status, _, err = db.run(capsys, "mark", "ann", "cheat", "--reason", "r")
    one_line_refusal(status, err, "invalid choice: 'cheat'")
    status, _, err = db.run(capsys, "mark", "ann", "boost")
    one_line_refusal(status, err, "--reason")
    status, _, err = db.run(capsys, "mark", "ann", "boost", "--reason", "  ")
    one_line_refusal(status, err, "--reason: say why")
    status, _, err = db.run(capsys, "mark", "ann", "boost", "--reason", "r", "--by", "x" * 65)
    one_line_refusal(status, err, "--by")
    status, _, err = db.run(capsys, "unmark", "ann", "engine", "--reason", "r")
    one_line_refusal(status, err, "ann is not marked engine", "[not_marked]")
    status, out, _ = db.run(capsys, "unmark", "ann", "alt", "--reason", "appeal")
    assert status == 0 and out.strip().endswith("unmarked ann alt: appeal")
    status, out, _ = db.run(capsys, "log")
    assert len(out.splitlines()) == 2  # the refusals wrote nothing


def test_rename_and_its_refusals(db: Db, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = db.run(capsys, "rename", "ann", "Anna", "--reason", "rude", "--by", "o")
    assert status == 0, err
    assert out.strip() == "entry 1: o renamed ann to Anna: rude"
    status, _, err = db.run(capsys, "rename", "Anna", "BOB", "--reason", "r")
    one_line_refusal(status, err, "[name_taken]")
    status, _, err = db.run(capsys, "rename", "Anna", "", "--reason", "r")
    one_line_refusal(status, err, "[bad_name]")
    status, _, err = db.run(capsys, "rename", "ann", "Ann2", "--reason", "r")
    one_line_refusal(status, err, "[unknown_player]")
    status, out, _ = db.run(capsys, "show", "anna")
    assert out.startswith("Anna (player")


def test_close_reopen_mute_unmute(db: Db, capsys: pytest.CaptureFixture[str]) -> None:
    for action, word in (("close", "closed"), ("mute", "muted")):
        status, out, err = db.run(capsys, action, "cyd", "--reason", "spam", "--by", "o")
        assert status == 0 and out.strip().endswith(f"o {word} cyd: spam"), err
    status, out, _ = db.run(capsys, "show", "cyd")
    assert "state: closed, muted" in out
    status, _, err = db.run(capsys, "close", "cyd", "--reason", "r")
    one_line_refusal(status, err, "cyd is already closed", "[already_closed]")
    status, _, err = db.run(capsys, "mute", "cyd", "--reason", "r")
    one_line_refusal(status, err, "[already_muted]")
    for action, word in (("reopen", "reopened"), ("unmute", "unmuted")):
        status, out, err = db.run(capsys, action, "cyd", "--reason", "appeal", "--by", "o")
        assert status == 0 and out.strip().endswith(f"o {word} cyd: appeal"), err
    status, _, err = db.run(capsys, "reopen", "cyd", "--reason", "r")
    one_line_refusal(status, err, "[not_closed]")
    status, _, err = db.run(capsys, "unmute", "cyd", "--reason", "r")
    one_line_refusal(status, err, "[not_muted]")
    status, _, err = db.run(capsys, "close", "nobody", "--reason", "r")
    one_line_refusal(status, err, "[unknown_player]")
    status, out, _ = db.run(capsys, "show", "cyd")
    assert "state: open" in out


def test_void_a_race_or_a_runner(db: Db, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = db.run(capsys, "void", "race-1", "--player", "bob", "--reason", "alt")
    assert status == 0 and "voided race race-1 for bob: alt" in out, err
    status, _, err = db.run(capsys, "void", "race-1", "--player", "bob", "--reason", "r")
    one_line_refusal(status, err, "[already_voided]")
    status, _, err = db.run(capsys, "void", "race-1", "--player", "cyd", "--reason", "r")
    one_line_refusal(status, err, "cyd did not run race race-1", "[not_in_race]")
    status, _, err = db.run(capsys, "void", "race-9", "--reason", "r")
    one_line_refusal(status, err, "no stored race has the id 'race-9'", "[unknown_race]")
    status, out, _ = db.run(capsys, "void", "race-1", "--reason", "farm")
    assert "voided race race-1 for ann: farm" in out
    status, out, _ = db.run(capsys, "show", "bob")
    assert "VOIDED" in out


def test_dismiss_and_undo(db: Db, capsys: pytest.CaptureFixture[str]) -> None:
    flag = db.ids["flag"]
    status, out, err = db.run(capsys, "dismiss", str(flag), "--reason", "fast", "--by", "o")
    assert (
        status == 0
        and out.strip() == f"entry 1: o dismissed queue entry {flag} (flag on ann): fast"
    )
    status, _, err = db.run(capsys, "dismiss", str(flag), "--reason", "r")
    one_line_refusal(status, err, "[not_open]")
    status, _, err = db.run(capsys, "dismiss", "999", "--reason", "r")
    one_line_refusal(status, err, "[unknown_item]")
    status, _, err = db.run(capsys, "dismiss", "x", "--reason", "r")
    one_line_refusal(status, err, "'x' is not an entry number")
    status, out, err = db.run(capsys, "undo", "1", "--reason", "look again", "--by", "p")
    assert status == 0 and out.strip() == (
        "entry 2: p undid entry 1 (dismiss of ann): look again"
    ), err
    status, out, _ = db.run(capsys, "queue")
    assert f"#{flag}" in out
    status, _, err = db.run(capsys, "undo", "1", "--reason", "r")
    one_line_refusal(status, err, "entry 1 was undone by entry 2", "[already_undone]")
    status, _, err = db.run(capsys, "undo", "2", "--reason", "r")
    one_line_refusal(status, err, "[cannot_undo]")
    status, _, err = db.run(capsys, "undo", "7", "--reason", "r")
    one_line_refusal(status, err, "the log has no entry 7", "[unknown_entry]")
    status, _, err = db.run(capsys, "undo", "0", "--reason", "r")
    one_line_refusal(status, err, "not an entry number")
    # Every kind of action undoes through the command.
    for args in (
        ("mark", "bob", "bot"),
        ("rename", "bob", "Bobby"),
        ("close", "bob"),
        ("mute", "bob"),
        ("void", "race-1"),
    ):
        status, out, err = db.run(capsys, *args, "--reason", "r")
        assert status == 0, err
        entry = out.split(":")[0].split()[1]
        status, out, err = db.run(capsys, "undo", entry, "--reason", "undo")
        assert status == 0 and f"undid entry {entry} ({args[0]}" in out, err
    status, out, _ = db.run(capsys, "show", "bob", "--json")
    shown = json.loads(out)
    assert (shown["player"], shown["closed"], shown["muted"]) == ("bob", False, False)
    assert [m["in_force"] for m in shown["marks"]] == [False]
    assert not shown["runs"][0]["voided"]
    status, out, _ = db.run(capsys, "log", "--player", "bob", "--limit", "2")
    assert len(out.splitlines()) == 2 and "[undone by entry" in out.splitlines()[1]


def test_a_database_not_migrated_or_unreachable_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = cli.main(["mod", "queue", "--db", f"sqlite:///{tmp_path}/empty.db"])
    one_line_refusal(status, capsys.readouterr().err, "run yukon db upgrade")
    status = cli.main(["mod", "log", "--db", f"sqlite:///{tmp_path}/no/such/dir/x.db"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and "Traceback" not in err, err


def test_yukon_mod_as_a_process(db: Db) -> None:
    """The operator's path: a real process, its exit statuses and its one-line refusals."""
    done = yukon("mod", "mark", "ann", "engine", "--reason", "solver", "--db", db.url)
    assert done.returncode == 0, done.stderr
    assert "marked ann engine" in done.stdout
    done = yukon("mod", "mark", "ann", "engine", "--reason", "again", "--db", db.url)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "yukon mod mark: ann is already marked engine (entry 1) [already_marked]"
    )
    done = yukon("mod", "log", "--json", "--db", db.url)
    assert done.returncode == 0 and json.loads(done.stdout)[0]["action"] == "mark"
    done = yukon("mod", "--db", db.url)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = yukon("mod", "show", "nobody", "--db", db.url)
    assert done.returncode == 2 and "[unknown_player]" in done.stderr


def test_show_prints_the_signals_of_each_run_and_an_auto_hide_is_undone_like_any_action(
    db: Db, capsys: pytest.CaptureFixture[str]
) -> None:
    """cyd plays a bot-paced run (20 ms a move) on a server with ``--auto-hide 1/24``: the
    run is flagged, cyd is hidden by ``auto``; ``show`` prints the run's figures and
    flags; ``undo`` of the automatic entry puts cyd back; ``hide``/``unhide`` by hand."""
    from server.domain.signals import AutoHide, FairPlay
    from server.storage.players import Identity
    from tests.server.storage.test_run_signals import WINNING

    async def bot_race() -> None:
        store = SqlStore(db.url)
        store.fairplay = FairPlay(auto_hide=AutoHide(1, 24))
        assert await ModerationStore(store.engine).log() == []  # nothing logged yet
        journal = tuple((20 * (i + 1), m) for i, m in enumerate(WINNING[1:]))
        ident = Identity(player_id=db.ids["cyd"], name="cyd", token="")
        record = race(res(ident, journal=journal, moves=len(journal)), code=WINNING[0])
        await store.record_race(dataclasses.replace(record, uid="race-bot"))
        await store.close()

    asyncio.run(bot_race())
    status, out, err = db.run(capsys, "show", "cyd")
    assert status == 0, err
    assert "state: hidden from the boards" in out
    [line] = [x for x in out.splitlines() if "signals:" in x]
    assert "cv 0.0" in line and "lowest window cv 0.0" in line and "under 50 ms" in line
    assert "pace 3.33/s (p100.0 of 2 human runs)" in line  # race-1: two runs of pace 0
    assert line.endswith("flags: cv, window_cv, fast")
    shown = json.loads(db.run(capsys, "show", "cyd", "--json")[1])
    [run] = shown["runs"]
    assert run["flags"] == ["cv", "window_cv", "fast"]
    assert run["signals"]["fast"] > 3 and run["signals"]["cv"] < 0.25
    assert set(run["signals"]) >= {"cv", "window_cv", "fast", "pace", "pace_pct", "n"}
    status, out, _ = db.run(capsys, "show", "ann")  # race-1 has no journal: judged on nothing
    assert "flags: none" in out

    status, out, _ = db.run(capsys, "log", "--player", "cyd")
    [entry] = out.strip().splitlines()
    assert "auto hid cyd from the boards (auto-hide 1/24: results" in entry
    number = entry.split("entry ", 1)[1].split(":", 1)[0]
    status, out, err = db.run(capsys, "undo", number, "--reason", "a fast hand", "--by", "olga")
    assert status == 0 and f"olga undid entry {number} (hide of cyd)" in out, err
    assert "state: open" in db.run(capsys, "show", "cyd")[1]
    status, out, err = db.run(capsys, "unhide", "cyd", "--reason", "r")
    one_line_refusal(status, err, "not_hidden")
    status, out, err = db.run(capsys, "hide", "cyd", "--reason", "looked", "--by", "olga")
    assert status == 0 and out.strip().endswith("olga hid cyd from the boards: looked"), err
    status, out, err = db.run(capsys, "hide", "cyd", "--reason", "again")
    one_line_refusal(status, err, "already_hidden")
    status, out, err = db.run(capsys, "unhide", "cyd", "--reason", "ok", "--by", "olga")
    assert status == 0 and "olga put cyd back on the boards: ok" in out, err
