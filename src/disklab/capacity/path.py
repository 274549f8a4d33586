"""The path between host and array, `--via PROTOCOL:LINK[:jumbo]`: what a network protocol and link cost.

Why: an array of 4 NVMe drives in RAID0 behind a NAS over 25 GbE was predicted at 20x its published IOPS,
because the model charged nothing for getting an I/O to the array and back. Three terms close that gap:

- `link_bytes_per_s`: payload the link carries one way. Bandwidth-bound workloads (large blocks) stop at the
  link, not at the drives: 25 GbE carries 2.94 GB/s of TCP payload, less than one NVMe drive reads.
- `per_io_latency_s`: time the protocol adds to every I/O (initiator stack, LAN round trip, target stack).
  It lengthens each I/O, so at a given queue depth fewer I/Os complete per second.
- `per_io_busy_s`: time the target spends per I/O, the same whichever drives are behind it, so one target
  serves at most 1 / per_io_busy_s IOPS however fast its array is (`max_iops`).

`local` (the default) adds nothing. Each figure names its source in `sources`; published figures on protocol
costs spread over an order of magnitude (setups, tuning, hardware offload), so where they disagree the range
is kept in the comment and the figure is its geometric middle (the arithmetic one would sit next to the top
of a 10x range). A figure no source gives is None and named in `unknown`, never guessed.
"""

import math
from dataclasses import dataclass, replace

from disklab.errors import UserError

STANDARD_MTU = 1500
JUMBO_MTU = 9000

# Ethernet spends 38 bytes of wire time on every frame besides its MTU-sized payload: preamble 7 + start
# delimiter 1 + MAC addresses 12 + EtherType 2 + FCS 4 + inter-frame gap 12 (Dell PowerScale network design
# considerations, "IP packet overhead"; the 0x8086 blog's measured ~9.4 Gb/s on 10GbE at MTU 1500).
ETHERNET_FRAME_OVERHEAD_BYTES = 38
# IPv4 20 + TCP 20 + TCP timestamps 12, which Linux sends by default: 1448 of 1538 bytes at MTU 1500 (94.1 %),
# 8948 of 9038 at 9000 (99.0 %) (TD-er wiki "Ethernet payload datarates"; 0x8086 blog, "Gigabit Ethernet
# efficiency with standard 1500 bytes MTU"; Dell PowerScale gives 94.9 % without timestamps).
TCP_IP_HEADER_BYTES = 52
# RoCEv2 carries IPv4 20 + UDP 8 + InfiniBand base transport header 12 + invariant CRC 4 per packet
# (pingdo.net "RoCE v2 header overhead", 82 bytes per packet with the Ethernet 38). Its payload is an
# InfiniBand MTU (256 ... 4096 bytes): 1024 is the largest that fits a 1500-byte frame with those 44 bytes,
# 4096 fits a 9000-byte one (derived from the two sizes).
ROCE_HEADER_BYTES = 44
ROCE_PAYLOAD_BYTES = {STANDARD_MTU: 1024, JUMBO_MTU: 4096}


@dataclass(frozen=True)
class Link:
    """A network link: its data rate after line coding, and what carries it."""

    name: str
    kind: str  # "ethernet" or "fc"
    data_bits_per_s: float | None  # one way, after line coding, before framing; None: no source gives it
    source: str
    fc_payload_bytes_per_s: float | None = None  # FC only: measured payload, framing included


def _ethernet(name: str, lanes: int, lane_baud: float, coding: tuple[int, int], source: str) -> Link:
    return Link(name, "ethernet", lanes * lane_baud * coding[0] / coding[1], source)


