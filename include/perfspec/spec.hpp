// SPDX-License-Identifier: MIT
#pragma once
// The machine's vocabulary: PMU format bit ranges, sysfs PMUs with their aliases and capabilities, and
// tracepoints, read lazily from a sysfs root given at run time.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfspec::spec {

struct BitRange {
  unsigned lo = 0;
  unsigned hi = 0;  ///< inclusive
  friend bool operator==(const BitRange&, const BitRange&) = default;
};

/// A `format/<term>` file: which bits of which config word a term occupies.
///
/// Example: for `config:0-7,32-35`, `width() == 12`, `mask() == 0xf000000ff`, `max_value() == 4095`,
/// `scatter(0xABC) == 0xA000000BC` and `gather(0xA000000BC) == 0xABC`.
struct Format {
  std::string name;
  unsigned word = 0;  ///< 0 = config, 1 = config1, 2 = config2, 3 = config3
  std::vector<BitRange> ranges;

  unsigned width() const;           ///< number of bits
  std::uint64_t mask() const;       ///< the bits it occupies in its word
  std::uint64_t max_value() const;  ///< largest value that fits
  /// Spread `value` over the format's bits, low bit first: the k-th bit of the format receives bit k
  /// of the value (`config:0-7,32-35` with 0xABC gives 0xA000000BC). Bits beyond width() are dropped;
  /// check against max_value() first.
  std::uint64_t scatter(std::uint64_t value) const;
  /// The inverse of scatter: collect the format's bits from a config word.
  std::uint64_t gather(std::uint64_t word) const;
};

/// Parse the contents of a format file (`config1:0,2,4,6,8,20-28`, trailing newline optional).
/// Throws perfspec::Error (unpositioned) whose message says what is wrong; callers add the file name.
///
/// Example: `parse_format("event", "config:0-7,32-35\n").scatter(0xABC) == 0xA000000BC`
Format parse_format(std::string_view name, std::string_view text);

/// Where a named event comes from, in lookup priority order.
enum class Source { sysfs, json, libpfm4, builtin };
/// Example: `source_name(Source::json) == "json"`.
std::string_view source_name(Source source);

/// A named event: a sysfs alias (`events/<name>` with its metadata files) or an event-table entry.
struct Alias {
  std::string name;
  std::string terms;  ///< e.g. `event=0xcd,umask=0x1,ldlat=3`
  double scale = 1.0;
  std::string scale_text;  ///< `.scale` as written, empty when absent
  std::string unit;
  bool per_pkg = false;
  bool snapshot = false;
  Source source = Source::sysfs;
  std::string origin;     ///< the file it came from (sysfs file, or `table.json` for tables)
  std::string modifiers;  ///< privilege modifiers its definition carries (libpfm4's `:u`), as letters
};

class Machine;
struct TableEvent;
struct TableMetric;
struct TableDiagnostic;
namespace io {
class Jail;  // spec/sysfs_io.hpp: reads that cannot leave the tree
}  // namespace io
class EventTables;
class EventSource;
namespace detail {
struct MachineAccess;
}  // namespace detail

/// perf 6.12's rule for a PMU name written in `pmu/terms/` (perf_pmu__match in pmu.c): a leading
/// `uncore_` is dropped from both; then the name is the pattern followed by nothing, or by an optional
/// `_` and an instance number (decimal of any length, hex of more than two digits), or the pattern
/// holds glob characters and matches by fnmatch. So `uncore_imc` and `imc` name `uncore_imc_0`, and
/// `hisi_sccl1_ddrc` names `hisi_sccl1_ddrc0`, but `cpum` does not name `cpum_cf`.
///
/// Example: `pmu_name_matches("imc", "uncore_imc_3")` is true; `pmu_name_matches("uncore_imc",
/// "uncore_imc_free_running_0")` false.
bool pmu_name_matches(std::string_view pattern, std::string_view name);

