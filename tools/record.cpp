// SPDX-License-Identifier: MIT
// `perfspec record`: a recording session (runtime::Recording) for a command, -p or -a/-C, into a
// perf.data file or a pipe, with perf record's messages, its fallback to cpu-clock, signals and exit
// statuses.
#include "tools/record.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/print.hpp"
#include "perfspec/record.hpp"
#include "perfspec/recording.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/tracepoint.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/process.hpp"
#include "tools/live.hpp"
#include "tools/report.hpp"
#include "tools/signals.hpp"

namespace perfspec::tools {

using runtime::Process;
using runtime::process_state;
using runtime::threads_of;

namespace {

// Whether the pipe or socket `fd` writes into has no reader left (poll(2) says POLLERR or POLLHUP on
// its write end), found without writing to it.
bool reader_gone(int fd) {
  ::pollfd p{fd, 0, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

// What was not recorded is said, never hidden. The events' own count of what full buffers dropped is
// exact; LOST records say it only in part (the kernel writes one when it can write again).
void say_losses(const runtime::Losses& losses, bool by_period) {
  if (std::uint64_t dropped = std::max(losses.dropped, losses.lost))
    std::fprintf(
        stderr,
        "perfspec record: the kernel dropped %llu records into full buffers (-m for more pages, or a "
        "lower -F)\n",
        static_cast<unsigned long long>(dropped));
  else if (!losses.dropped_counted && losses.full_reads)
    std::fprintf(stderr,
                 "perfspec record: buffers were found nearly full %llu times: records may have been dropped "
                 "(this kernel does not count them; -m for more pages, or a lower -F)\n",
                 static_cast<unsigned long long>(losses.full_reads));
  if (losses.lost_samples)
    std::fprintf(stderr, "perfspec record: the PMU lost %llu samples (LOST_SAMPLES)\n",
                 static_cast<unsigned long long>(losses.lost_samples));
  if (losses.throttles) {
    // While throttled an event takes no samples (until the next tick): they are neither in the file
    // nor counted as dropped. The limit is the kernel's, which lowers it itself when its sampling
    // interrupts take too long.
    std::string times = losses.throttles == 1 ? "once" : fmt::format("{} times", losses.throttles);
    std::string limit;
    if (auto rate = runtime::max_sample_rate())
      limit = fmt::format(" (kernel.perf_event_max_sample_rate = {})", *rate);
    std::fputs(
        fmt::format("perfspec record: sampling was throttled {}: more samples a second than the kernel "
                    "allows{}; samples were not taken while throttled ({})\n",
                    times, limit, by_period ? "a larger -c" : "a lower -F")
            .c_str(),
        stderr);
  }
  if (losses.overruns || losses.bad_records)
    std::fprintf(stderr, "perfspec record: %llu overruns and %llu unreadable records skipped %llu bytes\n",
                 static_cast<unsigned long long>(losses.overruns),
                 static_cast<unsigned long long>(losses.bad_records),
                 static_cast<unsigned long long>(losses.skipped_bytes));
}

class Recorder {
 public:
  explicit Recorder(const RecordOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}

  int run();

 private:
  const RecordOptions& o_;
  spec::Machine machine_;
  std::unique_ptr<runtime::Command> child_;
  std::vector<std::pair<std::size_t, std::size_t>> lists_;  // each -e list's events, [first, end)
  std::vector<std::string> filters_;                        // per event (--filter)
  std::vector<runtime::Fd> cgroup_fds_;                     // -G: open until the events are
  std::uint64_t frequency_ = 0;                             // -F as sampled (0: a period)
  RecordDelay delay_;                                       // -D
  std::size_t said_timeouts_ = 0;                           // map_timeouts() said so far

  void check_options() const;
  runtime::Target target(std::size_t events);
  // Where the command's output goes: standard error when standard output carries the recording
  // (-o -), as perf sends it.
  int command_stdout() const { return o_.output == "-" ? STDERR_FILENO : -1; }
  runtime::SamplingOptions sampling() const;
  std::optional<EventSet> events(int& status);
  bool fall_back(EventSet& set, const runtime::Recording& rec, const runtime::Target& t) const;
  std::optional<runtime::Recording> open(EventSet set, const runtime::Target& t);
  record::PerfDataWriter create(const runtime::Recording& rec) const;
  void drain(runtime::Recording& rec, record::PerfDataWriter& out);
  void say_map_timeouts(const runtime::Recording& rec);
  // --switch-output
  std::chrono::steady_clock::time_point switch_due_{};  // a time's next switch
  sig_atomic_t switch_signals_seen_ = 0;
  std::vector<std::string> switched_;  // the files named so far, oldest first (--switch-max-files)
  bool switch_due(const record::PerfDataWriter& out);
  std::string name_switched();
};

void Recorder::check_options() const {
  (void)dwarf_stack_size(o_.call_graph);  // a mode it cannot record, before anything starts
  if (o_.period && (o_.frequency || o_.frequency_max))
    throw Error(ErrorKind::usage, "-c and -F cannot go together: a period or a frequency");
  if (o_.pid && (o_.all_cpus || !o_.cpus.empty()))
    throw Error(ErrorKind::usage, "-p and -a/-C cannot go together");
  if (!o_.tids.empty() && (o_.pid || o_.all_cpus || !o_.cpus.empty()))
    throw Error(ErrorKind::usage, "-t and -p/-a/-C cannot go together");
  if (!o_.cgroups.empty() && !o_.all_cpus && o_.cpus.empty())
    throw Error(ErrorKind::usage, "-G/--cgroup: cgroups are sampled on CPUs: add -a or -C");
  (void)clock_id(o_.clockid);
  if (o_.switch_output && o_.output == "-")
    throw Error(ErrorKind::usage, "--switch-output switches files: not with -o - (a pipe)");
  if (o_.switch_max_files && !o_.switch_output)
    throw Error(ErrorKind::usage, "--switch-max-files goes with --switch-output");
}

// -D's moments, from the start: (ms, true) sampling starts, (ms, false) it stops; the recording ends
// with the last stop of ranges.
std::vector<std::pair<int, bool>> delay_steps(const RecordDelay& d) {
  std::vector<std::pair<int, bool>> steps;
  if (d.initial > 0) steps.emplace_back(d.initial, true);
  for (std::size_t i = 0; i < d.ranges.size(); ++i) {
    if (i > 0) steps.emplace_back(d.ranges[i].first, true);
    steps.emplace_back(d.ranges[i].second, false);
  }
  return steps;
}

runtime::Target Recorder::target(std::size_t events) {
  if (!o_.tids.empty()) {  // these threads, as they are: no children (perf's -t)
    for (int tid : o_.tids)
      if (process_state(tid) != Process::running)
        throw Error(ErrorKind::usage, fmt::format("no thread with tid {} (or it has exited)", tid));
    auto t =
        runtime::Target::process(runtime::thread_group(o_.tids.front()).value_or(o_.tids.front()), false);
    t.threads = o_.tids;
    if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command, command_stdout());
    return t;
  }
  if (o_.pid) {
    if (process_state(*o_.pid) != Process::running)
      throw Error(ErrorKind::usage, fmt::format("no process with pid {} (or it has exited)", *o_.pid));
    auto t = runtime::Target::process(*o_.pid, o_.inherit);
    t.threads = threads_of(*o_.pid);
    // perf: a command beside -p only times the recording (perf record -p PID -- sleep 10)
    if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command, command_stdout());
    return t;
  }
  if (o_.all_cpus || !o_.cpus.empty()) {
    auto t =
        runtime::Target::system_wide(o_.cpus.empty() ? std::vector<int>{} : runtime::parse_cpu_list(o_.cpus));
    if (!o_.cgroups.empty()) {  // -G: the n-th cgroup for the n-th event, one for all
      std::vector<std::string> per_event = o_.cgroups;
      per_event.resize(events, o_.cgroups.size() == 1 ? o_.cgroups.front() : std::string());
      t.cgroups = runtime::open_cgroups(per_event, cgroup_fds_);
    }
    if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command, command_stdout());
    return t;
  }
  child_ = std::make_unique<runtime::Command>(o_.command, command_stdout());
  return runtime::Target::command(*child_, o_.inherit);
}

runtime::SamplingOptions Recorder::sampling() const {
  runtime::SamplingOptions s;
  s.period = o_.period.value_or(0);
  s.frequency = frequency_;
  // perf record's samples: IP, TID, TIME, and PERIOD when the period varies (a frequency)
  s.sample_type = record::sample_ip | record::sample_tid | record::sample_time;
  if (!o_.period) s.sample_type |= record::sample_period;
  if (o_.callgraph) s.sample_type |= record::sample_callchain;
  if (auto dwarf = dwarf_stack_size(o_.call_graph)) {
    // perf's --call-graph dwarf: the kernel's frames in the callchain, the user ones unwound later
    // from the registers (perf's PERF_REGS_MASK of the arch) and the stack copied with each sample
    s.sample_type |= record::sample_callchain | record::sample_regs_user | record::sample_stack_user;
    s.sample_regs_user = user_regs_mask;
    if (o_.sample_regs_user) {
      // perf's: --user-regs' subset, with the two an unwinder cannot start without, and a warning
      s.sample_regs_user = o_.sample_regs_user | dwarf_minimal_regs;
      std::fputs(
          "WARNING: The use of --call-graph=dwarf may require all the user registers, specifying a "
          "subset with --user-regs may render DWARF unwinding unreliable, so the minimal registers "
          "set (IP, SP) is explicitly forced.\n",
          stderr);
    }
    s.sample_stack_user = *dwarf;
    s.exclude_callchain_user = true;
    // the mappings of data too (as perf's dwarf mode turns on -d's): an unwinder reads a binary's
    // .eh_frame_hdr where it is mapped, which is not executable
    s.mmap_data = true;
  } else if (o_.call_graph == "fp") {
    s.sample_type |= record::sample_callchain;
  }
  if (o_.data_addr) s.sample_type |= record::sample_addr;
  if (o_.sample_regs_user && !(s.sample_type & record::sample_regs_user)) {
    s.sample_type |= record::sample_regs_user;
    s.sample_regs_user = o_.sample_regs_user;
  }
  if (o_.sample_regs_intr) {
    s.sample_type |= record::sample_regs_intr;
    s.sample_regs_intr = o_.sample_regs_intr;
  }
  // perf's evsel__config: each as its option asks (-W is WEIGHT_STRUCT on x86, as
  // arch_evsel__set_sample_weight)
  if (o_.sample_period) s.sample_type |= record::sample_period;
#if defined(__x86_64__) || defined(__i386__)
  if (o_.weight) s.sample_type |= record::sample_weight_struct;
#else
  if (o_.weight) s.sample_type |= record::sample_weight;
#endif
  if (o_.sample_cpu) s.sample_type |= record::sample_cpu;
  if (o_.phys_data) s.sample_type |= record::sample_phys_addr;
  if (o_.data_page_size) s.sample_type |= record::sample_data_page_size;
  if (o_.code_page_size) s.sample_type |= record::sample_code_page_size;
  if (o_.branch_sample_type) {
    s.sample_type |= record::sample_branch_stack;
    s.branch_sample_type = o_.branch_sample_type;
  }
  s.mmap_data = s.mmap_data || o_.data_addr;  // -d: data mappings too, as perf -d
  s.pages = o_.pages;
  s.clockid = clock_id(o_.clockid);
  s.inherit_stat = o_.inherit_stat;
  s.context_switch = o_.switch_events;
  s.namespaces = o_.namespaces;
  s.overwrite = o_.overwrite;
  s.filters = filters_;
  if (o_.all_cgroups) s.sample_type |= record::sample_cgroup;  // perf's --all-cgroups
  s.cgroup = o_.all_cgroups;
  s.start_disabled = delay_.initial != 0;  // -D: from enable(), the side-band from the start
  return s;
}

// The -e lists resolved (cycles when none). Nothing when one is wrong: said, and `status` the exit
// status.
std::optional<EventSet> Recorder::events(int& status) {
  EventSet set;
  std::vector<std::string> lists = o_.events;
  if (lists.empty()) lists.push_back("cycles");
  for (const auto& text : lists) {
    try {
      EventSet one = resolve(text, machine_);
      if (one.regrouped) std::fputs("WARNING: events were regrouped to match PMUs\n", stderr);
      const std::size_t first = set.events.size();
      set.append(std::move(one));
      lists_.emplace_back(first, set.events.size());
    } catch (const Error& e) {  // drawn under the -e it is in, as stat draws it
      status = report_error(e, text, ErrorFormat::text);
      return std::nullopt;
    }
  }
  filters_ = tracepoint_filters(set, lists_, o_.filters);
  restrict_privilege(set, o_.all_user, o_.all_kernel);
  return set;
}

// perf's fallback for cycles where the hardware has no such counter (ENOENT, ENXIO, ENODEV): the event
// with every modifier it had becomes the timer of the target, task-clock, or cpu-clock on CPUs. True
// when some event fell back (the set is to be opened again).
bool Recorder::fall_back(EventSet& set, const runtime::Recording& rec, const runtime::Target& t) const {
  bool changed = false;
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    Attr& a = set.events[i].attr;
    const auto& f = rec.failures()[i];
    const bool cpus = t.kind == runtime::Target::Kind::cpus;
    if (rec.opened(i) || !fall_back_from_cycles(a, f, cpus)) continue;
    if (o_.verbose > 0)
      std::fprintf(stderr,
                   "perfspec record: '%s' cannot be opened (%s): sampling %s instead, as perf falls back\n",
                   set.events[i].name.c_str(), f->name.c_str(), cpus ? "cpu-clock" : "task-clock");
    set.events[i].name = record::attr_name(a);
    set.events[i].pmu = "software";
    changed = true;
  }
  return changed;
}

