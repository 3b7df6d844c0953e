// SPDX-License-Identifier: MIT
// `perfspec trace`: perf trace's live tracer. The -e words are split as perf splits them (system call
// names and globs apart from events), raw_syscalls:sys_enter/sys_exit and the events are opened on the
// target with a runtime::Sampler, filtered in the kernel to the system calls asked for (and, across
// the whole system, to other processes than this one), and every record read goes to a
// SyscallTrace, whose lines go to standard error or -o.
#include "tools/trace.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "perfspec/record.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/trace.hpp"
#include "perfspec/tracepoint.hpp"
#include "perfspec/unwind.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/process.hpp"
#include "tools/control.hpp"
#include "tools/live.hpp"
#include "tools/record.hpp"
#include "tools/report.hpp"
#include "tools/signals.hpp"

namespace perfspec::tools {

namespace {

// The -e words as perf trace reads them: each comma-separated word that names system calls (a name or
// a glob of names) goes to the system call list, a `!` before a list's first word negates it, and the
// other words, joined again, are an event list (so `net:x/nr=3,max-stack=16/` stays one event).
struct EventList {
  std::string text;                 // the words that are no system calls, joined again
  std::string written;              // the -e as the user wrote it
  std::vector<std::uint32_t> from;  // per byte of text, where it is in `written` (errors point there)
};
struct EventWords {
  std::vector<long> syscalls;
  bool negated = false;
  std::vector<EventList> events;  // one per -e that had events
};

// The system calls by the names the kernel's tracepoints give them: libaudit names a few by their
// older names (pread, pwrite for pread64, pwrite64): a name without a syscalls:sys_enter_NAME whose
// NAME64 has one is that.
std::vector<std::pair<long, std::string>> kernel_syscalls(const spec::Machine& machine) {
  auto all = spec::syscalls();
  const std::string& events = machine.tracefs_events();
  if (events.empty()) return all;
  std::error_code ec;
  auto has = [&](const std::string& name) {
    return std::filesystem::exists(fmt::format("{}/syscalls/sys_enter_{}", events, name), ec);
  };
  for (auto& [number, name] : all)
    if (!has(name) && has(name + "64")) name += "64";
  return all;
}

EventWords split_event_words(const std::vector<std::string>& lists,
                             const std::vector<std::pair<long, std::string>>& all) {
  EventWords out;
  for (const auto& list : lists) {
    std::size_t at = 0;
    if (!list.empty() && list.front() == '!') {
      out.negated = true;
      at = 1;
    }
    EventList events{{}, list, {}};
    while (at <= list.size()) {
      std::size_t comma = std::min(list.find(',', at), list.size());
      std::string word = list.substr(at, comma - at);
      bool matched = false;
      for (const auto& [number, name] : all)
        if (name == word || fnmatch(word.c_str(), name.c_str(), 0) == 0) {
          out.syscalls.push_back(number);
          matched = true;
        }
      if (!matched) {
        if (!events.text.empty()) {
          events.text += ',';
          events.from.push_back(static_cast<std::uint32_t>(at - 1));
        }
        events.text += word;
        for (std::size_t i = 0; i < word.size(); ++i)
          events.from.push_back(static_cast<std::uint32_t>(at + i));
      }
      at = comma + 1;
    }
    if (!events.text.empty()) out.events.push_back(std::move(events));
  }
  return out;
}

// The kernel filter of the system call events: the calls asked for, and not this process's own.
std::string syscall_filter(const EventWords& w, const std::string& self) {
  std::string ids;
  for (long id : w.syscalls)
    ids += fmt::format("{}id {} {}", ids.empty() ? "" : (w.negated ? " && " : " || "),
                       w.negated ? "!=" : "==", id);
  if (ids.empty()) return self;
  if (self.empty()) return ids;
  return fmt::format("({}) && {}", ids, self);
}

class Tracer {
 public:
  explicit Tracer(const TraceCliOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}
  int run();

