"""The deployment files: docker-compose.yml, the Dockerfile and the container's entrypoint;
docker-compose.cluster.yml and the load balancer's deploy/haproxy.cfg.

No container engine runs here, so the compose files and the Dockerfile are checked for their
structure (and by ``docker compose config`` where a compose command is installed), while
``deploy/entrypoint.sh``, which is what the container runs, is run for real: against the
PostgreSQL server of the test suite, with the ``yukon`` command of this environment. So is
deploy/haproxy.cfg: ``haproxy -c``, then the real HAProxy with that file (only its
addresses changed to loopback ones) in front of real ``yukon serve`` nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"

#: Values the operator must give: compose refuses to start without them.
SECRETS = ("POSTGRES_PASSWORD", "YUKON_DAILY_SECRET")
#: Passed on when set, left out when not.
OPTIONAL_SECRETS = ("YUKON_PASSWORD",)
#: The one form of interpolation allowed: ``${VAR:?message}``, never a default.
REQUIRED_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*):\?[^}]+\}")
WAIT = 30.0  # seconds: the bound on every wait for the server


# --- docker-compose.yml ------------------------------------------------------------------


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def fill(text: str, values: dict[str, str]) -> str:
    """Interpolate ``${VAR:?message}`` as compose would when every VAR is set."""
    return REQUIRED_VAR.sub(lambda m: values[m.group(1)], text)


def test_compose_has_the_database_and_the_server() -> None:
    services = compose()["services"]
    assert set(services) == {"db", "server"}
    db, server = services["db"], services["server"]
    assert db["image"].startswith("postgres:16")
    assert server["build"] in (".", {"context": "."})
    assert server["restart"] == "unless-stopped"
    assert server["stop_signal"] == "SIGTERM"
    assert re.fullmatch(r"\d+s", server["stop_grace_period"])


def test_compose_database_is_healthchecked_and_keeps_its_data_in_a_named_volume() -> None:
    data = compose()
    db = data["services"]["db"]
    check = db["healthcheck"]
    assert "pg_isready" in " ".join(check["test"])
    assert {"interval", "timeout", "retries"} <= set(check)
    mounts = dict(volume.split(":", 1)[::-1] for volume in db["volumes"])
    assert mounts["/var/lib/postgresql/data"] in data["volumes"]
    assert "ports" not in db  # the database is reached by the server only


def test_compose_server_waits_for_a_healthy_database() -> None:
    server = compose()["services"]["server"]
    assert server["depends_on"]["db"]["condition"] == "service_healthy"


def test_compose_named_volumes_are_declared() -> None:
    data = compose()
    for service in data["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in data["volumes"], volume


def test_compose_secrets_have_no_defaults() -> None:
    text = COMPOSE.read_text()
    interpolations = re.findall(r"\$\{[^}]*\}", text)
    assert interpolations
    for found in interpolations:
        assert REQUIRED_VAR.fullmatch(found), f"{found}: only ${{VAR:?message}}, no default"
    assert set(REQUIRED_VAR.findall(text)) == set(SECRETS)

    services = compose()["services"]
    db_env, server_env = services["db"]["environment"], services["server"]["environment"]
    assert REQUIRED_VAR.fullmatch(db_env["POSTGRES_PASSWORD"])
    assert REQUIRED_VAR.fullmatch(server_env["YUKON_DAILY_SECRET"])
    assert server_env["YUKON_REQUIRE_SECRETS"] == "1"
    for name in OPTIONAL_SECRETS:  # passed on from the operator's environment, or not at all
        assert server_env[name] is None or REQUIRED_VAR.fullmatch(server_env[name])


def test_compose_server_database_url_points_at_the_db_service() -> None:
    from sqlalchemy.engine import make_url

    services = compose()["services"]
    db_env = services["db"]["environment"]
    values = {"POSTGRES_PASSWORD": "pw-from-env", "YUKON_DAILY_SECRET": "daily"}
    url = make_url(fill(services["server"]["environment"]["YUKON_DB"], values))
    assert url.get_backend_name() == "postgresql"
    assert (url.host, url.port) == ("db", 5432)
    assert url.username == db_env["POSTGRES_USER"]
    assert url.password == "pw-from-env"
    assert url.database == db_env["POSTGRES_DB"]


def test_compose_publishes_the_port_the_image_exposes() -> None:
    server = compose()["services"]["server"]
    assert server["ports"] == ["8765:8765"]
    exposed = {arg for name, arg in dockerfile() if name == "EXPOSE"}
    assert exposed == {"8765"}
    assert "YUKON_PORT" not in server["environment"]  # so the entrypoint's 8765 applies


def compose_command() -> list[str] | None:
    """``docker compose`` (the plugin) or ``docker-compose``; None if neither is here.

    ``config`` only reads the files: it needs no container engine."""
    if shutil.which("docker"):
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, text=True, timeout=30
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def run_compose_config(file: Path = COMPOSE, **values: str) -> subprocess.CompletedProcess[str]:
    command = compose_command()
    if command is None:
        pytest.skip("no docker compose (or docker-compose) to run `config`")
    env = {k: v for k, v in os.environ.items() if k not in (*SECRETS, *OPTIONAL_SECRETS)}
    env.update(values)
    return subprocess.run(
        [*command, "--file", str(file), "config"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compose_config_accepts_the_file_when_the_secrets_are_given() -> None:
    result = run_compose_config(POSTGRES_PASSWORD="pw1", YUKON_DAILY_SECRET="daily1")
    assert result.returncode == 0, result.stderr
    server = yaml.safe_load(result.stdout)["services"]["server"]
    assert server["environment"]["YUKON_DB"] == "postgresql://yukon:pw1@db:5432/yukon"
    assert server["environment"]["YUKON_DAILY_SECRET"] == "daily1"


@pytest.mark.parametrize("missing", SECRETS)
def test_compose_config_refuses_a_missing_secret(missing: str) -> None:
    values = {"POSTGRES_PASSWORD": "pw1", "YUKON_DAILY_SECRET": "daily1"}
    del values[missing]
    result = run_compose_config(**values)
    assert result.returncode != 0
    assert f"set {missing}" in result.stderr


# --- Dockerfile and .dockerignore ------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (NAME, arguments), continuation lines joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        name, _, args = line.partition(" ")
        instructions.append((name.upper(), args.strip()))
    assert not pending, "the Dockerfile ends in a continuation line"
    return instructions


def instruction(name: str) -> list[str]:
    return [args for found, args in dockerfile() if found == name]


def test_dockerfile_builds_on_python_slim_and_installs_without_a_cache() -> None:
    assert instruction("FROM") == ["python:3.11-slim"]
    installs = [run for run in instruction("RUN") if "pip install" in run]
    assert len(installs) == 1
    assert "--no-cache-dir" in installs[0]


def test_dockerfile_builds_the_solvers_c_search_and_drops_the_compiler() -> None:
    (install,) = [run for run in instruction("RUN") if "pip install" in run]
    assert "gcc" in install.split("pip install")[0]  # installed before the build
    assert "purge" in install.split("pip install")[1]  # and removed in the same layer
    assert "search_implementation" in install  # the build fails if the C search is missing
    copied = [src for args in instruction("COPY") for src in args.split()[:-1]]
    assert "setup.py" in copied


def test_dockerfile_copies_only_what_is_needed() -> None:
    sources = []
    for args in instruction("COPY"):
        assert not args.startswith("--from"), args
        *srcs, _dest = args.split()
        sources += [src.rstrip("/") for src in srcs if not src.startswith("--")]
    assert "." not in sources  # never the whole context
    for source in sources:
        assert (ROOT / source).exists(), source
    # .dockerignore leaves out everything but what is copied.
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*"
    kept = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    assert set(sources) <= kept, set(sources) - kept


def test_dockerfile_runs_as_an_unprivileged_user() -> None:
    users = instruction("USER")
    assert users
    assert users[-1].split(":")[0] not in ("root", "0")


def test_dockerfile_entrypoint_is_the_entrypoint_script() -> None:
    (entry,) = instruction("ENTRYPOINT")
    command = json.loads(entry)  # exec form, so the server gets the signals itself
    copied = {}
    for args in instruction("COPY"):
        *srcs, dest = [a for a in args.split() if not a.startswith("--")]
        for src in srcs:
            copied[dest] = src
    assert copied[command[0]] == "deploy/entrypoint.sh"
    assert ENTRYPOINT.is_file()
    assert os.access(ENTRYPOINT, os.X_OK)
    assert ENTRYPOINT.read_text().startswith("#!/bin/sh\n")


def healthcheck_command() -> list[str]:
    (check,) = instruction("HEALTHCHECK")
    options, _, command = check.partition("CMD ")
    assert "--interval=" in options and "--timeout=" in options
    parsed: list[str] = json.loads(command)
    return parsed


def test_dockerfile_healthcheck_asks_healthz_on_the_server_port() -> None:
    command = healthcheck_command()
    assert command[:2] == ["python", "-c"]  # no curl in the slim image
    assert "urllib" in command[2]
    assert "/healthz" in command[2]
    assert "YUKON_PORT" in command[2]


def run_healthcheck(port: int) -> subprocess.CompletedProcess[str]:
    command = healthcheck_command()
    env = {**os.environ, "YUKON_PORT": str(port)}
    return subprocess.run(
        [sys.executable, *command[1:]], env=env, capture_output=True, text=True, timeout=30
    )


def test_dockerfile_healthcheck_fails_when_nothing_listens() -> None:
    assert run_healthcheck(free_port()).returncode == 1


@pytest.mark.parametrize("script", ["entrypoint.sh", "offline-images.sh"])
def test_deploy_shell_scripts_are_shellcheck_clean(script: str) -> None:
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shellcheck is not installed")
        pytest.skip("shellcheck is not installed")
    path = ENTRYPOINT.parent / script
    result = subprocess.run(
        ["shellcheck", "--shell=sh", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- deploy/entrypoint.sh, run for real --------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def entrypoint_env(**values: str) -> dict[str, str]:
    """This environment less any YUKON_ setting, with ``yukon`` of this venv first on PATH."""
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "yukon").exists(), f"no yukon command in {bin_dir}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("YUKON_")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env.update(values)
    return env


class Output:
    """The lines of a process's output, read on a thread so every wait has a bound."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self._stream = proc.stdout
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, pattern: str, timeout: float = WAIT) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"output ended before {pattern!r}:\n{self.text()}")
            self.seen.append(line)
            if match := re.search(pattern, line):
                return match
        raise AssertionError(f"no {pattern!r} within {timeout}s:\n{self.text()}")

    def rest(self, timeout: float = WAIT) -> str:
        """Everything up to the end of the output."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the output did not end"
        while (line := self._lines.get_nowait()) is not None:
            self.seen.append(line)
        return self.text()

    def text(self) -> str:
        return "".join(self.seen)


@contextlib.contextmanager
def entrypoint(env: dict[str, str], cwd: Path) -> Iterator[tuple[subprocess.Popen[str], Output]]:
    proc = subprocess.Popen(
        [str(ENTRYPOINT)],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield proc, Output(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)


def say_hello(port: int, then: Any = None) -> int | None:
    """Hello on a websocket, expect Welcome, call ``then``; the code the server closes with."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from protocol.messages import Hello, Welcome, decode_server, encode

    async def talk() -> int | None:
        async with connect(f"ws://127.0.0.1:{port}", open_timeout=WAIT) as ws:
            await ws.send(encode(Hello(1, "tester")))
            assert isinstance(decode_server(await asyncio.wait_for(ws.recv(), WAIT)), Welcome)
            if then is not None:
                then()
            try:
                await asyncio.wait_for(ws.recv(), WAIT)
            except ConnectionClosed as exc:
                return exc.rcvd.code if exc.rcvd else None
        return None

    return asyncio.run(talk())


