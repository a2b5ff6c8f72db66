"""Commitments to secret deals: proof, after the reveal, that a deal was never switched.

When a race on a deal the server drew in secret begins, every member of the room gets
``commitment = SHA-256("<CODE>:<SALT>")`` in hex; when the code is revealed, so is the salt,
and anyone can recompute the hash (docs/rules.md section 9, docs/protocol.md). The salt (16
random bytes, 32 hex digits) keeps the commitment from being checked against guesses of the
code before the reveal. The server draws salts; this module only computes and checks, so it
stays pure.
"""

from __future__ import annotations

import hashlib
import re

from .codes import GameCode
from .errors import InvalidCodeError

__all__ = ["SALT_HEX", "commitment", "check_commitment"]

#: A salt is 16 bytes, written as 32 lower-case hexadecimal digits.
SALT_HEX = 32
_SALT = re.compile(r"[0-9a-f]{32}")


def commitment(code: GameCode | str, salt: str) -> str:
    """The lower-case hex SHA-256 of the canonical code, a colon and the salt."""
    parsed = code if isinstance(code, GameCode) else GameCode.parse(code)
    if not isinstance(salt, str) or not _SALT.fullmatch(salt):
        raise InvalidCodeError(f"a salt is {SALT_HEX} lower-case hex digits, not {salt!r}")
    return hashlib.sha256(f"{parsed}:{salt}".encode("ascii")).hexdigest()


def check_commitment(expected: str, code: GameCode | str, salt: str) -> bool:
    """Whether ``code`` and ``salt`` are what ``expected`` committed to; False for any
    malformed part (a client checks what a server sent, so nothing here raises)."""
    try:
        actual = commitment(code, salt)
    except ValueError:
        return False
    return isinstance(expected, str) and actual == expected.lower()