 private:
  const TraceCliOptions& o_;
  spec::Machine machine_;
  std::unique_ptr<runtime::Command> child_;
  std::vector<runtime::Fd> cgroup_fds_;
  record::Tracepoints enter_formats_;
  std::map<std::string, const record::Tracepoint*, std::less<>> enter_by_name_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};  // -o
  std::FILE* out_ = stderr;
  std::vector<std::pair<long, std::string>> syscall_names_;  // by number
  std::unique_ptr<record::Symbolizer> symbols_;  // callchains and page faults: where addresses lie
  std::unique_ptr<record::Unwinder> unwinder_;   // --call-graph dwarf

  std::optional<EventSet> events(const EventWords& words, std::vector<TraceEvent::Kind>& kinds, int& status);
  runtime::Target target(std::size_t events);
  void load_enter_formats(const EventWords& words);
  runtime::SamplingOptions sampling(const EventWords& words, const std::vector<TraceEvent::Kind>& kinds,
                                    EventSet& set, const runtime::Target& t,
                                    const std::string& call_graph) const;
  TraceHost host_of();
  const record::Tracepoint* enter_format(std::string_view syscall);
  void start_symbols(const runtime::Sampler& sampler, const record::Formats& formats,
                     const runtime::Target& t, bool unwind);
  void loop(runtime::Sampler& sampler, const record::Formats& formats, SyscallTrace& trace);
};

std::optional<EventSet> Tracer::events(const EventWords& words, std::vector<TraceEvent::Kind>& kinds,
                                       int& status) {
  using Kind = TraceEvent::Kind;
  EventSet set;
  auto add = [&](const std::string& text, std::optional<Kind> kind) {
    EventSet one = resolve(text, machine_);
    kinds.insert(kinds.end(), one.events.size(), kind.value_or(Kind::tracepoint));
    set.append(std::move(one));
  };
  for (const auto& list : words.events) {
    try {
      add(list.text, std::nullopt);
    } catch (const Error& e) {  // drawn under the -e as written (its system call words left out to resolve)
      if (!e.positioned() || list.from.empty()) {
        status = report_error(e, list.written, ErrorFormat::text);
      } else {
        auto to = [&](std::uint32_t i) { return list.from[std::min<std::size_t>(i, list.from.size() - 1)]; };
        Span span{to(e.span().begin),
                  e.span().end > e.span().begin ? to(e.span().end - 1) + 1 : to(e.span().begin)};
        status = report_error(Error(e.kind(), e.message(), span, e.help()), list.written, ErrorFormat::text);
      }
      return std::nullopt;
    }
  }
  // perf: system calls unless --no-syscalls, or unless -e named only events (or -F only faults)
  bool syscalls = o_.syscalls_given
                      ? o_.syscalls
                      : !words.syscalls.empty() || (words.events.empty() && o_.pagefaults.empty());
  if (syscalls) {
    add("raw_syscalls:sys_enter", Kind::sys_enter);
    add("raw_syscalls:sys_exit", Kind::sys_exit);
  }
  if (o_.pagefaults == "maj" || o_.pagefaults == "all") add("major-faults/period=1/", Kind::major_fault);
  if (o_.pagefaults == "min" || o_.pagefaults == "all") add("minor-faults/period=1/", Kind::minor_fault);
  return set;
}

runtime::Target Tracer::target(std::size_t events) {
  if (!o_.tids.empty() || !o_.pids.empty()) {
    auto t = processes_target(o_.pids, o_.tids, o_.inherit);
    if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command);
    return t;
  }
  if (o_.all_cpus || !o_.cpus.empty() || o_.command.empty()) {
    auto t =
        runtime::Target::system_wide(o_.cpus.empty() ? std::vector<int>{} : runtime::parse_cpu_list(o_.cpus));
    if (!o_.cgroups.empty()) {
      std::vector<std::string> per_event = o_.cgroups;
      per_event.resize(events, o_.cgroups.size() == 1 ? o_.cgroups.front() : std::string());
      t.cgroups = runtime::open_cgroups(per_event, cgroup_fds_);
    }
    if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command);
    return t;
  }
  child_ = std::make_unique<runtime::Command>(o_.command);
  return runtime::Target::command(*child_, o_.inherit);
}

