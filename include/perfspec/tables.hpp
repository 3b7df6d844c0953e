// SPDX-License-Identifier: MIT
#pragma once
// perf-format JSON event tables (tools/perf/pmu-events/arch/<arch>/: mapfile.csv, one folder per CPU
// model with one JSON file per topic, architecture-standard events beside mapfile.csv, and `sys`
// folders of uncore events matched by the PMU's identifier), the CPU id that picks a model, and the
// index that makes a lookup cheap. The rules are those of perf's jevents.py (Linux 6.12), which
// compiles the same files into perf.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/error.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::spec {

/// One table entry as perfspec uses it.
struct TableEvent {
  Alias
      alias;  ///< name as written (EventName), terms as jevents writes them, scale/unit, per-pkg; source json
  /// The PMU it belongs to, as jevents names it from `Unit`: "" for every core PMU (jevents'
  /// `default_core`), else e.g. "uncore_imc", "amd_l3", "cpu_atom", "hisi_sccl,ddrc".
  std::string pmu;
  std::string topic;        ///< as perf shows it: the file name without .json, `-` as space ("uncore memory")
  std::string description;  ///< BriefDescription as perf shows it (empty when loaded from the index)
  /// PublicDescription as perf shows it (fixed up as the brief one is); empty when the entry has none,
  /// and when loaded from the index.
  std::string long_description;
  std::string compat;  ///< Compat: for events of `sys` folders, the regex a PMU's `identifier` must match
  bool deprecated = false;
  /// Counter: the counters it may be scheduled on (`0,1,2,3`, `Fixed counter 1`, `FIXED`; Intel's
  /// tables). Only from EventTables::load_full (the index leaves it empty).
  std::string counter;
  bool sys =
      false;  ///< from a `sys` folder: belongs to uncore PMUs by identifier (Machine::table_event_applies)
};

/// A metric entry (MetricName/MetricExpr), kept as written for the metrics work; not used by events.
struct TableMetric {
  std::string name, expr, groups, threshold, scale_unit, constraint, description, default_group, aggregation;
  std::string pmu, compat, origin;  ///< origin: the file it came from
  std::string no_group;  ///< MetricgroupNoGroup: `;`-separated groups asked by which it is not grouped
  std::string long_description;  ///< PublicDescription, fixed up as perf shows it; empty when none
};

/// Where metric `name`'s MetricExpr `expr` is written in the table file `file`: its line and column,
/// and the file column of each byte of the expression (escapes such as `\\-` are two characters for
/// one byte), so that an error in the metric points at the file. nullopt when the file does not hold
/// the metric with that expression as written (an arm64 metric taking it from ArchStdEvent).
std::optional<Origin> table_metric_origin(const std::string& file, std::string_view name,
                                          std::string_view expr);

/// `counter.json`: how many counters a PMU has (for metric grouping).
struct TableCounters {
  std::string pmu;  ///< as TableEvent::pmu: "" for the core PMUs (Unit `core`)
  unsigned fixed = 0, generic = 0;
};

/// Something in a table that was skipped: a malformed entry (`entry` set) or a file that could not be
/// read as a table (`entry` empty). Nothing skipped takes other names down; a skipped file is named
/// when a name is not found, since the name may have been defined there.
struct TableDiagnostic {
  std::string file;                  ///< path of the JSON file
  std::optional<std::size_t> entry;  ///< index of the entry in the file's array
  std::string name;                  ///< the entry's EventName, when it had one
  std::string message;
  /// `cache.json: entry 3 (NAME): UMask 'zz' is not a number`, with the file's path.
  std::string text() const;
};

/// Which architecture a tables folder describes: perf compiles one architecture's tables and matches
/// mapfile CPU ids with that architecture's rule (a regex on x86 and most others, MIDR fields on arm64).
enum class TableArch { x86, arm64, powerpc, s390, riscv, other };
/// From the folder's name (`.../pmu-events/arm64`), else from the shape of the CPU id.
///
/// Example: `table_arch("pmu-events/arm64", "") == TableArch::arm64`,
/// `table_arch("my-tables", "0x00000000410fd0c0") == TableArch::arm64`.
TableArch table_arch(std::string_view dir, std::string_view cpuid);

