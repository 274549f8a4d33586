#!/usr/bin/env bash
# Install what disklab needs on Debian/Ubuntu: the system tools it drives (from the
# distribution's packages, only when missing) and disklab itself in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

need_packages=()
command -v fio >/dev/null || need_packages+=(fio)
command -v blkid >/dev/null || need_packages+=(util-linux)
command -v mkfs.ext4 >/dev/null || need_packages+=(e2fsprogs)   # device-safety tests
command -v sfdisk >/dev/null || need_packages+=(fdisk)          # device-safety tests
command -v smartctl >/dev/null || need_packages+=(smartmontools)
command -v ip >/dev/null || need_packages+=(iproute2)              # many-hosts tests: network namespaces
command -v chromium >/dev/null || need_packages+=(chromium)     # the HTML report's browser test
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_packages+=(postgresql)  # pgbench suite: server + pgbench
python3 -c 'import ensurepip, venv' 2>/dev/null || need_packages+=(python3-venv)

if [ ${#need_packages[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${need_packages[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_packages[@]}" >/dev/null
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "disklab needs Python 3.11 or newer; found $(python3 --version)" >&2
  exit 1
}
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[test]'
