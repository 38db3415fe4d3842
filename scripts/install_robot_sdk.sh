#!/usr/bin/env bash
# Robot SDK for the hardware bridge and the virtual robot: unitree_sdk2py on CycloneDDS 0.10.2, the DDS
# line the G1 runs (peers of other lines were seen to fail).
#   scripts/install_robot_sdk.sh [VENV]      VENV defaults to $G1_TELEOP_VENV, else .venv
# Installs Debian's CycloneDDS 0.10.2 (library, headers, idlc) and a C compiler when missing, builds the
# Python binding cyclonedds==0.10.2 from source against it (no wheel exists for recent Pythons), then
# unitree-sdk2py-dimos without its dependencies (pip would otherwise replace cyclonedds with the newest
# line and pull opencv, which the SDK's DDS interface never imports). Idempotent: a stamp in the venv makes
# a second run return at once. Debian/Ubuntu only; needs root or sudo for the system packages.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-${G1_TELEOP_VENV:-$root/.venv}}"
python="$venv/bin/python"

cyclonedds_version=0.10.2
sdk_requirement=unitree-sdk2py-dimos==1.0.3
# Only the robot path needs these, so they are not in scripts/apt-packages.txt.
apt_packages=(cyclonedds-dev cyclonedds-tools gcc libc6-dev)

say() { printf '[robot sdk] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ -x "$python" ]] || die "no Python at $python: create the environment first (./run test does)"
stamp_file="$venv/.robot_sdk_stamp"
log="$venv/robot_sdk.log"
stamp="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)-$("$python" -c 'import sys; print(sys.version.split()[0])')"
if [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
  exit 0
fi
: > "$log"

install_debian_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  say "installing Debian packages: ${missing[*]}"
  { "${sudo[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  } >> "$log" 2>&1 || { tail -n 20 "$log" >&2; die "could not install ${missing[*]} (need apt and root or sudo)"; }
}

command -v dpkg-query >/dev/null 2>&1 || die "not a Debian/Ubuntu system: install CycloneDDS 0.10.2 and set CYCLONEDDS_HOME by hand"
install_debian_packages "${apt_packages[@]}"
python_include="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
if [[ ! -f "$python_include/Python.h" ]]; then  # a distribution Python: its headers are a separate package
  install_debian_packages "python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-dev"
fi
debian_version="$(dpkg-query -W -f='${Version}' cyclonedds-dev)"
[[ "$debian_version" == "$cyclonedds_version"* ]] ||
  die "Debian's cyclonedds-dev is $debian_version, the robot needs $cyclonedds_version"

# CYCLONEDDS_HOME as the binding's build expects it: include/, lib/ (libddsc, libcycloneddsidl),
# lib/cmake/CycloneDDS and bin/idlc, here symlinks into Debian's multiarch layout.
libddsc="$(dpkg-query -L cyclonedds-dev | grep '/libddsc\.so$')"
libdir="$(dirname "$libddsc")"
home="$venv/cyclonedds-$cyclonedds_version"
rm -rf "$home"
mkdir -p "$home/include" "$home/lib/cmake" "$home/bin"
for header_dir in dds ddsc idl idlc; do
  ln -s "/usr/include/$header_dir" "$home/include/$header_dir"
done
ln -s "$libddsc" "$home/lib/libddsc.so"
ln -s "$libdir/libcycloneddsidl.so" "$home/lib/libcycloneddsidl.so"
ln -s "$libdir/cmake/CycloneDDS" "$home/lib/cmake/CycloneDDS"
ln -s "$(command -v idlc)" "$home/bin/idlc"

say "building cyclonedds==$cyclonedds_version against $home, then $sdk_requirement (log: $log)"
{
  CYCLONEDDS_HOME="$home" "$python" -m pip install --no-cache-dir --no-binary cyclonedds \
    "cyclonedds==$cyclonedds_version" &&
  "$python" -m pip install --no-deps "$sdk_requirement"
} >> "$log" 2>&1 || { tail -n 30 "$log" >&2; die "pip failed: see $log"; }

# The check runs without CYCLONEDDS_HOME: the binding finds Debian's libddsc through the loader cache.
env -u CYCLONEDDS_HOME "$python" - <<PY || die "the SDK does not import: see $log"
import cyclonedds
from importlib.metadata import version
import unitree_sdk2py  # noqa: F401
from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_  # noqa: F401
assert version("cyclonedds") == "$cyclonedds_version", version("cyclonedds")
PY
echo "$stamp" > "$stamp_file"
say "ready: unitree_sdk2py on cyclonedds $cyclonedds_version in $venv"
