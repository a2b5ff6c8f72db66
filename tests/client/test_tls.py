"""A private server with its own certificate (issue 17, item 19): ``--cafile``, and trust on
first use as SSH does, against a real server with a certificate made by the test."""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client.config import TokenStore
from client.connection import Connection
from client.screens import AlertScreen, NameScreen, TrustScreen
from server.app import ServeOptions, open_server
from server.runtime.executor import RaceServer

from ..server.test_private import make_certificate
from .helpers import until
from .test_app import client_app, online, screen_text
from .test_connection import Recorder, running


def openssl_fingerprint(cert: Path) -> str:
    out = subprocess.run(
        ["openssl", "x509", "-in", str(cert), "-noout", "-fingerprint", "-sha256"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.strip().split("=", 1)[1]


@contextlib.asynccontextmanager
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[RaceServer, Path]]:
    cert, key = make_certificate(tmp_path)
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/t.db",
        spool=tmp_path / "s.jsonl",
        certfile=cert,
        keyfile=key,
        solver_processes=0,
    )
    async with open_server(options) as server:
        yield server, cert


async def test_the_server_logs_its_certificate_s_fingerprint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="yukon.server")
    async with tls_server(tmp_path) as (_, cert):
        fingerprint = openssl_fingerprint(cert)
        assert any(
            "SHA-256" in r.getMessage() and fingerprint in r.getMessage() for r in caplog.records
        ), [r.getMessage() for r in caplog.records]


async def test_trust_on_first_use_then_pinned_and_a_change_is_refused(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "config")
    async with tls_server(tmp_path) as (server, cert):
        where = f"wss://127.0.0.1:{server.port}"
        fingerprint = openssl_fingerprint(cert)

        events = Recorder()
        first = Connection(where, events, name="ann", store=store, backoff=(0.05,))
        async with running(first):
            await events.until(lambda: events.saw("need_trust"))
            assert events.statuses[-1].fingerprint == fingerprint
            assert not events.messages, "nothing is said to a server not trusted yet"
            first.trust(fingerprint)
            await events.until(lambda: events.saw("online"))
        assert store.pin(where) == fingerprint

        events = Recorder()  # the next start: pinned, no question
        async with running(Connection(where, events, store=store, backoff=(0.05,))):
            await events.until(lambda: events.saw("online"))
        assert not events.saw("need_trust")

        store.save_pin(where, "AB:" * 31 + "CD")  # as if the server's certificate changed
        events = Recorder()
        async with running(Connection(where, events, store=store, backoff=(0.05,))):
            await events.until(lambda: events.saw("failed"))
        text = events.statuses[-1].text
        assert "CHANGED" in text and fingerprint in text, text
        assert not events.messages


async def test_cafile_trusts_the_certificate_without_asking(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "config")
    async with tls_server(tmp_path) as (server, cert):
        where = f"wss://127.0.0.1:{server.port}"
        events = Recorder()
        connection = Connection(where, events, name="ann", store=store, cafile=cert)
        async with running(connection):
            await events.until(lambda: events.saw("online"))
        assert not events.saw("need_trust") and store.pin(where) is None


async def test_the_client_shows_the_fingerprint_and_asks(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (server, cert):
        app = client_app(f"wss://127.0.0.1:{server.port}", tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the question")
            await pilot.pause()
            text = "".join(screen_text(app).replace("│", " ").split())
            assert openssl_fingerprint(cert).replace(" ", "") in text
            await pilot.press("y")
            await online(pilot, app)


async def test_a_certificate_not_trusted_quits_with_status_1(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (server, _):
        app = client_app(f"wss://127.0.0.1:{server.port}", tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TrustScreen), "the question")
            await pilot.press("n")
            await until(pilot, lambda: not app.is_running, "the app to quit")
        assert app.return_code == 1
        assert TokenStore(tmp_path / "config").pin(f"wss://127.0.0.1:{server.port}") is None


async def test_ws_to_a_tls_server_says_wss_instead_of_retrying_forever(tmp_path: Path) -> None:
    """Issue 42: ``ws://`` to a server that speaks TLS got "did not receive a valid HTTP
    response" and retried for ever; it stops, naming the address that works, and the app
    says so in a box before anything else (no name asked)."""
    store = TokenStore(tmp_path / "config")
    async with tls_server(tmp_path) as (server, _):
        plain = f"ws://127.0.0.1:{server.port}"
        events = Recorder()
        async with running(Connection(plain, events, name="ann", store=store, backoff=(0.05,))):
            await events.until(lambda: events.saw("failed"))
        text = events.statuses[-1].text
        assert f"wss://127.0.0.1:{server.port}" in text and "speaks TLS" in text, text
        assert not events.saw("retrying") and not events.messages

        app = client_app(plain, tmp_path, name=None)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, AlertScreen), "the alert")
            alert = app.screen
            assert isinstance(alert, AlertScreen)
            assert f"run yukon play wss://127.0.0.1:{server.port}" in alert.text
            assert "Cannot connect" in screen_text(app)
            assert not any(isinstance(s, NameScreen) for s in app.screen_stack)