/// This machine's CPU id in perf's form: `GenuineIntel-6-55-4` (vendor, family, model in hex,
/// stepping in hex) on x86, the MIDR (`0x00000000410fd0c0`) on arm64, `mvendorid-marchid-mimpid` on
/// riscv, the PVR (`0x004e1202`) on powerpc, `IBM,3931,A01,...` on s390; empty when unknown.
/// `cpuinfo`, `midr`, `sysinfo` and `service_levels` name the files perf reads (for tests).
/// Example: `detect_cpuid()` is `AuthenticAMD-25-11-1` on the development VM.
std::string detect_cpuid(
    const std::string& cpuinfo = "/proc/cpuinfo",
    const std::string& midr = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
    const std::string& sysinfo = "/proc/sysinfo", const std::string& service_levels = "/proc/service_levels");

/// Whether a mapfile CPU-id regex (POSIX extended, as perf's) names `cpuid`, by the x86 rule (which is
/// the generic one for ids that are not vendor-family-model-stepping): the whole id must match, and a
/// regex without a stepping matches a full id whatever its stepping.
///
/// Example: `cpuid_matches("GenuineIntel-6-6[AC]", "GenuineIntel-6-6A-6")` is true.
bool cpuid_matches(std::string_view pattern, std::string_view cpuid);

/// arm64's rule: the MIDRs are equal but for variant and revision, and the CPU's (variant, revision)
/// is at least the mapfile's.
///
/// Example: `midr_matches("0x00000000410fd0c0", "0x00000000413fd0c1")` is true.
bool midr_matches(std::string_view map_id, std::string_view midr);

/// The model folder of `dir/mapfile.csv` for `cpuid` (the first row that matches by the rule of the
/// folder's architecture and names a folder holding tables), relative to `dir` (`skylakex`,
/// `arm/neoverse-n1`), or nullopt. Throws perfspec::Error naming the file and line when mapfile.csv is
/// missing or malformed, or names a folder outside `dir`.
///
/// Example: `find_model("pmu-events/x86", "GenuineIntel-6-55-4") == "skylakex"`.
std::optional<std::string> find_model(const std::string& dir, const std::string& cpuid);

/// The PMU a table's `Unit` names, as perf's jevents: `iMC` -> `uncore_imc`, `L3PMC` -> `amd_l3`,
/// `CPU-M-CF` -> `cpum_cf`, `cpu_core` as named; "" for no unit (every core PMU).
///
/// Example: `table_unit_pmu("iMC") == "uncore_imc"`.
std::string table_unit_pmu(std::string_view unit);

/// Whether a table event's PMU (`TableEvent::pmu`, not "") names the sysfs PMU `pmu_name` by perf's
/// uncore rule: the name with an optional `_` and an instance suffix (decimal, or hex of more than two
/// digits), or for comma lists (`hisi_sccl,ddrc`) each part in order within the name. Exact names match
/// everywhere; this rule applies to uncore PMUs (those with a `cpumask`).
///
/// Example: `table_pmu_matches("uncore_imc", "uncore_imc_3")`, `table_pmu_matches("hisi_sccl,ddrc",
/// "hisi_sccl1_ddrc0")` are true; `table_pmu_matches("uncore_imc", "uncore_imc_free_running_0")` false.
bool table_pmu_matches(std::string_view table_pmu, std::string_view pmu_name);

