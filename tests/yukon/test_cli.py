"""The ``yukon`` command as a user runs it: a real process, real arguments and stdin."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"
VECTORS = [line.split("\t") for line in (DATA / "deal-vectors.txt").read_text().splitlines()]


def yukon(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "yukon", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=60,
    )


def winning_line() -> tuple[str, list[str]]:
    lines = [x.strip() for x in (DATA / "winning-game.txt").read_text().splitlines() if x.strip()]
    return lines[0], lines[1:]


@pytest.mark.parametrize(("code", "position"), VECTORS[:3])
def test_deal_prints_board_and_position(code: str, position: str) -> None:
    result = yukon("deal", code, "--ascii")
    assert result.returncode == 0, result.stderr
    assert position in result.stdout.splitlines()
    assert "###" in result.stdout  # face-down cards drawn as backs
    assert "\x1b[" not in result.stdout  # no colour when not writing to a terminal


def test_deal_colour_and_glyphs() -> None:
    result = yukon("deal", "YU1-C-AAAAAAB", "--color", "always")
    assert result.returncode == 0
    assert "\x1b[31m" in result.stdout and "♥" in result.stdout


def test_deal_accepts_lower_case() -> None:
    result = yukon("deal", "yu1-c-aaaaaab")
    assert result.returncode == 0
    assert VECTORS[1][1] in result.stdout


@pytest.mark.parametrize(
    ("code", "part"),
    [
        ("YU2-C-AAAAAAB", "version"),
        ("YU1-X-AAAAAAB", "rules"),
        ("YU1-TC-AAAAAAB", "rules"),
        ("YU1-C-AAAAAB", "deal"),
        ("YU1-C-AAAAAA1", "deal"),
        ("garbage", "three parts"),
    ],
)
def test_bad_codes_are_one_line_and_exit_2(code: str, part: str) -> None:
    result = yukon("deal", code)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert part in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_winning_game_from_arguments() -> None:
    code, moves = winning_line()
    result = yukon("replay", code, *moves)
    assert result.returncode == 0, result.stderr
    assert f"score 625  moves {len(moves)}  state won" in result.stdout


def test_replay_winning_game_from_stdin() -> None:
    code, moves = winning_line()
    result = yukon("replay", code, stdin="\n".join(moves) + "\n")
    assert result.returncode == 0, result.stderr
    assert "state won" in result.stdout


def test_replay_illegal_move_names_it_and_exits_1() -> None:
    result = yukon("replay", "YU1-C-AAAAAAB", "AD>5", "AD>F")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "yukon replay: move 2 (AD>F) is illegal:"
        " only the exposed card of a column can go to a foundation"
    )


def test_replay_garbage_move_exits_2() -> None:
    result = yukon("replay", "YU1-C-AAAAAAB", "AD>5", "hello")
    assert result.returncode == 2
    assert "move 2" in result.stderr and "'hello'" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_partial_game_reports_playing() -> None:
    result = yukon("replay", "YU1-C-AAAAAAB", "AD>5", "6S>1")
    assert result.returncode == 0
    assert "score 0  moves 2  state playing" in result.stdout


def test_replay_stuck_position() -> None:
    # Only clubs and the king of diamonds are left, the ace of clubs and the king buried:
    # no club builds on a club in Classic, and nothing builds on a king.
    position = "C KKQ- KDAC2C/3C/4C/5C/6C/7C/8C9CTCJCQCKC"
    result = yukon("replay", position)
    assert result.returncode == 0, result.stderr
    assert "state stuck" in result.stdout


def test_missing_arguments_is_usage_error() -> None:
    result = yukon("replay")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    # moves are optional (they may come on stdin): only the code is named as required
    assert "required: code" in result.stderr
    assert "MOVE" not in result.stderr.splitlines()[-1]


def test_yukon_alone_prints_usage_with_every_command() -> None:
    result = yukon()
    assert result.returncode == 2
    text = result.stdout + result.stderr
    assert "usage: yukon" in text
    for command in ("serve", "play", "replay", "solve", "deal", "db"):
        assert command in text
    assert "the following arguments are required" not in text


def test_version() -> None:
    from importlib.metadata import version

    result = yukon("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"yukon {version('yukon-race')}"


def test_serve_help_shows_defaults_but_never_a_secret() -> None:
    import os

    env = {**os.environ, "YUKON_PASSWORD": "hush-hush", "YUKON_DAILY_SECRET": "sekrit"}
    result = subprocess.run(
        [sys.executable, "-m", "yukon", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "(default: 8765)" in text
    assert "(default: 127.0.0.1)" in text
    assert "(default: 60)" in text
    assert "hush-hush" not in text and "sekrit" not in text
    # --log-level says what it does
    level = text[text.index("--log-level") :]
    assert "how much the server logs" in level


def test_every_move_example_in_help_is_quoted() -> None:
    """``>`` redirects in a shell: an unquoted ``7S>4`` pasted from the help makes a file."""
    import re

    result = yukon("replay", "--help")
    assert result.returncode == 0
    assert not re.search(r"(?<!')\b[2-9TJQKA][SHDC]>[1-7F]\b(?!')", result.stdout)


def test_readme_quotes_every_move_given_to_the_shell() -> None:
    import re

    readme = (DATA.parent.parent / "README.md").read_text()
    for line in readme.splitlines():
        if "yukon replay" in line and ">" in line:
            assert not re.search(r"\s[2-9TJQKA][SHDC]>[1-7F]\b", line), line


def test_replay_accepts_moves_with_a_dash() -> None:
    """``AD-5`` needs no quotes in a shell: the same move as ``AD>5``."""
    result = yukon("replay", "YU1-C-AAAAAAB", "AD-5", "ad-f")
    assert result.returncode == 1
    assert "move 2 (ad-f) is illegal" in result.stderr
    code, moves = winning_line()
    won = yukon("replay", code, *(m.replace(">", "-") for m in moves))
    assert won.returncode == 0, won.stderr
    assert "state won" in won.stdout


def test_serve_runs_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    """``yukon serve`` on port 0: it logs where it listens, serves, and Ctrl-C stops it."""
    import asyncio
    import re
    import signal

    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from protocol.messages import Hello, Welcome, decode_server, encode

    proc = subprocess.Popen(
        [sys.executable, "-m", "yukon", "serve", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,  # the embedded default: ./yukon.db
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert "yukon.db migrated from empty to" in first, first
        line = proc.stderr.readline()
        match = re.search(r"listening on (ws://\S+)", line)
        assert match, line
        # What a newcomer opens (issue 42): the page's address, and whether it is private.
        page = match.group(1).replace("ws://", "http://") + "/"
        assert f"open {page} in a browser" in line and f"yukon play {page}" in line, line
        assert "public: anyone who reaches it may play" in line, line

        async def talk() -> int | None:
            async with connect(match.group(1)) as ws:
                await ws.send(encode(Hello(1, "tester")))
                assert isinstance(decode_server(await ws.recv()), Welcome)
                proc.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(ws.recv(), 10)
                except ConnectionClosed as exc:
                    return exc.rcvd.code if exc.rcvd else None
            return None

        assert asyncio.run(talk()) == 1001  # going away
        assert proc.wait(timeout=10) == 0
        rest = proc.stderr.read()
        assert "Traceback" not in rest and "stopped" in rest
        assert (tmp_path / "yukon.db").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_refuses_a_negative_solver_process_count() -> None:
    result = yukon("serve", "--solver-processes", "-1")
    assert result.returncode == 2
    assert "--solver-processes" in result.stderr and "below 0" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("hours", ["-1", "soon", "9000"])
def test_serve_refuses_a_daily_min_age_that_is_not_hours(hours: str) -> None:
    result = yukon("serve", "--daily-min-age", hours)
    assert result.returncode == 2
    assert "--daily-min-age" in result.stderr and "hours" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_port_in_use_is_one_line_and_makes_no_database(tmp_path: Path) -> None:
    """Issue 42: a port in use ended the run only after ./yukon.db was created and
    migrated; the port is tried first."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "yukon", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=tmp_path,  # the default database: ./yukon.db
        )
    assert result.returncode == 1
    assert "cannot serve" in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "yukon.db").exists()


