"""The path to a network target's data: the server, protocol, version and transport as the mount states them, and
the local interface the route to the server leaves by, with its link speed and MTU.

A local target records none of these keys. A network one records them all,
unknown where the mount does not name one server (Ceph, Lustre and the like
spread their data over many) or the route or link cannot be told.
"""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

from disklab.env.readers import read_file, run_quietly, to_int
from disklab.system.mounts import NETWORK_FS_TYPES, Mount

# Those whose mount names the one server holding the data, and the protocol each speaks (9p only over a network
# transport).
_PROTOCOLS = {"nfs": "NFS", "nfs4": "NFS", "cifs": "SMB", "smb3": "SMB", "9p": "9P", "fuse.sshfs": "SFTP (sshfs)"}
_9P_NETWORK = ("tcp", "rdma")
# NFS and SMB record in their options the address they connected to.
_ADDRESS_IN_OPTIONS = ("nfs", "nfs4", "cifs", "smb3")


def collect_network(mount: Mount | None, sysfs: str = "/sys") -> dict:
    """The network keys of a target on `mount`; nothing for a local one."""
    if mount is None or not is_network(mount):
        return {}
    facts, address = mount_facts(mount)
    return {**facts, **collect_link(address, sysfs)}


def is_network(mount: Mount) -> bool:
    return mount.fs_type in NETWORK_FS_TYPES or (
        mount.fs_type == "9p" and mount.option_values.get("trans") in _9P_NETWORK)


def mount_facts(mount: Mount) -> tuple[dict, str | None]:
    """What the mount itself says: server, protocol and version, transport and, for NFS and SMB, the largest read
    and write per request the client and server agreed on (rsize, wsize); and the server's address to route to:
    the one NFS and SMB connected to, else the mount's host name resolved now; None where there is none."""
    options = mount.option_values
    host = _host_of(mount) if mount.fs_type in _PROTOCOLS else None
    address = options.get("addr") if mount.fs_type in _ADDRESS_IN_OPTIONS else None
    address = address or (_resolve(host) if host else None)
    facts = {
        "net_server": f"{host} ({address})" if host and address and address != host else host or address,
        "net_protocol": _protocol(mount.fs_type, options),
        "net_transport": _transport(mount.fs_type, options),
    }
    for size in ("rsize", "wsize"):
        if size in options:
            facts[f"net_{size}_bytes"] = to_int(options[size])
    return facts, address


def collect_link(address: str | None, sysfs: str = "/sys") -> dict:
    """The interface `ip route get ADDRESS` names, and its speed and MTU from sysfs; the speed is unknown where
    sysfs says -1 or refuses (virtual and loopback interfaces have none)."""
    interface = _route_interface(address) if address else None
    net = Path(sysfs) / "class" / "net" / interface if interface else None
    speed = to_int(read_file(net / "speed")) if net else None
    return {
        "net_interface": interface,
        "net_link_speed_mbit_per_s": speed if speed is not None and speed > 0 else None,
        "net_mtu_bytes": to_int(read_file(net / "mtu")) if net else None,
    }


def _protocol(fs_type: str, options: dict[str, str]) -> str:
    name = _PROTOCOLS.get(fs_type, fs_type)
    version = options.get("vers") or options.get("version")
    if version and fs_type in ("nfs", "nfs4") and "." not in version and "minorversion" in options:
        version = f"{version}.{options['minorversion']}"  # kernels before 4.x wrote vers=4,minorversion=1
    return f"{name} {version}" if version and fs_type in _PROTOCOLS else name


def _transport(fs_type: str, options: dict[str, str]) -> str | None:
    if fs_type in ("nfs", "nfs4"):
        return options.get("proto")
    if fs_type in ("cifs", "smb3"):
        return "rdma" if "rdma" in options else "tcp"  # SMB Direct, else SMB over TCP
    if fs_type == "9p":
        return options.get("trans")
    return "tcp (ssh)" if fs_type == "fuse.sshfs" else None


def _host_of(mount: Mount) -> str | None:
    """The server as the mount's source names it: host:/path (NFS), //host/share (SMB), [user@]host:path (sshfs),
    the address itself (9p); an IPv6 address loses its brackets."""
    source = mount.source
    if mount.fs_type in ("cifs", "smb3"):
        match = re.match(r"//([^/]+)", source)
        return match.group(1) if match else None
    if mount.fs_type == "9p":
        return source or None
    if mount.fs_type == "fuse.sshfs":
        source = source.rpartition("@")[2]
    match = re.match(r"\[([^\]]+)\]:|([^:]+):", source)
    return (match.group(1) or match.group(2)) if match else None


def _resolve(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.-]*", host):
        return None  # not a host name: nothing to ask the resolver
    import socket  # only for a network file system's server: a local run does not load it

    try:
        return socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)[0][4][0]
    except (OSError, IndexError, UnicodeError):
        return None


def _route_interface(address: str) -> str | None:
    try:
        routes = json.loads(run_quietly(["ip", "-json", "route", "get", address]) or "[]")
        return routes[0].get("dev") if routes else None
    except (ValueError, AttributeError, TypeError):
        return None