// The events opened (cycles falling back to a timer where there is no hardware PMU, as perf's does);
// each event that cannot sample said. Nothing when none can.
std::optional<runtime::Recording> Recorder::open(EventSet set, const runtime::Target& t) {
  runtime::RecordingOptions options{.sampling = sampling(),
                                    .cmdline = o_.argv,
                                    .build_ids = !o_.no_buildid,
                                    .proc_map_timeout = std::chrono::milliseconds(o_.proc_map_timeout_ms),
                                    .cgroups = o_.all_cgroups};
  auto rec = runtime::Recording::open(machine_, set, t, options);
  if (fall_back(set, rec, t)) rec = runtime::Recording::open(machine_, set, t, options);
  if (o_.verbose > 1) std::fputs(to_text(rec.events()).c_str(), stderr);
  (void)say_open_failures("record", "sample", rec.events(), rec.failures(),
                          [&](std::size_t i) { return rec.opened(i); });
  if (!rec.sampling()) return std::nullopt;
  return rec;
}

// The file, or perf's pipe mode on standard output or on a path that is not a regular file (a device, a
// FIFO: a reader that goes away ends the recording with EPIPE). As perf, a regular file with data at
// the path is kept as FILE.old; nothing else is moved (a device node, /dev/stdout's link), and a file
// that cannot be moved is not overwritten.
record::PerfDataWriter Recorder::create(const runtime::Recording& rec) const {
  catch_broken_pipe();
  if (o_.output == "-")
    return record::PerfDataWriter::create_pipe(STDOUT_FILENO, rec.file_events(), "standard output");
  struct stat st {};
  if (::stat(o_.output.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    std::string old = o_.output + ".old";
    struct stat old_st {};
    if (::lstat(old.c_str(), &old_st) == 0 && !S_ISREG(old_st.st_mode))
      throw Error(ErrorKind::io,
                  fmt::format("cannot move '{}' to '{}': '{}' is there and is not a regular file", o_.output,
                              old, old));
    if (::rename(o_.output.c_str(), old.c_str()) != 0)
      throw Error(ErrorKind::io,
                  fmt::format("cannot move '{}' to '{}': {}", o_.output, old, std::strerror(errno)));
  }
  return record::PerfDataWriter::create(o_.output, rec.file_events());
}

// Until the target has gone, the command has ended or a stop signal came (passed on to the command), or
// the last of -D's ranges is over (the command ended by SIGTERM, as perf ends it). -D's steps are
// timed from here, as perf's from the command's start.
// --switch-output: whether the file is to be switched now (a SIGUSR2 came, its data reached the size,
// its time is over).
bool Recorder::switch_due(const record::PerfDataWriter& out) {
  const SwitchOutput& s = *o_.switch_output;
  if (s.signal && switch_signals != switch_signals_seen_) {
    switch_signals_seen_ = switch_signals;
    return true;
  }
  if (s.size && out.data_size() >= s.size) return true;
  return s.seconds && std::chrono::steady_clock::now() >= switch_due_;
}

// The file finished is given its name with the time (PATH.YYYYmmddHHMMSScc), said as perf says it; past
// --switch-max-files the oldest of those named goes. Returns the name.
std::string Recorder::name_switched() {
  // Two switches within a hundredth of a second would get one name, and the rename would replace the
  // first file (as perf's does): the second waits for a name no file has.
  std::string name = timestamped(o_.output);
  for (struct stat st{}; ::lstat(name.c_str(), &st) == 0; name = timestamped(o_.output))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (::rename(o_.output.c_str(), name.c_str()) != 0)
    throw Error(ErrorKind::io,
                fmt::format("cannot move '{}' to '{}': {}", o_.output, name, std::strerror(errno)));
  if (!o_.quiet) std::fprintf(stderr, "[ perfspec record: Dump %s ]\n", name.c_str());
  switched_.push_back(name);
  if (o_.switch_max_files && switched_.size() > o_.switch_max_files) {
    ::unlink(switched_.front().c_str());
    switched_.erase(switched_.begin());
  }
  if (o_.switch_output->seconds)
    switch_due_ = std::chrono::steady_clock::now() + std::chrono::seconds(o_.switch_output->seconds);
  return name;
}

void Recorder::drain(runtime::Recording& rec, record::PerfDataWriter& out) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto steps = delay_steps(delay_);
  std::size_t next = 0;
  try {
    for (;;) {
      int wait = 100;
      if (next < steps.size()) {
        const auto due = start + std::chrono::milliseconds(steps[next].first);
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(due - Clock::now()).count();
        wait = static_cast<int>(std::clamp<long long>(left, 0, 100));
      }
      auto state = rec.drain(wait);
      if (o_.max_size && out.data_size() >= o_.max_size) {  // perf's words and its end of the command
        std::fprintf(stderr, "[ perfspec record: perf size limit reached (%llu KB), stopping session ]\n",
                     static_cast<unsigned long long>(out.data_size() >> 10));
        if (child_ && !child_->exited()) child_->signal(SIGTERM);
        break;
      }
      if (o_.switch_output && switch_due(out)) {  // the file so far under its name with the time, a new one
        const runtime::RecordingSummary file = rec.end_file();
        if (!o_.quiet)
          std::fprintf(stderr, "[ perfspec record: dump data: Woken up %d times ]\n", file.wakeups);
        name_switched();
        out = create(rec);
        if (o_.compression) out.compress(o_.compression);
        rec.begin(out);
      }
      if (next < steps.size() && Clock::now() >= start + std::chrono::milliseconds(steps[next].first)) {
        const bool on = steps[next].second;
        (void)(on ? rec.enable() : rec.disable());  // as perf, a failure shows as samples missing
        std::fputs(on ? "Events enabled\n" : "Events disabled\n", stderr);
        if (++next == steps.size() && !delay_.ranges.empty()) {
          if (child_ && !child_->exited()) child_->signal(SIGTERM);
          break;
        }
      }
      if (o_.output == "-" && reader_gone(STDOUT_FILENO))
        throw Error(ErrorKind::io, "cannot write 'standard output': the reader of the pipe is gone");
      if (state == runtime::Wakeup::target_gone) break;
      if (child_ && child_->wait(0)) break;  // the command ended (system-wide: stop with it)
      if (signals_received) {
        if (child_ && !child_->exited()) child_->signal(last_signal);
        if (!child_) break;
      }
    }
  } catch (const Error&) {
    // The file cannot be written (a full disk, a pipe whose reader left): the command is not left
    // running unrecorded, as perf ends its workload.
    if (child_ && !child_->exited()) child_->signal(SIGTERM);
    throw;
  }
}

