// SPDX-License-Identifier: MIT
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/catalog.hpp"
#include "perfspec/decode.hpp"
#include "perfspec/error.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/stat.hpp"

namespace perfspec {

/// The `"schema"` member of each JSON document perfspec prints, documented field by field in
/// docs/output-formats.md. Within a version, fields are only added; a field removed or given another
/// meaning is a new version.
inline constexpr std::string_view resolve_schema = "perfspec-resolve/1";
inline constexpr std::string_view list_schema = "perfspec-list/1";
inline constexpr std::string_view decode_schema = "perfspec-decode/1";
inline constexpr std::string_view error_schema = "perfspec-error/1";

/// One block per event in the style of `perf stat -vv`: field name, value, zero fields omitted.
///
/// Example: `std::cout << perfspec::to_text(perfspec::resolve("cycles:u", machine));`
std::string to_text(const EventSet& set);

/// `{"schema":"perfspec-resolve/1","events":[{"name":..., "pmu":..., "group":G, "leader":L, "scale":...,
/// "unit":..., "attr":{...}}]}`; `attr` lists every field of the attr table (union members under each
/// of their names).
///
/// Example: `auto json = perfspec::to_json(set, 2);  // pretty, two-space indent`
std::string to_json(const EventSet& set, int indent = -1);

/// What a `stat` run counted, besides the counts themselves.
// Every member has an initializer, so that `StatRun{.target = ..., .elapsed_seconds = ...}` names only
// what it sets, without -Wmissing-field-initializers.
/// How a locale writes a number's digits (its LC_NUMERIC: std::numpunct): what perf's `%'` printf
/// flag follows.
struct DigitStyle {
  std::string separator{};  ///< between groups ("," in en_US, "." in de_DE; "" in C: no grouping)
  std::string grouping{};   ///< group sizes from the right, as std::numpunct::grouping ("\3")
  std::string point = ".";  ///< the decimal point
};

/// `plain`, a number as `{:.2f}` or `{:.0f}` writes it ("-1234567.50"), with its integer digits grouped
/// and its decimal point as `style` says ("-1,234,567.50" in en_US, "-1.234.567,50" in de_DE).
///
/// Example: `grouped_digits("1234567", {",", "\3"}) == "1,234,567"`
std::string grouped_digits(std::string_view plain, const DigitStyle& style);

struct StatRun {
  std::string target{};  ///< shown in the header: "'ls -l'", "process 1234", "all CPUs"
  double elapsed_seconds = 0;
  std::optional<double> user_seconds{};  ///< of a counted command
  std::optional<double> system_seconds{};
  std::optional<double> interval_end{};  ///< interval mode: seconds since the start
  /// Interval mode: the period asked for (perf's wall time per interval).
  std::optional<double> interval_seconds{};
  std::optional<int> exit_status{};  ///< of a counted command
  /// Repeated runs (`-r`): `elapsed_seconds` is their mean and this the standard deviation of it.
  double elapsed_stddev = 0;
  /// Repeated runs with perf's --table: each run's time, printed before the mean.
  std::vector<double> run_seconds{};
  /// `--null`: nothing was counted, only the time.
  bool null_run = false;
  /// Interval mode: print perf's column header above this interval (the first, then every 26th).
  bool print_interval_header = false;
  /// Per event: the cgroup it counts in (`-G`), shown in a column of its own; empty: no column.
  std::vector<std::string> cgroups{};
  /// `--metric-only`: perf's layouts show only the derived figures and metrics, one column each, one
  /// line per aggregate (stat_text, stat_perf_csv, stat_perf_json).
  bool metric_only = false;
  /// stat_text colours figures as perf does on a terminal: a metric red when its MetricThreshold
  /// holds and green when it does not, the miss ratios red, magenta or yellow by how high they are.
  bool color = false;
  /// perf stat --summary: the whole run's counts after its intervals (`interval_end` unset), without
  /// the header; in perf's -x layout each count's line begins with a field "summary" unless
  /// `no_csv_summary`.
  bool summary = false;
  bool no_csv_summary = false;
  /// The locale's digits, which perf's text layout writes its figures with: the decimal point of
  /// every figure, and with -B (its default) the thousands' groups of the counts (`printf("%'18.0f")`);
  /// nullopt: the C locale's. The -x and -j layouts are not affected.
  std::optional<DigitStyle> digits{};
};

/// perf's description of a group as it was, on the first member ungroup_by_cpus took out of it:
/// "anon group { task-clock, uncore_imc_0/clockticks/ }" (a named group's name for "anon group");
/// empty for the other members.
std::string ungrouped_group_text(const runtime::Ungrouped& taken);
/// The warning perf stat prints for the members ungroup_by_cpus took out: for each group, "WARNING:
/// grouped events cpus do not match.", the line that says what is done, and the group; with `verbose`
/// each member's CPUs and its leader's too (as perf prints a CPU map: "0-55", "-1"). Each line ends in
/// a newline; empty when none was taken out.
std::string ungroup_warning(const std::vector<runtime::Ungrouped>& taken, bool verbose = false);

/// perf stat's words for what is counted, as its header shows them (StatRun::target): "'ls -l'",
/// "process id '42'", "thread id '7,8'", "'system wide'", "'CPU(s) 0-3'" (the CPUs or threads as
/// written, when `as_written` holds them).
std::string stat_target_words(const StatTarget& target);

/// The displayed value of a count: alias scale applied, software clocks in msec.
struct DisplayValue {
  double value = 0;
  std::string unit;
  bool integral = true;
};
///
/// Example: for `power/energy-pkg/` with 4294967296 raw, `{1.0, "Joules", false}`.
DisplayValue display_value(const ResolvedEvent& event, const runtime::Count& count);

/// A note on a count in words, as the printers show it.
///
/// Example: a note of kind `read_failed` with error EBADF and cpu 1 is `read failed on CPU 1: EBADF`;
/// one of kind `user_only` is `counted user space only (':u'): kernel counting was refused with EACCES`.
std::string describe(const runtime::Note& note);
/// Why a counter was not read in user space, in words (a user_read_fallback note's reason).
///
/// Example: Obstacle::perf_user_access_off is `user-space counter access is off
/// (/proc/sys/kernel/perf_user_access is 0; 1 turns it on)`.
std::string describe(runtime::Note::Obstacle obstacle);
/// All of a count's notes, in order, joined by "; " (empty when there are none): `stat_text`'s
/// `note:` line and `stat_json`'s "note".
std::string describe(const std::vector<runtime::Note>& notes);

/// `perf stat`'s table (perf 6.12's layout, column for column): the header naming the target (and
/// the runs), one line per event and aggregate with the count, its unit, the event, perf's derived
/// figure after `#` (CPUs utilized, GHz, insn per cycle, of all branches, a rate per second, ...),
/// the variation over runs and the percentage of time running when multiplexed; then the time
/// elapsed (and the command's user and system time), and after it stat_problems(). In interval mode
/// (`run.interval_end`) each line starts with the time, and there is no header but perf's column
/// header when `run.print_interval_header`.
///
/// Example:
/// ```
/// perfspec::StatRun run{.target = "'ls'", .elapsed_seconds = 0.5};
/// std::fputs(perfspec::stat_text(counters.events(), counters.read(), run).c_str(), stderr);
/// ```
std::string stat_text(const EventSet& set, const StatReport& report, const StatRun& run);
std::string stat_text(const EventSet& set, const std::vector<runtime::Count>& counts, const StatRun& run);
/// Why events were not counted, and the notes on counts: one paragraph per distinct reason, naming
/// every event it concerns (not one hint per event): `cycles, instructions:\n    ENOENT: ...`.
/// `cgroups`, per event, the cgroup it counts in (StatRun::cgroups): an event of a cgroup runs only
/// while the cgroup's tasks do, which its not counted says.
std::string stat_problems(const EventSet& set, const StatReport& report,
                          const std::vector<std::string>& cgroups = {});
/// perfspec's CSV, schema `perfspec-stat-csv/1` (docs/output-formats.md): a header line, then one line
/// per event and aggregate: time,aggregate,members,value,unit,event,time_enabled,time_running,
/// running_percent,noise_percent,state,errno,metric_value,metric_unit (RFC 4180 quoting).
///
/// Example line: `,,1,84,,"a,b",200,100,50.00,,counted,,,`
std::string stat_csv(const EventSet& set, const StatReport& report, const StatRun& run, bool header = true);
std::string stat_csv(const EventSet& set, const std::vector<runtime::Count>& counts, const StatRun& run);
/// `perf stat -x SEP`: perf 6.12's CSV, one line per event and aggregate, fields joined by
/// `separator` (any string, unquoted, as perf does): the aggregate's fields (`CPU0`; `S0,2`), value,
/// unit, event, the variation over runs, time running (ns), percentage running, and perf's derived
/// figure and its unit (empty when perf prints none). The value is `<not counted>` or
/// `<not supported>` when there is none. Interval mode prefixes the interval end in seconds with
/// nine decimals. No header and no footer, as with perf.
///
/// Example lines: `0.81,msec,task-clock,808714,100.00,0.312,CPUs utilized`,
/// `<not supported>,,cycles,0,100.00,,`
std::string stat_perf_csv(const EventSet& set, const StatReport& report, const StatRun& run,
                          std::string_view separator);
std::string stat_perf_csv(const EventSet& set, const std::vector<runtime::Count>& counts, const StatRun& run,
                          std::string_view separator);
/// `perf stat -j`: perf 6.12's JSON lines, one object per event and aggregate.
///
/// Example: `{"counter-value" : "2.392058", "unit" : "msec", "event" : "task-clock", "event-runtime" :
/// 2392058, "pcnt-running" : 100.00, "metric-value" : "0.909102", "metric-unit" : "CPUs utilized"}`
std::string stat_perf_json(const EventSet& set, const StatReport& report, const StatRun& run);
/// perfspec's JSON, schema `perfspec-stat/1`: one object (one line) per run or interval.
///
/// Example: `{"schema":"perfspec-stat/1","target":"'true'","elapsed_seconds":0.002,"counts":[...]}`
std::string stat_json(const EventSet& set, const StatReport& report, const StatRun& run);
std::string stat_json(const EventSet& set, const std::vector<runtime::Count>& counts, const StatRun& run);

/// `perfspec list` for a terminal `width` columns wide: PMUs (when given), then events grouped by
/// source and PMU, each with its encoding, unit, and its description wrapped below it (unless not
/// `descriptions`: perf list's --no-desc).
///
/// Example: `list_text({}, spec::list_events(machine, {.pattern = "l1d"}), 100)`
std::string list_text(const std::vector<spec::ListedPmu>& pmus, const std::vector<spec::ListedEvent>& events,
                      std::size_t width = 100, bool descriptions = true);
/// `{"schema":"perfspec-list/1","pmus":[...],"events":[{"name","pmu","encoding","description","topic",
/// "unit","scale","source","deprecated"}]}` and a newline.
///
/// Example: `list_json(spec::list_pmus(machine, {}), spec::list_events(machine, {}))`
std::string list_json(const std::vector<spec::ListedPmu>& pmus, const std::vector<spec::ListedEvent>& events);
/// `perf list -j`'s document, byte for byte as perf 6.12 writes it (a tab before each key, the keys
/// perf gives in its order, every value a string), but for control characters other than newline and
/// carriage return, which perf writes raw and this escapes (`\u0009`) so that the document is JSON.
///
/// Example: `perf_list_json(spec::perf_list(machine, spec::perf_list_all, opens))`
std::string perf_list_json(const std::vector<spec::PerfListEntry>& entries);

/// `perfspec decode --format json`: `{"schema":"perfspec-decode/1","events":[{"event","how","leftovers",
/// "notes"}]}` and a newline, one entry per decoded attr in order.
///
/// Example: `decode_json({decode(attr, machine)})`
std::string decode_json(const std::vector<Decoded>& decoded);

/// An error as one line of JSON (and a newline), as `perfspec ... --format json` prints it on stderr:
/// `{"schema":"perfspec-error/1","kind":"unknown_name","message":...,"input":...,"span":[B,E],"help":...}`.
/// `kind` is the ErrorKind's name as written in the enum (`unknown_name`); `input` is the text the
/// error is about (null without one) and `span` the error's byte range in it (null when the error has
/// no position or there is no input); `help` is null when the error has none.
///
/// Example: `catch (const Error& e) { std::fputs(error_json(e, text).c_str(), stderr); }`
std::string error_json(const Error& error, std::optional<std::string_view> input = std::nullopt);

}  // namespace perfspec
