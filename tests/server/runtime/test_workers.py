"""The solver's worker processes (server/runtime/workers.py): they ignore Ctrl-C, which the server
handles, and they do not outlive a server killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server.runtime.workers import solver_pool

ROOT = Path(__file__).resolve().parents[3]

#: A parent that starts a worker, says its pid, and dies of SIGKILL, which gives it no
#: chance to stop the worker.
PARENT = """
import os, signal, sys
from server.runtime.workers import solver_pool
pool = solver_pool(1)
print(pool.submit(os.getpid).result(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


#: The same, but the parent dies at once, while its worker is still starting (before the
#: worker has run a line of its own): the worker must not take its new parent for its own.
EARLY = """
import os, signal
from server.runtime.workers import solver_pool
pool = solver_pool(1)
pool.submit(os.getpid)
print(*pool._processes, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its entry waits to be reaped


def test_a_worker_ignores_ctrl_c() -> None:
    with solver_pool(1) as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
        assert pool.submit(os.getpid).result() != os.getpid()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("script", [PARENT, EARLY], ids=["started", "still starting"])
def test_a_worker_leaves_when_its_server_is_killed(script: str) -> None:
    parent = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    (worker,) = (int(pid) for pid in parent.stdout.split())
    try:
        for _ in range(200):  # the worker looks for its parent once a second
            if not alive(worker):
                break
            time.sleep(0.05)
        assert not alive(worker), "a solver worker outlived its server"
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