/// Where named events come from besides sysfs.
struct MachineOptions {
  std::string events_dir;  ///< perf-format JSON tables (mapfile.csv + model folders); "" = none
  std::string cpuid;       ///< perf's CPU id (`GenuineIntel-6-55-4`); "" = this machine's
  std::string cache_dir;   ///< see EventTables::Options
  bool libpfm4 = true;     ///< ask libpfm4 (when built in) for names sysfs and the tables lack
  /// events_dir from $PERFSPEC_EVENTS_DIR and cpuid from $PERFSPEC_CPUID (then $PERF_CPUID).
  ///
  /// Example: `spec::Machine machine{"/sys", spec::MachineOptions::from_environment()};`
  static MachineOptions from_environment();
};

/// Where this installation keeps perf's event tables, for MachineOptions::events_dir: a build that
/// found Debian's linux-source package installs its `tools/perf/pmu-events/arch` tree (one folder per
/// architecture, with its compiled index) in `<prefix>/share/perfspec/events`. Looked for beside the
/// running program first (`/proc/self/exe`'s `../share/perfspec/events`, so that a moved installation
/// finds its own), then in the prefix the build installs to; "" when neither is there or the build
/// installed no tables. A Machine uses tables only when told to: the CLI asks for these when neither
/// `--events-dir` nor $PERFSPEC_EVENTS_DIR is given.
///
/// Example: `spec::Machine machine{"/sys", {.events_dir = spec::default_events_dir()}};`
std::string default_events_dir();

/// One PMU under `<root>/bus/event_source/devices/<name>`. Formats and aliases load on first use.
///
/// Example:
/// ```
/// const spec::Pmu* cpu = machine.pmu("cpu");
/// cpu->type();                  // 4
/// cpu->format("umask")->mask(); // 0xff00
/// cpu->alias("mem-loads")->terms;  // "event=0xcd,umask=0x1,ldlat=3"
/// cpu->max_precise();           // 3, from caps/max_precise
/// cpu->is_core();               // true
/// ```
class Pmu {
 public:
  const std::string& name() const { return name_; }
  std::uint32_t type() const { return type_; }
  const std::string& directory() const { return dir_; }
  /// The format for a term, or nullptr. Throws perfspec::Error naming the file when it is malformed.
  const Format* format(std::string_view term) const;
  /// All formats, sorted by name.
  const std::vector<Format>& formats() const;
  /// Alias by name, case-insensitively, or nullptr.
  const Alias* alias(std::string_view name) const;
  const std::vector<Alias>& aliases() const;
  /// Contents of `caps/<name>`, trimmed.
  std::optional<std::string> cap(std::string_view name) const;
  /// caps/max_precise (0 when absent), read once.
  unsigned max_precise() const;
  const std::string& cpumask() const { return cpumask_; }
  const std::string& cpus() const { return cpus_; }
  /// A core PMU counts the CPU's own events: `cpu`, s390's `cpum_cf`, or a PMU with a `cpus` file
  /// (hybrid, arm), as perf decides.
  bool is_core() const { return core_; }
  /// An uncore PMU has a `cpumask` file (perf's rule): table events reach it by their unit's name
  /// with an instance suffix, and `sys` table events by its identifier.
  bool is_uncore() const { return uncore_; }
  /// The `identifier` file of an uncore PMU (a part number or model, e.g. `434` for Arm CMN-600);
  /// empty when it has none.
  const std::string& identifier() const { return identifier_; }
  /// Another name of this PMU from its `alias` file (some uncore drivers have one); empty when none.
  /// Read on first use: only wildcards and names that are no PMU folder need it.
  const std::string& alias_name() const;
  /// An event file left out of aliases(), and why (a folder, a symlink to nothing, binary data, a
  /// `.scale` that is no number, ...). Asked for by name, such an event is an error naming the file.
  struct Skipped {
    std::string path;
    std::string reason;
  };
  const std::vector<Skipped>& skipped() const;

  Pmu();
  ~Pmu();
  Pmu(const Pmu&) = delete;
  Pmu& operator=(const Pmu&) = delete;
  struct Lazy;  // spec/sysfs_io.hpp: what a PMU reads on first use, and the locks around it

 private:
  friend class Machine;
  std::string name_, dir_, cpumask_, cpus_, identifier_;
  std::uint32_t type_ = 0;
  bool core_ = false, uncore_ = false;
  std::unique_ptr<Lazy> lazy_;
  void load_formats() const;
  void load_aliases() const;
  const std::vector<std::string>& alias_names() const;
  Alias load_alias(const std::string& file) const;
};

