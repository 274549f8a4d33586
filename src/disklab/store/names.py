"""What a run's name (and other text a user gives to be shown: a note, a report's title) may be: text that reads
back exactly as given in a table, a legend or a terminal."""

import unicodedata

MAX_NAME_CHARS = 100
# Control characters (a newline, an escape sequence) and line separators break a table's line or drive the
# terminal; bidirectional overrides and isolates reorder the text shown after the name.
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cs": "a lone surrogate", "Zl": "a line break",
                       "Zp": "a paragraph break"}
_BIDI_CONTROLS = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_LINE_BREAKS = {"\n", "\t"}  # what text of several lines may hold: its lines and tabs


def run_name(text: str) -> str:
    """The name as given, or ValueError saying in one line why it cannot be one (--clear removes a name)."""
    if not text.strip():
        raise ValueError("a run's name cannot be empty or blank (rename RUN --clear removes a name)")
    return checked_text(text, "a run's name", MAX_NAME_CHARS)


def checked_text(text: str, what: str, max_chars: int, lines: bool = False) -> str:
    """`text` as given, or ValueError saying in one line why `what` cannot be it; `lines`: it may span lines."""
    if not text.strip():
        raise ValueError(f"{what} cannot be empty or blank")
    if text != text.strip():
        raise ValueError(f"{text!r}: {what} cannot start or end with white space")
    if len(text) > max_chars:
        raise ValueError(f"{what} has at most {max_chars} characters, not {len(text)}")
    for char in text:
        if lines and char in _LINE_BREAKS:
            continue
        refused = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if refused or char in _BIDI_CONTROLS:
            reason = refused or "a bidirectional text control"
            raise ValueError(f"{text!r}: {what} cannot hold {reason} ({ascii(char)}, U+{ord(char):04X})")
    return text
