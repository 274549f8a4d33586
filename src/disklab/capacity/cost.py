"""Power and money of an array: energy a year, operating cost with the data centre's PUE, purchase, TCO.

Study M2's arithmetic: 90 W run all year is 90 x 8,760 h / 1,000 = 788 kWh; at 0.07 EUR/kWh and a PUE of
1.3 that is 72 EUR a year.
"""

from dataclasses import dataclass

from disklab.capacity.layout import Layout

HOURS_PER_YEAR = 8760
DEFAULT_PRICE_PER_KWH = 0.07  # EUR, study M2's assumption
DEFAULT_PUE = 1.3  # study M2's data centre
DEFAULT_YEARS = 5  # a common depreciation period and enterprise drives' warranty


@dataclass(frozen=True)
class Money:
    """How power is priced."""

    price_per_kwh: float = DEFAULT_PRICE_PER_KWH
    pue: float = DEFAULT_PUE
    years: int = DEFAULT_YEARS


@dataclass(frozen=True)
class Costs:
    """None: unknown, because a figure it depends on (the drives' power or price) is unknown; never 0."""

    power_w: float | None
    power_source: str  # "catalogue" (drives' active power) or "given"
    energy_kwh_per_year: float | None
    operating_per_year: float | None
    purchase: float | None
    per_tb: float | None  # purchase per net TB (10^12 bytes)
    per_1000_iops: float | None  # purchase per 1,000 predicted IOPS; None without a price or a prediction
    total: float | None  # purchase + operating over the years
    years: int


def energy_kwh_per_year(watts: float) -> float:
    return watts * HOURS_PER_YEAR / 1000


def operating_cost_per_year(watts: float, money: Money) -> float:
    """Electricity of the drives and of the cooling and power conversion around them (PUE)."""
    return energy_kwh_per_year(watts) * money.price_per_kwh * money.pue


def array_power_w(layout: Layout) -> float | None:
    """Every drive at its active power: an array under load keeps them all busy (enclosures not included).
    None when the drive file has no active power."""
    active = layout.drive.power_active_w
    return None if active is None else layout.count * active


def costs(layout: Layout, money: Money, iops: float | None, given_power_w: float | None = None) -> Costs:
    power = array_power_w(layout) if given_power_w is None else given_power_w
    price = layout.drive.price_eur
    purchase = None if price is None else layout.count * price
    operating = None if power is None else operating_cost_per_year(power, money)
    return Costs(
        power_w=power, power_source="catalogue" if given_power_w is None else "given",
        energy_kwh_per_year=None if power is None else energy_kwh_per_year(power), operating_per_year=operating,
        purchase=purchase, per_tb=None if purchase is None else purchase / (layout.net_capacity_bytes / 1e12),
        per_1000_iops=purchase / (iops / 1000) if purchase is not None and iops else None,
        total=None if purchase is None or operating is None else purchase + money.years * operating,
        years=money.years,
    )
