"""The client's one websocket: hello, messages in and out, and coming back after a drop.

``Connection.run`` keeps a connection to the server for as long as the client runs:

* it says hello with the saved token (or the name, the first time) and saves the token
  the ``welcome`` brings, per server (``config.TokenStore``);
* it hands every server message to ``Events.link_message`` and tells
  ``Events.link_status`` what the connection is doing, in one line a player understands
  (refused, wrong protocol version, name taken, the server closed with code X);
* after a dropped connection it reconnects with backoff and resumes with the token: the
  server answers with the resync (``room``, ``race``, ``progress``) and the race goes on;
* on a cluster it connects to the room's node at once when told which (``aim_at``: an
  invite link's room, looked up first), and otherwise follows ``route`` (docs/protocol.md
  4.25): it opens a connection with ``?node=ID`` to the node that holds its room and
  resumes there, so that its frames do not cross the cluster's relay, while the old
  connection goes on serving (make before break: the player waits for nothing); once the
  room's node welcomes it, that is the connection, and to the app its resync is a resync
  like any other.

It stops for good (status ``failed``) only where retrying cannot help: another protocol
version, another connection of the same player (4001), an address that is not a URL, a
``ws://`` address of a server that speaks TLS (the status names its ``wss://`` address).
The first time on a server (no token, no name) the websocket is opened first and nothing
said on it: only a server that answers gets ``need_name``, so that an address with
nothing behind it says so (``retrying``) instead of asking a name for nobody.
A name the server refuses puts it in ``need_name`` until ``login`` gives another; a private
server that refuses the password (none, or a wrong one) puts it in ``need_password`` until
``use_password`` gives one, which is kept per server once the server takes it.
Nothing here raises into the caller: every problem becomes a status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import (
    ConnectionClosed,
    ConnectionClosedOK,
    InvalidHandshake,
    InvalidStatus,
    InvalidURI,
    WebSocketException,
)

from protocol.messages import (
    CLOSE_REPLACED,
    CLOSE_VERSION,
    MAX_FRAME,
    PROTOCOL_VERSION,
    Error,
    Hello,
    Message,
    MessageError,
    Route,
    Welcome,
    decode_server,
    encode,
)

from .config import LOCAL_KEY, LOCAL_WHERE, Identity, TokenStore
from .dialling import describe_close, describe_os_error, unverified, with_node
from .dialling import fingerprint as cert_fingerprint

__all__ = ["BACKOFF", "Connection", "Events", "Link", "LinkStatus", "describe_close"]

log = logging.getLogger("yukon.client")

#: Seconds to wait before each reconnection attempt; the last one repeats.
BACKOFF: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0)
#: How long the server may take to answer a hello (it looks the player up in its database).
HELLO_TIMEOUT = 15.0
#: Routes followed within ``ROUTE_WINDOW`` seconds at most: a cluster whose nodes disagree
#: on where a room lives (a takeover under way) must not bounce a client between them; past
#: it the client stays where it is, served through the relay.
ROUTE_LIMIT = 3
ROUTE_WINDOW = 60.0


@dataclass(frozen=True)
class LinkStatus:
    """What the connection is doing.

    ``kind`` is ``connecting``, ``online``, ``retrying`` (a problem; it will try again),
    ``need_name`` (the server needs a (new) name: call ``login``), ``need_password`` (a
    private server, and no password or a wrong one: call ``use_password``), ``need_trust``
    (a ``wss://`` server whose certificate no authority vouches for, seen for the first
    time: ``fingerprint`` is its SHA-256; call ``trust`` with it), ``failed``
    (it stopped for good) or ``closed`` (the client closed it).
    """

    kind: str
    text: str
    fingerprint: str = ""


class Events(Protocol):
    """What a connection reports to (the app)."""

    def link_message(self, message: Message) -> None: ...

    def link_status(self, status: LinkStatus) -> None: ...


class Link(Protocol):
    """What the app needs of a connection; tests may give it a stand-in."""

    def send(self, message: Message) -> bool: ...

    def login(self, name: str) -> None: ...

    def use_password(self, password: str) -> None: ...

    def trust(self, fingerprint: str) -> None: ...

    def reconnect(self) -> None: ...

    async def run(self) -> None: ...

    async def close(self) -> None: ...


class _Stop(Exception):
    """End this connection attempt: ``kind`` (retrying, need_name, failed) and why."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind = kind
        self.text = text


