"""Invite links (client/invite.py): a room's link from the server dialled, and a link read
back into the server to dial and the room to go to."""

from __future__ import annotations

import pytest

from client.invite import (
    ROOM_ALPHABET,
    ROOM_CODE_LENGTH,
    LinkError,
    Target,
    invite_link,
    normalize_room,
    parse_target,
    replay_link,
)
from server.rooms import state


def test_the_alphabet_is_the_servers() -> None:
    """The client keeps its own copy (client/ never imports server/): it must not drift."""
    assert ROOM_ALPHABET == state.ROOM_ALPHABET
    assert ROOM_CODE_LENGTH == state.ROOM_CODE_LENGTH


@pytest.mark.parametrize(
    ("server", "link"),
    [
        ("ws://race.example:8765", "http://race.example:8765/r/K7WQM"),
        ("ws://race.example:8765/", "http://race.example:8765/r/K7WQM"),
        ("wss://race.example:8443", "https://race.example:8443/r/K7WQM"),
        ("wss://race.example", "https://race.example/r/K7WQM"),  # 443 either way
        ("ws://127.0.0.1:40123", "http://127.0.0.1:40123/r/K7WQM"),
        ("ws://[::1]:8765", "http://[::1]:8765/r/K7WQM"),
        ("WSS://Race.Example:8443", "https://race.example:8443/r/K7WQM"),
        # A server behind a reverse proxy at a path: the prefix stays.
        ("wss://example.org/yukon", "https://example.org/yukon/r/K7WQM"),
        ("wss://example.org/games/yukon/", "https://example.org/games/yukon/r/K7WQM"),
        # A user and password are never put in a link that is made to be passed around.
        ("wss://me:secret@example.org:8443", "https://example.org:8443/r/K7WQM"),
        ("ws://race.example:8765/?x=1#top", "http://race.example:8765/r/K7WQM"),
    ],
)
def test_invite_link_from_the_server_dialled(server: str, link: str) -> None:
    assert invite_link(server, "K7WQM") == link


@pytest.mark.parametrize("server", ["http://race.example:8765", "race.example:8765", "ws://"])
def test_invite_link_needs_a_websocket_address(server: str) -> None:
    with pytest.raises(ValueError, match="not a ws:// or wss:// address"):
        invite_link(server, "K7WQM")


@pytest.mark.parametrize(
    ("given", "target"),
    [
        # Invite links, in every spelling yukon play takes.
        ("http://race.example:8765/r/K7WQM", Target("ws://race.example:8765/", "K7WQM")),
        ("https://race.example:8443/r/K7WQM", Target("wss://race.example:8443/", "K7WQM")),
        ("ws://race.example:8765/r/K7WQM", Target("ws://race.example:8765/", "K7WQM")),
        ("wss://race.example/r/K7WQM", Target("wss://race.example/", "K7WQM")),
        ("race.example:8765/r/K7WQM", Target("ws://race.example:8765/", "K7WQM")),
        ("  HTTP://race.example:8765/r/k7wqm/  ", Target("ws://race.example:8765/", "K7WQM")),
        ("http://race.example:8765/r/K7WQM?a=b#x", Target("ws://race.example:8765/", "K7WQM")),
        ("https://example.org/yukon/r/K7WQM", Target("wss://example.org/yukon/", "K7WQM")),
        ("http://[::1]:8765/r/K7WQM", Target("ws://[::1]:8765/", "K7WQM")),
        # Servers, as before: dialled as written; no scheme is ws://.
        ("ws://race.example:8765", Target("ws://race.example:8765")),
        ("wss://race.example", Target("wss://race.example")),
        ("race.example:8765", Target("ws://race.example:8765")),
        (" 127.0.0.1:8765 ", Target("ws://127.0.0.1:8765")),
        ("wss://example.org/yukon", Target("wss://example.org/yukon")),
        # Issue 42, item 6: the server's page, as a browser opens it (the README's
        # address): the same server's websocket, https as wss, a prefix kept.
        ("http://race.example:8765", Target("ws://race.example:8765")),
        ("http://127.0.0.1:8765/", Target("ws://127.0.0.1:8765")),
        ("https://example.org/yukon/?x=1#top", Target("wss://example.org/yukon")),
        ("HTTPS://[::1]:8443/", Target("wss://[::1]:8443")),
    ],
)
def test_parse_target(given: str, target: Target) -> None:
    assert parse_target(given) == target


@pytest.mark.parametrize("room", ["K7WQM", "22222", "ZZZZZ"])
def test_a_link_read_back_is_the_link_shown(room: str) -> None:
    for server in ("ws://race.example:8765", "wss://example.org/yukon/", "ws://[::1]:1"):
        link = invite_link(server, room)
        target = parse_target(link)
        assert target.room == room
        assert invite_link(target.url, room) == link


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("", "no address given"),
        ("ftp://race.example/r/K7WQM", "a ftp:// address is not one yukon play can use"),
        ("mailto://race.example", "a mailto:// address is not one yukon play can use"),
        ("http://race.example/r/K7WQM/extra", "is not a room's invite link"),
        ("http://race.example/r/K7WQ", "'K7WQ' is not a room code"),
        ("http://race.example/r/K7WQMX", "'K7WQMX' is not a room code"),
        ("http://race.example/r/K0WQM", "'K0WQM' is not a room code"),  # no zero
        ("http://race.example/r/", "'' is not a room code"),
        ("ws://race.example/r/hello", "'hello' is not a room code"),
        ("http:///r/K7WQM", "no host in the address"),
        ("http://[::1/r/K7WQM", "not an address"),
        ("http://race.example:99999/r/K7WQM", "the port is not a number from 0 to 65535"),
        ("http://race.example:port/r/K7WQM", "the port is not a number"),
    ],
)
def test_bad_addresses_are_one_line(given: str, says: str) -> None:
    with pytest.raises(LinkError) as caught:
        parse_target(given)
    message = str(caught.value)
    assert says in message and "\n" not in message


def test_normalize_room() -> None:
    assert normalize_room(" k7wqm ") == "K7WQM"
    assert normalize_room("K7WQI") is None  # no I
    assert normalize_room("K7WQ") is None


def test_a_replay_link_is_on_the_server_of_the_invite_links() -> None:
    assert (
        replay_link("ws://race.example:8765", "r-1", "bob")
        == "http://race.example:8765/replay/r-1/bob"
    )
    assert (
        replay_link("wss://u:p@example.org/yukon/", "r 2", "Jörg/x")
        == "https://example.org/yukon/replay/r%202/J%C3%B6rg%2Fx"
    )


def test_an_invite_only_rooms_link_carries_its_key_and_reads_back() -> None:
    """docs/protocol.md 4.32: the key is the link's ``?k=``, and ``yukon play`` takes it."""
    link = invite_link("ws://race.example:8765", "K7WQM", "aB3_-xY9zQ1w")
    assert link == "http://race.example:8765/r/K7WQM?k=aB3_-xY9zQ1w"
    assert parse_target(link) == Target("ws://race.example:8765/", "K7WQM", None, "aB3_-xY9zQ1w")
    assert parse_target(link + "#token=TOK").token == "TOK"
