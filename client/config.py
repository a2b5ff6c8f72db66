"""Where the client keeps things between runs: resume tokens, and the local server's database.

Resume tokens are saved per server (keyed by its normalised URL, or ``"local"`` for the
embedded server of ``yukon play --local``), one per name used there, in ``tokens.json``
in the user's config directory, readable by the user only: a token *is* the player's
identity on that server, so the next start needs no name. Beside it, each readable by
the user only: ``passwords.json`` (what private servers accepted), ``known_servers.json``
(the certificate fingerprints trusted on first use, as SSH's ``known_hosts``) and
``dailies.json`` (the daily rooms this client was in, so a resumed attempt is still the
daily) and ``deck.json`` (each name's deck: four colours, suits as letters).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs

from protocol.messages import DailyDeal

__all__ = [
    "APP_NAME",
    "DEFAULT_URL",
    "DailyMemory",
    "DeckMemory",
    "HintedMemory",
    "LOCAL_KEY",
    "LOCAL_WHERE",
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
#: The embedded server, as the screens name it (its port means nothing to the player).
LOCAL_WHERE = "your own server"
_TOKENS = "tokens.json"
_DAILIES = "dailies.json"
_HINTED = "hinted.json"
_DECK = "deck.json"
_PASSWORDS = "passwords.json"
#: The device id this client sends each server (``hello.device``), by server.
_DEVICES = "devices.json"
#: Certificates trusted on first use, as SSH's known_hosts: server -> SHA-256 fingerprint.
_KNOWN_SERVERS = "known_servers.json"
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
    """Saved identities, every one per server, in a small JSON file only the user can read.

    A player may have several names on one server (``--name`` chooses among them or
    registers a new one); each keeps its own token, so switching never loses one, and the
    last used is the default. The file is ``{server: {"last": name, "ids": {folded name:
    {"name", "token"}}}}``; an older file of one ``{"name", "token"}`` per server is read
    as that server's only identity.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else config_dir()
        self.path = self.directory / _TOKENS

    @staticmethod
    def _identity(entry: object) -> Identity | None:
        if isinstance(entry, dict):
            name, token = entry.get("name"), entry.get("token")
            if isinstance(name, str) and isinstance(token, str):
                return Identity(name, token)
        return None

    def _read(self) -> dict[str, tuple[str | None, dict[str, Identity]]]:
        """Every server's ``(last used name, identities by folded name)``."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        out: dict[str, tuple[str | None, dict[str, Identity]]] = {}
        for key, entry in data.items():
            if not isinstance(key, str) or not isinstance(entry, dict):
                continue
            single = self._identity(entry)
            if single is not None:  # the older format
                out[key] = (single.name, {single.name.casefold(): single})
                continue
            ids = entry.get("ids")
            known = {
                fold: ident
                for fold, raw in (ids.items() if isinstance(ids, dict) else ())
                if (ident := self._identity(raw)) is not None
            }
            last = entry.get("last")
            out[key] = (last if isinstance(last, str) else None, known)
        return out

    def load(self, server: str, name: str | None = None) -> Identity | None:
        """The identity called ``name`` on ``server`` (case does not matter), or without a
        name the last one used there."""
        last, known = self._read().get(server_key(server), (None, {}))
        wanted = name if name is not None else last
        if wanted is None:
            return None
        return known.get(wanted.strip().casefold())

    def names(self, server: str) -> list[str]:
        _, known = self._read().get(server_key(server), (None, {}))
        return sorted(ident.name for ident in known.values())

    def save(self, server: str, identity: Identity) -> None:
        """Keep ``identity`` (replacing that name's old token) and make it the last used."""
        data = self._read()
        _, known = data.get(server_key(server), (None, {}))
        known[identity.name.casefold()] = identity
        data[server_key(server)] = (identity.name, known)
        self._write(data)

    def forget(self, server: str, name: str | None = None) -> None:
        """Forget one identity (the server no longer knows its token), or with no name
        every identity on ``server``."""
        data = self._read()
        key = server_key(server)
        if key not in data:
            return
        last, known = data[key]
        if name is None:
            del data[key]
        elif known.pop(name.strip().casefold(), None) is None:
            return
        elif last is not None and last.casefold() == name.strip().casefold():
            data[key] = (next((i.name for i in known.values()), None), known)
        self._write(data)

    # -- passwords of private servers ---------------------------------------------------------

    @property
    def _passwords(self) -> Path:
        return self.directory / _PASSWORDS

    def _read_passwords(self) -> dict[str, str]:
        try:
            data = json.loads(self._passwords.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def password(self, server: str) -> str | None:
        """The password a private server accepted from this client, if any."""
        return self._read_passwords().get(server_key(server))

    def save_password(self, server: str, password: str) -> None:
        data = self._read_passwords()
        if data.get(server_key(server)) != password:
            data[server_key(server)] = password
            _write_json(self.directory, self._passwords, data)

    # -- the device id (docs/protocol.md 4.31) -----------------------------------------------

    def device(self, server: str) -> str:
        """This client's device id for ``server``, made the first time it is asked for:
        one for every name played from here on that server (tokens belong to names, the
        device id to this installation), and another for each server, so two servers
        cannot tell they see one device."""
        path = self.directory / _DEVICES
        data = _read_map(path)
        known = data.get(server_key(server))
        if isinstance(known, str) and known:
            return known
        made = secrets.token_urlsafe(18)  # 24 URL-safe characters
        data[server_key(server)] = made
        with contextlib.suppress(OSError):
            _write_json(self.directory, path, data)
        return made

    # -- certificates trusted on first use --------------------------------------------------

    @property
    def _known(self) -> Path:
        return self.directory / _KNOWN_SERVERS

    def _read_known(self) -> dict[str, str]:
        try:
            data = json.loads(self._known.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def pin(self, server: str) -> str | None:
        """The SHA-256 fingerprint of the certificate trusted for ``server``, if any."""
        return self._read_known().get(server_key(server))

    def save_pin(self, server: str, fingerprint: str) -> None:
        data = self._read_known()
        data[server_key(server)] = fingerprint
        _write_json(self.directory, self._known, data)

    def _write(self, data: dict[str, tuple[str | None, dict[str, Identity]]]) -> None:
        raw = {
            key: {
                "last": last,
                "ids": {f: {"name": i.name, "token": i.token} for f, i in known.items()},
            }
            for key, (last, known) in data.items()
        }
        _write_json(self.directory, self.path, raw)


def _read_map(path: Path) -> dict[str, Any]:
    """A JSON map kept in ``path``; an empty one for a missing, unreadable or broken file
    (what it remembered is lost, nothing more)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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
        return _read_map(self.path)

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


class HintedMemory:
    """The rooms whose race gave this client a hint, per server (a few, newest last).

    The server's resync (``room``, ``race``, ``progress``) says nothing of hints, so a
    client started again in the middle of a hinted race would lose its "hinted" mark;
    this file keeps it, as ``dailies.json`` keeps a daily attempt's day.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else config_dir()
        self.path = self.directory / _HINTED

    def _read(self) -> dict[str, object]:
        return _read_map(self.path)

    def load(self, server: str) -> list[str]:
        rooms = self._read().get(server_key(server))
        if not isinstance(rooms, list):
            return []
        return [r for r in rooms if isinstance(r, str)]

    def save(self, server: str, rooms: list[str]) -> None:
        data = self._read()
        data[server_key(server)] = rooms[-_DAILIES_KEPT:]
        _write_json(self.directory, self.path, data)


@dataclass(frozen=True, slots=True)
class Deck:
    """How a player reads the cards (issue 29): the four-colour deck, suits as letters."""

    four: bool = False
    letters: bool = False


class DeckMemory:
    """Each player's deck settings, per server and name, in ``deck.json``: kept on this
    client like the browser's localStorage keeps them, so a name plays with its own deck
    wherever it plays here."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else config_dir()
        self.path = self.directory / _DECK

    def _read(self) -> dict[str, object]:
        return _read_map(self.path)

    @staticmethod
    def _key(server: str, name: str) -> str:
        return f"{server_key(server)} {name.casefold()}"

    def load(self, server: str, name: str) -> Deck:
        entry = self._read().get(self._key(server, name))
        if not isinstance(entry, dict):
            return Deck()
        return Deck(four=entry.get("four") is True, letters=entry.get("letters") is True)

    def save(self, server: str, name: str, deck: Deck) -> None:
        data = self._read()
        data[self._key(server, name)] = asdict(deck)
        _write_json(self.directory, self.path, data)
