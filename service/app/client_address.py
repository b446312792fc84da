"""The client a rate limit or a stream bound counts: one key per IPv4 address, one per IPv6 network.

One IPv6 client usually holds a whole /64 (SLAAC, privacy addresses, a home router's prefix):
keyed by its full address, it could take a fresh address for every request and never meet a
limit (issue 32). So an IPv6 address counts as its network of ``ipv6_prefix`` bits
(``HEARTS_IPV6_PREFIX``, 64 by default); an IPv4 address (an IPv4-mapped IPv6 one included,
``::ffff:192.0.2.1``, as a dual-stack socket reports it) counts as itself. Text that is no IP
address (a Unix socket's peer, nothing at all) counts as written.
"""

from __future__ import annotations

import ipaddress

DEFAULT_IPV6_PREFIX = 64
UNKNOWN = "unknown"


def client_key(address: str | None, ipv6_prefix: int = DEFAULT_IPV6_PREFIX) -> str:
    """The key ``address`` counts under: ``192.0.2.1``, ``2001:db8:1:2::/64``."""
    if not address:
        return UNKNOWN
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        # The scope (fe80::1%eth0) names the server's interface, not the client: left out.
        network = ipaddress.IPv6Network((int(ip), ipv6_prefix), strict=False)
        return str(network)
    return str(ip)
