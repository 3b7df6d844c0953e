#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-layers.py on a tree that breaks each of its rules once, and on one that breaks none:
# every crossing is named, file and line, and the status says whether there was one.
set -u
check=${1:?path of scripts/check-layers.py}
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{include/perfspec,spec,grammar,resolver,runtime,print,capi,exporter,tools,examples,tests}
printf '#include <string>\n#include "perfspec/attr.hpp"\n' >"$tree/include/perfspec/api.hpp"
printf '#include "spec/x.hpp"\n#include <tao/pegtl.hpp>\n' >"$tree/grammar/g.cpp"
printf '#include "grammar/g.hpp"\n#include <vector>\n' >"$tree/resolver/r.cpp"
printf '#include "tools/cli.hpp"\n#include <CLI/CLI.hpp>\n#include "spec/x.hpp"\n' >"$tree/tools/t.cpp"
printf '#include "runtime/open.hpp"\n#include "perfspec/perfspec.hpp"\n' >"$tree/tests/anything.cpp"
printf '#include <prometheus/metric_family.h>\n' >"$tree/print/openmetrics.cpp"
printf '#include "runtime/process.hpp"\n#include "print/openmetrics.hpp"\n#include <toml++/toml.h>\n#include <CivetServer.h>\n' >"$tree/exporter/e.cpp"
printf '#include "exporter/exporter.hpp"\n' >>"$tree/tools/t.cpp"
# runtime/ throws errors with messages, and reads files with formats: neither is prose for users.
printf 'void f() {\n  if (x) throw Error(ErrorKind::usage,\n      fmt::format("no process with pid {}", pid));\n  std::sscanf(line, "cpu %%llu %%llu %%llu", &a, &b, &c);\n}\n' >"$tree/runtime/ok.cpp"
out=$(python3 "$check" "$tree" 2>&1); status=$?
pass=0 fail=0
expect() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else echo "FAIL $1: got [$2], want [$3]"; fail=$((fail + 1)); fi; }
expect clean-status "$status" 0
expect clean-output "$out" "check-layers: every include stays within its layer's rules, and runtime/ writes no prose"
# One crossing of each kind.
printf '#include "runtime/open.hpp"\n' >>"$tree/include/perfspec/api.hpp"
printf '#include "resolver/plan.hpp"\n#include <CLI/CLI.hpp>\n' >"$tree/spec/s.cpp"
printf '#include <fstream>\n#include <tao/pegtl.hpp>\n#include "runtime/open.hpp"\n' >>"$tree/resolver/r.cpp"
printf '#include "spec/sysfs.hpp"\n' >"$tree/capi/c.cpp"
printf '#include <toml++/toml.h>\n#include <prometheus/counter.h>\n' >"$tree/print/p.cpp"
printf '#include "tools/cli.hpp"\n' >>"$tree/exporter/e.cpp"
printf '#include <civetweb.h>\n' >>"$tree/runtime/x.cpp"
printf '  f.detail = fmt::format("its group leader {} could not be opened", name); // "in a comment is fine"\n' >>"$tree/runtime/x.cpp"
printf '  char q = \x27"\x27; s = "see http://x.org for an Error here"; // no "words" in strings here\n' >>"$tree/runtime/x.cpp"
printf '#include "resolver/plan.hpp"\n' >"$tree/examples/e.cpp"
out=$(python3 "$check" "$tree" 2>&1); status=$?
expect crossed-status "$status" 1
expect crossed-output "$out" "capi/c.cpp:1: includes spec/sysfs.hpp: capi/ may include only capi, perfspec
examples/e.cpp:1: includes resolver/plan.hpp: examples/ may include only perfspec
exporter/e.cpp:5: includes tools/cli.hpp: exporter/ may include only exporter, perfspec, print, runtime, spec
include/perfspec/api.hpp:3: includes runtime/open.hpp: include/perfspec/ may include only perfspec
print/p.cpp:1: includes <toml++/toml.h>: toml++ reads the exporter's configuration (exporter/)
print/p.cpp:2: includes <prometheus/counter.h>: prometheus-cpp is the exporter's (exporter/, and its OpenMetrics printer print/openmetrics.*)
resolver/r.cpp:3: includes <fstream>: resolver/ does no I/O
resolver/r.cpp:4: includes <tao/pegtl.hpp>: PEGTL is the grammars' (grammar/)
resolver/r.cpp:5: includes runtime/open.hpp: resolver/ may include only grammar, perfspec, resolver, spec
runtime/x.cpp:1: includes <civetweb.h>: civetweb serves the exporter (exporter/)
runtime/x.cpp:2: the text \"its group leader {} could not be opened\": runtime/ makes no text for users (print/ words it, spec/ for errno facts and failures)
runtime/x.cpp:3: the text \"see http://x.org for an Error here\": runtime/ makes no text for users (print/ words it, spec/ for errno facts and failures)
spec/s.cpp:1: includes resolver/plan.hpp: spec/ may include only perfspec, spec
spec/s.cpp:2: includes <CLI/CLI.hpp>: CLI11 is the command line's (tools/)
check-layers: 14 crossing(s) of a layer's rules"
# Not a source tree: a usage error, not a pass.
out=$(python3 "$check" "$tree/spec" 2>&1); status=$?
expect not-a-tree "$status:$out" "2:check-layers: $tree/spec is not a perfspec source tree (no include/perfspec)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
