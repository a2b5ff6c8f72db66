"""``HubConfig``: the numbers that shape a server, in a module of its own.

Both sides of the hub read it (the session's parts through ``Shared.config``, a room
through ``Outside.config``), so it sits below both: it imports nothing of the hub, and
``room`` and ``state`` can each name it without naming the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.daily import DAILY_BUDGET_NODES, DAILY_TIME_LIMIT_S

__all__ = ["HubConfig"]


@dataclass(frozen=True)
class HubConfig:
    """The numbers that shape a server; docs/protocol.md documents each default, and
    docs/operations.md which number of the protocol each field is."""

    resume_window_s: float = 60.0
    hello_timeout_s: float = 10.0
    countdown_s: float = 3.0
    #: Token bucket per connection: burst size and messages per second.
    bucket_capacity: float = 40.0
    bucket_rate: float = 20.0
    #: More than this many malformed messages within ``strike_window_s`` closes the connection.
    strike_limit: int = 10
    strike_window_s: float = 60.0
    max_rooms: int = 10_000
    #: Connections beyond this are closed at once with 1013 (try again later).
    max_connections: int = 10_000
    #: A daily attempt's time limit, in seconds.
    daily_time_limit: int = DAILY_TIME_LIMIT_S
    #: A player registered less than this long (seconds) before a daily attempt begins
    #: plays it as practice (``--daily-min-age``); 0: every first attempt counts.
    daily_min_age_s: float = 0.0
    #: A private server: every hello must carry this password. None: open to all.
    password: str | None = None
    #: After this many wrong passwords from one address, each further answer waits
    #: ``2 ** (failures - free)`` seconds, up to ``password_max_delay_s``, and the
    #: address's next password check waits as long: an address's checks are judged one
    #: at a time, so guessing in parallel is no faster than one guess after another.
    password_free_failures: int = 3
    password_max_delay_s: float = 30.0
    #: Failures are forgotten after this long without one.
    password_memory_s: float = 600.0
    #: Wrong passwords the whole server takes per ``password_global_window_s`` (a token
    #: bucket). Once they are spent, every check from an address that has not given the
    #: right password before waits its turn, one per ``window / failures`` seconds: many
    #: addresses guessing together are no faster than that.
    password_global_failures: int = 60
    password_global_window_s: float = 60.0
    #: A check that would wait longer than this, or that finds ``password_queue`` checks
    #: of its address already waiting, is refused at once (``password_busy``, 1013).
    password_max_wait_s: float = 60.0
    password_queue: int = 8
    #: How long an address that gave the right password skips the server-wide wait.
    password_trust_s: float = 86_400.0
    #: Per-address limits; an address is an IPv4 address or an IPv6 /64 (``limits``), and
    #: 0 means no limit. Connections open at once; beyond: close 1013.
    max_connections_per_address: int = 64
    #: Names registered (hellos with a name) per ``registration_window_s``.
    max_registrations_per_address: int = 20
    registration_window_s: float = 3600.0
    #: Rooms (daily rooms included) that players from one address created and that exist.
    max_rooms_per_address: int = 16
    #: New connections opened from one address per ``opens_window_s`` (a reconnect loop
    #: is bounded, and so are its log lines); beyond: close 1013.
    max_opens_per_address: int = 60
    opens_window_s: float = 10.0
    #: Room codes asked for (``join``, ``watch``, an invite link over HTTP) that name no
    #: open room, per address per ``room_miss_window_s``; beyond, ``too_many_guesses``
    #: without looking the code up, so guessing codes costs (issue 40, item 8).
    max_room_misses_per_address: int = 30
    room_miss_window_s: float = 600.0
    #: Daily attempts (today's practice and the archive's days) begun per player and per
    #: address per ``attempt_window_s``; beyond: ``too_many_attempts``.
    max_attempts_per_player: int = 30
    max_attempts_per_address: int = 120
    attempt_window_s: float = 3600.0
    #: ``board``/``history`` requests of one connection being answered at once; one more
    #: is refused (``too_many_queries``) rather than queued.
    max_queries_per_connection: int = 2
    #: Positions the solver may search for one hint before it answers "unknown": a fixed
    #: count, so the same position always gets the same answer (docs/solver.md, "Hints").
    hint_budget_nodes: int = 100_000
    #: Hints being worked out at once, for every player together; beyond it a hint is
    #: refused (``unavailable``) rather than queued behind them.
    hint_queue_limit: int = 32
    #: How long the ``progress`` a move produces waits for a newer one in its room
    #: (docs/protocol.md, section 4.11). 0: after every move at once, to every member.
    progress_hold_s: float = 0.1
    #: The quick-race pool (docs/protocol.md 4.26; ``yukon serve --quick-min --quick-max
    #: --quick-wait``): players a room forms with, the longest anyone waits while another
    #: waits too, and how long a room smaller than the most waits to fill.
    quick_min_players: int = 2
    quick_max_players: int = 4
    quick_max_wait_s: float = 20.0
    quick_fill_s: float = 6.0
    #: The stock of proven-winnable secret deals (``rooms.deals``, docs/protocol.md 4.3):
    #: deals kept per rule set, the solver's budget for proving one (the daily's), how many
    #: deals a room whose deal was dealt from an empty stock is dealt at most before it
    #: races unproven, the proofs out at once for the stock, how many rule sets are
    #: stocked, and those always stocked (the quick race's, ``quick.QUICK_RULES``, and the
    #: default).
    winnable_stock: int = 32
    winnable_budget_nodes: int = DAILY_BUDGET_NODES
    winnable_tries: int = 3
    winnable_in_flight: int = 2
    winnable_rule_sets: int = 8
    winnable_rules: tuple[str, ...] = ("C",)
