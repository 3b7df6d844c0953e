// SPDX-License-Identifier: MIT
// The options of script, report, decode, record, exporter, trace and top.
#include "tools/commands.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "perfspec/sampling.hpp"
#include "tools/control.hpp"
#include "tools/registers.hpp"

namespace perfspec::tools::cli {

namespace {

// -F of record and top: a number of samples a second, or max (the kernel's limit, read when sampling).
void parse_frequency(const std::string& text, std::optional<std::uint64_t>& hz, bool& max) {
  if (text == "max") {
    max = true;
    return;
  }
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n == 0)
    throw perfspec::Error(perfspec::ErrorKind::usage,
                          fmt::format("-F {}: a number of samples a second, or max", text));
  hz = n;
}

}  // namespace

namespace {

// perf script's choice of the samples and their callchains
void add_script_filters(CLI::App* app, perfspec::tools::ScriptOptions& so) {
  app->add_option("--pid", so.pids, "only the samples of these processes (comma-separated)")
      ->type_name("PIDS");
  app->add_option("--tid", so.tids, "only the samples of these threads (comma-separated)")->type_name("TIDS");
  app->add_option("-C,--cpu", so.cpus, "only the records on these CPUs (0-3,7)")->type_name("CPUS");
  app->add_option("--comm", so.comms, "text: only the samples of threads of these names")
      ->delimiter(',')
      ->type_name("COMMS");
  app->add_option("-S,--symbols", so.symbols,
                  "text: only the samples in these functions, or at these addresses (hexadecimal)")
      ->delimiter(',')
      ->type_name("SYMBOLS");
  app->add_option("--addr-range", so.addr_range, "text: with -S, an address's samples up to N bytes after it")
      ->type_name("N");
  app->add_flag("--reltime", so.reltime, "text: times since the first record printed");
  app->add_option("--max-stack", so.max_stack, "text: at most this many frames of a callchain")
      ->capture_default_str();
  app->add_flag("-G,--hide-call-graph", so.hide_call_graph, "text: no callchains");
  app->add_flag("-D,--dump-raw-trace", so.dump_raw,
                "text: every record as perf script -D dumps it (where it is, its bytes, its fields), each "
                "sample followed by its line");
  app->add_flag("--dump-unsorted-raw-trace", so.dump_unsorted, "text: -D, the records in file order");
  app->add_flag("--per-event-dump", so.per_event_dump,
                "text: each event's samples into a file of its own, INPUT.EVENT.dump (the other "
                "records to standard output)");
  app->add_flag("-v,--verbose", so.verbose,
                "say on standard error the build ids the file records, and the binaries whose symbols "
                "could not be read");
}

}  // namespace

