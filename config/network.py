"""This machine's addresses on the venue's network, so phones can be pointed at it."""

from __future__ import annotations

import socket
import struct
import sys

_SIOCGIFADDR = 0x8915  # Linux ioctl: an interface's IPv4 address


def _linux_interface_addresses() -> list[str]:
    import fcntl

    found = []
    for _index, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                packed = fcntl.ioctl(
                    probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name[:15].encode())
                )
            except OSError:
                continue  # interface without an IPv4 address
            found.append(socket.inet_ntoa(packed[20:24]))
    return found


def _resolver_addresses() -> list[str]:
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


def lan_addresses() -> list[str]:
    """IPv4 addresses of this machine other than loopback, most useful first."""
    candidates = _linux_interface_addresses() if sys.platform.startswith("linux") else []
    candidates += _resolver_addresses()
    seen: list[str] = []
    for address in candidates:
        if not address.startswith("127.") and address not in seen:
            seen.append(address)
    return seen


def local_hostnames() -> list[str]:
    """Names a laptop answers to: loopback, its LAN addresses, its host name."""
    names = ["localhost", "127.0.0.1", "[::1]", *lan_addresses()]
    host = socket.gethostname()
    if host:
        names += [host, f"{host}.local"]
    return names
