"""The fast tier's rule and guard (tests/tiers.py): what they catch and what they let by."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests import tiers
from tests.server.wire import running_server

# These tests name servers, sockets and processes to see them found or refused; the guard
# (which they also test) checks that they start none of them for real.
pytestmark = pytest.mark.fast


async def _plays_on_a_real_server() -> None:
    async with running_server("sqlite://", tiers.__file__):  # type: ignore[arg-type]
        pass


async def _a_helper_of_a_helper() -> None:
    await _plays_on_a_real_server()


def _pure() -> int:
    return sum(range(10))


def test_a_helper_that_starts_a_server_is_found_through_other_helpers() -> None:
    assert "running_server" in tiers.names_used([_a_helper_of_a_helper])
    assert not tiers.REAL & tiers.names_used([_pure])


def test_a_name_bound_to_an_io_library_is_found() -> None:
    def runs_a_process() -> None:
        subprocess.run(["true"], check=True)

    def connects() -> None:
        socket.create_connection(("127.0.0.1", 9))

    assert "subprocess (from subprocess)" in tiers.names_used([runs_a_process])
    assert "socket (from socket)" in tiers.names_used([connects])


def test_servers_started_in_processes_are_told_from_short_commands() -> None:
    def serves() -> None:
        subprocess.Popen(["yukon", "serve"])

    def asks_node() -> None:
        subprocess.run(["node", "--version"], check=True)

    assert tiers.PROCESSES & tiers.names_used([serves])
    assert not tiers.PROCESSES & tiers.names_used([asks_node])


@pytest.fixture
def guard() -> Iterator[tiers.Guard]:
    g = tiers.Guard()
    g.install()
    try:
        yield g
    finally:
        g.remove()


def test_the_guard_fails_a_real_sleep_and_lets_a_yield_by(guard: tiers.Guard) -> None:
    time.sleep(0)
    with pytest.raises(pytest.fail.Exception, match=r"mark it @pytest\.mark\.slow"):
        time.sleep(1)


async def test_the_guard_fails_an_asyncio_sleep_and_lets_a_yield_by(guard: tiers.Guard) -> None:
    await asyncio.sleep(0)
    with pytest.raises(pytest.fail.Exception, match="fake clock"):
        await asyncio.sleep(1)


def test_the_guard_fails_a_socket_and_a_process(guard: tiers.Guard) -> None:
    with socket.socket() as s, pytest.raises(pytest.fail.Exception, match="binds a socket"):
        s.bind(("127.0.0.1", 0))
    with pytest.raises(pytest.fail.Exception, match="starts a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)


def test_the_guard_undoes_what_it_patched() -> None:
    before = (time.sleep, asyncio.sleep, socket.socket.bind, subprocess.Popen.__init__)
    g = tiers.Guard()
    g.install()
    assert time.sleep is not before[0]
    g.remove()
    after = (time.sleep, asyncio.sleep, socket.socket.bind, subprocess.Popen.__init__)
    assert after == before
