#!/usr/bin/env bash
# Install what disklab needs on Debian/Ubuntu: the system tools it drives (from the distribution's packages, only
# when missing) and disklab itself in .venv. What is installed depends on what for:
#   scripts/setup.sh [lab]       fio and the tools the lab uses; disklab in .venv, man pages too  (make demo, setup, man)
#   scripts/setup.sh postgresql  the lab, plus PostgreSQL's server and pgbench          (disklab run pgbench)
#   scripts/setup.sh tests       all of the above, plus what the tests use: Chromium, loop-device and
#                                network-namespace tools, and pytest & co. in .venv  (make test)
# --dry-run prints the missing packages and installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

dry_run=false
[ "${1:-}" = "--dry-run" ] && { dry_run=true; shift; }
purpose=${1:-lab}
case $purpose in lab|postgresql|tests) ;; *) echo "usage: scripts/setup.sh [--dry-run] [lab|postgresql|tests]" >&2; exit 2 ;; esac

need_packages=()
command -v fio >/dev/null || need_packages+=(fio)
command -v blkid >/dev/null || need_packages+=(util-linux)      # device safety: signatures, holders
command -v smartctl >/dev/null || need_packages+=(smartmontools) # SMART before and after each run
command -v blktrace >/dev/null || need_packages+=(blktrace)      # disklab capture (where its relay files work)
command -v mkfs.ext4 >/dev/null || need_packages+=(e2fsprogs)    # run --fs ext4 (and the device-safety tests)
command -v mkfs.xfs >/dev/null || need_packages+=(xfsprogs)      # run --fs xfs
command -v mkfs.btrfs >/dev/null || need_packages+=(btrfs-progs) # run --fs btrfs
command -v lspci >/dev/null || need_packages+=(pciutils)         # the disk controller's name (PCI ID database)
python3 -c 'import ensurepip, venv' 2>/dev/null || need_packages+=(python3-venv)
compgen -G '/usr/lib/*/libpq.so.5' >/dev/null || need_packages+=(libpq5)  # a PostgreSQL store: psycopg's libpq
if [ "$purpose" != lab ]; then  # pgbench suite: server + pgbench
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_packages+=(postgresql)
  # A PostgreSQL store read at full speed: psycopg's C implementation, built below against Debian's libpq
  [ -e /usr/include/postgresql/libpq-fe.h ] || need_packages+=(libpq-dev)
  command -v cc >/dev/null || need_packages+=(gcc)
  compgen -G '/usr/include/python3*/Python.h' >/dev/null || need_packages+=(python3-dev)
fi
if [ "$purpose" = tests ]; then
  command -v sfdisk >/dev/null || need_packages+=(fdisk)          # device-safety tests
  command -v ip >/dev/null || need_packages+=(iproute2)           # many-hosts tests: network namespaces
  command -v chromium >/dev/null || need_packages+=(chromium)     # the HTML report's browser test
  command -v groff >/dev/null || need_packages+=(groff-base)      # the man pages' test
  command -v pdftoppm >/dev/null || need_packages+=(poppler-utils) # report --pdf's test: the PDF's pages drawn
  command -v sshfs >/dev/null || need_packages+=(sshfs)           # a real network target: sshfs over 127.0.0.1
  [ -x /usr/sbin/sshd ] || need_packages+=(openssh-server)        # ... served by a private sshd
  command -v pipx >/dev/null || need_packages+=(pipx)             # the installed tier: pipx install of the wheel
  # The kernel tier (tests/kernel): Debian's kernel under QEMU, booted by a busybox initramfs of the tier's own, with
  # udev in the guest (by-id links, LVM) and the tools whose devices it drives.
  command -v qemu-system-x86_64 >/dev/null || need_packages+=(qemu-system-x86)
  [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || need_packages+=(busybox-static)  # linked statically
  command -v cpio >/dev/null || need_packages+=(cpio)
  command -v depmod >/dev/null || need_packages+=(kmod)
  command -v udevadm >/dev/null || need_packages+=(udev)
  command -v nvme >/dev/null || need_packages+=(nvme-cli)
  command -v hdparm >/dev/null || need_packages+=(hdparm)
  command -v sdparm >/dev/null || need_packages+=(sdparm)
  command -v mdadm >/dev/null || need_packages+=(mdadm)
  command -v lvm >/dev/null || need_packages+=(lvm2)
  command -v exportfs >/dev/null || need_packages+=(nfs-kernel-server)
fi

if $dry_run; then
  echo "missing: ${need_packages[*]}"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#need_packages[@]} -gt 0 ]; then
  echo "installing: ${need_packages[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_packages[@]}" >/dev/null
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "disklab needs Python 3.11 or newer; found $(python3 --version)" >&2
  exit 1
}
[ -x .venv/bin/python ] || python3 -m venv .venv
extras=""
[ "$purpose" = tests ] && extras="[test]"
# The build's own requirements in .venv too: with setuptools-scm there, disklab run from this checkout names the
# commit it is at (disklab/__init__.py), not the one it was installed at.
.venv/bin/python - <<'EOF' | xargs -d '\n' .venv/bin/pip install --quiet --disable-pip-version-check
import tomllib
print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")
EOF
.venv/bin/pip install --quiet --disable-pip-version-check -e ".$extras"
# psycopg's C implementation (psycopg-c, the same version as psycopg, compiled once and then taken from pip's cache)
# where a compiler and the headers are there (installed above for postgresql and tests): a PostgreSQL store's rows
# read several times faster than through its pure-Python one, which stays the fallback.
if [ -e /usr/include/postgresql/libpq-fe.h ] && command -v cc >/dev/null \
    && compgen -G '/usr/include/python3*/Python.h' >/dev/null \
    && [ "$(.venv/bin/python -c 'import psycopg; print(psycopg.pq.__impl__)')" != c ]; then
  version=$(.venv/bin/python -c 'import psycopg; print(psycopg.__version__)')
  .venv/bin/pip install --quiet --disable-pip-version-check "psycopg-c==$version" \
    || echo "psycopg-c $version could not be built: a PostgreSQL store is read through pure Python (slower)" >&2
fi
# The man pages: `pip install .` installs them, an editable install does not (setuptools leaves data files out).
.venv/bin/python scripts/man.py .venv/share/man/man1
# The kernel tier boots Debian's kernel, unpacked here and never installed as this machine's own (no boot entry, no
# initramfs of the machine's); depmod makes the modules.dep the package's postinst would have made.
if [ "$purpose" = tests ] && [ "$(uname -m)" = x86_64 ] && ! compgen -G '.venv/kernel/boot/vmlinuz-*' >/dev/null; then
  package=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
  if [ -z "$package" ]; then
    $sudo apt-get update -qq
    package=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
  fi
  echo "unpacking $package into .venv/kernel (the kernel tier's guest kernel)" >&2
  download=$(mktemp -d)
  chown _apt "$download" 2>/dev/null || true  # apt fetches as its own user where it has one
  (cd "$download" && apt-get download -qq "$package")
  dpkg-deb -x "$download"/*.deb .venv/kernel.new && rm -rf "$download"
  depmod -b .venv/kernel.new "${package#linux-image-}"
  mv .venv/kernel.new .venv/kernel
fi
# The installed-package tier (tests/installed) installs the wheel it builds into fresh venvs without the network:
# disklab's dependencies as wheels, here, and what pipx puts into its shared venv first (pip, setuptools, wheel).
if [ "$purpose" = tests ]; then
  .venv/bin/pip download --quiet --disable-pip-version-check --no-build-isolation --only-binary :all: \
    --dest .venv/wheelhouse . pip setuptools wheel
fi
