// SPDX-License-Identifier: MIT
// perf stat's counting run (builtin-stat.c's __run_perf_stat and what it reads): the target made from
// the options, cgroups opened, the set opened and enabled, the command run, counts read and grouped,
// and the tool events computed from the clock and /proc.
#include "perfspec/stat_counting.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "runtime/process.hpp"

namespace perfspec {

namespace {

using Clock = std::chrono::steady_clock;
using Times = std::pair<std::uint64_t, std::uint64_t>;  // user, system; ns

}  // namespace

struct StatCounting::Impl {
  const spec::Machine& machine;
  StatTarget options;
  EventSet set;
  std::vector<runtime::Ungrouped> ungrouped;
  std::unique_ptr<runtime::Command> child;
  std::optional<runtime::Counters> counters;
  std::vector<runtime::PlaceCounts> places;
  std::map<int, std::string> comms;  // --per-thread: each thread's name as last seen
  Clock::time_point start = Clock::now();
  Times times_at_start{};
  bool enabled = false;
  bool on_exec = false;  // the command's exec starts counting
  // The command is what is counted (else it runs alongside a process, threads or CPUs counted, and its
  // end ends the count: perf stat -p PID sleep 10)
  bool counts_command() const {
    return child && !options.system_wide && !options.pid && options.threads.empty();
  }

  Impl(EventSet s, const StatTarget& t, const spec::Machine& m) : machine(m), options(t), set(std::move(s)) {}