// The argument names of the system calls traced, read before anything is traced: libtraceevent's
// parser is tried in a child process first, which would be traced too if it ran later.
void Tracer::load_enter_formats(const EventWords& words) {
  std::vector<std::string> names, texts;
  for (const auto& [number, name] : syscall_names_) {
    bool listed = std::find(words.syscalls.begin(), words.syscalls.end(), number) != words.syscalls.end();
    if (!words.syscalls.empty() && listed == words.negated) continue;
    if (auto text = machine_.tracepoint_format("syscalls", fmt::format("sys_enter_{}", name))) {
      names.push_back(name);
      texts.push_back(std::move(*text));
    }
  }
  auto formats = enter_formats_.add_formats("syscalls", texts);  // refused ones: arguments as arg0..
  for (std::size_t i = 0; i < names.size(); ++i) enter_by_name_.emplace(names[i], formats[i]);
}

const record::Tracepoint* Tracer::enter_format(std::string_view syscall) {
  auto it = enter_by_name_.find(syscall);
  return it == enter_by_name_.end() ? nullptr : it->second;
}

// What existed before the trace began, for callchains and page faults (as perf synthesizes it).
void Tracer::start_symbols(const runtime::Sampler& sampler, const record::Formats& formats,
                           const runtime::Target& t, bool unwind) {
  symbols_ = std::make_unique<record::Symbolizer>();
  follow_existing(sampler, formats, t, *symbols_, nullptr);
  if (unwind) unwinder_ = std::make_unique<record::Unwinder>(*symbols_);
}

// Until the target has gone, the command has ended, --max-events is reached or a stop signal came. A
// trace that cannot be written ends it (the command too, as perf ends its workload), as an error.
void Tracer::loop(runtime::Sampler& sampler, const record::Formats& formats, SyscallTrace& trace) {
  // Each read takes the records of every buffer (one per CPU): they are printed in time order, as a
  // thread that moved between CPUs entered and left its calls, not buffer after buffer (TimeOrder: a
  // call's exit read from one CPU before its entry is, from another).
  struct Held {
    std::vector<std::byte> bytes;  // a copy: the buffers are reused once read
    record::Record record;         // decoded from `bytes` (a vector's move keeps its storage)
  };
  runtime::TimeOrder<Held> order;
  auto consume = [&](std::span<const std::byte> bytes) {
    Held h{{bytes.begin(), bytes.end()}, {}};
    try {
      formats.decode(h.bytes, 0, h.record);
    } catch (const record::DecodeError&) {
      return;
    }
    const auto* s = h.record.get<record::Sample>();
    std::uint64_t time = s ? s->time : h.record.sample_id.time;
    order.hold(time, std::move(h));
  };
  auto print = [&](Held& h) {
    if (trace.done()) return;
    if (symbols_) symbols_->apply(h.record);
    try {
      trace.add(h.record);
    } catch (const Error&) {  // the trace cannot be written: the command is not left running
      if (child_ && !child_->exited()) child_->signal(SIGTERM);
      throw;
    }
  };
  auto read = [&](bool last) {
    sampler.read(consume);
    if (last)
      order.flush(print);
    else
      order.round(print);
  };
  for (;;) {
    auto p = sampler.poll(100);
    bool end = p.state == runtime::Wakeup::target_gone || p.state == runtime::Wakeup::failed;
    read(end);
    if (end || trace.done()) break;
    if (child_ && child_->wait(0)) {
      read(true);
      break;
    }
    if (signals_received) {
      if (!child_) {
        read(true);
        break;
      }
      child_->signal(last_signal);
    }
  }
  if (child_ && !child_->exited() && trace.done()) child_->signal(SIGTERM);  // --max-events: done with it
}

