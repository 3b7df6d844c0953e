// SPDX-License-Identifier: MIT
// `perfspec stat`'s options, as perf stat's.
#include "tools/commands.hpp"

namespace perfspec::tools::cli {

namespace {

// perf stat's options of when and how often it counts, and around each run and its output
void add_run_flags(CLI::App& app, perfspec::tools::StatOptions& st) {
  app.add_option("-D,--delay", st.delay_ms,
                 "start counting MSEC after the command starts; -1: start disabled (see --control)")
      ->type_name("MSEC");
  app.add_option("--control", st.control,
                 "commands enable, disable, ping, stop arrive on fifo:CTL[,ACK] or fd:CTL[,ACK]")
      ->type_name("fifo:CTL[,ACK]|fd:CTL[,ACK]");
  app.add_option("--interval-count", st.interval_count, "with -I: stop after N intervals")->type_name("N");
  app.add_option("--timeout", st.timeout_ms,
                 "stop after MSEC milliseconds (at least 10), the command too, and print the counts")
      ->type_name("MSEC");
  app.add_flag("-S,--sync", st.sync, "sync(2) before each run");
  app.add_option("--pre", st.pre, "a shell command before each run (its failure ends stat with its status)")
      ->type_name("COMMAND");
  app.add_option("--post", st.post, "a shell command after each run (its failure ends stat with its status)")
      ->type_name("COMMAND");
  app.add_flag("--append", st.append, "add to the -o file instead of replacing it");
  app.add_flag("--quiet", st.quiet, "print no counts (the exit status says how the command ended)");
  app.add_flag("--table", st.table, "with -r: each run's time, then the mean");
  app.add_flag("--interval-clear", st.interval_clear, "with -I: clear the terminal before each interval");
  app.add_flag("--summary", st.summary, "with -I: the whole run's counts after the intervals");
  app.add_flag("--no-csv-summary", st.no_csv_summary,
               "with --summary and -x: the summary's lines without their first field, 'summary'");
}

// perf stat's aggregations (-A, --per-core, ...), each flag with the aggregation it asks for
std::vector<std::pair<CLI::Option*, perfspec::Aggregation>> add_aggregation_flags(
    CLI::App& app, perfspec::tools::StatOptions& st) {
  auto* per_cpu = app.add_flag("-A,--no-aggr,--no-merge")
                      ->description("one line per CPU (with -a or -C); --no-merge: the same, as perf 6.12");
  auto* per_core =
      app.add_flag("--per-core")->description("one line per core: sum of its CPUs (with -a or -C)");
  auto* per_die = app.add_flag("--per-die")->description("one line per die (with -a or -C)");
  auto* per_socket = app.add_flag("--per-socket")->description("one line per socket (with -a or -C)");
  auto* per_node = app.add_flag("--per-node")->description("one line per NUMA node (with -a or -C)");
  auto* per_thread = app.add_flag("--per-thread")->description("one line per thread (with -p, -t or -a)");
  auto* per_cache = app.add_option("--per-cache", st.cache_level)
                        ->expected(0, 1)
                        ->type_name("=LEVEL")
                        ->description(
                            "one line per instance of a cache level (with -a or -C): --per-cache=L2; "
                            "without LEVEL, each CPU's highest");
  auto* per_cluster =
      app.add_flag("--per-cluster")->description("one line per cluster of CPUs (with -a or -C)");
  return {{per_cpu, perfspec::Aggregation::cpu},     {per_core, perfspec::Aggregation::core},
          {per_die, perfspec::Aggregation::die},     {per_socket, perfspec::Aggregation::socket},
          {per_node, perfspec::Aggregation::node},   {per_thread, perfspec::Aggregation::thread},
          {per_cache, perfspec::Aggregation::cache}, {per_cluster, perfspec::Aggregation::cluster}};
}

}  // namespace

void StatCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  event_opt = app->add_option(
      "-e,--event", st.events,
      "event list (repeatable); default: " + std::string(perfspec::tools::default_stat_events));
  filter_opt = app->add_option(
      "--filter", filters, "a filter for the tracepoints of the -e before it (PERF_EVENT_IOC_SET_FILTER)");
  app->add_option("-M,--metrics", st.metrics,
                  "metrics to compute (repeatable): names or groups of the tables, comma-separated, or "
                  "one 'NAME = EXPR' of perf's metric language")
      ->type_name("METRICS");
  add_metric_flags(*app, st.metric_no_group, st.metric_no_merge, st.metric_no_threshold);
  pid_opt = app->add_option("-p,--pid", pid, "count an existing process (all its threads)");
  app->add_option("-t,--tid", st.tids, "count existing threads (a comma-separated list of thread ids)")
      ->type_name("TID[,TID...]");
  app->add_flag("-a,--all-cpus", st.all_cpus, "count every process on every CPU");
  app->add_option("-C,--cpu", st.cpus, "count every process on these CPUs (e.g. 0-3,8)");
  app->add_option("-I,--interval", st.interval_ms, "print counts every N milliseconds")
      ->check(CLI::Range(10u, 3600000u));
  format_opt =
      app->add_option("--format", st.format, "output format")->check(CLI::IsMember({"text", "csv", "json"}));
  separator_opt =
      app->add_option("-x,--field-separator", separator,
                      "print counts in perf stat's CSV form, fields separated by SEP (as perf stat -x)")
          ->type_name("SEP");
  app->add_option("--sysfs", st.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  add_table_options(app, machine);
  app->add_option("-o,--output", st.output, "write the counts to FILE instead of stderr");
  app->add_flag("--no-inherit", no_inherit, "do not count the command's children");
  app->add_option("-r,--repeat", st.repeat, "run the command N times: mean counts and their variation")
      ->type_name("N");
  aggregation_flags = add_aggregation_flags(*app, st);
  big_num_opt = app->add_flag("-B,--big-num,!--no-big-num", big_num,
                              "counts in perf's text layout with the locale's thousands' separators and "
                              "decimal point (LC_NUMERIC; the default, as perf's), or not");
  app->add_option("-G,--cgroup", st.cgroups,
                  "count only in these cgroups: the n-th name for the n-th event, one name for all (with -a)")
      ->type_name("NAME[,NAME...]");
  app->add_option("--for-each-cgroup", st.for_each_cgroup, "count every event in each of these cgroups")
      ->type_name("NAME[,NAME...]");
  app->add_flag("--all-user", st.all_user, "count user space only (every event as with :u)");
  app->add_flag("--all-kernel", st.all_kernel, "count the kernel only (every event as with :k)");
  app->add_flag("-n,--null", st.null_run, "count nothing: only the time elapsed");
  app->add_flag("-d,--detailed", st.detailed,
                "add perf's detailed events: L1 data cache and last-level cache loads and misses; -dd: "
                "instruction cache and TLBs too; -ddd: L1 data cache prefetches too");
  app->add_flag("-j,--json-output", st.perf_json, "print counts as perf stat -j does (JSON lines)");
  app->add_flag("--topdown", st.topdown,
                "Top-down analysis: the tables' TopdownL1 metrics (or --td-level's), as --metric-only");
  cputype_opt =
      app->add_option("--cputype", st.cputype,
                      "the PMU that events found on several PMUs are counted on (a hybrid machine's "
                      "core or atom: cpu_core, cpu_atom); before -e and -M, as perf")
          ->type_name("TYPE");
  app->add_flag("-T,--transaction", st.transaction,
                "the tables' transaction metrics (hardware transactional memory), as -M transaction; "
                "no default events, no --topdown beside them (as perf)");
  app->add_option("--td-level", st.td_level, "with --topdown: the Top-down level (1, 2, ...)")
      ->type_name("N")
      ->check(CLI::Range(0u, 9u));
  metric_only_opt =
      app->add_flag("--metric-only", st.metric_only,
                    "print only the derived figures and metrics, one column each, one line per aggregate "
                    "(perf's layout, in the table, -x and -j)");
  app->add_option("--color", st.color,
                  "colour figures as perf does on a terminal (a metric over its threshold red, under it "
                  "green): auto (when the output is a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
  add_run_flags(*app, st);
  app->add_flag("-v,--verbose", st.verbose,
                "also print each count's raw value, time enabled and running; -vv: the attrs too");
  app->footer(
      "COMMAND [ARGS...] follows the options, with or without `--`: options end at the first word that "
      "is not one, as with perf stat, so `perfspec stat -e task-clock ls -l /` counts `ls -l /`.");
}

int StatCommand::run(const perfspec::spec::MachineOptions& machine) {
  // Usage errors are thrown, so that the one printer shows them (as JSON under --format json).
  using perfspec::Error, perfspec::ErrorKind;
  if (*separator_opt && *format_opt)
    // Two different outputs were asked for; CLI11's excludes() would only say that the options
    // exclude each other.
    throw Error(ErrorKind::usage,
                "-x prints perf's CSV and --format picks perfspec's own output: give one of them");
  // perf: --cputype applies to the -e and -M after it only, and it refuses it after one
  if (*cputype_opt)
    for (const CLI::Option* o : app->parse_order()) {
      if (o == cputype_opt) break;
      if (o == event_opt || o->check_lname("metrics"))
        throw Error(ErrorKind::usage, "--cputype goes before the events and metrics (-e, -M) it applies to");
    }
  // perf: --topdown prints metrics only, unless --metric-only was given either way.
  if (st.topdown && !st.transaction && !*metric_only_opt) st.metric_only = true;  // (-T: no --topdown)
  st.filters = filters_by_list(*app, event_opt, filter_opt, filters);
  if (st.td_level != 0 && !st.topdown) throw Error(ErrorKind::usage, "--td-level goes with --topdown");
  int modes = 0;
  for (auto& [flag, mode] : aggregation_flags)
    if (*flag) st.aggregation = mode, ++modes;
  if (modes > 1)
    throw Error(ErrorKind::usage,
                "-A, --per-core, --per-die, --per-socket, --per-node, --per-thread, --per-cache and "
                "--per-cluster exclude each other: "
                "give one");
  // perf: -B given (its last word, not --no-big-num) with -x is refused, as a count in CSV is not grouped
  if (*big_num_opt && big_num && *separator_opt)
    throw Error(ErrorKind::usage, "-B option not supported with -x");
  if ((*separator_opt || *format_opt) && st.perf_json)
    throw Error(ErrorKind::usage, "-j prints perf's JSON; -x and --format pick other outputs: give one");
  if (*pid_opt) st.pid = pid;
  st.big_num = big_num;
  // perf: nothing to count named (no command, process, threads or CPUs) is the whole system
  if (st.command.empty() && !st.pid && st.tids.empty() && st.cpus.empty()) st.all_cpus = true;
  if (*separator_opt) st.field_separator = separator;
  st.inherit = !no_inherit;
  st.machine = machine;
  return perfspec::tools::run_stat(st);
}

}  // namespace perfspec::tools::cli
