"""The same work at different duty cycles: what this machine charges a process for idling.

Run from the repository root::

    python -m bench.duty [--cpu 0] [--seconds 3] [--rounds 3]

A race node at human pace does a little work per move and then waits for the next one.
On a virtual machine the CPU time of that little work depends on how long the core was
idle (or ran another process) before it: caches and branch predictors go cold, an idle
virtual CPU is halted and woken by the host. So a node serving a third of the moves (one
of three) costs more CPU per move than one serving them all, with the very same code and
calls (docs/performance.md, "What the machine charges for three processes"). This bench
shows that cost without any server: a fixed chunk of msgpack work (about what a move's
decode and encode cost) run back to back, then with a sleep after each chunk, and the
same chunk in three processes sharing one core, each sleeping three times as long as the
one process did (the same work per second on the core, spread over three processes, as
``bench.load --nodes 3`` spreads its moves). It prints the CPU time per chunk (the
process's own, waiting for the core not counted), medians of ``--rounds``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import msgpack

#: A move-sized message: what the chunk decodes and encodes.
MESSAGE = {"t": "move", "seq": 5, "move": "AD>5"}
#: Decodes and encodes per chunk: about 100-300 us of CPU on the machines seen here.
ROUNDS_PER_CHUNK = 150


def chunk() -> int:
    """A fixed amount of work."""
    total = 0
    for _ in range(ROUNDS_PER_CHUNK):
        total += len(msgpack.unpackb(msgpack.packb(MESSAGE)))
    return total


def cpu_per_chunk(gap_s: float, seconds: float) -> float:
    """Run chunks for ``seconds`` of wall time, sleeping ``gap_s`` after each: the CPU
    time per chunk, in microseconds."""
    n = 0
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    while time.perf_counter() - wall0 < seconds:
        chunk()
        n += 1
        if gap_s:
            time.sleep(gap_s)
    return (time.thread_time() - cpu0) / n * 1e6


def worker(cpu: int, gap_s: float, seconds: float, count: int) -> list[float]:
    """``count`` processes on ``cpu`` at once, each running chunks with ``gap_s`` sleeps:
    each one's CPU per chunk."""
    code = (
        "import sys; from bench.duty import cpu_per_chunk;"
        f" print(cpu_per_chunk({gap_s!r}, {seconds!r}))"
    )
    procs = [
        subprocess.Popen(
            ["taskset", "-c", str(cpu), sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        for _ in range(count)
    ]
    return [float(p.communicate()[0]) for p in procs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", type=int, default=0, help="the core every process runs on (0)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; core {args.cpu}")
    cases = [
        ("one process, back to back", 0.0, 1),
        ("one process, 1 ms sleep after each chunk", 0.001, 1),
        ("three processes, 3 ms sleep after each (the same work per second)", 0.003, 3),
        ("one process, 3 ms sleep after each (a third of the work per second)", 0.003, 1),
        ("one process, 10 ms sleep after each", 0.010, 1),
    ]
    results: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for _ in range(args.rounds):  # interleaved: the machine drifts between cases
        for name, gap, count in cases:
            results[name].append(statistics.median(worker(args.cpu, gap, args.seconds, count)))
    base = statistics.median(results[cases[1][0]])
    for name, _, _ in cases:
        us = statistics.median(results[name])
        runs = ", ".join(f"{x:.1f}" for x in results[name])
        print(f"  {name:70} {us:7.1f} us per chunk ({runs}); {us / base:.2f} x the 1 ms case")
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