// How the events are opened: what each sample holds (callchains as --call-graph says), one wakeup
// per sample, and the kernel filters: the system calls asked for, and, across the whole system, not
// this process's own calls (it would trace itself).
runtime::SamplingOptions Tracer::sampling(const EventWords& words, const std::vector<TraceEvent::Kind>& kinds,
                                          EventSet& set, const runtime::Target& t,
                                          const std::string& call_graph) const {
  runtime::SamplingOptions so;
  so.sample_type = record::sample_ip | record::sample_tid | record::sample_time | record::sample_cpu;
  if (!o_.pagefaults.empty()) so.sample_type |= record::sample_addr;
  so.period = 1;
  so.wakeup_events = 1;  // lines as they happen, as perf trace (no_buffering)
  so.pages = o_.pages;
  if (auto dwarf = dwarf_stack_size(call_graph)) {
    so.sample_type |= record::sample_callchain | record::sample_regs_user | record::sample_stack_user;
    so.sample_regs_user = user_regs_mask;
    so.sample_stack_user = *dwarf;
    so.exclude_callchain_user = true;
    so.mmap_data = true;  // an unwinder reads .eh_frame_hdr where it is mapped, which is not executable
  } else if (call_graph == "fp") {
    so.sample_type |= record::sample_callchain;
  }
  so.mmap_data = so.mmap_data || !o_.pagefaults.empty();  // faults name the data's mapping, as perf's
  // perf trace leaves the kernel's frames out of the system calls' chains (--kernel-syscall-graph)
  for (std::size_t i = 0; i < set.events.size(); ++i)
    if (kinds[i] == TraceEvent::Kind::sys_enter || kinds[i] == TraceEvent::Kind::sys_exit)
      set.events[i].attr.exclude_callchain_kernel = 1;
  // Across the whole system, this process's own system calls are left out (it would trace itself).
  std::string self = t.kind == runtime::Target::Kind::cpus ? fmt::format("common_pid != {}", ::getpid()) : "";
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    bool syscall = kinds[i] == TraceEvent::Kind::sys_enter || kinds[i] == TraceEvent::Kind::sys_exit;
    std::string filter = syscall ? syscall_filter(words, self) : set.events[i].attr.type == 2 ? self : "";
    so.filters.push_back(filter);
  }
  return so;
}

// What the printer asks of this machine: names of threads and fds from /proc, formats, system call
// names, and where addresses lie when callchains or faults are traced.
TraceHost Tracer::host_of() {
  TraceHost host{.comm = [](int tid) { return runtime::comm_of(tid); },
                 .fd_path = [](int pid, int fd) { return runtime::fd_path(pid, fd); },
                 .enter_format = [this](std::string_view name) { return enter_format(name); },
                 .syscall_name = [this](long number) -> std::optional<std::string> {
                   auto it = std::lower_bound(syscall_names_.begin(), syscall_names_.end(), number,
                                              [](const auto& e, long n) { return e.first < n; });
                   if (it == syscall_names_.end() || it->first != number) return std::nullopt;
                   return it->second;
                 },
                 .locate = {},
                 .user_frames = {}};
  if (symbols_)
    host.locate = [this](std::uint32_t pid, std::uint64_t address, std::uint16_t misc) {
      return symbols_->locate(pid, address, misc);
    };
  if (unwinder_)
    host.user_frames = [this](const record::Sample& s, std::vector<std::uint64_t>& frames) {
      unwinder_->unwind(s, "", 127, frames);
    };
  return host;
}

