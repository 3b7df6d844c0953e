// SPDX-License-Identifier: MIT
#pragma once
// What the subcommands that open events share: for those that follow processes live (trace, top) the
// processes or threads named by -p/-t and what existed before they began, synthesized as perf does
// for a Symbolizer; for all that open events (record, stat too), perf's changes to the attrs asked for
// (--all-user, --all-kernel, the fallback from cycles) and its words for events that did not open.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/event_set.hpp"

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

/// perf's --all-user and --all-kernel (evsel__config for record, create_perf_stat_counter for stat):
/// every event counts only user space, or only the kernel, whatever its own modifiers said.
inline void restrict_privilege(EventSet& set, bool all_user, bool all_kernel) {
  for (auto& e : set.events) {
    if (all_user) e.attr.exclude_kernel = 1, e.attr.exclude_user = 0;
    if (all_kernel) e.attr.exclude_kernel = 0, e.attr.exclude_user = 1;
  }
}

/// perf's --filter of record and stat: each (the -e list it follows, by index; the filter) for the
/// tracepoints of that list, whose events are [first, end) of `set` per list (several for one list are
/// all required, as perf joins them). Per event of `set`, its filter (empty: none). Throws Error (usage)
/// for a filter after a list with an event that is not a tracepoint.
std::vector<std::string> tracepoint_filters(const EventSet& set,
                                            const std::vector<std::pair<std::size_t, std::size_t>>& lists,
                                            const std::vector<std::pair<std::size_t, std::string>>& filters);

/// perf's -F of record and top (record_opts__config_freq): the frequency to sample at for -F `asked`
/// (nullopt: perf's default, 4000 Hz) or -F max (`max`: the kernel's limit, runtime::max_sample_rate).
/// A default above the limit, which the kernel lowers itself when sampling takes long, is lowered to it,
/// as is an asked one unless `strict` (--strict-freq): said on standard error (as `perfspec WHO: ...`)
/// unless `quiet`. Throws Error: (usage) for an asked frequency over the limit with `strict`, (machine)
/// for -F max when the limit cannot be read.
std::uint64_t sampling_frequency(std::string_view who, std::optional<std::uint64_t> asked, bool max,
                                 bool strict, bool quiet);

/// perf's fallback for a cycles event the machine cannot count (ENOENT, ENXIO, ENODEV): the event, with
/// its modifiers, becomes the timer of its target: cpu-clock on CPUs, task-clock on tasks (perf's
/// evsel__fallback). True when `attr` was changed (the set is to be opened again).
bool fall_back_from_cycles(Attr& attr, const std::optional<runtime::Failure>& failure, bool on_cpus);

/// Each event of `set` that could not be opened, said on standard error with its reason and hint
/// (`perfspec WHO: cannot VERB 'NAME': ENAME: meaning`); whether any opened. `opened(i)`: the
/// sampler's or recording's.
template <typename Opened>
bool say_open_failures(std::string_view who, std::string_view verb, const EventSet& set,
                       const std::vector<std::optional<runtime::Failure>>& failures, Opened&& opened) {
  bool any = false;
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    if (opened(i)) {
      any = true;
      continue;
    }
    const auto& f = failures[i];
    std::fprintf(stderr, "perfspec %.*s: cannot %.*s '%s': %s%s%s\n", static_cast<int>(who.size()),
                 who.data(), static_cast<int>(verb.size()), verb.data(), set.events[i].name.c_str(),
                 f ? f->name.c_str() : "?", f && !f->meaning.empty() ? ": " : "",
                 f ? f->meaning.c_str() : "");
    if (f && !f->hint.empty()) std::fprintf(stderr, "  %s\n", f->hint.c_str());
  }
  return any;
}

}  // namespace perfspec::tools
