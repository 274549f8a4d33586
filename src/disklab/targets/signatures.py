"""What blkid -p finds on a block device: file system, RAID member and partition table signatures, the data a
device may carry though nothing uses it now. blkid reads the device's first and last blocks; nothing is written."""

from __future__ import annotations

import subprocess

from disklab.errors import SafetyError

BLKID_NOTHING_FOUND = 2
BLKID_AMBIGUOUS = 8


def run_blkid(path: str) -> subprocess.CompletedProcess[str]:
    """Low-level probe (-p, bypassing blkid's cache) for file system, RAID and partition-table signatures."""
    try:
        return subprocess.run(
            ["blkid", "-p", "-o", "export", path], capture_output=True, text=True, check=False
        )
    except FileNotFoundError as error:
        raise SafetyError(
            f"cannot check {path} for existing data: blkid is not installed; install util-linux"
        ) from error


def device_contents(path: str) -> str:
    """What blkid -p finds on the device, in words for the run's header: a device may carry data its user forgot."""
    try:
        signatures = signatures_from_blkid(path, run_blkid(path))
    except SafetyError:
        return "its contents unknown (blkid -p could not read it)"
    if not signatures:
        return "with no file system, RAID member or partition table signature"
    return "carrying " + " and ".join(with_article(s) for s in signatures)  # blkid names two at most


def signatures_from_blkid(path: str, result: subprocess.CompletedProcess[str]) -> tuple[str, ...]:
    # blkid also exits 2 when it cannot open the device; only a silent 2 means "blank".
    if result.returncode == BLKID_NOTHING_FOUND and not result.stderr.strip():
        return ()
    if result.returncode == BLKID_AMBIGUOUS:
        return ("several conflicting signatures (blkid -p reports an ambiguous result)",)
    if result.returncode != 0:
        detail = result.stderr.strip() or f"exit status {result.returncode}"
        raise SafetyError(f"cannot check {path} for existing data: blkid -p failed ({detail}); run it by hand to see why")
    fields = {}
    for line in result.stdout.splitlines():
        key, separator, value = line.partition("=")
        if separator:
            fields[key] = value
    signatures = []
    if "PTTYPE" in fields:
        signatures.append(f"{fields['PTTYPE']} partition table")
    if "TYPE" in fields:
        signatures.append(_describe_signature(fields["TYPE"], fields.get("USAGE", "")))
    return tuple(signatures)


def _describe_signature(kind: str, usage: str) -> str:
    if kind.endswith("_member"):  # linux_raid_member, LVM2_member, zfs_member: the name already says it
        return kind
    if usage == "filesystem":
        return f"{kind} file system"
    if usage == "crypto":
        return f"{kind} encrypted volume"
    return f"{kind} signature"


def with_article(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeioux" else f"a {noun}"
