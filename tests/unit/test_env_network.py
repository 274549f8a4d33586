"""A network target's server, protocol, transport and link (env/network.py): the mount lines of real network mounts
(tests/fixtures/env/README.md says where each comes from), the route to 127.0.0.1 asked of the real `ip`."""

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disklab.env.network import collect_link, collect_network, is_network, mount_facts
from disklab.system.mounts import Mount, deepest_mount

MOUNTINFO = Path(__file__).parents[1] / "fixtures" / "env" / "network-mounts" / "mountinfo"
NEEDS_IP = pytest.mark.skipif(shutil.which("ip") is None, reason="ip (iproute2) is not installed")


def captured(fs_type: str, tmp_path: Path) -> Mount:
    """The fixture's mount of `fs_type`, read by the same parser a run uses."""
    (line,) = [line for line in MOUNTINFO.read_text().splitlines() if f" - {fs_type} " in line]
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "mountinfo").write_text(line + "\n")
    return deepest_mount(line.split(" ")[4], None, str(tmp_path / "proc"))


def test_nfs4_over_tcp_gives_server_version_transport_and_request_sizes(tmp_path):
    assert mount_facts(captured("nfs4", tmp_path)) == ({
        "net_server": "192.168.1.1", "net_protocol": "NFS 4.0", "net_transport": "tcp",
        "net_rsize_bytes": 1048576, "net_wsize_bytes": 1048576}, "192.168.1.1")


def test_nfs3_over_udp(tmp_path):
    facts, address = mount_facts(captured("nfs", tmp_path))
    assert (facts["net_protocol"], facts["net_transport"], facts["net_rsize_bytes"]) == ("NFS 3", "udp", 32768)
    assert address == "192.168.1.1"


def test_sshfs_names_its_server_in_the_source_and_has_no_request_sizes(tmp_path):
    assert mount_facts(captured("fuse.sshfs", tmp_path)) == ({
        "net_server": "127.0.0.1", "net_protocol": "SFTP (sshfs)", "net_transport": "tcp (ssh)"}, "127.0.0.1")


@NEEDS_IP
def test_the_route_to_the_sshfs_server_leaves_by_loopback_whose_speed_sysfs_does_not_know(tmp_path):
    env = collect_network(captured("fuse.sshfs", tmp_path))
    assert env["net_interface"] == "lo" and env["net_link_speed_mbit_per_s"] is None
    assert env["net_mtu_bytes"] == int(Path("/sys/class/net/lo/mtu").read_text())


@NEEDS_IP
@pytest.mark.parametrize(("speed", "recorded"), [("25000", 25000), ("-1", None), ("", None)])
def test_a_link_speed_is_what_sysfs_says_and_minus_one_is_unknown(tmp_path, speed, recorded):
    # The route is the real one (127.0.0.1 leaves by lo); lo's folder stands in for a NIC's.
    net = tmp_path / "class" / "net" / "lo"
    net.mkdir(parents=True)
    (net / "speed").write_text(f"{speed}\n")
    (net / "mtu").write_text("9000\n")
    assert collect_link("127.0.0.1", str(tmp_path)) == {
        "net_interface": "lo", "net_link_speed_mbit_per_s": recorded, "net_mtu_bytes": 9000}


def test_no_server_means_no_route_and_no_link():
    assert collect_link(None) == {"net_interface": None, "net_link_speed_mbit_per_s": None, "net_mtu_bytes": None}


def test_local_targets_and_9p_from_the_hypervisor_record_no_network_keys():
    assert collect_network(Mount("/", "ext4", "/dev/vda", "rw,relatime", (254, 0))) == {}
    assert collect_network(None) == {}
    assert not is_network(Mount("/mnt/host", "9p", "hostshare", "rw,trans=virtio,version=9p2000.L", (0, 50)))
    assert is_network(Mount("/mnt/srv", "9p", "127.0.0.1", "rw,trans=tcp,port=564", (0, 51)))


def test_a_network_file_system_without_one_server_records_its_type_and_unknowns():
    env = collect_network(Mount("/mnt/ceph", "ceph", "192.168.1.1:6789,192.168.1.2:6789:/", "rw,name=admin", (0, 60)))
    assert env == {"net_server": None, "net_protocol": "ceph", "net_transport": None, "net_interface": None,
                   "net_link_speed_mbit_per_s": None, "net_mtu_bytes": None}


def test_a_host_name_is_resolved_and_an_ipv6_address_loses_its_brackets():
    facts, address = mount_facts(Mount("/mnt/s", "fuse.sshfs", "me@localhost:/srv", "rw", (0, 41)))
    assert address in ("127.0.0.1", "::1") and facts["net_server"] == f"localhost ({address})"
    facts, address = mount_facts(Mount("/mnt/s", "fuse.sshfs", "me@[::1]:/srv", "rw", (0, 41)))
    assert facts["net_server"] == address == "::1"


@settings(max_examples=200, deadline=None)
@given(fs_type=st.sampled_from(["nfs", "nfs4", "cifs", "smb3", "9p", "fuse.sshfs", "ceph"]),
       options=st.text(alphabet="abcdefgprstvwxz0123456789=,.:", max_size=60),
       source=st.sampled_from(["", ":", "//", "[", "[]:", "@", "192.0.2.9", "192.0.2.9:/x", "//192.0.2.9/s"]))
def test_any_mount_line_gives_facts_or_unknowns_never_an_exception(fs_type, options, source):
    facts, _ = mount_facts(Mount("/m", fs_type, source, options, (0, 1)))
    assert facts["net_protocol"].startswith(("NFS", "SMB", "9P", "SFTP", "ceph"))
