"""The vendored msgpack codec of the browser client is the pinned upstream file, and it
speaks the same msgpack as the server's Python ``msgpack``.

``server/pages/web/vendor/fetch-msgpack`` downloads and checks the file against the npm registry;
these tests are offline: the committed file must be the pinned bundle wrapped by that
script, byte for byte, and Node must decode what Python encodes (and re-encode it to the
same bytes) and encode what Python decodes to the same message.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
from types import ModuleType
from typing import Any

import msgpack

from .node import HERE, WEB, run_node

VENDOR = WEB / "vendor"
#: The whole browser client must stay small; the codec may take this much of it.
CODEC_BUDGET = 40_000


def _fetch_script() -> ModuleType:
    path = VENDOR / "fetch-msgpack"
    loader = importlib.machinery.SourceFileLoader("fetch_msgpack", str(path))
    spec = importlib.util.spec_from_loader("fetch_msgpack", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_committed_codec_is_the_pinned_bundle_wrapped() -> None:
    fetch = _fetch_script()
    vendored = (VENDOR / "msgpack.mjs").read_bytes()
    assert hashlib.sha256(vendored).hexdigest() == fetch.VENDORED_SHA256
    bundle = fetch.unwrap(vendored)
    assert hashlib.sha256(bundle).hexdigest() == fetch.BUNDLE_SHA256
    assert fetch.wrap(bundle) == vendored
    assert f"@msgpack/msgpack {fetch.VERSION}" in vendored.decode()
    assert len(vendored) < CODEC_BUDGET


def test_the_licence_is_kept_beside_it() -> None:
    licence = (VENDOR / "msgpack.LICENSE").read_text()
    assert "Copyright 2019 The MessagePack Community." in licence
    assert "Permission to use, copy, modify, and/or distribute this software" in licence


def _plain(value: Any) -> Any:
    """A decoded message as msgpack_check.mjs writes it in JSON (bin as {"$bin": hex})."""
    if isinstance(value, bytes):
        return {"$bin": value.hex()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


MESSAGES: list[dict[str, Any]] = [
    {"t": "hello", "v": 1, "name": "Ada", "token": None, "password": None},
    {"t": "hello", "v": 1, "name": None, "token": "x" * 40, "password": "pässwörd"},
    {
        "t": "accepted",
        "seq": 2**31 - 1,
        "move": "KD>1",
        "turned": "AH",
        "score": 15,
        "moves": 3,
        "foundations": 1,
        "state": "playing",
        "elapsed_ms": 2**40 + 5,
    },
    {"t": "mixed", "bin": b"\x00\x01\xfe\xff", "big": b"y" * 300, "neg": [-1, -32, -33, -129]},
    {"t": "widths", "n": [0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**53 - 1]},
    {"t": "text", "s": "Zoë 🦌 " * 10, "long": "z" * 70_000, "flags": [True, False]},
]


def test_the_codec_and_python_msgpack_agree() -> None:
    packed = [msgpack.packb(m, use_bin_type=True) for m in MESSAGES]
    answer = run_node(HERE / "msgpack_check.mjs", {"decode": [p.hex() for p in packed]})
    assert answer["decoded"] == [_plain(m) for m in MESSAGES]
    assert answer["reencoded"] == [p.hex() for p in packed]
    encoded = bytes.fromhex(answer["encoded"])
    assert msgpack.unpackb(encoded, raw=False) == {
        "t": "hello",
        "v": 1,
        "name": "Zoë 🦌",
        "token": None,
        "password": None,
        "seed": b"\x00\x01\x02\xfe\xff",
        "seq": 2**31 - 1,
        "elapsed_ms": 2**40,
        "delta": -129,
        "ready": True,
        "list": [0, 127, 128, 255, 256, 65535, 65536, -1, -32, -33],
    }
    # Same bytes as Python's encoding of the same message: smallest widths, str not bin.
    assert encoded == msgpack.packb(msgpack.unpackb(encoded, raw=False), use_bin_type=True)