/// The PMU description of one machine, rooted at a sysfs folder (`/sys` by default, or a fixture or
/// snapshot tree). Example: `spec::Machine m; for (auto& n : m.pmu_names()) std::puts(n.c_str());` Immutable
/// from the outside; lazily loaded parts are guarded, so one Machine may be shared between threads.
///
/// Nothing outside the root is ever read: a symlink in the tree that leads out of it (sysfs's own
/// links stay inside) is an error naming the link. A Machine keeps one file descriptor (O_PATH) on
/// its root for this.
/// One CPU's place in the machine (Machine::cpu_topology). A number sysfs does not give is -1 (a
/// kernel without dies has no `die_id`: perf then counts one die per socket, as here: `die` 0).
struct CpuTopology {
  int cpu = -1;
  int socket = -1;   ///< physical_package_id
  int die = -1;      ///< die_id (0 when the file is absent)
  int core = -1;     ///< core_id, unique within its die
  int node = -1;     ///< the NUMA node listing it (-1: none does)
  int cluster = -1;  ///< cluster_id (-1 when the file is absent)
  /// One of its caches (`cache/indexN`): its level, and the first CPU of its shared_cpu_list (the
  /// CPU itself when the list is empty or absent): perf's id of the cache's instance.
  struct Cache {
    int level = 0;
    int first_cpu = -1;
    friend bool operator==(const Cache&, const Cache&) = default;
  };
  std::vector<Cache> caches{};  ///< by index, those with a level
  friend bool operator==(const CpuTopology&, const CpuTopology&) = default;
};

/// The CPU lists of a machine's topology as perf record writes them (HEADER_CPU_TOPOLOGY): for the
/// online CPUs in order, each distinct `package_cpus_list` (else `core_siblings_list`),
/// `die_cpus_list` and `core_cpus_list` (else `thread_siblings_list`), as sysfs words them.
struct SiblingLists {
  std::vector<std::string> packages, dies, cores;  ///< dies: empty where sysfs has no die_cpus_list
};

/// One NUMA node (HEADER_NUMA_TOPOLOGY): its memory from `nodeN/meminfo` (kB) and its `cpulist`.
struct NumaNode {
  int node = -1;
  std::uint64_t mem_total_kb = 0, mem_free_kb = 0;
  std::string cpus{};
  friend bool operator==(const NumaNode&, const NumaNode&) = default;
};