void ScriptCommand::add(CLI::App* sub) {
  app = sub;
  app->add_flag("-f,--force", force, "accepted: perfspec reads a file whoever owns it (perf's -f)");
  app->add_option("-i,--input", so.input, "the file to read ('-': a pipe-mode stream on stdin)")
      ->capture_default_str();
  app->add_option("--format", so.format, "output format: text (as perf script) or json (one line per record)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app->add_option(
         "-F,--fields", so.fields,
         "text, as perf script -F (repeatable): [TYPE:][+-]FIELD,... (TYPE: hw, sw, trace, raw, "
         "break, synth); fields: comm,tid,pid,time,cpu,misc,event,trace,ip,sym,symoff,dso,addr,period,"
         "iregs,uregs,data_src,weight,ins_lat,retire_lat,phys_addr,data_page_size,code_page_size,cgroup,"
         "brstack,metric")
      ->type_name("FIELDS");
  app->add_flag("--samples", so.samples_only, "text: samples only, as perf script prints by default");
  app->add_flag("--summary", so.summary, "count the records by type, and report what was lost");
  app->add_flag("--ns", so.ns, "times in nanoseconds");
  app->add_flag("--header", so.header, "text: the file's header (where and how it was recorded) first");
  app->add_flag("--header-only", so.header_only, "the file's header only");
  app->add_flag("-I,--show-info", so.show_info,
                "the header with the CPU and NUMA topology, caches and memory");
  app->add_option("--symfs", so.symfs,
                  "look for the binaries under this folder (a file recorded in a chroot)")
      ->type_name("DIR");
  app->add_option("--kallsyms", so.kallsyms, "the kernel's symbols (default: /proc/kallsyms)")
      ->type_name("FILE");
  app->add_option("--debuginfod", so.debuginfod,
                  "ask debuginfod servers for the debug files of binaries without symbols here (no URLS: "
                  "those DEBUGINFOD_URLS names)")
      ->expected(0, 1)
      ->default_str("system")
      ->type_name("URLS");
  app->add_flag("--inline,!--no-inline", so.inline_frames,
                "text: the functions inlined at the user frames unwound from DWARF (default: shown)");
  app->add_option("--time", so.time,
                  "only the samples of these times: START,STOP in seconds (several apart by "
                  "spaces), or percents of the recording (10%/2, 0%-10%,30%-40%, 25%)")
      ->type_name("RANGES");
  add_script_filters(app, so);
  // perf's record types by the option that shows them: COMM, FORK, EXIT; MMAP, MMAP2; SWITCH,
  // SWITCH_CPU_WIDE; NAMESPACES; LOST; KSYMBOL, BPF_EVENT; CGROUP; TEXT_POKE
  const std::pair<const char*, std::uint64_t> show_options[] = {
      {"--show-task-events", (1u << 3) | (1u << 7) | (1u << 4)},
      {"--show-mmap-events", (1u << 1) | (1u << 10)},
      {"--show-switch-events", (1u << 14) | (1u << 15)},
      {"--show-namespace-events", 1u << 16},
      {"--show-lost-events", 1u << 2},
      {"--show-bpf-events", (1u << 17) | (1u << 18)},
      {"--show-cgroup-events", 1u << 19},
      {"--show-text-poke-events", 1u << 20}};
  shows.reserve(std::size(show_options));
  for (auto [name, types] : show_options) {
    shows.emplace_back(false, types);
    app->add_flag(name, shows.back().first, "text: the samples and these records, as perf script shows them");
  }
  app->footer(
      "Text lists every record: samples as perf script prints them, the others as perf script prints "
      "them with --show-task-events, --show-mmap-events, --show-lost-events and the like (any of those "
      "options: the samples and those records only, as perf).");
}

int ScriptCommand::run() {
  for (auto [on, types] : shows)
    if (on) {
      so.samples_only = true;
      so.also_shown |= types;
    }
  return perfspec::tools::run_script(so);
}

namespace {

// perf report's options beyond the table's keys and graphs
void add_report_views(CLI::App* app, perfspec::tools::ReportCliOptions& ro) {
  app->add_flag("-T,--threads", ro.threads,
                "text: after the report, each thread's counts from the READ records (perf record -s)");
  app->add_flag("--show-cpu-utilization", ro.cpu_utilization,
                "text: sys and usr columns, the shares sampled in the kernel and in user space");
  app->add_flag("--hierarchy", ro.hierarchy,
                "text: the sort keys as levels of a tree (no Children column; graphs under the last level)");
  app->add_flag("--group", ro.group,
                "text: accepted for recordings without groups (with: not supported yet)");
  app->add_flag("--show-ref-call-graph", ro.ref_call_graph,
                "accepted where every event or none has callchains (else: not supported yet)");
  for (auto [name, flag, what] : {std::tuple{"--total-cycles", &ro.total_cycles, "--total-cycles"},
                                  std::tuple{"--stitch-lbr", &ro.stitch_lbr, "--stitch-lbr (perf's warning)"},
                                  std::tuple{"-b,--branch-stack", &ro.branch_stack, "-b (perf's error)"}})
    app->add_flag(name, *flag,
                  fmt::format("{} for recordings without branch stacks (with: not supported yet)", what));
  app->add_flag("--mem-mode", ro.mem_mode,
                "perf's error for recordings without memory accesses (with: not supported yet)");
}

}  // namespace

