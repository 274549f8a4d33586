"""Hosts as the user names them: 'h1,h2:8766,[::1]:8766' or '@FILE'; each is a running `fio --server`."""

from dataclasses import dataclass
from pathlib import Path

from disklab.errors import UserError
from disklab.fio.clientstats import DEFAULT_FIO_PORT, host_name, is_ipv6
from disklab.system.textfile import read_text_file
from disklab.units import brief


@dataclass(frozen=True)
class Host:
    address: str  # a host name, an IPv4 or an IPv6 address (without brackets)
    port: int = DEFAULT_FIO_PORT

    @property
    def name(self) -> str:
        """How results name the host: the spelling entry_host gives fio's client_stats entries (run --hosts, import)."""
        return host_name(self.address, self.port)

    @property
    def fio_client(self) -> str:
        """The host as fio's --client option takes it: 'ADDR,PORT', with 'ip6:' for IPv6 addresses."""
        return f"ip6:{self.address},{self.port}" if is_ipv6(self.address) else f"{self.address},{self.port}"


def parse_hosts(text: str) -> tuple[Host, ...]:
    """'h1,h2:8766' or '@hosts.txt' (one host a line, '#' starts a comment); each host once."""
    if text.startswith("@"):
        items = _file_items(Path(text[1:]))
    else:
        items = [item.strip() for item in text.split(",")]
    hosts = tuple(parse_host(item) for item in items if item)
    if not hosts:
        raise UserError(f"--hosts {brief(text)} names no host")
    repeated = sorted({h.name for h in hosts if hosts.count(h) > 1})
    if repeated:
        raise UserError(f"host {repeated[0]} is named twice; each host runs every test once")
    return hosts


def parse_host(item: str) -> Host:
    """'h1', 'h1:8766', '10.0.0.1', '[fd00::1]:8766' or a bare IPv6 address."""
    address, port = item, DEFAULT_FIO_PORT
    if item.startswith("["):
        address, bracket, rest = item[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise UserError(f"host {brief(item)}: write an IPv6 address with a port as [ADDRESS]:PORT")
        port = _port(item, rest[1:]) if rest else DEFAULT_FIO_PORT
    elif item.count(":") == 1:
        address, _, text = item.partition(":")
        port = _port(item, text)
    elif item.count(":") > 1 and not is_ipv6(item):
        raise UserError(f"host {brief(item)} is not an address; IPv6 with a port is written [ADDRESS]:PORT")
    if not address or any(c.isspace() or c in ",/@" for c in address):
        raise UserError(f"host {brief(item)} is not an address or host name")
    return Host(address, port)


def _port(item: str, text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5) or not 0 < int(text) < 65536:
        raise UserError(f"host {brief(item)}: the port must be a number from 1 to 65535")
    return int(text)


def _file_items(path: Path) -> list[str]:
    lines = read_text_file(path, "hosts file").splitlines()
    return [line.partition("#")[0].strip() for line in lines]
