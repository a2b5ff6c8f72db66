"""``yukon`` under cProfile, profiling only a window the caller chooses by signals.

``python -m bench.profiled OUT serve ...`` runs ``yukon serve ...``; SIGUSR1 starts a fresh
profile of the event loop's thread (its CPU time: waiting for a core shared with other
processes is not charged), SIGUSR2 stops it and writes it to ``OUT`` (pstats).
``bench.load --nodes N --profile FILE`` profiles each node so over the measured window
only: what a node does per second (leases, sweeps, journal groups) shows against its
moves, without the start-up, the hellos and the rooms forming, and a node killed at the
end (its graceful stop is not waited for) has written its profile already.
"""

from __future__ import annotations

import cProfile
import signal
import sys
import time
from types import FrameType


def main() -> int:
    out, rest = sys.argv[1], sys.argv[2:]
    profile: list[cProfile.Profile] = []

    def start(_sig: int, _frame: FrameType | None) -> None:
        profile.clear()
        profile.append(cProfile.Profile(time.thread_time))
        profile[0].enable()

    def dump(_sig: int, _frame: FrameType | None) -> None:
        if profile:
            profile[0].disable()
            profile[0].dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, dump)
    sys.argv = ["yukon", *rest]
    from yukon.cli import main as yukon

    return yukon()


if __name__ == "__main__":
    raise SystemExit(main())
