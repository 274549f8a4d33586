"""Drive health before and after a run, from `smartctl --json -a`, and the changes worth showing.

smartctl reads the drive's own counters (it does no benchmark I/O). Where it is
missing or the device has no SMART (virtual disks), the reason is recorded
instead and the run goes on.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass

# NVMe counts data units of 1000 512-byte blocks (NVMe base specification, SMART / Health log).
NVME_DATA_UNIT_BYTES = 512 * 1000
_NVME_FIELDS = (
    ("data written", "data_units_written", "bytes", NVME_DATA_UNIT_BYTES),
    ("data read", "data_units_read", "bytes", NVME_DATA_UNIT_BYTES),
    ("media errors", "media_errors", "", 1),
    ("error log entries", "num_err_log_entries", "", 1),
    ("percentage used (wear)", "percentage_used", "%", 1),
    ("available spare", "available_spare", "%", 1),
    ("unsafe shutdowns", "unsafe_shutdowns", "", 1),
)
# ATA attributes by name: (label, raw or normalised value, unit, scale; None scales by the logical block size).
_ATA_ATTRIBUTES = {
    "Total_LBAs_Written": ("data written", "raw", "bytes", None),
    "Total_LBAs_Read": ("data read", "raw", "bytes", None),
    "Host_Writes_32MiB": ("data written", "raw", "bytes", 32 * 1024**2),
    "Reallocated_Sector_Ct": ("reallocated sectors", "raw", "", 1),
    "Current_Pending_Sector": ("pending sectors", "raw", "", 1),
    "Offline_Uncorrectable": ("offline uncorrectable", "raw", "", 1),
    "Reported_Uncorrect": ("reported uncorrectable", "raw", "", 1),
    "UDMA_CRC_Error_Count": ("interface CRC errors", "raw", "", 1),
    "Wear_Leveling_Count": ("wear levelling (normalised, 100 = new)", "value", "", 1),
    "Media_Wearout_Indicator": ("media wearout (normalised, 100 = new)", "value", "", 1),
    "Percent_Lifetime_Remain": ("lifetime remaining (normalised)", "value", "", 1),
}


@dataclass(frozen=True)
class SmartChange:
    label: str
    unit: str  # "bytes", "%", "°C" or "" for counts
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


def read_smart(device_path: str) -> dict:
    """smartctl's JSON for the device, or {"disklab_error": reason} when there is none to be had."""
    smartctl = shutil.which("smartctl")
    if smartctl is None:
        return {"disklab_error": "smartctl not installed (apt-get install smartmontools)"}
    try:
        result = subprocess.run([smartctl, "--json", "-a", device_path], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"disklab_error": f"smartctl failed: {exc}"}
    try:
        data = json.loads(result.stdout)
    except ValueError:
        return {"disklab_error": f"smartctl gave no JSON (exit status {result.returncode})"}
    return data if isinstance(data, dict) else {"disklab_error": "smartctl gave unexpected JSON"}


def unavailable_reason(data: dict) -> str | None:
    """None when `data` carries health counters; otherwise why not, in smartctl's words where it gave some."""
    if "disklab_error" in data:
        return data["disklab_error"]
    if any(k in data for k in ("nvme_smart_health_information_log", "ata_smart_attributes", "scsi_error_counter_log")):
        return None
    messages = [m.get("string", "") for m in data.get("smartctl", {}).get("messages", []) if isinstance(m, dict)]
    return "; ".join(m for m in messages if m) or "the device reports no SMART health data"


def health_values(data: dict) -> dict[str, tuple[float, str]]:
    """{label: (value, unit)} of the counters that matter, from one smartctl report."""
    values: dict[str, tuple[float, str]] = {}
    nvme = data.get("nvme_smart_health_information_log")
    if isinstance(nvme, dict):
        for label, field, unit, scale in _NVME_FIELDS:
            if isinstance(nvme.get(field), (int, float)):
                values[label] = (nvme[field] * scale, unit)
    table = data.get("ata_smart_attributes", {}).get("table", []) if isinstance(data.get("ata_smart_attributes"), dict) else []
    block = data.get("logical_block_size") or 512
    for attribute in table:
        known = _ATA_ATTRIBUTES.get(attribute.get("name"))
        if known is None or known[0] in values:
            continue
        label, which, unit, scale = known
        raw = attribute.get("raw", {}).get("value") if which == "raw" else attribute.get("value")
        if isinstance(raw, (int, float)):
            values[label] = (raw * (block if scale is None else scale), unit)
    temperature = data.get("temperature", {}).get("current") if isinstance(data.get("temperature"), dict) else None
    if temperature is None and isinstance(nvme, dict):
        temperature = nvme.get("temperature")
    if isinstance(temperature, (int, float)):
        values["temperature"] = (temperature, "°C")
    return values


def smart_changes(before: dict, after: dict) -> list[SmartChange]:
    """Counters present in both reports, in a fixed order, with what the run changed."""
    a, b = health_values(before), health_values(after)
    return [SmartChange(label, unit, a[label][0], b[label][0]) for label, (_, unit) in b.items() if label in a]


def format_amount(value: float, unit: str, signed: bool = False) -> str:
    sign = "+" if signed and value > 0 else ""
    if unit == "bytes":
        return f"{sign}{value / 1e9:,.3f} GB"
    if unit:
        return f"{sign}{value:,.0f} {unit}"
    return f"{sign}{value:,.0f}"
