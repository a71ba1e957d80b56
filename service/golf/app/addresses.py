"""Which IP addresses a webhook may reach: only globally routable ones, however they are written.

Python's ``is_global`` is not enough alone. Its tables change between Python versions (3.11.7 calls ``192.0.0.8``
global), and an IPv6 address may carry an IPv4 one that the network delivers to: the IPv4-mapped form
(``::ffff:a.b.c.d``, which a socket connects to as ``a.b.c.d``), NAT64 (``64:ff9b::a.b.c.d``, which a NAT64
gateway forwards to ``a.b.c.d``: ``64:ff9b::a9fe:a9fe`` is 169.254.169.254), 6to4 (``2002:AABB:CCDD::``) and
Teredo. So an address is public when Python says it is global, it is in none of the IANA special-purpose blocks
that are not globally reachable (listed here, so the answer does not depend on the Python version), and every IPv4
address it carries is public too. The IPv4-compatible (``::a.b.c.d``) and IPv4-translated (``::ffff:0:a.b.c.d``)
forms are routed nowhere on the internet: refused, whatever they carry.
"""

from __future__ import annotations

import ipaddress

IP = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network
# IANA IPv4 Special-Purpose Address Registry, the blocks not globally reachable (and multicast and the future use
# block). 192.0.0.0/24 is refused whole: its two global anycast addresses (.9, .10) are no webhook's host.
NOT_GLOBAL_V4 = tuple(
    _V4(block)
    for block in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)
# IANA IPv6 Special-Purpose Address Registry, the blocks not globally reachable, plus site-local (deprecated) and
# multicast. 2001::/23 holds a few global blocks (2001:3::/32, 2001:20::/28...): refused whole, as Python 3.11
# does. 64:ff9b::/96 (NAT64) and 2002::/16 (6to4) are judged by the IPv4 address they carry.
NOT_GLOBAL_V6 = tuple(
    _V6(block)
    for block in (
        "::/96",  # IPv4-compatible (deprecated), the unspecified and loopback addresses
        "::ffff:0:0/96",  # IPv4-mapped (judged as the IPv4 address, before this list)
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)
_NAT64 = _V6("64:ff9b::/96")
_LOW_32 = 0xFFFFFFFF


def carried_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a packet to ``address`` may end up at: its NAT64, 6to4 or Teredo ones."""
    if address in _NAT64:
        return [ipaddress.IPv4Address(int(address) & _LOW_32)]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    return []


def is_public(address: IP) -> bool:
    """Whether ``address`` is globally routable unicast, however written (see the module docstring)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return False  # a zone: a link's own address
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if any(address in block for block in NOT_GLOBAL_V6):
            return False
        return address.is_global and all(is_public(inner) for inner in carried_ipv4(address))
    return address.is_global and not any(address in block for block in NOT_GLOBAL_V4)
