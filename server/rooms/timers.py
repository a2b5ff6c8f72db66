"""The kinds of the hub's timers: what a deadline is for, which ``Hub.tick`` dispatches on.

Each timer is ``(when, seq, kind, ref)`` on the hub's heap; ``ref`` is what the kind is
about. The values are the names the kinds always had (a log or a test may print them).
"""

from __future__ import annotations

import enum

__all__ = ["TimerKind"]


class TimerKind(enum.StrEnum):
    """What a timer is for, and (in the comment) what its ``ref`` is."""

    #: A connection that has not said hello in time is closed (ref: its connection id).
    HELLO = "hello"
    #: A wrong password's answer is due (ref: the connection).
    PASSWORD = "password"
    #: The next guess of an address's queue may be judged (ref: the address's key).
    PASSWORD_TURN = "password_turn"
    #: A room's countdown is over: the race starts (ref: the room).
    COUNTDOWN = "countdown"
    #: A room's held progress is due (ref: the room).
    PROGRESS = "progress"
    #: A ghost's next recorded moves are due (ref: the room).
    GHOST = "ghost"
    #: A race's time limit, or the public one, is reached (ref: the room).
    LIMIT = "limit"
    #: A player away past the resume window abandons (ref: the player).
    GONE = "gone"
    #: The quick-race pool is matched again, its band wider (ref: None; issue 29).
    QUICK = "quick"
