// SPDX-License-Identifier: MIT
#pragma once
// Shared inputs of the benchmarks: the fixture tree, the 50-string mixed corpus (bench/corpus.txt) and
// generated event lists of a given length.
#include <cstddef>
#include <string>
#include <vector>

namespace perfspec::bench {

/// tests/fixtures/intel_skx (a Skylake-X server's sysfs, with tracepoints under kernel/tracing/events).
std::string fixture_root();

/// The non-comment lines of bench/corpus.txt (50 event lists).
const std::vector<std::string>& corpus();

/// Events written in `text` (AST events, before wildcard or alias expansion).
std::size_t written_events(const std::string& text);

/// `n` raw-term events, all different: `cpu/event=0xNN,umask=0xMM/u,...` (homogeneous per-event work).
std::string raw_list(std::size_t n);

/// `n` events cycling through the corpus lines that hold exactly one event (no group, no list).
std::string mixed_list(std::size_t n);

}  // namespace perfspec::bench