def stop(proc: subprocess.Popen[str], output: Output) -> str:
    """SIGTERM, as ``docker stop`` sends; the server must exit 0. Returns the rest of the log."""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=WAIT) == 0, output.rest()
    return output.rest()


def test_entrypoint_migrates_serves_and_stops_on_sigterm(
    fresh_postgres: str, tmp_path: Path
) -> None:
    env = entrypoint_env(
        YUKON_DB=fresh_postgres,
        YUKON_PORT="0",
        YUKON_SPOOL=str(tmp_path / "spool.jsonl"),
        YUKON_DAILY_SECRET="a-test-secret",
        YUKON_REQUIRE_SECRETS="1",
    )
    with entrypoint(env, tmp_path) as (proc, output):
        output.wait_for(r"yukon entrypoint: migrating the database")
        output.wait_for(r"upgraded from empty to \w+")
        output.wait_for(r"is at migration \w+")
        match = output.wait_for(r"listening on ws://0\.0\.0\.0:(\d+)")  # every interface
        port = int(match.group(1))
        if Path(f"/proc/{proc.pid}/cmdline").exists():  # the script exec'd into the server
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
            assert b"serve" in cmdline and b"--host" in cmdline, cmdline

        closed = say_hello(port, then=lambda: proc.send_signal(signal.SIGTERM))
        assert closed in (1001, 1012)  # a clean close: going away, or restarting
        assert proc.wait(timeout=WAIT) == 0
        rest = output.rest()
    assert "stopped" in rest
    assert "Traceback" not in rest


