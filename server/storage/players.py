"""Players and their identity in the SQL store: registering a name (unique regardless of
case and look-alikes), the secret token that finds a player again, forgetting a player,
and the operator's settings.

A part of ``SqlStore`` (server/storage/sql.py), kept apart because who a player is
changes for its own reasons (names, tokens) and touches no race tables.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from protocol.messages import name_key, name_skeleton

from ..domain.records import Standing
from .base import StoreBase, _players, _settings, _utc
from .ratings import RatingsStore

__all__ = ["PlayersStore", "NameTakenError", "Identity", "hash_token"]


class NameTakenError(Exception):
    """Another player registered this name, or one that looks like it (names are unique
    regardless of case, compatibility forms and look-alike characters)."""


@dataclass(frozen=True, slots=True)
class Identity:
    player_id: int
    name: str
    #: The secret the player keeps; only its hash is stored.
    token: str
    #: When the name was registered (wall time): ``--daily-min-age`` reads it.
    created: float = 0.0
    #: A BOT account (docs/bots.md).
    bot: bool = False


def hash_token(token: str) -> str:
    """Tokens are 192-bit random secrets, so a plain SHA-256 is enough (no salt, no stretch)."""
    return hashlib.sha256(token.encode()).hexdigest()


class PlayersStore(StoreBase, RatingsStore):
    """Registering, finding and forgetting players; settings."""

    async def register_player(
        self, *, name: str, now: float, bot: bool = False, address: str = ""
    ) -> Identity:
        """Register a new name and hand out its secret token; NameTakenError if taken.
        ``bot``: a BOT account, for good (docs/bots.md). ``address``: the key of the
        address it came from (``limits.address_key``), kept for the rating rules (two
        names registered from one address within a day are linked, docs/ratings.md)."""
        token = secrets.token_urlsafe(24)
        try:
            async with self.engine.begin() as conn:
                result = await conn.execute(
                    insert(_players)
                    .values(
                        name=name,
                        name_key=name_key(name),
                        name_skeleton=name_skeleton(name),
                        token_hash=hash_token(token),
                        created_at=_utc(now),
                        # Only when set: the column's default says false otherwise.
                        **({"bot": True} if bot else {}),
                        **({"registered_from": address} if address else {}),
                    )
                    .returning(_players.c.id)
                )
                player_id = result.scalar_one()
        except IntegrityError:
            raise NameTakenError(name) from None
        return Identity(player_id, name, token, now, bot)

    async def forget_player(self, *, player_id: int) -> None:
        """Delete a player just registered whose ``welcome`` never reached anyone, so the
        name is free again (``effects.Forget``); nothing refers to such a player yet."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(_players).where(_players.c.id == player_id))

    async def find_player(self, *, token: str) -> Identity | None:
        found = await self.find_player_standing(token=token, today=None)
        return None if found is None else found[0]

    async def find_player_standing(
        self, *, token: str, today: dt.date | None
    ) -> tuple[Identity, Standing] | None:
        """The player whose token this is, and (``today``: the server's date) their
        rating and streak, read on one connection: a hello waits for one trip to the
        database, not two. ``today`` None: the identity only (a default standing)."""
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(
                        _players.c.id, _players.c.name, _players.c.created_at, _players.c.bot
                    ).where(_players.c.token_hash == hash_token(token))
                )
            ).first()
            if row is None:
                return None
            standing = Standing()
            if today is not None:
                standing = (await self._standings(conn, [row.id], today))[row.id]
        created = row.created_at
        if created.tzinfo is None:  # SQLite hands back naive datetimes; every one is UTC
            created = created.replace(tzinfo=dt.UTC)
        return Identity(row.id, row.name, token, created.timestamp(), bool(row.bot)), standing

    async def setting(self, *, key: str, default: str) -> str:
        """The stored value of ``key``; the first caller stores ``default`` and every later
        caller (and restart) gets that same value."""
        async with self.engine.begin() as conn:
            value = (
                await conn.execute(select(_settings.c.value).where(_settings.c.key == key))
            ).scalar()
            if value is not None:
                return str(value)
        try:
            async with self.engine.begin() as conn:
                await conn.execute(insert(_settings).values(key=key, value=default))
            return default
        except IntegrityError:  # another process stored it first
            async with self.engine.connect() as conn:
                value = (
                    await conn.execute(select(_settings.c.value).where(_settings.c.key == key))
                ).scalar_one()
            return str(value)
