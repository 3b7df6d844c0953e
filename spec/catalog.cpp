// SPDX-License-Identifier: MIT
#include <fnmatch.h>
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "perfspec/catalog.hpp"
#include "perfspec/error.hpp"
#include "perfspec/event_source.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/builtin.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/tracefs.hpp"

namespace perfspec::spec {

namespace fs = std::filesystem;

namespace {

std::string format_text(const Format& f) {
  std::string out = f.word ? fmt::format("config{}:", f.word) : "config:";
  for (std::size_t i = 0; i < f.ranges.size(); ++i) {
    if (i) out += ',';
    out += f.ranges[i].lo == f.ranges[i].hi ? fmt::format("{}", f.ranges[i].lo)
                                            : fmt::format("{}-{}", f.ranges[i].lo, f.ranges[i].hi);
  }
  return out;
}

}  // namespace

bool ListFilter::passes_name(std::string_view name) const {
  if (pattern.empty()) return true;
  if (has_glob(pattern)) return ::fnmatch(pattern.c_str(), std::string(name).c_str(), FNM_CASEFOLD) == 0;
  auto it = std::search(name.begin(), name.end(), pattern.begin(), pattern.end(),
                        [](char a, char b) { return ascii_lower(a) == ascii_lower(b); });
  return it != name.end();
}

bool ListFilter::passes_pmu(std::string_view name) const {
  return pmu.empty() || name == pmu || pmu_name_matches(pmu, name) || pmu_name_matches(name, pmu);
}

bool ListFilter::passes(const ListedEvent& e) const {
  if (!source.empty() && source != source_name(e.source)) return false;
  if (!topic.empty() && topic != e.topic) return false;
  if (e.deprecated && !deprecated) return false;
  return passes_pmu(e.pmu) && passes_name(e.name);
}

std::vector<ListedEvent> list_events(const Machine& machine, const ListFilter& filter) {
  std::vector<ListedEvent> out;
  auto add = [&](ListedEvent e) {
    if (filter.passes(e)) out.push_back(std::move(e));
  };
  // Hardware and cache events are listed on the core PMU; a machine without one (a VM without a
  // virtual PMU) lists none of them, as perf 6.12 does (they still resolve, and fail to open).
  auto cores = machine.core_pmus();
  std::string core = cores.empty() ? "cpu" : cores.front()->name();
  for (const auto& s : symbols()) {
    if (cores.empty() && s.type != type_software) continue;
    ListedEvent e;
    e.name = std::string(s.name);
    e.pmu = s.type == type_software ? "software" : core;
    e.encoding = fmt::format("{}:{:#x}", s.type, s.config);
    e.topic = s.type == type_software ? "software" : "hardware";
    e.description = s.type == type_software ? "generic software event" : "generic hardware event";
    add(std::move(e));
  }
  for (unsigned cache = 0; cache < (cores.empty() ? 0u : 7u); ++cache)
    for (unsigned op = 0; op < 3; ++op)
      for (unsigned result = 0; result < 2; ++result) {
        if (!cache_op_valid(cache, op)) continue;
        ListedEvent e;
        e.name = cache_event_name(CacheEvent{cache, op, result});
        e.pmu = core;
        e.encoding = fmt::format("3:{:#x}", CacheEvent{cache, op, result}.config());
        e.topic = "cache";
        e.description = "generic cache event";
        add(std::move(e));
      }
  // perf's tool events: values the counting program computes (perfspec stat), on the "tool" PMU.
  for (auto [name, what] : {std::pair{"duration_time", "wall-clock time of the count, in ns"},
                            std::pair{"user_time", "user CPU time of what is counted, in ns"},
                            std::pair{"system_time", "system CPU time of what is counted, in ns"}}) {
    ListedEvent e;
    e.name = name;
    e.pmu = "tool";
    e.encoding = "tool";
    e.topic = "tool";
    e.description = what;
    add(std::move(e));
  }
  for (const EventSource* source : machine.sources()) source->list(filter, out);
  if (filter.tracepoints) {
    for (const auto& [sys, name] : machine.tracepoints("*", "*")) {
      ListedEvent e;
      e.name = sys + ":" + name;
      e.pmu = "tracepoint";
      if (auto id = machine.tracepoint_id(sys, name)) e.encoding = fmt::format("2:{}", *id);
      e.topic = sys;
      e.source = Source::builtin;
      e.description = "tracepoint";
      if (!filter.source.empty() && filter.source != "tracepoint") continue;
      if (filter.passes_pmu(e.pmu) && filter.passes_name(e.name) &&
          (filter.topic.empty() || filter.topic == sys))
        out.push_back(std::move(e));
    }
  }
  // Built-ins first (as perf lists them), then sysfs, tables, tracepoints.
  auto rank = [](const ListedEvent& e) {
    if (e.pmu == "tracepoint") return 4;
    switch (e.source) {
      case Source::builtin: return 0;
      case Source::sysfs: return 1;
      case Source::json: return 2;
      case Source::libpfm4: return 3;
    }
    return 5;
  };
  std::stable_sort(out.begin(), out.end(), [&](const ListedEvent& a, const ListedEvent& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.pmu != b.pmu) return a.pmu < b.pmu;
    return ::strcasecmp(a.name.c_str(), b.name.c_str()) < 0;
  });
  return out;
}

