"""What a run's name may be: any text that reads back exactly as given on one line of a table or a legend."""

import unicodedata

MAX_NAME_CHARS = 100
# Control characters (a newline, an escape sequence) and line separators break a table's line or drive the
# terminal; bidirectional overrides and isolates reorder the text shown after the name.
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cs": "a lone surrogate", "Zl": "a line break",
                       "Zp": "a paragraph break"}
_BIDI_CONTROLS = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def run_name(text: str) -> str:
    """The name as given, or ValueError saying in one line why it cannot be one (--clear removes a name)."""
    if not text.strip():
        raise ValueError("a run's name cannot be empty or blank (rename RUN --clear removes a name)")
    if text != text.strip():
        raise ValueError(f"{text!r}: a run's name cannot start or end with white space")
    if len(text) > MAX_NAME_CHARS:
        raise ValueError(f"a run's name has at most {MAX_NAME_CHARS} characters, not {len(text)}")
    for char in text:
        refused = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if refused or char in _BIDI_CONTROLS:
            what = refused or "a bidirectional text control"
            raise ValueError(f"{text!r}: a run's name cannot hold {what} ({ascii(char)}, U+{ord(char):04X})")
    return text
