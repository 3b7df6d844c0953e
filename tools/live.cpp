// SPDX-License-Identifier: MIT
// -p/-t targets and what existed before a live subcommand began; the frequency record and top sample at
// (tools/live.hpp).
#include "tools/live.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "runtime/process.hpp"
#include "tools/control.hpp"

namespace perfspec::tools {

namespace {

std::vector<int> ids_of(const std::string& list, const char* option) {
  std::vector<int> out;
  for (const auto& word : split_commas(list)) {
    char* end = nullptr;
    long n = std::strtol(word.c_str(), &end, 10);
    if (word.empty() || *end != '\0' || n <= 0 || n > 0x7fffffff)
      throw Error(ErrorKind::usage, fmt::format("{} {}: ids, comma-separated", option, list));
    if (runtime::process_state(static_cast<int>(n)) != runtime::Process::running)
      throw Error(ErrorKind::usage, fmt::format("no process or thread with id {} (or it has exited)", n));
    out.push_back(static_cast<int>(n));
  }
  return out;
}

}  // namespace

runtime::Target processes_target(const std::string& pids, const std::string& tids, bool inherit) {
  const bool by_pid = tids.empty();
  std::vector<int> threads = ids_of(by_pid ? pids : tids, by_pid ? "-p" : "-t");
  int first = threads.front();
  if (by_pid) {  // -p: every thread of each process
    std::vector<int> all;
    for (int pid : threads)
      for (int tid : runtime::threads_of(pid)) all.push_back(tid);
    threads = all;
  }
  auto t = runtime::Target::process(runtime::thread_group(first).value_or(first), by_pid && inherit);
  t.threads = threads;
  return t;
}

void follow_existing(const runtime::Sampler& sampler, const record::Formats& formats,
                     const runtime::Target& target, record::Symbolizer& symbols, record::Threads* threads) {
  std::size_t first = 0;
  while (first < sampler.events().events.size() && !sampler.opened(first)) ++first;
  if (first == sampler.events().events.size()) return;
  const Attr& attr = sampler.attrs()[first];
  std::vector<std::byte> bytes;
  runtime::synthesize_kernel(attr, bytes);
  std::vector<int> pids;
  if (target.kind == runtime::Target::Kind::cpus)
    pids = runtime::numbered_entries("/proc");
  else
    for (int tid : target.threads) pids.push_back(runtime::thread_group(tid).value_or(tid));
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (int pid : pids) (void)runtime::synthesize_process(pid, attr, bytes);
  record::Record r;
  for (std::size_t at = 0; at + 8 <= bytes.size();) {
    std::uint16_t size = 0;
    std::memcpy(&size, bytes.data() + at + 6, sizeof size);
    if (size < 8 || at + size > bytes.size()) break;
    try {
      formats.decode(std::span<const std::byte>(bytes.data() + at, size), 0, r);
      symbols.apply(r);
      if (threads) threads->apply(r);
    } catch (const record::DecodeError&) {  // a record of a process that changed as it was read
    }
    at += size;
  }
}

std::vector<std::string> tracepoint_filters(const EventSet& set,
                                            const std::vector<std::pair<std::size_t, std::size_t>>& lists,
                                            const std::vector<std::pair<std::size_t, std::string>>& filters) {
  std::vector<std::string> out;
  if (filters.empty()) return out;
  out.resize(set.events.size());
  for (const auto& [list, text] : filters) {
    if (list >= lists.size()) continue;
    for (std::size_t e = lists[list].first; e < lists[list].second; ++e) {
      if (set.events[e].attr.type != 2)  // PERF_TYPE_TRACEPOINT
        throw Error(
            ErrorKind::usage,
            fmt::format("--filter '{}': '{}' is not a tracepoint (a filter is for the tracepoints of the "
                        "-e before it)",
                        text, set.events[e].name));
      std::string& f = out[e];
      f = f.empty() ? text : fmt::format("({}) && ({})", f, text);
    }
  }
  return out;
}

std::uint64_t sampling_frequency(std::string_view who, std::optional<std::uint64_t> asked, bool max,
                                 bool strict, bool quiet) {
  auto limit = runtime::max_sample_rate();
  auto say = [&](const std::string& text) {
    if (!quiet)
      std::fprintf(stderr, "perfspec %.*s: %s\n", static_cast<int>(who.size()), who.data(), text.c_str());
  };
  if (max) {
    if (!limit)
      throw Error(ErrorKind::machine, "-F max: cannot read /proc/sys/kernel/perf_event_max_sample_rate");
    say(fmt::format("-F max: {} samples a second (kernel.perf_event_max_sample_rate)", *limit));
    return *limit;
  }
  std::uint64_t hz = asked.value_or(runtime::default_frequency);
  if (!limit || hz <= *limit) return hz;
  if (!asked) {
    say(
        fmt::format("sampling at {} Hz, not the default {}: the kernel allows at most {} samples a second "
                    "(kernel.perf_event_max_sample_rate, which it lowers itself when sampling takes long)",
                    *limit, hz, *limit));
    return *limit;
  }
  if (strict)
    throw Error(ErrorKind::usage,
                fmt::format("-F {} with --strict-freq: the kernel allows at most {} samples a second "
                            "(kernel.perf_event_max_sample_rate)",
                            hz, *limit));
  say(
      fmt::format("-F {}: sampling at {} Hz, the most the kernel allows (kernel.perf_event_max_sample_rate); "
                  "--strict-freq refuses instead",
                  hz, *limit));
  return *limit;
}

bool fall_back_from_cycles(Attr& attr, const std::optional<runtime::Failure>& failure, bool on_cpus) {
  if (!failure || attr.type != 0 || attr.config != 0) return false;  // PERF_COUNT_HW_CPU_CYCLES
  if (failure->error != ENOENT && failure->error != ENXIO && failure->error != ENODEV) return false;
  attr.type = 1;                  // PERF_TYPE_SOFTWARE
  attr.config = on_cpus ? 0 : 1;  // PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK
  return true;
}

}  // namespace perfspec::tools
