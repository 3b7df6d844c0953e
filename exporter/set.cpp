// SPDX-License-Identifier: MIT
// A set's life: opened for its target (each CPU, a cgroup on each CPU, a process and its threads), what
// could not be opened noted once, its target watched (a process that exits, a cgroup made again, a
// command that comes back), and the units its places are summed into.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "exporter/set.hpp"
#include "runtime/process.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {

using runtime::comm_of;
using runtime::numbered_entries;
using runtime::Process;
using runtime::process_state;
using runtime::threads_of;

std::string target_text(const SetConfig& s) {
  switch (s.target) {
    case SetConfig::Target::system: return "system";
    case SetConfig::Target::cgroup: return "cgroup " + s.cgroup.text;
    case SetConfig::Target::pid: return fmt::format("pid {}", s.pid);
    case SetConfig::Target::command: return "command " + s.command.text;
  }
  return "system";
}

namespace {

// The oldest process whose name is `comm` (as `pgrep -o`), or -1.
int find_command(const std::string& comm) {
  int best = -1;
  unsigned long long best_start = std::numeric_limits<unsigned long long>::max();
  for (int pid : numbered_entries("/proc")) {
    auto name = comm_of(pid);
    if (!name || *name != comm) continue;
    auto start = runtime::start_ticks(pid);
    if (!start) continue;
    if (process_state(pid) != Process::running) continue;
    if (*start < best_start || (*start == best_start && pid < best)) {
      best_start = *start;
      best = pid;
    }
  }
  return best;
}

}  // namespace

prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void add(prometheus::MetricFamily& f, Labels labels, double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

BaseUnit base_unit(const ResolvedEvent& e) {
  if (e.tool == ToolEvent::duration_time) return {"seconds_total", 1.0, {}, 1e9};
  // The software clocks count nanoseconds (perf shows them in msec).
  if (e.attr.type == 1 && (e.attr.config == 0 || e.attr.config == 1)) return {"seconds_total", 1.0, {}, 1e9};
  const std::string& u = e.unit;
  const double s = e.scale;
  if (u.empty() && s == 1.0) return {"total", 1.0, {}};
  if (u == "Joules" || u == "joules" || u == "J") return {"joules_total", s, {}};
  if (u == "MiB") return {"bytes_total", s * 1048576.0, {}};
  if (u == "KiB") return {"bytes_total", s * 1024.0, {}};
  if (u == "GiB") return {"bytes_total", s * 1073741824.0, {}};
  if (u == "MB") return {"bytes_total", s * 1e6, {}};
  if (u == "Bytes" || u == "bytes" || u == "B") return {"bytes_total", s, {}};
  if (u == "ns") return {"seconds_total", s, {}, 1e9};
  if (u == "us") return {"seconds_total", s, {}, 1e6};
  if (u == "ms" || u == "msec") return {"seconds_total", s, {}, 1e3};
  return {"scaled_total", s, u};
}

std::string SetState::make_key() const {
  std::string k =
      fmt::format("{}|{}|{}|{}\n", target_text(config), cgroup_path, config.pid, config.cpus.text);
  for (const auto& e : set.events) {
    auto bytes = attr_to_bytes(e.attr);
    for (auto b : bytes) k += fmt::format("{:02x}", static_cast<unsigned>(b));
    k += fmt::format(" {} {}\n", e.leader, e.name);
  }
  return k;
}

std::string failure_reason(const runtime::Failure& f) {
  std::string reason = f.hint.empty() ? f.meaning : f.hint;
  if (!f.detail.empty()) reason += " (" + f.detail + ")";
  return reason;
}

// After an open: each event's failure and whether it opened anywhere; each event that cannot be
// counted said once in the log (the series say it on every scrape); a set none of whose events opened
// is not up, with the first reason.
namespace {
void note_failures(SetState& s, const Log& log) {
  const std::size_t n = s.set.events.size();
  s.failures.assign(n, std::nullopt);
  s.opened_anywhere.assign(n, 0);
  bool any = false;
  std::string first;
  for (std::size_t e = 0; e < n; ++e) {
    if (s.set.events[e].tool != ToolEvent::none) continue;  // not opened: counted by the exporter
    for (const auto& c : s.counters) {
      if (c.opened(e)) s.opened_anywhere[e] = 1;
      if (!s.failures[e] && c.failures()[e]) s.failures[e] = c.failures()[e];
    }
    any = any || s.opened_anywhere[e];
    if (!s.failures[e]) continue;
    const auto& f = *s.failures[e];
    std::string why = fmt::format("{}: {}", f.name, failure_reason(f));
    if (first.empty()) first = fmt::format("{}: {}", spec::printable(s.set.events[e].name), why);
    log(fmt::format("set '{}': '{}' cannot be counted{}: {}", spec::printable(s.config.name),
                    spec::printable(s.set.events[e].name), s.opened_anywhere[e] ? " on some CPUs" : "",
                    spec::printable(why)));
  }
  if (!any && !first.empty()) {
    s.up = false;
    s.nothing_opened = true;
    s.down = "no event of the set could be opened: " + first;
  }
}

}  // namespace

std::size_t open_fds() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    if (n > 0) --n;  // the directory's own fd
  }
  return n;
}

