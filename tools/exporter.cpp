// SPDX-License-Identifier: MIT
#include "tools/exporter.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <sstream>

#include <CivetServer.h>
#include <civetweb.h>
#include <fmt/format.h>
#include <prometheus/exposer.h>

#include "perfspec/errno_facts.hpp"
#include "perfspec/metric.hpp"
#include "perfspec/perfspec.hpp"
#include "perfspec/runtime.hpp"
#include "spec/printable.hpp"
#include "tools/exit_status.hpp"
#include "tools/openmetrics.hpp"
#include "tools/process.hpp"

namespace perfspec::tools::exporter {

using Labels = std::vector<prometheus::ClientMetric::Label>;
using Clock = std::chrono::steady_clock;

namespace {

// One event's numbers summed over the places of a unit.
struct Acc {
  std::uint64_t raw = 0, enabled = 0, running = 0;
  bool here = false;  // opened at one place of the unit at least
};

// A unit of a set's aggregation (a CPU, a core, a socket, or everything) and its sums.
struct Unit {
  Labels labels;
  std::vector<Acc> events;
};
using Units = std::map<std::string, Unit>;  // by a key of the labels, in label order

std::string target_text(const SetConfig& s) {
  switch (s.target) {
    case SetConfig::Target::system: return "system";
    case SetConfig::Target::cgroup: return "cgroup " + s.cgroup.text;
    case SetConfig::Target::pid: return fmt::format("pid {}", s.pid);
    case SetConfig::Target::command: return "command " + s.command.text;
  }
  return "system";
}

// The oldest process whose name is `comm` (as `pgrep -o`), or -1.
int find_command(const std::string& comm) {
  int best = -1;
  unsigned long long best_start = std::numeric_limits<unsigned long long>::max();
  for (int pid : numbered_entries("/proc")) {
    auto name = comm_of(pid);
    if (!name || *name != comm) continue;
    std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
    if (!f) continue;
    char buf[1024] = {};
    std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    std::string_view st(buf, n);
    auto paren = st.rfind(')');
    if (paren == std::string_view::npos) continue;
    // Fields after the name: state is field 3; starttime is field 22.
    std::istringstream in(std::string(st.substr(paren + 2)));
    std::string field;
    unsigned long long start = 0;
    for (int i = 3; i <= 22 && in >> field; ++i)
      if (i == 22) start = std::strtoull(field.c_str(), nullptr, 10);
    if (process_state(pid) != Process::running) continue;
    if (start < best_start || (start == best_start && pid < best)) {
      best_start = start;
      best = pid;
    }
  }
  return best;
}

std::size_t fds_of_self() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    if (n > 0) --n;  // the directory's own fd
  }
  return n;
}

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

}  // namespace

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

// One configured set: what it resolved to, and once opened its counters and its metric window.
struct SetState {
  SetConfig config;
  EventSet set;
  std::size_t user_events = 0;  // the first events of `set` are the file's; then the metrics' inputs
  struct PlanAt {
    metric::Plan plan;
    std::size_t offset = 0;
  };
  std::vector<PlanAt> plans;
  std::string cgroup_path;  // the cgroup's directory
  std::vector<int> cpus;    // empty: every online CPU

  // Open state.
  // One Counters per CPU (a system-wide or cgroup set, so that each CPU's counters are read on that
  // CPU: reading a counter that counts on another CPU costs an interrupt of that CPU, per event), or
  // one (a process).
  std::vector<runtime::Counters> counters;
  std::vector<int> counter_cpu;  // the CPU of each (-1: a process's)
  bool is_open() const { return !counters.empty(); }
  ino_t cgroup_inode = 0;
  int pid = -1;
  bool up = false;
  bool nothing_opened = false;  // open for its target, but none of its events opened (then not up)
  std::string down;             // why not up
  Clock::time_point opened{};

  // The metric window: the sums at its start, and the values computed over the last one.
  Clock::time_point base_time{};
  Units base;
  std::map<std::string, std::vector<metric::Value>> values;  // by unit key
  bool computed = false;

  std::vector<std::vector<runtime::PlaceCounts>> places;  // per Counters: its last read
  // Per event, found at open: why it could not be opened (the first Counters' reason), and whether it
  // opened anywhere.
  std::vector<std::optional<runtime::Failure>> failures;
  std::vector<char> opened_anywhere;
  std::uint64_t read_errors = 0;

