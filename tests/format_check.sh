#!/usr/bin/env bash
# The format check `make test` runs (ctest: format): every C++/CUDA source of the repository must
# be what clang-format makes of it under .clang-format. Skipped (exit 77, ctest reports it as
# skipped, with this message) only where no clang-format binary is installed;
# scripts/install-deps.sh installs it (Debian package clang-format).
set -uo pipefail
root=${1:?usage: tests/format_check.sh <source-dir> [clang-format]}
cf=${2:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
  echo "format: SKIPPED: no clang-format binary ('$cf'); run scripts/install-deps.sh to install it"
  exit 77
fi
cd "$root" || exit 2
mapfile -t files < <(find core backends apps tests \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) -type f | sort)
[ ${#files[@]} -gt 0 ] || { echo "format: no sources found under $root" >&2; exit 2; }
if ! "$cf" --dry-run -Werror "${files[@]}"; then
  echo "format: the files above differ from clang-format's output; fix with: $cf -i <file>" >&2
  exit 1
fi
echo "format: ${#files[@]} files clean ($("$cf" --version))"
