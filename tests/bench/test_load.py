"""``bench.load``: how ``--nodes`` spreads players and rooms, and a short run of a real
cluster (a smoke test: it checks the figures are there, never what they are)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.load import DEFAULT_REDIS, node_urls, parse_args

ROOT = Path(__file__).resolve().parents[2]


def test_nodes_spread_each_rooms_members_and_take_turns_hosting() -> None:
    args = parse_args(["--nodes", "3", "--players", "24"])
    urls, owners = node_urls(args, ["ws://a", "ws://b", "ws://c"])
    rooms = [urls[i : i + 4] for i in range(0, 24, 4)]
    hosts = [room[0] for room in rooms]
    assert hosts == ["ws://a", "ws://b", "ws://c"] * 2  # rooms take the nodes in turn
    for r, room in enumerate(rooms):
        assert set(room) == {"ws://a", "ws://b", "ws://c"}  # every room spans the nodes
        assert owners[4 * r : 4 * r + 4] == [r % 3] * 4  # it lives on its host's node
    # Half the players reach their room's node, half are relayed, with 3 nodes as with 2.
    local = sum(urls[i] == urls[i - i % 4] for i in range(24))
    assert local == 12
    args = parse_args(["--nodes", "2", "--players", "8"])
    urls, owners = node_urls(args, ["ws://a", "ws://b"])
    assert urls == ["ws://a", "ws://b", "ws://a", "ws://b", "ws://b", "ws://a", "ws://b", "ws://a"]
    assert owners == [0, 0, 0, 0, 1, 1, 1, 1]


def test_one_server_alone_gets_every_player() -> None:
    args = parse_args(["--players", "8"])
    assert args.nodes == 0 and args.db == "sqlite"
    urls, owners = node_urls(args, ["ws://one"])
    assert urls == ["ws://one"] * 8 and owners == [0] * 8


def test_nodes_take_postgresql_and_refuse_sqlite(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(["--nodes", "2", "--players", "8"])
    assert args.db == "postgresql" and args.redis == DEFAULT_REDIS  # a prefix of its own
    with pytest.raises(SystemExit):
        parse_args(["--nodes", "2", "--db", "sqlite"])
    assert "--nodes needs one database for every node" in capsys.readouterr().err


def needed(what: str, problem: str | None) -> None:
    if problem is not None:
        message = f"{what}: {problem}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def redis_problem() -> str | None:
    import redis

    try:
        redis.Redis.from_url(DEFAULT_REDIS, socket_timeout=5).ping()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def cluster_problem() -> str | None:
    yukon = Path(sys.executable).parent / "yukon"
    found = shutil.which(str(yukon))
    if found is None:
        return f"no yukon command at {yukon}"
    usage = subprocess.run([found, "serve", "--help"], capture_output=True, text=True, timeout=60)
    return None if "--redis" in usage.stdout else "yukon serve has no --redis option yet"


def test_a_short_run_of_two_nodes_prints_each_node_and_the_relay() -> None:
    needed(f"Redis at {DEFAULT_REDIS}", redis_problem())
    needed("a cluster node", cluster_problem())
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.load",
            "--nodes",
            "2",
            "--players",
            "16",
            "--rate",
            "4",
            "--duration",
            "2",
            "--warmup",
            "1",
            "--no-echo",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "cluster of 2 (yukon serve --redis" in out, out
    assert re.search(r"players 16/16 connected; .* 0 failures", out), out
    assert "tracebacks" not in out, out
    for line in ("node 1: CPU", "node 2: CPU", "room on another node", "the relay adds"):
        assert line in out, out
    assert re.search(r"sizing, at this run.s mix .* 100,000 racers need \d+ nodes", out), out
