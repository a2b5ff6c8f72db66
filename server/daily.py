"""The daily deal: one deal a day (UTC) per server, from a secret nobody else holds.

The deal number is an HMAC of the date under the server's secret, so nobody can compute
tomorrow's deal, nor today's from its date; the code is revealed once the day is over.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

from protocol import GameCode, Rules
from protocol.codes import MAX_DEAL

__all__ = ["daily_code", "utc_date"]


def daily_code(secret: bytes, date: dt.date, rules: Rules) -> GameCode:
    """The game code of ``date``'s daily deal under ``rules``."""
    digest = hmac.new(secret, b"yukon-daily:" + date.isoformat().encode(), hashlib.sha256)
    deal = int.from_bytes(digest.digest()[:8], "big") % (MAX_DEAL + 1)
    return GameCode(rules, deal)


def utc_date(timestamp: float) -> dt.date:
    """The UTC calendar date of a wall-clock timestamp: days change at 00:00 UTC."""
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).date()