/// The events of one CPU model, or of an architecture's `sys` folders.
///
/// Example:
/// ```
/// auto t = spec::EventTables::load("pmu-events/x86", "skylakex", {});
/// t->find("MEM_LOAD_RETIRED.L1_MISS")[0]->alias.terms;  // "event=0xd1,period=100003,umask=8"
/// t->names().size();                                     // every name, for suggestions
/// ```
class EventTables {
 public:
  struct Options {
    /// Where to keep the compiled index: "" = $PERFSPEC_CACHE_DIR, else $XDG_CACHE_HOME/perfspec,
    /// else ~/.cache/perfspec; "none" = never write one.
    std::string cache_dir;
  };
  /// The events of `model` (a folder of `dir`, as mapfile.csv names it) under `dir`, with the
  /// architecture-standard events of `dir` that `ArchStdEvent` entries refer to. Uses the compiled
  /// index when it is current (it records the names, sizes and times of the JSON files it was built
  /// from) and intact (its length, and a checksum per block as blocks are read), else parses the JSON
  /// and writes the index. A current bundled index of `dir` (write_bundled_index) comes first; then
  /// nothing is written and no cache folder is made. The cache folder is used only when it is this user's and
  /// no one else may write to it (cache_problem() says why not). Entries and files that cannot be used are
  /// skipped and reported by diagnostics(); only a missing model folder throws.
  ///
  /// Example: `EventTables::load("pmu-events/x86", "icelakex", {})->find("inst_retired.any")`
  static std::shared_ptr<const EventTables> load(const std::string& dir, const std::string& model,
                                                 const Options& options);
  /// The uncore events of every `sys` folder under `dir` (arm64's `arm/cmn/sys`, ...): each carries the
  /// `Compat` regex that a PMU's `identifier` must match. Empty when `dir` has none.
  static std::shared_ptr<const EventTables> load_sys(const std::string& dir, const Options& options);
  /// Compile the bundled index of the tables folder `dir` (one architecture's, with mapfile.csv): one
  /// index per model that mapfile.csv names and one of the `sys` folders, in `dir/perfspec-index/`
  /// (replaced). load() and load_sys() then use it read-only, before the cache folder, as long as the
  /// files it was built from are there with the same sizes and either the same times (in seconds) or
  /// the same contents; so a copied or moved folder keeps it. For tables installed for many users
  /// (the build does it for the ones it installs); the owner of `dir` or root must own it. Returns how
  /// many indexes were written; throws perfspec::Error when mapfile.csv is missing or malformed, or an
  /// index cannot be written.
  ///
  /// Example: `EventTables::write_bundled_index("share/perfspec/events/x86")`
  static std::size_t write_bundled_index(const std::string& dir);
  /// Parse every JSON file of the model without the index, with descriptions, metrics, counter counts
  /// and metric-group descriptions: for listings. `model` "" means the `sys` folders.
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
  /// What was skipped, with why (from the index too).
  const std::vector<TableDiagnostic>& diagnostics() const;
  /// Why the cache folder was not used for the compiled index (it is another user's, or others may
  /// write to it); "" when it was, or when none was asked for. The table works either way.
  const std::string& cache_problem() const { return cache_problem_; }
  /// Metric entries, counter counts and metric-group descriptions: from load_full() only.
  const std::vector<TableMetric>& metrics() const { return metrics_; }
  const std::vector<TableCounters>& counters() const { return counters_; }
  const std::map<std::string, std::string>& metric_groups() const { return metric_groups_; }
  /// True when this instance came from the compiled index.
  bool from_index() const { return index_ != nullptr; }

 private:
  struct Index;
  std::string model_;
  mutable std::vector<TableEvent> events_;  // sorted by lower-case name
  mutable std::vector<std::string> keys_;   // lower-case names, parallel to events_
  std::vector<TableDiagnostic> diagnostics_;
  std::vector<TableMetric> metrics_;
  std::vector<TableCounters> counters_;
  std::map<std::string, std::string> metric_groups_;
  std::unique_ptr<Index> index_;  // the mapped index, when loaded from one
  std::string signature_, index_name_, cache_problem_;
  mutable std::once_flag all_once_;
  void sort_and_key();
  bool write_index(const std::string& cache_path) const;
  const EventTables* rebuilt() const;  // the JSON's entries, after the index proved corrupt
  static std::shared_ptr<const EventTables> load_files(const std::string& dir, const std::string& model,
                                                       const Options& options, bool sys);
};

/// The fields of one table entry that make its encoding (jevents' names). Exposed for tests.
struct TableFields {
  std::string event_code, umask, counter_mask, invert, edge_detect, any_thread, sample_after_value, msr_index,
      msr_value, filter, config_code, ext_sel, port_mask, fc_mask, eventid_code, node_type, rdwr_mask,
      en_all_cores, en_all_slices, slice_id, thread_mask;
};
/// The terms jevents writes for an entry: `config=` (ConfigCode), `eventid=` (EventidCode) or
/// `event=` (EventCode, its first code when it lists two, with ExtSel), then the non-zero fields in
/// jevents' order, the Filter as written, and the MSR term (`ldlat=`, `offcore_rsp=`, `frontend=`
/// with MSRValue as written). Values print as jevents prints them: decimal below 10, else hex (hex
/// inputs) or decimal (decimal inputs). Throws perfspec::Error (unpositioned) for a field that is not a
/// number, an MSRIndex perf does not know, or an MSRIndex without MSRValue.
///
/// Example: EventCode "0xd1", UMask "0x8", SampleAfterValue "100003" give `event=0xd1,period=100003,umask=8`.
std::string table_terms(const TableFields& fields);

}  // namespace perfspec::spec
