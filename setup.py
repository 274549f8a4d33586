"""The build's one step beyond pyproject.toml: the man pages, written from the CLI itself (scripts/man.py, which
needs only click and rich, listed in pyproject.toml's build requirements) and installed into share/man/man1, where
`man` finds them beside the environment's bin/ on PATH."""

import importlib.util
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
spec = importlib.util.spec_from_file_location("man", ROOT / "scripts" / "man.py")
man = importlib.util.module_from_spec(spec)
spec.loader.exec_module(man)
pages = man.write_pages(ROOT / "build" / "man")

setup(data_files=[("share/man/man1", [str(p.relative_to(ROOT)) for p in pages])])