class Connection:
    """One player's connection to one server; see the module docstring."""

    def __init__(
        self,
        url: str,
        events: Events,
        *,
        name: str | None = None,
        password: str | None = None,
        store: TokenStore | None = None,
        key: str | None = None,
        backoff: Sequence[float] = BACKOFF,
        cafile: Path | None = None,
        token: str | None = None,
    ) -> None:
        """``token``: say hello with this token (a name's link), whoever was saved; the
        welcome's name and token are then kept for this server like any other."""
        self.url = url
        #: ``--cafile``: verify a wss:// server against these certificates (no pinning).
        self.cafile = cafile
        #: A certificate trusted this run, when there is no store to pin it in.
        self._pinned: str | None = None
        self.events = events
        self.store = store
        #: Where the token is kept: the URL, or ``config.LOCAL_KEY`` for the embedded server.
        self.key = key or url
        self.backoff = tuple(backoff) or (1.0,)
        #: For a private server: sent with every hello; without --password, the one this
        #: client was given for this server last time.
        self.password = password if password is not None else self._saved_password()
        self._need_password = False
        #: ``hello.device``: kept per server with the tokens (none without a store).
        self.device = store.device(self.key) if store is not None else None
        self._name = name
        self._token: str | None = None
        self._use_saved(name)
        if token is not None:  # a name's link (``yukon play LINK#token=``): that player
            self._name, self._token = None, token
        self._ws: ClientConnection | None = None
        #: The old connection was replaced by a follow's hello whose welcome never came.
        self._follow_lost = False
        #: The task writing the queue to the connection being served.
        self._writer: asyncio.Task[None] | None = None
        #: A route being followed: the connection to the room's node, until it is welcomed.
        self._following: asyncio.Task[tuple[ClientConnection, Welcome] | None] | None = None
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._closing = False
        self._wake = asyncio.Event()
        self._fresh = False  # reconnect at once, without backoff
        self._went_online = False
        #: A server answered at this address this run (its websocket opened): only then
        #: is a first-time player asked for a name, so that an address with nothing
        #: behind it says so at once instead of asking a name for nobody (issue 42).
        self._answered = False
        self.status = LinkStatus("connecting", f"connecting to {url}")
        self.player: str | None = None
        #: The node that holds this player's room, once a ``route`` named it: later
        #: connections ask for it (``?node=``) until one fails to open.
        self.node: str | None = None
        #: Routes followed (for tests and the log), and when (``ROUTE_LIMIT``).
        self.routes = 0
        self._routed: list[float] = []

    @property
    def where(self) -> str:
        if self.key == LOCAL_KEY:
            return LOCAL_WHERE
        return self.url.split("://", 1)[-1].rstrip("/")

    # -- the caller's side ----------------------------------------------------------------------

    @property
    def online(self) -> bool:
        return self._ws is not None and self.status.kind == "online"

    def send(self, message: Message) -> bool:
        """Queue a message; False (and nothing sent) while not connected."""
        if not self.online:
            return False
        self._queue.put_nowait(encode(message))
        return True

    def login(self, name: str) -> None:
        """Say hello as ``name``: with its saved token if this client has one, else as a
        new player; now or on the next connection."""
        self._name = name
        self._token = None
        self._use_saved(name)
        self._fresh = True
        self._wake.set()

    def use_password(self, password: str) -> None:
        """Say hello again with this password (the server is private), now."""
        self.password = password
        self._need_password = False
        self._fresh = True
        self._wake.set()

    def trust(self, fingerprint: str) -> None:
        """Trust the certificate with this SHA-256 fingerprint on this server from now on
        (pinned in the store), and connect again at once."""
        self._pinned = fingerprint
        if self.store is not None:
            try:
                self.store.save_pin(self.key, fingerprint)
            except OSError as exc:
                log.warning("cannot pin the certificate: %s", exc)
        self._need_password = False
        self._fresh = True
        self._wake.set()

    def _pin(self) -> str | None:
        if self._pinned is not None:
            return self._pinned
        if self.store is None:
            return None
        try:
            return self.store.pin(self.key)
        except OSError:
            return None

    def _tls(self) -> ssl.SSLContext | None:
        """How to check a wss:// server: against ``--cafile``; by its pinned fingerprint
        (checked once connected, before anything is said); or by the system's authorities."""
        if not self.url.strip().lower().startswith("wss://"):
            return None
        if self.cafile is not None:
            return ssl.create_default_context(cafile=str(self.cafile))
        if self._pin() is not None:
            return unverified()
        return ssl.create_default_context()

    def _saved_password(self) -> str | None:
        if self.store is None:
            return None
        try:
            return self.store.password(self.key)
        except OSError:
            return None

    def aim_at(self, node: str) -> None:
        """Connect to ``node`` (``?node=``) from the next connection on: the node that holds
        the room of an invite link, looked up before the first hello (``/r/CODE?format=json``,
        docs/protocol.md 4.25), so that the join lands where the room is and needs no
        ``route``. It is kept as a followed route's node is: until a connection that asks
        for it fails to open (the node may be gone: then any node will do)."""
        self.node = node

    def reconnect(self) -> None:
        """Drop the connection and come back at once (the resync refreshes everything)."""
        self._fresh = True
        ws = self._ws
        if ws is not None:
            asyncio.get_running_loop().create_task(ws.close(1000, "resync"))
        self._wake.set()

    async def close(self) -> None:
        """Close for good (a normal 1000 close: the server keeps our place for a while)."""
        self._closing = True
        self._wake.set()
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(1000, "bye"), 2.0)

    # -- the loop -------------------------------------------------------------------------------

    def _report(self, kind: str, text: str) -> None:
        self.status = LinkStatus(kind, text)
        try:
            self.events.link_status(self.status)
        except Exception:  # the app's problem; the connection carries on
            log.exception("link_status handler failed")

    def _deliver(self, message: Message) -> None:
        try:
            self.events.link_message(message)
        except Exception:  # the app's problem; the connection carries on
            log.exception("link_message handler failed on %s", type(message).__name__)

    def _use_saved(self, name: str | None) -> None:
        """Take the saved identity called ``name`` (or, without one, the last used): every
        name this client registered on the server keeps its token, so ``--name`` switches
        between them and a name of one's own is never "taken"."""
        if self.store is None:
            return
        try:
            saved = self.store.load(self.key, name)
        except OSError:
            return
        if saved is not None:
            self._name, self._token = saved.name, saved.token

    def _save(self, welcome: Welcome) -> None:
        if self.store is None:
            return
        try:
            self.store.save(self.key, Identity(welcome.name, welcome.token))
        except OSError as exc:
            log.warning("cannot save the resume token: %s", exc)

    def _forget(self) -> None:
        """The server does not know this identity's token: forget it (only it)."""
        if self.store is None or self._name is None:
            return
        with contextlib.suppress(OSError):
            self.store.forget(self.key, self._name)

    async def _pause(self, seconds: float) -> None:
        """Sleep, unless woken (close, login, reconnect)."""
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def run(self) -> None:
        """Connect, and reconnect after every drop, until ``close`` (or a final failure)."""
        failures = 0
        while not self._closing:
            if self._need_password:  # until use_password (or close)
                self._wake.clear()
                await self._wake.wait()
                continue
            if self._token is None and self._name is None and self._answered:
                if self.status.kind != "need_name":
                    self._report("need_name", f"first time on {self.where}: choose a name")
                self._wake.clear()
                await self._wake.wait()
                continue
            self._fresh = False
            self._went_online = False
            self._report(
                "connecting" if failures == 0 else "retrying",
                f"connecting to {self.where if self.key == LOCAL_KEY else self.url}",
            )
            try:
                kind, text = await self._attempt()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never a traceback: whatever it was, say it and retry
                log.exception("connection failed")
                kind, text = "retrying", f"connection problem: {type(exc).__name__}: {exc}"
            if self._closing:
                break
            if self._went_online:  # a drop after a good connection: start the backoff afresh
                failures = 0
            if kind in ("failed", "need_name", "need_password", "need_trust"):
                self._need_password = kind in ("need_password", "need_trust")
                if kind == "need_trust":
                    fingerprint, _, text = text.partition(" ")
                    self._report_trust(text, fingerprint)
                else:
                    self._report(kind, text)
                if kind == "failed":
                    return
                continue
            if self._fresh:
                continue
            delay = self.backoff[min(failures, len(self.backoff) - 1)]
            failures += 1
            shown = f"{delay:.0f}" if delay >= 1 else f"{delay:.1f}"
            self._report("retrying", f"{text}; retrying in {shown} s")
            await self._pause(delay)
        self._report("closed", "disconnected")

    def _report_trust(self, text: str, fingerprint: str) -> None:
        self.status = LinkStatus("need_trust", text, fingerprint)
        try:
            self.events.link_status(self.status)
        except Exception:  # the app's problem; the connection carries on
            log.exception("link_status handler failed")

    async def _speaks_tls(self) -> bool:
        """Does the ws:// server answer a TLS handshake? A websocket's plain HTTP upgrade
        to a ``wss://`` server gets garbage back ("did not receive a valid HTTP
        response"), which retrying can never mend: then the address is what is wrong."""
        parts = urlsplit(self.url.strip())
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    parts.hostname or "", parts.port or 80, ssl=unverified(), server_hostname=""
                ),
                5,
            )
        except (OSError, TimeoutError, ValueError, ssl.SSLError):
            return False
        writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 2)
        return True

    async def _peer_fingerprint(self) -> str:
        """The SHA-256 fingerprint of the server's certificate, from a TLS handshake alone
        (nothing is sent): for the player to compare with the one the server logs."""
        parts = urlsplit(self.url.strip())
        host = parts.hostname or ""
        port = parts.port or 443
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=unverified(), server_hostname=host), 10
        )
        try:
            return cert_fingerprint(writer.get_extra_info("ssl_object"))
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2)

    async def _attempt(self) -> tuple[str, str]:
        """One connection, from opening to its end: ``(kind, what happened)``."""
        tls = self._tls()
        tls_option: dict[str, Any] = {"ssl": tls} if tls is not None else {}
        url = with_node(self.url, self.node) if self.node is not None else self.url
        try:
            ws = await self._connect(url, tls_option)
        except ssl.SSLCertVerificationError as exc:
            why = exc.verify_message or exc.reason or "it does not verify"
            if self.cafile is not None:
                return "failed", (
                    f"the certificate of {self.where} is not one --cafile {self.cafile}"
                    f" vouches for ({why})"
                )
            try:
                fingerprint = await self._peer_fingerprint()
            except (OSError, TimeoutError) as err:
                return "retrying", describe_os_error(err, self.where)
            return "need_trust", (
                f"{fingerprint} {self.where} presents a certificate no authority vouches for"
                f" ({why})"
            )
        except InvalidURI as exc:
            return (
                "failed",
                f"{self.url} is not a websocket address ({exc.msg}); try ws://host:port",
            )
        except InvalidStatus as exc:
            code = exc.response.status_code
            if self.node is not None:  # the room's node may be gone: any node will do
                self.node = None
                return "retrying", f"{self.where} answered HTTP {code}"
            return "retrying", f"{self.where} is not a Yukon race server (HTTP {code})"
        except InvalidHandshake as exc:
            if tls is None and await self._speaks_tls():
                secure = "wss://" + self.url.strip().split("://", 1)[-1]
                return "failed", (
                    f"{self.where} speaks TLS: a ws:// address cannot reach it; its address"
                    f" is {secure} (run yukon play {secure})"
                )
            return "retrying", f"{self.where} did not answer as a websocket server ({exc})"
        except (OSError, TimeoutError) as exc:
            self.node = None  # the room's node may be gone: any node will do
            return "retrying", describe_os_error(exc, self.where)
        except WebSocketException as exc:
            return "retrying", f"cannot connect to {self.where}: {exc}"
        try:
            pinned = self._pin() if tls is not None and self.cafile is None else None
            if pinned is not None:  # checked before a word is said: no token, no password
                seen = cert_fingerprint(ws.transport.get_extra_info("ssl_object"))
                if seen != pinned:
                    return "failed", (
                        f"REFUSED: the certificate of {self.where} has CHANGED since you trusted"
                        f" it (it was {pinned}, it is now {seen}). Someone may be intercepting"
                        " the connection. If its owner replaced it, remove the server from"
                        " known_servers.json in your config directory and connect again."
                    )
            self._answered = True
            if self._token is None and self._name is None:
                # The first time here: the server answers, so now a name is worth asking
                # for (nothing was said to it; the name's hello opens a new connection).
                return "need_name", f"first time on {self.where}: choose a name"
            try:
                welcome = await self._hello(ws)
            except _Stop as stop:
                return stop.kind, stop.text
            except TimeoutError:
                return "retrying", f"{self.where} did not answer the hello"
            return await self._online(ws, welcome)
        except ConnectionClosed as exc:
            return self._closed(
                exc.rcvd.code if exc.rcvd else None, exc.rcvd.reason if exc.rcvd else ""
            )
        finally:
            self._ws = None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 2.0)

    @staticmethod
    async def _connect(url: str, tls_option: dict[str, Any]) -> ClientConnection:
        return await connect(
            url,
            max_size=MAX_FRAME * 4,
            compression=None,
            open_timeout=10,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=2,
            **tls_option,
        )

    def _closed(self, code: int | None, reason: str) -> tuple[str, str]:
        if code == CLOSE_REPLACED:
            return "failed", "you connected again from somewhere else; this window has stopped"
        if code == CLOSE_VERSION:
            return "failed", "the server speaks another protocol version; update this client"
        return "retrying", describe_close(code, reason)

    async def _recv(self, ws: ClientConnection) -> Message | None:
        data = await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT)
        try:
            return decode_server(data)
        except MessageError:
            return None  # a newer server's message, or garbage: not ours to show

    def _hello_msg(self, name: str | None, token: str | None) -> Hello:
        return Hello(PROTOCOL_VERSION, name, token, self.password, follow=True, device=self.device)

    async def _hello(self, ws: ClientConnection) -> Welcome:
        token = self._token
        await ws.send(encode(self._hello_msg(None if token else self._name, token)))
        while True:
            msg = await self._recv(ws)
            if isinstance(msg, Welcome):
                return msg
            if not isinstance(msg, Error):
                continue
            if msg.code == "version":
                raise _Stop("failed", f"wrong protocol version: {msg.text}")
            if msg.code == "password":
                given = "wrong" if self.password else "missing"
                raise _Stop("need_password", f"{self.where} is private and the password is {given}")
            if msg.code == "bad_token":
                self._token = None
                self._forget()
                if self._name is None:
                    raise _Stop("need_name", f"{self.where} no longer knows you: choose a name")
                await ws.send(encode(self._hello_msg(self._name, None)))
                continue
            if msg.code == "name_taken":
                taken, self._name = self._name, None
                raise _Stop(
                    "need_name",
                    f"the name {taken!r} is taken on {self.where}: choose another, or if it"
                    " is yours, run yukon play with its link from a device that has it",
                )
            if msg.code == "name_invalid":
                self._name = None
                raise _Stop("need_name", f"that name will not do: {msg.text}")
            raise _Stop("retrying", f"{self.where} refused the hello: {msg.text}")

    async def _online(self, ws: ClientConnection, welcome: Welcome) -> tuple[str, str]:
        self._token, self._name, self.player = welcome.token, welcome.name, welcome.name
        self._went_online = True
        self._save(welcome)
        if self.password is not None and self.store is not None:
            try:
                self.store.save_password(self.key, self.password)
            except OSError as exc:
                log.warning("cannot save the password: %s", exc)
        self._queue = asyncio.Queue()
        self._ws = ws
        self._report("online", f"connected to {self.where} as {welcome.name}")
        self._deliver(welcome)
        try:
            while True:
                moved = await self._serve(ws)
                if moved is None:
                    break
                # Welcomed on the room's node: that is the connection from now on. What
                # is queued goes there; the old one is closed (1000), and what it still
                # brings is not shown (the resync says it all again).
                old, (ws, welcome) = ws, moved
                self._ws = ws
                asyncio.get_running_loop().create_task(self._close_quietly(old))
                self._deliver(welcome)
        finally:
            self._ws = None
            self._stop_following()
        if self._closing:
            return "closed", "disconnected"
        if self._follow_lost:
            self._follow_lost = False
            return "retrying", "the move to your room's server failed"
        return self._closed(ws.close_code, ws.close_reason or "")

    async def _serve(self, ws: ClientConnection) -> tuple[ClientConnection, Welcome] | None:
        """Write what is queued to ``ws`` and show what it brings until it closes (None),
        or until a ``route`` it brought is followed: the room's node's connection and its
        welcome are returned, the caller switches to them."""
        writer = self._writer = asyncio.create_task(self._write(ws))
        reading: asyncio.Future[Any] = asyncio.ensure_future(ws.recv())
        try:
            while True:
                waiting: set[asyncio.Future[Any]] = {reading}
                if self._following is not None:
                    waiting.add(self._following)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if reading in done:
                    try:
                        data = reading.result()
                    except ConnectionClosed:
                        # The old connection may close as the room's node replaces it (its
                        # gateway closes it, 4001): the new one is what counts then.
                        following = self._following is not None
                        moved = await self._followed()
                        if moved is not None:
                            return moved
                        if following and ws.close_code == CLOSE_REPLACED:
                            # Replaced by our own hello on the room's node, whose welcome
                            # never came: not another window's connection. Connect again.
                            self._follow_lost = True
                            return None
                        if isinstance(reading.exception(), ConnectionClosedOK):
                            return None
                        raise
                    reading = asyncio.ensure_future(ws.recv())
                    self._received(data)
                if self._following is not None and self._following.done():
                    moved = await self._followed()
                    if moved is not None:
                        return moved
                    if writer.done():  # held for a hello that was not welcomed: write on
                        writer = self._writer = asyncio.create_task(self._write(ws))
        finally:
            self._writer = None
            reading.cancel()
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer

    def _received(self, data: Any) -> None:
        """One message of the connection being served: shown, or a ``route`` followed."""
        try:
            msg = decode_server(data)
        except MessageError:
            return
        if not isinstance(msg, Route):
            self._deliver(msg)
            return
        # The room lives on another node: go there, unless already going, or bounced
        # too often lately (then stay: the relay serves).
        if self._following is not None:
            return
        now = asyncio.get_running_loop().time()
        self._routed = [t for t in self._routed if t > now - ROUTE_WINDOW]
        if len(self._routed) >= ROUTE_LIMIT:
            return
        self._routed.append(now)
        self.routes += 1
        log.info("moving to node %s, which holds room %s", msg.node, msg.room)
        self._following = asyncio.get_running_loop().create_task(self._follow(msg.node))

    async def _follow(self, node: str) -> tuple[ClientConnection, Welcome] | None:
        """Open a connection to ``node`` (``?node=``) and say hello with the token, while
        the old one serves on; its welcome, or None if it failed (the client stays where
        it is, relayed, and its next reconnect goes to any node)."""
        tls = self._tls()
        tls_option: dict[str, Any] = {"ssl": tls} if tls is not None else {}
        try:
            new = await self._connect(with_node(self.url, node), tls_option)
        except (OSError, TimeoutError, WebSocketException) as exc:
            log.info("cannot reach node %s (%s): staying where we are", node, exc)
            self.node = None
            return None
        try:
            pinned = self._pin() if tls is not None and self.cafile is None else None
            if pinned is not None:
                seen = cert_fingerprint(new.transport.get_extra_info("ssl_object"))
                if seen != pinned:
                    raise _Stop("failed", "the room's node presents another certificate")
            # Nothing more goes on the old connection from the hello on (4.25): what the
            # app sends meanwhile waits in the queue for the new one (or, if it is not
            # welcomed, for the old one again).
            if self._writer is not None:
                self._writer.cancel()
            welcome = await self._resume_hello(new)
        except (_Stop, ConnectionClosed, TimeoutError, OSError) as exc:
            log.info("node %s did not welcome us (%s): staying where we are", node, exc)
            await self._close_quietly(new)
            self.node = None
            return None
        except BaseException:
            await self._close_quietly(new)
            raise
        self.node = node
        return new, welcome

    async def _resume_hello(self, ws: ClientConnection) -> Welcome:
        """The hello of a route followed: with the token, and only a welcome will do. Any
        refusal (the node does not know the token, a password it wants) leaves the client
        where it is; it never registers a name nor forgets the token on the way."""
        if self._token is None:
            raise _Stop("retrying", "no token to resume with")
        await ws.send(encode(self._hello_msg(None, self._token)))
        while True:
            msg = await self._recv(ws)
            if isinstance(msg, Welcome):
                return msg
            if isinstance(msg, Error):
                raise _Stop("retrying", f"the room's node refused the hello: {msg.text}")

    async def _followed(self) -> tuple[ClientConnection, Welcome] | None:
        """The route being followed, once it is over: the new connection and its welcome,
        or None (none was being followed, or it failed)."""
        task, self._following = self._following, None
        if task is None:
            return None
        with contextlib.suppress(Exception):
            return await task
        return None

    def _stop_following(self) -> None:
        task, self._following = self._following, None
        if task is not None:
            task.cancel()

            def closed(t: asyncio.Task[tuple[ClientConnection, Welcome] | None]) -> None:
                if not t.cancelled() and t.exception() is None and (got := t.result()):
                    asyncio.get_running_loop().create_task(self._close_quietly(got[0]))

            task.add_done_callback(closed)

    @staticmethod
    async def _close_quietly(ws: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(1000), 2.0)

    async def _write(self, ws: ClientConnection) -> None:
        while True:
            data = await self._queue.get()
            try:
                await ws.send(data)
            except ConnectionClosed:
                return
