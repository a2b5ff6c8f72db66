"""The password of a private server (``HubConfig.password``): checks in turn, a budget.

A wrong guess delays its address's next check, and checks wait for their turn, so that
guessing in parallel is no faster than one guess after another: from one address (its
queue) or from many (the server-wide budget of failures). docs/limits.md has the numbers.
"""

from __future__ import annotations

import hmac
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from protocol.messages import Error, Hello

from .effects import PasswordFailed, Send
from .shared import Part, Shared
from .state import CLOSE_POLICY, CLOSE_TRY_LATER, _Conn, _forget_oldest
from .timers import TimerKind

__all__ = ["Password"]

log = logging.getLogger("yukon.rooms")

#: The longest delay ``2 ** n`` is computed for (far above any configured maximum); a
#: bigger exponent overflows a float (OverflowError from 2.0 ** 1024).
_MAX_EXPONENT = 64


@dataclass(eq=False)
class _PasswordAddress:
    """The password checks of one address: its failures and its turn (``Password.turn``)."""

    count: int = 0
    #: When the last failure was.
    last: float = 0.0
    #: When this address's next check may be judged.
    next: float = 0.0
    #: Checks waiting for their turn, in order of arrival.
    queue: deque[_Conn] = field(default_factory=deque)
    #: A "password_turn" timer is set for this time.
    timer_at: float | None = None


