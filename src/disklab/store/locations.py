"""Where the results store is: a SQLite file, or a PostgreSQL database named by a postgresql:// URL.

Chosen by --store (or --db for a file), else DISKLAB_STORE (or DISKLAB_DB), else the `store` line of disklab's
config file (the user's, then the machine's: how every machine of a lab is pointed at one database), else the
file under DISKLAB_HOME.
"""

import os
from pathlib import Path

from disklab.errors import UserError
from disklab.store.db import default_store_path
from disklab.store.postgres import is_url, shown_url

SYSTEM_CONFIG = Path("/etc/disklab/config.toml")


def parse_location(text: str) -> Path | str:
    """A postgresql:// (or postgres://) URL as it is, anything else a file path."""
    if not text.strip():
        raise UserError("the results store is empty: give a file or a postgresql:// URL")
    return text if is_url(text) else Path(text)


def store_file(path: Path) -> Path:
    """--db's file; a URL there (made into a path, it would put the store and its password into folders named after
    it) is refused."""
    if str(path).startswith(("postgresql:", "postgres:")):
        raise UserError("--db (and DISKLAB_DB) take a SQLite file; give a PostgreSQL URL with --store (or "
                        "DISKLAB_STORE)")
    return path


def configured_location() -> Path | str:
    """The config file's store, else the default file."""
    for config in config_files():
        store = _config_store(config)
        if store is not None:
            return store
    return default_store_path()


def config_files() -> tuple[Path, ...]:
    """$XDG_CONFIG_HOME/disklab/config.toml (~/.config/disklab/config.toml), then /etc/disklab/config.toml; or the
    one file $DISKLAB_CONFIG names, none when it is empty (a script, a test suite: no machine's store)."""
    chosen = os.environ.get("DISKLAB_CONFIG")
    if chosen is not None:
        return (Path(chosen),) if chosen else ()
    config_home = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config_home) / "disklab" / "config.toml", SYSTEM_CONFIG


def shown_location(location: Path | str) -> str:
    """As messages name a store: a URL without its password."""
    return shown_url(location) if is_url(location) else str(location)


def _config_store(config: Path) -> Path | str | None:
    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read disklab's config file {config}: {getattr(exc, 'strerror', None) or exc}") from exc
    import tomllib  # loaded only when a config file is there

    try:
        settings = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"disklab's config file {config} is not TOML: {exc}") from exc
    unknown = sorted(set(settings) - {"store"})
    if unknown:
        raise UserError(f"disklab's config file {config}: unknown setting {unknown[0]!r}; it takes: store")
    store = settings.get("store")
    if store is None:
        return None
    if not isinstance(store, str):
        raise UserError(f"disklab's config file {config}: store must be a text (a file or a postgresql:// URL)")
    try:
        return parse_location(os.path.expanduser(store))
    except UserError as exc:
        raise UserError(f"disklab's config file {config}: {exc}") from None