# Line rates and codings: IEEE 802.3. 10GBASE-R signals at 10.3125 GBd with 64b/66b coding (Clause 49), so
# 10 Gb/s of data; 25G lanes run at 2.5 x 10.3125 = 25.78125 GBd (IEEE 802.3 25G study group slides);
# 40G = 4 x 10.3125 GBd lanes, 100G = 4 x 25.78125 GBd lanes; 1000BASE-X: 1.25 GBd with 8b/10b (a2o.si,
# "Ethernet/IP/TCP bitrate vs packet size").
_CODING_64_66 = "IEEE 802.3 64b/66b coding"
LINKS = {
    link.name.lower(): link for link in (
        _ethernet("1GbE", 1, 1.25e9, (8, 10), "1.25 GBd, 8b/10b (1000BASE-X)"),
        _ethernet("10GbE", 1, 10.3125e9, (64, 66), f"10.3125 GBd, {_CODING_64_66} (10GBASE-R)"),
        _ethernet("25GbE", 1, 25.78125e9, (64, 66), f"25.78125 GBd, {_CODING_64_66} (25GBASE-R)"),
        _ethernet("40GbE", 4, 10.3125e9, (64, 66), f"4 lanes x 10.3125 GBd, {_CODING_64_66} (40GBASE-R4)"),
        _ethernet("100GbE", 4, 25.78125e9, (64, 66), f"4 lanes x 25.78125 GBd, {_CODING_64_66} (100GBASE-R4)"),
        # Fibre Channel: measured payload of Emulex HBAs, 789 MB/s at 8GFC (8.5 GBd, 8b/10b: 6.8 Gb/s) and
        # 1576 MB/s at 16GFC (14.025 GBd, 64b/66b: 13.6 Gb/s) (Emulex blog "Speed bump", LPe12002 vs LPe16002).
        # 32GFC (28.05 GBd) and 64GFC (28.9 GBd PAM4, FCIA 64GFC FAQ) each double the speed before them, the
        # rule FC generations are defined by; no measured payload found, so 2x and 4x the measured 16GFC.
        Link("8GFC", "fc", 8.5e9 * 8 / 10, "8.5 GBd, 8b/10b; 789 MB/s measured (Emulex LPe12002)", 789e6),
        Link("16GFC", "fc", 14.025e9 * 64 / 66, "14.025 GBd, 64b/66b; 1576 MB/s measured (Emulex LPe16002)",
             1576e6),
        Link("32GFC", "fc", None, "28.05 GBd; 2 x the measured 16GFC payload (FCIA doubling)", 2 * 1576e6),
        Link("64GFC", "fc", None, "28.9 GBd PAM4; 4 x the measured 16GFC payload (FCIA doubling)", 4 * 1576e6),
    )
}


@dataclass(frozen=True)
class Protocol:
    """What a storage protocol adds per I/O. None: no published figure found."""

    name: str
    transport: str | None  # "tcp", "rdma", "fc"; None for local
    per_io_latency_s: float | None
    latency_source: str
    max_iops: float | None  # one target, all its cores, as published
    iops_source: str


def _middle(low: float, high: float) -> float:
    """Geometric middle of a published range, to two significant figures (no more precision than the sources)."""
    value = math.sqrt(low * high)
    return round(value, 1 - int(math.floor(math.log10(value))))


