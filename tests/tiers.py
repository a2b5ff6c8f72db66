"""The two tiers of the suite: what is fast, found by reading each test, and a guard for it.

``pytest -m "not slow"`` is the tier a developer runs on every change: pure tests and
tests on a fake clock, in process. Everything else is ``slow`` and runs in the full suite
(CI's). A list of slow tests kept by hand goes stale the day someone adds one, so the
split is worked out at collection from what each test uses: a test is slow when it, a
helper it calls or a fixture it asks for names something that starts a real server, a
process, a browser, a Textual app in real time or a connection to PostgreSQL or Redis
(``REAL``, below; helpers are followed into ``tests`` and ``bench``), when it runs
on the PostgreSQL side of ``db_url``, or when it is marked ``@pytest.mark.slow`` by hand
(for the few slow tests that name none of these: a long search, say). A test that names
one of them without using it for real may say ``@pytest.mark.fast``: the guard still
checks it.

Reading names can be fooled, so the fast tier is also checked while it runs (``Guard``):
under ``-m "not slow"`` a fast test that opens a socket, starts a process, or sleeps in
real time for more than ``SLEEP_LIMIT_S`` (in the project's own code, tests included)
fails with a message saying to mark it slow or to wait on the fake clock. Sleeps inside
third-party libraries (Textual's own timers, say) are theirs and not counted.
"""

from __future__ import annotations

import asyncio
import inspect
import multiprocessing.process
import socket
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

# Names whose use means a real server, process, browser, database server or socket. Each
# is either a project helper that starts one (``running_server``), a library entry point
# (``subprocess``, ``async_playwright``) or a fixture that provides one (``browser``).
REAL = frozenset(
    {
        # a real race server, its websocket clients, the HTTP side
        "running_server",
        "open_server",
        "open_client",
        "serve",
        "start_server",
        "open_connection",
        "create_connection",
        "urlopen",
        "socket",
        "ServerProcess",
        # processes: the solver's worker pool, node, haproxy, yukon itself
        "subprocess",
        "Popen",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "ProcessPoolExecutor",
        "solver_pool",
        "run_node",
        "node_binary",
        # a database (SQLite on disk, migrated, or PostgreSQL), Redis
        "db_url",
        "store",
        "postgres",
        "fresh_postgres",
        "asyncpg",
        "redis",
        "Redis",
        "redis_prefix",
        # Chromium
        "browser",
        "async_playwright",
        "chromium_path",
        # a Textual app running in real time (its own timers and render loop)
        "run_test",
        "snap_compare",
    }
)

# Libraries that talk to the world: a name bound to anything of theirs (``connect`` from
# websockets, ``asyncpg``, ``urlopen``) or an import of them in a test means real I/O.
REAL_MODULES = (
    "websockets.asyncio.client",
    "websockets.client",
    "websockets.sync",
    "asyncpg",
    "redis",
    "playwright",
    "subprocess",
    "socket",
    "urllib.request",
    "http.client",
    "multiprocessing",
    "concurrent.futures.process",
)

# A fast test may sleep this long at once (a yield to the loop, a thread's hand-off).
SLEEP_LIMIT_S = 0.005

# The packages whose sleeps count: the project's own and its tests.
OWN = ("tests", "server", "client", "protocol", "solver", "yukon", "bench")


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


# Code followed into: the tests' own helpers and the benchmarks' drivers they call.
FOLLOWED = ("tests", "bench")


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _is_ours(value: Any) -> bool:
    return _in(getattr(value, "__module__", None) or "", FOLLOWED)


def _functions_of(value: Any) -> Iterator[types.FunctionType]:
    """The Python functions behind ``value``: itself unwrapped, or a class's methods."""
    if isinstance(value, type):
        for attr in vars(value).values():
            attr = getattr(attr, "__func__", attr)
            yield from _functions_of(attr)
        return
    inner = getattr(getattr(value, "hypothesis", None), "inner_test", None)
    if inner is not None:
        value = inner
    try:
        value = inspect.unwrap(value)
    except ValueError:  # a cycle of __wrapped__
        return
    if isinstance(value, types.FunctionType):
        yield value


def _real_module_of(value: Any) -> str | None:
    """The I/O library ``value`` belongs to, if any."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
    else:
        module = getattr(value, "__module__", None) or ""
    return module if _in(module, REAL_MODULES) else None


def names_used(roots: list[Any]) -> set[str]:
    """Every global and attribute name the ``roots`` use, following the tests' own helpers
    (functions and classes defined under ``tests`` and ``bench``) wherever they lead; a
    name bound to an I/O library (``REAL_MODULES``) adds that library's name."""
    names: set[str] = set()
    seen: set[int] = set()
    todo: list[Any] = list(roots)
    while todo:
        value = todo.pop()
        for func in _functions_of(value):
            if id(func) in seen:
                continue
            seen.add(id(func))
            env = func.__globals__
            modules = [v for v in env.values() if isinstance(v, types.ModuleType) and _is_mod(v)]
            for code in _code_objects(func.__code__):
                for name in code.co_names:
                    names.add(name)
                    if _in(name, REAL_MODULES):  # import websockets.asyncio.client etc.
                        names.add("import " + name)
                    for where in (env, *(vars(m) for m in modules)):
                        found = where.get(name)
                        if found is None:
                            continue
                        real = _real_module_of(found)
                        if real is not None:
                            names.add(f"{name} (from {real})")
                        elif _is_ours(found):
                            todo.append(found)
    return names


