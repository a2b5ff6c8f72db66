"""Where the client keeps things between runs: resume tokens, and the local server's database.

A resume token is saved per server (keyed by its normalised URL, or ``"local"`` for the
embedded server of ``yukon play --local``) in ``tokens.json`` in the user's config
directory, readable by the user only: it *is* the player's identity on that server, so
the next start needs no name.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from protocol.messages import DailyDeal

__all__ = [
    "APP_NAME",
    "DEFAULT_URL",
    "DailyMemory",
    "LOCAL_KEY",
    "Identity",
    "TokenStore",
    "config_dir",
    "data_dir",
    "local_db_url",
    "server_key",
]

APP_NAME = "yukon"
DEFAULT_URL = "ws://127.0.0.1:8765"
#: The key of the embedded server's token: its port changes from run to run, its database not.
LOCAL_KEY = "local"
_TOKENS = "tokens.json"
_DAILIES = "dailies.json"
#: Daily rooms remembered per server: a resume comes within minutes, so a few suffice.
_DAILIES_KEPT = 8


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME))


def local_db_url(directory: Path | None = None) -> str:
    """The SQLite database of ``yukon play --local``, in the user's data directory."""
    where = directory or data_dir()
    where.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{where / 'local.db'}"


def server_key(url: str) -> str:
    """One key per server however its URL is spelled: ``WS://Host:8765/`` = ``ws://host:8765``."""
    if url == LOCAL_KEY:
        return url
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower() or "ws"
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = 443 if scheme == "wss" else 80
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


@dataclass(frozen=True)
class Identity:
    """Who the player is on one server."""

    name: str
    token: str


class TokenStore:
    """Saved identities, one per server, in a small JSON file only the user can read."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else config_dir()
        self.path = self.directory / _TOKENS

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            k: v
            for k, v in data.items()
            if isinstance(k, str)
            and isinstance(v, dict)
            and isinstance(v.get("name"), str)
            and isinstance(v.get("token"), str)
        }

    def load(self, server: str) -> Identity | None:
        entry = self._read().get(server_key(server))
        if entry is None:
            return None
        return Identity(entry["name"], entry["token"])

    def save(self, server: str, identity: Identity) -> None:
        """Write atomically (a crash never leaves half a file), mode 0600."""
        data = self._read()
        data[server_key(server)] = {"name": identity.name, "token": identity.token}
        self._write(data)

    def forget(self, server: str) -> None:
        data = self._read()
        if data.pop(server_key(server), None) is not None:
            self._write(data)

    def _write(self, data: dict[str, dict[str, str]]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _write_json(directory: Path, path: Path, data: object) -> None:
    """Write atomically (a crash never leaves half a file), mode 0600."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class DailyMemory:
    """The daily attempts this client was in, per server: room code -> the ``daily_deal``.

    A resumed room does not come with its ``daily_deal`` (the server sends room, race and
    progress), so a client started again in the middle of a daily attempt would show it
    as a plain race; this file tells it which day and attempt the room is.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else config_dir()
        self.path = self.directory / _DAILIES

    def _read(self) -> dict[str, dict[str, dict[str, object]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def load(self, server: str) -> dict[str, DailyDeal]:
        rooms = self._read().get(server_key(server))
        out: dict[str, DailyDeal] = {}
        if not isinstance(rooms, dict):
            return out
        for room, fields in rooms.items():
            try:
                out[room] = DailyDeal(**fields)  # type: ignore[arg-type]
            except TypeError:
                continue
        return out

    def save(self, server: str, rooms: dict[str, DailyDeal]) -> None:
        data = self._read()
        kept = list(rooms.items())[-_DAILIES_KEPT:]
        data[server_key(server)] = {room: asdict(deal) for room, deal in kept}
        _write_json(self.directory, self.path, data)
