// SPDX-License-Identifier: MIT
// The named-event sources: sysfs aliases, perf's JSON tables (a model's and the `sys` folders'), and
// libpfm4. What each knows of its own events is here, and only here: how to find one on a PMU, which
// names it has, how it lists them, and what it had to leave out.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/abi.hpp"
#include "spec/builtin.hpp"
#include "spec/libpfm4.hpp"
#include "spec/sources.hpp"

namespace perfspec::spec {

namespace {

// Calls f(pmu) for each PMU of the machine that can be read.
template <typename F> void each_pmu(const Machine& machine, F&& f) {
  for (const auto& name : machine.pmu_names())
    if (const Pmu* pmu = machine.pmu(name)) f(*pmu);
}

class SysfsSource final : public EventSource {
 public:
  explicit SysfsSource(const Machine& machine) : machine_(machine) {}
  Source kind() const override { return Source::sysfs; }
  std::string_view label() const override { return "sysfs"; }
  const Alias* find(const Pmu& pmu, std::string_view name) const override { return pmu.alias(name); }
  void names(const Pmu& pmu, std::vector<std::string>& out, bool) const override {
    for (const auto& a : pmu.aliases()) out.push_back(a.name);
  }
  void all_names(std::vector<std::string_view>& out) const override {
    each_pmu(machine_, [&](const Pmu& pmu) {
      for (const auto& a : pmu.aliases()) out.push_back(a.name);
    });
  }
  void list(const ListFilter& filter, std::vector<ListedEvent>& out) const override {
    each_pmu(machine_, [&](const Pmu& pmu) {
      if (!filter.passes_pmu(pmu.name())) return;
      for (const auto& a : pmu.aliases()) {
        // What the name means on this PMU: a table event of the same name gives it its encoding (and,
        // for `sys` tables, replaces it), as resolve does; the table source then does not list it.
        const Alias* used = machine_.alias(pmu, a.name);
        if (!used) used = &a;
        ListedEvent e;
        e.name = a.name;
        e.pmu = pmu.name();
        e.encoding = used->terms;
        e.topic = "sysfs";
        e.unit = used->unit;
        e.scale = used->scale;
        e.source = Source::sysfs;
        if (filter.passes(e)) out.push_back(std::move(e));
      }
    });
  }
  std::vector<SourceDiagnostic> diagnostics() const override {
    std::vector<SourceDiagnostic> out;
    for (const auto& name : machine_.pmu_names()) {
      const Pmu* pmu = nullptr;
      try {
        pmu = machine_.pmu(name);
      } catch (const Error&) {
        continue;  // a PMU that cannot be read is not listed either
      }
      if (pmu)
        for (const auto& s : pmu->skipped()) out.push_back({s.reason});
    }
    return out;
  }

 private:
  const Machine& machine_;
};

class TableSource final : public EventSource {
 public:
  TableSource(const Machine& machine, TableScope scope) : machine_(machine), sys_(scope == TableScope::sys) {}
  Source kind() const override { return Source::json; }
  std::string_view label() const override { return sys_ ? "sys tables" : "tables"; }

  const Alias* find(const Pmu& pmu, std::string_view name) const override {
    const EventTables* t = tables_of(pmu);
    if (!t) return nullptr;
    for (const TableEvent* e : t->find(name))
      if (machine_.table_event_applies(*e, pmu)) return &e->alias;
    return nullptr;
  }
  void names(const Pmu& pmu, std::vector<std::string>& out, bool deprecated) const override {
    if (const EventTables* t = tables_of(pmu))
      for (const auto& e : t->events())
        if ((deprecated || !e.deprecated) && machine_.table_event_applies(e, pmu))
          out.push_back(e.alias.name);
  }
  void all_names(std::vector<std::string_view>& out) const override {
    if (const EventTables* t = sys_ ? machine_.sys_tables() : machine_.tables()) {
      auto more = t->names();
      out.insert(out.end(), more.begin(), more.end());
    }
  }
  void list(const ListFilter& filter, std::vector<ListedEvent>& out) const override {
    if (!machine_.tables() && machine_.tables_folder().empty()) return;
    // With descriptions: the whole JSON of each model in use (arm64 core PMUs may each have their
    // own) or of the `sys` folders. An event is listed once per PMU name it applies to, instances of
    // an uncore PMU under their unit's name, as perf lists them.
    std::map<std::string, std::shared_ptr<const EventTables>> full;  // by model; "" = sys
    auto full_of = [&](const std::string& model) -> const EventTables& {
      auto it = full.find(model);
      if (it == full.end())
        it = full.emplace(model, EventTables::load_full(machine_.tables_folder(), model)).first;
      return *it->second;
    };
    std::set<std::pair<const TableEvent*, std::string>> seen;
    each_pmu(machine_, [&](const Pmu& pmu) {
      const EventTables* used = tables_of(pmu);
      if (!used) return;
      for (const auto& te : full_of(sys_ ? std::string() : used->model()).events()) {
        if (!machine_.table_event_applies(te, pmu)) continue;
        if (pmu.alias(te.alias.name)) continue;  // listed by the sysfs source
        std::string shown = te.pmu.empty() || te.pmu.find(',') != std::string::npos ? pmu.name() : te.pmu;
        if (!filter.passes_pmu(pmu.name()) && !filter.passes_pmu(shown)) continue;
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
        if (filter.passes(e)) out.push_back(std::move(e));
      }
    });
  }
  std::vector<SourceDiagnostic> diagnostics() const override {
    // Every table in use: the machine's, and on arm64 those of other core types' PMUs.
    std::vector<const EventTables*> used;
    auto add = [&](const EventTables* t) {
      if (t && std::find(used.begin(), used.end(), t) == used.end()) used.push_back(t);
    };
    if (sys_) {
      add(machine_.sys_tables());
    } else {
      for (const auto& name : machine_.pmu_names())
        if (const Pmu* pmu = machine_.pmu(name)) add(machine_.tables_for(*pmu));
      add(machine_.tables());
    }
    std::vector<SourceDiagnostic> out;
    for (const EventTables* t : used)
      for (const auto& d : t->diagnostics()) out.push_back({d.text()});
    return out;
  }
  std::string unplaced(std::string_view name) const override {
    const EventTables* t = sys_ ? machine_.sys_tables() : machine_.tables();
    if (!t) return {};
    auto found = t->find(name);
    if (found.empty()) return {};
    const TableEvent& e = *found.front();
    std::string tables = sys_ ? "the tables' sys folders" : fmt::format("the {} tables", t->model());
    if (e.sys && e.compat.empty())
      return fmt::format("{} define '{}' for '{}' without a Compat, which matches no PMU (as in perf)",
                         tables, e.alias.name, e.pmu);
    if (e.sys)
      return fmt::format(
          "{} define '{}' for a '{}' PMU whose identifier matches '{}', which this machine does not have",
          tables, e.alias.name, e.pmu, e.compat);
    if (e.pmu.empty())
      return fmt::format(
          "{} define '{}' for the core PMU, which this machine does not have (a virtual machine "
          "without a virtual PMU has none)",
          tables, e.alias.name);
    return fmt::format("{} define '{}' for PMU '{}', which this machine does not have", tables, e.alias.name,
                       e.pmu);
  }

