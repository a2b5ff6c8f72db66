"""Whose is a connection: the address per-address limits count (pure: no I/O, no clock).

Per-address limits (connections, registrations, rooms, wrong passwords; docs/limits.md)
count by *key*, not by raw address. An IPv4 address is its own key, but one IPv6 host
usually holds a whole /64 and may pick any address in it: counting single IPv6 addresses
would let it make 2^64 fresh "addresses", so an IPv6 key is its /64 prefix.

Behind a reverse proxy every connection comes from the proxy. ``client_address`` then
takes the address the proxy forwards in ``X-Forwarded-For``, but only from a peer the
operator named as a trusted proxy: anyone else could write any address there.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

__all__ = ["Network", "address_key", "client_address", "parse_networks"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Length of the IPv6 prefix that counts as one address.
IPV6_PREFIX = 64


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip().split("%", 1)[0])  # no zone id ("fe80::1%eth0")
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped  # ::ffff:1.2.3.4 is the IPv4 host 1.2.3.4
    return ip


def address_key(address: str) -> str:
    """The key per-address limits count by: an IPv4 address, or an IPv6 /64 prefix.

    Anything that is not an IP address (a Unix socket, a test's empty string) is its own key.
    """
    ip = _ip(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)


def telling_address(address: str) -> str:
    """``address_key``, or "" for an address that tells nobody apart: loopback (players on
    the server's own machine, or a proxy beside it whose ``X-Forwarded-For`` is not
    trusted, so every player seems to come from it) and no address at all. What the
    rating rules' "one address" test compares (docs/ratings.md)."""
    ip = _ip(address)
    if ip is None or ip.is_loopback or ip.is_unspecified:
        return ""
    return address_key(address)


def parse_networks(text: str) -> list[Network]:
    """Trusted proxies as a comma- or space-separated list of addresses or networks
    (``127.0.0.1, 10.0.0.0/8, ::1``); ValueError names the first bad one."""
    networks: list[Network] = []
    for part in text.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{part!r} is not an IP address or network") from None
    return networks


def _trusted(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: Sequence[Network]) -> bool:
    return any(ip.version == net.version and ip in net for net in proxies)


def client_address(peer: str, forwarded: Sequence[str], proxies: Sequence[Network]) -> str:
    """The client's address: ``peer``, or, when ``peer`` is a trusted proxy, the address
    its ``X-Forwarded-For`` headers (``forwarded``, in the order received) name.

    Each proxy appends the address it got the request from, so the list is read from the
    right: the first entry that is not a trusted proxy is the client (entries left of it
    were written by the client itself and prove nothing). A malformed entry ends the
    search there: the address is then the last trusted hop's, never a made-up one.
    """
    ip = _ip(peer)
    if ip is None or not proxies or not _trusted(ip, proxies):
        return peer
    hops = [hop for header in forwarded for hop in header.split(",")]
    address = peer
    for hop in reversed(hops):
        hop_ip = _ip(hop)
        if hop_ip is None:
            break
        address = str(hop_ip)
        if not _trusted(hop_ip, proxies):
            break
    return address
