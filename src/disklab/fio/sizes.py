"""fio's sizes as fio itself reads them (its parse.c: str_to_decimal, get_mult_bytes; handle_option's splits).

Not disklab's suite units (units.py): fio's default kb_base=1024 reads SI prefixes as powers of 1024 and IEC
prefixes as powers of 1000 ('4KiB' is 4,000 bytes, '16MB' is 16 MiB); kb_base=1000 reads both as their
standards say. Only the first letter of a suffix counts ('Mi', 'mega' and 'm' are all 'm'), in any case; a
'b'/'B' alone means bytes. fio reads whole numbers only: '1.5k' is 1 byte to fio, and so it is here.
Checked against fio 3.33 (tests/unit/test_fio_sizes.py lists the cases).
"""

import re
from typing import Mapping

from disklab.units import fio_size

KB_BASES = (1024, 1000)
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SEPARATORS = ":-,/"  # a suffix ends at the first of these (fio's is_separator)
DIRECTIONS = ("read", "write", "trim")


def kb_base(options: Mapping) -> int:
    """The job's kb_base option (fio's default 1024); ValueError for any other value, as fio refuses it."""
    value = str(options.get("kb_base", "1024")).strip()
    if value not in ("1024", "1000"):
        raise ValueError(f"kb_base={value} (fio allows 1024 or 1000)")
    return int(value)


def option_bases(*sections: Mapping) -> dict[str, int]:
    """The kb_base each option was read with: fio reads options in order (global ones first, then the job's, each in
    the order fio reports them) and kb_base applies to the options after it. A job file puts kb_base first in its
    section; on fio's command line `--size=1MiB --kb_base=1000` reads the size with 1024."""
    bases: dict[str, int] = {}
    current = 1024
    for section in sections:
        for key, value in section.items():
            if key == "kb_base":
                current = kb_base({"kb_base": value})
            bases[key] = current
    return bases


def is_percent(text: str) -> bool:
    """A size fio reads as a share of the file or device ('50%'), not as bytes."""
    return _suffix(str(text)).startswith("%")


