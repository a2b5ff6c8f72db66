"""``yukon play`` in a real terminal: tmux runs it, the test presses keys and reads the screen.

Skipped where tmux is missing. The embedded server (``--local``) keeps its SQLite database
and the client its token in directories of the test's own (XDG variables).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from yukon.cli import main

T = TypeVar("T")
TMUX = shutil.which("tmux")
ROOT = Path(__file__).resolve().parent.parent.parent


class Terminal:
    """One tmux session of 80x24 running a command."""

    def __init__(self, name: str, command: str, env: dict[str, str]) -> None:
        assert TMUX is not None
        self.name = name
        self.env = env
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        shell = f"env {exports} {command}; echo EXIT=$?; sleep 30"
        self._tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", shell)

    def _tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, *args], capture_output=True, text=True, timeout=10)
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        for key in keys:
            self._tmux("send-keys", "-t", self.name, key)
            time.sleep(0.05)  # a person's pace; what follows waits for the screen

    def _until(self, found: Callable[[str], T | None], what: str, timeout: float) -> T:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if (result := found(screen)) is not None:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} never showed; the screen:\n{screen}")
            time.sleep(0.05)

    def wait_for(self, *texts: str, timeout: float = 15.0) -> str:
        """The first screen that shows every one of ``texts``: a screen caught while the
        app redraws in parts (the new body under the old footer) is not yet the screen."""
        return self._until(
            lambda screen: screen if all(t in screen for t in texts) else None,
            " and ".join(map(repr, texts)),
            timeout,
        )

    def wait_match(self, pattern: str, timeout: float = 15.0) -> re.Match[str]:
        """The first match of ``pattern`` on the screen (a line still being drawn does not
        match a pattern that ends where the line does)."""
        return self._until(lambda screen: re.search(pattern, screen), repr(pattern), timeout)

    def close(self) -> None:
        self._tmux("kill-session", "-t", self.name)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    if TMUX is None:
        pytest.skip("tmux is not installed")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    command = f"{shlex.quote(sys.executable)} -m yukon play --local --name Xavier"
    term = Terminal(f"yukon-test-{os.getpid()}-{tmp_path.name[-8:]}", command, env)
    try:
        yield term
    finally:
        term.close()


def test_play_local_in_a_real_terminal(terminal: Terminal, tmp_path: Path) -> None:
    terminal.wait_for("Join or watch a room")
    terminal.wait_for("Xavier @ your own server")  # registered on the embedded server

    terminal.keys("d")  # today's daily deal, alone
    terminal.wait_for("Start now?")
    terminal.keys("y")
    # The race's screen, footer and all (under load a capture caught the race's body above
    # the lobby's footer, not yet redrawn: CI, 2026-12-06).
    terminal.wait_for("Standings", "daily", "Xavier (you)", "1-7 pick")

    terminal.keys("1")
    terminal.wait_for("holding")
    terminal.keys("Escape")
    terminal.wait_for("1-7 pick")  # (an Esc right before a key would make it alt+key)
    terminal.keys("r")
    terminal.wait_for("Resign this race?")
    terminal.keys("y")
    terminal.wait_for("Your race is over (resigned)", "attempt 1")

    terminal.keys("l")
    terminal.wait_for("New room")
    terminal.keys("q")
    screen = terminal.wait_for("EXIT=0")
    assert "Traceback" not in screen
    assert (tmp_path / "data" / "yukon" / "local.db").exists()
    saved = (tmp_path / "config" / "yukon" / "tokens.json").read_text()
    assert '"local"' in saved and "Xavier" in saved


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--name", "   "], "yukon play: --name: a name needs at least one character"),
        # Links that cannot be a room's (client/invite.py; more in test_invite.py). A
        # server's page (http://HOST:PORT/) is that server since issue 42.
        (["play", "http://example.org/r/K7WQM/x"], "yukon play: http://example.org/r/K7WQM/x is"),
        (
            ["play", "https://example.org/r/K7WQ"],
            "yukon play: https://example.org/r/K7WQ: 'K7WQ' is",
        ),
        (["play", "ftp://example.org/r/K7WQM"], "yukon play: ftp://example.org/r/K7WQM: a ftp://"),
        (["play", "http://example.org:x/r/K7WQM"], "yukon play: http://example.org:x/r/K7WQM: the"),
        (["play", "--local", "example.org/r/K7WQM"], "yukon play: --local starts a server of"),
        (["play", "--local", "http://h:1/#token=t0k"], "yukon play: --local starts a server of"),
        (["play", "--name", "bob", "http://h:1/#token=t0k"], "yukon play: a name's link (#tok"),
        (["play", "--cafile", "/no/such.pem"], "yukon play: --cafile: /no/such.pem is not a file"),
    ],
)
def test_play_refuses_bad_arguments_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_play_an_invite_link_in_a_real_terminal(tmp_path: Path) -> None:
    """``yukon serve``, a host's ``yukon play`` that shows its room's link, and a second
    ``yukon play LINK`` that goes straight into that room, each in its own process."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "yukon", "serve", "--port", "0", "--solver-processes", "0"],
            stderr=out,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    terms: list[Terminal] = []
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"listening on (ws://\S+)", log.read_text())):
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        address = found.group(1)

        def player(name: str, target: str) -> Terminal:
            env = {
                "XDG_CONFIG_HOME": str(tmp_path / name / "config"),
                "XDG_DATA_HOME": str(tmp_path / name / "data"),
                "PYTHONPATH": str(ROOT),
                "TERM": "xterm-256color",
                "LANG": os.environ.get("LANG", "C.UTF-8"),
            }
            command = f"{shlex.quote(sys.executable)} -m yukon play {target} --name {name}"
            term = Terminal(f"yukon-test-{os.getpid()}-{tmp_path.name[-8:]}-{name}", command, env)
            terms.append(term)
            return term

        ann = player("Ann", address)
        ann.wait_for("Join or watch a room")
        ann.keys("n")
        link = ann.wait_match(r"Invite link (http://\S+/r/([A-Z0-9]{5}))\s")
        assert link.group(1) == f"http://{address.removeprefix('ws://')}/r/{link.group(2)}"

        bob = player("Bob", link.group(1))
        bob.wait_for("Bob (you)", f"Room {link.group(2)}", "space ready")
        ann.wait_for("Bob joined")
        bob.keys("C-q")
        screen = bob.wait_for("EXIT=0")
        assert "Traceback" not in screen
    finally:
        for term in terms:
            term.close()
        server.terminate()
        server.wait(timeout=10)


