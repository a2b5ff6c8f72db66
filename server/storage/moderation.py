"""The operator's store (issue 40, item 5; docs/fairplay.md): marks, account states,
renames, voids, the review queue and the audit log, behind ``yukon mod``.

Every action is one transaction that writes one ``moderation_log`` row (who, when, what,
to whom, why, and in ``details`` what it changed) together with the state it changes, and
an undo is one more action: a row naming the entry it undoes (migration 0014 explains
the tables). Refusals (an unknown name, a mark already in force, an entry undone before)
are ``ModerationError``, with a stable ``code`` and a sentence for the operator; nothing
is written then.

Like ``SqlStore``: an async engine, keyword-only arguments, plain dataclasses out, times
in and out as wall-clock seconds. What a mark does to a running server (boards, the
pool, sockets) is the server's part; this store keeps the record. What it does to
ratings is this store's: an ``engine`` or ``boost`` mark refunds the opponents in its own
transaction and its unmark or undo takes the refunds back (``moderation_refunds``), and
``refunds`` says what a mark would give back now (``server.storage.refunds``).

The store is a facade over its parts, one module each: ``moderation_base`` (the refusal,
the dataclasses, the audit log), ``moderation_reads`` (the queue, an account, refunds),
``moderation_actions`` (every action but undo), ``moderation_undo``, and
``moderation_refunds`` (refunds read, given and taken back).
"""

from __future__ import annotations

from .moderation_base import (
    MARK_KINDS,
    QUEUE_KINDS,
    Account,
    LogEntry,
    Mark,
    ModerationError,
    QueueItem,
    Run,
    iso,
)
from .moderation_base import (
    _utc as _utc,
)
from .moderation_reads import ModerationReads
from .moderation_undo import ModerationUndo

__all__ = [
    "ModerationStore",
    "ModerationError",
    "Mark",
    "LogEntry",
    "QueueItem",
    "Run",
    "Account",
    "MARK_KINDS",
    "QUEUE_KINDS",
    "iso",
]


class ModerationStore(ModerationReads, ModerationUndo):
    """The moderation tables of one database: the reads, the actions and their undo on one
    engine. ``SqlStore`` could inherit it as it does
    ``RatingsStore`` (it only needs ``engine``); ``yukon mod`` builds one on an engine."""