class Machine {
 public:
  /// Example: `spec::Machine snapshot{"target-machine/", {.events_dir = "pmu-events/x86"}};`
  explicit Machine(std::string sysfs_root = "/sys", MachineOptions options = {});
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const std::string& root() const;
  /// The PMU with exactly this name, or nullptr when there is none. Throws perfspec::Error naming the
  /// file when the PMU exists but its `type` is unreadable or not a number.
  ///
  /// Example: `if (auto* cpu = machine.pmu("cpu")) std::printf("%u\n", cpu->type());`
  const Pmu* pmu(std::string_view name) const;
  /// The PMU that `pmu/terms/` names exactly: the one with this name, else the one whose `alias` file
  /// holds it (perf_pmus__find); nullptr when none.
  const Pmu* find_pmu(std::string_view name) const;
  /// The PMU whose `type` is `type` (the first by name), or nullptr. Throws like pmu() for a PMU whose
  /// type cannot be read.
  ///
  /// Example: `machine.pmu_of_type(4)->name() == "cpu"` on an Intel machine.
  const Pmu* pmu_of_type(std::uint32_t type) const;
  /// Whether `pattern` names `pmu` as a wildcard (pmu_name_matches on its name or its alias name).
  bool pmu_matches(std::string_view pattern, const Pmu& pmu) const;
  /// All PMU names, sorted.
  const std::vector<std::string>& pmu_names() const;
  /// The core PMUs (more than one: a hybrid machine). Found once, then cached.
  const std::vector<const Pmu*>& core_pmus() const;
  /// The tracefs `events` folder in use, empty when there is none. Found on first use, which is the
  /// first time a tracepoint is needed: under a fixture or snapshot root, `kernel/tracing/events`, else
  /// `kernel/debug/tracing/events`. For this machine's sysfs (`/sys`), tracefs wherever it is mounted,
  /// looked for as perf does; when it is mounted nowhere and this process runs as root, it is mounted
  /// at /sys/kernel/tracing (once per process), as perf does.
  const std::string& tracefs_events() const;
  /// Why tracepoints cannot be looked up, for the error about one that was not found.
  struct TracefsProblem {
    enum class Kind {
      none,          ///< tracefs can be read: the tracepoint is not there
      absent,        ///< a fixture or snapshot root without a tracepoints folder
      not_mounted,   ///< the real tracefs is mounted nowhere (and this process is not root)
      mount_failed,  ///< ...and mounting it failed
      denied,        ///< it is there, but this user may not read it
    };
    Kind kind = Kind::none;
    std::string reason;  ///< what is wrong ("tracefs is not mounted"); "" for none and absent
    std::string remedy;  ///< what to do, for a help line
  };
  /// What keeps `sys:name` from being looked up, found when asked (an error path): tracefs missing,
  /// or the first of the events folder, `sys`'s folder and the id file that this user may not read.
  ///
  /// Example: as an unprivileged user where tracefs is unmounted,
  /// `machine.tracefs_problem("sched", "sched_switch").reason == "tracefs is not mounted"`.
  TracefsProblem tracefs_problem(std::string_view sys = {}, std::string_view name = {}) const;
  /// Every `sys:name` in the events folder, from folder listings alone (no id is read): what an unknown
  /// tracepoint is compared with for "did you mean". Sorted.
  std::vector<std::string> tracepoint_names() const;
  /// The named event `name` (case-insensitive) on `pmu`, as perf 6.12 finds it: an event of the
  /// tables' `sys` folders whose Compat matches the PMU's identifier; else its sysfs alias, with the
  /// encoding (and per-pkg, and scale and unit when the entry has them) of a table event of the same
  /// name that belongs to this PMU; else that table event (its JSON fields become terms as perf's
  /// jevents.py makes them: the README's "Named events from vendor tables"); else libpfm4
  /// (core PMUs; its encoding as config words). nullptr when none has it.
  ///
  /// Example: `machine.alias(*machine.pmu("cpu"), "MEM-LOADS")->terms == "event=0xcd,umask=0x1,ldlat=3"`
  const Alias* alias(const Pmu& pmu, std::string_view name) const;
  /// The named event `name` on every PMU that has it (in PMU order), each from its first source: what
  /// a bare name means. One table lookup for all PMUs; a name found is kept (case-insensitively) and
  /// the reference stays valid as long as the Machine. A name found nowhere gives an empty vector and
  /// is not kept, so unknown names do not grow the Machine.
  const std::vector<std::pair<const Pmu*, const Alias*>>& aliases_named(std::string_view name) const;
  /// The event tables for this machine's CPU id, or nullptr when no events_dir or no model matches.
  /// Throws perfspec::Error for a malformed mapfile; a malformed table file is reported by the
  /// tables' diagnostics and named when a name is not found.
  const EventTables* tables() const;
  /// The model tables that apply to `pmu`. The machine's, but on arm64 (where each core PMU may be
  /// another CPU type) perf picks them by the MIDR of the PMU's first CPU, read under the root from
  /// `devices/system/cpu/cpuN/regs/identification/midr_el1`, unless a CPU id was given.
  const EventTables* tables_for(const Pmu& pmu) const;
  /// The uncore events of the tables' `sys` folders (matched to PMUs by identifier), or nullptr.
  const EventTables* sys_tables() const;
  /// Whether table event `e` belongs to `pmu`, by perf's rule: core events on core PMUs, a unit's
  /// events on the PMU of that name or (uncore PMUs) its instances, `sys` events on uncore PMUs whose
  /// identifier matches their Compat. The names of a PMU's table events: its EventSource::names().
  bool table_event_applies(const TableEvent& e, const Pmu& pmu) const;
  /// The architecture's folder of the tables in use (events_dir, or its subfolder for this CPU's
  /// architecture when events_dir holds several); empty without tables.
  const std::string& tables_folder() const;
  /// Why the compiled index of the tables was not kept in the cache folder (another user's, or
  /// writable by others); "" when it was, or without tables. Named events work either way.
  std::string table_cache_problem() const;
  /// The table files that could not be read as tables (a name not found may have been defined there).
  std::vector<TableDiagnostic> table_problems() const;
  /// The CPU id used to pick the tables (the option, else the one a snapshot recorded, else this
  /// machine's: the MIDR under the root on arm64, else what perf reads from /proc).
  const std::string& cpuid() const;
  /// Where cpuid() came from: the option, a snapshot's record, the MIDR under the root (arm64), or
  /// this host's /proc/cpuinfo (which describes a fixture or snapshot root only by chance).
  enum class CpuidOrigin { option, snapshot, midr, this_host };
  CpuidOrigin cpuid_origin() const;
  const MachineOptions& options() const;
  /// Tracepoint id of `sys:name`; nullopt when absent. Ids found are kept; an absent one is looked
  /// for again next time (it may appear when a module loads).
  ///
  /// Example: `machine.tracepoint_id("sched", "sched_switch")` is the id perf puts in config.
  std::optional<std::uint64_t> tracepoint_id(std::string_view sys, std::string_view name) const;
  /// The text of `sys:name`'s tracefs format file (`events/SYS/NAME/format`); nullopt when absent.
  /// Throws perfspec::Error naming it when it is there but cannot be read.
  ///
  /// Example: `machine.tracepoint_format("sched", "sched_switch")->starts_with("name: sched_switch")`.
  std::optional<std::string> tracepoint_format(std::string_view sys, std::string_view name) const;
  /// The files of tracefs that perf's tracing data holds beside the events' format files (what its
  /// reader needs to parse and print them): `header_page` and `header_event` (of `events/`),
  /// `printk_formats` and `saved_cmdlines` (of the tracefs root); nullopt when absent, or for another
  /// name. Throws perfspec::Error naming one that is there but cannot be read (or passes 16 MiB).
  ///
  /// Example: `machine.tracefs_file("header_page")->starts_with("\tfield: u64 timestamp;")`.
  std::optional<std::string> tracefs_file(std::string_view name) const;
  /// `sys:name` pairs matching glob patterns, sorted.
  std::vector<std::pair<std::string, std::string>> tracepoints(std::string_view sys_glob,
                                                               std::string_view name_glob) const;

