#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lay out the C and C++ sources by .clang-format: scripts/format.sh applies it, --check only reports
# the files that differ (and fails). Installs clang-format with apt-get when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq clang-format >/dev/null
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' | grep -v '^tests/fixtures/')
if [ "${1:-}" = --check ]; then
  clang-format --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} files laid out as .clang-format says"
  # Every source file names its license (LICENSE: MIT) in its first lines.
  mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.sh' '*.py' '*.in' '*CMakeLists.txt' .ci/run \
                           tests/perf_agreement/perf-foreign completions/perfspec.bash)
  missing=$(for f in "${sources[@]}"; do head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f"; done)
  if [ -n "$missing" ]; then
    echo "format: no SPDX-License-Identifier in the first lines of:" >&2
    echo "$missing" >&2
    exit 1
  fi
  echo "format: ${#sources[@]} source files name their license"
else
  clang-format -i "${files[@]}"
fi
