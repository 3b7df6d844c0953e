// SPDX-License-Identifier: MIT
// `perfspec record`: events sampled into ring buffers (runtime::Sampler), their records written as
// they come into a perf.data file (record::PerfDataWriter), with the records perf synthesizes for
// what existed before (the kernel's text, the processes of -p and -a) and the header features perf
// report shows.
#include "tools/record.hpp"

#include <poll.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/print.hpp"
#include "perfspec/record.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/tracepoint.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/process.hpp"
#include "spec/sysfs_io.hpp"
#include "tools/report.hpp"
#include "tools/signals.hpp"

namespace perfspec::tools {

using runtime::numbered_entries;
using runtime::Process;
using runtime::process_state;
using runtime::threads_of;

namespace {

std::string proc_value(const char* file, std::string_view key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

// Whether the pipe or socket `fd` writes into has no reader left (poll(2) says POLLERR or POLLHUP on
// its write end), found without writing to it.
bool reader_gone(int fd) {
  ::pollfd p{fd, 0, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

// The header features perf record writes that say where the data was taken.
void describe_host(record::PerfDataWriter& out, const spec::Machine& machine,
                   const std::vector<std::string>& argv) {
  struct utsname u {};
  if (::uname(&u) == 0) {
    out.set_string(record::Feature::hostname, u.nodename);
    out.set_string(record::Feature::osrelease, u.release);
    out.set_string(record::Feature::arch, u.machine);
  }
  out.set_string(record::Feature::version, "0.1.0 (perfspec)");
  long conf = ::sysconf(_SC_NPROCESSORS_CONF), online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (conf > 0 && online > 0)
    out.set_nr_cpus(static_cast<std::uint32_t>(conf), static_cast<std::uint32_t>(online));
  if (auto model = proc_value("/proc/cpuinfo", "model name"); !model.empty())
    out.set_string(record::Feature::cpudesc, model);
  // perf's header writes an x86 cpuid as VENDOR,FAMILY,MODEL,STEPPING
  std::string cpuid = machine.cpuid();
  if (cpuid.rfind("GenuineIntel", 0) == 0 || cpuid.rfind("AuthenticAMD", 0) == 0 ||
      cpuid.rfind("HygonGenuine", 0) == 0)
    std::replace(cpuid.begin(), cpuid.end(), '-', ',');
  if (!cpuid.empty()) out.set_string(record::Feature::cpuid, cpuid);
  if (auto mem = proc_value("/proc/meminfo", "MemTotal"); !mem.empty())
    out.set_total_mem(std::strtoull(mem.c_str(), nullptr, 10));
  out.set_cmdline(argv);
}

class Recorder {
 public:
  explicit Recorder(const RecordOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}

  int run();

 private:
  const RecordOptions& o_;
  spec::Machine machine_;
  std::unique_ptr<runtime::Command> child_;
  std::uint64_t samples_ = 0, first_time_ = ~std::uint64_t{0}, last_time_ = 0;

  runtime::Target target();
  // Where the command's output goes: standard error when standard output carries the recording
  // (-o -), as perf sends it.
  int command_stdout() const { return o_.output == "-" ? STDERR_FILENO : -1; }
  runtime::SamplingOptions sampling() const;
  bool take(record::PerfDataWriter& out, runtime::Sampler& s, const record::Formats& formats);
};

runtime::Target Recorder::target() {
  if (o_.pid) {
    if (process_state(*o_.pid) != Process::running)
      throw Error(ErrorKind::usage, fmt::format("no process with pid {} (or it has exited)", *o_.pid));
    auto t = runtime::Target::process(*o_.pid, o_.inherit);
    t.threads = threads_of(*o_.pid);
    return t;
  }
  if (o_.all_cpus || !o_.cpus.empty()) {
    auto t =
        runtime::Target::system_wide(o_.cpus.empty() ? std::vector<int>{} : runtime::parse_cpu_list(o_.cpus));
    if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command, command_stdout());
    return t;
  }
  child_ = std::make_unique<runtime::Command>(o_.command, command_stdout());
  return runtime::Target::command(*child_, o_.inherit);
}

runtime::SamplingOptions Recorder::sampling() const {
  runtime::SamplingOptions s;
  s.period = o_.period.value_or(0);
  s.frequency = o_.period ? 0 : o_.frequency.value_or(4000);
  // perf record's samples: IP, TID, TIME, and PERIOD when the period varies (a frequency)
  s.sample_type = record::sample_ip | record::sample_tid | record::sample_time;
  if (!o_.period) s.sample_type |= record::sample_period;
  if (o_.callgraph) s.sample_type |= record::sample_callchain;
  if (o_.data_addr) s.sample_type |= record::sample_addr;
  s.mmap_data = o_.data_addr;  // -d: data mappings too, as perf -d
  // What exists is written between open and enable (-p, -a, -C): as perf does for -a, the side-band
  // records come from a tracking event enabled as it opens, so that a process born during the scan of
  // /proc is named all the same.
  s.track_at_open = o_.pid || o_.all_cpus || !o_.cpus.empty();
  s.pages = o_.pages;
  return s;
}

// Everything the buffers hold now, into the file; a FINISHED_ROUND after each pass that wrote. True
// when it wrote.
bool Recorder::take(record::PerfDataWriter& out, runtime::Sampler& s, const record::Formats& formats) {
  record::Record r;
  std::size_t n = s.read([&](std::span<const std::byte> bytes) {
    out.write(bytes);
    if (runtime::record_header(bytes).type != static_cast<std::uint32_t>(record::Type::sample)) return;
    ++samples_;
    try {
      formats.decode(bytes, 0, r);
      if (r.sample_id.has(record::sample_time)) {
        first_time_ = std::min(first_time_, r.sample_id.time);
        last_time_ = std::max(last_time_, r.sample_id.time);
      }
    } catch (const record::DecodeError&) {  // written as it came; the time range leaves it out
    }
  });
  if (n) out.finish_round();
  return n != 0;
}

int Recorder::run() {
  if (o_.period && o_.frequency)
    throw Error(ErrorKind::usage, "-c and -F cannot go together: a period or a frequency");
  if (o_.command.empty() && !o_.pid && !o_.all_cpus && o_.cpus.empty())
    throw Error(ErrorKind::usage, "nothing to record: give a command, -p PID, -a or -C CPUS");
  if (o_.pid && (o_.all_cpus || !o_.cpus.empty()))
    throw Error(ErrorKind::usage, "-p and -a/-C cannot go together");
  if (o_.pid && !o_.command.empty()) throw Error(ErrorKind::usage, "-p and a command cannot go together");

  bool default_event = o_.events.empty();
  EventSet set;
  std::vector<std::string> lists = o_.events;
  if (default_event) lists.push_back("cycles");
  for (const auto& text : lists) {
    try {
      EventSet one = resolve(text, machine_);
      if (one.regrouped) std::fputs("WARNING: events were regrouped to match PMUs\n", stderr);
      set.append(std::move(one));
    } catch (const Error& e) {  // drawn under the -e it is in, as stat draws it
      return report_error(e, text, ErrorFormat::text);
    }
  }
  runtime::Target t = target();
  auto options = sampling();
  auto sampler = runtime::Sampler::open(set, t, options);
  if (default_event && !sampler.opened(0)) {  // no hardware PMU: perf falls back to cpu-clock
    set = resolve("cpu-clock", machine_);
    sampler = runtime::Sampler::open(set, t, options);
  }
  bool any = false;
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    if (sampler.opened(i)) {
      any = true;
      continue;
    }
    const auto& f = sampler.failures()[i];
    std::fprintf(stderr, "perfspec record: cannot sample '%s': %s%s%s\n",
                 sampler.events().events[i].name.c_str(), f ? f->name.c_str() : "?",
                 f && !f->meaning.empty() ? ": " : "", f ? f->meaning.c_str() : "");
    if (f && !f->hint.empty()) std::fprintf(stderr, "  %s\n", f->hint.c_str());
  }
  if (!any) return 3;

  // The events as opened (with the tracking event of -a, -C and -p, last), and what the file needs to
  // read their samples: the tracing data of the tracepoints among them.
  std::vector<record::FileEvent> events;
  record::Formats formats;
  EventSet recorded;
  for (std::size_t i = 0; i < sampler.events().events.size(); ++i) {
    if (!sampler.opened(i)) continue;
    events.push_back({sampler.attrs()[i], sampler.ids()[i], sampler.events().events[i].name});
    formats.add(sampler.attrs()[i], sampler.ids()[i]);
    recorded.events.push_back(sampler.events().events[i]);
  }
  std::vector<std::byte> tracing;
  if (std::any_of(events.begin(), events.end(), [](const auto& e) { return e.attr.type == 2; }))
    tracing = record::tracing_data_of(machine_, recorded);
  const bool to_pipe = o_.output == "-";
  // From here on a stop signal ends the recording with a whole file (before the file exists: tests
  // and scripts wait for it to appear before they signal).
  catch_stop_signals();
  std::optional<record::PerfDataWriter> writer;
  if (to_pipe) {
    // perf's pipe mode on standard output; a reader that goes away ends the recording with EPIPE
    catch_broken_pipe();
    writer.emplace(record::PerfDataWriter::create_pipe(STDOUT_FILENO, events, "standard output"));
  } else {
    // perf keeps the file it would overwrite as FILE.old
    if (::access(o_.output.c_str(), F_OK) == 0) ::rename(o_.output.c_str(), (o_.output + ".old").c_str());
    writer.emplace(record::PerfDataWriter::create(o_.output, events));
  }
  auto& out = *writer;
  if (!tracing.empty()) out.set_tracing_data(std::move(tracing));
  describe_host(out, machine_, o_.argv);
  // What existed before: the kernel's text, and the processes already running (-p, -a).
  const Attr& first = events.front().attr;
  std::vector<std::byte> synthesized;
  runtime::synthesize_kernel(first, synthesized);
  if (o_.pid) runtime::synthesize_process(*o_.pid, first, synthesized);
  if (o_.all_cpus || !o_.cpus.empty())
    for (int pid : numbered_entries("/proc")) runtime::synthesize_process(pid, first, synthesized);
  out.write(synthesized);
  out.finish_round();

  if (!child_ || o_.all_cpus || !o_.cpus.empty()) sampler.enable();
  if (child_) {
    if (int err = child_->start()) {
      out.finish();
      throw Error(ErrorKind::usage,
                  fmt::format("cannot run '{}': {}", o_.command.front(), std::strerror(err)));
    }
  }
  int wakeups = 0;  // passes that found records, as perf counts its wake-ups
  try {
    for (;;) {
      auto p = sampler.poll(100);
      if (p.state == runtime::Wakeup::failed)
        throw Error(ErrorKind::io, fmt::format("poll: {}", std::strerror(p.error)));
      if (take(out, sampler, formats)) ++wakeups;
      if (to_pipe && reader_gone(STDOUT_FILENO))
        throw Error(ErrorKind::io, "cannot write 'standard output': the reader of the pipe is gone");
      if (p.state == runtime::Wakeup::target_gone) break;
      if (child_ && child_->wait(0)) break;  // the command ended (system-wide: stop with it)
      if (signals_received) {
        if (child_ && !child_->exited()) child_->signal(last_signal);
        if (!child_) break;
      }
    }
    sampler.disable();
    take(out, sampler, formats);
  } catch (const Error&) {
    // The file cannot be written (a full disk, a pipe whose reader left): the command is not left
    // running unrecorded, as perf ends its workload.
    if (child_ && !child_->exited()) child_->signal(SIGTERM);
    throw;
  }
  if (first_time_ <= last_time_) out.set_sample_time(first_time_, last_time_);
  std::uint64_t bytes = out.data_size();
  out.finish();

  auto losses = sampler.losses();
  if (!o_.quiet) {
    std::fprintf(stderr, "[ perfspec record: Woken up %d times to write data ]\n", wakeups);
    std::fprintf(stderr, "[ perfspec record: Captured and wrote %.3f MB %s (%llu samples) ]\n",
                 static_cast<double>(bytes) / (1024.0 * 1024.0),
                 to_pipe ? "standard output" : o_.output.c_str(), static_cast<unsigned long long>(samples_));
  }
  // What was not recorded is said, never hidden.
  // The events' own count of what full buffers dropped is exact; LOST records say it only in part (the
  // kernel writes one when it can write again).
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
    if (auto rate = spec::io::read_proc_number("/proc/sys/kernel/perf_event_max_sample_rate"))
      limit = fmt::format(" (kernel.perf_event_max_sample_rate = {})", *rate);
    std::fputs(
        fmt::format("perfspec record: sampling was throttled {}: more samples a second than the kernel "
                    "allows{}; samples were not taken while throttled ({})\n",
                    times, limit, o_.period ? "a larger -c" : "a lower -F")
            .c_str(),
        stderr);
  }
  if (losses.overruns || losses.bad_records)
    std::fprintf(stderr, "perfspec record: %llu overruns and %llu unreadable records skipped %llu bytes\n",
                 static_cast<unsigned long long>(losses.overruns),
                 static_cast<unsigned long long>(losses.bad_records),
                 static_cast<unsigned long long>(losses.skipped_bytes));
  if (child_) {
    child_->wait();
    return child_->exit_status();
  }
  return 0;
}

}  // namespace

int run_record(const RecordOptions& options) {
  Recorder r(options);
  return r.run();
}

}  // namespace perfspec::tools
