"""Defensive look-ups shared by the environment's collectors: a missing file, tool or permission gives None
("unknown"), never an exception, so one unreadable fact cannot stop a run."""

from __future__ import annotations

import subprocess
from pathlib import Path


def read_file(path: Path, default: str | None = None) -> str | None:
    """The file's text, stripped; `default` when it is missing, unreadable or empty."""
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return default
    return text or default


def to_int(text: str | None) -> int | None:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def run_quietly(argv: list[str]) -> str | None:
    """A tool's stdout, or None when it is missing, fails or hangs."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None
