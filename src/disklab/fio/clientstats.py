"""fio's client/server output: "client_stats", one entry per fio server and job, and how results name the servers.

fio's client (`fio --client=ADDR,PORT JOBFILE ...`) writes each server's job entries and disks with that server's
"hostname" and "port", beside an "All clients" sum. Both `run --hosts` and `import` cut it into documents that
fio/parse.py reads like fio's plain output.
"""

import ipaddress
import json

DEFAULT_FIO_PORT = 8765  # fio's own default for --server and --client
# fio's aggregate over hosts: a sum of the hosts' figures with latencies of unknown weighting; not a measurement.
ALL_CLIENTS = "All clients"
# Top-level fields kept with each job so that the stored output reads back through fio/parse.py.
HEADER_FIELDS = ("fio version", "timestamp", "timestamp_ms", "time", "global options")


def host_name(address: str, port: int | None) -> str:
    """The address alone on fio's default port; else with the port, IPv6 addresses in brackets."""
    if port in (None, DEFAULT_FIO_PORT):
        return address
    return f"[{address}]:{port}" if is_ipv6(address) else f"{address}:{port}"


def is_ipv6(address: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(address), ipaddress.IPv6Address)
    except ValueError:
        return False


def client_entries(data: dict) -> list:
    """The per-host entries of fio's client/server output; its 'All clients' sum is left out."""
    return [e for e in data["client_stats"] if not (isinstance(e, dict) and e.get("jobname") == ALL_CLIENTS)]


def entry_document(data: dict, entries: list[dict], host: str | None) -> str:
    """Job entries as a fio document of their own (header, the jobs, their host's disks), readable by fio/parse.py."""
    document = {**{key: data[key] for key in HEADER_FIELDS if key in data}, "jobs": entries}
    disk_util = data.get("disk_util", [])
    if disk_util and isinstance(disk_util, list):
        document["disk_util"] = [d for d in disk_util if not host or isinstance(d, dict) and entry_host(d) == host]
    return json.dumps(document, indent=2) + "\n"


def entry_host(entry: dict) -> str:
    """The fio server an entry of client/server output came from, as disklab names hosts."""
    port = entry.get("port")
    return host_name(str(entry.get("hostname", "unknown")), port if isinstance(port, int) else None)