PROTOCOLS = {
    protocol.name: protocol for protocol in (
        Protocol("local", None, 0.0, "nothing added", None, "nothing added"),
        Protocol(
            # 10-20 us end to end (nvme-tcp.com "NVMe/TCP vs NVMe/RDMA"; nvme-storage.com latency glossary);
            # up to ~80 us from simplyblock's 80-150 us end to end against 20-70 us local.
            "nvme-rdma", "rdma", _middle(10e-6, 80e-6),
            "10-80 us (nvme-tcp.com, nvme-storage.com, simplyblock glossaries); geometric middle",
            # SPDK 24.05 RDMA target: 10.94 M 4 KiB random-read IOPS on 8 cores; the Linux kernel target does up
            # to 5.09x fewer per core, 2.1 M on 8 (techbytes.app, SPDK NVMe-oF profiling, 2026).
            _middle(10.94e6 / 5.09, 10.94e6),
            "2.1-10.9 M IOPS per 8-core target, kernel to SPDK (SPDK 24.05 report via techbytes.app); geometric middle",
        ),
        Protocol(
            # ~20 us added (nvme-storage.com), 25-40 us end to end (nvme-tcp.com), 80-100 us more than RDMA
            # (Blocks & Files 2022), 150-350 us added (simplyblock "NVMe/TCP vs local NVMe", 25GbE).
            "nvme-tcp", "tcp", _middle(20e-6, 350e-6),
            "20-350 us (nvme-storage.com, nvme-tcp.com, Blocks & Files, simplyblock); geometric middle",
            # 1-5 M IOPS from a single target (nvme-storage.com "NVMe-oF vs iSCSI"); 1.5-1.8 M (nvme-tcp.com).
            _middle(1e6, 5e6), "1-5 M IOPS per target (nvme-storage.com, nvme-tcp.com); geometric middle",
        ),
        Protocol(
            # 100-200 us end to end (nvme-tcp.com), 100-300 us (nvme-storage.com), software targets; end to end
            # includes a flash device's tens of us, so this errs high. A TCP offload adapter cuts it to 15 us
            # over local (Chelsio T6 iSCSI white paper): not the usual case.
            "iscsi", "tcp", _middle(100e-6, 300e-6),
            "100-300 us per I/O (nvme-tcp.com, nvme-storage.com; software targets, Chelsio offload: 15 us); "
            "geometric middle",
            # 100-300 k IOPS from a single target (nvme-storage.com), ~400 k (nvme-tcp.com); Chelsio's offloaded
            # target reached 2.8 M, not the usual case.
            _middle(100e3, 400e3), "100-400 k IOPS per software target (nvme-storage.com, nvme-tcp.com); "
            "geometric middle",
        ),
        Protocol(
            # 75 us per I/O at queue depth 1 (13,270 IOPS, libiscsi iSER against the user-space tgt target,
            # libiscsi mailing list; includes the target's storage); 15 us for offloaded iSCSI (Chelsio T6).
            "iser", "rdma", _middle(15e-6, 75e-6),
            "15-75 us (Chelsio T6 offloaded iSCSI; libiscsi iSER vs tgt at QD1); geometric middle",
            # The same measurement levels off at 158 k IOPS at queue depth 128: the one figure found.
            158e3, "158 k IOPS, libiscsi iSER vs the user-space tgt target at QD128 (one measurement)",
        ),
        Protocol(
            # 4 KiB random read 200-500 us over NFSv3 on 10GbE vs ~50 us local, writes 300-600 us vs ~30 us
            # ("Deep Technical Report: NFS Disk I/O & Performance", a web page), so 150-570 us added;
            # 500 us-2 ms end to end (nvme-storage.com).
            "nfs", "tcp", _middle(150e-6, 2e-3),
            "150 us-2 ms added (NFS disk I/O report, nvme-storage.com); geometric middle",
            None, "no published per-target IOPS limit of an NFS server found",
        ),
        Protocol(
            "smb", "tcp", None, "no published per-I/O latency of SMB found",
            # Windows Server 2012 preview: over 300,000 1 KiB IOPS with SMB Multichannel on 4 x 10GbE (Microsoft,
            # "Windows 8 SMB 2.2 file sharing performance", 2011). Samba serves a client from one process
            # (samba-technical 2014, 2020), so expect less from a Samba NAS.
            300e3, "300 k 1 KiB IOPS, Windows Server 2012 SMB Multichannel on 4 x 10GbE (Microsoft white paper)",
        ),
        Protocol(
            "fc", "fc", None, "no published per-I/O latency of an FC SAN found (switch port to port < 1 us, "
            "McDATA 4Gb SAN switch guide)",
            # Max IOPS of one 16GFC HBA port "just over 1 million" (Emulex blog "Speed bump", LPe16002).
            1e6, "1 M IOPS per HBA port (Emulex LPe16002, 16GFC)",
        ),
    )
}


@dataclass(frozen=True)
class Path:
    """The parsed `--via`: what the path adds to every I/O and what it carries. Local: nothing."""

    text: str  # as given
    protocol: str
    link: str | None  # canonical link name, e.g. "25GbE"
    mtu_bytes: int | None  # Ethernet only
    link_bytes_per_s: float | None  # payload one way; None: no limit (local)
    per_io_latency_s: float | None  # added to each I/O; None: unknown (see unknown)
    per_io_busy_s: float | None  # target time per I/O, cap = 1 / per_io_busy_s; None: no cap or unknown
    sources: tuple[tuple[str, str], ...]  # (figure, where it comes from)
    unknown: tuple[str, ...] = ()  # figures no source gives; the model cannot charge them

    @property
    def max_iops(self) -> float | None:
        """IOPS one target serves at most, whatever its drives; None: not capped by the path."""
        return 1 / self.per_io_busy_s if self.per_io_busy_s else None


