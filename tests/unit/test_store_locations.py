"""Which store a command uses: --store or --db, their variables, the config file's store line, else the default;
and a PostgreSQL URL that cannot be used is one line naming the database without its password."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.store import locations
from disklab.store.locations import configured_location, parse_location, shown_location
from disklab.store.postgres import _placeholders
from tests.unit.test_fuzz_input import FUZZ, IMPORT_FIXTURE, assert_clean


@pytest.fixture
def homes(tmp_path, monkeypatch):
    """A user config folder and a machine config file of the test's own; no store chosen by the environment."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("DISKLAB_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(locations, "SYSTEM_CONFIG", tmp_path / "etc" / "config.toml")
    monkeypatch.delenv("DISKLAB_CONFIG")  # the test suite's own setting: no config files
    for variable in ("DISKLAB_STORE", "DISKLAB_DB"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


def write_config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def stored_runs(store: Path) -> list[int]:
    result = CliRunner().invoke(cli, ["--db", str(store), "runs", "-f", "json"])
    assert result.exit_code == 0, result.output
    return [run["id"] for run in json.loads(result.stdout)["runs"]]


def import_into(*options: str) -> str:
    """Imports a real fio output with these root options; returns where it says it stored the run."""
    result = CliRunner().invoke(cli, [*options, "import", str(IMPORT_FIXTURE)])
    assert result.exit_code == 0, result.output
    stored = next(line for line in result.stderr.splitlines() if " stored as run " in line)
    return stored.rsplit(" in ", 1)[1]


def test_a_url_is_a_database_and_anything_else_a_file():
    assert parse_location("postgresql://lab@db/disklab") == "postgresql://lab@db/disklab"
    assert parse_location("postgres://db/disklab") == "postgres://db/disklab"
    assert parse_location("lab.db") == Path("lab.db")
    assert parse_location("postgresql-notes.db") == Path("postgresql-notes.db")
    with pytest.raises(UserError, match="empty"):
        parse_location("  ")


def test_a_url_is_shown_without_its_password():
    shown = shown_location("postgresql://alice:s3cret@db.lab:5433/results?sslmode=require")
    assert shown == "postgresql://alice@db.lab:5433/results" and "s3cret" not in shown


def test_without_a_config_the_store_is_under_disklab_home(homes):
    assert configured_location() == homes / "home" / "results.db"


def test_the_users_config_comes_before_the_machines(homes):
    write_config(locations.SYSTEM_CONFIG, 'store = "postgresql://lab-db/disklab"\n')
    assert configured_location() == "postgresql://lab-db/disklab"
    write_config(homes / "config" / "disklab" / "config.toml", f'store = "{homes / "mine.db"}"\n')
    assert configured_location() == homes / "mine.db"


def test_disklab_config_names_the_one_file_read_or_none(homes, monkeypatch):
    write_config(locations.SYSTEM_CONFIG, 'store = "postgresql://lab-db/disklab"\n')
    chosen = write_config(homes / "chosen.toml", f'store = "{homes / "chosen.db"}"\n')
    monkeypatch.setenv("DISKLAB_CONFIG", str(chosen))
    assert configured_location() == homes / "chosen.db"
    monkeypatch.setenv("DISKLAB_CONFIG", "")
    assert configured_location() == homes / "home" / "results.db"


def test_a_config_without_a_store_line_leaves_the_default(homes):
    write_config(homes / "config" / "disklab" / "config.toml", "# nothing set yet\n")
    assert configured_location() == homes / "home" / "results.db"


@pytest.mark.parametrize("text, phrase", [
    ("store = postgresql://x\n", "is not TOML"),
    ('stroe = "lab.db"\n', "unknown setting 'stroe'"),
    ("store = 5\n", "store must be a text"),
    ('store = ""\n', "empty"),
])
def test_a_bad_config_is_one_line_naming_the_file(homes, text, phrase):
    config = write_config(homes / "config" / "disklab" / "config.toml", text)
    result = CliRunner().invoke(cli, ["runs"])
    assert_clean(result)
    assert result.exit_code == 2 and phrase in result.stderr and str(config) in result.stderr


def test_the_config_points_every_command_at_its_store(homes):
    lab = homes / "lab.db"
    write_config(locations.SYSTEM_CONFIG, f'store = "{lab}"\n')
    assert import_into() == str(lab)
    assert stored_runs(lab) == [1] and not (homes / "home").exists()


def test_the_command_line_comes_before_the_environment_and_the_environment_before_the_config(homes, monkeypatch):
    write_config(locations.SYSTEM_CONFIG, f'store = "{homes / "config.db"}"\n')
    monkeypatch.setenv("DISKLAB_STORE", str(homes / "variable.db"))
    assert import_into() == str(homes / "variable.db")
    assert import_into("--db", str(homes / "flag.db")) == str(homes / "flag.db")
    assert import_into("--store", str(homes / "store-flag.db")) == str(homes / "store-flag.db")
    assert not (homes / "config.db").exists()


def test_store_and_db_together_are_refused(homes):
    result = CliRunner().invoke(cli, ["--store", "a.db", "--db", "b.db", "runs"])
    assert_clean(result)
    assert result.exit_code == 2 and "not both" in result.stderr


def test_placeholders_become_psycopgs_and_literals_keep_their_text():
    assert _placeholders("SELECT ? WHERE key LIKE 'device.%.model' AND x = '?'") == \
        "SELECT %s WHERE key LIKE 'device.%%.model' AND x = '?'"


PASSWORD = "pw-never-shown"
_PARAMETERS = st.sampled_from(["sslmode", "connect_timeout", "target_session_attrs", "application_name", "options",
                               "gssencmode", "channel_binding", "keepalives"])


@FUZZ
@given(user=st.text(alphabet="abcdefghij_-.", min_size=0, max_size=8),
       port=st.integers(1, 65535) | st.text(alphabet="0123456789x", max_size=6),
       database=st.text(max_size=12),
       query=st.lists(st.tuples(_PARAMETERS, st.text(alphabet="abcdefz0129-=& ", max_size=8)), max_size=2))
def test_a_store_url_that_cannot_be_used_is_one_line_without_its_password(homes, user, port, database, query):
    """Wherever libpq stops (a bad port or parameter, nothing listening, a refused login), one line, exit 2 or 5."""
    from urllib.parse import quote

    parameters = "&".join(f"{name}={quote(value)}" for name, value in query)
    url = f"postgresql://{user}:{PASSWORD}@127.0.0.1:{port}/{quote(database)}" + (f"?{parameters}" if query else "")
    result = CliRunner().invoke(cli, ["--store", url, "runs"], env={"PGCONNECT_TIMEOUT": "3"})
    assert_clean(result)
    assert PASSWORD not in result.output and PASSWORD not in result.stderr
    if result.exit_code:
        assert result.exit_code in (2, 5) and "postgresql://" in result.stderr


@given(st.text(max_size=30))
def test_any_text_parses_as_a_url_or_a_file_or_is_refused_as_empty(text):
    try:
        location = parse_location(text)
    except UserError:
        assert not text.strip()
        return
    assert location == text if text.startswith(("postgresql://", "postgres://")) else location == Path(text)


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_a_url_given_as_a_file_is_refused_and_no_file_is_made_of_it(homes, monkeypatch, scheme):
    """--db (and DISKLAB_DB) take a file: a URL there is a mistake, and made into a path it would write the store,
    and the password, into folders named after the URL."""
    monkeypatch.chdir(homes)
    url = f"{scheme}://lab:s3cret@127.0.0.1:1/results"
    for options, env in ((["--db", url], {}), ([], {"DISKLAB_DB": url})):
        result = CliRunner().invoke(cli, [*options, "import", str(IMPORT_FIXTURE)], env=env)
        assert result.exit_code == 2, result.output
        assert "--store" in result.stderr and "s3cret" not in result.output
        assert not (homes / f"{scheme}:").exists()
