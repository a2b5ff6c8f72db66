"""The browser client (``server/pages/web/``: plain ES modules and a stylesheet), read from
the package once, when the pages are built (``WebClient``), and answered from memory: a
request's path is only ever looked up in that table, never joined onto a path on disk.
Its files live under ``/static/<version>/``, where the version is a hash of them all, so
a browser may keep them for good (``immutable``) and a new server's files get new URLs;
the page itself is revalidated each time (``no-cache``).
"""

from __future__ import annotations

import base64
import email.utils
import functools
import gzip
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from importlib import resources
from importlib.resources.abc import Traversable

import brotli
from websockets.datastructures import Headers
from websockets.http11 import Response

from .common import TEMPLATES, reply

#: Where the client's files are served from, each under the client's version.
STATIC = "/static/"
#: The client's file types, by ending. Only these files of ``server/pages/web`` are served;
#: others there (a vendored library's licence, the script that fetched it) are not.
CONTENT_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_WEB_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*")
#: What a browser may keep without asking again: the URL changes when the file does.
IMMUTABLE = "public, max-age=31536000, immutable"


#: The encodings offered, best first (RFC 9110 12.5.3's ``Accept-Encoding``): brotli's is
#: about a fifth smaller than gzip's on these files; every browser that sends ``br`` (over
#: HTTPS; most send it over plain HTTP too) reads it.
ENCODINGS = ("br", "gzip")


def _compress(body: bytes, encoding: str) -> bytes:
    """``body`` in ``encoding``, as small as each library makes it: a file is compressed
    once (``StaticFile.encoded``), so the slowest setting costs nothing per request."""
    if encoding == "br":
        return bytes(brotli.compress(body, mode=brotli.MODE_TEXT, quality=11))
    return gzip.compress(body, compresslevel=9, mtime=0)  # mtime 0: the same bytes each time


