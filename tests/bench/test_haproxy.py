"""``bench.haproxy``: deploy/haproxy.cfg turned into a loopback config changes only the
addresses, and the real HAProxy accepts it and passes a request to a node."""

from __future__ import annotations

import http.server
import os
import re
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.haproxy import HAPROXY_CFG, Balancer, haproxy_binary, loopback_config, server_names


def needed_haproxy() -> str:
    path = haproxy_binary()
    if path is None:
        message = "haproxy is not installed: apt-get install haproxy"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def test_the_shipped_config_names_its_nodes_as_the_compose_file_does() -> None:
    names = server_names()
    assert names[:3] == ["node1", "node2", "node3"], names


def test_only_the_addresses_change() -> None:
    shipped = HAPROXY_CFG.read_text()
    ports = {name: 40000 + k for k, name in enumerate(server_names())}
    text = loopback_config(8000, ports)
    assert re.findall(r"(?m)^\s+bind\s+(\S+)", text) == ["127.0.0.1:8000"]
    for name, port in ports.items():
        lines = re.findall(rf"(?m)^\s+server\s+{name}\s+(\S+)", text)
        assert lines and set(lines) == {f"127.0.0.1:{port}"}, name
        # As many lines name it as in the shipped file: its own backend and the backups.
        assert len(lines) == len(re.findall(rf"(?m)^\s+server\s+{name}\s", shipped))

    def words(t: str) -> list[list[str]]:
        out = []
        for line in t.splitlines():
            w = line.split("#", 1)[0].split()
            if w and w[0] == "server":
                w[2] = "ADDR"
            elif w and w[0] == "bind":
                w[1] = "ADDR"
            out.append(w)
        return out

    assert words(text) == words(shipped)


def test_nodes_a_run_does_not_have_are_left_out_only_when_asked() -> None:
    with pytest.raises(ValueError, match="no address for the config's server node3"):
        loopback_config(8000, {"node1": 1, "node2": 2})
    text = loopback_config(8000, {"node1": 1}, drop_others=True)
    assert server_names(text) == ["node1"]
    assert "backend node_node2" in text  # ?node=node2 still has a backend: node1, its backup
    with pytest.raises(ValueError, match="no server node9"):
        loopback_config(8000, {"node9": 1}, drop_others=True)


def test_haproxy_accepts_the_loopback_config_of_one_two_and_three_nodes(tmp_path: Path) -> None:
    haproxy = needed_haproxy()
    names = server_names()
    for n in (1, 2, 3):
        config = tmp_path / f"haproxy-{n}.cfg"
        ports = {name: 40000 + k for k, name in enumerate(names[:n])}
        config.write_text(loopback_config(8000, ports, drop_others=True))
        result = subprocess.run(
            [haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stdout + result.stderr


class Named:
    """An HTTP server on loopback that answers every GET 200 with its name: a stand-in
    node, to see which one a request reached."""

    def __init__(self, name: str) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = name.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def two_nodes() -> Iterator[dict[str, Named]]:
    nodes = {name: Named(name) for name in ("node1", "node2")}
    try:
        yield nodes
    finally:
        for node in nodes.values():
            node.close()


def test_the_balancer_runs_the_shipped_config_and_routes_node_to_its_node(
    tmp_path: Path, two_nodes: dict[str, Named]
) -> None:
    """The real HAProxy, started as bench.load starts it: ready, ``?node=ID`` reaches node
    ``ID`` every time, and it is stopped at the end."""
    needed_haproxy()
    balancer = Balancer(tmp_path, {name: n.port for name, n in two_nodes.items()}, cpus={0})
    try:

        def get(path: str) -> str:
            url = f"http://127.0.0.1:{balancer.port}{path}"
            with urllib.request.urlopen(url, timeout=10) as response:
                return str(response.read().decode())

        for name in ("node1", "node2", "node2", "node1"):
            assert get(f"/?node={name}") == name
        assert {get("/") for _ in range(4)} <= {"node1", "node2"}
    finally:
        balancer.stop()
    assert balancer.proc.returncode is not None