// The processes whose mappings were cut short since the last call.
void Recorder::say_map_timeouts(const runtime::Recording& rec) {
  const auto& pids = rec.map_timeouts();
  for (; said_timeouts_ < pids.size(); ++said_timeouts_)
    std::fprintf(stderr,
                 "perfspec record: reading /proc/%d/maps took longer than %u ms: its mappings are cut short "
                 "(--proc-map-timeout)\n",
                 pids[said_timeouts_], o_.proc_map_timeout_ms);
}

int Recorder::run() {
  check_options();
  if (!o_.delay.empty()) delay_ = record_delay(o_.delay);
  int status = 0;
  std::optional<EventSet> set = events(status);
  if (!set) return status;
  // the frequency under the kernel's limit (said, or refused) before the command starts, as perf's
  // record_opts__config
  frequency_ =
      o_.period ? 0 : sampling_frequency("record", o_.frequency, o_.frequency_max, o_.strict_freq, o_.quiet);
  runtime::Target t = target(set->events.size());
  std::optional<runtime::Recording> rec = open(std::move(*set), t);
  if (!rec) return 3;
  // From here on a stop signal ends the recording with a whole file (before the file exists: tests
  // and scripts wait for it to appear before they signal).
  catch_stop_signals();
  if (o_.switch_output && o_.switch_output->signal) catch_switch_signal();  // (before the file appears too)
  record::PerfDataWriter out = create(*rec);
  if (o_.compression) out.compress(o_.compression);
  rec->begin(out);
  say_map_timeouts(*rec);
  if (child_) {
    if (int err = child_->start()) {
      out.finish();
      throw Error(ErrorKind::usage,
                  fmt::format("cannot run '{}': {}", o_.command.front(), std::strerror(err)));
    }
  }
  if (delay_.initial != 0) std::fputs("Events disabled\n", stderr);
  if (o_.switch_output && o_.switch_output->seconds)
    switch_due_ = std::chrono::steady_clock::now() + std::chrono::seconds(o_.switch_output->seconds);
  drain(*rec, out);
  runtime::RecordingSummary summary = rec->finish();
  say_map_timeouts(*rec);  // (overwrite: read at the end)
  if (!o_.quiet)
    std::fprintf(stderr, "[ perfspec record: Woken up %d times to write data ]\n", summary.wakeups);
  if (o_.switch_output) name_switched();  // the last file too, as perf's --switch-output names it
  if (!o_.quiet) {
    std::string compressed;
    if (auto [original, written] = out.compressed_sizes(); written)
      compressed = fmt::format(", compressed (original {:.3f} MB, ratio is {:.3f})",
                               static_cast<double>(original) / (1024.0 * 1024.0),
                               static_cast<double>(original) / static_cast<double>(written));
    // (perf's words after switches: the last file's size, the names' pattern, no count of samples)
    const std::string samples =
        o_.switch_output ? ".<timestamp>" : fmt::format(" ({} samples)", summary.samples);
    std::fprintf(stderr, "[ perfspec record: Captured and wrote %.3f MB %s%s%s ]\n",
                 static_cast<double>(summary.bytes) / (1024.0 * 1024.0),
                 o_.output == "-" ? "standard output" : o_.output.c_str(), samples.c_str(),
                 compressed.c_str());
  }
  say_losses(summary.losses, o_.period.has_value());
  if (child_) {
    child_->wait();
    return child_->exit_status();
  }
  return 0;
}

}  // namespace

int run_record(const RecordOptions& options) {
  int status = 0;
  {
    Recorder r(options);
    status = r.run();
  }
  if (options.command.empty()) end_by_stop_signal();  // the command's own status otherwise, as perf's
  return status;
}

}  // namespace perfspec::tools
