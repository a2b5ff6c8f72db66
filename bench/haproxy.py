"""The shipped load balancer config, ``deploy/haproxy.cfg``, run for real on loopback.

The compose file (``docker-compose.cluster.yml``) runs HAProxy with ``deploy/haproxy.cfg``
in front of nodes named ``node1``, ``node2``... on Docker's network. ``bench.load --nodes
N`` and ``tests/test_deploy.py`` run the same file with the real ``haproxy`` binary in
front of real nodes on loopback: :func:`loopback_config` changes only the addresses (the
frontend's ``bind``, each ``server NAME ADDRESS``), so every rule the file has (leastconn,
the health checks, the per-address limit, the routing of ``?node=ID`` to node ``ID``) is
the one measured and tested. A node's id is its server's name: a node started with
``--node-id node2`` is the one the file's ``server node2`` lines stand for.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
#: Where Debian's package puts it (``/usr/sbin`` is not on every user's PATH).
HAPROXY_PATHS = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")

_SERVER = re.compile(r"(?m)^(\s+server\s+)(\S+)(\s+)(\S+)")


def haproxy_binary() -> str | None:
    """The ``haproxy`` executable, or None when it is not installed."""
    found = shutil.which("haproxy")
    if found is not None:
        return found
    for path in HAPROXY_PATHS:
        if shutil.which(path) is not None:
            return path
    return None


def server_names(text: str | None = None) -> list[str]:
    """The names of the ``server`` lines of the config, each once, in their order: the
    node ids the file routes to."""
    names: list[str] = []
    for match in _SERVER.finditer(HAPROXY_CFG.read_text() if text is None else text):
        if match.group(2) not in names:
            names.append(match.group(2))
    return names


def loopback_config(
    port: int,
    backends: dict[str, int],
    text: str | None = None,
    *,
    drop_others: bool = False,
) -> str:
    """deploy/haproxy.cfg (or ``text``) as it is, but listening on 127.0.0.1:``port`` and
    sending to the node named ``name`` at 127.0.0.1:``backends[name]``, on every line that
    names that server (a node's own backend and the backends it backs up alike): only
    the addresses change. With ``drop_others``, the ``server`` lines of nodes not in
    ``backends`` are left out (a bench of 1 or 2 nodes against a file that names 3);
    otherwise every server the file names must be given. ``ValueError`` if the file has
    no ``bind`` or names no server ``backends`` gives."""
    text = HAPROXY_CFG.read_text() if text is None else text
    text, count = re.subn(r"(?m)^(\s+bind\s+)\S+", rf"\g<1>127.0.0.1:{port}", text)
    if count == 0:
        raise ValueError("the HAProxy config has no bind line")
    names = server_names(text)
    missing = [name for name in backends if name not in names]
    if missing:
        raise ValueError(f"the HAProxy config has no server {', '.join(missing)}")
    others = [name for name in names if name not in backends]
    if others and not drop_others:
        raise ValueError(f"no address for the config's server {', '.join(others)}")

    def address(match: re.Match[str]) -> str:
        name = match.group(2)
        return f"{match.group(1)}{name}{match.group(3)}127.0.0.1:{backends[name]}"

    lines = []
    for line in text.splitlines(keepends=True):
        match = _SERVER.match(line)
        if match is not None and match.group(2) not in backends:
            continue  # a node this run does not have (drop_others)
        lines.append(_SERVER.sub(address, line))
    return "".join(lines)


class Balancer:
    """The real HAProxy with :func:`loopback_config`, its log (stdout and stderr, the
    config's ``log stdout``) in ``workdir/haproxy.log``. Started pinned to ``cpus`` (with
    ``taskset``, so that it sizes its threads to them), ready once its port accepts a
    connection and a ``GET /healthz`` through it is answered 200; ``stop`` in a
    ``finally``: nothing is left."""

    def __init__(
        self,
        workdir: Path,
        backends: dict[str, int],
        *,
        cpus: set[int] | None = None,
        timeout: float = 30.0,
    ) -> None:
        binary = haproxy_binary()
        if binary is None:
            raise RuntimeError("haproxy is not installed (apt-get install haproxy)")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(loopback_config(self.port, backends, drop_others=True))
        self.log_path = workdir / "haproxy.log"
        argv = [binary, "-db", "-f", str(self.config)]
        taskset = shutil.which("taskset")
        if cpus and taskset is not None:
            argv[:0] = [taskset, "-c", ",".join(str(c) for c in sorted(cpus))]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=workdir
            )
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        problem = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited {self.proc.returncode}:\n{self.log()}")
            try:
                url = f"http://127.0.0.1:{self.port}/healthz"
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
                    problem = f"/healthz answered {response.status}"
            except (OSError, urllib.error.URLError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            time.sleep(0.1)
        raise RuntimeError(f"haproxy did not get ready ({problem}):\n{self.log()}")

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-4000:]
        return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: a hard stop, open tunnels closed at once
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