@pytest.mark.parametrize(
    ("command", "db"),
    [
        (["serve"], "mysql://x/y"),
        (["serve"], "nonsense"),
        (["serve"], "postgresql://"),
        (["db", "current"], "mysql://x/y"),
        (["db", "upgrade"], "nonsense"),
    ],
)
def test_a_database_url_that_cannot_be_used_is_one_line(
    db: str, command: list[str], tmp_path: Path
) -> None:
    """``--db mysql://x/y`` and ``--db nonsense`` ended in 48-line tracebacks (a driver
    not installed, a string SQLAlchemy cannot parse): one line, what would do, exit 2."""
    result = subprocess.run(
        [sys.executable, "-m", "yukon", *command, "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert f"--db: {db!r} is not a database URL" in result.stderr
    assert "sqlite:///PATH" in result.stderr and "postgresql://" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_db_help_says_what_each_action_does() -> None:
    result = yukon("db", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "migrate the schema to the latest revision" in text, text
    assert "recompute-ratings" in text and "exit 2 when they differ" in text


def test_readme_starts_the_compose_file_as_the_compose_file_says() -> None:
    """The README's ``docker compose`` line is the one docker-compose.yml's own comment
    gives (``up -d --build``: the image is built from this source)."""
    root = Path(__file__).resolve().parent.parent.parent
    compose = (root / "docker-compose.yml").read_text()
    readme = (root / "README.md").read_text()
    assert "docker compose up -d --build" in compose
    lines = [ln.strip() for ln in readme.splitlines() if ln.strip().startswith("docker compose")]
    assert "docker compose up -d --build" in lines, lines
    assert "docker compose up -d" not in lines, lines


def test_solve_prints_a_verdict_and_a_line_the_engine_replays() -> None:
    from protocol import Game

    result = yukon("solve", "YU1-C-AAAAAAB", "--budget", "20")
    assert result.returncode == 0, result.stderr
    verdict, line = result.stdout.splitlines()[:2]
    assert verdict.startswith("won ")
    assert verdict.endswith((" (C search)", " (Python search)"))
    game = Game.from_code("YU1-C-AAAAAAB")
    for move in line.split():
        game.play(move)
    assert game.is_won()


def test_solve_a_bad_code_is_one_line() -> None:
    result = yukon("solve", "YU9-C-AAAAAAB")
    assert result.returncode == 2 and "version" in result.stderr


def _serve_options(*argv: str, env: dict[str, str] | None = None) -> object:
    """``yukon serve``'s settings for these arguments, as ``cmd_serve`` would build them."""
    import os
    from unittest import mock

    from yukon import cli

    with mock.patch.dict(os.environ, env or {}):
        args = cli.build_parser().parse_args(["serve", *argv])
    return cli.serve_options(args)


def test_secrets_come_from_files_so_that_ps_does_not_show_them(tmp_path: Path) -> None:
    password, secret = tmp_path / "password", tmp_path / "daily"
    password.write_text("a long shared phrase\n")
    secret.write_text("s3cr3t")
    options: Any = _serve_options(
        "--password-file", str(password), "--daily-secret-file", str(secret)
    )
    assert options.hub.password == "a long shared phrase"  # the line break is not part of it
    assert options.daily_secret == "s3cr3t"
    # The same from the environment, by file or by value.
    options = _serve_options(
        env={"YUKON_PASSWORD_FILE": str(password), "YUKON_DAILY_SECRET": "from env"}
    )
    assert options.hub.password == "a long shared phrase" and options.daily_secret == "from env"


def test_a_secret_file_that_cannot_be_used_is_one_line(tmp_path: Path) -> None:
    result = yukon("serve", "--password-file", str(tmp_path / "missing"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "--password-file" in result.stderr
    (tmp_path / "pw").write_text("x")
    result = yukon("serve", "--password", "y", "--password-file", str(tmp_path / "pw"))
    assert result.returncode == 2 and "exclude each other" in result.stderr


def test_per_address_limits_and_trusted_proxies_are_settings() -> None:
    options: Any = _serve_options(
        "--max-connections-per-address", "5", "--trusted-proxy", "127.0.0.1",
        "--trusted-proxy", "10.0.0.0/8,::1",
        env={"YUKON_MAX_ROOMS_PER_ADDRESS": "0", "YUKON_TRUSTED_PROXIES": "192.0.2.1"},
    )  # fmt: skip
    assert options.hub.max_connections_per_address == 5
    assert options.hub.max_registrations_per_address == 20  # the default
    assert options.hub.max_rooms_per_address == 0  # no limit
    # Flags win over the variable, as for every setting.
    assert [str(n) for n in options.trusted_proxies] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]
    options = _serve_options(env={"YUKON_TRUSTED_PROXIES": "192.0.2.1, 2001:db8::/32"})
    assert [str(n) for n in options.trusted_proxies] == ["192.0.2.1/32", "2001:db8::/32"]
    result = yukon("serve", "--trusted-proxy", "proxy.example")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--trusted-proxy" in result.stderr and result.stderr.count("\n") == 1


def test_db_recompute_ratings_reports_identical_numbers_and_differences(tmp_path: Path) -> None:
    """``yukon db recompute-ratings`` computes every rating again from the stored results:
    exit 0 and "identical" when they match, exit 2 and the difference when one was
    changed behind the writer's back."""
    import asyncio
    import dataclasses

    from sqlalchemy import update

    from server.storage import migrate
    from server.storage.models import PlayerRating
    from server.storage.sql import SqlStore
    from tests.server.storage.test_sql import race, register, res

    url = f"sqlite:///{tmp_path}/yukon.db"

    async def setup() -> None:
        store = SqlStore(url)
        await migrate.upgrade(store)
        a, b, c = await register(store, "ann", "bob", "cyd")
        for n in range(3):
            record = race(res(a, rank=1 + n % 3), res(b, rank=1 + (n + 1) % 3), res(c, rank=3))
            await store.record_race(dataclasses.replace(record, rated=True))
        await store.close()

    async def nudge() -> None:
        store = SqlStore(url)
        await store.run_sync(
            lambda conn: conn.execute(
                update(PlayerRating.__table__).values(rating=PlayerRating.rating + 1)
            )
        )
        await store.close()

    asyncio.run(setup())
    done = yukon("db", "recompute-ratings", "--db", url)
    assert done.returncode == 0, done.stderr
    assert "3 rated race(s), 9 rating(s) of 3 player(s) recomputed: identical" in done.stdout
    asyncio.run(nudge())
    done = yukon("db", "recompute-ratings", "--db", url)
    assert done.returncode == 2
    assert "3 difference(s) from the stored numbers" in done.stdout
    assert "current rating stored" in done.stdout


def test_db_recompute_ratings_replays_the_refunds_of_a_mark_and_its_unmark(
    tmp_path: Path,
) -> None:
    """``yukon mod mark NAME engine`` refunds the opponents; ``yukon db
    recompute-ratings`` replays the refunds and finds the live figures, with the mark in
    force, after an opponent raced on a refunded rating, and after the unmark took the
    refunds back."""
    import asyncio
    import dataclasses

    from server.storage import migrate
    from server.storage.sql import Identity, SqlStore
    from tests.server.storage.test_sql import race, register, res

    url = f"sqlite:///{tmp_path}/yukon.db"
    start = time.time() - 600
    ended = iter(range(1, 100))
    players: list[Identity] = []

    async def rated(winner: Identity, loser: Identity) -> None:
        store = SqlStore(url)
        # Within the refund window before the mark (``yukon mod`` acts at the wall time).
        record = race(res(winner, rank=1), res(loser, rank=2), ended=start + next(ended))
        await store.record_race(dataclasses.replace(record, rated=True))
        await store.close()

    async def setup() -> None:
        store = SqlStore(url)
        await migrate.upgrade(store)
        players.extend(await register(store, "ann", "bob", "cyd"))
        await store.close()
        a, b, c = players
        for loser in (b, c, b):
            await rated(a, loser)

    def recomputed(refunds: int) -> None:
        done = yukon("db", "recompute-ratings", "--db", url)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"recomputed, {refunds} refund(s) replayed: identical" in done.stdout

    asyncio.run(setup())
    done = yukon("mod", "mark", "ann", "engine", "--reason", "solver", "--by", "olga", "--db", url)
    assert done.returncode == 0, done.stderr
    assert "olga marked ann engine (refunded " in done.stdout
    assert "2 opponent(s), 3 race(s))" in done.stdout
    recomputed(3)
    asyncio.run(rated(players[1], players[2]))  # bob beats cyd on their refunded ratings
    recomputed(3)
    done = yukon(
        "mod", "unmark", "ann", "engine", "--reason", "appeal", "--by", "olga", "--db", url
    )
    assert done.returncode == 0, done.stderr
    assert "olga unmarked ann engine (took back " in done.stdout
    recomputed(6)


def test_the_listening_line_says_whether_the_server_is_private() -> None:
    from server.app import ServeOptions, listening_line
    from server.rooms import HubConfig

    public = listening_line(ServeOptions(host="0.0.0.0"), 8765)
    assert public.startswith("listening on ws://0.0.0.0:8765 ")
    assert "open http://127.0.0.1:8765/ in a browser (or this machine's address" in public
    assert "public" in public and "private" not in public.replace("makes it private", "")
    private = listening_line(ServeOptions(hub=HubConfig(password="pw")), 9000)
    assert "open http://127.0.0.1:9000/" in private
    assert "private: every player needs the password" in private
    tls = listening_line(ServeOptions(certfile=Path("c.pem"), keyfile=Path("k.pem")), 443)
    assert tls.startswith("listening on wss://127.0.0.1:443 ") and "https://127.0.0.1:443/" in tls


async def test_a_missing_password_is_logged_as_missing_not_wrong(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from websockets.asyncio.client import connect

    from protocol.messages import Error, Hello, decode_server, encode
    from server.app import ServeOptions, open_server
    from server.rooms import HubConfig

    caplog.set_level(logging.WARNING, logger="yukon.rooms")
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/p.db",
        spool=tmp_path / "s.jsonl",
        hub=HubConfig(password="correct horse"),
        solver_processes=0,
    )
    async with open_server(options) as server:
        for password in (None, "battery"):
            async with connect(f"ws://127.0.0.1:{server.port}") as ws:
                await ws.send(encode(Hello(1, "ann", password=password)))
                answer = decode_server(await ws.recv())
                assert isinstance(answer, Error) and answer.code == "password"
    said = [r.getMessage() for r in caplog.records if "password" in r.getMessage()]
    assert len(said) == 2, said
    assert "missing password" in said[0] and "wrong" not in said[0], said
    assert "wrong password" in said[1], said


async def test_two_pipelined_gets_in_one_packet_get_both_answers(tmp_path: Path) -> None:
    """Issue 42: two GETs written in one packet to the server as ``yukon serve`` wires it
    (its pages, a real socket) got no answer at all; each is answered, in order, on the
    one connection (``server.runtime.plainhttp``; its own tests cover the edge cases)."""
    import asyncio

    from server.app import ServeOptions, open_server

    options = ServeOptions(
        port=0, db=f"sqlite:///{tmp_path}/h.db", spool=tmp_path / "s.jsonl", solver_processes=0
    )
    async with open_server(options) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        get = "GET {} HTTP/1.1\r\nHost: x\r\n\r\n"
        writer.write((get.format("/healthz") + get.format("/no-such-page")).encode())
        statuses, bodies = [], []
        for _ in range(2):
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
            lines = head.decode("latin-1").split("\r\n")
            statuses.append(int(lines[0].split(" ")[1]))
            length = next(
                int(h.split(":")[1]) for h in lines if h.lower().startswith("content-length")
            )
            bodies.append(await asyncio.wait_for(reader.readexactly(length), 20))
        writer.close()
    assert statuses == [200, 404] and bodies[0] == b"ok\n", (statuses, bodies)
