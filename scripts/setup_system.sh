#!/usr/bin/env bash
# System pieces the default experiment needs: the allocator libraries it preloads and g++;
# with arguments, those Debian packages instead (make test-slurm: slurm-wlm munge).
# Installed with apt when missing and we are root; otherwise a message naming the package.
set -euo pipefail

declare -A package_of=(
  [libtcmalloc.so.4]=libgoogle-perftools4
  [libjemalloc.so.2]=libjemalloc2
)
missing=()
if [ $# -gt 0 ]; then
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
else
  for library in "${!package_of[@]}"; do
    ldconfig -p | grep -q "$library" || missing+=("${package_of[$library]}")
  done
  command -v g++ >/dev/null || missing+=(g++)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
else
  echo "missing system packages: ${missing[*]}" >&2
  echo "install them (Debian/Ubuntu: sudo apt-get install ${missing[*]}), then run make again" >&2
  exit 1
fi
