// SPDX-License-Identifier: MIT
// A configuration made ready: every set's event strings, metrics, CPU list and cgroup resolved against
// the machine, each error pointing into the file; then opened, or taken over from the state before a
// reload.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "exporter/set.hpp"
#include "runtime/process.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {
namespace {

// A set's CPU list: CPUs that are online, at least one.
std::vector<int> cpus_of(const Config& c, const SetConfig& sc, std::vector<int>& online) {
  std::vector<int> cpus;
  try {
    cpus = spec::parse_cpu_list(sc.cpus.text);
  } catch (const Error& e) {
    throw error_at(c, sc.cpus.origin, e.positioned() ? e.span().begin : 0, ErrorKind::bad_value, e.message(),
                   e.help());
  }
  if (online.empty()) online = runtime::system_calls().online_cpus();
  for (int cpu : cpus)
    if (std::find(online.begin(), online.end(), cpu) == online.end())
      throw error_at(c, sc.cpus.origin, 0, ErrorKind::bad_value,
                     fmt::format("CPU {} does not exist or is offline", cpu));
  if (cpus.empty()) throw error_at(c, sc.cpus.origin, 0, ErrorKind::bad_value, "the CPU list is empty");
  return cpus;
}

// The file's events, one string at a time so that each error points into its own string.
EventSet events_of(const Config& c, const SetConfig& sc, const spec::Machine& machine) {
  EventSet set;
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
    set.append(std::move(one));
  }
  return set;
}

// One metric request of a set, with the file's own [[metric]] definitions: its error points at the
// request, or at the file's definition, or names the table's metric that does not resolve.
metric::Plan plan_of(const Config& c, const Located& request, metric::Planner& planner) {
  try {
    return planner.plan(request.text);
  } catch (const metric::MetricError& e) {
    if (e.metric().empty())
      throw error_at(c, request.origin, e.positioned() ? e.span().begin : 0, e.kind(), e.message(), e.help());
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
    throw error_at(c, request.origin, e.positioned() ? e.span().begin : 0, e.kind(), e.message(), e.help());
  }
}

// A cgroup set's directory, under the cgroup file system's root (found once: `root`).
std::string cgroup_path_of(const Config& c, const SetConfig& sc, std::string& root) {
  if (root.empty()) root = runtime::cgroup_root();
  if (root.empty())
    throw error_at(c, sc.cgroup.origin, 0, ErrorKind::machine,
                   "no cgroup file system is mounted (see /proc/mounts)");
  std::string path = runtime::cgroup_dir(root, sc.cgroup.text);
  struct stat st {};
  const bool there = ::stat(path.c_str(), &st) == 0;
  if (!there || !S_ISDIR(st.st_mode))
    throw error_at(c, sc.cgroup.origin, 0, ErrorKind::unknown_name,
                   fmt::format("no cgroup '{}' ({}: {})", spec::printable(sc.cgroup.text),
                               spec::printable(path), there ? "not a directory" : std::strerror(errno)),
                   fmt::format("cgroups are under {}", root));
  return path;
}

}  // namespace

State::State() = default;
State::~State() = default;
const Config& State::config() const { return config_; }

std::unique_ptr<State> State::prepare(Config config, const spec::Machine& machine, Log log) {
  std::unique_ptr<State> state(new State());
  state->machine_ = &machine;
  state->log_ = std::move(log);
  const Config& c = config;
  std::string root;
  std::vector<int> online;
  for (const auto& sc : c.sets) {
    auto s = std::make_unique<SetState>();
    s->config = sc;
    if (!sc.cpus.text.empty()) s->cpus = cpus_of(c, sc, online);
    s->set = events_of(c, sc, machine);
    s->user_events = s->set.events.size();
    metric::Options mo;
    mo.extra = c.metrics;
    mo.target.system_wide = sc.target == SetConfig::Target::system || sc.target == SetConfig::Target::cgroup;
    mo.target.cpus = s->cpus;
    metric::Planner planner(machine, mo);  // the file's metrics read once for all the set's requests
    for (const auto& request : sc.metrics) {
      metric::Plan plan = plan_of(c, request, planner);
      std::size_t offset = s->set.events.size();
      s->set.append(EventSet(plan.events));
      s->plans.push_back({std::move(plan), offset});
    }
    if (sc.target == SetConfig::Target::cgroup) s->cgroup_path = cgroup_path_of(c, sc, root);
    s->key = s->make_key();
    state->sets_.push_back(std::move(s));
  }
  state->config_ = std::move(config);
  return state;
}

void State::open_new(const State* previous) {
  for (auto& s : sets_) {
    bool kept = false;
    if (previous)
      for (const auto& old : previous->sets_) kept = kept || old->key == s->key;
    if (!kept) open_set(*s, log_);
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
    if (!s->is_open() && s->down.empty()) open_set(*s, log_);  // its old set's target was down: try now
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

}  // namespace perfspec::exporter