namespace {

// Whether `needed` more descriptors leave fds_for_serving under the soft RLIMIT_NOFILE; else why not.
std::string fds_short(std::size_t needed) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  const std::size_t open = open_fds();
  if (open + needed + fds_for_serving <= limit.rlim_cur) return {};
  return fmt::format(
      "its {} counters would leave fewer than {} of RLIMIT_NOFILE's {} file descriptors for serving ({} "
      "open): raise the limit (LimitNOFILE= in its systemd unit, ulimit -n)",
      needed, fds_for_serving, limit.rlim_cur, open);
}

// The same for the counters of `set` on `target`: one descriptor per event and CPU (per thread of a
// process) at most.
std::string fds_short(const EventSet& set, const runtime::Target& target) {
  const std::size_t places =
      target.kind == runtime::Target::Kind::cpus
          ? (target.cpus.empty() ? runtime::system_calls().online_cpus().size() : target.cpus.size())
          : std::max<std::size_t>(1, target.threads.size());
  return fds_short(set.events.size() * places);
}

}  // namespace

void open_set(SetState& s, const Log& log) {
  s.counters.clear();
  s.counter_cpu.clear();
  s.up = s.nothing_opened = s.computed = false;
  s.down.clear();
  s.base.clear();
  s.values.clear();
  runtime::Target target;
  runtime::Fd cgroup;  // the cgroup directory while its counters open (closed on every path out)
  switch (s.config.target) {
    case SetConfig::Target::system: target = runtime::Target::system_wide(s.cpus); break;
    case SetConfig::Target::cgroup: {
      cgroup = runtime::Fd(runtime::system_calls(),
                           ::open(s.cgroup_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!cgroup) {
        s.down = fmt::format("cgroup {} cannot be opened: {}", s.config.cgroup.text, std::strerror(errno));
        return;
      }
      struct stat st {};
      ::fstat(cgroup.get(), &st);
      s.cgroup_inode = st.st_ino;
      target = runtime::Target::system_wide(s.cpus);
      target.cgroups.assign(s.set.events.size(), cgroup.get());
      break;
    }
    case SetConfig::Target::pid:
    case SetConfig::Target::command: {
      s.pid = s.config.target == SetConfig::Target::pid ? s.config.pid : find_command(s.config.command.text);
      if (s.pid < 0) {
        s.down = fmt::format("no process named '{}'", s.config.command.text);
        return;
      }
      if (process_state(s.pid) != Process::running) {
        s.down = fmt::format("no process with pid {}", s.pid);
        return;
      }
      target = runtime::Target::process(s.pid, true);
      target.threads = threads_of(s.pid);
      break;
    }
  }
  // Members that would count on other CPUs than their leader count alone, as perf stat has them.
  for (const auto& u : runtime::ungroup_by_cpus(s.set, target))
    log(fmt::format(
        "set '{}': grouped events cpus do not match: '{}' (CPUs {}) counts alone, not in the "
        "group of '{}' (CPUs {})",
        spec::printable(s.config.name), spec::printable(u.member), spec::cpu_list_text(u.member_cpus),
        spec::printable(u.leader), spec::cpu_list_text(u.leader_cpus)));
  if (std::string why = fds_short(s.set, target); !why.empty()) {
    s.down = why;
    log(fmt::format("set '{}' not opened: {}", spec::printable(s.config.name), why));
    s.opened = s.base_time = Clock::now();
    return;
  }
  try {
    if (target.kind == runtime::Target::Kind::cpus) {
      const std::vector<int> cpus = target.cpus.empty() ? runtime::system_calls().online_cpus() : target.cpus;
      for (int cpu : cpus) {
        runtime::Target one = target;
        one.cpus.assign(1, cpu);  // (not `= {cpu}`: GCC 14 -O3 misreads it as -Warray-bounds)
        s.counters.push_back(runtime::Counters::open(s.set, one));
        s.counter_cpu.push_back(cpu);
      }
    } else {
      s.counters.push_back(runtime::Counters::open(s.set, target));
      s.counter_cpu.push_back(-1);
    }
    for (auto& c : s.counters) c.enable();
    s.places.resize(s.counters.size());
    s.up = true;
    note_failures(s, log);
  } catch (const Error& e) {
    s.counters.clear();
    s.counter_cpu.clear();
    s.down = e.message();
  }
  s.opened = s.base_time = Clock::now();
}

void check_target(SetState& s, const Log& log) {
  switch (s.config.target) {
    case SetConfig::Target::system: return;
    case SetConfig::Target::cgroup: {
      struct stat st {};
      if (::stat(s.cgroup_path.c_str(), &st) != 0) {
        s.up = false;
        s.down = fmt::format("cgroup {} is gone", s.config.cgroup.text);
        return;
      }
      if (!s.is_open() || st.st_ino != s.cgroup_inode) open_set(s, log);  // made again: a new cgroup
      return;
    }
    case SetConfig::Target::pid:
      if ((s.up || s.nothing_opened) && process_state(s.pid) != Process::running) {
        s.up = s.nothing_opened = false;
        s.down = fmt::format("process {} has exited", s.pid);
      }
      return;
    case SetConfig::Target::command: {
      // open for its process (counting, or with nothing that could be opened: not opened again each scrape)
      const bool open_here = s.up || s.nothing_opened;
      if (open_here && process_state(s.pid) == Process::running && comm_of(s.pid) == s.config.command.text)
        return;
      if (open_here) {
        s.up = s.nothing_opened = false;
        s.down = fmt::format("process {} ({}) has exited", s.pid, s.config.command.text);
      }
      if (find_command(s.config.command.text) >= 0) open_set(s, log);
      return;
    }
  }
}

std::pair<std::string, Labels> unit_of(const runtime::Place& p, Grouping g,
                                       const std::vector<spec::CpuTopology>& topology) {
  if (g == Grouping::total || p.cpu < 0) return {"", {}};
  if (g == Grouping::cpu) return {fmt::format("{:09}", p.cpu), {{"cpu", std::to_string(p.cpu)}}};
  spec::CpuTopology t;
  for (const auto& x : topology)
    if (x.cpu == p.cpu) t = x;
  if (g == Grouping::socket)
    return {fmt::format("{:09}", t.socket + 1), {{"socket", std::to_string(t.socket)}}};
  return {fmt::format("{:09}.{:09}.{:09}", t.socket + 1, t.die + 1, t.core + 1),
          {{"socket", std::to_string(t.socket)},
           {"die", std::to_string(t.die)},
           {"core", std::to_string(t.core)}}};
}

}  // namespace perfspec::exporter