std::vector<ListedPmu> list_pmus(const Machine& machine, const ListFilter& filter) {
  std::vector<ListedPmu> out;
  for (const auto& name : machine.pmu_names()) {
    if (!filter.passes_pmu(name)) continue;
    const Pmu* pmu = machine.pmu(name);
    if (!pmu) continue;
    ListedPmu p;
    p.name = name;
    p.type = pmu->type();
    p.cpumask = pmu->cpumask();
    p.cpus = pmu->cpus();
    p.core = pmu->is_core();
    for (const auto& f : pmu->formats()) p.formats.push_back(fmt::format("{}={}", f.name, format_text(f)));
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

void copy_file(const io::Jail& jail, const std::string& from, const fs::path& to, SnapshotReport& report) {
  std::optional<std::string> text;
  try {
    text = io::read_small_file(jail, from);
  } catch (const Error& e) {
    report.skipped.push_back(e.message());
    return;
  }
  if (!text) return;
  fs::create_directories(to.parent_path());
  std::ofstream out(to, std::ios::binary);
  out << *text;
  if (!out)
    throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", to.string(), std::strerror(errno)));
  ++report.files;
}

// A fact of the machine beside the copied tree: `perfspec-snapshot/NAME` holding `text` and a newline.
void record(const std::string& out, const char* name, const std::string& text) {
  const fs::path to = fs::path(out) / "perfspec-snapshot" / name;
  fs::create_directories(to.parent_path());
  std::ofstream file(to, std::ios::binary);
  file << text << '\n';
  file.close();
  if (!file)
    throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", to.string(), std::strerror(errno)));
}

// One snapshot: the copies into `out`, what was copied and skipped in `report`.
class Snapshotter {
 public:
  Snapshotter(const Machine& machine, const std::string& out)
      : machine_(machine), out_(out), jail_(machine.root()) {}

  SnapshotReport run(const SnapshotOptions& options) {
    for (const auto& name : machine_.pmu_names()) pmu(name);
    if (options.tracepoints && !machine_.tracefs_events().empty()) tracepoints();
    topology();
    host_facts();
    return std::move(report_);
  }

 private:
  const Machine& machine_;
  const std::string& out_;
  io::Jail jail_;  // a snapshot copies nothing from outside the tree
  SnapshotReport report_;

  // A folder or file that leads out of the tree is skipped with the reason; the rest is copied.
  template <typename F> void skipping(F&& copy) {
    try {
      copy();
    } catch (const Error& e) {
      report_.skipped.push_back(e.message());
    }
  }

  void pmu(const std::string& name) {
    const std::string dir = machine_.root() + "/bus/event_source/devices/" + name;
    const fs::path dest = fs::path(out_) / "bus/event_source/devices" / name;
    bool is_pmu = false;
    skipping([&] { is_pmu = io::exists(jail_, dir + "/type"); });
    if (!is_pmu) return;
    ++report_.pmus;
    for (const char* f : {"type", "cpumask", "cpus"}) copy_file(jail_, dir + "/" + f, dest / f, report_);
    for (const char* sub : {"format", "events", "caps"})
      skipping([&] {
        for (const auto& file : io::list_dir(jail_, dir + "/" + sub)) {
          if (!safe_component(file)) continue;
          std::string from = fmt::format("{}/{}/{}", dir, sub, file);
          bool regular = false;
          skipping([&] { regular = io::is_regular_file(jail_, from); });
          if (regular) copy_file(jail_, from, dest / sub / file, report_);
        }
      });
  }

  // The real tracefs may be mounted outside /sys (found in /proc/mounts): the ids are read inside it.
  void tracepoints() {
    const std::string& events = machine_.tracefs_events();
    std::optional<io::Jail> own;
    if (!events.starts_with(machine_.root() + "/")) own.emplace(events);
    for (const auto& [sys, ev] : machine_.tracepoints("*", "*")) {
      copy_file(own ? *own : jail_, fmt::format("{}/{}/{}/id", events, sys, ev),
                fs::path(out_) / "kernel/tracing/events" / sys / ev / "id", report_);
      ++report_.tracepoints;
    }
  }

  // The CPU topology metrics' literals read (#smt_on, #num_cores, ...), and what stat's --per-cache
  // and --per-cluster group by (read_cpu_topology).
  void topology() {
    const std::string cpu = machine_.root() + "/devices/system/cpu";
    const fs::path cpu_out = fs::path(out_) / "devices/system/cpu";
    skipping([&] {
      for (const char* f : {"online", "present", "possible", "smt/active", "smt/control"})
        copy_file(jail_, cpu + "/" + f, cpu_out / f, report_);
      for (const auto& entry : io::list_dir(jail_, cpu)) {
        if (!entry.starts_with("cpu") || entry.size() == 3 ||
            entry.find_first_not_of("0123456789", 3) != std::string::npos)
          continue;
        for (const char* f : {"physical_package_id", "die_id", "core_id", "cluster_id"})
          copy_file(jail_, fmt::format("{}/{}/topology/{}", cpu, entry, f), cpu_out / entry / "topology" / f,
                    report_);
        const std::string caches = fmt::format("{}/{}/cache", cpu, entry);
        for (const auto& index : io::list_dir(jail_, caches))
          if (index.starts_with("index"))
            for (const char* f : {"level", "shared_cpu_list"})
              copy_file(jail_, fmt::format("{}/{}/{}", caches, index, f),
                        cpu_out / entry / "cache" / index / f, report_);
      }
    });
  }

  void host_facts() {
    // What metrics need of the host beyond sysfs, when the host is what was copied: whether the NMI
    // watchdog holds a counter, the TSC frequency.
    if (tracefs::is_real_sysfs(machine_.root())) {
      record(out_, "nmi_watchdog", machine_.nmi_watchdog() ? "1" : "0");
      try {
        record(out_, "system_tsc_freq", fmt::format("{:.0f}", machine_.metric_literal("system_tsc_freq")));
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::io) throw;
        report_.skipped.push_back(e.message());
      }
    }
    // The CPU id goes along, so that event tables resolve for the snapshotted machine, not the
    // reader's; but this host's id only when the host is what was copied (a fixture is not this host).
    const bool id_of_tree =
        machine_.cpuid_origin() != Machine::CpuidOrigin::this_host || tracefs::is_real_sysfs(machine_.root());
    if (!machine_.cpuid().empty() && id_of_tree) {
      record(out_, "cpuid", machine_.cpuid());
      report_.cpuid = machine_.cpuid();
    }
  }
};

}  // namespace

SnapshotReport snapshot(const Machine& machine, const std::string& out, const SnapshotOptions& options) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec))
    throw Error(ErrorKind::usage,
                fmt::format("'{}' exists and is not empty: snapshot into a new folder", out));
  fs::create_directories(out, ec);
  if (ec) throw Error(ErrorKind::io, fmt::format("cannot create '{}': {}", out, ec.message()));
  return Snapshotter(machine, out).run(options);
}

}  // namespace perfspec::spec
