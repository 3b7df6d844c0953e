#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --debuginfod: a stripped program's functions named from its debug file, which a debuginfod server
# (elfutils' own, over a folder holding only the debug file) serves by build id. Without --debuginfod,
# or with a server that has nothing, the same report shows addresses. Needs perf_event_open (a
# software event) and Debian's debuginfod; status 77 (skipped) without them, 1 where CI installed
# everything (PERFSPEC_REQUIRE_ALL=1).
set -uo pipefail
bin=${PERFSPEC:?PERFSPEC names the perfspec binary}
here=$(cd "$(dirname "$0")" && pwd)
skipped=77
[ "${PERFSPEC_REQUIRE_ALL:-}" = 1 ] && skipped=1
for tool in debuginfod cc objcopy strip python3; do
  command -v "$tool" >/dev/null || { echo "debuginfod: skipped: no $tool (scripts/setup.sh installs it)"; exit $skipped; }
done
work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
failed() { echo "FAIL debuginfod: $*"; fail=1; }

cc -O0 -g -fno-omit-frame-pointer -o "$work/workload" "$here/../workload/workload.c" || exit 1
mkdir "$work/served"
objcopy --only-keep-debug "$work/workload" "$work/served/workload.debug" || exit 1
strip --strip-all "$work/workload" || exit 1
id=$(python3 - "$work/workload" <<'EOF'
import re, subprocess, sys
note = subprocess.run(["readelf", "-n", sys.argv[1]], stdout=subprocess.PIPE, text=True).stdout
print(re.search(r"Build ID: ([0-9a-f]+)", note).group(1))
EOF
) || exit 1
if ! "$bin" record -q -o "$work/r.data" -e task-clock -c 100000 -- "$work/workload" burn 200 2>"$work/err"; then
  grep -q "perf_event_open\|perf_event_paranoid" "$work/err" &&
    { echo "debuginfod: skipped: cannot count here: $(head -n 1 "$work/err")"; exit $skipped; }
  cat "$work/err"
  exit 1
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F "$work/served" -p "$port" -d "$work/index.sqlite" -t 0 >"$work/server.log" 2>&1 &
server=$!
url=http://127.0.0.1:$port
# the server's first scan of the folder: until it answers for the build id (at most 60 s)
python3 - "$url/buildid/$id/debuginfo" <<'EOF' || { failed "the server never served build id $id"; tail -n 20 "$work/server.log"; exit 1; }
import sys, time, urllib.request
for _ in range(600):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=5).read()
        sys.exit(0)
    except Exception:
        time.sleep(0.1)
sys.exit(1)
EOF

rows() {  # the report's rows of the workload (its functions, or addresses in it), by share
  DEBUGINFOD_CACHE_PATH=$work/cache "$bin" report -q --no-children --sort dso,sym -i "$work/r.data" "$@" |
    awk '$2 == "workload" {print $NF}'
}
without=$(DEBUGINFOD_URLS= rows)
with=$(rows --debuginfod="$url")
system=$(DEBUGINFOD_URLS=$url rows --debuginfod)
rm -rf "$work/cache"
empty_server=$(rows --debuginfod="http://127.0.0.1:1")
echo "debuginfod: without: $(echo $without | cut -c1-80); with: $(echo $with)"
grep -qx spin_inner <<<"$with" || failed "--debuginfod=URL: spin_inner is not among the rows: $with"
[ "$system" = "$with" ] || failed "--debuginfod (DEBUGINFOD_URLS): $system, not $with"
grep -q spin_ <<<"$without" && failed "without --debuginfod the stripped program's functions were named: $without"
[ "$empty_server" = "$without" ] || failed "a server that cannot be reached: $empty_server, not $without"
[ $fail = 0 ] && echo "debuginfod: 4 passed, 0 failed"
exit $fail
