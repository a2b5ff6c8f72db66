"""The screens: lobby, room, race, watch, results, leaderboards, history, replay, and the
small dialogs, one screen (or family of dialogs) a module.

A screen draws the session and turns keys and clicks into the app's actions; it holds no
game state of its own (the leaderboard screen remembers which page it shows, no more).
It reaches the app only as its ``Host`` (host.py): nothing here imports app.py. What
every screen shares (``Base``, the title and hint lines, the help) is client/chrome.py,
which the player's page (client/player.py) builds on too; these names are re-exported
here so that ``from client.screens import X`` keeps working.
"""

from __future__ import annotations

from ..chrome import Base, HelpScreen, Hints, Title
from .dialogs import (
    AlertScreen,
    ConfirmScreen,
    NameLinkScreen,
    NameScreen,
    PasswordScreen,
    TrustScreen,
    UnreachableScreen,
)
from .history import HistoryScreen
from .leaderboard import LeaderboardScreen
from .lobby import LobbyScreen
from .race import RaceScreen, WatchScreen
from .replay import ReplayScreen
from .results import ClosedRoomScreen, ResultsScreen
from .room import RoomScreen

__all__ = [
    "AlertScreen",
    "Base",
    "ClosedRoomScreen",
    "ConfirmScreen",
    "HelpScreen",
    "Hints",
    "HistoryScreen",
    "LeaderboardScreen",
    "LobbyScreen",
    "NameLinkScreen",
    "NameScreen",
    "PasswordScreen",
    "RaceScreen",
    "ReplayScreen",
    "ResultsScreen",
    "RoomScreen",
    "Title",
    "TrustScreen",
    "UnreachableScreen",
    "WatchScreen",
]
