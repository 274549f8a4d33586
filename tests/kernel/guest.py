"""Debian's own kernel under QEMU, with this machine's root file system and real drivers beneath it: QEMU's NVMe
controllers, AHCI SATA disks (one rotational, an "HDD"), a SCSI disk, and whatever modules a script loads (md, dm,
scsi_debug, nfsd). The host's kernel has none of these drivers; the kernel tier runs disklab on them here.

The kernel is Debian's linux-image-amd64, unpacked into .venv/kernel by `scripts/setup.sh tests` and never installed
as this machine's kernel. A small initramfs of our own (static busybox, the virtio, 9p and overlay modules and
initramfs/init) mounts the host's root read-only over 9p with a RAM overlay (the guest writes where it likes and
nothing reaches the host), maps the unpacked modules to /lib/modules (initramfs/stage2.sh), starts udev, runs a
script and powers off. The script's output, exit status and the kernel log come back through a second 9p share,
the one folder of the host the guest can write. No KVM is needed: plain emulation (TCG), about 12 s to a shell here.
Why not virtme-ng: docs/kernel-tier.md.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.children import as_a_user_started_it

ROOT = Path(__file__).parents[2]
KERNEL_ROOT = ROOT / ".venv" / "kernel"  # scripts/setup.sh tests unpacks the kernel package here
HERE = Path(__file__).parent
# What the kernel log must never say unless a check caused it on purpose (the tier's own test reads these).
ALERTS = re.compile(r"BUG:|WARNING:|Oops|Kernel panic|Call Trace|general protection fault")
# Modules udev would load for the emulated machine that no check needs: kvm_amd alone takes ~10 s under emulation.
NOT_LOADED = ("kvm_amd", "kvm_intel", "kvm", "irqbypass", "ccp", "sr_mod", "cdrom", "iTCO_wdt", "iTCO_vendor_support",
              "i2c_i801", "i2c_smbus", "lpc_ich", "pcspkr", "psmouse", "serio_raw", "evdev", "aesni_intel",
              "ghash_clmulni_intel", "drm", "bochs")
# The guest's disks: (serial, QEMU device). Their serials name them in /dev/disk/by-id, whatever the kernel calls
# them on a boot. Four NVMe controllers, so that arrays of NVMe drives can be made.
NVME = tuple(f"DLNVME{n}" for n in range(4))
SATA_HDD, SATA_SSD, SCSI = "DLSATA0", "DLSATA1", "DLSCSI0"
DISK_BYTES = 512 * 1024**2
# The machine's own serials and UUID (DMI's system, mainboard and chassis), which disklab never records: given, so
# that a check can look for them in a store.
DMI_SERIALS = {"type=1": "DLSYSTEM0", "type=2": "DLBOARD0", "type=3": "DLCHASSIS0"}
DMI_UUID = "d15c1ab0-0000-4000-8000-000000000001"
# The exit status a script that the time bound stopped gets; 255: the guest died before it could say.
TIMED_OUT, GUEST_DIED = 124, 255


class Missing(Exception):
    """What this machine lacks for the tier, said as 'not run: ...' would."""


@dataclass(frozen=True)
class Kernel:
    image: Path
    version: str

    @property
    def modules(self) -> Path:
        return KERNEL_ROOT / "lib" / "modules" / self.version


@dataclass(frozen=True)
class Finished:
    status: int  # the script's exit status; TIMED_OUT, GUEST_DIED
    stdout: str
    stderr: str
    console: str  # the serial console: the boot, and a panic if there was one
    dmesg: str  # the kernel log at the script's end
    seconds: float

    @property
    def alerts(self) -> list[str]:
        return list(dict.fromkeys(line for line in f"{self.console}\n{self.dmesg}".splitlines() if ALERTS.search(line)))


def kernel() -> Kernel:
    """The unpacked kernel, or Missing saying how to get it."""
    if os.uname().machine != "x86_64":
        raise Missing(f"the kernel tier boots Debian's amd64 kernel; this machine is {os.uname().machine}")
    for tool, package in (("qemu-system-x86_64", "qemu-system-x86"), ("busybox", "busybox-static"),
                          ("cpio", "cpio"), ("modprobe", "kmod"), ("udevadm", "udev")):
        if shutil.which(tool) is None:
            raise Missing(f"{tool} is not installed (Debian's {package}; scripts/setup.sh tests installs it)")
    images = sorted(KERNEL_ROOT.glob("boot/vmlinuz-*"))
    if not images:
        raise Missing(f"no kernel in {KERNEL_ROOT}: scripts/setup.sh tests unpacks Debian's linux-image-amd64 there")
    found = Kernel(images[-1], images[-1].name.removeprefix("vmlinuz-"))
    if not (found.modules / "modules.dep").is_file():
        raise Missing(f"{found.modules} has no modules.dep: run depmod -b {KERNEL_ROOT} {found.version}")
    return found


def initramfs(found: Kernel, folder: Path) -> Path:
    """Static busybox, the modules that reach the host's root (in the order modprobe loads them), and the init."""
    tree = folder / "initramfs"
    (tree / "bin").mkdir(parents=True)
    (tree / "modules").mkdir()
    busybox = Path(shutil.which("busybox"))
    if subprocess.run(["ldd", str(busybox)], capture_output=True).returncode == 0:  # ldd: "not a dynamic executable"
        raise Missing(f"{busybox} is not linked statically (Debian's busybox-static)")
    shutil.copy(busybox, tree / "bin" / "busybox")
    modules = []
    for module in ("virtio_pci", "9pnet_virtio", "9p", "overlay"):
        shown = subprocess.run(["modprobe", "-d", str(KERNEL_ROOT), "-S", found.version, "--show-depends", module],
                               capture_output=True, text=True, check=True).stdout
        modules += [line.split()[1] for line in shown.splitlines() if line.startswith("insmod ")]
    for module in dict.fromkeys(modules):
        shutil.copy(module, tree / "modules")
    (tree / "modules.list").write_text("".join(f"{Path(m).name}\n" for m in dict.fromkeys(modules)))
    for script in ("init", "stage2.sh"):
        shutil.copy(HERE / "initramfs" / script, tree / script)
    (tree / "init").chmod(0o755)
    image = folder / "initramfs.cpio"
    listed = subprocess.run(["find", "."], cwd=tree, capture_output=True, check=True).stdout
    with image.open("wb") as out:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=tree, input=listed, stdout=out, check=True)
    return image


