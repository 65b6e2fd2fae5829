#!/usr/bin/env bash
# Installs the Debian packages symmcoll builds and tests with, only those missing.
# Used by `make test` / `make experiments`; safe to run again.
set -euo pipefail
pkgs=(cmake g++ make libeigen3-dev libboost-program-options-dev libboost-context-dev
      libgtest-dev libgmock-dev python3-matplotlib python3-numpy clang-format)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
