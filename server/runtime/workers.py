"""Worker processes for the solver: started with ``spawn``, and never left behind.

The solver holds the GIL while it runs (its C search too), so the server runs it in
worker processes (``server.runtime.connection`` for hints). This module is what such a worker
imports besides ``protocol``: standard library only, so a worker starts quickly.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = ["worker_init", "solver_pool", "real_stderr"]


def worker_init(parent: int) -> None:
    """Run first in every worker process.

    Ctrl-C in a terminal reaches the whole process group: the server stops its workers
    itself, so a worker ignores it (no traceback of its own). A server killed outright
    (``kill -9``, the OOM killer) cannot stop its workers, and an idle worker never
    notices on its own: it would wait for work forever. So each one watches its parent
    and leaves when it is gone. ``parent`` is the server's pid, taken by the server: a
    worker that asked ``os.getppid()`` itself would, if the server died while the worker
    was still starting, get its new parent (init) and wait for it forever.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def solver_pool(workers: int = 1) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, each started on first use with ``spawn`` (a fresh
    interpreter that shares no threads, sockets or event loop with the server)."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=worker_init,
        initargs=(os.getpid(),),
    )


@contextlib.contextmanager
def real_stderr() -> Iterator[None]:
    """Starting a worker process needs ``sys.stderr`` to have a file descriptor (the
    multiprocessing resource tracker inherits it). A Textual app in this same process
    (``yukon play --local``) swaps in a stream without one: use the real stderr meanwhile."""
    current = sys.stderr
    try:
        usable = current is not None and current.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable or sys.__stderr__ is None:
        yield
        return
    sys.stderr = sys.__stderr__
    try:
        yield
    finally:
        sys.stderr = current