void ReportCommand::add(CLI::App* sub) {
  app = sub;
  app->add_flag("-f,--force", force, "accepted: perfspec reads a file whoever owns it (perf's -f)");
  app->add_option("-i,--input", ro.input, "the file to read ('-': a pipe-mode stream on stdin)")
      ->capture_default_str();
  app->add_option("--format", ro.format,
                  "text (perf report --stdio), folded (one 'comm;caller;...;callee COUNT' line per stack), "
                  "pprof (gzipped profile.proto, for go tool pprof)")
      ->check(CLI::IsMember({"text", "folded", "pprof"}))
      ->capture_default_str();
  app->add_option("-o,--output", ro.output, "pprof: write the profile to this file")->type_name("FILE");
  app->add_flag("--stdio", ro.stdio, "perf report's text interface (the only one)");
  app->add_option("-s,--sort", ro.sort, "text: the rows' keys: comm, pid, dso, sym, cpu")
      ->capture_default_str();
  auto* with =
      app->add_flag("--children", children, "text: Children and Self columns (the default with callchains)");
  app->add_flag("--no-children", no_children, "text: one Overhead column, the samples' own functions")
      ->excludes(with);
  app->add_flag("--no-call-graph", no_call_graph, "text: no callchain graphs (-g none)");
  app->add_flag("-G,--inverted", inverted, "text: graphs from the outermost caller (-g caller)");
  app->add_option(
      "--samples", samples_kept,
      "accepted: perf keeps N samples per entry for its interactive browser, which perfspec has not");
  app->add_option(
         "-g,--call-graph", ro.call_graph,
         "text: graph|folded|none, a threshold in percent (0.5), caller|callee (e.g. graph,0.5,caller); "
         "alone: the callchains as graphs (the default where the samples have them)")
      ->expected(0, 1)
      ->default_str("graph")
      ->type_name("SETTINGS");
  app->add_option("--time", ro.time,
                  "only the samples of these times: START,STOP in seconds (several apart by spaces), or "
                  "percents of the recording (10%/2, 0%-10%,30%-40%, 25%)")
      ->type_name("RANGES");

  app->add_option("--pid", ro.pids, "only the rows of these processes' samples (comma-separated)");
  app->add_option("--tid", ro.tids, "only the rows of these threads' samples (comma-separated)");
  app->add_option("--percent-limit", ro.percent_limit,
                  "text: leave out rows (and branches) under this percent")
      ->type_name("PERCENT");
  app->add_flag("-n,--show-nr-samples", ro.samples, "text: a Samples column");
  app->add_flag("-q,--quiet", ro.quiet, "text: the rows only");
  app->add_flag("-D,--dump-raw-trace", ro.dump_raw,
                "every record as perf report -D dumps it (where it is, its bytes, its fields), then the "
                "records counted by type");
  app->add_flag("--disable-order", ro.disable_order, "-D: the records in file order, not by time");
  app->add_flag("--header", ro.header, "text: the file's header (where and how it was recorded) first");
  app->add_flag("--header-only", ro.header_only, "the file's header only");
  app->add_flag("-I,--show-info", ro.show_info,
                "the header with the CPU and NUMA topology, caches and memory");
  app->add_option("--max-stack", ro.max_stack, "at most this many frames of a callchain")
      ->capture_default_str();
  app->add_flag("--inline,!--no-inline", ro.inline_frames,
                "the functions inlined at the user frames unwound from DWARF (default: shown)");
  app->add_flag("--no-comm", ro.no_comm, "folded: stacks without the thread's name");
  app->add_flag("--include-pid", ro.include_pid, "folded: the thread's name with its pid");
  app->add_flag("--include-tid", ro.include_tid, "folded: the thread's name with its tid");
  app->add_flag("--kernel", ro.kernel, "folded: kernel functions marked _[k]");
  app->add_option("--symfs", ro.symfs,
                  "look for the binaries under this folder (a file recorded in a chroot)")
      ->type_name("DIR");
  app->add_option("--kallsyms", ro.kallsyms, "the kernel's symbols (default: /proc/kallsyms)")
      ->type_name("FILE");
  app->add_option("--debuginfod", ro.debuginfod,
                  "ask debuginfod servers for the debug files of binaries without symbols here (no URLS: "
                  "those DEBUGINFOD_URLS names)")
      ->expected(0, 1)
      ->default_str("system")
      ->type_name("URLS");
  add_report_views(app, ro);
}

int ReportCommand::run() {
  if (no_call_graph) ro.call_graph = "none";
  ro.inverted = inverted;
  if (children) ro.children = true;
  if (no_children) ro.children = false;
  return perfspec::tools::run_report(ro);
}

void DecodeCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("--type", type, "attr.type");
  app->add_option("--config", config, "attr.config");
  app->add_option("--config1", config1, "attr.config1");
  app->add_option("--config2", config2, "attr.config2");
  app->add_option("--config3", config3, "attr.config3");
  app->add_option("--attr", attrs, "any attr field as NAME=VALUE (repeatable), e.g. exclude_kernel=1");
  app->add_option("--format", dopt.format, "output format")->check(CLI::IsMember({"text", "json"}));
  app->add_option("--sysfs", dopt.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  app->footer(
      "Without attr options, reads 'perfspec resolve --format json' output or 'perf stat -vv' text on "
      "stdin.");
  add_table_options(app, machine);
}