 private:
  // The tables whose events may belong to `pmu`: `sys` events only reach uncore PMUs with an identifier.
  const EventTables* tables_of(const Pmu& pmu) const {
    if (!sys_) return machine_.tables_for(pmu);
    return pmu.is_uncore() && !pmu.identifier().empty() ? machine_.sys_tables() : nullptr;
  }
  const Machine& machine_;
  bool sys_;
};

class Libpfm4Source final : public EventSource {
 public:
  explicit Libpfm4Source(const Machine& machine) : machine_(machine) {}
  Source kind() const override { return Source::libpfm4; }
  std::string_view label() const override { return "libpfm4"; }
  bool fallback() const override { return true; }

  const Alias* find(const Pmu& pmu, std::string_view name) const override {
    // libpfm4 knows core events as `EVENT[:UMASK...]`, dotted (`INST_RETIRED.ANY_P`) and plain: AMD's
    // often have no unit mask (`RETIRED_INSTRUCTIONS`). perf's generic names (`cycles`, `L1-dcache-
    // loads`, also asked for as `cpu/cycles/`) are not libpfm4's core events, and are not sent.
    if (!pmu.is_core() || find_symbol(name) || parse_cache_name(name)) return nullptr;
    if (!pfm::describes(machine_)) return nullptr;  // libpfm4's model is another CPU's
    std::string key = fmt::format("{}/{}", pmu.name(), name);
    {
      std::lock_guard lock(mutex_);
      if (auto it = encoded_.find(key); it != encoded_.end()) return it->second.get();
    }
    auto enc = pfm::encode(name);
    if (!enc || !targets(*enc, pmu)) return nullptr;
    auto a = std::make_unique<Alias>();
    a->name = std::string(name);
    a->terms = fmt::format("config={:#x}", enc->config);
    if (enc->config1) a->terms += fmt::format(",config1={:#x}", enc->config1);
    if (enc->config2) a->terms += fmt::format(",config2={:#x}", enc->config2);
    a->source = Source::libpfm4;
    if (enc->exclude_kernel != enc->exclude_user) a->modifiers = enc->exclude_kernel ? "u" : "k";
    a->origin = enc->canonical;
    std::lock_guard lock(mutex_);
    return encoded_.emplace(key, std::move(a)).first->second.get();
  }
  // libpfm4 is asked by name only: it is not enumerated for suggestions or lists.
  void names(const Pmu&, std::vector<std::string>&, bool) const override {}
  void all_names(std::vector<std::string_view>&) const override {}
  void list(const ListFilter&, std::vector<ListedEvent>&) const override {}
  std::vector<SourceDiagnostic> diagnostics() const override { return {}; }

 private:
  // Whether libpfm4's encoding is for `pmu`. libpfm4 gives a core event PERF_TYPE_RAW, which the
  // kernel hands to the core PMU, whatever type number sysfs gives that PMU (x86's `cpu` is 4, arm64's
  // armv8_pmuv3_0 a dynamic one); on a machine with several core PMUs (hybrid), the type libpfm4
  // gives (its PMU's own) says which, so RAW is the one that is type 4 there.
  bool targets(const pfm::Encoding& enc, const Pmu& pmu) const {
    // Only libpfm4's CPU models: its `perf` and `perf_raw` PMUs take perf's generic names and raw
    // codes (`r0x6dde`, which perf does not accept), and its uncore PMUs are not the core PMU's.
    if (!enc.core) return false;
    if (enc.type == pmu.type()) return true;
    return enc.type == type_raw && machine_.core_pmus().size() == 1 && machine_.core_pmus()[0] == &pmu;
  }
  const Machine& machine_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<Alias>, std::less<>> encoded_;  // "pmu/name" -> alias
};

}  // namespace

std::unique_ptr<const EventSource> make_sysfs_source(const Machine& machine) {
  return std::make_unique<SysfsSource>(machine);
}
std::unique_ptr<const EventSource> make_table_source(const Machine& machine, TableScope scope) {
  return std::make_unique<TableSource>(machine, scope);
}
std::unique_ptr<const EventSource> make_libpfm4_source(const Machine& machine) {
  return std::make_unique<Libpfm4Source>(machine);
}

}  // namespace perfspec::spec