  // What decides the counters this set opens (its target and every event's attr and group): equal
  // keys across a reload keep the counters open. Made once by prepare(), never changed.
  std::string key;
  std::string make_key() const {
    std::string k =
        fmt::format("{}|{}|{}|{}\n", target_text(config), cgroup_path, config.pid, config.cpus.text);
    for (const auto& e : set.events) {
      auto bytes = attr_to_bytes(e.attr);
      for (auto b : bytes) k += fmt::format("{:02x}", static_cast<unsigned>(b));
      k += fmt::format(" {} {}\n", e.leader, e.name);
    }
    return k;
  }
};

State::State() = default;
State::~State() = default;
const Config& State::config() const { return config_; }

std::unique_ptr<State> State::prepare(Config config, const spec::Machine& machine) {
  std::unique_ptr<State> state(new State());
  state->machine_ = &machine;
  const Config& c = config;
  std::string root;
  std::vector<int> online;
  for (const auto& sc : c.sets) {
    auto s = std::make_unique<SetState>();
    s->config = sc;
    const bool on_cpus = sc.target == SetConfig::Target::system || sc.target == SetConfig::Target::cgroup;
    if (!sc.cpus.text.empty()) {
      try {
        s->cpus = spec::parse_cpu_list(sc.cpus.text);
      } catch (const Error& e) {
        throw error_at(c, sc.cpus.origin, e.positioned() ? e.span().begin : 0, ErrorKind::bad_value,
                       e.message(), e.help());
      }
      if (online.empty()) online = runtime::system_calls().online_cpus();
      for (int cpu : s->cpus)
        if (std::find(online.begin(), online.end(), cpu) == online.end())
          throw error_at(c, sc.cpus.origin, 0, ErrorKind::bad_value,
                         fmt::format("CPU {} does not exist or is offline", cpu));
      if (s->cpus.empty())
        throw error_at(c, sc.cpus.origin, 0, ErrorKind::bad_value, "the CPU list is empty");
    }
    // The file's events, one string at a time so that each error points into its own string.
    std::map<std::string, const Located*> names;
    for (const auto& text : sc.events) {
      EventSet one;
      try {
        one = resolve(text.text, machine);
      } catch (const Error& e) {
        throw error_at(c, text.origin, e.positioned() ? e.span().begin : 0, e.kind(), e.message(), e.help());
      }
      for (const auto& e : one.events) {
        if (e.tool == ToolEvent::user_time || e.tool == ToolEvent::system_time)
          throw error_at(c, text.origin, e.span.begin, ErrorKind::bad_value,
                         fmt::format("'{}' is counted by perfspec stat for the command it runs; the exporter "
                                     "runs none",
                                     e.name),
                         "task-clock counts a target's CPU time");
        auto [it, fresh] = names.emplace(e.name, &text);
        if (!fresh)
          throw error_at(
              c, text.origin, e.span.begin, ErrorKind::bad_value,
              fmt::format("event '{}' is already in set '{}' (line {}): its series would be the same",
                          spec::printable(e.name), spec::printable(sc.name), it->second->origin.line),
              "give one of them another name with the name= term");
      }
      s->set.append(std::move(one));
    }
    s->user_events = s->set.events.size();
    // Metric requests, with the file's own [[metric]] definitions.
    metric::Options mo;
    mo.extra = c.metrics;
    mo.target.system_wide = on_cpus;
    mo.target.cpus = s->cpus;
    for (const auto& request : sc.metrics) {
      metric::Plan plan;
      try {
        plan = metric::plan(request.text, machine, mo);
      } catch (const metric::MetricError& e) {
        if (e.metric().empty())
          throw error_at(c, request.origin, e.positioned() ? e.span().begin : 0, e.kind(), e.message(),
                         e.help());
        if (e.origin().file == c.file && e.origin().line)  // a [[metric]] of this file
          throw error_at(c, e.origin(), e.positioned() ? e.span().begin : 0, e.kind(),
                         fmt::format("metric '{}': {}", spec::printable(e.metric()), e.message()), e.help());
        // A table's metric: its own file and text, and where the file asked for it.
        throw ConfigError(e.kind(), error_at(c, request.origin, 0, e.kind(),
                                             fmt::format("metric '{}' does not resolve on this machine",
                                                         spec::printable(e.metric())))
                                            .what() +
                                        e.rendered());
      } catch (const Error& e) {
        throw error_at(c, request.origin, e.positioned() ? e.span().begin : 0, e.kind(), e.message(),
                       e.help());
      }
      std::size_t offset = s->set.events.size();
      s->set.append(EventSet(plan.events));
      s->plans.push_back({std::move(plan), offset});
    }
    if (sc.target == SetConfig::Target::cgroup) {
      if (root.empty()) root = cgroup_root();
      if (root.empty())
        throw error_at(c, sc.cgroup.origin, 0, ErrorKind::machine,
                       "no cgroup file system is mounted (see /proc/mounts)");
      std::string rel = sc.cgroup.text;
      while (rel.starts_with('/')) rel.erase(0, 1);
      s->cgroup_path = rel.empty() ? root : root + "/" + rel;
      struct stat st {};
      const bool there = ::stat(s->cgroup_path.c_str(), &st) == 0;
      if (!there || !S_ISDIR(st.st_mode))
        throw error_at(
            c, sc.cgroup.origin, 0, ErrorKind::unknown_name,
            fmt::format("no cgroup '{}' ({}: {})", spec::printable(sc.cgroup.text),
                        spec::printable(s->cgroup_path), there ? "not a directory" : std::strerror(errno)),
            fmt::format("cgroups are under {}", root));
    }
    s->key = s->make_key();
    state->sets_.push_back(std::move(s));
  }
  state->config_ = std::move(config);
  return state;
}