  /// The CPUs under the root and where each sits (`devices/system/cpu/cpuN/topology/*`,
  /// `devices/system/node/nodeN/cpulist`), sorted by CPU: what `stat --per-socket` and the like group
  /// counts by. Throws perfspec::Error (ErrorKind::machine) naming a file that is there but is not a
  /// number or a CPU list.
  ///
  /// Example: `for (auto& t : machine.cpu_topology()) std::printf("CPU%d: S%d-D%d-C%d\n", t.cpu, t.socket,
  /// t.die, t.core);`
  const std::vector<CpuTopology>& cpu_topology() const;
  /// perf record's sibling lists of the online CPUs (`devices/system/cpu/online`). Read when asked.
  /// Throws perfspec::Error (ErrorKind::machine) for an online list that is no CPU list.
  SiblingLists sibling_lists() const;
  /// The online NUMA nodes (`devices/system/node/online`), in order; a node whose meminfo lacks a
  /// figure has 0 there. Empty without NUMA in sysfs. Read when asked.
  std::vector<NumaNode> numa_nodes() const;

  /// The metric entries of this machine's tables: its model's (on arm64 with what their ArchStdEvent
  /// names), then those of the `sys` folders whose Unit names an uncore PMU of the machine and whose
  /// Compat matches its identifier. Read once (every JSON file of the model); empty without tables.
  const std::vector<TableMetric>& table_metrics() const;