def disks(folder: Path) -> list[str]:
    """QEMU's options for the guest's disks, sparse images in `folder`. discard=unmap: a discard (NVMe's deallocate,
    SCSI's UNMAP, ATA's TRIM) punches a hole in the image, so the blocks read as zeros as a drive's do once it has
    dropped them; by default QEMU ignores discards."""
    def drive(serial: str) -> str:
        image = folder / f"{serial}.img"
        with image.open("wb") as handle:
            handle.truncate(DISK_BYTES)
        return f"file={image},id={serial},if=none,format=raw,cache=unsafe,discard=unmap"

    options = []
    for serial in NVME:
        options += ["-drive", drive(serial), "-device", f"nvme,serial={serial},drive={serial}"]
    options += ["-device", "ich9-ahci,id=ahci"]
    for port, (serial, rotation) in enumerate(((SATA_HDD, 7200), (SATA_SSD, 1))):
        options += ["-drive", drive(serial),
                    "-device", f"ide-hd,drive={serial},bus=ahci.{port},rotation_rate={rotation},serial={serial}"]
    options += ["-device", "virtio-scsi-pci,id=scsi", "-drive", drive(SCSI),
                "-device", f"scsi-hd,drive={SCSI},bus=scsi.0,serial={SCSI}"]
    return options


def run_script(script: str, folder: Path, timeout_s: float, cpus: int = 2, memory: str = "2G",
               niceness: int = 0) -> Finished:
    """Boot, run `script` (bash, as root, from /) in the guest, power off. The guest is killed at `timeout_s`;
    its serial console is kept in folder/console.log either way. `niceness`: QEMU's, beside other work."""
    found = kernel()
    for path in (folder, ROOT):
        if re.search(r"[\s,]", str(path)):
            raise Missing(f"{path}: QEMU's options cannot name a folder with spaces or commas")
    out = folder / "out"
    out.mkdir(parents=True)
    (out / "script.sh").write_text(script)
    console = folder / "console.log"
    command = [
        "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-smp", str(cpus), "-m", memory,
        "-nodefaults", "-no-reboot", "-display", "none", "-net", "none", "-serial", f"file:{console}",
        "-kernel", str(found.image), "-initrd", str(initramfs(found, folder)),
        "-append", f"console=ttyS0 panic=-1 loglevel=6 guest.out={out} guest.modules={found.modules} "
                   f"guest.checkout={ROOT} module_blacklist={','.join(NOT_LOADED)}",
        "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
        # The checkout on a share of its own: the guest's own /tmp (a RAM disk) hides the host's, where a checkout
        # may live (CI's clean clone, a developer's scratch copy).
        "-fsdev", f"local,id=checkout,path={ROOT},security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=checkout,mount_tag=checkout",
        "-fsdev", f"local,id=guestout,path={out},security_model=none,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=guestout,mount_tag=guestout",
        *disks(folder),
        *[option for kind, serial in DMI_SERIALS.items() for option in ("-smbios", f"{kind},serial={serial}")],
        "-uuid", DMI_UUID,
    ]
    started = time.monotonic()
    # Its own process group, and death with the test run: a killed pytest leaves no guest running.
    started_as_child = as_a_user_started_it()

    def setup() -> None:
        started_as_child()
        os.nice(niceness)

    qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            process_group=0, preexec_fn=setup)
    try:
        said, _ = qemu.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(qemu.pid, signal.SIGKILL)
        said, _ = qemu.communicate()
        timed_out = True
    finally:
        if qemu.poll() is None:  # an exception in this thread (Ctrl-C): the guest goes with it
            os.killpg(qemu.pid, signal.SIGKILL)
            qemu.wait()
    status_text = _read(out / "status").strip()
    status = TIMED_OUT if timed_out else int(status_text) if status_text.isdigit() else GUEST_DIED
    return Finished(status, _read(out / "stdout.txt"), _read(out / "stderr.txt"),
                    _read(console) + (f"\n[qemu] {said.decode(errors='replace')}" if said else ""),
                    _read(out / "dmesg.txt"), time.monotonic() - started)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def scratch_folder() -> Path:
    """A folder for one boot: its disks' images, the initramfs, the console log and the out share."""
    return Path(tempfile.mkdtemp(prefix="disklab-guest-"))
