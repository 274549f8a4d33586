"""pgbench suites: the [pgbench] table, the run options per suite kind, parsing pgbench's real output (captured from
PostgreSQL 15's pgbench into tests/fixtures/pgbench/), percentiles, CPU use, the server's log, stale clusters."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.database.benchmark import PgbenchOverrides, share_of_ram, whole_scale
from disklab.system.cpu import cpu_use, read_cpu_times
from disklab.database.pgbench import plan_steps
from disklab.database.pgbench_output import parse_progress, parse_summary, percentiles_ns, transaction_latencies_us
from disklab.database.leftovers import remove_stale_clusters
from disklab.database.postgres import summarise_log
from disklab.suite.pgbench import KEYS, parse_pg_set
from disklab.errors import DatabaseError, UserError
from disklab.suite.loader import load_suite, parse_suite

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pgbench"
DATABASE_DOCS = Path(__file__).parents[2] / "docs" / "database.md"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_the_builtin_suite_is_m3s_command():
    settings = load_suite("pgbench").pgbench
    assert (settings.scale, settings.clients, settings.transactions, settings.time_s) == (100, (100,), 10_000, None)
    assert settings.vacuum is False and settings.settings == ()
    (step,) = plan_steps(settings, cpus=2)
    assert step.arguments() == ["-n", "-c", "100", "-j", "2", "-t", "10000"]


def test_every_pgbench_key_is_documented():
    text = DATABASE_DOCS.read_text()
    for name in KEYS:
        assert f"| `{name}` |" in text, f"docs/database.md's [pgbench] table lacks {name}"


SUITE = 'name = "db"\nmode = "pgbench"\n'


@pytest.mark.parametrize(
    "table, message",
    [
        ('[pgbench]\nclients = [1, 0]', "clients: 0 is outside 1..10000"),
        ('[pgbench]\nclients = [4, 4]', "names a client count twice"),
        ('[pgbench]\nscale = 0.5', "scale: 0.5 is not a whole number"),
        ('[pgbench]\ntime = "60s"\ntransactions = 10', "transactions (per client) or time (per step), not both"),
        ('[pgbench]\nrounds = 3', "unknown field 'rounds'"),
        ('[pgbench]\nsettings = { port = 5433 }', "port is set by disklab"),
        ('[pgbench]\nsettings = { "bad name" = 1 }', "is not a PostgreSQL setting name"),
        ('[[group]]\nname = "x"\n[pgbench]', "a pgbench suite has only a [pgbench] table"),
    ],
)
def test_a_bad_pgbench_table_is_refused_with_the_field(table, message):
    with pytest.raises(UserError, match="db.toml: .*" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        parse_suite(SUITE + table, "db.toml", "db.toml")


def test_a_pgbench_table_needs_its_mode():
    with pytest.raises(UserError, match='a \\[pgbench\\] table needs mode = "pgbench"'):
        parse_suite('name = "x"\n[pgbench]\nscale = 1\n[[group]]\nname = "g"\n', "x.toml", "x.toml")


def test_time_replaces_transactions_and_settings_are_kept_in_order():
    suite = parse_suite(SUITE + '[pgbench]\ntime = "1m"\nsettings = { shared_buffers = "1GB", fsync = true }',
                        "db.toml", "db.toml")
    assert suite.pgbench.time_s == 60 and suite.pgbench.transactions is None
    assert suite.pgbench.settings == (("shared_buffers", "1GB"), ("fsync", "on"))


def test_command_line_overrides_win_and_pg_set_adds_to_the_suites_settings():
    settings = load_suite("pgbench").pgbench
    changed = PgbenchOverrides(scale=10, clients=(1, 10), time_s=5.0,
                               settings=(parse_pg_set("shared_buffers=1GB"),)).apply(settings)
    assert (changed.scale, changed.clients, changed.time_s, changed.transactions) == (10, (1, 10), 5.0, None)
    assert changed.settings == (("shared_buffers", "1GB"),)
    with pytest.raises(UserError, match="not both"):
        PgbenchOverrides(transactions=5, time_s=5.0).apply(settings)


def test_a_chosen_max_connections_must_fit_the_clients_before_anything_runs():
    settings = load_suite("pgbench").pgbench  # 100 clients
    with pytest.raises(UserError, match="max_connections=100 leaves no room for 100 clients; set at least 105"):
        PgbenchOverrides(settings=(parse_pg_set("max_connections=100"),)).apply(settings)
    fitting = PgbenchOverrides(settings=(parse_pg_set("max_connections=105"),)).apply(settings)
    assert fitting.settings == (("max_connections", "105"),)


def test_threads_follow_clients_up_to_the_cpus():
    settings = PgbenchOverrides(clients=(1, 4, 50)).apply(load_suite("pgbench").pgbench)
    assert [(s.clients, s.threads) for s in plan_steps(settings, cpus=8)] == [(1, 1), (4, 4), (50, 8)]


@pytest.mark.parametrize("text", ["shared_buffers", "=1GB", "port=5", "shared_buffers="])
def test_pg_set_needs_name_equals_value_and_not_disklabs_own(text):
    with pytest.raises(ValueError):
        parse_pg_set(text)


def test_scale_is_a_whole_number_for_pgbench():
    assert whole_scale(10.0) == 10
    for bad in (0.5, 1.5):
        with pytest.raises(UserError, match="pgbench's scale factor"):
            whole_scale(bad)


def invoke(*args, tmp_path):
    return CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), *args])


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "pgbench", "--scale", "0.01", "--dry-run"], "a whole number"),
        (["run", "pgbench", "--runtime", "5", "--dry-run"], "--runtime: not for suite 'pgbench'"),
        (["run", "pgbench", "--repeat", "3", "--dry-run"], "--repeat: not for suite 'pgbench'"),
        (["run", "quick", "--scale", "10", "--dry-run"], "a factor above 0 and at most 1"),
        (["run", "quick", "--clients", "1,2", "--dry-run"], "--clients: only for pgbench suites"),
        (["run", "quick", "--keep-cluster", "--dry-run"], "--keep-cluster: only for pgbench suites"),
        (["run", "quick", "--tablespace-only", "--dry-run"], "--tablespace-only: only for pgbench suites"),
    ],
)
def test_options_are_checked_against_the_suites_kind(args, message, tmp_path):
    result = invoke(*args, tmp_path=tmp_path)
    assert result.exit_code == 2 and message in result.output


def test_a_dry_run_shows_each_step_and_runs_nothing(tmp_path):
    result = invoke("run", "pgbench", "--target", str(tmp_path), "--dry-run", "--clients", "1,10,50,100", "--time",
                    "60s", "--scale", "10", tmp_path=tmp_path)
    assert result.exit_code == 0 and "pgbench -n -c 50 -j" in result.output and "-T 60" in result.output
    assert "estimated duration: 4m00s" in result.output and list(tmp_path.iterdir()) == []


def test_the_summary_of_a_timed_run():
    summary = parse_summary(fixture("time-4-clients.stdout"))
    assert (summary.clients, summary.threads, summary.processed, summary.failed) == (4, 2, 3965, 0)
    assert (summary.latency_mean_ms, summary.latency_stddev_ms, summary.connection_ms) == (3.014, 3.860, 11.030)
    assert summary.tps == 1322.213622
    # 3965 transactions in 3965 / 1322.21 s plus 11.03 ms of connecting
    assert summary.tps_including_connections == pytest.approx(3965 / (3965 / 1322.213622 + 0.01103))


def test_the_summary_of_a_run_by_transactions():
    summary = parse_summary(fixture("transactions-2-clients.stdout"))
    assert (summary.processed, summary.tps, summary.connection_ms) == (100, 2571.156763, 3.478)


def test_a_summary_without_its_figures_is_a_database_error():
    with pytest.raises(DatabaseError, match="tps"):
        parse_summary(fixture("time-4-clients.stdout").replace("tps = ", "t = "))


def test_progress_lines_become_tps_per_second():
    points = parse_progress(fixture("time-4-clients.stderr"))
    assert [(p.t_s, p.tps, p.latency_mean_ms, p.failed) for p in points] == [
        (1.0, 1128.8, 3.505, 0), (2.0, 1287.1, 3.099, 0), (3.0, 1545.6, 2.574, 0),
    ]


def test_the_transaction_logs_give_every_latency():
    latencies = []
    for name in ("transactions-2-clients.log", "transactions-2-clients.log.1"):
        found, not_completed = transaction_latencies_us(fixture(name))
        assert not_completed == 0 and len(found) == 50
        latencies += found
    percentiles = percentiles_ns(latencies)
    ordered = sorted(latencies)
    # nearest rank of 100: p50 is the 50th latency, p90 the 90th, p99 the 99th; too few for p99.9 and p99.99
    assert percentiles == {"p50": ordered[49] * 1000.0, "p90": ordered[89] * 1000.0, "p99": ordered[98] * 1000.0}


def test_failed_transactions_in_the_log_are_counted_not_timed():
    log = "0 1 3344 0 1795301508 654280\n0 2 failed 0 1795301508 655925\n1 1 skipped 0 1795301508 656000\n"
    assert transaction_latencies_us(log) == ([3344], 2)


def test_cpu_use_is_the_share_of_ticks_between_two_readings():
    before = read_cpu_times("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n")
    after = read_cpu_times("cpu  160 20 70 900 80 5 5 0 0 0\n")
    use = cpu_use(before, after)  # 240 ticks: user+nice 80, system+irq+softirq 30, iowait 30
    assert (use.usr_percent, use.sys_percent, use.iowait_percent) == pytest.approx((100 / 3, 12.5, 12.5))


def test_a_server_that_did_not_start_is_summarised_by_its_log():
    summary = summarise_log(fixture("bad-settings-server.log"))
    assert summary.startswith('unrecognized configuration parameter "bogus_setting"')
    assert summary.endswith('configuration file "/tmp/pgcap/data/postgresql.conf" contains errors')


def test_a_stale_cluster_of_a_dead_process_is_removed_and_others_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where --tablespace-only's clusters lie, swept too
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    host = socket.gethostname()
    stale = tmp_path / f"disklab-{host}-{dead.stdout.strip()}.pgcluster"
    alive = tmp_path / f"disklab-{host}-{os.getpid()}.pgcluster"
    kept = tmp_path / "disklab-run3.pgcluster"
    other_host = tmp_path / f"disklab-elsewhere-{dead.stdout.strip()}.pgcluster"
    for folder in (stale, alive, kept, other_host):
        (folder / "data").mkdir(parents=True)
    # a pid file whose process is not a server of this folder (a recycled pid): nothing is signalled
    (stale / "data" / "postmaster.pid").write_text(f"{os.getpid()}\n{stale / 'data'}\n")
    assert remove_stale_clusters(tmp_path) == [f"a PostgreSQL cluster left by a killed run: {stale}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (alive, kept, other_host))


@pytest.mark.parametrize("size, text", [(24e6, "less than 0.01x RAM"), (0, "less than 0.01x RAM"),
                                        (8 * 2**30, "1.00x RAM"), (2**30 * 0.35, "0.04x RAM")])
def test_the_share_of_ram_is_never_zero_point_zero_zero(size, text):
    """The summary said '0.00x RAM' for a small data set."""
    assert share_of_ram(size, 8 * 2**30) == text
