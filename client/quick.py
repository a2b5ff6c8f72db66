"""The quick race in the terminal (docs/protocol.md 4.26): what a waiting player reads,
and the lobby's line that shows it.

``pool_lines`` is pure (the browser's ``server/pages/web/quick.js`` says the same): how many
wait (alone: nobody is made up, and when others usually play), how long you have waited
of the most, and the rating band, counted on from the last ``pool`` with the client's
own clock (the band widens 25 a second, without limit from the longest wait).
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from protocol.messages import Leave, Message, Pool, Quick, Room

from .widgets import Live

__all__ = ["QuickInfo", "pool_lines", "quick_from"]

#: How fast the band widens (docs/protocol.md 4.26), and the ``band`` that means any rating.
BAND_PER_S = 25
ANY_BAND = 9999


def _clock(ms: float) -> str:
    s = int(ms // 1000)
    return f"{s // 60}:{s % 60:02d}"


def pool_lines(pool: Pool | None, at: float, now: float) -> list[str]:
    """What a player waiting in the pool reads; ``at``: when ``pool`` came (seconds,
    the client's monotonic clock), ``now``: the time now."""
    if pool is None or pool.state != "waiting":
        return []
    lines: list[str] = []
    if pool.waiting <= 1:
        lines.append("Nobody else waits yet: you race as soon as someone comes (no bots).")
        if pool.usual:
            lines.append(f"Others usually play then: {pool.usual}.")
    else:
        lines.append(f"{pool.waiting} players waiting (you included).")
    more = max(0.0, now - at) * 1000
    ms = pool.waited_ms + more
    if pool.band >= ANY_BAND or ms >= pool.max_wait_ms:
        band = "any rating"
    else:
        band = f"within ±{pool.band + int(more / 1000 * BAND_PER_S)} of your rating"
    lines.append(f"Waited {_clock(ms)} of {_clock(pool.max_wait_ms)}, matched {band}.")
    return lines


def quick_from(room: Room) -> list[Message]:
    """``yukon play --quick`` welcomed back into ``room`` (the token resumed its place):
    what takes the player to the pool. A runner of a race that is counting down or
    running stays (the race is theirs); anywhere else (a finished room, a room's lobby,
    watching) the player asked for a quick race, not for that room: it is left, then the
    pool entered, rather than being put back in it, alone, as its host (issue 42)."""
    if room.you == "player" and room.state in ("countdown", "racing"):
        return []
    return [Leave(), Quick()]


class QuickInfo(Live):
    """The lobby's quick-race line: where the player stands in the pool, if waiting."""

    DEFAULT_CSS = "QuickInfo { height: auto; padding: 0 1; }"

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if self.session.pool is not None:  # the wait and the band count on
            self.refresh(layout=True)

    def render(self) -> RenderableType:
        session = self.session
        lines = pool_lines(session.pool, session.pool_at, self.client.clock())
        return Text("\n".join(lines))
