"""The network check of ``--offline`` and of the scoring step (contract section 10): no interface but loopback
up in this process's own network namespace, or one line that refuses to run the code.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from .names import NETWORK_DISABLED, excerpt, reason

_SIOCGIFFLAGS, _IFF_UP, _IFF_LOOPBACK = 0x8913, 0x1, 0x8  # <linux/sockios.h>, <net/if.h>


def network_refusal() -> str | None:
    """None when no network interface but loopback is up in this process's own network namespace; else the
    one line that refuses to run the code, naming the interfaces that are up (or saying that they could not
    be listed or read: the check fails closed) and the worker's setting that takes the network away.

    The names come from ``socket.if_nameindex()`` and ``/proc/self/net/dev`` (both this namespace's; never
    ``/sys/class/net``, which shows the host's interfaces inside another namespace), each one's flags from
    the ``SIOCGIFFLAGS`` ioctl: up means ``IFF_UP`` without ``IFF_LOOPBACK``."""
    names, problem = _interface_names()
    up: list[str] = []
    if not problem:
        try:
            import fcntl

            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        except (ImportError, OSError) as exc:
            problem = f"no socket to ask for their flags ({reason(exc)})"
        else:
            with probe:
                for name in names:
                    flags, problem = _interface_flags(fcntl, probe, name)
                    if problem:
                        break
                    if flags is not None and flags & _IFF_UP and not flags & _IFF_LOOPBACK:
                        up.append(name)
    how = (
        f"run the code without a network (on Codabench, a worker with {NETWORK_DISABLED}; docker run "
        '--network none), or, where the competition allows one, say [competition] network = "allowed" in its '
        "configuration (its steps then run without this check: no --offline)"
    )
    if problem:
        return (
            f"the network interfaces cannot be checked here ({problem}), so a network may be up: the team's "
            f"code is not run; {how}"
        )
    if up:
        shown = ", ".join(excerpt(name, 40) for name in up[:10]) + (", ..." if len(up) > 10 else "")
        return (
            f"a network interface other than loopback is up in this process's network namespace ({shown}): "
            f"the team's code is not run; {how}"
        )
    return None


def _interface_names() -> tuple[list[str], str]:
    """This namespace's interfaces (``if_nameindex`` and ``/proc/self/net/dev`` together), and what went
    wrong when neither could list them."""
    names: set[str] = set()
    problems = []
    try:
        names.update(name for _, name in socket.if_nameindex())
        listed = True
    except (AttributeError, OSError) as exc:
        problems.append(f"if_nameindex: {reason(exc)}")
        listed = False
    try:
        with open("/proc/self/net/dev", "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8", "surrogateescape")
        for line in text.splitlines()[2:]:
            name, colon, _ = line.partition(":")
            if colon and name.strip():
                names.add(name.strip())
        listed = True
    except OSError as exc:
        problems.append(f"/proc/self/net/dev: {reason(exc)}")
    return sorted(names), "" if listed else "; ".join(problems)


def _interface_flags(fcntl: Any, probe: socket.socket, name: str) -> tuple[int | None, str]:
    """An interface's flags (None when it is gone since it was listed), or what went wrong."""
    encoded = name.encode("utf-8", "surrogateescape")
    if not 0 < len(encoded) < 16:
        return None, f"an interface name of {len(encoded)} bytes"
    try:
        reply = fcntl.ioctl(probe.fileno(), _SIOCGIFFLAGS, struct.pack("16s24x", encoded))
    except OSError as exc:
        if exc.errno == 19:  # ENODEV: gone since it was listed
            return None, ""
        return None, f"SIOCGIFFLAGS of {excerpt(name, 40)}: {reason(exc)}"
    return int(struct.unpack_from("H", reply, 16)[0]), ""
