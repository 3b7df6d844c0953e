#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sizes the house keeps (docs/architecture.md): in the library's layers and tools/, no source file
# over 600 lines and no function over 80 (clang-tidy's readability-function-size, over the compile
# commands of a build). A file or function past them fails, named with its size.
#   scripts/check-sizes.sh [BUILD_DIR]    BUILD_DIR: a configured build (default build/, as
#                                         scripts/build.sh release makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
layers=(spec grammar resolver runtime record print capi tools exporter)
max_lines=600
max_function_lines=80
status=0

mapfile -t files < <(git ls-files -- "${layers[@]/%//*.cpp}" "${layers[@]/%//*.hpp}" "${layers[@]/%//*.h}")
for f in "${files[@]}"; do
  n=$(wc -l <"$f")
  if [ "$n" -gt "$max_lines" ]; then
    echo "check-sizes: $f: $n lines (at most $max_lines: split it by concept)" >&2
    status=1
  fi
done

if ! command -v clang-tidy >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-tidy >/dev/null; } ||
    { echo "check-sizes: cannot install clang-tidy" >&2; exit 2; }
fi
[ -f "$build/compile_commands.json" ] ||
  { echo "check-sizes: no $build/compile_commands.json: build first (scripts/build.sh release)" >&2; exit 2; }

# Every layer's .cpp; functions in the layers' headers are checked with the file that includes them
# (once each).
# Each must be in the build's compile commands: one that is not would be left unchecked.
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep '\.cpp$')
for f in "${sources[@]}"; do
  if ! grep -q "\"file\": \"$PWD/$f\"" "$build/compile_commands.json"; then
    echo "check-sizes: $f is not in $build/compile_commands.json: its functions cannot be checked" >&2
    status=1
  fi
done
header_filter="^$PWD/($(IFS='|'; echo "${layers[*]}"))/"
config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: '$max_function_lines'}]}"
long=$(printf '%s\n' "${sources[@]}" |
       xargs -P"$(nproc)" -n 6 clang-tidy -p "$build" --quiet --checks='-*,readability-function-size' \
         --config="$config" --header-filter="$header_filter" 2>/dev/null |
       grep -E "warning: function '.*' exceeds recommended size" | sed "s|^$PWD/||" | sort -u || true)
if [ -n "$long" ]; then
  echo "check-sizes: functions over $max_function_lines lines (split them into steps with names):" >&2
  echo "$long" >&2
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "check-sizes: ${#files[@]} files within $max_lines lines, ${#sources[@]} sources' functions within $max_function_lines"
fi
exit "$status"