  runtime::Target target(std::vector<runtime::Fd>& cgroup_fds);
  runtime::Target process_target() const;
  runtime::Target threads_target();
  std::string comm(int tid);
  std::optional<Times> cpu_times() const;
  void fill_tool_events(StatReport& r) const;
  StatReport read();
};

runtime::Target StatCounting::Impl::process_target() const {
  const int pid = *options.pid;
  switch (runtime::process_state(pid)) {
    case runtime::Process::gone: throw Error(ErrorKind::usage, fmt::format("no process with pid {}", pid));
    case runtime::Process::zombie:
      throw Error(
          ErrorKind::usage,
          fmt::format("process {} has exited (a zombie its parent has not reaped): nothing to count", pid));
    case runtime::Process::running: break;
  }
  runtime::Target t = runtime::Target::process(pid, options.inherit);
  t.threads = runtime::threads_of(pid);
  return t;
}

runtime::Target StatCounting::Impl::threads_target() {
  runtime::Target t = runtime::Target::process(0, options.inherit);
  for (int tid : options.threads) {
    if (tid <= 0 || runtime::process_state(tid) == runtime::Process::gone)
      throw Error(ErrorKind::usage, fmt::format("no thread with id {}", tid));
    t.threads.push_back(tid);
  }
  t.pid = t.threads.front();
  return t;
}

runtime::Target StatCounting::Impl::target(std::vector<runtime::Fd>& cgroup_fds) {
  const StatTarget& o = options;
  runtime::Target t;
  if (o.pid) {
    t = process_target();
  } else if (!o.threads.empty()) {
    t = threads_target();
  } else if (o.aggregation == Aggregation::thread) {
    // --per-thread system-wide: every thread there is now, the command's (held before exec) among
    // them, each counted wherever it runs. A thread that exits before it is opened is skipped by the
    // runtime; one created later counts in its creator's line (inherit) as perf's does.
    if (!o.command.empty()) child = std::make_unique<runtime::Command>(o.command);
    auto threads = runtime::all_threads();
    if (threads.empty()) throw Error(ErrorKind::machine, "no thread is listed in /proc");
    t = runtime::Target::process(threads.front(), o.inherit);
    t.threads = std::move(threads);
    if (child) return t;  // enabled when counting starts, not at the command's exec
  } else if (o.system_wide) {
    t = runtime::Target::system_wide(o.cpus);
    if (!options.cgroups.empty()) t.cgroups = runtime::open_cgroups(options.cgroups, cgroup_fds);
  }
  if (!o.command.empty()) {
    child = std::make_unique<runtime::Command>(o.command);
    if (!o.system_wide && !o.pid && o.threads.empty()) t = runtime::Target::command(*child, o.inherit);
  }
  if (o.enable_later) t.enable_on_exec = false;
  return t;
}

// A thread's name as last seen: a thread that has exited (the command, read after it ended) keeps
// the name it had.
std::string StatCounting::Impl::comm(int tid) {
  if (auto now = runtime::comm_of(tid)) return comms[tid] = *now;
  auto it = comms.find(tid);
  return it != comms.end() ? it->second : "?";
}

// User and system CPU time so far, ns, of what is counted: the threads of -t, the process (and its
// waited-for children), or every CPU. nullopt when what is counted has exited (its times can no
// longer be read).
std::optional<Times> StatCounting::Impl::cpu_times() const {
  std::optional<runtime::CpuTimes> t;
  if (!options.threads.empty()) {  // -t: each thread's own times
    t = runtime::CpuTimes{};
    for (int tid : options.threads) {
      auto one = runtime::thread_cpu_times(tid);
      if (!one) return std::nullopt;
      t->user_ns += one->user_ns, t->system_ns += one->system_ns;
    }
  } else if (int pid = options.pid ? *options.pid : counts_command() ? child->pid() : 0) {
    t = runtime::process_cpu_times(pid);
  } else {
    t = runtime::system_cpu_times();
  }
  if (!t) return std::nullopt;
  return Times{t->user_ns, t->system_ns};
}

// perf's tool events: duration_time is the wall time since counting started, user_time and
// system_time the CPU time of what is counted (a command's own rusage once it has ended). Shown in the
// first aggregate only, as perf shows them.
void StatCounting::Impl::fill_tool_events(StatReport& r) const {
  const auto& events = counters->events().events;
  const auto since_start = static_cast<std::uint64_t>(std::chrono::nanoseconds(Clock::now() - start).count());
  for (std::size_t e = 0; e < events.size(); ++e) {
    if (events[e].tool == ToolEvent::none) continue;
    std::optional<std::uint64_t> value;
    if (events[e].tool == ToolEvent::duration_time) {
      value = since_start;
    } else if (counts_command() && child->exited()) {
      double s = events[e].tool == ToolEvent::user_time ? child->user_seconds() : child->system_seconds();
      value = static_cast<std::uint64_t>(s * 1e9);
    } else if (auto now = cpu_times()) {
      auto [user, sys] = *now;
      auto [user0, sys0] = times_at_start;
      value =
          events[e].tool == ToolEvent::user_time ? user - std::min(user, user0) : sys - std::min(sys, sys0);
    }
    for (std::size_t u = 0; u < r.units.size(); ++u) {
      StatCell& cell = r.units[u].cells[e];
      cell.here = u == 0;
      cell.members = 1;
      runtime::Count& c = cell.count;
      c = runtime::Count{};
      c.state = runtime::Count::State::counted;
      c.raw = value.value_or(0);
      if (!value) {
        // Another process's times are in /proc only while it lives: after it, no value is honest.
        c.state = runtime::Count::State::not_counted;
        auto words = spec::failure_words({.what = spec::FailureCase::exited});
        c.failure = runtime::Failure{0, words.name, words.meaning, words.hint, -1, words.detail};
      }
      c.time_enabled = c.time_running = since_start;
    }
  }
}

StatReport StatCounting::Impl::read() {
  if (!counters) return StatReport{};
  StatReport r;
  if (options.aggregation == Aggregation::global) {
    r = global_report(counters->read());
  } else {
    counters->read_places(places);
    r = aggregate(
        places, options.aggregation, machine.cpu_topology(), [this](int tid) { return comm(tid); },
        options.cache_level);
    // Every thread of the system: perf shows only what a thread counted, not hundreds of zeros (nor
    // of <not counted> for threads that never ran). An event that could not be opened is shown once,
    // in the first line, not once per thread.
    if (options.aggregation == Aggregation::thread && options.system_wide)
      for (std::size_t k = 0; k < r.units.size(); ++k)
        for (auto& c : r.units[k].cells)
          if (c.count.raw == 0 && (k > 0 || c.count.state != runtime::Count::State::not_supported))
            c.here = false;
  }
  fill_tool_events(r);
  return r;
}

namespace {

// Targets that do not go together would otherwise count something else than asked, silently.
void check_target(const StatTarget& t) {
  const bool task = t.pid || !t.threads.empty();
  if (t.pid && !t.threads.empty())
    throw Error(ErrorKind::usage, "a StatTarget counts a process (pid) or threads, not both");
  if (task && t.system_wide)
    throw Error(ErrorKind::usage, "a StatTarget with a pid or threads counts them: no system_wide");
  if (!task && !t.system_wide && t.command.empty())
    throw Error(ErrorKind::usage,
                "nothing to count: a StatTarget needs a pid, threads, system_wide or a command");
  if (!t.system_wide && (!t.cpus.empty() || !t.cgroups.empty()))
    throw Error(ErrorKind::usage, "cpus and cgroups are counted system-wide: set system_wide");
}

}  // namespace

StatCounting::StatCounting(EventSet set, const StatTarget& target, const spec::Machine& machine) {
  check_target(target);
  impl_ = std::make_unique<Impl>(std::move(set), target, machine);
  std::vector<runtime::Fd> cgroup_fds;  // open until the counters are
  runtime::Target t = impl_->target(cgroup_fds);
  // A group whose members count on other CPUs than its leader: each such member alone.
  impl_->ungrouped = runtime::ungroup_by_cpus(impl_->set, t);
  if (!impl_->set.events.empty())
    impl_->counters.emplace(
        runtime::Counters::open(impl_->set, t, runtime::OpenOptions{.filters = target.filters}));
  impl_->on_exec = t.enable_on_exec;
}

StatCounting::~StatCounting() = default;

const std::vector<runtime::Ungrouped>& StatCounting::ungrouped() const { return impl_->ungrouped; }
const EventSet& StatCounting::events() const {
  return impl_->counters ? impl_->counters->events() : impl_->set;
}
std::size_t StatCounting::open_fds() const { return impl_->counters ? impl_->counters->open_fds() : 0; }
bool StatCounting::has_command() const { return impl_->child != nullptr; }

int StatCounting::start() {
  Impl& I = *impl_;
  I.start = Clock::now();
  I.times_at_start = I.counts_command() ? Times{} : I.cpu_times().value_or(Times{});
  if (I.counters && !I.options.enable_later && !I.on_exec) I.counters->enable();
  I.enabled = !I.options.enable_later;  // now, or at exec
  if (I.child)
    if (int e = I.child->start()) {
      I.child->wait();
      return e;
    }
  // --per-thread: each thread's name now, for lines read after it has gone; the command's once it has
  // exec'd.
  if (I.options.aggregation == Aggregation::thread && I.counters)
    for (const auto& p : I.counters->places()) I.comm(p.thread);
  return 0;
}

void StatCounting::enable() {
  if (impl_->counters) impl_->counters->enable();
  impl_->enabled = true;
}
void StatCounting::disable() {
  if (impl_->counters) impl_->counters->disable();
  impl_->enabled = false;
}
bool StatCounting::enabled() const { return impl_->enabled; }
double StatCounting::seconds() const {
  return std::chrono::duration<double>(Clock::now() - impl_->start).count();
}
void StatCounting::restart_clock() { impl_->start = Clock::now(); }

bool StatCounting::wait(int ms) {
  Impl& I = *impl_;
  if (I.child) return I.child->wait(std::max(0, ms));
  ::usleep(static_cast<useconds_t>(std::max(1, ms)) * 1000);
  if (I.options.pid) return !runtime::alive(*I.options.pid);
  if (!I.options.threads.empty())
    return std::none_of(I.options.threads.begin(), I.options.threads.end(), runtime::alive);
  return false;
}

void StatCounting::signal(int sig) {
  if (!impl_->child) return;
  impl_->child->signal(sig);
  if (sig == SIGKILL) impl_->child->wait();
}

StatReport StatCounting::read() { return impl_->read(); }

StatReport StatCounting::finish(StatRun& run, bool stop_command) {
  Impl& I = *impl_;
  if (I.counters) I.counters->disable();
  I.enabled = false;
  StatReport report = I.read();
  run.elapsed_seconds = seconds();
  if (stop_command && I.child) {
    I.child->signal(SIGTERM);
    I.child->wait();
  }
  if (I.child) {
    if (I.counts_command()) {  // perf shows the command's times only when it counts the command
      run.user_seconds = I.child->user_seconds();
      run.system_seconds = I.child->system_seconds();
    }
    run.exit_status = I.child->exit_status();
  }
  return report;
}

int StatCounting::exit_status() const { return impl_->child ? impl_->child->exit_status() : 0; }

}  // namespace perfspec
