"""Whose is a connection: address keys and forwarded addresses (server/runtime/limits.py)."""

from __future__ import annotations

import pytest

from server.runtime.limits import address_key, client_address, parse_networks


def test_an_ipv6_address_counts_by_its_64_and_an_ipv4_address_by_itself() -> None:
    assert (
        address_key("2001:db8:0:1:abcd::1")
        == address_key("2001:db8:0:1::2")
        == ("2001:db8:0:1::/64")
    )
    assert address_key("2001:db8:0:2::1") != address_key("2001:db8:0:1::1")
    assert address_key("192.0.2.1") == "192.0.2.1" != address_key("192.0.2.2")
    assert address_key("::ffff:192.0.2.1") == "192.0.2.1"  # IPv4 seen through IPv6
    assert address_key("fe80::1%eth0") == "fe80::/64"
    assert address_key("") == "" and address_key("not an address") == "not an address"


def test_a_forwarded_address_counts_only_from_a_trusted_proxy() -> None:
    proxies = parse_networks("127.0.0.1, 10.0.0.0/8")
    assert client_address("192.0.2.9", ["198.51.100.1"], proxies) == "192.0.2.9"
    assert client_address("127.0.0.1", ["198.51.100.1"], proxies) == "198.51.100.1"
    assert client_address("127.0.0.1", ["198.51.100.1"], []) == "127.0.0.1"
    # From the right: the first hop that is not a trusted proxy; what the client wrote
    # to the left of it proves nothing.
    assert client_address("127.0.0.1", ["6.6.6.6, 198.51.100.1", "10.1.2.3"], proxies) == (
        "198.51.100.1"
    )
    # A malformed hop ends the search at the last trusted one; no header: the proxy itself.
    assert client_address("127.0.0.1", ["junk, 10.1.2.3"], proxies) == "10.1.2.3"
    assert client_address("127.0.0.1", [], proxies) == "127.0.0.1"
    assert client_address("127.0.0.1", ["2001:db8::7"], proxies) == "2001:db8::7"


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    assert [str(n) for n in parse_networks("::1 10.0.0.0/8,192.0.2.1")] == [
        "::1/128",
        "10.0.0.0/8",
        "192.0.2.1/32",
    ]
    with pytest.raises(ValueError, match=r"'proxy\.example'"):
        parse_networks("proxy.example")


def test_a_loopback_address_tells_nobody_apart_for_the_rating_rules() -> None:
    from server.runtime.limits import telling_address

    assert telling_address("203.0.113.7") == "203.0.113.7"
    assert telling_address("2001:db8::1") == "2001:db8::/64"
    assert telling_address("127.0.0.1") == telling_address("::1") == ""
    assert telling_address("") == telling_address("not an address") == ""