def _is_mod(module: types.ModuleType) -> bool:
    return _in(module.__name__, FOLLOWED)


_USED = pytest.StashKey[frozenset[str]]()


def _used(item: pytest.Item) -> frozenset[str]:
    """``names_used`` by the test and every fixture it asks for (kept on the item)."""
    if _USED not in item.stash:
        roots: list[Any] = [getattr(item, "obj", None)]
        info = getattr(item, "_fixtureinfo", None)
        if info is not None:
            for name in getattr(item, "fixturenames", ()):
                for fixturedef in info.name2fixturedefs.get(name, ()):
                    roots.append(fixturedef.func)
        item.stash[_USED] = frozenset(names_used([r for r in roots if r is not None]))
    return item.stash[_USED]


def why_slow(item: pytest.Item) -> str | None:
    """Why ``item`` belongs to the slow tier, or None when nothing says it does."""
    if item.get_closest_marker("slow") is not None:
        return "marked slow"
    if item.get_closest_marker("fast") is not None:
        return None
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("db_url") == "postgresql":
        return "runs on PostgreSQL"
    fixtures = REAL & set(getattr(item, "fixturenames", ()))
    if fixtures:
        return f"uses the fixture {sorted(fixtures)[0]}"
    used = _used(item)
    real = set(REAL & used) or {n for n in used if " " in n}
    if real:
        return f"uses {sorted(real)[0]}"
    return None


# What starts long-lived processes of its own: servers (``yukon serve``, cluster nodes,
# haproxy: ``Popen``), the solver's workers. A short ``subprocess.run`` (node, ruff, a
# ``yukon`` command that exits) is not counted.
PROCESSES = frozenset(
    {
        "Popen",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "ServerProcess",
        "ProcessPoolExecutor",
        "solver_pool",
    }
)
PROCESS_MODULES = ("multiprocessing", "concurrent.futures.process")


def starts_processes(item: pytest.Item) -> bool:
    """Whether ``item`` starts long-lived processes of its own. Under ``-n``, these tests run one at
    a time on one worker (``xdist_group``), as they did before the suite ran in parallel:
    two clusters of nodes starting at once on two cores would race their own timeouts."""
    used = _used(item)
    return bool(PROCESSES & used) or any(
        n == f"import {m}" or n.endswith(f"(from {m})") for n in used for m in PROCESS_MODULES
    )
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("db_url") == "postgresql":
        return "runs on PostgreSQL"
    fixturenames = set(getattr(item, "fixturenames", ()))
    fixtures = REAL & fixturenames
    if fixtures:
        return f"uses the fixture {sorted(fixtures)[0]}"
    roots: list[Any] = [getattr(item, "obj", None)]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        for name in fixturenames:
            for fixturedef in info.name2fixturedefs.get(name, ()):
                roots.append(fixturedef.func)
    used = names_used([r for r in roots if r is not None])
    real = set(REAL & used) or {n for n in used if " " in n}
    if real:
        return f"uses {sorted(real)[0]}"
    return None


def _refuse(what: str) -> None:
    """Fail the running test. ``pytest.fail`` raises a BaseException, so no ``except
    Exception`` in the code under test can swallow it."""
    pytest.fail(
        f"a test of the fast tier (-m 'not slow') {what}: mark it @pytest.mark.slow if it "
        "needs a real server, process or socket, or wait on the fake clock "
        "(tests/tiers.py says how tests are put in a tier)"
    )


def _own_caller(depth: int) -> bool:
    frame = sys._getframe(depth + 1)
    return _in(frame.f_globals.get("__name__", ""), OWN)


class Guard:
    """While installed, sockets, processes and long sleeps fail the running test."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def _patch(self, owner: Any, name: str, new: Any) -> None:
        old = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
        had = name in owner.__dict__
        setattr(owner, name, new)

        def undo() -> None:
            if had:
                setattr(owner, name, old)
            else:
                delattr(owner, name)

        self._undo.append(undo)

    def install(self) -> None:
        real_sleep = time.sleep
        real_async_sleep = asyncio.sleep

        def sleep(seconds: float) -> None:
            if seconds > SLEEP_LIMIT_S and _own_caller(1):
                _refuse(f"sleeps {seconds} s in real time")
            real_sleep(seconds)

        def async_sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
            if delay > SLEEP_LIMIT_S and _own_caller(1):
                _refuse(f"sleeps {delay} s in real time (asyncio.sleep)")
            return real_async_sleep(delay, *args, **kwargs)

        def no_socket(what: str) -> Callable[..., Any]:
            def refuse(*args: Any, **kwargs: Any) -> Any:
                _refuse(f"{what} a socket")

            return refuse

        def no_process(*args: Any, **kwargs: Any) -> Any:
            _refuse("starts a process")

        self._patch(time, "sleep", sleep)
        self._patch(asyncio, "sleep", async_sleep)
        self._patch(socket.socket, "connect", no_socket("connects"))
        self._patch(socket.socket, "connect_ex", no_socket("connects"))
        self._patch(socket.socket, "bind", no_socket("binds"))
        self._patch(subprocess.Popen, "__init__", no_process)
        self._patch(multiprocessing.process.BaseProcess, "start", no_process)

    def remove(self) -> None:
        while self._undo:
            self._undo.pop()()
