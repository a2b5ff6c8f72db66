"""Player names: the check a name passes, and the keys that tell two names apart.

Stored keys (``players.name_key``, ``players.name_skeleton``) are computed here, so a
change needs a migration that recomputes them.
"""

from __future__ import annotations

import unicodedata

import disarm
import regex

from .fields import MAX_NAME, MAX_NAME_KEY, MAX_NAME_SKELETON


def normalize_name(text: str) -> str:
    """A player name, trimmed; 1-20 printable characters, none of them control characters.

    Raises ``ValueError`` with a message for the player.
    """
    name = text.strip()
    if not name:
        raise ValueError("a name needs at least one character")
    if len(name) > MAX_NAME:
        # Never cut: a name is for good, so the player chooses what to leave out (issue 28).
        raise ValueError(
            f"a name is at most {MAX_NAME} characters, not {len(name)}: nothing is cut,"
            " choose a shorter one"
        )
    for ch in name:
        if not ch.isprintable() or unicodedata.category(ch).startswith("C"):
            raise ValueError(f"a name may not contain the character U+{ord(ch):04X}")
    # Shown on boards to everyone: a name must be seen. Fillers that are letters by
    # category (U+3164, U+115F), the blank braille pattern U+2800, marks on nothing:
    # what is left of them in the skeleton (``name_skeleton``) is nothing visible.
    if not any(
        not ch.isspace() and not unicodedata.category(ch).startswith("M")
        for ch in name_skeleton(name)
    ):
        raise ValueError("a name needs at least one visible character")
    if disarm.is_zalgo(name):
        raise ValueError("a name may carry at most three marks of a kind on one character")
    # Some characters spell out to many under NFKC (U+FDFA: 18); the stored keys have room
    # for 80 and 400 (``players.name_key``, ``name_skeleton``).
    if len(name_key(name)) > MAX_NAME_KEY or len(name_skeleton(name)) > MAX_NAME_SKELETON:
        raise ValueError(f"a name is at most {MAX_NAME_KEY} characters spelled out (NFKC)")
    return name


def name_key(name: str) -> str:
    """The key under which names are unique regardless of case and of compatibility forms:
    NFKC, then full case folding (``ＡＬＩＣＥ`` = ``alice``, ``straße`` = ``STRASSE``).

    Stored (``players.name_key``): a change here needs a migration that recomputes it, as
    0006 did."""
    return unicodedata.normalize("NFKC", name).casefold()


#: Every Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt), from the
#: property itself in the ``regex`` library's tables (pinned: Unicode 17.0), not a list.
#: TR39's data leaves some of them in a skeleton (the Mongolian free variation selectors
#: U+180B..U+180D and U+180F, the Khmer inherent vowels U+17B4 and U+17B5 are marks, so
#: rule 3 of docs/protocol.md 4.1 lets them in), and a name with one inside drew like the
#: name without it (issue 28, item 14).
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}+")


def name_skeleton(name: str) -> str:
    """The key under which names that look alike are one name: the Unicode TR39 skeleton
    (``disarm.skeleton_key``, digits as TR39 has them: ``1`` and ``I`` read as ``l``,
    ``0`` as ``O``), so that a Cyrillic ``а`` passes for no Latin ``a`` on a board.
    Invisible characters have no skeleton: every default-ignorable code point is dropped
    first (``_IGNORABLE``), whatever TR39's tables say of it.

    Stored (``players.name_skeleton``): a change here (or in disarm's or regex's tables, so
    their versions are pinned) needs a migration that recomputes it, as 0006 and 0010 did."""
    return disarm.skeleton_key(_IGNORABLE.sub("", name), digit_policy="tr39")
