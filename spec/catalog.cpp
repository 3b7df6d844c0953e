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
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/builtin.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::spec {

namespace fs = std::filesystem;

namespace {


bool name_passes(const ListFilter& f, std::string_view name) {
  if (f.pattern.empty()) return true;
  if (has_glob(f.pattern))
    return ::fnmatch(f.pattern.c_str(), std::string(name).c_str(), FNM_CASEFOLD) == 0;
  auto it = std::search(name.begin(), name.end(), f.pattern.begin(), f.pattern.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != name.end();
}

bool pmu_passes(const ListFilter& f, std::string_view pmu) {
  // Either side may be the pattern: `--pmu uncore_imc` lists uncore_imc_0's aliases, and `--pmu
  // uncore_imc_0` lists table events of the `uncore_imc` unit.
  return f.pmu.empty() || pmu == f.pmu || pmu_name_matches(f.pmu, pmu) || pmu_name_matches(pmu, f.pmu);
}

bool passes(const ListFilter& f, const ListedEvent& e) {
  if (!f.source.empty() && f.source != source_name(e.source)) return false;
  if (!f.topic.empty() && f.topic != e.topic) return false;
  if (e.deprecated && !f.deprecated) return false;
  return pmu_passes(f, e.pmu) && name_passes(f, e.name);
}

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

std::vector<ListedEvent> list_events(const Machine& machine, const ListFilter& filter) {
  std::vector<ListedEvent> out;
  auto add = [&](ListedEvent e) {
    if (passes(filter, e)) out.push_back(std::move(e));
  };
  auto cores = machine.core_pmus();
  std::string core = cores.empty() ? "cpu" : cores.front()->name();
  for (const auto& s : symbols()) {
    ListedEvent e;
    e.name = std::string(s.name);
    e.pmu = s.type == type_software ? "software" : core;
    e.encoding = fmt::format("{}:{:#x}", s.type, s.config);
    e.topic = s.type == type_software ? "software" : "hardware";
    e.description = s.type == type_software ? "generic software event" : "generic hardware event";
    add(std::move(e));
  }
  for (unsigned cache = 0; cache < 7; ++cache)
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
  for (const auto& name : machine.pmu_names()) {
    const Pmu* pmu = machine.pmu(name);
    if (!pmu || !pmu_passes(filter, name)) continue;
    for (const auto& a : pmu->aliases()) {
      // What the name means on this PMU: a table event of the same name gives it its encoding (and,
      // for `sys` tables, replaces it), as resolve does; the table event is then not listed again.
      const Alias* used = machine.alias(*pmu, a.name);
      if (!used) used = &a;
      ListedEvent e;
      e.name = a.name;
      e.pmu = name;
      e.encoding = used->terms;
      e.topic = "sysfs";
      e.unit = used->unit;
      e.scale = used->scale;
      e.source = Source::sysfs;
      add(std::move(e));
    }
  }
  if (machine.tables() || !machine.tables_folder().empty()) {
    // With descriptions: the whole JSON of each model in use (arm64 core PMUs may each have their
    // own) and of the `sys` folders. An event is listed once per PMU name it applies to, instances of
    // an uncore PMU under their unit's name, as perf lists them.
    std::map<std::string, std::shared_ptr<const EventTables>> full;  // by model; "" = sys
    auto full_of = [&](const std::string& model) -> const EventTables& {
      auto it = full.find(model);
      if (it == full.end()) it = full.emplace(model, EventTables::load_full(machine.tables_folder(), model)).first;
      return *it->second;
    };
    std::set<std::pair<const TableEvent*, std::string>> seen;
    for (const auto& name : machine.pmu_names()) {
      const Pmu* pmu = machine.pmu(name);
      if (!pmu) continue;
      std::vector<const EventTables*> sources;
      if (const EventTables* t = machine.tables_for(*pmu)) sources.push_back(&full_of(t->model()));
      if (pmu->is_uncore() && !pmu->identifier().empty() && machine.sys_tables()) sources.push_back(&full_of(""));
      for (const EventTables* t : sources)
        for (const auto& te : t->events()) {
          if (!machine.table_event_applies(te, *pmu)) continue;
          if (pmu->alias(te.alias.name)) continue;  // listed with the PMU's sysfs aliases
          std::string shown = te.pmu.empty() || te.pmu.find(',') != std::string::npos ? name : te.pmu;
          if (!pmu_passes(filter, name) && !pmu_passes(filter, shown)) continue;
          if (!seen.emplace(&te, shown).second) continue;
          ListedEvent e;
          e.name = te.alias.name;
          e.pmu = shown;
          e.encoding = te.alias.terms;
          e.description = te.description;
          e.topic = te.topic;
          e.unit = te.alias.unit;
          e.scale = te.alias.scale;
          e.source = Source::json;
          e.deprecated = te.deprecated;
          add(std::move(e));
        }
    }
  }
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
      if (pmu_passes(filter, e.pmu) && name_passes(filter, e.name) && (filter.topic.empty() || filter.topic == sys))
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
    if (!pmu_passes(filter, name)) continue;
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
  if (!out) throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", to.string(), std::strerror(errno)));
  ++report.files;
}

}  // namespace

SnapshotReport snapshot(const Machine& machine, const std::string& out, const SnapshotOptions& options) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec))
    throw Error(ErrorKind::usage, fmt::format("'{}' exists and is not empty: snapshot into a new folder", out));
  fs::create_directories(out, ec);
  if (ec) throw Error(ErrorKind::io, fmt::format("cannot create '{}': {}", out, ec.message()));
  SnapshotReport report;
  const std::string devices = machine.root() + "/bus/event_source/devices";
  const fs::path dest = fs::path(out) / "bus/event_source/devices";
  io::Jail jail(machine.root());  // a snapshot copies nothing from outside the tree
  // A folder or file that leads out of the tree is skipped with the reason; the rest is copied.
  auto skipping = [&](auto&& copy) {
    try {
      copy();
    } catch (const Error& e) {
      report.skipped.push_back(e.message());
    }
  };
  for (const auto& name : machine.pmu_names()) {
    std::string dir = devices + "/" + name;
    bool pmu = false;
    skipping([&] { pmu = io::exists(jail, dir + "/type"); });
    if (!pmu) continue;
    ++report.pmus;
    for (const char* f : {"type", "cpumask", "cpus"}) copy_file(jail, dir + "/" + f, dest / name / f, report);
    for (const char* sub : {"format", "events", "caps"})
      skipping([&] {
        for (const auto& file : io::list_dir(jail, dir + "/" + sub)) {
          if (!safe_component(file)) continue;
          std::string from = fmt::format("{}/{}/{}", dir, sub, file);
          bool regular = false;
          skipping([&] { regular = io::is_regular_file(jail, from); });
          if (regular) copy_file(jail, from, dest / name / sub / file, report);
        }
      });
  }
  if (options.tracepoints && !machine.tracefs_events().empty()) {
    // The real tracefs may be mounted outside /sys (found in /proc/mounts): the ids are read inside it.
    const std::string& events = machine.tracefs_events();
    std::optional<io::Jail> own;
    if (!events.starts_with(machine.root() + "/")) own.emplace(events);
    for (const auto& [sys, ev] : machine.tracepoints("*", "*")) {
      copy_file(own ? *own : jail, fmt::format("{}/{}/{}/id", events, sys, ev),
                fs::path(out) / "kernel/tracing/events" / sys / ev / "id", report);
      ++report.tracepoints;
    }
  }
  // The CPU id goes along, so that event tables resolve for the snapshotted machine, not the reader's.
  if (!machine.cpuid().empty()) {
    fs::create_directories(fs::path(out) / "perfspec-snapshot");
    std::ofstream(fs::path(out) / "perfspec-snapshot/cpuid") << machine.cpuid() << '\n';
  }
  return report;
}

}  // namespace perfspec::spec
