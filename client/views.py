"""Short texts drawn from the session: a result's headline, a names list, a rating, its
change, a daily streak, the standings of a race (pure; re-exported by state.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from protocol.messages import PlayerProgress, Progress, Result
from protocol.times import format_ms

from .race_board import RaceBoard

_OUTCOME_WORDS = {"timeout": "out of time"}


def names_list(names: Sequence[str]) -> str:
    """Names as a sentence lists them: ``bob``, ``bob and carol``, ``bob, carol and dan``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def headline(result: Result, me: str | None) -> tuple[str, str]:
    """How the race went for ``me``, in one line, and its kind (``good``, ``info``), from my
    own entry of ``result.ranks`` (docs/protocol.md 4.12, "The headline"): a win says its
    time and place, a hinted win says so, anything else its place and how it ended. One
    story with the ranks below it: a resign never reads as a first place."""
    ranks = result.ranks
    entry = next((r for r in ranks if r.name == me), None)
    if entry is None:
        return "The race is over", "info"
    place = f"#{entry.rank} of {len(ranks)}" if len(ranks) > 1 else ""
    if entry.outcome == "won":
        hints = " with hints" if entry.hinted else ""
        text = f"You won{hints} in {format_ms(entry.time_ms)}"
        return (f"{text}, {place}" if place else f"{text}!"), "good"
    how = _OUTCOME_WORDS.get(entry.outcome, entry.outcome)
    if not place:
        return f"Your race is over ({how})", "info"
    return f"You finished {place} ({how})", "info"


#: The errors a ``replay`` or a ``postmortem`` may get (docs/protocol.md 4.22).


@dataclass(frozen=True, slots=True)
class Standing:
    """My rating (rounded; None: no rated race yet), whether it is provisional, and my
    daily streak, now and at best (docs/protocol.md 4.27)."""

    rating: int | None = None
    provisional: bool = True
    streak: int = 0
    best_streak: int = 0


def rating_text(rating: int | None, provisional: bool) -> str:
    """``1662``, ``1662?`` (provisional), or nothing for a player without a rating."""
    return "" if rating is None else f"{rating}{'?' if provisional else ''}"


def change_text(change: int | None) -> str:
    """A race's rating change: ``+12``, ``-5``, ``±0``; nothing in an unrated race."""
    if change is None:
        return ""
    return f"+{change}" if change > 0 else f"-{-change}" if change < 0 else "±0"


def streak_text(standing: Standing | None) -> str:
    """``daily streak 3 (best 5)``; nothing before any streak (nor from an older server)."""
    if standing is None or not (standing.streak or standing.best_streak):
        return ""
    return f"daily streak {standing.streak} (best {standing.best_streak})"


def _progress_order(p: PlayerProgress) -> tuple[int, int, int]:
    """The standings' sort key: most cards home, then best score, then fastest finish
    (``sorted`` is stable: equal runners keep the server's order)."""
    finish = p.time_ms if p.time_ms is not None and p.state == "won" else 1 << 62
    return (-p.foundations, -p.score, finish)


def standings(
    progress: Progress | None, race: RaceBoard | None, me: str | None
) -> Sequence[PlayerProgress]:
    """The latest ``progress``, with my own line from my own race, the leader first.

    The server does not send me a progress that shows nothing but my own moves (my
    ``accepted`` told me), so my line in the last one may be behind (protocol 4.11):
    when my race has more moves than it shows, my race's figures replace it.

    The server lists runners in the order they joined; a race reads by progress, so
    they are ordered by cards home, then score, then (among winners) time.
    """
    if progress is None:
        return ()
    players = progress.players
    if race is not None and me is not None:
        players = tuple(
            replace(
                p,
                state=race.state,
                foundations=race.foundations,
                score=race.score,
                moves=race.moves,
            )
            if p.name == me and race.moves > p.moves
            else p
            for p in players
        )
    if progress.ghost is not None:  # a ghost room's recorded run, shown alongside
        players = (*players, progress.ghost)
    return sorted(players, key=_progress_order)
