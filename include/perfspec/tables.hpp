#pragma once
// perf-format JSON event tables (tools/perf/pmu-events/arch/<arch>/: mapfile.csv and one folder per
// CPU model, one JSON file per topic), the CPU id that picks a model, and the index that makes a
// lookup cheap.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::spec {

/// One table entry as perfspec uses it.
struct TableEvent {
  Alias alias;              ///< name as written (EventName), terms, scale/unit, per-pkg; source json
  std::string pmu;          ///< the PMU it belongs to: "" for the core PMU(s), else e.g. "uncore_imc", "amd_l3"
  std::string topic;        ///< the file it came from, without .json ("cache", "uncore-memory")
  std::string description;  ///< BriefDescription (empty when loaded from the index)
  bool deprecated = false;
};

/// This machine's CPU id in perf's form: `GenuineIntel-6-55-4` (vendor, family, model in hex,
/// stepping in hex) on x86, the MIDR (`0x00000000410fd0c0`) on arm64; empty when unknown.
/// Example: `detect_cpuid()` is `GenuineIntel-6-A7-1` on the development VM.
std::string detect_cpuid(const std::string& cpuinfo = "/proc/cpuinfo",
                         const std::string& midr = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");

/// Whether a mapfile CPU-id regex (POSIX extended, as perf's) names `cpuid`. As perf does, a regex
/// without a stepping matches a full id whatever its stepping.
///
/// Example: `cpuid_matches("GenuineIntel-6-6[AC]", "GenuineIntel-6-6A-6")` is true.
bool cpuid_matches(std::string_view pattern, std::string_view cpuid);

/// The model folder of `dir/mapfile.csv` for `cpuid` (first matching `core` line), or nullopt.
/// Throws perfspec::Error naming the file when mapfile.csv is missing or malformed.
///
/// Example: `find_model("pmu-events/x86", "GenuineIntel-6-55-4") == "skylakex"`.
std::optional<std::string> find_model(const std::string& dir, const std::string& cpuid);

/// The PMU a table's `Unit` names (REFERENCE.md section 5, perf's jevents): `imc` -> `uncore_imc`,
/// `L3PMC` -> `amd_l3`, `DFPMC` -> `amd_df`, `cpu_core` as named; "" for no unit (the core PMU).
///
/// Example: `table_unit_pmu("iMC") == "uncore_imc"`.
std::string table_unit_pmu(std::string_view unit);

/// The events of one CPU model.
///
/// Example:
/// ```
/// auto t = spec::EventTables::load("pmu-events/x86", "skylakex", {});
/// t->find("MEM_LOAD_RETIRED.L1_MISS")[0]->alias.terms;  // "event=0xd1,period=100003,umask=0x8"
/// t->names().size();                                     // every name, for suggestions
/// ```
class EventTables {
 public:
  struct Options {
    /// Where to keep the compiled index: "" = $PERFSPEC_CACHE_DIR, else $XDG_CACHE_HOME/perfspec,
    /// else ~/.cache/perfspec; "none" = never write one.
    std::string cache_dir;
  };
  /// The events of `model` under `dir`. Uses the compiled index when it is current (it records the
  /// names, sizes and times of the JSON files it was built from), else parses the JSON and writes the
  /// index. Throws perfspec::Error naming the file and entry of a malformed table.
  ///
  /// Example: `EventTables::load("pmu-events/x86", "icelakex", {})->find("inst_retired.any")`
  static std::shared_ptr<const EventTables> load(const std::string& dir, const std::string& model,
                                                  const Options& options);
  /// Parse every JSON file of the model (descriptions included), without the index: for listings.
  static std::shared_ptr<const EventTables> load_full(const std::string& dir, const std::string& model);

  EventTables();
  ~EventTables();
  EventTables(const EventTables&) = delete;
  EventTables& operator=(const EventTables&) = delete;

  const std::string& model() const { return model_; }
  /// Entries named `name`, case-insensitively (several when units differ). From the index, only the
  /// matching lines are parsed (binary search over the mapped file). Safe to call from many threads.
  std::vector<const TableEvent*> find(std::string_view name) const;
  /// Every entry, sorted by lower-case name (parses the whole index once when it came from one).
  const std::vector<TableEvent>& events() const;
  /// Every event name, cheaply (for suggestions).
  std::vector<std::string_view> names() const;
  /// True when this instance came from the compiled index.
  bool from_index() const { return index_ != nullptr; }

 private:
  struct Index;
  std::string model_;
  mutable std::vector<TableEvent> events_;  // sorted by lower-case name
  mutable std::vector<std::string> keys_;   // lower-case names, parallel to events_
  std::unique_ptr<Index> index_;            // the mapped index, when loaded from one
  mutable std::once_flag all_once_;
  void sort_and_key();
};

/// Turn one table entry (a JSON object's fields) into terms, as REFERENCE.md section 5 says. Exposed
/// for tests; throws perfspec::Error with a message (callers add file and entry).
struct TableFields {
  std::string event_code, umask, counter_mask, invert, edge_detect, any_thread, sample_after_value,
      msr_index, msr_value, filter, config_code, ext_sel, port_mask, fc_mask;
};
///
/// Example: EventCode "0xd1", UMask "0x8", SampleAfterValue "100003" give `event=0xd1,period=100003,umask=0x8`.
std::string table_terms(const TableFields& fields);

}  // namespace perfspec::spec
