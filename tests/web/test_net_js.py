"""``server/pages/web/net.js`` follows a ``route`` (docs/protocol.md 4.25) as the protocol asks.

Run under Node with a stand-in WebSocket (``net_check.mjs``): the hello says ``follow``;
on ``route`` a new socket opens at once with ``?node=`` while the old one serves on (make
before break: what comes on it is shown, what the app sends goes on it), what the app
sends between the new socket's hello and its welcome waits and then goes there, and the
old socket is closed once the new one is welcomed; the app never sees the route. Later
sockets ask for the node again until one fails before its welcome.
"""

from __future__ import annotations

import re

from .node import HERE, run_node


def test_a_route_moves_the_socket_to_the_rooms_node_and_resumes() -> None:
    seen = run_node(HERE / "net_check.mjs", None)
    first, second = seen["hellos"]
    # One device id for every hello of this browser on this server (4.31), kept.
    device = first.pop("device")
    assert second.pop("device") == device == seen["device"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{24}", device)
    assert first == {"t": "hello", "v": 1, "follow": True, "name": "ann"}
    assert second == {"t": "hello", "v": 1, "follow": True, "token": "TOK"}
    assert seen["urls"][:3] == [
        "ws://lb.example:8765/",
        "ws://lb.example:8765/?node=node-2",
        "ws://lb.example:8765/?node=node-2",
    ]
    assert seen["oldOpen"] == {"closed": None, "online": True}
    assert seen["whileOpening"] and seen["heldSent"]
    assert seen["heldBeforeWelcome"] == 1  # the hello alone
    assert seen["firstSent"] == [["hello", None], ["ready", True]]
    assert seen["secondSent"] == [["hello", None], ["ready", False]]
    assert seen["firstClosed"] == 1000
    assert seen["messages"] == ["welcome", "room", "error", "welcome"]
    assert seen["afterMove"] == {"node": "node-2", "online": True}
    assert seen["moving"] == 0  # the player is never shown a move
    # A socket to the node that failed before its welcome: the next asks any node.
    assert seen["lastNode"] is None
    assert seen["fourth"] == "ws://lb.example:8765/"
    # The room's node refused the follow's hello: the page stays, its held ready goes on
    # the old socket, the token is kept.
    assert seen["refusal"] == {
        "oldSent": ["hello", "ready"],
        "newSent": ["hello"],
        "newClosed": 1000,
        "node": None,
        "online": True,
        "token": "TOK",
    }
    assert seen["withNode"] == [
        "ws://h:8765/?node=n2",
        "wss://h/yukon/?a=1&node=n3",
        "ws://h/",
    ]


def test_an_invite_links_page_looks_its_rooms_node_up_and_connects_there() -> None:
    """``roomNode`` (docs/protocol.md 1.6, 4.25) gives the node an open room's JSON names,
    and null for everything else, a failure included (the page then connects as before);
    the Link's first socket waits for it and asks for that node, later ones too until one
    fails before its welcome."""
    seen = run_node(HERE / "lookup_check.mjs", None)
    assert seen["looked"] == {
        "cluster": "node-2",
        "alone": None,
        "older": None,
        "closed": None,
        "badId": None,
        "longId": None,
        "notFound": None,
        "notJson": None,
        "array": None,
        "refused": None,
        "timedOut": None,
    }
    assert seen["asked"] == [
        {
            "url": "/yukon/r/K7WQM?format=json&for=join",
            "cache": "no-store",
            "accept": "application/json",
        }
    ]
    assert seen["beforeAnswer"] == 0  # no socket before the look-up's answer
    assert seen["urls"] == [
        "wss://h/yukon/?node=node-2",
        "wss://h/yukon/?node=node-2",
        "wss://h/yukon/",
    ]
    assert seen["plainUrl"] == "wss://h/yukon/"
    assert seen["connecting"] == "connecting"
