"""Game codes ``YU1-<rules>-<deal>`` (spec section 7).

A code names a deal and the rules it is played under, so two players who exchange a code
play the same game. The deal part is a seven-letter base-26 number, ``A`` = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InvalidCodeError, InvalidRulesError
from .rules import Rules

__all__ = ["GameCode", "MAX_DEAL", "FORMAT_VERSION"]

FORMAT_VERSION = "YU1"
DEAL_LETTERS = 7
#: ``ZZZZZZZ``: the largest deal number a code can carry.
MAX_DEAL = 26**DEAL_LETTERS - 1


@dataclass(frozen=True, slots=True)
class GameCode:
    """A deal number and the rules it is played under."""

    rules: Rules
    deal: int

    def __post_init__(self) -> None:
        if not 0 <= self.deal <= MAX_DEAL:
            raise InvalidCodeError(f"deal number {self.deal} is outside 0..{MAX_DEAL}")

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
        if len(deal_text) != DEAL_LETTERS or not all("A" <= ch <= "Z" for ch in deal_text):
            raise InvalidCodeError(
                f"bad game code {text!r}: deal part {deal_text!r} must be"
                f" {DEAL_LETTERS} letters A-Z"
            )
        deal = 0
        for ch in deal_text:
            deal = deal * 26 + ord(ch) - 65
        return cls(rules, deal)

    @property
    def deal_text(self) -> str:
        """The seven letters of the deal number, most significant first."""
        letters = []
        n = self.deal
        for _ in range(DEAL_LETTERS):
            n, digit = divmod(n, 26)
            letters.append(chr(65 + digit))
        return "".join(reversed(letters))

    def __str__(self) -> str:
        return f"{FORMAT_VERSION}-{self.rules}-{self.deal_text}"
