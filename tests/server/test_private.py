"""Running your own server: a password, TLS, connection limits (server/app.py, server/rooms/)."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from protocol.messages import PROTOCOL_VERSION, Error, Hello, Welcome, decode_server, encode
from server.app import ServeOptions, StartupError, open_server
from server.rooms import HubConfig

from .test_rooms import Clients, error_codes, kinds

TIMEOUT = 5.0


async def hello_over(uri: str, hello: Hello, **kwargs: object) -> tuple[object, int | None]:
    """Send one hello; return the first answer and the close code (None if still open)."""
    async with connect(uri, **kwargs) as ws:  # type: ignore[arg-type]
        await ws.send(encode(hello))
        first = decode_server(await asyncio.wait_for(ws.recv(), TIMEOUT))
        try:
            await asyncio.wait_for(ws.recv(), 0.5)
        except ConnectionClosed as exc:
            return first, exc.rcvd.code if exc.rcvd else None
        except TimeoutError:
            return first, None
    return first, None


async def test_a_private_server_wants_the_right_password(tmp_path: Path) -> None:
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/p.db",
        spool=tmp_path / "s.jsonl",
        hub=HubConfig(password="correct horse"),
    )
    async with open_server(options) as server:
        uri = f"ws://127.0.0.1:{server.port}"
        welcome, code = await hello_over(
            uri, Hello(PROTOCOL_VERSION, "ann", password="correct horse")
        )
        assert isinstance(welcome, Welcome) and code is None
        wrong, code = await hello_over(uri, Hello(PROTOCOL_VERSION, "bob", password="battery"))
        assert getattr(wrong, "code", None) == "password" and code == 1008
        missing, code = await hello_over(uri, Hello(PROTOCOL_VERSION, "bob"))
        assert getattr(missing, "code", None) == "password" and code == 1008
        # The token of a registered player still needs the password.
        token = welcome.token
        again, code = await hello_over(uri, Hello(PROTOCOL_VERSION, token=token))
        assert getattr(again, "code", None) == "password" and code == 1008


def test_repeated_wrong_passwords_from_one_address_are_slowed_down() -> None:
    cl = Clients(HubConfig(password="pw", password_free_failures=2))
    answered_at = []
    for n in range(7):
        conn = cl.connect(address="10.0.0.9")
        effects = cl.send(conn, Hello(PROTOCOL_VERSION, f"p{n}", password="nope"))
        if error_codes(effects, conn):
            answered_at.append(0.0)
            continue
        assert effects == []  # no answer yet: it comes later, at a tick
        delay = 0.0
        while not error_codes(cl.tick(cl.now + 0.25), conn):
            delay += 0.25
            assert delay < 60
        answered_at.append(delay + 0.25)
    assert answered_at[:2] == [0.0, 0.0]
    # Longer than the 10 s hello deadline too: the answer is still the password error.
    assert answered_at[2:] == [2.0, 4.0, 8.0, 16.0, 30.0]
    # Another address is not slowed down, and the right password still works at once.
    other = cl.connect(address="10.0.0.10")
    assert error_codes(cl.send(other, Hello(PROTOCOL_VERSION, "q", password="nope")), other) == [
        "password"
    ]
    ok = cl.connect(address="10.0.0.9")
    assert kinds(cl.send(ok, Hello(PROTOCOL_VERSION, "r", password="pw")), ok) == ["welcome"]


def make_certificate(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


async def test_tls_with_a_self_signed_certificate(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/t.db",
        spool=tmp_path / "s.jsonl",
        certfile=cert,
        keyfile=key,
    )
    async with open_server(options) as server:
        trusting = ssl.create_default_context(cafile=str(cert))
        welcome, _ = await hello_over(
            f"wss://127.0.0.1:{server.port}", Hello(PROTOCOL_VERSION, "ann"), ssl=trusting
        )
        assert isinstance(welcome, Welcome)
        # A client that does not trust the certificate cannot connect.
        with pytest.raises(ssl.SSLCertVerificationError):
            await hello_over(
                f"wss://127.0.0.1:{server.port}",
                Hello(PROTOCOL_VERSION, "bob"),
                ssl=ssl.create_default_context(),
            )
        # Plain ws:// is not served on a TLS port.
        with pytest.raises((ConnectionClosed, OSError, asyncio.TimeoutError, Exception)):
            await hello_over(f"ws://127.0.0.1:{server.port}", Hello(PROTOCOL_VERSION, "eve"))


async def test_a_bad_certificate_stops_the_start_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "nothing.pem"
    bad.write_text("not a certificate")
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/b.db",
        spool=tmp_path / "s.jsonl",
        certfile=bad,
        keyfile=bad,
    )
    with pytest.raises(StartupError, match="TLS certificate"):
        async with open_server(options):
            pass


async def test_connections_beyond_the_limit_are_told_to_come_back(tmp_path: Path) -> None:
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/l.db",
        spool=tmp_path / "s.jsonl",
        hub=HubConfig(max_connections=2),
    )
    async with open_server(options) as server:
        uri = f"ws://127.0.0.1:{server.port}"
        async with connect(uri), connect(uri), connect(uri) as third:
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(third.recv(), TIMEOUT)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013


def codes_of(cl: Clients, conn: int) -> list[str]:
    return [m.code for m in cl.messages(conn, Error)]


def wrong(cl: Clients, address: str, password: str = "nope") -> tuple[int, list[str]]:
    """A new connection from ``address`` says hello with ``password``: its answers now."""
    conn = cl.connect(address=address)
    return conn, kinds(cl.send(conn, Hello(PROTOCOL_VERSION, f"p{conn}", password=password)), conn)


def test_the_password_delay_never_overflows() -> None:
    # 2.0 ** 1024 overflows: from the 1,024th failure on, every wrong guess raised
    # OverflowError (closed at once with 1011: no delay at all, and a logged traceback).
    cl = Clients(
        HubConfig(
            password="pw",
            password_free_failures=0,
            password_max_delay_s=0.001,
            password_global_failures=10**6,
            max_opens_per_address=0,  # the password's limits alone (opens: test_budgets)
        )
    )
    for _ in range(1100):
        conn, answered = wrong(cl, "10.0.0.9")
        while not answered:
            answered = kinds(cl.tick(cl.now + 0.001), conn)
        assert answered == ["error"] and cl.closed[conn].code == 1008
        cl.disconnect(conn)
    cl.tick(cl.now + 0.01)
    assert wrong(cl, "10.0.0.9", "pw")[1] == ["welcome"]


def test_guesses_sent_at_once_from_one_address_wait_their_turn_and_so_does_the_right_one() -> None:
    cl = Clients(HubConfig(password="pw", password_free_failures=2, password_queue=2))
    answers: dict[int, list[str]] = {}
    conns = []
    for _ in range(4):
        conn, first = wrong(cl, "10.0.0.9")
        conns.append(conn)
        answers[conn] = first
    right, first = wrong(cl, "10.0.0.9", "pw")
    assert first == []  # not welcomed at once: the address is in its delay
    busy, first = wrong(cl, "10.0.0.9", "pw")  # a third waiting check is one too many
    assert first == ["error"] and codes_of(cl, busy) == ["password_busy"]
    assert cl.closed[busy].code == 1013
    # The first two are free; then 2 s, 4 s, one after the other; then the right one.
    assert [answers[c] for c in conns[:2]] == [["error"], ["error"]]
    welcomed_at = None
    start = cl.now
    while welcomed_at is None:
        cl.tick(cl.now + 0.25)
        if cl.messages(right, Welcome):
            welcomed_at = cl.now - start
        assert cl.now - start < 60
    assert welcomed_at == 2.0 + 4.0
    assert [codes_of(cl, c) for c in conns] == [["password"]] * 4


def test_guesses_from_many_addresses_share_a_server_wide_budget() -> None:
    # 5 failures per 10 s for the whole server: beyond, one check per 2 s, in turn.
    cl = Clients(
        HubConfig(password="pw", password_global_failures=5, password_global_window_s=10.0)
    )
    assert wrong(cl, "10.0.1.1", "pw")[1] == ["welcome"]  # a player who knows it
    for n in range(5):
        assert wrong(cl, f"10.0.0.{n}")[1] == ["error"]
    # The budget is spent: a new address waits its turn, right password or not...
    late, first = wrong(cl, "10.0.0.99", "pw")
    assert first == []
    guess, first = wrong(cl, "10.0.0.98")
    assert first == []
    # ... but an address that gave the right password before does not.
    assert wrong(cl, "10.0.1.1", "pw")[1] == ["welcome"]
    cl.tick(cl.now + 1.9)
    assert not cl.messages(late, Welcome)
    cl.tick(cl.now + 0.1)
    assert cl.messages(late, Welcome) and not cl.messages(guess, Error)
    cl.tick(cl.now + 2.0)
    assert codes_of(cl, guess) == ["password"]


async def test_no_number_of_wrong_passwords_puts_a_traceback_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # From the 1,024th failure of an address on, 2.0 ** failures overflowed: each wrong
    # guess was closed at once with 1011 and logged a traceback (a way to fill the disk).
    options = ServeOptions(
        port=0,
        db=f"sqlite:///{tmp_path}/p.db",
        spool=tmp_path / "s.jsonl",
        hub=HubConfig(
            password="pw",
            password_free_failures=0,
            password_max_delay_s=0.0001,
            password_global_failures=10**6,
            max_opens_per_address=0,  # the password's limits alone (opens: test_budgets)
        ),
    )
    codes: set[tuple[str, int | None]] = set()
    async with open_server(options) as server:
        uri = f"ws://127.0.0.1:{server.port}"
        for _ in range(1030):
            async with connect(uri) as ws:
                await ws.send(encode(Hello(PROTOCOL_VERSION, "eve", password="guess")))
                answer = decode_server(await asyncio.wait_for(ws.recv(), TIMEOUT))
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), TIMEOUT)
                rcvd = closed.value.rcvd
                codes.add((getattr(answer, "code", ""), rcvd.code if rcvd else None))
    assert codes == {("password", 1008)}
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
