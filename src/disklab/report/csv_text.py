"""CSV as disklab writes it: rows end in a line feed, and a row whose text holds a carriage return is quoted whole.

Python's csv module quotes a field holding a character of the line terminator; under lineterminator="\n" a bare
carriage return was none before CPython 3.11.9 and 3.12.3 (gh-67044), and every reader takes an unquoted one for
the row's end: a test labelled "a\rb" split its row in two.
"""

import csv
from collections.abc import Iterable, Sequence
from typing import TextIO


class CsvWriter:
    """csv.writer's writerow and writerows, a row that holds a carriage return written with every field quoted."""

    def __init__(self, out: TextIO):
        self._plain = csv.writer(out, lineterminator="\n")
        self._quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: Iterable):
        row = list(row)  # DictWriter hands over a generator
        carries = any(isinstance(field, str) and "\r" in field for field in row)
        return (self._quoted if carries else self._plain).writerow(row)

    def writerows(self, rows: Iterable[Iterable]) -> None:
        for row in rows:
            self.writerow(row)


class CsvDictWriter(csv.DictWriter):
    """csv.DictWriter (an unknown key refused) writing through CsvWriter."""

    def __init__(self, out: TextIO, fieldnames: Sequence[str]):
        super().__init__(out, fieldnames=fieldnames)
        self.writer = CsvWriter(out)
