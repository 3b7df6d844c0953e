// SPDX-License-Identifier: MIT
#include "runtime/open.hpp"
#include "spec/abi.hpp"

#include <sys/mman.h>
#include <unistd.h>
#include <cerrno>

#include <algorithm>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "perfspec/error.hpp"
#include "runtime/cpulist.hpp"

namespace perfspec::runtime {

namespace {

// The state of one open_set call.
class Opener {
 public:
  Opener(OpenedSet& out, const Target& target, const OpenOptions& options, Syscalls& sys,
         const PrepareAttr& prepare)
      : out_(out), target_(target), options_(options), sys_(sys), prepare_(prepare) {
    paranoid_ = sys.perf_event_paranoid();
    privileged_ = sys.privileged();
    fd_limit_ = sys.fd_limit();
  }

  void open_group(const EventGroup& g, int pid, int cpu);

 private:
  OpenedSet& out_;
  const Target& target_;
  const OpenOptions& options_;
  Syscalls& sys_;
  const PrepareAttr& prepare_;
  std::optional<int> paranoid_;
  bool privileged_ = false;
  std::optional<long> fd_limit_;

  Failure explain(std::size_t event, int error, int cpu, const Attr& attr, bool cgroup_refused = false) const;
  bool opens_outside_cgroup(Attr a, int cpu);
  // The attr an open of event `i` used: kept when it opened, or when it never has.
  void keep_attr(std::size_t i, const Attr& a, bool opened) {
    if (!opened && out_.attr_opened[i]) return;
    out_.attrs[i] = a;
    if (opened) out_.attr_opened[i] = 1;
  }
  int open_one(std::size_t i, int pid, int cpu, int group_fd, bool leader);
  bool opens_alone(std::size_t i, int pid, int cpu);
  void open_alone(std::size_t i, int pid, int cpu);
  void open_members(const EventGroup& g, Instance& inst, int pid, int cpu,
                    const std::vector<std::optional<Failure>>& earlier);
  void fail_members(const EventGroup& g, int pid, int cpu);
  void finish(Instance& inst);
  // The cgroup fd event `i` counts in, or -1.
  int cgroup_of(std::size_t i) const { return i < target_.cgroups.size() ? target_.cgroups[i] : -1; }
  // The thread of an instance opened for `pid`: one of several threads, else -1.
  int thread_of(int pid) const {
    return target_.kind == Target::Kind::process && !target_.threads.empty() ? pid : -1;
  }
};

Failure Opener::explain(std::size_t event, int error, int cpu, const Attr& attr, bool cgroup_refused) const {
  const ResolvedEvent& e = out_.set.events[event];
  spec::OpenContext c;
  c.type = attr.type;
  c.pmu = e.pmu;
  c.pmu_in_sysfs = !e.placement.missing;
  c.precise_ip = attr.precise_ip;
  c.bp_type = attr.bp_type;
  c.exclude_kernel = attr.exclude_kernel;
  c.cpu_wide = target_.kind == Target::Kind::cpus;
  c.other_process = target_.kind == Target::Kind::process && target_.pid != ::getpid();
  c.paranoid = paranoid_;
  c.privileged = privileged_;
  c.fd_limit = fd_limit_;
  c.stack_user = (attr.sample_type & spec::sample_stack_user) != 0;
  c.cgroup_refused = cgroup_refused;
  const auto& members = out_.set.groups[e.group].members;
  c.group_position =
      static_cast<std::size_t>(std::find(members.begin(), members.end(), event) - members.begin());
  if (c.group_position == members.size()) c.group_position = 0;
  Failure f;
  f.error = error;
  f.name = spec::errno_name(error);
  if (const auto* fact = spec::errno_fact(error)) f.meaning = std::string(fact->meaning);
  f.hint = spec::errno_hint(error, c);
  f.cpu = cpu;
  return f;
}

// Opens one event; applies the EACCES user-only fallback. Returns the fd or -errno.
int Opener::open_one(std::size_t i, int pid, int cpu, int group_fd, bool leader) {
  Attr a = out_.set.events[i].attr;
  a.size = attr_size_ver8;
  prepare_(a, leader, i);
  if (target_.inherit) a.inherit = 1;
  if (out_.user_only[i]) a.exclude_kernel = 1, a.exclude_hv = 1;
  unsigned long flags = PERF_FLAG_FD_CLOEXEC;
  if (int cgroup = cgroup_of(i); cgroup >= 0) pid = cgroup, flags |= PERF_FLAG_PID_CGROUP;
  int fd = sys_.perf_event_open(a, pid, cpu, group_fd, flags);
  // PERF_FORMAT_LOST (Linux 6.0), which sampling asks for to count what full buffers dropped: a kernel
  // before it refuses the attr (EINVAL). The event is opened without it, on every CPU and thread.
  if (fd == -EINVAL && (a.read_format & spec::format_lost)) {
    a.read_format &= ~std::uint64_t{spec::format_lost};
    out_.set.events[i].attr.read_format &= ~std::uint64_t{spec::format_lost};
    fd = sys_.perf_event_open(a, pid, cpu, group_fd, flags);
  }
  // MMAP2 records with the build id of the file mapped (Linux 5.12): a kernel before it refuses the
  // bit (EINVAL), and the mappings come without (their build ids are then read from the files).
  if (fd == -EINVAL && a.build_id) {
    a.build_id = 0;
    out_.set.events[i].attr.build_id = 0;
    fd = sys_.perf_event_open(a, pid, cpu, group_fd, flags);
  }
  if (fd >= 0) keep_attr(i, a, true);
  if (fd == -EACCES && options_.fallback_to_user && !a.exclude_kernel) {
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int retry = sys_.perf_event_open(a, pid, cpu, group_fd, flags);
    if (retry >= 0) {
      keep_attr(i, a, true);
      if (!out_.user_only[i]) {
        out_.user_only[i] = 1;
        Note n;
        n.kind = Note::Kind::user_only;
        n.error = EACCES;
        out_.notes[i] = std::move(n);
        std::string& name = out_.set.events[i].name;
        name += name.find(':') == std::string::npos ? ":u" : "u";
      }
      return retry;
    }
    fd = retry;
  }
  // The first failure is kept, unless it was a thread gone (ESRCH) and this one says more.
  if (fd < 0) keep_attr(i, a, false);
  if (fd < 0 && (!out_.failures[i] || (out_.failures[i]->error == ESRCH && fd != -ESRCH))) {
    // ENOENT is also the kernel's answer for a cgroup without perf_event state: a probe outside the
    // cgroup (closed at once) tells it from a PMU that lacks the event.
    bool cgroup_refused = fd == -ENOENT && cgroup_of(i) >= 0 && opens_outside_cgroup(a, cpu);
    out_.failures[i] = explain(i, -fd, cpu, a, cgroup_refused);
  }
  return fd;
}

bool Opener::opens_outside_cgroup(Attr a, int cpu) {
  if (cpu < 0) return false;
  a.disabled = 1;
  int fd = sys_.perf_event_open(a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return false;
  sys_.close(fd);
  return true;
}

// Whether event `i`, refused as a group member, opens outside the group (the probe is closed at once).
bool Opener::opens_alone(std::size_t i, int pid, int cpu) {
  Attr a = out_.attrs[i];
  prepare_(a, true, i);
  unsigned long flags = PERF_FLAG_FD_CLOEXEC;
  if (int cgroup = cgroup_of(i); cgroup >= 0) pid = cgroup, flags |= PERF_FLAG_PID_CGROUP;
  int fd = sys_.perf_event_open(a, pid, cpu, -1, flags);
  if (fd < 0) return false;
  sys_.close(fd);
  return true;
}

void Opener::open_alone(std::size_t i, int pid, int cpu) {
  Instance inst;
  inst.cpu = cpu;
  inst.thread = thread_of(pid);
  int fd = open_one(i, pid, cpu, -1, true);
  if (fd < 0) return;
  inst.fds.emplace_back(sys_, fd);
  inst.events.push_back(i);
  finish(inst);
}

void Opener::finish(Instance& inst) {
  if (options_.user_page && target_.kind == Target::Kind::self) {
    std::size_t length = sys_.page_size();
    for (const auto& fd : inst.fds) {
      void* p = sys_.mmap(fd.get(), length, PROT_READ);
      if (!p) {
        inst.pages.clear();  // read(2) for this group
        break;
      }
      inst.pages.emplace_back(sys_, p, length);
    }
  }
  for (std::size_t k = 0; k < inst.fds.size(); ++k) {
    std::uint64_t id = 0;
    auto ask = [&] {
      return sys_.ioctl(inst.fds[k].get(), PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id));
    };
    if (retry_eintr(ask) < 0) id = ~0ULL - k, inst.ids_known = false;
    inst.ids.push_back(id);
    out_.opened[inst.events[k]] = 1;
  }
  out_.instances.push_back(std::move(inst));
}

// The leader failed: a weak group's members count alone; a strong group's cannot count at all.
void Opener::fail_members(const EventGroup& g, int pid, int cpu) {
  std::size_t lead = g.members.front();
  for (std::size_t k = 1; k < g.members.size(); ++k) {
    std::size_t m = g.members[k];
    if (g.weak) {
      open_alone(m, pid, cpu);
    } else if (!out_.failures[m]) {
      // Also when the member was opened on other CPUs: it then counts without this CPU, which its
      // failure (with the CPU) must say.
      Failure f = *out_.failures[lead];
      f.detail = spec::failure_words(
                     {.what = spec::FailureCase::group_leader_failed, .name = out_.set.events[lead].name})
                     .detail;
      out_.failures[m] = f;
    }
  }
}

void Opener::open_members(const EventGroup& g, Instance& inst, int pid, int cpu,
                          const std::vector<std::optional<Failure>>& earlier) {
  for (std::size_t k = 1; k < g.members.size(); ++k) {
    std::size_t m = g.members[k];
    int mfd = open_one(m, pid, cpu, inst.fds.front().get(), false);
    if (mfd >= 0) {
      inst.fds.emplace_back(sys_, mfd);
      inst.events.push_back(m);
      continue;
    }
    // EINVAL for a member the PMU accepts alone: the group does not fit its counters (the driver
    // validates a group as a whole when each member joins). Said instead of EINVAL's usual hint.
    if (!g.weak && mfd == -EINVAL && out_.failures[m] && out_.failures[m]->error == EINVAL &&
        out_.failures[m]->detail.empty() && opens_alone(m, pid, cpu)) {
      Failure& f = *out_.failures[m];
      auto words = spec::failure_words({.what = spec::FailureCase::group_partial, .count = inst.fds.size()});
      f.detail = std::move(words.detail);
      f.hint = std::move(words.hint);
    }
    if (!g.weak) continue;  // the failure is recorded; the rest of the group still counts
    // A weak group that cannot be opened whole is counted as separate events (perf's :W).
    Note why;
    why.kind = Note::Kind::weak_group_alone;
    why.error = -mfd;
    why.event = out_.set.events[m].name;
    inst.fds.clear();
    for (std::size_t k2 = 0; k2 < g.members.size(); ++k2) {
      std::size_t x = g.members[k2];
      out_.failures[x] = earlier[k2];
      out_.notes[x] = why;
      open_alone(x, pid, cpu);
    }
    return;
  }
  finish(inst);
}

void Opener::open_group(const EventGroup& g, int pid, int cpu) {
  std::size_t lead = g.members.front();
  // What failed before this attempt (on earlier CPUs) stays reported if a weak group falls back here.
  std::vector<std::optional<Failure>> earlier;
  if (g.weak)
    for (std::size_t m : g.members) earlier.push_back(out_.failures[m]);
  Instance inst;
  inst.cpu = cpu;
  inst.thread = thread_of(pid);
  int fd = open_one(lead, pid, cpu, -1, true);
  if (fd < 0) return fail_members(g, pid, cpu);
  inst.fds.emplace_back(sys_, fd);
  inst.events.push_back(lead);
  open_members(g, inst, pid, cpu, earlier);
}

std::vector<int> pids_of(const Target& target) {
  switch (target.kind) {
    case Target::Kind::self: return {0};
    case Target::Kind::process: return target.threads.empty() ? std::vector<int>{target.pid} : target.threads;
    case Target::Kind::cpus: return {-1};
  }
  return {0};
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

std::vector<int> cpus_for(const ResolvedEvent& leader, const Target& target, const std::vector<int>& wanted,
                          bool explicit_cpus) {
  if (target.kind != Target::Kind::cpus) return {-1};
  std::vector<int> out = wanted;
  if (!leader.placement.cpumask.empty()) {
    // Uncore PMUs count per package: open them only on the CPUs they name (perf does the same).
    auto mask = parse_cpu_list(leader.placement.cpumask);
    if (!explicit_cpus) return mask;
    std::erase_if(out, [&](int c) { return !contains(mask, c); });
  } else if (!leader.placement.cpus.empty()) {
    auto own = parse_cpu_list(leader.placement.cpus);  // hybrid: a core PMU serves only its CPUs
    std::erase_if(out, [&](int c) { return !contains(own, c); });
  }
  return out;
}

std::vector<int> event_cpus(const ResolvedEvent& e, const Target& target, const std::vector<int>& online) {
  // The PMU's own CPUs (perf's own_cpus): an uncore cpumask, a hybrid core PMU's cpus, duration_time's 0.
  std::vector<int> own;
  bool requires_cpu = false, core_cpus = false;
  if (e.tool == ToolEvent::duration_time) {
    own = {0};
  } else if (!e.placement.cpumask.empty()) {
    own = parse_cpu_list(e.placement.cpumask);
    requires_cpu = true;
  } else if (!e.placement.cpus.empty()) {
    own = parse_cpu_list(e.placement.cpus);
    core_cpus = true;
  }
  // What the user asked for: a task (any CPU), every online CPU (-a), or CPUs (-C).
  const bool has_user = target.kind == Target::Kind::cpus && !target.cpus.empty();
  std::vector<int> user = target.kind != Target::Kind::cpus ? std::vector<int>{-1}
                          : has_user                        ? target.cpus
                                                            : online;
  std::sort(user.begin(), user.end());
  user.erase(std::unique(user.begin(), user.end()), user.end());
  if (has_user && core_cpus) {
    std::erase_if(user, [&](int c) { return !contains(own, c); });
    return user;
  }
  if (own.empty() || has_user || (!requires_cpu && user == std::vector<int>{-1})) return user;
  return own;
}

std::vector<Ungrouped> ungroup_by_cpus(EventSet& set, const Target& target, Syscalls& sys) {
  std::vector<Ungrouped> changed;
  const std::vector<int> online =
      target.kind == Target::Kind::cpus && target.cpus.empty() ? sys.online_cpus() : std::vector<int>{};
  bool any = false;
  std::vector<std::vector<int>> cpus(set.events.size());
  for (std::size_t i = 0; i < set.events.size(); ++i) cpus[i] = event_cpus(set.events[i], target, online);
  std::vector<std::size_t> alone;  // members taken out
  for (const auto& g : set.groups) {
    if (g.members.size() < 2) continue;
    const std::size_t leader = g.members.front();
    bool warned = false;
    for (std::size_t k = 1; k < g.members.size(); ++k) {
      const std::size_t m = g.members[k];
      if (cpus[m] == cpus[leader]) continue;
      Ungrouped u{.first = !warned,
                  .leader = set.events[leader].name,
                  .leader_cpus = cpus[leader],
                  .member = set.events[m].name,
                  .member_cpus = cpus[m]};
      if (u.first) {
        u.group_name = g.name;
        for (std::size_t e : g.members) u.group_members.push_back(set.events[e].name);
      }
      changed.push_back(std::move(u));
      warned = any = true;
      // (perf keeps a topdown event with its slots leader; both are of one core PMU, whose CPUs they
      // share, so that never applies here.)
      alone.push_back(m);
    }
  }
  if (!any) return changed;
  // The groups again, in the order of their first events: each member taken out a group of its own
  // where it stands.
  std::vector<char> out(set.events.size(), 0);
  for (std::size_t m : alone) out[m] = 1;
  std::vector<EventGroup> groups;
  std::vector<std::size_t> new_group(set.groups.size(), 0);
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (first event, group or ~0 for an event)
  for (std::size_t g = 0; g < set.groups.size(); ++g) order.emplace_back(set.groups[g].members.front(), g);
  for (std::size_t m : alone) order.emplace_back(m, ~std::size_t{0});
  std::sort(order.begin(), order.end());
  for (const auto& [first, g] : order) {
    EventGroup ng;
    if (g == ~std::size_t{0}) {
      ng.members = {first};
      ng.name = set.groups[set.events[first].group].name;
    } else {
      ng = set.groups[g];
      std::erase_if(ng.members, [&](std::size_t m) { return out[m] != 0; });
    }
    for (std::size_t m : ng.members) {
      set.events[m].group = groups.size();
      set.events[m].leader = ng.members.front();
    }
    if (ng.members.size() < 2) ng.weak = false;
    groups.push_back(std::move(ng));
  }
  set.groups = std::move(groups);
  return changed;
}

// Each event's tracepoint filter on each of its fds (OpenOptions::filters); an instance where the kernel
// refuses one is closed, and its events fail with the reason (a group's other events with it).
void apply_filters(OpenedSet& out, const std::vector<std::string>& filters, Syscalls& sys) {
  std::vector<Instance> kept;
  for (auto& inst : out.instances) {
    std::optional<std::pair<std::size_t, int>> refused;  // (event, errno)
    for (std::size_t k = 0; k < inst.fds.size() && !refused; ++k) {
      const std::size_t e = inst.events[k];
      if (e >= filters.size() || filters[e].empty()) continue;
      const auto text = reinterpret_cast<unsigned long>(filters[e].c_str());
      if (int r = retry_eintr([&] { return sys.ioctl(inst.fds[k].get(), PERF_EVENT_IOC_SET_FILTER, text); }))
        refused.emplace(e, r < 0 ? -r : EINVAL);
    }
    if (!refused) {
      kept.push_back(std::move(inst));
      continue;
    }
    for (std::size_t e : inst.events) {
      auto words = spec::failure_words({.what = spec::FailureCase::filter_refused,
                                        .error = refused->second,
                                        .name = filters[refused->first],
                                        .count = e != refused->first ? 1u : 0u});
      if (!out.failures[e]) {
        Failure f;
        f.error = refused->second;
        f.name = spec::errno_name(f.error);
        f.meaning = std::move(words.meaning);
        f.hint = std::move(words.hint);
        f.detail = std::move(words.detail);
        f.filter_refused = true;
        out.failures[e] = std::move(f);
      }
      out.opened[e] = 0;
    }
  }
  out.instances = std::move(kept);
  for (const auto& inst : out.instances)
    for (std::size_t e : inst.events) out.opened[e] = 1;
}

OpenedSet open_set(const EventSet& set, const Target& target, const OpenOptions& options, Syscalls& sys,
                   const PrepareAttr& prepare, bool task_per_cpu) {
  if (target.kind == Target::Kind::process && target.pid <= 0)
    throw Error(ErrorKind::usage, fmt::format("invalid process id {}", target.pid));
  if (!target.cgroups.empty() && target.kind != Target::Kind::cpus)
    throw Error(ErrorKind::usage, "a cgroup is counted on CPUs: give the target CPUs (system-wide)");
  OpenedSet out;
  out.set = set;
  std::size_t n = set.events.size();
  out.failures.resize(n);
  out.notes.resize(n);
  out.opened.assign(n, 0);
  out.user_only.assign(n, 0);
  out.attrs.resize(n);
  out.attr_opened.assign(n, 0);
  std::vector<int> cpus = target.cpus;
  bool explicit_cpus = !cpus.empty();
  const bool task_cpus = task_per_cpu && target.kind != Target::Kind::cpus;
  if ((target.kind == Target::Kind::cpus || task_cpus) && cpus.empty()) cpus = sys.online_cpus();
  Opener opener(out, target, options, sys, prepare);
  for (const auto& group : out.set.groups) {
    // Tool events (duration_time, ...) are the counting program's to fill in: nothing to open.
    EventGroup g = group;
    std::erase_if(g.members, [&](std::size_t m) {
      if (out.set.events[m].tool == ToolEvent::none) return false;
      Failure f;
      auto words = spec::failure_words({.what = spec::FailureCase::tool_event});
      f.name = std::move(words.name);
      f.meaning = std::move(words.meaning);
      f.hint = std::move(words.hint);
      out.failures[m] = std::move(f);
      return true;
    });
    if (g.members.empty()) continue;
    std::vector<int> where;
    if (task_cpus)
      where = cpus;
    else
      where = cpus_for(out.set.events[g.members.front()], target, cpus, explicit_cpus);
    for (int pid : pids_of(target))
      for (int cpu : where) opener.open_group(g, pid, cpu);
  }
  // Of several threads, one that exited between being listed and being opened (ESRCH) had nothing
  // left to count: not a failure of an event the other threads count.
  if (target.kind == Target::Kind::process && target.threads.size() > 1)
    for (std::size_t i = 0; i < n; ++i)
      if (out.opened[i] && out.failures[i] && out.failures[i]->error == ESRCH) out.failures[i].reset();
  if (!options.filters.empty()) apply_filters(out, options.filters, sys);
  return out;
}

}  // namespace perfspec::runtime
