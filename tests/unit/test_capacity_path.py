"""The path between host and array (`--via`): link payload rates by hand, what local adds, the parse errors."""

import pytest

from disklab.capacity.path import LINKS, PROTOCOLS, parse_via
from disklab.errors import UserError


@pytest.mark.parametrize(("name", "bits_per_s"), [
    ("1GbE", 1e9), ("10GbE", 10e9), ("25GbE", 25e9), ("40GbE", 40e9), ("100GbE", 100e9),
])
def test_ethernet_data_rate_is_the_line_rate_after_coding(name, bits_per_s):
    # e.g. 25GbE: 25.78125 GBd x 64/66 = 25.000 Gb/s; the nominal figure is the rate after coding, not before
    assert LINKS[name.lower()].data_bits_per_s == pytest.approx(bits_per_s)


def test_25gbe_tcp_payload_from_line_rate_coding_and_framing():
    # 25.78125e9 x 64/66 / 8 = 3.125e9 bytes/s on the wire; a 1500-byte frame costs 1538 bytes of wire time
    # (38 of preamble, MACs, EtherType, FCS, gap) and carries 1448 of data (IPv4 20, TCP 20, timestamps 12).
    path = parse_via("iscsi:25GbE")
    assert path.link_bytes_per_s == pytest.approx(3.125e9 * 1448 / 1538)
    assert path.link_bytes_per_s == pytest.approx(2.942e9, rel=1e-3)
    assert path.mtu_bytes == 1500


def test_jumbo_frames_carry_more_of_the_line():
    assert parse_via("nfs:10GbE:jumbo").link_bytes_per_s == pytest.approx(1.25e9 * 8948 / 9038)
    assert parse_via("nfs:10GbE:jumbo").mtu_bytes == 9000


def test_rdma_payload_is_an_infiniband_mtu_per_frame():
    # 100GbE: 12.5e9 bytes/s; RoCEv2 carries 1024 bytes in 1024 + 44 (IP, UDP, BTH, ICRC) + 38 (Ethernet)
    assert parse_via("nvme-rdma:100GbE").link_bytes_per_s == pytest.approx(12.5e9 * 1024 / 1106)
    assert parse_via("iser:25GbE:jumbo").link_bytes_per_s == pytest.approx(3.125e9 * 4096 / 4178)


def test_fibre_channel_carries_its_measured_payload():
    assert parse_via("fc:16GFC").link_bytes_per_s == 1576e6
    assert parse_via("fc:32GFC").link_bytes_per_s == 2 * 1576e6
    assert parse_via("fc:16GFC").mtu_bytes is None


def test_local_adds_nothing():
    path = parse_via("local")
    assert path.protocol == "local" and path.link is None
    assert path.link_bytes_per_s is None  # no link to fill
    assert path.per_io_latency_s == 0.0
    assert path.per_io_busy_s is None and path.max_iops is None
    assert path.unknown == ()


def test_target_limit_is_one_over_the_busy_time():
    path = parse_via("iscsi:25GbE")
    assert path.max_iops == pytest.approx(1 / path.per_io_busy_s)
    # 100-400 k IOPS published for software targets: geometric middle 200 k
    assert path.max_iops == pytest.approx(200e3)


def test_parsing_ignores_case_and_keeps_the_text_as_given():
    path = parse_via("NVMe-TCP:25gbe:JUMBO")
    assert (path.protocol, path.link, path.mtu_bytes) == ("nvme-tcp", "25GbE", 9000)
    assert path.text == "NVMe-TCP:25gbe:JUMBO"
    assert parse_via("LOCAL").protocol == "local" and parse_via("LOCAL").text == "LOCAL"
    assert parse_via(" iscsi : 10GbE ").link == "10GbE"


def test_every_figure_has_a_source_or_is_named_unknown():
    for name in PROTOCOLS:
        link = "" if name == "local" else (":16GFC" if name == "fc" else ":25GbE")
        path = parse_via(name + link)
        assert all(topic and where for topic, where in path.sources)
        if name == "local":
            continue
        assert {topic for topic, _ in path.sources} >= {"link rate", "link framing", "per-I/O latency",
                                                         "target IOPS limit"}
        assert ("per-I/O latency" in path.unknown) == (path.per_io_latency_s is None)
        assert ("target IOPS limit" in path.unknown) == (path.per_io_busy_s is None)


@pytest.mark.parametrize(("text", "says"), [
    ("", "write PROTOCOL:LINK"),
    ("ftp:25GbE", "unknown protocol 'ftp'"),
    ("iscsi:30GbE", "unknown link '30GbE'"),
    ("iscsi", "iscsi needs a link"),
    ("nvme-tcp:", "nvme-tcp needs a link"),
    ("local:25GbE", "local takes no link"),
    ("fc:25GbE", "fc runs over a Fibre Channel link"),
    ("iscsi:32GFC", "iscsi runs over an Ethernet link"),
    ("iscsi:25GbE:9000", "PROTOCOL:LINK:jumbo"),
    ("iscsi:25GbE:jumbo:x", "PROTOCOL:LINK:jumbo"),
    ("fc:32GFC:jumbo", "no jumbo frames"),
])
def test_bad_via_is_one_clear_line(text, says):
    with pytest.raises(UserError) as caught:
        parse_via(text)
    message = str(caught.value)
    assert says in message
    assert "\n" not in message
    assert caught.value.exit_code == 2


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UserError) as caught:
        parse_via("ftp:25GbE")
    message = str(caught.value)
    for known in ("iscsi", "iser", "nfs", "smb", "nvme-tcp", "nvme-rdma", "fc", "local", "25GbE", "32GFC"):
        assert known in message
