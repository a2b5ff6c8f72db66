"""Game codes ``YU1-<rules>-<deal>`` (docs/rules.md section 9).

A code names a deal and the rules it is played under, so two players who exchange a code
play the same game. The deal part is either seven letters, a base-26 *deal number*
(``A`` = 0) that players choose and share on purpose, or 26 characters of base32, the
128-bit *seed* of a deal the server drew in secret. The two are told apart by length;
only a seeded deal can stay secret while its cards are played (docs/fairness.md).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from .errors import InvalidCodeError, InvalidRulesError
from .rules import Rules
from .shuffle import SEED_BYTES

__all__ = ["GameCode", "MAX_DEAL", "FORMAT_VERSION", "DEAL_LETTERS", "SEED_CHARS", "MAX_CODE"]

FORMAT_VERSION = "YU1"
DEAL_LETTERS = 7
#: ``ZZZZZZZ``: the largest deal number a code can carry.
MAX_DEAL = 26**DEAL_LETTERS - 1
#: A seed's characters: 128 bits in RFC 4648 base32 (``A``-``Z``, ``2``-``7``), unpadded.
SEED_CHARS = 26
_BASE32 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
#: The longest code there is (``YU1-MEGT-`` and a seed): what fields that carry one allow.
MAX_CODE = len(FORMAT_VERSION) + 1 + 4 + 1 + SEED_CHARS


@dataclass(frozen=True, slots=True)
class GameCode:
    """A deal, numbered (``int``) or seeded (16 ``bytes``), and the rules it is played
    under."""

    rules: Rules
    deal: int | bytes

    def __post_init__(self) -> None:
        if isinstance(self.deal, bytes):
            if len(self.deal) != SEED_BYTES:
                raise InvalidCodeError(f"a deal seed is {SEED_BYTES} bytes, not {len(self.deal)}")
        elif not 0 <= self.deal <= MAX_DEAL:
            raise InvalidCodeError(f"deal number {self.deal} is outside 0..{MAX_DEAL}")

    @property
    def seeded(self) -> bool:
        """The deal is a server's secret seed, not a number anyone can enumerate."""
        return isinstance(self.deal, bytes)

    @classmethod
    def parse(cls, text: str) -> GameCode:
        """Parse ``YU1-C-AAAAAAB``; lower case is accepted. Errors name the bad part."""
        if not isinstance(text, str):
            raise InvalidCodeError(f"a game code is text, not {type(text).__name__}")
        raw = text.strip()
        if not raw.isascii():
            raise InvalidCodeError(
                f"bad game code {text!r}: only ASCII letters, digits and '-' belong in a code"
            )
        parts = raw.upper().split("-")
        if len(parts) != 3:
            raise InvalidCodeError(
                f"bad game code {text!r}: expected three parts like YU1-C-AAAAAAB,"
                f" found {len(parts)}"
            )
        version, rules_text, deal_text = parts
        if version != FORMAT_VERSION:
            raise InvalidCodeError(
                f"bad game code {text!r}: version {version!r} is not {FORMAT_VERSION}"
            )
        try:
            rules = Rules.parse(rules_text)
        except InvalidRulesError as exc:
            raise InvalidCodeError(f"bad game code {text!r}: rules part: {exc}") from None
        if len(deal_text) == SEED_CHARS:
            return cls(rules, _parse_seed(text, deal_text))
        if len(deal_text) != DEAL_LETTERS or not all("A" <= ch <= "Z" for ch in deal_text):
            raise InvalidCodeError(
                f"bad game code {text!r}: deal part {deal_text!r} must be"
                f" {DEAL_LETTERS} letters A-Z (a deal number) or {SEED_CHARS} characters"
                " A-Z and 2-7 (a seed)"
            )
        deal = 0
        for ch in deal_text:
            deal = deal * 26 + ord(ch) - 65
        return cls(rules, deal)

    @property
    def deal_text(self) -> str:
        """The deal part: a seed in base32, or the seven letters of the deal number, most
        significant first."""
        if isinstance(self.deal, bytes):
            return base64.b32encode(self.deal).decode("ascii").rstrip("=")
        letters = []
        n = self.deal
        for _ in range(DEAL_LETTERS):
            n, digit = divmod(n, 26)
            letters.append(chr(65 + digit))
        return "".join(reversed(letters))

    def __str__(self) -> str:
        return f"{FORMAT_VERSION}-{self.rules}-{self.deal_text}"


def _parse_seed(text: str, deal_text: str) -> bytes:
    """The 16 bytes of a 26-character base32 deal part, which must be canonical: the last
    character carries 3 bits and 2 zero bits, so exactly one spelling names each seed."""
    bad = sorted(set(deal_text) - _BASE32)
    if bad:
        raise InvalidCodeError(
            f"bad game code {text!r}: a seed's characters are A-Z and 2-7, not {''.join(bad)!r}"
        )
    try:
        seed = base64.b32decode(deal_text + "======")
    except binascii.Error as exc:  # pragma: no cover - every 26-character base32 decodes
        raise InvalidCodeError(f"bad game code {text!r}: {exc}") from None
    if base64.b32encode(seed).decode("ascii").rstrip("=") != deal_text:
        raise InvalidCodeError(
            f"bad game code {text!r}: a seed's last character is one of A E I M Q U Y 4"
            f" (it carries 3 bits), not {deal_text[-1]!r}"
        )
    return seed