int Tracer::run() {
  syscall_names_ = kernel_syscalls(machine_);
  EventWords words = split_event_words(o_.events, syscall_names_);
  std::vector<TraceEvent::Kind> kinds;
  int status = 0;
  std::optional<EventSet> set = events(words, kinds, status);
  if (!set) return status;
  if (!o_.cgroups.empty() && !o_.all_cpus && o_.cpus.empty())
    throw Error(ErrorKind::usage, "-G/--cgroup: cgroups are traced across CPUs only: add -a or -C");
  if (std::find(kinds.begin(), kinds.end(), TraceEvent::Kind::sys_enter) != kinds.end())
    load_enter_formats(words);
  runtime::Target t = target(set->events.size());
  std::string call_graph = o_.call_graph.empty() && o_.max_stack ? "dwarf" : o_.call_graph;  // perf's
  runtime::SamplingOptions so = sampling(words, kinds, *set, t, call_graph);
  // The -o file is made, and a stop signal counted, before the events are opened, as perf does: a
  // Ctrl-C while they are set up (slow where there are many CPUs, or under emulation) ends the trace
  // with its summary, not perfspec by the signal with nothing written.
  if (!o_.output.empty()) {
    file_.reset(std::fopen(o_.output.c_str(), "w"));
    if (!file_)
      throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", o_.output, std::strerror(errno)));
    out_ = file_.get();
  }
  catch_stop_signals();
  auto sampler = runtime::Sampler::open(*set, t, so);
  if (!say_open_failures("trace", "trace", *set, sampler.failures(),
                         [&](std::size_t i) { return sampler.opened(i); }))
    return 3;
  record::Tracepoints formats_of_events = record::Tracepoints::from_tracefs(machine_, *set);
  record::Formats formats;
  std::vector<TraceEvent> trace_events;
  for (std::size_t i = 0; i < set->events.size(); ++i) {
    if (!sampler.opened(i)) continue;
    formats.add(sampler.attrs()[i], sampler.ids()[i]);
    const auto& e = set->events[i];
    trace_events.push_back({kinds[i], e.tracepoint.empty() ? e.name : e.tracepoint,
                            formats_of_events.find(e.attr), e.max_events});
  }
  if (!call_graph.empty() || !o_.pagefaults.empty())
    start_symbols(sampler, formats, t, !call_graph.empty() && call_graph != "fp");
  bool close_traced = words.syscalls.empty() || words.negated;
  if (auto close = spec::syscall_number("close"))
    for (long id : words.syscalls) close_traced |= !words.negated && id == *close;
  TraceOptions options{
      .summary = o_.summary_only || o_.with_summary || o_.errno_summary,
      .summary_only = o_.summary_only || (o_.errno_summary && !o_.with_summary),
      .errno_summary = o_.errno_summary,
      .failure_only = o_.failure_only,
      .min_duration_ms = o_.duration_ms,
      .max_events = o_.max_events,
      .show_comm = o_.comm,
      .multiple_threads = t.inherit || t.kind == runtime::Target::Kind::cpus || t.threads.size() > 1,
      .fd_paths = close_traced,
      .max_stack = o_.max_stack ? o_.max_stack : 127};
  TraceHost host = host_of();
  std::FILE* out = out_;
  std::string where = o_.output.empty() ? "standard error" : o_.output;
  SyscallTrace trace(std::move(trace_events), options, std::move(host), [out, where](std::string_view text) {
    // a trace that cannot be written is an error, never lines lost in silence (a full disk, /dev/full)
    if (!write_through_signals(out, text))
      throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", where, std::strerror(errno)));
  });
  if (t.kind == runtime::Target::Kind::cpus || !t.threads.empty())
    sampler.enable();  // a command of its own starts its events at exec; one beside -p/-a only times
  if (child_)
    if (int err = child_->start())
      throw Error(ErrorKind::usage,
                  fmt::format("cannot run '{}': {}", o_.command.front(), std::strerror(err)));
  loop(sampler, formats, trace);
  sampler.disable();
  trace.finish();
  if (file_ && std::fclose(file_.release()) != 0)
    throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", o_.output, std::strerror(errno)));
  if (auto l = sampler.losses(); l.lost || l.dropped)
    std::fprintf(stderr,
                 "perfspec trace: the kernel dropped %llu records into full buffers (-m for more pages)\n",
                 static_cast<unsigned long long>(std::max(l.lost, l.dropped)));
  if (child_) child_->wait();
  return 0;
}

}  // namespace

int run_trace(const TraceCliOptions& options) {
  int status = 0;
  {
    Tracer t(options);
    status = t.run();
  }
  if (options.command.empty()) end_by_stop_signal();
  return status;
}

}  // namespace perfspec::tools