def payload_bytes_per_s(link: Link, transport: str, mtu: int) -> float:
    """One-way payload rate: data rate after line coding less every frame's headers and gap at this MTU."""
    if link.kind == "fc":
        return link.fc_payload_bytes_per_s
    if transport == "rdma":
        payload = ROCE_PAYLOAD_BYTES[mtu]
        wire = payload + ROCE_HEADER_BYTES + ETHERNET_FRAME_OVERHEAD_BYTES
    else:
        payload = mtu - TCP_IP_HEADER_BYTES
        wire = mtu + ETHERNET_FRAME_OVERHEAD_BYTES
    return link.data_bits_per_s / 8 * payload / wire


LOCAL = Path(text="local", protocol="local", link=None, mtu_bytes=None, link_bytes_per_s=None,
             per_io_latency_s=0.0, per_io_busy_s=None, sources=(("path", "local: nothing added"),))


def _framing(transport: str, mtu: int | None) -> str:
    if transport == "fc":
        return "FC framing included in the measured payload"
    if transport == "rdma":
        return f"RoCEv2 at MTU {mtu}: {ROCE_PAYLOAD_BYTES[mtu]} payload bytes per frame (pingdo.net)"
    return f"TCP/IPv4 with timestamps at MTU {mtu} (TD-er wiki, Dell PowerScale guide)"


def _known() -> str:
    links = ", ".join(link.name for link in LINKS.values())
    return f"protocols: {', '.join(PROTOCOLS)}; links: {links}"


def parse_via(text: str) -> Path:
    """'PROTOCOL:LINK[:jumbo]' or 'local', case-insensitive; anything else is one UserError line."""
    parts = [part.strip() for part in text.strip().split(":")]
    name = parts[0].lower()
    if not name:
        raise UserError(f"--via {text!r}: write PROTOCOL:LINK, e.g. iscsi:25GbE, or local ({_known()})")
    protocol = PROTOCOLS.get(name)
    if protocol is None:
        raise UserError(f"--via {text!r}: unknown protocol {parts[0]!r}; write PROTOCOL:LINK, "
                        f"e.g. iscsi:25GbE ({_known()})")
    if protocol.transport is None:
        if len(parts) > 1:
            raise UserError(f"--via {text!r}: local takes no link (write --via local)")
        return replace(LOCAL, text=text)
    if len(parts) < 2 or not parts[1]:
        raise UserError(f"--via {text!r}: {name} needs a link, e.g. {name}:25GbE ({_known()})")
    if len(parts) > 3 or (len(parts) == 3 and parts[2].lower() != "jumbo"):
        raise UserError(f"--via {text!r}: write PROTOCOL:LINK or PROTOCOL:LINK:jumbo (MTU 9000)")
    link = LINKS.get(parts[1].lower())
    if link is None:
        raise UserError(f"--via {text!r}: unknown link {parts[1]!r} ({_known()})")
    if (protocol.transport == "fc") != (link.kind == "fc"):
        wanted = "a Fibre Channel link (8GFC ... 64GFC)" if protocol.transport == "fc" else "an Ethernet link"
        raise UserError(f"--via {text!r}: {name} runs over {wanted}, not {link.name}")
    jumbo = len(parts) == 3
    if jumbo and link.kind == "fc":
        raise UserError(f"--via {text!r}: Fibre Channel has no jumbo frames")
    mtu = None if link.kind == "fc" else (JUMBO_MTU if jumbo else STANDARD_MTU)
    unknown = tuple(figure for figure, value in (("per-I/O latency", protocol.per_io_latency_s),
                                                 ("target IOPS limit", protocol.max_iops)) if value is None)
    return Path(
        text=text, protocol=name, link=link.name, mtu_bytes=mtu,
        link_bytes_per_s=payload_bytes_per_s(link, protocol.transport, mtu),
        per_io_latency_s=protocol.per_io_latency_s,
        per_io_busy_s=1 / protocol.max_iops if protocol.max_iops else None,
        sources=(("link rate", f"{link.name}: {link.source}"), ("link framing", _framing(protocol.transport, mtu)),
                 ("per-I/O latency", protocol.latency_source), ("target IOPS limit", protocol.iops_source)),
        unknown=unknown,
    )