int DecodeCommand::run(const perfspec::spec::MachineOptions& machine) {
  dopt.machine = machine;
  for (auto [name, value] : {std::pair{"type", &type},
                             {"config", &config},
                             {"config1", &config1},
                             {"config2", &config2},
                             {"config3", &config3}})
    if (!value->empty()) dopt.fields.emplace_back(name, *value);
  for (const auto& a : attrs) {
    auto eq = a.find('=');
    if (eq == std::string::npos)
      throw perfspec::Error(perfspec::ErrorKind::usage, fmt::format("--attr wants NAME=VALUE, got '{}'", a));
    dopt.fields.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }
  return perfspec::tools::run_decode(dopt);
}

std::vector<std::pair<std::size_t, std::string>> filters_by_list(const CLI::App& app,
                                                                 const CLI::Option* event_opt,
                                                                 const CLI::Option* filter_opt,
                                                                 const std::vector<std::string>& filters) {
  std::vector<std::pair<std::size_t, std::string>> out;
  std::size_t lists = 0, next = 0;
  for (const CLI::Option* opt : app.parse_order()) {
    if (opt == event_opt) ++lists;
    if (opt != filter_opt) continue;
    const std::string& text = filters.at(next++);
    if (lists == 0)
      throw perfspec::Error(
          perfspec::ErrorKind::usage,
          fmt::format("--filter '{}': a filter follows the -e of the tracepoints it is for", text));
    out.emplace_back(lists - 1, text);
  }
  return out;
}

namespace {

// perf record's options of what each sample holds beyond -g and -d
void add_record_samples(CLI::App* app, perfspec::tools::RecordOptions& ro, bool& branch_any,
                        std::string& branch_filter) {
  auto* any = app->add_flag("-b,--branch-any", branch_any, "each sample's branch stack (any branch)");
  app->add_option(
         "-j,--branch-filter", branch_filter,
         "each sample's branch stack, of these branches: u,k,hv,any,any_call,any_ret,ind_call,ind_jmp,"
         "call,cond,... (perf's names)")
      ->excludes(any)
      ->type_name("FILTERS");
  app->add_flag("-P,--period", ro.sample_period, "each sample's period with -c too");
  app->add_flag("-W,--weight", ro.weight, "each sample's weight (the PMU's latency of it)");
  app->add_flag("--sample-cpu", ro.sample_cpu, "each sample's CPU, without -a/-C too");
  app->add_flag("--phys-data", ro.phys_data, "the physical address of each sample's data address");
  app->add_flag("--data-page-size", ro.data_page_size, "the page size of each sample's data address");
  app->add_flag("--code-page-size", ro.code_page_size, "the page size of each sample's address");
  auto* user =
      app->add_flag("--all-user", ro.all_user, "every event in user space only (over its modifiers)");
  app->add_flag("--all-kernel", ro.all_kernel, "every event in the kernel only (over its modifiers)")
      ->excludes(user);
}

}  // namespace

void RecordCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  event_opt = app->add_option("-e,--event", ro.events,
                              "events to sample (repeatable; default cycles, else task-clock, or cpu-clock "
                              "with -a/-C)");
  filter_opt = app->add_option(
      "--filter", filters, "a filter for the tracepoints of the -e before it (PERF_EVENT_IOC_SET_FILTER)");
  period_opt = app->add_option("-c,--count", period, "sample every N events")->check(CLI::PositiveNumber);
  freq_opt = app->add_option(
      "-F,--freq", freq, "sample N times a second (default 4000; max: kernel.perf_event_max_sample_rate)");
  app->add_flag(
      "--strict-freq", ro.strict_freq,
      "-F over the kernel's limit (kernel.perf_event_max_sample_rate) is an error, not lowered to it");
  app->add_flag("-g", ro.callgraph, "record callchains (frame pointers)");
  app->add_option("--call-graph", ro.call_graph,
                  "callchains: fp (frame pointers, as -g) or dwarf[,SIZE] (user registers and SIZE bytes of "
                  "user stack, 8192 by default, unwound by report and script)")
      ->type_name("MODE");
  app->add_flag("-d,--data", ro.data_addr, "record the data address of each sample");
  pid_opt = app->add_option("-p,--pid", pid, "sample an existing process (all its threads)");
  app->add_flag("-a,--all-cpus", ro.all_cpus, "sample every process on every CPU");
  app->add_option("-C,--cpu", ro.cpus, "sample every process on these CPUs (e.g. 0-3,8)");
  app->add_option("-o,--output", ro.output, "the file to write")->capture_default_str();
  app->add_option("-m,--mmap-pages", ro.pages, "data pages of each ring buffer (a power of two)");
  compression_opt =
      app->add_option("-z,--compression-level", ro.compression,
                      "write the records zstd-compressed, as perf record -z: -z (level 1), -z3 or "
                      "--compression-level=3 (up to 22; the level only attached)")
          ->expected(0, 1)
          ->default_str("1")
          ->type_name("[N]");
  app->add_flag("--no-inherit", no_inherit, "do not sample the command's children");
  app->add_flag("-q,--quiet", ro.quiet, "no summary on stderr");
  app->add_flag("-v,--verbose", ro.verbose, "say the fallbacks taken; twice: each event's attr as opened");
  app->add_option("-k,--clockid", ro.clockid,
                  "the clock of the samples' times: monotonic, monotonic_raw, realtime, boottime, tai (or "
                  "mono, raw, real, boot; CLOCK_*; a number)");
  app->add_flag("-s,--stat", ro.inherit_stat, "per-thread counts, added to the parent's as threads exit");
  app->add_flag("-T,--timestamp", timestamp, "the time of each sample (always recorded)");
  app->add_flag("-B,--no-buildid", ro.no_buildid, "no build ids of the binaries sampled in the file");
  app->add_flag("--switch-events", ro.switch_events, "record context switches (SWITCH records)");
  app->add_flag("--namespaces", ro.namespaces, "record the namespaces of new threads (NAMESPACES records)");
  add_record_samples(app, ro, branch_any, branch_filter);
  app->add_option("-D,--delay", ro.delay,
                  "sample from MSEC after the command starts (-1: start disabled), or in ranges of ms "
                  "START-END,... (the recording ends with the last)")
      ->type_name("MSEC");
  app->add_flag(
      "--all-cgroups", ro.all_cgroups,
      "record each sample's cgroup, and the cgroups there are (CGROUP records, for script -F cgroup)");
  // perf's optional values, attached only: --user-regs=AX,BX, -IAX, -I?
  user_regs_opt = app->add_option("--user-regs", user_regs,
                                  "each sample's user registers: all, or those named (--user-regs=AX,BX; "
                                  "--user-regs=? names this machine's)")
                      ->expected(0, 1)
                      ->type_name("[=REGS]");
  intr_regs_opt = app->add_option("-I,--intr-regs", intr_regs,
                                  "each sample's registers where the sample was taken (kernel or user): all, "
                                  "or those named (-IAX,BX; -I? names this machine's)")
                      ->expected(0, 1)
                      ->type_name("[=REGS]");
  add_files();
  app->add_option("--proc-map-timeout", ro.proc_map_timeout_ms,
                  "the longest, in ms, a process's /proc/PID/maps is read at the start (default 500)");
  app->add_option("-t,--tid", tids, "sample these existing threads (comma-separated), not their children");
  app->add_option("-G,--cgroup", ro.cgroups,
                  "with -a/-C: sample only in these cgroups: the n-th for the n-th event, one for all")
      ->delimiter(',');
  app->add_option("--sysfs", ro.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  add_table_options(app, machine);
  app->footer("The command to sample follows the options (after `--` if it starts with '-').");
}

void RecordCommand::add_files() {
  app->add_option("--max-size", max_size, "end the recording once its data reach SIZE (B, K, M, G: 200M)")
      ->type_name("SIZE");
  switch_output_opt = app->add_option("--switch-output", switch_output,
                                      "files of the recording so far, each named PATH.TIME: at each SIGUSR2 "
                                      "(signal, the default), a size (100M) or a time (30s); attached only")
                          ->expected(0, 1)
                          ->default_str("signal")
                          ->type_name("[=WHAT]");
  app->add_option("--switch-max-files", ro.switch_max_files, "with --switch-output: keep the newest N files");
  app->add_flag("--overwrite", ro.overwrite,
                "a flight recorder: the buffers keep the newest records, written at the end (or at each "
                "--switch-output)");
}

