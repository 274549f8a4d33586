"""Hosts as users name them, and what fio's client says about a server before a run."""

import pytest

from disklab.errors import UserError
from disklab.fio.clientstats import DEFAULT_FIO_PORT
from disklab.hosts.check import read_check
from disklab.hosts.hosts import Host, parse_host, parse_hosts
from disklab.hosts.serve import beyond_loopback, server_command
from tests.conftest import fixture_text


def test_a_list_names_each_host_with_fios_default_port_unless_given():
    assert parse_hosts("h1, h2:8766,10.0.0.3") == (Host("h1"), Host("h2", 8766), Host("10.0.0.3"))
    assert Host("h1").port == DEFAULT_FIO_PORT == 8765


def test_ipv6_addresses_take_brackets_with_a_port_and_fio_is_told_ip6():
    assert parse_host("[fd00::2]:8766") == Host("fd00::2", 8766)
    assert parse_host("fd00::2") == Host("fd00::2")
    assert Host("fd00::2", 8766).name == "[fd00::2]:8766"
    assert Host("fd00::2").fio_client == "ip6:fd00::2,8765"
    assert Host("10.0.0.1", 9000).fio_client == "10.0.0.1,9000"
    assert Host("10.0.0.1").name == "10.0.0.1"


def test_a_hosts_file_has_one_host_a_line_with_comments(tmp_path):
    listing = tmp_path / "hosts.txt"
    listing.write_text("# storage clients\nh1\n\nh2:8766   # the new one\n[::1]:9000\n")
    assert parse_hosts(f"@{listing}") == (Host("h1"), Host("h2", 8766), Host("::1", 9000))


@pytest.mark.parametrize("text, words", [
    ("h1:http", "port must be a number"),
    ("h1:70000", "port must be a number"),
    ("[fd00::1", "[ADDRESS]:PORT"),
    ("fd00::zz:1", "IPv6 with a port"),
    ("h1,h1", "named twice"),
    (" , ", "names no host"),
    ("@/nonexistent/hosts.txt", "hosts file /nonexistent/hosts.txt"),
])
def test_bad_host_lists_are_refused_in_one_line(text, words):
    with pytest.raises(UserError, match=words.replace("[", r"\[")):
        parse_hosts(text)


def test_a_ready_host_gives_its_fio_version_and_its_target():
    check = read_check(Host("10.209.1.2"), fixture_text("hosts-check-ready.txt"), 0, "fio-3.33", "/tmp/hx/tgt")
    assert (check.fio_version, check.target_present, check.problem) == ("fio-3.33", True, None)


def test_a_server_of_another_fio_version_is_an_error_not_a_surprise():
    check = read_check(Host("10.209.1.2"), fixture_text("hosts-check-ready.txt"), 0, "fio-3.36", "/tmp/hx/tgt")
    assert not check.ok
    assert "runs fio-3.33, this machine fio-3.36" in check.problem


def test_a_missing_target_on_the_host_is_named_with_fios_reason_although_fio_exits_0():
    check = read_check(Host("10.209.1.2"), fixture_text("hosts-check-no-target.txt"), 0, "fio-3.33", "/tmp/hx/missing")
    assert check.target_present is False
    assert check.problem == "target /tmp/hx/missing is not usable there: /tmp/hx/missing is not a directory"


def test_a_host_without_a_server_is_unreachable():
    check = read_check(Host("10.209.1.2", 8799), fixture_text("hosts-check-refused.txt"), 1, "fio-3.33", "/x")
    assert check.fio_version is None
    assert check.problem.startswith("fio server not reachable: connection refused")


def test_serve_binds_where_told_and_knows_loopback_from_the_network():
    assert server_command("fio", Host("127.0.0.1", 8765)) == ["fio", "--server=ip:127.0.0.1,8765"]
    assert server_command("fio", Host("::1", 9000)) == ["fio", "--server=ip6:::1,9000"]
    assert not beyond_loopback("127.0.0.1") and not beyond_loopback("::1") and not beyond_loopback("localhost")
    assert beyond_loopback("0.0.0.0") and beyond_loopback("10.1.2.3")