namespace {

// What perfspec stat says of an event that could not be opened: the reason for this machine (the
// errno's hint), else the errno's meaning, and the detail.
std::string failure_reason(const runtime::Failure& f) {
  std::string reason = f.hint.empty() ? f.meaning : f.hint;
  if (!f.detail.empty()) reason += " (" + f.detail + ")";
  return reason;
}

// After an open: each event's failure and whether it opened anywhere; each event that cannot be
// counted said once in the log (the series say it on every scrape); a set none of whose events opened
// is not up, with the first reason.
void note_failures(SetState& s) {
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
    std::fprintf(stderr, "perfspec exporter: set '%s': '%s' cannot be counted%s: %s\n",
                 spec::printable(s.config.name).c_str(), spec::printable(s.set.events[e].name).c_str(),
                 s.opened_anywhere[e] ? " on some CPUs" : "", spec::printable(why).c_str());
  }
  if (!any && !first.empty()) {
    s.up = false;
    s.nothing_opened = true;
    s.down = "no event of the set could be opened: " + first;
  }
}

// Open `s` for its target now (again, when its process or cgroup came back).
void open_set(SetState& s) {
  s.counters.clear();
  s.counter_cpu.clear();
  s.up = false;
  s.nothing_opened = false;
  s.down.clear();
  s.base.clear();
  s.values.clear();
  s.computed = false;
  runtime::Target target;
  int cgroup_fd = -1;
  switch (s.config.target) {
    case SetConfig::Target::system: target = runtime::Target::system_wide(s.cpus); break;
    case SetConfig::Target::cgroup: {
      cgroup_fd = ::open(s.cgroup_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (cgroup_fd < 0) {
        s.down = fmt::format("cgroup {} cannot be opened: {}", s.config.cgroup.text, std::strerror(errno));
        return;
      }
      struct stat st {};
      ::fstat(cgroup_fd, &st);
      s.cgroup_inode = st.st_ino;
      target = runtime::Target::system_wide(s.cpus);
      target.cgroups.assign(s.set.events.size(), cgroup_fd);
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
    std::fprintf(
        stderr,
        "perfspec exporter: set '%s': grouped events cpus do not match: '%s' (CPUs %s) counts alone, "
        "not in the group of '%s' (CPUs %s)\n",
        spec::printable(s.config.name).c_str(), spec::printable(u.member).c_str(), u.member_cpus.c_str(),
        spec::printable(u.leader).c_str(), u.leader_cpus.c_str());
  try {
    if (target.kind == runtime::Target::Kind::cpus) {
      const std::vector<int> cpus = target.cpus.empty() ? runtime::system_calls().online_cpus() : target.cpus;
      for (int cpu : cpus) {
        runtime::Target one = target;
        one.cpus = {cpu};
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
    note_failures(s);
  } catch (const Error& e) {
    s.counters.clear();
    s.counter_cpu.clear();
    s.down = e.message();
  }
  if (cgroup_fd >= 0) ::close(cgroup_fd);
  s.opened = s.base_time = Clock::now();
}

// Whether the target of an open set is still there; when it is gone, why.
void check_target(SetState& s) {
  switch (s.config.target) {
    case SetConfig::Target::system: return;
    case SetConfig::Target::cgroup: {
      struct stat st {};
      if (::stat(s.cgroup_path.c_str(), &st) != 0) {
        s.up = false;
        s.down = fmt::format("cgroup {} is gone", s.config.cgroup.text);
        return;
      }
      if (!s.is_open() || st.st_ino != s.cgroup_inode) open_set(s);  // made again: a new cgroup
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
      if (find_command(s.config.command.text) >= 0) open_set(s);
      return;
    }
  }
}

// The unit a place falls in, by the set's aggregation.
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

}  // namespace

void State::open_new(const State* previous) {
  for (auto& s : sets_) {
    bool kept = false;
    if (previous)
      for (const auto& old : previous->sets_) kept = kept || old->key == s->key;
    if (!kept) open_set(*s);
  }
}

void State::take_over(State& previous) {
  for (auto& s : sets_) {
    if (s->is_open() || !s->down.empty()) continue;  // opened by open_new
    for (auto& old : previous.sets_) {
      if (old->key != s->key || !old->is_open()) continue;
      // Same counters: keep them counting, and the window they are in.
      s->counters = std::move(old->counters);
      s->counter_cpu = std::move(old->counter_cpu);
      s->places = std::move(old->places);
      old->counters.clear();
      old->counter_cpu.clear();
      s->cgroup_inode = old->cgroup_inode;
      s->pid = old->pid;
      s->up = old->up;
      s->down = old->down;
      s->opened = old->opened;
      s->base_time = old->base_time;
      s->base = std::move(old->base);
      s->values = std::move(old->values);
      s->computed = old->computed;
      s->read_errors = old->read_errors;
      break;
    }
    if (!s->is_open() && s->down.empty()) open_set(*s);  // its old set's target was down: try now
  }
}

void State::open(State* previous) {
  open_new(previous);
  if (previous) take_over(*previous);
}

std::size_t State::events() const {
  std::size_t n = 0;
  for (const auto& s : sets_) n += s->user_events;
  return n;
}
std::size_t State::metrics() const {
  std::size_t n = 0;
  for (const auto& s : sets_)
    for (const auto& p : s->plans) n += p.plan.metrics.size();
  return n;
}
std::string State::summary() const {
  return fmt::format("{} sets, {} events, {} metrics", sets_.size(), events(), metrics());
}
std::size_t State::event_fds() const {
  std::size_t n = 0;
  for (const auto& s : sets_)
    for (const auto& c : s->counters) n += c.open_fds();
  return n;
}
std::uint64_t State::read_errors() const {
  std::uint64_t n = 0;
  for (const auto& s : sets_) n += s->read_errors;
  return n;
}

std::vector<prometheus::MetricFamily> State::collect(CpuReaders* readers) {
  using prometheus::MetricType;
  std::map<std::string, prometheus::MetricFamily> counts;
  auto counts_of = [&](const std::string& suffix) -> prometheus::MetricFamily& {
    auto it = counts.find(suffix);
    if (it != counts.end()) return it->second;
    std::string help =
        suffix == "total" ? "Events counted, not scaled for multiplexing (see _enabled_ and _running_)"
        : suffix == "seconds_total" ? "Time events (task-clock, cpu-clock, duration_time), in seconds"
        : suffix == "joules_total"  ? "Energy events, in joules (the event's scale applied)"
        : suffix == "bytes_total"
            ? "Events counting bytes (the event's scale applied)"
            : "Events with a scale and unit of their own (the unit label), scale applied";
    return counts.emplace(suffix, family("perfspec_event_" + suffix, help, MetricType::Counter))
        .first->second;
  };
  auto enabled =
      family("perfspec_event_enabled_seconds_total",
             "Time the event was enabled (time_enabled); with _running_, how much it was multiplexed",
             MetricType::Counter);
  auto running =
      family("perfspec_event_running_seconds_total",
             "Time the event was on a counter (time_running); count * enabled / running estimates the "
             "whole",
             MetricType::Counter);
  auto failed = family("perfspec_event_failed_info",
                       "An event of the configuration that could not be opened, with the errno and reason",
                       MetricType::Gauge);
  auto metric_values = family("perfspec_metric", "Metric values over the last window", MetricType::Gauge);
  auto thresholds =
      family("perfspec_metric_over_threshold",
             "1 when the metric's threshold holds (perf shows the value in red)", MetricType::Gauge);
  auto unavailable =
      family("perfspec_metric_unavailable_info",
             "A metric that could not be computed over the last window, and why", MetricType::Gauge);
  auto up = family("perfspec_target_up", "1 when the set's target (process, cgroup) is there and counted",
                   MetricType::Gauge);
  const auto& topology = machine_->cpu_topology();
  const double window_min = config_.metric_window;

  // Every set's counters read first, each CPU's on that CPU (in parallel), a process's here.
  for (auto& sp : sets_) check_target(*sp);
  if (readers)
    readers->run([&](int cpu) {
      for (auto& sp : sets_)
        for (std::size_t k = 0; k < sp->counters.size(); ++k)
          if (sp->counter_cpu[k] == cpu) sp->counters[k].read_places(sp->places[k]);
    });
  for (auto& sp : sets_)
    for (std::size_t k = 0; k < sp->counters.size(); ++k)
      if (!readers || !readers->serves(sp->counter_cpu[k])) sp->counters[k].read_places(sp->places[k]);
  const auto now = Clock::now();

  for (auto& sp : sets_) {
    SetState& s = *sp;
    Labels set_labels{{"set", s.config.name}};
    switch (s.config.target) {
      case SetConfig::Target::system: break;
      case SetConfig::Target::cgroup: set_labels.push_back({"cgroup", s.config.cgroup.text}); break;
      case SetConfig::Target::pid: set_labels.push_back({"pid", std::to_string(s.config.pid)}); break;
      case SetConfig::Target::command: set_labels.push_back({"command", s.config.command.text}); break;
    }
    for (const auto& [k, v] : s.config.labels) set_labels.push_back({k, v});
    {
      Labels l = set_labels;
      l.push_back({"target", target_text(s.config)});
      if (!s.up) l.push_back({"reason", s.down});
      add(up, std::move(l), s.up ? 1 : 0);
    }
    if (!s.is_open()) continue;
    // Sum each place into its unit.
    Units units;
    const std::size_t n = s.set.events.size();
    std::vector<char> here_anywhere(n, 0);
    std::vector<const runtime::Count*> failure(n, nullptr);
    for (const auto& read : s.places)
      for (const auto& pc : read) {
        auto [key, labels] = unit_of(pc.place, s.config.grouping, topology);
        auto& u = units[key];
        if (u.events.empty()) {
          u.labels = std::move(labels);
          u.events.resize(n);
        }
        for (std::size_t e = 0; e < n && e < pc.counts.size(); ++e) {
          const auto& c = pc.counts[e];
          for (const auto& note : c.notes)
            if (note.kind == runtime::Note::Kind::read_failed || note.kind == runtime::Note::Kind::short_read)
              ++s.read_errors;
          if (!pc.here[e]) {
            if (c.failure && !failure[e]) failure[e] = &c;
            continue;
          }
          here_anywhere[e] = 1;
          if (c.failure && !failure[e]) failure[e] = &c;
          Acc& a = u.events[e];
          a.here = true;
          a.raw += c.raw;
          a.enabled += c.time_enabled;
          a.running += c.time_running;
        }
      }
    const double since_open = std::chrono::duration<double>(now - s.opened).count();
    // The file's events.
    for (std::size_t e = 0; e < s.user_events; ++e) {
      const ResolvedEvent& ev = s.set.events[e];
      Labels ev_labels{{"event", ev.name}, {"pmu", ev.pmu}};
      if (ev.tool == ToolEvent::duration_time) {
        for (const auto& [key, u] : units) {
          Labels l = set_labels;
          l.insert(l.end(), u.labels.begin(), u.labels.end());
          l.insert(l.end(), ev_labels.begin(), ev_labels.end());
          add(counts_of("seconds_total"), std::move(l), since_open);
        }
        continue;
      }
      if (!here_anywhere[e] || (failure[e] && failure[e]->state == runtime::Count::State::not_supported)) {
        Labels l = set_labels;
        l.insert(l.end(), ev_labels.begin(), ev_labels.end());
        const runtime::Failure* f = failure[e] && failure[e]->failure        ? &*failure[e]->failure
                                    : e < s.failures.size() && s.failures[e] ? &*s.failures[e]
                                                                             : nullptr;
        l.push_back({"errno", f ? spec::errno_name(f->error) : std::string()});
        l.push_back({"reason", f ? failure_reason(*f) : "not opened on any CPU"});
        add(failed, std::move(l), 1);
        if (!here_anywhere[e]) continue;
      }
      const BaseUnit bu = base_unit(ev);
      for (const auto& [key, u] : units) {
        const Acc& a = u.events[e];
        if (!a.here) continue;
        Labels l = set_labels;
        l.insert(l.end(), u.labels.begin(), u.labels.end());
        l.insert(l.end(), ev_labels.begin(), ev_labels.end());
        add(enabled, l, static_cast<double>(a.enabled) / 1e9);
        add(running, l, static_cast<double>(a.running) / 1e9);
        if (!bu.unit.empty()) l.push_back({"unit", bu.unit});
        add(counts_of(bu.family), std::move(l), static_cast<double>(a.raw) * bu.factor / bu.divisor);
      }
    }
    // Metrics over the window since the last computation.
    if (!s.plans.empty()) {
      const double window = std::chrono::duration<double>(now - s.base_time).count();
      if (!s.computed || window >= window_min) {
        s.values.clear();
        for (const auto& [key, u] : units) {
          auto base = s.base.find(key);
          auto& out = s.values[key];
          for (const auto& pa : s.plans) {
            std::vector<double> values(pa.plan.events.events.size(),
                                       std::numeric_limits<double>::quiet_NaN());
            std::vector<std::string> why(values.size());
            for (std::size_t i = 0; i < values.size(); ++i) {
              const std::size_t e = pa.offset + i;
              const ResolvedEvent& ev = s.set.events[e];
              if (ev.tool == ToolEvent::duration_time) {
                values[i] = window * 1e9;
                continue;
              }
              const Acc& a = u.events[e];
              Acc b;
              if (base != s.base.end()) b = base->second.events[e];
              const double raw = static_cast<double>(a.raw - std::min(a.raw, b.raw));
              const double en = static_cast<double>(a.enabled - std::min(a.enabled, b.enabled));
              const double ru = static_cast<double>(a.running - std::min(a.running, b.running));
              if (!a.here)
                why[i] = failure[e] && failure[e]->failure ? failure[e]->failure->meaning
                                                           : fmt::format("'{}' is not counted here", ev.name);
              else if (ru == 0)
                why[i] = fmt::format("'{}' did not run in the window", ev.name);
              else
                values[i] = ru == en ? raw : raw * en / ru;
            }
            auto v = metric::evaluate(pa.plan, values, why);
            out.insert(out.end(), v.begin(), v.end());
          }
        }
        s.base = units;
        s.base_time = now;
        s.computed = true;
      }
      std::map<std::string, bool> seen;  // a metric asked for twice is given once
      for (const auto& [key, u] : units) {
        auto vit = s.values.find(key);
        if (vit == s.values.end()) continue;
        std::size_t k = 0;
        std::map<std::string, bool> here;
        for (const auto& pa : s.plans)
          for (const auto& m : pa.plan.metrics) {
            const metric::Value& v = vit->second[k++];
            if (!here.emplace(m.definition.name, true).second) continue;
            Labels l = set_labels;
            l.insert(l.end(), u.labels.begin(), u.labels.end());
            l.push_back({"metric", m.definition.name});
            if (!m.scale.unit.empty()) l.push_back({"unit", m.scale.unit});
            add(metric_values, l, v.value);
            if (v.over_threshold) add(thresholds, l, *v.over_threshold ? 1 : 0);
            if (!v.why.empty() && seen.emplace(m.definition.name, true).second) {
              Labels w = set_labels;
              w.push_back({"metric", m.definition.name});
              w.push_back({"reason", v.why});
              add(unavailable, std::move(w), 1);
            }
          }
      }
    }
  }
  std::vector<prometheus::MetricFamily> out;
  for (auto& [suffix, f] : counts) out.push_back(std::move(f));
  for (auto* f : {&enabled, &running, &failed, &metric_values, &thresholds, &unavailable, &up})
    if (!f->metric.empty() || f == &up) out.push_back(std::move(*f));
  return out;
}

// --- reading on each CPU ---

CpuReaders::CpuReaders(std::vector<int> cpus) : cpus_(std::move(cpus)) {
  for (std::size_t i = 0; i < cpus_.size(); ++i) threads_.emplace_back([this, i] { loop(i); });
}

CpuReaders::~CpuReaders() {
  {
    std::lock_guard l(m_);
    stop_ = true;
  }
  go_.notify_all();
  for (auto& t : threads_) t.join();
}

bool CpuReaders::serves(int cpu) const { return std::find(cpus_.begin(), cpus_.end(), cpu) != cpus_.end(); }

void CpuReaders::run(const std::function<void(int)>& work) {
  if (threads_.empty()) return;
  std::unique_lock l(m_);
  work_ = &work;
  pending_ = threads_.size();
  ++generation_;
  go_.notify_all();
  done_.wait(l, [this] { return pending_ == 0; });
  work_ = nullptr;
}

void CpuReaders::loop(std::size_t index) {
  const int cpu = cpus_[index];
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0 && cpu < CPU_SETSIZE) {
    CPU_SET(cpu, &set);
    (void)::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);  // else: from anywhere
  }
  std::uint64_t seen = 0;
  std::unique_lock l(m_);
  for (;;) {
    go_.wait(l, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* work = work_;
    l.unlock();
    (*work)(cpu);
    l.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

// --- the exporter ---

Exporter::Exporter(const spec::Machine& machine, std::string config_path)
    : machine_(machine), path_(std::move(config_path)), readers_(runtime::system_calls().online_cpus()) {}

std::string Exporter::reload() {
  std::unique_ptr<State> next;
  std::string error;
  try {
    next = State::prepare(load_config(path_), machine_);
  } catch (const ConfigError& e) {
    error = e.what();
    if (!state_) throw;
  }
  if (!next) {
    std::lock_guard lock(mutex_);
    last_reload_ = static_cast<double>(std::time(nullptr));
    ++reload_failed_;
    last_reload_succeeded_ = false;
    last_error_ = error.substr(0, error.find('\n'));
    return error;
  }
  // What is new is opened while scrapes go on (only this thread swaps state_, and the sets' keys
  // never change); what did not change is taken over under the lock, and the old state is closed
  // after it (closing hundreds of tracepoints takes the kernel seconds).
  next->open_new(state_.get());
  std::unique_ptr<State> old;
  {
    std::lock_guard lock(mutex_);
    if (state_) next->take_over(*state_);
    old = std::move(state_);
    state_ = std::move(next);
    read_timeout_ = state_->config().read_timeout;
    last_reload_ = static_cast<double>(std::time(nullptr));
    ++reload_ok_;
    last_reload_succeeded_ = true;
    last_error_.clear();
  }
  old.reset();
  return {};
}

Config Exporter::config() const {
  std::lock_guard lock(mutex_);
  return state_ ? state_->config() : Config{};
}

std::string Exporter::summary() const {
  std::lock_guard lock(mutex_);
  return state_ ? state_->summary() : std::string();
}

std::vector<prometheus::MetricFamily> Exporter::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  auto start = Clock::now();
  auto gauge = [&](const char* name, const char* help, double v, Labels l = {}) {
    auto f = family(name, help, MetricType::Gauge);
    add(f, std::move(l), v);
    out.push_back(std::move(f));
  };
  std::unique_lock lock(mutex_, std::defer_lock);
  const auto timeout = std::chrono::duration<double>(read_timeout_.load());
  if (!lock.try_lock_for(std::chrono::duration_cast<std::chrono::microseconds>(timeout))) {
    // Another scrape or a reload holds the counters longer than read_timeout: the last read, marked.
    {
      std::lock_guard cache(cache_mutex_);
      if (!last_.empty()) {
        ++busy_;
        out = last_;
        gauge("perfspec_exporter_stale", "1 when this scrape waited too long and got the last read's series",
              1);
        return out;
      }
    }
    lock.lock();  // nothing read yet: this scrape waits for the first read
  }
  std::size_t event_fds = 0;
  std::uint64_t read_errors = 0;
  if (state_) {
    out = state_->collect(&readers_);
    event_fds = state_->event_fds();
    read_errors = state_->read_errors();
  }
  const double read_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t scrapes = ++scrapes_, busy = busy_.load(), ok = reload_ok_, failed = reload_failed_;
  const double last_reload = last_reload_;
  const bool succeeded = last_reload_succeeded_;
  const std::string error = last_error_;
  lock.unlock();
  auto counter = [&](const char* name, const char* help, double v) {
    auto f = family(name, help, MetricType::Counter);
    add(f, {}, v);
    out.push_back(std::move(f));
  };
  counter("perfspec_exporter_scrapes_total", "Scrapes served with a fresh read",
          static_cast<double>(scrapes));
  counter("perfspec_exporter_stale_scrapes_total",
          "Scrapes that waited longer than read_timeout and were served the last read",
          static_cast<double>(busy));
  counter("perfspec_exporter_read_errors_total", "Counter reads that failed or came back short",
          static_cast<double>(read_errors));
  gauge("perfspec_exporter_read_seconds", "How long this scrape's read of the counters took", read_seconds);
  gauge("perfspec_exporter_open_fds", "File descriptors the exporter has open",
        static_cast<double>(fds_of_self()));
  gauge("perfspec_exporter_event_fds", "Of those, perf_event file descriptors",
        static_cast<double>(event_fds));
  {
    auto f = family("perfspec_exporter_reloads_total", "Configuration loads, by result", MetricType::Counter);
    add(f, {{"result", "success"}}, static_cast<double>(ok));
    add(f, {{"result", "failure"}}, static_cast<double>(failed));
    out.push_back(std::move(f));
  }
  gauge("perfspec_exporter_last_reload_timestamp_seconds",
        "When the configuration was last loaded (Unix time)", last_reload);
  gauge("perfspec_exporter_last_reload_success", "1 when the last load of the configuration succeeded",
        succeeded ? 1 : 0);
  if (!succeeded)
    gauge("perfspec_exporter_config_error_info",
          "Why the last load of the configuration failed (the running one stays in place)", 1,
          {{"file", path_}, {"error", error}});
  std::lock_guard cache(cache_mutex_);
  if (scrapes > last_scrape_) {  // the counters only grow: a stale answer is never older than one given
    last_ = out;
    last_scrape_ = scrapes;
  }
  return out;
}

// --- the daemon ---

namespace {

Exporter* serving = nullptr;  // for civetweb's begin_request callback

// OpenMetrics when the scraper prefers it (prometheus-cpp serves only the text format); 0: let the
// text handler answer.
int begin_request(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  if (!serving || !info || !info->local_uri || std::strcmp(info->local_uri, "/metrics") != 0) return 0;
  if (!info->request_method || std::strcmp(info->request_method, "GET") != 0) return 0;
  const char* accept = mg_get_header(conn, "Accept");
  if (!accept || !wants_openmetrics(accept)) return 0;
  std::ostringstream body;
  OpenMetricsSerializer().Serialize(body, serving->Collect());
  const std::string text = body.str();
  mg_printf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
            std::string(openmetrics_content_type).c_str(), text.size());
  mg_write(conn, text.data(), text.size());
  return 200;
}

}  // namespace

int run(const ExporterOptions& o) {
  spec::Machine machine(o.sysfs, o.machine);
  if (o.check) {
    try {
      auto checked = State::prepare(load_config(o.config), machine);
      std::printf("%s: %s\n", spec::printable(o.config).c_str(), checked->summary().c_str());
    } catch (const ConfigError& e) {
      std::fputs(e.what(), stderr);
      return exit_status(e.kind());
    }
    return 0;
  }
  if (!o.listen.empty() && !valid_listen(o.listen)) {
    std::fprintf(
        stderr,
        "perfspec exporter: error: --listen '%s': give HOST:PORT (0.0.0.0:9464 for every interface)\n",
        spec::printable(o.listen).c_str());
    return 2;
  }
  // Signals are waited for by this thread only: blocked before civetweb starts its threads.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGHUP, SIGINT, SIGTERM}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  auto exporter = std::make_shared<Exporter>(machine, o.config);
  try {
    exporter->reload();
  } catch (const ConfigError& e) {
    std::fputs(e.what(), stderr);
    return exit_status(e.kind());
  }
  const Config config = exporter->config();
  std::string listen = !o.listen.empty()        ? o.listen
                       : !config.listen.empty() ? config.listen
                                                : "127.0.0.1:9464";
  serving = exporter.get();
  CivetCallbacks callbacks{};
  callbacks.begin_request = begin_request;
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", listen, "num_threads", std::to_string(o.threads),
                                 "request_timeout_ms", "2000", "enable_keep_alive", "yes", "tcp_nodelay",
                                 "1"},
        &callbacks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfspec exporter: error: cannot listen on %s: %s\n",
                 spec::printable(listen).c_str(), e.what());
    return 3;
  }
  exposer->RegisterCollectable(exporter);
  auto ports = exposer->GetListeningPorts();
  std::string host = listen.substr(0, listen.rfind(':'));
  std::fprintf(stderr, "perfspec exporter: serving %s:%d/metrics (%s from %s)\n", host.c_str(),
               ports.empty() ? 0 : ports[0], exporter->summary().c_str(), spec::printable(o.config).c_str());
  std::fflush(stderr);
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      std::string error = exporter->reload();
      if (error.empty()) {
        const Config now = exporter->config();
        std::fprintf(stderr, "perfspec exporter: reloaded %s (%s)\n", spec::printable(o.config).c_str(),
                     exporter->summary().c_str());
        if (!now.listen.empty() && now.listen != listen && o.listen.empty())
          std::fprintf(stderr, "perfspec exporter: still listening on %s: a new address needs a restart\n",
                       listen.c_str());
      } else {
        std::fprintf(stderr, "perfspec exporter: reload failed, the running configuration stays:\n%s",
                     error.c_str());
      }
      std::fflush(stderr);
      continue;
    }
    std::fprintf(stderr, "perfspec exporter: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    break;
  }
  exposer.reset();
  serving = nullptr;
  return 0;
}

}  // namespace perfspec::tools::exporter
