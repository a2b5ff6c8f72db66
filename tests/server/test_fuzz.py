"""Bad input against a live server: structured (hypothesis) and random bytes.

The server runs as its own process with the default flood and strike limits. Every bad
message must get an answer (an error, or whatever the message asked for) or a close of
its connection, the server must stay up with no traceback in its log, and real races
running beside the fuzzer must finish with correct results (``bench.faults.drill_fuzz``;
``python -m bench.faults fuzz`` sends 100,000).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.bot import Player
from bench.faults import FuzzTally, drill_fuzz, fuzz_connection
from bench.harness import ServerProcess

TYPES = ["hello", "create", "join", "watch", "ready", "start", "move", "undo", "resign"]
TYPES += ["leave", "rematch", "daily", "board", "history", "welcome", "progress"]
FIELDS = ["v", "name", "token", "password", "seq", "move", "room", "rules", "code"]
FIELDS += ["max_players", "undo", "time_limit", "ready", "kind", "date", "offset", "limit"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=40),
    st.binary(max_size=40),
    st.sampled_from(["7S>4", "AH>F", "C", "YU1-C-AAAAAAB", "daily", "deal", ""]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.integers(0, 9)), inner, max_size=4),
    ),
    max_leaves=12,
)
messages = st.builds(
    lambda t, body: {"t": t, **body},
    st.one_of(st.sampled_from(TYPES), scalars),
    st.dictionaries(st.sampled_from(FIELDS), values, max_size=5),
)


def pack(value: Any) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


frames = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=60),
    values.map(pack),
    messages.map(pack),
    messages.map(pack).flatmap(lambda b: st.integers(0, len(b)).map(lambda n: b[:n])),
    messages.map(pack).map(lambda b: b + b"\xc1"),
)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    server = ServerProcess.race_server(f"sqlite:///{tmp}/yukon.db", tmp / "spool.jsonl")
    try:

        async def register() -> str:
            p = Player(server.url, "fuzzer", random.Random(1))
            await p.connect()
            await p.hello()
            await p.close()
            assert p.token is not None
            return p.token

        yield server, asyncio.run(register())
    finally:
        server.kill()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(frames, min_size=1, max_size=12), with_hello=st.booleans())
def test_structured_bad_messages_get_an_error_or_a_close(
    live: tuple[ServerProcess, str], batch: list[bytes | str], with_hello: bool
) -> None:
    server, token = live
    tally = FuzzTally()
    asyncio.run(fuzz_connection(server.url, batch, tally, token=token if with_hello else None))
    assert tally.silent == 0
    assert tally.answered + tally.closed == len(batch)
    assert server.alive()
    assert server.tracebacks() == []


async def test_random_bad_input_beside_real_races() -> None:
    figures = await drill_fuzz("sqlite", messages=5000, rooms=2)
    assert figures["problems"] == [], figures
    start, peak, _ = figures["server RSS MiB (start, max, end)"]  # type: ignore[misc]
    assert peak - start < 64, figures


def test_a_silent_server_would_be_noticed(tmp_path: Path) -> None:
    """The tally is not vacuous: frames sent where nothing answers count as silent."""
    tally = FuzzTally()
    asyncio.run(fuzz_connection("ws://127.0.0.1:9", [b"x"], tally))
    assert tally.silent == 1