def parse_fio_size(text: str | int, base: int = 1024) -> int:
    """Bytes as fio reads one size ('4k', '50000Mi', '4KiB', '0x1000'); ValueError where fio would fail or the
    value is relative (a percentage) or negative."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    text = str(text)
    if text.lstrip().startswith("("):
        raise ValueError(f"{text!r}: fio's arithmetic expressions are not read")
    number = _leading_integer(text)
    if number is None:
        raise ValueError(f"{text!r} is not a size fio reads (examples: 4096, 4k, 64KiB, 1g)")
    suffix = _suffix(text)
    if suffix.startswith("%"):
        raise ValueError(f"{text!r} is a share of the file or device, not a size")
    value = number * _multiplier(suffix, base)
    if value < 0:
        raise ValueError(f"{text!r} is negative")
    return value


def per_direction(text: str, base: int = 1024) -> dict[str, int | None]:
    """An option such as bs or rate, given once or per direction: {'read': ..., 'write': ..., 'trim': ...}.

    fio splits the value at commas (else at ':' or '-'); the last value also applies to the directions after it
    unless a comma ends the text ('8k,' sets reads only); an empty value (',8k') leaves that direction at fio's
    default, None here.
    """
    parts = _directions(str(text), _split_values)
    return {d: parse_fio_size(part, base) if part else None for d, part in parts.items()}


def parse_range(text: str, base: int = 1024) -> dict[str, tuple[int, int] | None]:
    """bsrange ('1k-4k' or '1k:4k', per direction at commas): (low, high) per direction, as fio orders them."""
    result: dict[str, tuple[int, int] | None] = {}
    for direction, part in _directions(str(text), lambda t: t.split(",")).items():
        if not part:
            result[direction] = None
            continue
        low, sep, high = part.partition("-") if "-" in part else part.partition(":")
        if not sep or not low or not high:
            raise ValueError(f"{part!r} is not a range such as 4k-16k")
        result[direction] = tuple(sorted((parse_fio_size(low, base), parse_fio_size(high, base))))
    return result


def parse_bssplit(text: str, base: int = 1024) -> dict[str, tuple[tuple[int, int | None], ...] | None]:
    """bssplit ('4k/20:64k/80', per direction at commas): ((bytes, share, None when left blank), ...) each."""
    result: dict[str, tuple[tuple[int, int | None], ...] | None] = {}
    for direction, section in _directions(str(text), lambda t: t.split(",")).items():
        if not section:
            result[direction] = None
            continue
        entries = []
        for part in section.split(":"):
            size, slash, share = part.partition("/")
            if slash and not (share.strip().isascii() and share.strip().isdigit()):
                raise ValueError(f"{part!r} in bssplit={text} is not SIZE/PERCENT")
            entries.append((parse_fio_size(size, base), min(int(share), 100) if slash else None))
        result[direction] = tuple(entries)
    return result


def one_bssplit(text: str, base: int, directions: tuple[str, ...]) -> str:
    """A bssplit that the given directions share, written back in k/m/g (powers of 1024), which disklab's suites and
    fio read alike; ValueError where the directions differ or a share is left blank (fio fills it in)."""
    sections = {parse_bssplit(text, base)[d] for d in directions}
    if len(sections) > 1 or None in sections:
        raise ValueError(f"bssplit={text} differs between reads and writes; a disklab test has one")
    section = sections.pop()
    if any(share is None for _, share in section):
        raise ValueError(f"bssplit={text} leaves a share blank; disklab reads SIZE/PERCENT")
    return ":".join(f"{fio_size(size)}/{share}" for size, share in section)


def _directions(text: str, split) -> dict[str, str | None]:
    """Values for read, write and trim: given ones in order, the last repeated unless the text ends with a comma."""
    sticky = not text.endswith(",")
    parts = [p if p.strip() else None for p in split(text[:-1] if not sticky else text)]
    return {
        d: parts[i] if i < len(parts) else (parts[-1] if sticky else None) for i, d in enumerate(DIRECTIONS)
    }


def _split_values(text: str) -> list[str]:
    """fio's handle_option: each value ends at a ',' if the rest has one, else at its first ':' or '-'."""
    parts = []
    while True:
        cut = next((text.find(sep) for sep in ",:-" if sep in text), -1)
        if cut < 0:
            return parts + [text]
        parts.append(text[:cut])
        text = text[cut + 1:]


def _leading_integer(text: str) -> int | None:
    """C's strtoll as fio calls it: leading blanks, a sign, then decimal digits, or hex when '0x' is anywhere."""
    hexadecimal = "0x" in text.lower()
    match = re.match(r"\s*([+-]?)(0[xX])?([0-9a-fA-F]+)" if hexadecimal else r"\s*([+-]?)()([0-9]+)", text)
    if not match:
        return None
    value = int(match.group(3), 16 if hexadecimal else 10)
    return -value if match.group(1) == "-" else value


def _suffix(text: str) -> str:
    """What fio's get_mult_bytes reads: the text after the leading sign and digits, if it starts with a letter or %."""
    match = re.match(r"[+-]*[0-9]*", text)
    rest = text[match.end():]
    if not rest or not (rest[0].isascii() and (rest[0].isalpha() or rest[0] == "%")):
        return ""
    for index, char in enumerate(rest):
        if char in _SEPARATORS:
            return rest[:index].lower()
    return rest.lower()


def _multiplier(suffix: str, base: int) -> int:
    """fio's __get_mult_bytes: 'kib'.. IEC and 'k'.. SI, each the opposite power under the default kb_base=1024."""
    if len(suffix) >= 3 and suffix[1:3] == "ib" and suffix[0] in _POWERS:
        return (1000 if base == 1024 else 1024) ** _POWERS[suffix[0]]
    if suffix[:1] in _POWERS:
        return base ** _POWERS[suffix[0]]
    return 1