class Password(Part):
    """Judges the password of each hello, in its turn; a right one goes on to ``passed``
    (the rest of the handshake), a wrong one is answered with an error and a 1008 close."""

    def __init__(self, shared: Shared, passed: Callable[[_Conn, Hello, float], None]) -> None:
        super().__init__(shared)
        self._passed = passed
        #: Password checks by address key (``turn``).
        self._pw: dict[str, _PasswordAddress] = {}
        #: The server-wide budget of wrong passwords (a token bucket), when it was last
        #: filled, and when the server-wide wait's next turn is.
        self._pw_tokens = float(self._config.password_global_failures)
        self._pw_filled: float | None = None
        self._pw_gate = 0.0
        #: Address keys that gave the right password, and when.
        self._pw_trusted: dict[str, float] = {}

    def turn(self, c: _Conn, msg: Hello, now: float) -> None:
        """Check a private server's password in its turn: an address's checks one at a time.

        Delaying only the answer to a wrong guess (as this server once did) costs nothing
        to a guesser who sends many guesses at once: the right one was welcomed at once.
        Here a check waits until its address's delay is over (a right password too), and
        checks arriving meanwhile queue behind it, so parallel guessing from one address
        is no faster than sequential. The server-wide budget (``_judge``) does the
        same for guesses from many addresses.
        """
        cfg = self._config
        st = self._pw.get(c.key)
        if st is None:
            st = self._pw[c.key] = _PasswordAddress()
            _forget_oldest(self._pw, keep=lambda s: bool(s.queue))
        if st.count and now - st.last > cfg.password_memory_s:
            st.count = 0
        c.authenticating = True  # nothing else is heard from this connection meanwhile
        if st.queue or st.next > now:
            if len(st.queue) >= cfg.password_queue or st.next - now > cfg.password_max_wait_s:
                self._busy(c)
                return
            c.refusing = True
            c.pending_hello = msg
            st.queue.append(c)
            self._wake(c.key, st)
            return
        self._judge(c, msg, st, now)

    def _wake(self, key: str, st: _PasswordAddress) -> None:
        if st.queue and st.timer_at != st.next:
            st.timer_at = st.next
            self._timer(st.next, TimerKind.PASSWORD_TURN, key)

    def queue(self, key: str, now: float) -> None:
        """An address's turn has come: judge its waiting checks while it stays its turn."""
        st = self._pw.get(key)
        if st is None:
            return
        if st.timer_at is not None and st.timer_at > now:
            return  # an older timer; the newer one comes
        st.timer_at = None
        while st.queue and st.next <= now:
            c = st.queue.popleft()
            msg = c.pending_hello
            c.pending_hello = None
            if c.closed or self._conns.get(c.id) is not c or msg is None:
                continue  # gave up waiting
            self._judge(c, msg, st, now)
        self._wake(key, st)

    def _judge(self, c: _Conn, msg: Hello, st: _PasswordAddress, now: float) -> None:
        """Compare the password (in constant time); a wrong one delays the address's next
        turn and is answered with an error and a 1008 close once that delay is over."""
        cfg = self._config
        spent = not self._budget_left(now) or self._pw_gate > now
        if not c.gated and spent and not self._trusted(c.key, now):
            # The server-wide budget of failures is spent, or checks wait for their turn
            # already (a refilled failure must not let a newcomer jump that queue): wait
            # for a server-wide turn.
            turn = max(now, self._pw_gate)
            if turn - now > cfg.password_max_wait_s:
                self._busy(c)
                return
            self._pw_gate = turn + cfg.password_global_window_s / max(
                1, cfg.password_global_failures
            )
            if turn > now:
                c.gated = True
                c.refusing = True
                c.pending_hello = msg
                st.queue.appendleft(c)  # the address waits with it: one check at a time
                st.next = max(st.next, turn)
                self._wake(c.key, st)
                return
        c.gated = False
        expected = cfg.password
        assert expected is not None
        if hmac.compare_digest((msg.password or "").encode(), expected.encode()):
            c.authenticating = c.refusing = False
            self._pw_trusted.pop(c.key, None)
            self._pw_trusted[c.key] = now
            _forget_oldest(self._pw_trusted)
            self._passed(c, msg, now)
            return
        delay = self._failed(st, now)
        st.next = now + delay
        if self._shared.node:  # the other nodes count it too (a cluster)
            self._out.append(PasswordFailed(c.key))
        given = "wrong" if msg.password else "missing"  # a client that sent none: not a guess
        log.warning("%s: %s password (%d in a row)", c.address or f"conn {c.id}", given, st.count)
        c.refusing = True
        if delay:
            self._timer(st.next, TimerKind.PASSWORD, c)
        else:
            self.refuse(c)

    def _failed(self, st: _PasswordAddress, now: float) -> float:
        """Count a failure of an address, and of the budget; the address's delay now."""
        cfg = self._config
        st.count += 1
        st.last = now
        self._pw_tokens = max(0.0, self._pw_tokens - 1.0)
        if self._pw_tokens < 1.0:  # the budget is spent: the next turn is one spacing away
            spacing = cfg.password_global_window_s / max(1, cfg.password_global_failures)
            self._pw_gate = max(self._pw_gate, now + spacing)
        over = min(st.count - cfg.password_free_failures, _MAX_EXPONENT)
        return min(2.0**over, cfg.password_max_delay_s) if over > 0 else 0.0

    def failed_elsewhere(self, key: str, now: float) -> None:
        """Another node of the cluster judged a wrong password from address ``key``: it
        counts here as if judged here (the address's delay, the budget), so that guessing
        through every node at once is no faster than through one, except that each node
        judges its own queue: an address gets at most one guess per node per turn."""
        if self._config.password is None:
            return
        st = self._pw.get(key)
        if st is None:
            st = self._pw[key] = _PasswordAddress()
            _forget_oldest(self._pw, keep=lambda s: bool(s.queue))
        if st.count and now - st.last > self._config.password_memory_s:
            st.count = 0
        self._budget_left(now)  # refill first, as a check here would
        st.next = max(st.next, now + self._failed(st, now))
        self._wake(key, st)

    def _budget_left(self, now: float) -> bool:
        """Is a failure of the server-wide budget left (refilled over its window)?"""
        cfg = self._config
        capacity = float(cfg.password_global_failures)
        if self._pw_filled is not None:
            rate = capacity / cfg.password_global_window_s
            self._pw_tokens = min(capacity, self._pw_tokens + (now - self._pw_filled) * rate)
        self._pw_filled = now
        return self._pw_tokens >= 1.0

    def _trusted(self, key: str, now: float) -> bool:
        """Did this address give the right password lately? Then it skips the server-wide
        wait (its own failures still delay it): guessers elsewhere do not lock it out."""
        since = self._pw_trusted.get(key)
        return since is not None and now - since <= self._config.password_trust_s

    def _busy(self, c: _Conn) -> None:
        """Too many checks wait already: refuse at once, without judging the password (the
        answer says nothing about it), and let the client come back later (1013)."""
        text = "too many password checks are waiting; try again in a minute"
        self._out.append(Send(c.id, Error("password_busy", text)))
        self._close(c, CLOSE_TRY_LATER, "too many password checks, try again later")

    def refuse(self, c: _Conn) -> None:
        if c.closed or self._conns.get(c.id) is not c:
            return
        text = "this server is private: the password is wrong or missing"
        self._out.append(Send(c.id, Error("password", text)))
        self._close(c, CLOSE_POLICY, "wrong password")
