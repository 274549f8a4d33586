"""Whether fio knows the options a test hands it as written: fio's own parser answers (`fio --parse-only`), and a name
it does not know is called a typo with the nearest of fio's option names (`--cmdhelp`, the engine's `--enghelp`).

Asked before a run starts, so that a misspelt option fails in one line rather than as the first test's fio error.
"""

import difflib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from disklab.system.outputs import write_whole

_BAD_OPTION = re.compile(r"Bad option <([^>=]*)(?:=[^>]*)?>")
_HELP_NAME = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*:", re.MULTILINE)
_VALID_VALUE = re.compile(r"^\s*(?:valid values)?\s*:\s*(\S+)\s", re.MULTILINE)  # fio's list of an option's values
ASK_SECONDS = 30  # fio answers in a few hundredths of a second; a hung binary must not hang the command


def fio_refusal(options_text: str, engine: str, fio: str | None = None) -> str | None:
    """Why fio would not run a job of these options (one line, naming the nearest option of a misspelt one), or None
    when it would, or when no fio is installed to ask (the run itself then stops at fio's absence)."""
    path = shutil.which(fio or "fio")
    if path is None:
        return None
    with tempfile.TemporaryDirectory(prefix="disklab-options-") as folder:
        job = Path(folder) / "options.fio"
        write_whole(job, f"[options]\nioengine={engine}\n{options_text}\n", "fio job file")
        answer = _ask(path, "--parse-only", str(job))
    if answer is None or answer.returncode == 0:
        return None
    said = f"{answer.stdout}\n{answer.stderr}"
    unknown = _BAD_OPTION.search(said)
    if unknown:
        name = unknown.group(1).strip()
        close = difflib.get_close_matches(name, _option_names(path, engine), n=1)
        nearest = f"; did you mean {close[0]!r}?" if close else ""
        return f"{name}: not an option fio knows (a typo?){nearest}"
    failed = [line.strip().removeprefix("fio: ") for line in said.splitlines()
              if line.strip().startswith("fio: ") and "dropped" not in line]
    valid = _VALID_VALUE.findall(said)
    reason = (failed[0] if failed else f"exit status {answer.returncode}") + (
        f" (fio takes {', '.join(valid)})" if valid else "")
    return f"fio refuses the options handed to it as written: {reason}"


def _option_names(path: str, engine: str) -> list[str]:
    names = []
    for asked in ("--cmdhelp=all", f"--enghelp={engine}"):
        answer = _ask(path, asked)
        if answer is not None:
            names += _HELP_NAME.findall(answer.stdout)
    return names


def _ask(path: str, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run([path, *args], capture_output=True, text=True, timeout=ASK_SECONDS, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
