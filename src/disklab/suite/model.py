"""Suites and the tests they expand to, as frozen values."""

from dataclasses import asdict, dataclass

# fio rw modes that never write; everything else counts as writing (allow-list).
READ_ONLY_RW_MODES = frozenset({"read", "randread"})


@dataclass(frozen=True)
class TestSpec:
    """One fio test, every parameter resolved."""

    label: str
    pattern: str
    direction: str
    rwmixread: int
    bs: int
    iodepth: int
    jobs: int
    runtime: float
    ramp: float
    size: int
    direct: bool
    engine: str

    @property
    def fio_rw(self) -> str:
        random = self.pattern == "random"
        if self.direction == "mixed":
            return "randrw" if random else "rw"
        if self.direction == "write":
            return "randwrite" if random else "write"
        return "randread" if random else "read"

    @property
    def writes(self) -> bool:
        return self.fio_rw not in READ_ONLY_RW_MODES

    def params(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "label"}


@dataclass(frozen=True)
class Group:
    """A block of a suite file: fixed values and lists that expand as a grid."""

    name: str
    label: str | None
    values: tuple[tuple[str, object], ...]  # in file order; a tuple value is a grid axis


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    source: str  # "built-in" or the file path
    text: str  # the TOML as loaded, stored with every run
    defaults: tuple[tuple[str, object], ...]
    groups: tuple[Group, ...]