def test_entrypoint_retries_a_database_that_is_not_up_yet(
    fresh_postgres: str, tmp_path: Path
) -> None:
    """The database answers only after the first attempt: the entrypoint waits and goes on."""
    from sqlalchemy.engine import make_url

    from bench.tcp_proxy import TcpProxy

    real = make_url(fresh_postgres)
    proxy = TcpProxy(real.host or "127.0.0.1", real.port or 5432)
    proxy.port = free_port()  # nothing listens there yet
    env = entrypoint_env(
        YUKON_DB=real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False),
        YUKON_PORT="0",
        YUKON_SPOOL=str(tmp_path / "spool.jsonl"),
        YUKON_DB_ATTEMPTS="5",
        YUKON_DB_RETRY_DELAY="2",
    )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        with entrypoint(env, tmp_path) as (proc, output):
            output.wait_for(r"migration attempt 1 of 5 failed; retrying in 2s")
            asyncio.run_coroutine_threadsafe(proxy.start(), loop).result(WAIT)
            output.wait_for(r"upgraded from empty to \w+")
            output.wait_for(r"listening on ws://")
            rest = stop(proc, output)
        assert "attempt 2 of" not in output.text()
        assert "stopped" in rest
    finally:
        asyncio.run_coroutine_threadsafe(proxy.cut(), loop).result(WAIT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()


def test_entrypoint_gives_up_on_a_database_that_never_answers(tmp_path: Path) -> None:
    env = entrypoint_env(
        YUKON_DB=f"postgresql://yukon@127.0.0.1:{free_port()}/yukon",
        YUKON_DB_ATTEMPTS="2",
        YUKON_DB_RETRY_DELAY="0",
    )
    with entrypoint(env, tmp_path) as (proc, output):
        assert proc.wait(timeout=WAIT) == 1
        text = output.rest()
    assert "migration attempt 1 of 2 failed" in text
    assert text.rstrip().endswith("cannot migrate the database after 2 attempts; not starting")
    assert "listening" not in text


def refusal(tmp_path: Path, **values: str) -> str:
    """Run the entrypoint, expect it to refuse to start; its one line of output."""
    result = subprocess.run(
        [str(ENTRYPOINT)],
        env=entrypoint_env(**values),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert list(tmp_path.iterdir()) == []  # no database was made, nothing was written
    return lines[0]


def test_entrypoint_refuses_to_start_without_a_database(tmp_path: Path) -> None:
    line = refusal(tmp_path, YUKON_DAILY_SECRET="s")
    assert line.startswith("yukon entrypoint: YUKON_DB is not set")


def test_entrypoint_refuses_to_start_without_the_daily_secret_when_required(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path}/yukon.db"
    line = refusal(tmp_path, YUKON_DB=db, YUKON_REQUIRE_SECRETS="1")
    assert line.startswith("yukon entrypoint: YUKON_DAILY_SECRET is not set")


def test_entrypoint_refuses_a_port_that_is_not_a_number(tmp_path: Path) -> None:
    line = refusal(tmp_path, YUKON_DB=f"sqlite:///{tmp_path}/yukon.db", YUKON_PORT="http")
    assert "YUKON_PORT must be a whole number" in line


def test_dockerfile_healthcheck_passes_on_a_running_server(tmp_path: Path) -> None:
    """The image's HEALTHCHECK command, run against the entrypoint's server."""
    env = entrypoint_env(YUKON_DB=f"sqlite:///{tmp_path}/yukon.db", YUKON_PORT="0")
    with entrypoint(env, tmp_path) as (proc, output):
        port = int(output.wait_for(r"listening on ws://\S+:(\d+)").group(1))
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=WAIT).close()
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 426):  # plain HTTP is not answered: no /healthz yet
                stop(proc, output)
                pytest.skip(f"the server does not serve /healthz yet (HTTP {exc.code})")
        result = run_healthcheck(port)
        assert result.returncode == 0, result.stderr
        stop(proc, output)


