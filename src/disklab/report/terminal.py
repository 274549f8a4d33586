"""Stored and external text as a terminal shows it: its control and bidi characters escaped, never obeyed.

Names, labels, targets, device models and fio's messages come from users, imported files and devices; an ESC
recolours or moves the cursor, a CR or BS rewrites the line, a U+202E turns the rest of the line around. Machine
formats (JSON, CSV) keep the text as stored; terminals and Markdown get it through here.
"""

import re
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

# C0 and C1 controls but the line feed (0x9b is an 8-bit CSI), the bidi marks, embeddings, overrides and isolates,
# the line and paragraph separators, and lone surrogates (no encoding writes them). Format characters that
# emoji are made of (ZWJ, tags) are ordinary text.
_UNSAFE_BUT_NEWLINE = "\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = {False: re.compile(f"[\n{_UNSAFE_BUT_NEWLINE}]"), True: re.compile(f"[{_UNSAFE_BUT_NEWLINE}]")}


def terminal_text(text: str, keep_lines: bool = False) -> str:
    """`text` with each unsafe character written as Python writes it (\\x1b, \\r, \\u202e), printable text as it is;
    keep_lines leaves line feeds to a renderer that lays out lines itself (rich keeps them inside their cell)."""
    return _UNSAFE[keep_lines].sub(_escape, text)


def _escape(match: re.Match) -> str:
    return repr(match[0])[1:-1]


def terminal_rich_text(text: "Text") -> "Text":
    """A rich Text escaped as terminal_text(keep_lines=True) escapes a string, each style kept on its characters."""
    plain = text.plain
    if not _UNSAFE[True].search(plain):
        return text
    pieces = [terminal_text(character, keep_lines=True) for character in plain]
    starts = list(accumulate(map(len, pieces), initial=0))
    escaped = text.blank_copy("".join(pieces))
    escaped.spans = [span._replace(start=starts[min(span.start, len(plain))], end=starts[min(span.end, len(plain))])
                     for span in text.spans]
    return escaped
