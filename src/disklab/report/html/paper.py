"""The PDF's paper, A4 or US Letter: the one the user names, else the one the locale's paper category uses, as
glibc's LC_PAPER sets it for programs that print.

glibc reads a category's locale from LC_ALL, else LC_PAPER, else LANG (the first set and not empty); the locale's
territory decides its paper. Its locale sources (localedata/locales, /usr/share/i18n/locales) give Letter
(height 279 mm, width 216 mm) to every locale of the territories below, and A4 to all others, C and POSIX too.
"""

import re
from collections.abc import Mapping

# --paper's values -> the page size Chromium prints on (CSS's @page size).
PAPERS = {"a4": "A4", "letter": "letter"}
LETTER_TERRITORIES = frozenset({"BO", "CA", "CL", "CO", "CR", "GT", "MX", "NI", "PA", "PH", "PR", "SV", "US", "VE"})
_LOCALE_VARIABLES = ("LC_ALL", "LC_PAPER", "LANG")
# language_TERRITORY[.codeset][@modifier]: en_US.UTF-8, fr_CA, es_MX@euro
_TERRITORY = re.compile(r"[A-Za-z]{2,3}_([A-Za-z]{2})(?=$|[.@])")


def locale_paper(environ: Mapping[str, str]) -> str:
    """'letter' where the locale glibc reads the paper category from is in a Letter territory, else 'a4'."""
    name = next((environ[variable] for variable in _LOCALE_VARIABLES if environ.get(variable)), "")
    match = _TERRITORY.match(name)
    return "letter" if match and match.group(1).upper() in LETTER_TERRITORIES else "a4"


def page_style(paper: str) -> str:
    """The style that prints the page on `paper` (a key of PAPERS)."""
    return f"<style>@page {{ size: {PAPERS[paper]}; }}</style>"
