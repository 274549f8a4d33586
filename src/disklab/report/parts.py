"""Each part of a report, a page or a screen (a table, a chart family, the findings) drawn on its own, so that a part
one stored run cannot be drawn in says so and every other part is still drawn: one run never takes a report, a page
of serve or a published site down with it. A part that fails is a bug in disklab, named with its reason; the store's
own failures still stop the command (StoreError), since nothing else could be read either."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from disklab.errors import StoreError

_Drawn = TypeVar("_Drawn")


@dataclass(frozen=True)
class Undrawn:
    part: str  # what is missing, named as the reader finds it: "run 5 · findings", "charts"
    reason: str  # the error, one line

    def __str__(self) -> str:
        return f"{self.part} could not be drawn ({self.reason}): this is a bug in disklab, please report it"


@dataclass
class Parts:
    """Collects what could not be drawn while a page is built; `undrawn` then says it, in the order met."""

    undrawn: list[Undrawn] = field(default_factory=list)

    def draw(self, part: str, build: Callable[[], _Drawn], missing: _Drawn = None) -> _Drawn:
        """build(), or `missing` with the failure noted."""
        try:
            return build()
        except StoreError:
            raise
        except Exception as exc:  # the promise: one part's bug is that part's, never the page's
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())
            self.undrawn.append(Undrawn(part, reason[:300]))
            return missing
