// SPDX-License-Identifier: MIT
#pragma once
// What a Machine keeps (internal to the library): its PMUs, its tables, its named-event sources,
// tracefs, and the caches and locks behind them. spec.hpp describes what a Machine is; this is how it
// remembers.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "perfspec/event_source.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/tables.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::spec {

struct Machine::Impl {
  Impl(const Machine& machine, std::string root, MachineOptions options);

  std::string root_, devices_;
  std::shared_ptr<const io::Jail> jail_;  // every file below root_ is read through it
  MachineOptions options_;

  // PMUs
  const Pmu* pmu(std::string_view name) const;
  const std::vector<std::string>& pmu_names() const;
  const std::vector<const Pmu*>& core_pmus() const;
  const Pmu* find_pmu(std::string_view name) const;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<Pmu>, std::less<>> pmus_;
  mutable std::map<std::string, bool, std::less<>> absent_;
  mutable std::once_flag names_once_, cores_once_, alias_names_once_;
  mutable std::map<std::string, const Pmu*, std::less<>> pmu_aliases_;  // `alias` file -> PMU
  mutable std::vector<const Pmu*> cores_;
  mutable std::vector<std::string> names_;

  // Tables
  const EventTables* tables() const;
  const EventTables* tables_for(const Pmu& pmu) const;
  const EventTables* tables_for_cpuid(const std::string& cpuid) const;
  const EventTables* sys_tables() const;
  std::string midr_of(int cpu) const;  // under the root, "" when absent
  mutable std::once_flag tables_once_, sys_once_;
  mutable std::shared_ptr<const EventTables> tables_, sys_tables_;
  mutable std::string cpuid_, arch_dir_;
  mutable bool arm64_ = false, cpuid_given_ = false;
  mutable CpuidOrigin cpuid_origin_ = CpuidOrigin::this_host;
  mutable std::map<std::string, std::shared_ptr<const EventTables>, std::less<>>
      tables_by_cpuid_;  // arm64 PMUs

  // Named events: the sources in lookup order (the `sys` tables, sysfs, the model's tables, libpfm4).
  std::vector<std::unique_ptr<const EventSource>> sources_;
  std::vector<const EventSource*> source_list_;
  const Alias* named_event(const Pmu& pmu, std::string_view name, bool fallbacks) const;
  const Alias* refined(const Pmu& pmu, std::string_view name, const Alias& sysfs, const Alias& table) const;
  mutable std::map<std::string, std::unique_ptr<Alias>, std::less<>> merged_;  // sysfs alias + table entry
  mutable std::unordered_map<std::string, std::vector<std::pair<const Pmu*, const Alias*>>>
      named_;  // lower-case

  // CPU topology (spec/topology.cpp)
  mutable std::once_flag topology_once_;
  mutable std::vector<CpuTopology> topology_;
  mutable std::once_flag metrics_once_;
  mutable std::vector<TableMetric> metrics_;                                    // Machine::table_metrics()
  mutable std::vector<std::pair<std::string, Machine::PmuCounters>> counters_;  // by TableCounters::pmu
  mutable std::once_flag nmi_once_;
  mutable bool nmi_watchdog_ = false;  // Machine::nmi_watchdog()

  // Tracefs
  const std::string& tracefs_events() const;
  TracefsProblem tracefs_problem(std::string_view sys, std::string_view name) const;
  const std::vector<std::string>& tracefs_listing(const std::string& dir) const;
  std::optional<std::uint64_t> tracepoint_id(std::string_view sys, std::string_view name) const;
  std::optional<std::uint64_t> read_tracepoint_id(std::string_view sys, std::string_view name) const;
  mutable std::once_flag tracefs_once_;
  mutable std::map<std::string, std::optional<std::uint64_t>, std::less<>> tracepoint_ids_;  // "sys/name"
  mutable std::map<std::string, std::vector<std::string>, std::less<>> tracefs_dirs_;        // listings
  mutable std::string tracefs_;
  mutable std::string tracefs_mount_;       // the real tracefs's mount point; "" below a fixture root
  mutable TracefsProblem tracefs_missing_;  // why tracefs_ is empty
  mutable std::shared_ptr<const io::Jail> tracefs_jail_;  // jail_, or one on a tracefs mounted outside root_

  // What a client layer derives from this Machine and keeps for as long as it lives (the resolver's
  // encoded aliases and name memo): created on first use by that layer, see extension().
  mutable std::once_flag extension_once_;
  mutable std::shared_ptr<void> extension_;
};

namespace detail {
struct MachineAccess {
  static const Machine::Impl& impl(const Machine& m) { return *m.impl_; }
};

/// The Machine's private parts, for the library's own layers.
inline const Machine::Impl& impl(const Machine& m) { return MachineAccess::impl(m); }

/// A value of type T kept by the Machine for its lifetime, created on first use (thread-safe). One
/// client type per Machine: the resolver's memo.
template <typename T> T& extension(const Machine& m) {
  const Machine::Impl& i = impl(m);
  std::call_once(i.extension_once_, [&] { i.extension_ = std::make_shared<T>(); });
  return *static_cast<T*>(i.extension_.get());
}
}  // namespace detail

}  // namespace perfspec::spec
