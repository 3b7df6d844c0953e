#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what perfspec needs to build and test, from Debian's packages. Safe to run again: it only
# calls apt-get when something is missing.
set -euo pipefail
packages=(cmake make g++ pkg-config python3
          ccache  # compiled objects kept between builds (scripts/build.sh)
          tao-pegtl-dev libfmt-dev doctest-dev librange-v3-dev nlohmann-json3-dev libcli11-dev robin-map-dev libxxhash-dev
          libtraceevent-dev  # tracepoint format files and payloads (record/tracepoint.cpp)
          libaudit-dev  # system call names by number for `perfspec trace` (spec/syscall_table.cpp)
          libelf-dev libdw-dev  # binaries' symbols, build ids and debug links (record/symbol_table.cpp, symbolizer.cpp)
          libdebuginfod-dev debuginfod  # debug files by build id (record/debuginfod.cpp); a server in the tests
          zlib1g-dev golang-go  # gzip (print/gzip.cpp) of pprof profiles and scrapes; go tool pprof reads profiles in the tests
          nodejs  # a JIT writing /tmp/perf-PID.map (node --perf-basic-prof), recorded in tests/cli/perf_script_side_by_side.py
          tmux  # perfspec top is tested on a real terminal (tests/cli/run.sh)
          zsh fish  # the zsh and fish completions are tested in them (tests/cli/run.sh)
          groff-base  # the man page is checked for troff's warnings (tests/cli/run.sh)
          locales  # the sources of en_US and de_DE, made with localedef for stat -B's digits (tests/cli/run.sh)
          libpfm4-dev libzstd-dev libbenchmark-dev linux-perf
          prometheus-cpp-dev libcivetweb-dev libtomlplusplus-dev  # the exporter: metric families, HTTP; its configuration file
          libyaml-cpp-dev libssl-dev libcrypt-dev  # the exporter's web configuration (exporter-toolkit's YAML): TLS, bcrypt
          curl openssl  # the exporter scraped over TLS in the tests; tests/fixtures/tls/make.sh
          debootstrap  # clean Debian roots the package is installed in (scripts/debian-root.sh)
          dpkg-dev file  # the package's dependencies read off its binaries (dpkg-shlibdeps; CPack runs file)
          prometheus python3-prometheus-client  # the exporter's tests: a real Prometheus server; an OpenMetrics parser
          linux-source)  # the release's newest kernel tree (linux-source-6.1 on Debian 12, -6.12 on 13), for perf's
                         # event tables (tools/perf/pmu-events/arch) the build installs
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