int RecordCommand::run(const perfspec::spec::MachineOptions& machine, int argc, char** argv) {
  ro.machine = machine;
  if (*pid_opt) ro.pid = pid;
  if (*period_opt) ro.period = period;
  if (*compression_opt) ro.compression = std::clamp(ro.compression, 1, 22);  // perf's -z0 is level 1
  if (branch_any) ro.branch_sample_type = 1u << 3;                           // PERF_SAMPLE_BRANCH_ANY
  if (!branch_filter.empty()) ro.branch_sample_type = perfspec::tools::branch_filter(branch_filter);
  if (*freq_opt) parse_frequency(freq, ro.frequency, ro.frequency_max);
  if (!max_size.empty()) ro.max_size = perfspec::tools::record_max_size(max_size);
  if (*switch_output_opt) ro.switch_output = perfspec::tools::switch_output(switch_output);
  if (*user_regs_opt || *intr_regs_opt) {
    auto masks = perfspec::runtime::sample_register_masks();
    if (*user_regs_opt)
      ro.sample_regs_user = perfspec::tools::sample_registers("--user-regs", user_regs, masks.user);
    if (*intr_regs_opt)
      ro.sample_regs_intr = perfspec::tools::sample_registers("--intr-regs", intr_regs, masks.intr);
  }
  if (!tids.empty()) {
    for (const auto& word : split_commas(tids)) {
      int tid = 0;
      auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), tid);
      if (ec != std::errc{} || end != word.data() + word.size() || tid <= 0)
        throw perfspec::Error(perfspec::ErrorKind::usage,
                              fmt::format("-t {}: thread ids, comma-separated", tids));
      ro.tids.push_back(tid);
    }
  }
  // perf: nothing to record named (no command, process, threads or CPUs) is the whole system
  if (ro.command.empty() && !ro.pid && ro.tids.empty() && ro.cpus.empty()) ro.all_cpus = true;
  ro.filters = filters_by_list(*app, event_opt, filter_opt, filters);
  ro.inherit = !no_inherit;
  ro.argv.assign(argv, argv + argc);
  return perfspec::tools::run_record(ro);
}

void ExporterCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("--config", eo.config, "the configuration (TOML): sets of event strings and metrics")
      ->required()
      ->type_name("FILE");
  app->add_option("--listen", eo.listen,
                  "HOST:PORT to serve /metrics on (default: the file's [exporter] listen, else "
                  "127.0.0.1:9464; port 0 picks a free one)")
      ->type_name("ADDR");
  app->add_option(
         "--web.config.file", eo.web_config,
         "TLS, basic authentication and headers, in the format of Prometheus's exporter-toolkit (YAML)")
      ->type_name("FILE");
  app->add_flag(
      "--check", eo.check,
      "check the configuration (and the web configuration) against this machine, open nothing, and exit");
  app->add_option("--threads", eo.threads, "HTTP worker threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app->add_option("--sysfs", eo.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  add_table_options(app, machine);
  app->footer(
      "SIGHUP reloads the configuration and the web configuration; one that does not load leaves the running "
      "one "
      "in place.");
}

int ExporterCommand::run(const perfspec::spec::MachineOptions& machine) {
  eo.machine = machine;
  return perfspec::tools::exporter::run(eo);
}

void TraceCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("-e,--event,--expr", to.events,
                  "system calls (names, globs, a leading ! for all but these) and events, comma-separated "
                  "(repeatable)");
  app->add_option("-o,--output", to.output, "write the trace to this file (default standard error)");
  app->add_option("-p,--pid", to.pids, "trace existing processes (comma-separated pids)");
  app->add_option("-t,--tid", to.tids, "trace existing threads (comma-separated tids)");
  app->add_flag("-a,--all-cpus", to.all_cpus,
                "trace every process on every CPU (the default without a target)");
  app->add_option("-C,--cpu", to.cpus, "trace every process on these CPUs (e.g. 0-3,8)");
  app->add_flag("-s,--summary", to.summary_only, "only a summary of each thread's system calls at the end");
  app->add_flag("-S,--with-summary", to.with_summary, "each system call, and the summary at the end");
  app->add_flag("--errno-summary", to.errno_summary,
                "each error's count under its system call in the summary");
  app->add_flag("--failure", to.failure_only, "only the system calls that failed");
  app->add_option("--duration", to.duration_ms, "only the system calls that took longer than MS milliseconds")
      ->check(CLI::NonNegativeNumber)
      ->type_name("MS");
  app->add_option("--max-events", to.max_events, "stop after this many events")->check(CLI::PositiveNumber);
  pf_opt = app->add_option("-F,--pf", to.pagefaults, "trace page faults: maj (default), min or all")
               ->expected(0, 1)
               ->default_str("maj")
               ->check(CLI::IsMember({"maj", "min", "all"}));
  syscalls_opt = app->add_flag("--syscalls,!--no-syscalls", to.syscalls,
                               "trace system calls (the default unless -e names only events)");
  app->add_flag("--comm,!--no-comm", to.comm, "each line's thread name before its id (the default)");
  app->add_flag("--no-inherit{false}", to.inherit, "do not trace the command's children");
  app->add_option("-G,--cgroup", to.cgroups, "with -a/-C: trace only in these cgroups")->delimiter(',');
  app->add_option("--call-graph", to.call_graph,
                  "each line's callchain: fp (frame pointers) or dwarf[,SIZE] (unwound from the user stack)")
      ->type_name("MODE");
  app->add_option("--max-stack", to.max_stack,
                  "the most frames of each callchain (with no --call-graph: dwarf)")
      ->check(CLI::PositiveNumber);
  app->add_option("-m,--mmap-pages", to.pages, "data pages of each ring buffer (a power of two)");
  app->add_option("--sysfs", to.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  add_table_options(app, machine);
  app->footer(
      "The command to trace follows the options (after `--` if it starts with '-'); without one, "
      "-p, -t or -C, the whole system is traced until Ctrl-C.");
}

int TraceCommand::run(const perfspec::spec::MachineOptions& machine) {
  to.machine = machine;
  to.syscalls_given = syscalls_opt->count() > 0;
  if (pf_opt->count() > 0 && to.pagefaults.empty()) to.pagefaults = "maj";
  return perfspec::tools::run_trace(to);
}

void TopCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("-e,--event", to.events, "events to sample (default cycles:P, else cpu-clock)");
  app->add_option("-c,--count", to.period, "sample every N events")->check(CLI::PositiveNumber);
  freq_opt = app->add_option(
      "-F,--freq", freq, "sample N times a second (default 4000; max: kernel.perf_event_max_sample_rate)");
  app->add_option("-p,--pid", to.pids, "profile existing processes (comma-separated pids)");
  app->add_option("-t,--tid", to.tids, "profile existing threads (comma-separated tids)");
  app->add_flag("-a,--all-cpus", to.all_cpus, "profile every process on every CPU (the default)");
  app->add_option("-C,--cpu", to.cpus, "profile every process on these CPUs (e.g. 0-3,8)");
  app->add_option("-d,--delay", to.delay, "seconds between refreshes (default 2)")
      ->check(CLI::PositiveNumber);
  app->add_option("-s,--sort", to.sort, "sort keys: comm, pid, dso, sym (default dso,sym)");
  app->add_flag("-n,--show-nr-samples", to.show_nr_samples, "a column of each entry's samples");
  app->add_flag("-K,--hide_kernel_symbols", to.hide_kernel, "no kernel samples");
  app->add_flag("-U,--hide_user_symbols", to.hide_user, "no user samples");
  app->add_flag("-z,--zero", to.zero, "start each refresh from nothing (else entries age by 7/8)");
  app->add_flag("-g", to.callgraph, "sample callchains (the table shows where each sample is)");
  app->add_option("-E,--entries", to.entries, "the most entries shown (default: the terminal's height)");
  app->add_option("-m,--mmap-pages", to.pages, "data pages of each ring buffer (a power of two)");
  app->add_flag("--stdio", stdio, "the table as text (what perfspec top always draws)");
  app->add_flag("--tui", tui, "accepted: perfspec top draws its table as text");
  app->add_option("--sysfs", to.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  add_table_options(app, machine);
  app->footer("q quits on a terminal, as Ctrl-C does.");
}

int TopCommand::run(const perfspec::spec::MachineOptions& machine) {
  to.machine = machine;
  if (*freq_opt) parse_frequency(freq, to.frequency, to.frequency_max);
  return perfspec::tools::run_top(to);
}

}  // namespace perfspec::tools::cli