  /// What a PMU's counters are, from the model's `counter.json`, and which of them each of its table
  /// events may use (their `Counter` field), keyed by event select and unit mask (config bits 0-7 and
  /// 8-15, which Intel's PMUs schedule by): for fitting a metric's groups to the counters.
  struct PmuCounters {
    unsigned fixed = 0, generic = 0;
    /// {event, umask} -> the Counter fields of its events, `;`-separated (`Fixed counter 1;0,1,2,3`)
    std::map<std::pair<unsigned, unsigned>, std::string> counter_of;
  };
  /// The counters of the PMU named `pmu` (a core PMU, or an uncore one by its unit), or nullptr when
  /// the tables have no counter.json entry for it. Loaded once, with table_metrics().
  const PmuCounters* pmu_counters(std::string_view pmu) const;

  /// The value of a metric's `#name` literal on this machine (REFERENCE.md section 10), as perf 6.12
  /// computes it, the name compared ignoring case: `num_cpus` (highest present CPU + 1),
  /// `num_cpus_online`, `num_cores`, `num_dies`, `num_packages` (distinct ones among the online CPUs'
  /// topology), `smt_on` (`devices/system/cpu/smt/active`, else whether two CPUs share a core),
  /// `core_wide` (1 when every SMT sibling of the counted CPUs is counted: system-wide, and SMT off or
  /// all CPUs or whole cores asked for), `slots` (the core PMU's `caps/slots`), `has_pmem` (an ACPI NFIT
  /// table), `system_tsc_freq` (Hz: x86's cpuid leaf 0x15, else the `@ N.NNGHz` of the model name, on
  /// this host; under another root, `perfspec-snapshot/system_tsc_freq`). Everything is read under the
  /// root. Throws perfspec::Error: ErrorKind::unknown_name for a name perf does not know,
  /// ErrorKind::machine when this machine does not tell (no `caps/slots`, no TSC frequency).
  ///
  /// Example: `machine.metric_literal("smt_on")` is 1 on a machine with SMT active.
  struct MetricTarget {
    bool system_wide = false;  ///< every process on the CPUs (-a, -C), not a command or a process
    std::vector<int> cpus;     ///< the CPUs asked for (-C); empty: every online CPU
  };
  double metric_literal(std::string_view name, const MetricTarget& target) const;
  double metric_literal(std::string_view name) const { return metric_literal(name, MetricTarget{}); }

  /// Whether the NMI watchdog is on (it holds a core counter, so a metric whose MetricConstraint is
  /// NO_GROUP_EVENTS_NMI is not grouped, as perf decides): this host's /proc/sys/kernel/nmi_watchdog
  /// when the root is this host's /sys, else `perfspec-snapshot/nmi_watchdog` under the root (off
  /// when absent). Read once.
  bool nmi_watchdog() const;

  /// How many values perf's metric runtime parameter `?` takes (arch_get_runtimeparam on powerpc):
  /// the hv_24x7 PMU's `interface/sockets` for AggregationMode `PerChip`, else its
  /// `interface/coresperchip`. nullopt when the machine has no such file or it holds no count from 1
  /// to 4096 (perf then plans the metric once).
  std::optional<unsigned> metric_runtime_parameters(std::string_view aggregation) const;

  /// The sources of named events in lookup order: the tables' `sys` folders, sysfs, the model's tables,
  /// libpfm4 (when built in and not turned off). alias() asks them in this order.
  const std::vector<const EventSource*>& sources() const;

  struct Impl;  // spec/machine_impl.hpp: what a Machine keeps, and how

 private:
  friend struct detail::MachineAccess;
  std::unique_ptr<Impl> impl_;
};

/// Parse a Linux CPU list ("0-3,8,10-11", as sysfs cpumask/cpus files and -C arguments hold):
/// sorted, without duplicates. Throws perfspec::Error (ErrorKind::bad_value) on malformed text.
std::vector<int> parse_cpu_list(std::string_view text);
/// The inverse, as perf's cpu_map__snprint writes a CPU map: sorted CPUs in ranges ("0-7,9"); -1 (any
/// CPU) alone.
///
/// Example: `cpu_list_text({0, 1, 2, 3, 8}) == "0-3,8"`
std::string cpu_list_text(const std::vector<int>& cpus);

/// True when `name` is safe to use as one path component below a sysfs root (no `/`, NUL, `.`, `..`).
///
/// Example: `safe_component("uncore_imc_0")` is true, `safe_component("../etc")` false.
bool safe_component(std::string_view name);

}  // namespace perfspec::spec
