"""The private-network guard's table: which addresses a fetch may connect to, and why not.

Our own table, from IANA's special-purpose address registries (RFC 6890 and its updates),
and not the interpreter's ``ipaddress`` flags: ``is_global`` and ``is_private`` changed
between 3.11 and 3.13 (3.11 and early 3.12 call NAT64 and 6to4 addresses global), and the
suite runs on more than one interpreter. Anything but public unicast is refused.

An IPv6 address that carries an IPv4 address the network delivers to (IPv4-mapped, NAT64's
well-known prefix ``64:ff9b::/96``, 6to4 ``2002::/16``) is judged by that IPv4 address; the
forms whose IPv4 address is hidden or local (IPv4-compatible, Teredo, local-use NAT64
``64:ff9b:1::/48``) are refused, as is everything outside ``2000::/3``, IPv6's global unicast.
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

LOOPBACK = "a loopback address"
UNSPECIFIED = "an unspecified address"
MULTICAST = "a multicast address"
LINK_LOCAL = "a link-local address"
PRIVATE = "a private address"
SHARED = "a shared (carrier-grade NAT) address"
RESERVED = "a reserved address"

# The instance metadata service, by its IPv4 and IPv6 addresses.
METADATA_ADDRESSES = {ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254")}

_IPV4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(network), kind)
    for network, kind in (
        ("0.0.0.0/32", UNSPECIFIED),
        ("0.0.0.0/8", RESERVED),  # "this network"
        ("10.0.0.0/8", PRIVATE),
        ("100.64.0.0/10", SHARED),
        ("127.0.0.0/8", LOOPBACK),
        ("169.254.0.0/16", LINK_LOCAL),
        ("172.16.0.0/12", PRIVATE),
        ("192.0.0.0/24", RESERVED),  # IETF protocol assignments
        ("192.0.2.0/24", RESERVED),  # documentation
        ("192.88.99.0/24", RESERVED),  # the 6to4 relays' anycast
        ("192.168.0.0/16", PRIVATE),
        ("198.18.0.0/15", RESERVED),  # benchmarking
        ("198.51.100.0/24", RESERVED),  # documentation
        ("203.0.113.0/24", RESERVED),  # documentation
        ("224.0.0.0/4", MULTICAST),
        ("240.0.0.0/4", RESERVED),  # and the broadcast address
    )
)
_IPV6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(network), kind)
    for network, kind in (
        ("::/128", UNSPECIFIED),
        ("::1/128", LOOPBACK),
        ("::/96", RESERVED + " (IPv4-compatible, deprecated)"),
        ("64:ff9b:1::/48", RESERVED + " (local-use NAT64)"),
        ("100::/64", RESERVED),  # discard-only
        ("2001::/32", RESERVED + " (Teredo)"),
        ("2001::/23", RESERVED),  # IETF protocol assignments
        ("2001:db8::/32", RESERVED),  # documentation
        ("3fff::/20", RESERVED),  # documentation
        ("fc00::/7", PRIVATE),  # unique local
        ("fe80::/10", LINK_LOCAL),
        ("fec0::/10", PRIVATE + " (site-local, deprecated)"),
        ("ff00::/8", MULTICAST),
    )
)
_GLOBAL_UNICAST = IPv6Network("2000::/3")
_MAPPED = IPv6Network("::ffff:0:0/96")
_NAT64 = IPv6Network("64:ff9b::/96")
_6TO4 = IPv6Network("2002::/16")


def parse(address: str) -> IPv4Address | IPv6Address:
    """``address`` as an IP address (an IPv6 zone, ``%eth0``, dropped)."""
    return ipaddress.ip_address(address.split("%", 1)[0])


def embedded_ipv4(ip: IPv6Address) -> tuple[IPv4Address, str] | None:
    """The IPv4 address an IPv6 address delivers to, and by what, for the forms judged by it."""
    if ip in _MAPPED:
        return IPv4Address(int(ip) & 0xFFFFFFFF), "IPv4-mapped"
    if ip in _NAT64:
        return IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
    if ip in _6TO4:
        return IPv4Address((int(ip) >> 80) & 0xFFFFFFFF), "6to4"
    return None


def classify(address: str) -> str | None:
    """Why ``address`` is refused, in words (``a loopback address``), or None: public."""
    ip = parse(address)
    if isinstance(ip, IPv6Address):
        return _classify_ipv6(ip)
    return next((kind for network, kind in _IPV4 if ip in network), None)


def _classify_ipv6(ip: IPv6Address) -> str | None:
    embedded = embedded_ipv4(ip)
    if embedded is not None:
        ipv4, form = embedded
        kind = classify(str(ipv4))
        if kind is None or form == "IPv4-mapped":  # the IPv4 address itself, written so
            return kind
        return f"{kind} ({ipv4}, by {form})"
    listed = next((kind for network, kind in _IPV6 if ip in network), None)
    if listed is not None:
        return listed
    return None if ip in _GLOBAL_UNICAST else RESERVED


def is_blocked_address(address: str) -> bool:
    """True for anything but a public unicast address: loopback, private, link-local (the
    instance metadata service), shared, reserved, multicast, unspecified."""
    return classify(address) is not None


def describe_blocked(address: str) -> str:
    """Why ``address`` is refused, in words, and the setting that allows it."""
    kind = classify(address) or RESERVED
    ip = parse(address)
    embedded = embedded_ipv4(ip) if isinstance(ip, IPv6Address) else None
    if ip in METADATA_ADDRESSES or (embedded is not None and embedded[0] in METADATA_ADDRESSES):
        kind += " (the instance metadata service)"
    return f"refused {address}: {kind} (set FETCH_ALLOW_PRIVATE_NETWORKS=true for local feeds)"
