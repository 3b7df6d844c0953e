#!/usr/bin/env bash
# CLI tests: run `perfspec` as a user does and compare stdout, stderr and exit status exactly.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/../fixtures
bin=${PERFSPEC:?set PERFSPEC to the perfspec binary}
pass=0 fail=0

# check NAME EXPECTED_STATUS EXPECTED_FILE -- ARGS...   (EXPECTED_FILE holds stdout, then stderr after a line '--- stderr')
check() {
  local name=$1 want_status=$2 want_file=$3
  shift 4
  local out err status
  out=$(mktemp) err=$(mktemp)
  "$bin" "$@" >"$out" 2>"$err"
  status=$?
  local got
  got=$(cat "$out"; echo '--- stderr'; cat "$err")
  got=${got//$fixtures/FIXTURES}
  local want
  want=$(cat "$here/expected/$want_file")
  if [ "$status" != "$want_status" ] || [ "$got" != "$want" ]; then
    echo "FAIL $name (status $status, want $want_status)"
    diff <(echo "$want") <(echo "$got") | head -40
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
  rm -f "$out" "$err"
}

check text-group 0 text_group.txt -- resolve --sysfs "$fixtures/intel_skx" '{cpu/event=0x2,inv,ldlat=3/u,instructions}:k' 'uncore_imc_0/cas_count_read/'
check json-group 0 json_group.txt -- resolve --sysfs "$fixtures/intel_skx" --format json '{cycles,mem-loads}:u'
check json-breakpoint 0 json_breakpoint.txt -- resolve --sysfs "$fixtures/intel_skx" --format json 'mem:0x1000/8:w'
check syntax-error 1 syntax_error.txt -- resolve --sysfs "$fixtures/intel_skx" 'cpu/foo=1/'
check second-list-error 1 second_list_error.txt -- resolve --sysfs "$fixtures/intel_skx" cycles 'cycles:uu'
check bad-format-option 2 bad_format_option.txt -- resolve --format yaml cycles
check no-subcommand 2 no_subcommand.txt --

# The JSON is machine-readable and complete: every attr field, union members under both names.
json=$("$bin" resolve --sysfs "$fixtures/intel_skx" --format json 'mem:0x1000')
if python3 - "$json" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
a = d["events"][0]["attr"]
assert a["config1"] == a["bp_addr"] == 4096, a
assert a["config2"] == a["bp_len"] == 4, a
assert a["sample_period"] == a["sample_freq"] == 1, a
assert len(a) == 57 + 8, len(a)   # 57 fields + 8 union aliases
PY
then pass=$((pass + 1)); else echo "FAIL json-fields"; fail=$((fail + 1)); fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
