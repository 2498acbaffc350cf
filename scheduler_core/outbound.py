"""Where the scheduler connects on a user's say-so (extender URLs, real clusters' API servers): never to a
link-local or cloud-metadata address, written as such or embedded in an IPv6 address (IPv4-mapped ::ffff:a.b.c.d,
IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32, whose server and client are both
IPv4 addresses)."""
from __future__ import annotations

import ipaddress
import socket

REFUSED_NETWORKS = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"),
                    ipaddress.ip_network("fd00:ec2::254/128"))
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(addr: ipaddress.IPv6Address) -> list:
    """The IPv4 addresses an IPv6 address carries (none for a plain one)."""
    low32 = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    out = []
    if addr.ipv4_mapped is not None:
        out.append(addr.ipv4_mapped)
    if addr in IPV4_COMPATIBLE or addr in NAT64:
        out.append(low32)
    if addr.sixtofour is not None:
        out.append(addr.sixtofour)
    if addr.teredo is not None:
        out.extend(addr.teredo)
    return out


def refused_address(ip: str) -> bool:
    """Whether ``ip`` (a numeric address, an IPv6 zone allowed) is link-local or a cloud metadata address, directly
    or through an IPv4 address it embeds."""
    try:
        addr = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return False
    candidates = [addr] + (embedded_ipv4(addr) if addr.version == 6 else [])
    return any(a in net for a in candidates for net in REFUSED_NETWORKS if a.version == net.version)


def numeric_addresses(host: str) -> list:
    """The addresses a numeric host spells (inet_aton forms such as "2852039166" too); [] for a DNS name."""
    try:
        return [ai[4][0] for ai in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM,
                                                     flags=socket.AI_NUMERICHOST)]
    except (socket.gaierror, UnicodeError, ValueError):
        return []


def host_problem(host: str) -> str | None:
    """Why a connection to the numeric ``host`` is refused (None: allowed, or a DNS name, which is checked as
    resolved where the caller connects)."""
    for ip in numeric_addresses(host):
        if refused_address(ip):
            return f"address {ip} is link-local or a cloud metadata address"
    return None
