"""Saved identities: every one per server, however its URL is spelled, readable by the user only."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from client.config import LOCAL_KEY, Identity, TokenStore, local_db_url, server_key


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("ws://127.0.0.1:8765", "ws://127.0.0.1:8765"),
        ("WS://LocalHost:8765/", "ws://localhost:8765"),
        ("ws://example.org", "ws://example.org:80"),
        ("wss://example.org/race", "wss://example.org:443"),
        ("ws://[::1]:9000", "ws://[::1]:9000"),
        (LOCAL_KEY, LOCAL_KEY),
    ],
)
def test_server_key(url: str, key: str) -> None:
    assert server_key(url) == key


def test_save_load_forget(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "yukon")
    assert store.load("ws://a:1") is None
    store.save("ws://a:1", Identity("alice", "t1"))
    store.save("ws://A:1/", Identity("alice", "t2"))  # the same server
    store.save(LOCAL_KEY, Identity("solo", "t3"))
    assert store.load("ws://a:1") == Identity("alice", "t2")
    assert store.load(LOCAL_KEY) == Identity("solo", "t3")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    store.forget("ws://a:1")
    assert store.load("ws://a:1") is None and store.load(LOCAL_KEY) is not None
    assert [p.name for p in store.directory.iterdir()] == ["tokens.json"], "no temporary left"


def test_a_damaged_file_is_as_good_as_none(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.path.write_text("{not json")
    assert store.load("ws://a:1") is None
    store.path.write_text('{"ws://a:1": {"name": 3}}')
    assert store.load("ws://a:1") is None
    store.save("ws://a:1", Identity("alice", "t"))
    assert store.load("ws://a:1") == Identity("alice", "t")


def test_the_local_database_lives_in_the_data_directory(tmp_path: Path) -> None:
    assert local_db_url(tmp_path / "data") == f"sqlite:///{tmp_path / 'data' / 'local.db'}"
    assert (tmp_path / "data").is_dir()


def test_every_identity_on_a_server_is_kept_and_the_last_used_is_the_default(
    tmp_path: Path,
) -> None:
    store = TokenStore(tmp_path)
    store.save("ws://a:1", Identity("alice", "t1"))
    store.save("ws://a:1", Identity("bob", "t2"))
    assert store.load("ws://a:1") == Identity("bob", "t2")  # the last used
    assert store.load("ws://a:1", "ALICE") == Identity("alice", "t1")  # names fold case
    assert store.load("ws://a:1", "carol") is None
    assert store.names("ws://a:1") == ["alice", "bob"]
    store.save("ws://a:1", Identity("alice", "t1"))
    assert store.load("ws://a:1") == Identity("alice", "t1")
    store.forget("ws://a:1", "alice")  # a token the server no longer knows: that one only
    assert store.load("ws://a:1", "alice") is None
    assert store.load("ws://a:1") == Identity("bob", "t2")


def test_a_file_of_one_identity_per_server_is_still_read(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.path.write_text('{"ws://a:1": {"name": "alice", "token": "t1"}}')
    assert store.load("ws://a:1") == Identity("alice", "t1")
    store.save("ws://a:1", Identity("bob", "t2"))
    assert store.load("ws://a:1", "alice") == Identity("alice", "t1")


def test_a_device_id_is_made_once_per_server_and_kept(tmp_path: Path) -> None:
    """``hello.device`` (docs/protocol.md 4.31): one id for every name on a server, kept
    across runs, another for another server."""
    import re

    store = TokenStore(tmp_path)
    first = store.device("ws://a.example:8765")
    assert re.fullmatch(r"[A-Za-z0-9_-]{24}", first)
    assert TokenStore(tmp_path).device("ws://a.example:8765") == first
    assert store.device("ws://b.example:8765") != first