def _player_env(home: Path) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }


def test_play_where_nothing_answers_says_so_at_once(tmp_path: Path) -> None:
    """Issue 42: ``yukon play ADDRESS`` with no server behind it, the first time (no name
    yet): the screen says nothing answers there, not a lobby and a name box; an invite
    link to such an address says its room can't be reached."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    python = shlex.quote(sys.executable)
    term = Terminal(
        f"yukon-test-{os.getpid()}-{tmp_path.name[-8:]}-none",
        f"{python} -m yukon play 127.0.0.1:{port}",
        _player_env(tmp_path / "a"),
    )
    try:
        screen = term.wait_for("Nothing answers", f"127.0.0.1:{port}: connection refused")
        assert "Your name" not in screen and "Others see this name" not in screen, screen
        term.keys("q")
        assert "Traceback" not in term.wait_for("EXIT=0")
    finally:
        term.close()
    link = Terminal(
        f"yukon-test-{os.getpid()}-{tmp_path.name[-8:]}-link",
        f"{python} -m yukon play http://127.0.0.1:{port}/r/K7WQM",
        _player_env(tmp_path / "b"),
    )
    try:
        screen = link.wait_for("Room K7WQM can't be reached", "connection refused")
        assert "Your name" not in screen, screen
    finally:
        link.close()


def test_play_the_http_address_the_server_logs(tmp_path: Path) -> None:
    """``yukon serve`` logs the http:// address to open (and that it is public);
    ``yukon play`` given that very address plays on that server."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "yukon", "serve", "--port", "0", "--solver-processes", "0"],
            stderr=out,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    term: Terminal | None = None
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"open (http://\S+/) in a browser", log.read_text())):
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        assert "public: anyone who reaches it may play" in log.read_text()
        page = found.group(1)
        command = f"{shlex.quote(sys.executable)} -m yukon play {page} --name Wendy"
        term = Terminal(
            f"yukon-test-{os.getpid()}-{tmp_path.name[-8:]}-http", command, _player_env(tmp_path)
        )
        term.wait_for("Wendy @", "Join or watch a room")
        term.keys("C-q")
        assert "Traceback" not in term.wait_for("EXIT=0")
    finally:
        if term is not None:
            term.close()
        server.terminate()
        server.wait(timeout=10)