def accepted_encoding(accept: str | None) -> str | None:
    """The encoding of ``ENCODINGS`` an ``Accept-Encoding`` value prefers (its highest
    q-value, ``br`` before ``gzip`` on a tie; ``*`` stands for any), None for none
    (identity). A malformed q-value counts as 0: the client gets the plain file."""
    if not accept:
        return None
    weights: dict[str, float] = {}
    for part in accept.split(","):
        coding, _, params = part.partition(";")
        coding = coding.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
                q = q if 0.0 <= q <= 1.0 else 0.0
        if coding:
            weights[coding] = q
    best, best_q = None, 0.0
    for encoding in ENCODINGS:
        q = weights.get(encoding, weights.get("*", 0.0))
        if q > best_q:
            best, best_q = encoding, q
    return best


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file of the client as it is served: its bytes, type and entity tag, and its
    compressed forms, each made once (``WebClient.compress`` at start, else the first
    time a browser asks for it) and kept."""

    body: bytes
    content_type: str
    etag: str
    #: By encoding: the compressed bytes, or None where they would not be smaller.
    encodings: dict[str, bytes | None] = field(default_factory=dict, compare=False)

    def encoded(self, encoding: str | None) -> tuple[bytes, str | None]:
        """The body to send for ``encoding`` and the encoding it is in (None: as is)."""
        if encoding is None:
            return self.body, None
        if encoding not in self.encodings:
            made = _compress(self.body, encoding)
            self.encodings[encoding] = made if len(made) < len(self.body) else None
        packed = self.encodings[encoding]
        return (self.body, None) if packed is None else (packed, encoding)

    def tag(self, encoding: str | None) -> str:
        """The entity tag of one representation: each encoding has its own (RFC 9110
        8.8.3: a strong tag names the bytes), the file's tag with the encoding's name."""
        return self.etag if encoding is None else f'{self.etag[:-1]}-{encoding}"'

    def matches(self, if_none_match: str | None) -> bool:
        """Whether ``If-None-Match`` names any representation of this file (or ``*``): the
        browser holds these bytes, whichever encoding they came in."""
        if if_none_match is None:
            return False
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return "*" in tags or any(self.tag(e) in tags for e in (None, *ENCODINGS))


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _served(name: str) -> bool:
    return "." in name and "." + name.rpartition(".")[2] in CONTENT_TYPES


def _read_tree(root: Traversable, prefix: str = "") -> dict[str, bytes]:
    """Every file to serve under ``root`` by its relative name (``vendor/msgpack.mjs``),
    read now."""
    files: dict[str, bytes] = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        name = prefix + entry.name
        if entry.is_dir():
            files.update(_read_tree(entry, name + "/"))
        elif _served(name):
            files[name] = entry.read_bytes()
    return files


class WebClient:
    """The browser client: its page and its files, read and built once, served from memory.

    ``files`` maps a relative name to its content. The page is rendered from
    ``templates/client.html`` (the shared ``base.html`` frame and style) with the files'
    URLs in it; its Content-Security-Policy allows scripts and styles from this server
    only, the one inline style by its hash, and websockets back to this server
    (``connect-src 'self'``, which covers ``ws:``/``wss:`` on the page's own host and port).
    """

    #: The modules the page loads, in the order it needs them (``modulepreload``): the
    #: browser then fetches them all at once instead of one import after another.
    ENTRY = "app.js"
    #: ``respond``'s name for the page at an invite link (no file can be called that).
    INVITE = "/r/"
    #: ``respond``'s name for the page at a replay link, ``/replay/<race>/<player>``.
    REPLAY = "/replay/"
    #: Modules loaded only when needed (``import()``: a replay opens, a past day is
    #: checked against the daily's log), not preloaded by the page: a race never needs
    #: them, so the first load does not carry them.
    LAZY = frozenset({"replay.js", "deal.js", "dailylog.js"})

    def __init__(self, files: Mapping[str, bytes]) -> None:
        for name in files:
            if _WEB_NAME.fullmatch(name) is None or not _served(name):
                raise ValueError(
                    f"server/pages/web/{name}: not a client file this server can serve"
                )
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        #: Changes whenever any file does: part of every file's URL.
        self.version = digest.hexdigest()[:16]
        self.files: dict[str, StaticFile] = {
            name: StaticFile(body, CONTENT_TYPES["." + name.rpartition(".")[2]], _etag(body))
            for name, body in files.items()
        }
        modules = sorted(
            n
            for n in files
            if n.endswith((".js", ".mjs")) and n != self.ENTRY and n not in self.LAZY
        )

        lazy = sorted(n for n in files if n in self.LAZY)

        def render(root: str, preload: list[str]) -> str:
            # Every URL relative to the page (``root`` leads back to the server's root
            # from it), so that behind a proxy that serves the game under a path prefix
            # (https://example.org/yukon/) the page still finds its files.
            return TEMPLATES.get_template("client.html").render(
                root=root,
                static=f"{root}{STATIC[1:]}{self.version}",
                entry=self.ENTRY,
                modules=preload,
                styles=sorted(n for n in files if n.endswith(".css")),
            )

        html, invite_html = render("", modules), render("../", modules)
        # A replay's link opens the replay at once: its page preloads the lazy modules too.
        replay_html = render("../../", sorted(modules + lazy))
        styles = re.findall(r"<style>(.*?)</style>", html, re.S)
        hashes = " ".join(
            "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
            for s in styles
        )
        #: No inline script at all; the one inline style (base.html's) by its hash.
        self.csp = (
            "default-src 'none'; script-src 'self'; "
            f"style-src 'self' {hashes}; connect-src 'self'; img-src 'self' data:; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        #: The page at ``/``, and the same page at ``/r/<room>`` (its URLs one level up).
        self.page = StaticFile(html.encode(), "text/html; charset=utf-8", _etag(html.encode()))
        self.invite_page = StaticFile(
            invite_html.encode(), "text/html; charset=utf-8", _etag(invite_html.encode())
        )
        #: The same page at ``/replay/<race>/<player>`` (its URLs two levels up).
        self.replay_page = StaticFile(
            replay_html.encode(), "text/html; charset=utf-8", _etag(replay_html.encode())
        )

    @classmethod
    def load(cls) -> WebClient:
        """The client shipped in this package (``server/pages/web``, package data)."""
        return cls(_read_tree(resources.files("server.pages") / "web"))

    @staticmethod
    @functools.cache
    def packaged() -> WebClient:
        """``load``, once per process: every server in it serves the same files, each
        compressed at start (``compress``)."""
        web = WebClient.load()
        web.compress()
        return web

    def compress(self) -> None:
        """Every file and page in every encoding, now: brotli's best setting takes about
        0.4 s of CPU for the whole client, which at first use would stall the event loop
        (every player's moves) while the first visitor's page loads; at start it delays
        nothing but the start."""
        for item in (self.page, self.invite_page, self.replay_page, *self.files.values()):
            for encoding in ENCODINGS:
                item.encoded(encoding)

    def size(self) -> int:
        """Bytes of every file the client is made of (the page, as ``/`` serves it,
        included)."""
        return len(self.page.body) + sum(len(f.body) for f in self.files.values())

    def initial_size(self) -> int:
        """Bytes a first load fetches: the page and every file but the ``LAZY`` ones."""
        return self.size() - self.lazy_size()

    def lazy_size(self) -> int:
        """Bytes a replay adds when it opens: the ``LAZY`` modules."""
        return sum(len(f.body) for n, f in self.files.items() if n in self.LAZY)

    def respond(
        self, name: str, if_none_match: str | None, accept_encoding: str | None = None
    ) -> Response:
        """The page (``name`` "", or ``INVITE`` at an invite link), or one file; 304 when
        the browser has it already. Compressed as ``Accept-Encoding`` prefers (``Vary``
        says the answer depends on it, so that a cache keeps one per encoding)."""
        if name in ("", self.INVITE, self.REPLAY):
            pages = {"": self.page, self.INVITE: self.invite_page, self.REPLAY: self.replay_page}
            item, cache = pages[name], "no-cache"
            extra = [("Content-Security-Policy", self.csp), ("Referrer-Policy", "no-referrer")]
        else:
            item, cache = self.files[name], IMMUTABLE
            extra = []
        body, encoding = item.encoded(accepted_encoding(accept_encoding))
        extra += [("ETag", item.tag(encoding)), ("Vary", "Accept-Encoding")]
        if encoding is not None:
            extra.append(("Content-Encoding", encoding))
        if item.matches(if_none_match):
            headers = Headers(
                [
                    ("Date", email.utils.formatdate(usegmt=True)),
                    ("Content-Length", "0"),
                    ("Cache-Control", cache),
                    *extra,
                ]
            )
            return Response(HTTPStatus.NOT_MODIFIED.value, "Not Modified", headers, b"")
        return reply(HTTPStatus.OK, body, item.content_type, cache=cache, extra=extra)
