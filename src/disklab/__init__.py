"""disklab: a storage benchmark lab driving fio, with every result kept in SQLite.

Its version names the code that made a run (every run, bundle, job file and chart footer records it): the git tag,
else the commits since and the commit, as setuptools-scm writes it (0.1.dev137+g9f4c50f; .dYYYYMMDD after it when
the work tree had changes). Worked out only when asked for, once, so that `runs` and `show` never pay for it.
"""

from functools import cache
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]  # src/disklab/ -> the work tree, where disklab runs from a checkout
UNKNOWN = "unknown"  # neither git nor a build said


def __getattr__(name: str) -> str:
    """`disklab.__version__`, the name other tools look for, from version()."""
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def version() -> str:
    """In a checkout, the commit it is at now (an editable install's version file keeps the commit it was installed
    at); installed, the version the build wrote into disklab/_version.py (setuptools-scm's version_file)."""
    return _checkout_version() or _built_version()


def _checkout_version() -> str | None:
    """setuptools-scm on the work tree (pyproject.toml sets no scheme of its own: its defaults are the build's); None
    outside a checkout, without setuptools-scm (scripts/setup.sh puts it in .venv) or where git cannot tell (not
    installed, a repository of another owner)."""
    if not ((_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / ".git").exists()):
        return None
    try:
        from setuptools_scm import get_version
    except ImportError:
        return None
    import logging
    import warnings

    logging.getLogger("vcs_versioning").setLevel(logging.ERROR)  # its warnings are for a build's log, not a command's
    logging.getLogger("setuptools_scm").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # No fallback_version: where git cannot tell, the version file says more than the fallback would.
            return get_version(root=str(_CHECKOUT))
        except Exception:  # noqa: BLE001 - provenance: whatever git or setuptools-scm does, a command goes on
            return None


def _built_version() -> str:
    try:
        from disklab._version import version as built
    except ImportError:  # a source tree that was never built or installed
        return UNKNOWN
    return built