# --- docker-compose.cluster.yml and deploy/haproxy.cfg ----------------------------------------

CLUSTER = ROOT / "docker-compose.cluster.yml"
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
NODES = ("node1", "node2", "node3")
#: Where the image keeps the spool (the Dockerfile's WORKDIR and YUKON_SPOOL).
SPOOL_DIR = "/var/lib/yukon"


def cluster() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CLUSTER.read_text())
    return data


def needed(tool: str, why: str) -> str:
    """The path of ``tool``; without it the test skips, or fails under ``CI=true``."""
    path = shutil.which(tool)
    if path is None:
        message = f"{tool} is not installed: {why}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def test_cluster_has_database_redis_three_nodes_and_a_load_balancer() -> None:
    services = cluster()["services"]
    assert set(services) == {"db", "redis", *NODES, "lb"}
    assert services["db"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:")
    assert services["lb"]["image"].startswith("haproxy:")
    for name in NODES:  # one image, the one docker-compose.yml builds
        assert services[name]["build"] in (".", {"context": "."}), name
        assert services[name]["image"] == services["node1"]["image"]
    for name in NODES:
        node = services[name]
        assert node["restart"] == "unless-stopped"
        assert node["stop_signal"] == "SIGTERM"
        assert re.fullmatch(r"\d+s", node["stop_grace_period"])
        # The image's entrypoint: it migrates (nodes take turns: an advisory lock), serves.
        assert "entrypoint" not in node


def test_cluster_nodes_start_on_a_healthy_database_and_redis_with_ids_of_their_own() -> None:
    services = cluster()["services"]
    for name in NODES:
        depends = services[name]["depends_on"]
        assert depends["db"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        assert services[name]["environment"]["YUKON_NODE_ID"] == name
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert "ping" in services["redis"]["healthcheck"]["test"]


def test_cluster_nodes_share_one_database_and_one_redis() -> None:
    from sqlalchemy.engine import make_url

    services = cluster()["services"]
    values = {"POSTGRES_PASSWORD": "pw-from-env", "YUKON_DAILY_SECRET": "daily"}
    urls = {name: fill(services[name]["environment"]["YUKON_DB"], values) for name in NODES}
    assert len(set(urls.values())) == 1, urls
    url = make_url(urls["node1"])
    db_env = services["db"]["environment"]
    assert url.get_backend_name() == "postgresql"
    assert (url.host, url.port, url.password) == ("db", 5432, "pw-from-env")
    assert (url.username, url.database) == (db_env["POSTGRES_USER"], db_env["POSTGRES_DB"])
    redis = {services[name]["environment"]["YUKON_REDIS"] for name in NODES}
    assert redis == {"redis://redis:6379/0"}


def test_cluster_nodes_keep_their_own_spool_and_the_database_its_volume() -> None:
    data = cluster()
    services = data["services"]
    spools = []
    for name in NODES:
        mounts = dict(volume.split(":", 1)[::-1] for volume in services[name]["volumes"])
        spools.append(mounts[SPOOL_DIR])
    assert len(set(spools)) == len(NODES)  # two nodes never append to one spool file
    db_mounts = dict(volume.split(":", 1)[::-1] for volume in services["db"]["volumes"])
    assert db_mounts["/var/lib/postgresql/data"] in data["volumes"]
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in data["volumes"], volume
    assert "volumes" not in services["redis"]  # routes and leases only: nothing to keep
    assert "--save" in services["redis"]["command"]


def test_cluster_only_the_load_balancer_is_published_and_it_mounts_the_haproxy_config() -> None:
    services = cluster()["services"]
    published = {name for name, service in services.items() if "ports" in service}
    assert published == {"lb"}
    assert services["lb"]["ports"] == ["8765:8765"]
    mounts = {}
    for volume in services["lb"]["volumes"]:
        source, target, *mode = volume.split(":")
        mounts[target] = (source, mode)
    source, mode = mounts["/usr/local/etc/haproxy/haproxy.cfg"]
    assert (ROOT / source).resolve() == HAPROXY_CFG
    assert mode == ["ro"]
    assert set(services["lb"]["depends_on"]) == set(NODES)


def test_cluster_nodes_trust_forwarded_addresses_from_the_load_balancer_only() -> None:
    import ipaddress

    data = cluster()
    services = data["services"]
    (subnet,) = [pool["subnet"] for pool in data["networks"]["cluster"]["ipam"]["config"]]
    lb_address = services["lb"]["networks"]["cluster"]["ipv4_address"]
    assert ipaddress.ip_address(lb_address) in ipaddress.ip_network(subnet)
    for name in NODES:
        assert services[name]["environment"]["YUKON_TRUSTED_PROXIES"] == lb_address
        assert services[name]["networks"] == ["cluster"]
    assert "forwardfor" in haproxy_sections()["backend nodes"]["option"]


def test_cluster_secrets_have_no_defaults() -> None:
    text = CLUSTER.read_text()
    interpolations = re.findall(r"\$\{[^}]*\}", text)
    for found in interpolations:
        assert REQUIRED_VAR.fullmatch(found), f"{found}: only ${{VAR:?message}}, no default"
    assert set(REQUIRED_VAR.findall(text)) == set(SECRETS)
    services = cluster()["services"]
    for name in NODES:
        env = services[name]["environment"]
        assert REQUIRED_VAR.fullmatch(env["YUKON_DAILY_SECRET"])
        assert env["YUKON_REQUIRE_SECRETS"] == "1"
        for optional in OPTIONAL_SECRETS:
            assert env[optional] is None or REQUIRED_VAR.fullmatch(env[optional])


def test_cluster_config_accepts_the_file_when_the_secrets_are_given() -> None:
    needed("docker-compose", "apt-get install docker-compose, to run `config`")
    result = run_compose_config(CLUSTER, POSTGRES_PASSWORD="pw1", YUKON_DAILY_SECRET="daily1")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    for name in NODES:
        env = services[name]["environment"]
        assert env["YUKON_DB"] == "postgresql://yukon:pw1@db:5432/yukon"
        assert env["YUKON_DAILY_SECRET"] == "daily1"
        assert env["YUKON_NODE_ID"] == name


@pytest.mark.parametrize("missing", SECRETS)
def test_cluster_config_refuses_a_missing_secret(missing: str) -> None:
    needed("docker-compose", "apt-get install docker-compose, to run `config`")
    values = {"POSTGRES_PASSWORD": "pw1", "YUKON_DAILY_SECRET": "daily1"}
    del values[missing]
    result = run_compose_config(CLUSTER, **values)
    assert result.returncode != 0
    assert f"set {missing}" in result.stderr


def haproxy_sections() -> dict[str, dict[str, list[str]]]:
    """deploy/haproxy.cfg as {"backend nodes": {keyword: [rest of each line]}}; a keyword
    of two words (``timeout tunnel``, ``http-check expect``) is kept whole."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in HAPROXY_CFG.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        words = line.split()
        if not raw[0].isspace():
            current = sections.setdefault(" ".join(words), {})
            continue
        assert current is not None, raw
        two = words[0] in ("timeout", "http-check", "http-request")
        key = " ".join(words[:2]) if two else words[0]
        current.setdefault(key, []).append(" ".join(words[2 if two else 1 :]))
    return sections


def seconds(text: str) -> float:
    """An HAProxy time (``100ms``, ``30s``, ``5m``, ``1h``; bare: milliseconds)."""
    match = re.fullmatch(r"(\d+)(us|ms|s|m|h|d)?", text)
    assert match, text
    unit = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(match.group(1)) * unit[match.group(2) or "ms"]


def test_haproxy_sends_to_every_node_on_the_port_it_serves() -> None:
    sections = haproxy_sections()
    assert sections["frontend yukon"]["bind"] == [":8765"]
    assert sections["frontend yukon"]["default_backend"] == ["nodes"]
    servers = dict(line.split(maxsplit=1) for line in sections["backend nodes"]["server"])
    assert servers == {name: f"{name}:8765" for name in NODES}
    assert sections["defaults"]["mode"] == ["http"]  # HTTP mode: it sees the upgrade


def test_haproxy_balances_by_connections_and_checks_healthz() -> None:
    backend = haproxy_sections()["backend nodes"]
    assert backend["balance"] == ["leastconn"]  # long-lived connections: not round robin
    assert "httpchk GET /healthz" in backend["option"]
    assert backend["http-check expect"] == ["status 200"]
    (default_server,) = backend["default-server"]
    words = default_server.split()
    assert "check" in words
    assert seconds(words[words.index("inter") + 1]) <= 5
    assert "init-addr" in words  # starts even before every node resolves


def test_haproxy_keeps_quiet_websockets_open_longer_than_the_ping_interval() -> None:
    from server.runtime.connection import PING_INTERVAL, PING_TIMEOUT

    defaults = haproxy_sections()["defaults"]
    tunnel = seconds(defaults["timeout tunnel"][0])
    # Both sides ping a quiet peer every PING_INTERVAL: a live websocket is never idle
    # that long; the tunnel timeout only cuts one whose peer went silent.
    assert tunnel >= 10 * (PING_INTERVAL + PING_TIMEOUT)
    for name in ("connect", "client", "server", "http-request", "client-fin", "server-fin"):
        assert seconds(defaults[f"timeout {name}"][0]) <= 60, name
    assert "redispatch 1" in defaults["option"] or "redispatch" in defaults["option"]


def test_haproxy_gives_up_on_a_dead_node_quickly() -> None:
    """A killed node's address answers nothing, and leastconn sends the first players who
    come back to it (it lost every connection): each waits ``timeout connect`` before the
    retry goes elsewhere, and a failed connection marks the node down at once (measured:
    docs/performance.md, "Failover through HAProxy")."""
    assert seconds(haproxy_sections()["defaults"]["timeout connect"][0]) <= 1
    (default_server,) = haproxy_sections()["backend nodes"]["default-server"]
    assert "observe layer4" in default_server
    assert "on-error mark-down" in default_server


def test_haproxy_accepts_its_config() -> None:
    haproxy = needed("haproxy", "apt-get install haproxy, to check deploy/haproxy.cfg")
    result = subprocess.run(
        [haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration file is valid" in result.stdout + result.stderr
    # Off the compose network the node names do not resolve; nothing else may be wrong.
    warnings = [x for x in result.stderr.splitlines() if "[WARNING]" in x or "[ALERT]" in x]
    for warning in warnings:
        assert "could not resolve address 'node" in warning, warning


# --- deploy/haproxy.cfg, run for real on loopback in front of real nodes ----------------------


def loopback_haproxy_config(port: int, backends: dict[str, int]) -> str:
    """deploy/haproxy.cfg as it is, but listening on 127.0.0.1:``port`` and sending to
    the nodes at 127.0.0.1:``backends[name]`` (every line that names each: ``nodes`` and
    each node's own backend): only the addresses change. ``bench.load --nodes`` runs the
    same (``bench.haproxy``)."""
    from bench.haproxy import loopback_config

    return loopback_config(port, backends, HAPROXY_CFG.read_text())


@contextlib.contextmanager
def running(argv: list[str], env: dict[str, str], cwd: Path) -> Iterator[Output]:
    """A process whose output (stdout and stderr together) is read as it comes; killed
    at the end if it still runs."""
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield Output(proc)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=WAIT)


@contextlib.contextmanager
def yukon_node(workdir: Path, db: str, *extra: str) -> Iterator[tuple[int, Output]]:
    """A real ``yukon serve`` on a loopback port of its own, which trusts the proxy's
    X-Forwarded-For (loopback) as the compose file's nodes trust the load balancer."""
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [
        str(Path(sys.executable).parent / "yukon"),
        "serve",
        "--port",
        "0",
        "--db",
        db,
        "--spool",
        str(workdir / "spool.jsonl"),
        "--trusted-proxy",
        "127.0.0.1",
        *extra,
    ]
    with running(argv, entrypoint_env(), workdir) as output:
        port = int(output.wait_for(r"listening on ws://127\.0\.0\.1:(\d+)").group(1))
        yield port, output


class Unhealthy:
    """An HTTP server on loopback that answers 503 to everything: a node whose database
    does not answer, as its /healthz says."""

    def __init__(self) -> None:
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Unhealthy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def haproxy_in_front(tmp_path: Path, backends: dict[str, int]) -> Iterator[tuple[int, Output]]:
    """The real HAProxy, run with deploy/haproxy.cfg (loopback addresses), in front of
    ``backends``; yields its port once it has marked the unhealthy ``node3`` down."""
    haproxy = needed("haproxy", "apt-get install haproxy, to run deploy/haproxy.cfg")
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(loopback_haproxy_config(port, backends))
    with running([haproxy, "-db", "-f", str(config)], dict(os.environ), tmp_path) as output:
        # Two failed checks of /healthz two seconds apart: node3 gets no connection.
        output.wait_for(r"Server nodes/node3 is DOWN, reason: Layer7 wrong status.*503")
        yield port, output


def metric(port: int, name: str) -> float:
    """One figure of a node's /metrics, asked of the node itself (not through the proxy)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=WAIT) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(f"{name} "):
                return float(line.split()[1])
    raise AssertionError(f"no {name} in /metrics of the node on port {port}")


async def arrive_through(lb_port: int, name: str, nodes: dict[str, int]) -> tuple[Any, str]:
    """A player connects to the proxy and says hello; it and the node it reached (the one
    whose count of opened websockets rose)."""
    from bench.bot import Player

    def opened() -> dict[str, float]:
        return {n: metric(p, "yukon_connections_opened_total") for n, p in nodes.items()}

    before = await asyncio.to_thread(opened)
    player = Player(f"ws://127.0.0.1:{lb_port}", name, random.Random(name))
    await player.connect(WAIT)
    await player.hello(WAIT)
    after = await asyncio.to_thread(opened)
    (reached,) = [n for n in nodes if after[n] == before[n] + 1]
    assert sum(after.values()) == sum(before.values()) + 1
    return player, reached


async def race_a_little(players: list[Any], moves: int = 6) -> None:
    """The players form a room through the proxy, race, and each plays ``moves`` moves,
    every one answered."""
    from bench.bot import form_room

    await form_room(players, timeout=WAIT)
    for _ in range(moves):
        for p in players:
            played = await p.play_one(WAIT)
            assert played is not None and played[0], (p.name, p.errors)


def test_haproxy_passes_websockets_balances_them_and_skips_an_unhealthy_node(
    tmp_path: Path,
) -> None:
    """Two real nodes (each its own SQLite database) and one that fails /healthz behind the
    real HAProxy with deploy/haproxy.cfg: four players land two on each healthy node, none
    on the unhealthy one, and race through the proxy's websocket tunnels."""
    with (
        Unhealthy() as sick,
        yukon_node(tmp_path / "a", f"sqlite:///{tmp_path}/a.db") as (port_a, log_a),
        yukon_node(tmp_path / "b", f"sqlite:///{tmp_path}/b.db") as (port_b, log_b),
        haproxy_in_front(tmp_path, {"node1": port_a, "node2": port_b, "node3": sick.port}) as (
            lb_port,
            lb_log,
        ),
    ):
        nodes = {"node1": port_a, "node2": port_b}

        async def scenario() -> dict[str, list[Any]]:
            landed: dict[str, list[Any]] = {"node1": [], "node2": []}
            for i in range(4):
                player, node = await arrive_through(lb_port, f"lb{i}", nodes)
                landed[node].append(player)
            try:
                # leastconn: each new connection goes to the node with fewer open.
                assert [len(x) for x in landed.values()] == [2, 2]
                # Each room is on one node here: these nodes are not a cluster.
                await asyncio.gather(*(race_a_little(group) for group in landed.values()))
            finally:
                for group in landed.values():
                    for p in group:
                        await p.close()
            return landed

        asyncio.run(scenario())
        for port in nodes.values():  # each node played its own room's moves
            assert metric(port, "yukon_moves_accepted_total") >= 12
    # Everything each process wrote, now that it has stopped.
    lb_text = lb_log.rest()
    assert "node1 is DOWN" not in lb_text and "node2 is DOWN" not in lb_text
    assert "Traceback" not in log_a.rest() + log_b.rest()


#: The Redis of the cluster test below; the test's keys have a prefix of their own.
DEPLOY_REDIS = "redis://127.0.0.1:6379/0"


def cluster_nodes_problem() -> str | None:
    """Why two real cluster nodes cannot run here, or None."""
    usage = subprocess.run(
        [str(Path(sys.executable).parent / "yukon"), "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    if "--redis" not in usage.stdout:
        return "yukon serve has no --redis option yet"
    try:
        import redis

        redis.Redis.from_url(DEPLOY_REDIS, socket_timeout=5).ping()
    except Exception as exc:
        return f"Redis at {DEPLOY_REDIS}: {type(exc).__name__}: {exc}"
    return None


@pytest.fixture
def deploy_redis() -> Iterator[tuple[str, str]]:
    """The Redis URL and a key prefix of this test's own; its keys are deleted after."""
    problem = cluster_nodes_problem()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)
    import redis

    prefix = f"yukon-test-{secrets.token_hex(4)}:"
    client = redis.Redis.from_url(DEPLOY_REDIS, socket_timeout=5)
    try:
        yield DEPLOY_REDIS, prefix
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
        client.close()


def migrated(db: str, tmp_path: Path) -> str:
    """``db``, migrated once before any node starts (as the compose file's migrate does)."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "yukon"), "db", "upgrade", "--db", db],
        env=entrypoint_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return db


def test_haproxy_in_front_of_a_cluster_races_players_from_two_nodes_in_one_room(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    """Two real nodes of one cluster (one PostgreSQL database, one Redis) behind the real
    HAProxy: the players of each room reach different nodes, and race together."""
    db = migrated(fresh_postgres, tmp_path)
    redis_url, prefix = deploy_redis
    node = ("--redis", redis_url, "--redis-prefix", prefix)
    with (
        Unhealthy() as sick,
        yukon_node(tmp_path / "a", db, *node) as (port_a, log_a),
        yukon_node(tmp_path / "b", db, *node) as (port_b, log_b),
        haproxy_in_front(tmp_path, {"node1": port_a, "node2": port_b, "node3": sick.port}) as (
            lb_port,
            _,
        ),
    ):
        nodes = {"node1": port_a, "node2": port_b}

        async def scenario() -> None:
            landed = [await arrive_through(lb_port, f"cl{i}", nodes) for i in range(4)]
            players = [p for p, _ in landed]
            try:
                reached = [node for _, node in landed]
                assert sorted(reached) == ["node1", "node1", "node2", "node2"]
                # Two rooms, each with a player on each node: one of its members is
                # relayed to the node the room lives on.
                by_node = {n: [p for p, m in landed if m == n] for n in nodes}
                rooms = [
                    [by_node["node1"][0], by_node["node2"][0]],
                    [by_node["node2"][1], by_node["node1"][1]],
                ]
                await asyncio.gather(*(race_a_little(room) for room in rooms))
            finally:
                for p in players:
                    await p.close()

        asyncio.run(scenario())
        # Each room lives on its host's node, one room on each: both served moves (at
        # least the host's own six; race_a_little saw every move of both answered).
        for port in nodes.values():
            assert metric(port, "yukon_moves_accepted_total") >= 6
    assert "Traceback" not in log_a.rest() + log_b.rest()


class _Seen:
    """What a real client's connection (``client.connection.Connection``) tells its app."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.statuses: list[str] = []
        self.changed = asyncio.Event()

    def link_message(self, message: Any) -> None:
        self.messages.append(message)
        self.changed.set()

    def link_status(self, status: Any) -> None:
        self.statuses.append(f"{time.monotonic():.2f} {status.kind}: {status.text}")
        self.changed.set()

    async def until(self, check: Any) -> None:
        async def wait() -> None:
            while not check():
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(wait(), WAIT)
        except TimeoutError:
            raise AssertionError(
                f"not seen within {WAIT} s; the last: {self.messages[-6:]}; {self.statuses}"
            ) from None

    def last(self, kind: type) -> Any:
        found = [m for m in self.messages if isinstance(m, kind)]
        return found[-1] if found else None


@contextlib.contextmanager
def affinity_cluster(
    db: str, redis: tuple[str, str], tmp_path: Path, *extra: str
) -> Iterator[tuple[str, tuple[int, Output], tuple[int, Output]]]:
    """Two real nodes of one cluster, ``node1`` and ``node2`` (ids as the shipped config's
    backends name them), and ``node3`` unhealthy, behind the real HAProxy with
    deploy/haproxy.cfg: the proxy's websocket URL, and each node's port and output."""
    redis_url, prefix = redis
    node = ("--redis", redis_url, "--redis-prefix", prefix, *extra)
    with (
        Unhealthy() as sick,
        yukon_node(tmp_path / "a", db, *node, "--node-id", "node1") as (port_a, log_a),
        yukon_node(tmp_path / "b", db, *node, "--node-id", "node2") as (port_b, log_b),
        haproxy_in_front(tmp_path, {"node1": port_a, "node2": port_b, "node3": sick.port}) as (
            lb_port,
            _,
        ),
    ):
        yield f"ws://127.0.0.1:{lb_port}/", (port_a, log_a), (port_b, log_b)


def test_haproxy_routes_a_following_client_to_its_rooms_node(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    """Room affinity through the real HAProxy with deploy/haproxy.cfg: bob's client reaches
    node2, joins a room of node1, is told so (``route``), reconnects with ``?node=node1``
    and the proxy sends it there; from then on its moves are node1's own, none relayed."""
    from client.connection import Connection
    from protocol.messages import Accepted, Create, Join, MoveMsg, Race, Ready, Room, Start
    from tests.server.wire import winning_line

    db = migrated(fresh_postgres, tmp_path)
    code, line = winning_line()
    with affinity_cluster(db, deploy_redis, tmp_path) as (lb, (port_a, log_a), (port_b, log_b)):

        async def scenario() -> None:
            seen_ann, seen_bob = _Seen(), _Seen()
            # Each asks the proxy for a node by id, as a client that followed a route does.
            ann = Connection(lb + "?node=node1", seen_ann, name="ann")
            bob = Connection(lb + "?node=node2", seen_bob, name="bob")
            tasks = [asyncio.create_task(c.run()) for c in (ann, bob)]
            try:
                await seen_ann.until(lambda: ann.online)
                await seen_bob.until(lambda: bob.online)
                assert metric(port_b, "yukon_connections_opened_total") == 1
                ann.send(Create(code=code))
                await seen_ann.until(lambda: seen_ann.last(Room) is not None)
                room = seen_ann.last(Room).room
                bob.send(Join(room))
                # The join is answered through node2's relay, then bob moves to node1.
                await seen_bob.until(lambda: bob.routes == 1 and bob.online)
                assert bob.node == "node1"
                await seen_bob.until(lambda: seen_bob.last(Room) is not None)
                assert metric(port_a, "yukon_routes_sent_total") == 1
                assert metric(port_a, "yukon_connections_opened_total") == 2
                bob.send(Ready(True))
                await seen_ann.until(
                    lambda: (
                        (r := seen_ann.last(Room)) is not None
                        and len(r.players) == 2
                        and all(p.ready and p.connected for p in r.players)
                    )
                )
                ann.send(Start())
                await seen_bob.until(lambda: seen_bob.last(Race) is not None)
                for seq, move in enumerate(line[:8], start=1):
                    bob.send(MoveMsg(seq, move))
                    await seen_bob.until(
                        lambda seq=seq: any(
                            isinstance(m, Accepted) and m.seq == seq for m in seen_bob.messages
                        )
                    )
            finally:
                for c in (ann, bob):
                    await c.close()
                for t in tasks:
                    with contextlib.suppress(BaseException):
                        await asyncio.wait_for(t, WAIT)

        asyncio.run(scenario())
        assert metric(port_a, "yukon_moves_accepted_total") == 8
        assert metric(port_a, "yukon_moves_relayed_total") == 0  # bob's were node1's own
        assert metric(port_b, "yukon_frames_forwarded_total") <= 1  # the join at most
    assert "Traceback" not in log_a.rest() + log_b.rest()


def test_haproxy_with_affinity_a_killed_rooms_node_loses_no_player_and_no_move(
    fresh_postgres: str, deploy_redis: tuple[str, str], tmp_path: Path
) -> None:
    """Room affinity on, through the real HAProxy: both runners are on node1, which holds
    their room (bob was routed there). ``kill -9`` node1 mid-race: both clients come back
    through the proxy (the route to node1 fails, so they ask any node), node2 takes the
    race over, each resends what node1 had accepted and not journaled, and the race ends
    with every accepted move of both stored once."""
    from client.connection import Connection
    from protocol.messages import Accepted, Create, Join, MoveMsg, Race, Ready, Result, Room, Start
    from tests.server.cluster.test_cluster import stored_results
    from tests.server.wire import winning_line

    db = migrated(fresh_postgres, tmp_path)
    code, line = winning_line()
    half = len(line) // 2
    # A test plays faster than a person: the flood bucket must not close it.
    fast = ("--msg-rate", "500", "--msg-burst", "500")
    with affinity_cluster(db, deploy_redis, tmp_path, *fast) as (lb, (_, log_a), (_, log_b)):

        async def run_to(c: Any, seen: _Seen, moves: range) -> None:
            for seq in moves:
                assert c.send(MoveMsg(seq, line[seq - 1])), (seq, seen.statuses[-3:])
                await seen.until(
                    lambda seq=seq: any(
                        isinstance(m, Accepted) and m.seq == seq for m in seen.messages
                    )
                )

        async def scenario() -> float:
            seen = {"ann": _Seen(), "bob": _Seen()}
            ann = Connection(lb + "?node=node1", seen["ann"], name="ann", backoff=(0.5, 1.0))
            bob = Connection(lb + "?node=node2", seen["bob"], name="bob", backoff=(0.5, 1.0))
            clients = {"ann": ann, "bob": bob}
            tasks = [asyncio.create_task(c.run()) for c in clients.values()]
            try:
                for name, c in clients.items():
                    await seen[name].until(lambda c=c: c.online)
                ann.send(Create(code=code))
                await seen["ann"].until(lambda: seen["ann"].last(Room) is not None)
                bob.send(Join(seen["ann"].last(Room).room))
                await seen["bob"].until(lambda: bob.routes == 1 and bob.online)
                bob.send(Ready(True))
                await seen["ann"].until(
                    lambda: (
                        (r := seen["ann"].last(Room)) is not None
                        and len(r.players) == 2
                        and all(p.ready and p.connected for p in r.players)
                    )
                )
                ann.send(Start())
                for name in clients:
                    await seen[name].until(lambda name=name: seen[name].last(Race) is not None)
                await asyncio.gather(
                    *(run_to(c, seen[n], range(1, half + 1)) for n, c in clients.items())
                )
                races = {n: len([m for m in seen[n].messages if isinstance(m, Race)]) for n in seen}
                killed = time.monotonic()
                log_a.proc.kill()  # kill -9: no goodbye, no journal flush
                # Each client comes back by itself, and gets its race as it stands.
                for n in clients:
                    await seen[n].until(
                        lambda n=n: (
                            len([m for m in seen[n].messages if isinstance(m, Race)]) > races[n]
                        )
                    )
                back = time.monotonic() - killed
                for n, c in clients.items():
                    kept = seen[n].last(Race).seq
                    assert kept <= half
                    # What the dead node accepted but never journaled, resent (4.19).
                    await run_to(c, seen[n], range(kept + 1, len(line) + 1))
                for n in clients:
                    await seen[n].until(lambda n=n: seen[n].last(Result) is not None)
                result = seen["ann"].last(Result)
                assert sorted(r.outcome for r in result.ranks) == ["won", "won"]
                return back
            finally:
                for c in clients.values():
                    await c.close()
                for t in tasks:
                    with contextlib.suppress(BaseException):
                        await asyncio.wait_for(t, WAIT)

        try:
            back = asyncio.run(scenario())
        except BaseException:  # the surviving node's log, to see why
            log_b.proc.terminate()
            print("--- node2\n" + log_b.rest())
            raise
        print(f"players back racing {back:.1f} s after the kill")
        assert back < 10.0, f"players back racing {back:.1f} s after the kill"
        stored = asyncio.run(stored_results(db, code))
        assert sorted(r.actions for r in stored) == [tuple(line), tuple(line)]
    assert "Traceback" not in log_b.rest()
