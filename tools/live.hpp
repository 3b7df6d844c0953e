// SPDX-License-Identifier: MIT
#pragma once
// What the live subcommands that follow processes share (trace, top): the processes or threads named
// by -p/-t, and what existed before they began, synthesized as perf does for a Symbolizer.
#include <string>
#include <vector>

#include "perfspec/record.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/symbols.hpp"

namespace perfspec::tools {

/// -p PIDS (every thread of each) or -t TIDS (those threads) as a target; `inherit` for -p only.
/// Throws Error (usage) for a word that is no id, or an id of nothing running.
runtime::Target processes_target(const std::string& pids, const std::string& tids, bool inherit);

/// The kernel's text and the processes of `target` (every process across CPUs), as perf synthesizes
/// them, applied to `symbols` (and `threads`, when given) through `formats` (the sampler's attrs).
void follow_existing(const runtime::Sampler& sampler, const record::Formats& formats,
                     const runtime::Target& target, record::Symbolizer& symbols, record::Threads* threads);

}  // namespace perfspec::tools
