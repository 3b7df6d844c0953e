#include <linux/perf_event.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "perfspec/error.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/spec.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/user_page.hpp"

namespace perfspec::runtime {

double scale_count(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) {
  if (running == 0) return 0.0;
  if (running >= enabled) return static_cast<double>(raw);
  // raw * enabled can exceed 64 bits; do it in 128 (a GCC/Clang extension, hence __extension__).
  __extension__ using u128 = unsigned __int128;
  u128 product = static_cast<u128>(raw) * enabled;
  return static_cast<double>(product / running) +
         static_cast<double>(product % running) / static_cast<double>(running);
}

double Count::scaled() const { return scale_count(raw, time_enabled, time_running); }

double Count::running_fraction() const {
  if (time_enabled == 0) return time_running ? 1.0 : 0.0;
  return std::min(1.0, static_cast<double>(time_running) / static_cast<double>(time_enabled));
}

namespace {

constexpr std::uint64_t read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                      PERF_FORMAT_ID | PERF_FORMAT_GROUP;

// A signal can interrupt a read or an ioctl (EINTR); the call is repeated here rather than in each
// Syscalls implementation, so an injected one gets the same treatment as the kernel's. Bounded: a
// process flooded with signals gets EINTR reported instead of spinning. (perf_event_open's EINTR is
// not an interruption but a refusal, perf and ftrace mixed on a uprobe, and is never repeated.)
constexpr int max_eintr_retries = 1000;

template <typename Call>
auto retry_eintr(Call&& call) {
  auto r = call();
  for (int i = 0; r == -EINTR && i < max_eintr_retries; ++i) r = call();
  return r;
}

// The group ioctls, in the order their failures are noted.
constexpr unsigned long group_ioctls[] = {PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_RESET};
constexpr const char* group_ioctl_names[] = {"enable", "disable", "reset"};

// " on CPU 3" for a per-CPU instance; nothing for a task's (cpu -1: it counts wherever the task runs).
std::string on_cpu(int cpu) { return cpu < 0 ? std::string{} : fmt::format(" on CPU {}", cpu); }

// The first page of a counter, mapped for self-monitoring reads; unmapped exactly once.
class Mapping {
 public:
  Mapping(Syscalls& sys, void* address, std::size_t length) : sys_(&sys), address_(address), length_(length) {}
  Mapping(Mapping&& o) noexcept : sys_(o.sys_), address_(std::exchange(o.address_, nullptr)), length_(o.length_) {}
  Mapping& operator=(Mapping&&) = delete;
  Mapping(const Mapping&) = delete;
  ~Mapping() {
    if (address_) sys_->munmap(address_, length_);
  }
  const void* get() const { return address_; }

 private:
  Syscalls* sys_;
  void* address_;
  std::size_t length_;
};

// One group opened on one CPU (or on any CPU for a task): leader first.
struct Instance {
  int cpu = -1;
  std::vector<Fd> fds;
  std::vector<std::size_t> events;  // event index of each fd
  std::vector<std::uint64_t> ids;   // PERF_EVENT_IOC_ID of each fd
  bool ids_known = true;            // every PERF_EVENT_IOC_ID succeeded
  std::vector<Mapping> pages;       // one per fd when user-page reads are on (declared after fds:
                                    // unmapped before the fds close)
  // errno of the last failed enable/disable/reset (group_ioctls order), 0 once it succeeds: until then
  // the counts do not reflect what was asked, and every read() says so.
  int ioctl_errors[std::size(group_ioctls)] = {};
};

}  // namespace

struct Counters::Impl {
  Syscalls* sys = nullptr;
  EventSet set;
  std::vector<Instance> instances;
  std::vector<std::optional<Failure>> failures;
  std::vector<std::string> notes;
  std::vector<char> opened;  // not vector<bool>: read() tests it per event, and bit access cost there
  std::vector<bool> user_only;  // the EACCES fallback was taken
  Target target;
  OpenOptions options;
  std::unique_ptr<spec::Machine> machine;
  std::optional<int> paranoid;
  std::vector<std::uint64_t> buffer;  // group reads, reused across read() calls
  std::vector<UserRead> fast;  // user-page reads of one group, reused across read() calls
  std::vector<char> noted;    // per event: the kinds of runtime fault already noted by this read()
  std::vector<char> present;  // per fd of one instance: its value was in the group read

  // One group ioctl on every instance; a failure is kept for read() to note, never thrown.
  void group_ioctl(std::size_t op) {
    for (auto& inst : instances)
      inst.ioctl_errors[op] =
          -retry_eintr([&] { return sys->ioctl(inst.fds.front().get(), group_ioctls[op], PERF_IOC_FLAG_GROUP); });
  }

  const spec::Pmu* pmu_of(const ResolvedEvent& e) const {
    try {
      return e.pmu.empty() ? nullptr : machine->pmu(e.pmu);
    } catch (const Error&) {
      return nullptr;
    }
  }

  Failure explain(std::size_t event, int error, int cpu, const Attr& attr) const {
    const ResolvedEvent& e = set.events[event];
    spec::OpenContext c;
    c.type = attr.type;
    c.pmu = e.pmu;
    c.pmu_in_sysfs = pmu_of(e) != nullptr;
    c.precise_ip = attr.precise_ip;
    c.bp_type = attr.bp_type;
    c.exclude_kernel = attr.exclude_kernel;
    c.cpu_wide = target.kind == Target::Kind::cpus;
    c.other_process = target.kind == Target::Kind::process && target.pid != ::getpid();
    c.paranoid = paranoid;
    c.privileged = ::geteuid() == 0;
    if (rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0) c.fd_limit = static_cast<long>(rl.rlim_cur);
    Failure f;
    f.error = error;
    f.name = spec::errno_name(error);
    if (const auto* fact = spec::errno_fact(error)) f.meaning = std::string(fact->meaning);
    f.hint = spec::errno_hint(error, c);
    f.cpu = cpu;
    return f;
  }

  std::vector<int> pids() const {
    switch (target.kind) {
      case Target::Kind::self: return {0};
      case Target::Kind::process: return target.threads.empty() ? std::vector<int>{target.pid} : target.threads;
      case Target::Kind::cpus: return {-1};
    }
    return {0};
  }

  // Opens one event; applies the EACCES user-only fallback. Returns the fd or -errno.
  int open_one(std::size_t i, int pid, int cpu, int group_fd, bool leader) {
    Attr a = set.events[i].attr;
    a.size = attr_size_ver8;
    // Counting, not sampling (as perf stat): a period from an event table or a tracepoint would only
    // add overflow interrupts with nowhere to write samples.
    a.sample_period = 0;
    a.freq = 0;
    a.sample_type = 0;
    a.read_format = read_format;
    a.disabled = leader ? 1 : 0;
    a.enable_on_exec = leader && target.enable_on_exec ? 1 : 0;
    if (target.inherit) a.inherit = 1;
    if (user_only[i]) a.exclude_kernel = 1, a.exclude_hv = 1;
    int fd = sys->perf_event_open(a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
    if (fd == -EACCES && options.fallback_to_user && !a.exclude_kernel) {
      a.exclude_kernel = 1;
      a.exclude_hv = 1;
      int retry = sys->perf_event_open(a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
      if (retry >= 0) {
        if (!user_only[i]) {
          user_only[i] = true;
          notes[i] = "counted user space only (':u'): kernel counting was refused with EACCES";
          set.events[i].name += set.events[i].name.find(':') == std::string::npos ? ":u" : "u";
        }
        return retry;
      }
      fd = retry;
    }
    if (fd < 0 && !failures[i]) failures[i] = explain(i, -fd, cpu, a);
    return fd;
  }

  void open_alone(std::size_t i, int pid, int cpu) {
    Instance inst;
    inst.cpu = cpu;
    int fd = open_one(i, pid, cpu, -1, true);
    if (fd < 0) return;
    inst.fds.emplace_back(*sys, fd);
    inst.events.push_back(i);
    finish(inst);
  }

  void finish(Instance& inst) {
    if (options.user_page && target.kind == Target::Kind::self) {
      auto length = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      for (const auto& fd : inst.fds) {
        void* p = sys->mmap(fd.get(), length);
        if (!p) {
          inst.pages.clear();  // read(2) for this group
          break;
        }
        inst.pages.emplace_back(*sys, p, length);
      }
    }
    for (std::size_t k = 0; k < inst.fds.size(); ++k) {
      std::uint64_t id = 0;
      auto ask = [&] { return sys->ioctl(inst.fds[k].get(), PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)); };
      if (retry_eintr(ask) < 0) id = ~0ULL - k, inst.ids_known = false;
      inst.ids.push_back(id);
      opened[inst.events[k]] = 1;
    }
    instances.push_back(std::move(inst));
  }

  void open_group(const EventGroup& g, int pid, int cpu) {
    std::size_t lead = g.members.front();
    // What failed before this attempt (on earlier CPUs) stays reported if a weak group falls back here.
    std::vector<std::optional<Failure>> earlier;
    if (g.weak)
      for (std::size_t m : g.members) earlier.push_back(failures[m]);
    Instance inst;
    inst.cpu = cpu;
    int fd = open_one(lead, pid, cpu, -1, true);
    if (fd < 0) {
      for (std::size_t k = 1; k < g.members.size(); ++k) {
        std::size_t m = g.members[k];
        if (g.weak) {
          open_alone(m, pid, cpu);
        } else if (!failures[m]) {
          // Also when the member was opened on other CPUs: it then counts without this CPU, which its
          // failure (with the CPU) must say.
          Failure f = *failures[lead];
          f.detail = fmt::format("its group leader '{}' could not be opened", set.events[lead].name);
          failures[m] = f;
        }
      }
      return;
    }
    inst.fds.emplace_back(*sys, fd);
    inst.events.push_back(lead);
    for (std::size_t k = 1; k < g.members.size(); ++k) {
      std::size_t m = g.members[k];
      int mfd = open_one(m, pid, cpu, inst.fds.front().get(), false);
      if (mfd < 0) {
        if (g.weak) {
          // A weak group that cannot be opened whole is counted as separate events (perf's :W).
          std::string why = fmt::format("weak group fell back to counting its events alone ({} on '{}')",
                                        spec::errno_name(-mfd), set.events[m].name);
          inst.fds.clear();
          for (std::size_t k2 = 0; k2 < g.members.size(); ++k2) {
            std::size_t x = g.members[k2];
            failures[x] = earlier[k2];
            notes[x] = why;
            open_alone(x, pid, cpu);
          }
          return;
        }
        continue;  // the failure is recorded; the rest of the group still counts
      }
      inst.fds.emplace_back(*sys, mfd);
      inst.events.push_back(m);
    }
    finish(inst);
  }

  std::vector<int> cpus_for(const EventGroup& g, const std::vector<int>& wanted, bool explicit_cpus) const {
    if (target.kind != Target::Kind::cpus) return {-1};
    const spec::Pmu* pmu = pmu_of(set.events[g.members.front()]);
    std::vector<int> out = wanted;
    if (pmu && !pmu->cpumask().empty()) {
      // Uncore PMUs count per package: open them only on the CPUs they name (perf does the same).
      auto mask = parse_cpu_list(pmu->cpumask());
      if (!explicit_cpus) return mask;
      std::erase_if(out, [&](int c) { return std::find(mask.begin(), mask.end(), c) == mask.end(); });
    } else if (pmu && !pmu->cpus().empty()) {
      auto own = parse_cpu_list(pmu->cpus());  // hybrid: a core PMU serves only its CPUs
      std::erase_if(out, [&](int c) { return std::find(own.begin(), own.end(), c) == own.end(); });
    }
    return out;
  }
};

Counters::Counters(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Counters::Counters(Counters&&) noexcept = default;
Counters& Counters::operator=(Counters&&) noexcept = default;
Counters::~Counters() = default;

Counters Counters::open(const EventSet& set, const Target& target, const OpenOptions& options, Syscalls& sys) {
  auto impl = std::make_unique<Impl>();
  impl->sys = &sys;
  impl->set = set;
  impl->target = target;
  impl->options = options;
  impl->machine = std::make_unique<spec::Machine>(options.sysfs_root);
  impl->paranoid = spec::read_paranoid();
  std::size_t n = set.events.size();
  impl->failures.resize(n);
  impl->notes.resize(n);
  impl->opened.assign(n, 0);
  impl->user_only.assign(n, false);
  if (target.kind == Target::Kind::process && target.pid <= 0)
    throw Error(fmt::format("invalid process id {}", target.pid));
  std::vector<int> cpus = target.cpus;
  bool explicit_cpus = !cpus.empty();
  if (target.kind == Target::Kind::cpus && cpus.empty()) cpus = online_cpus();
  for (const auto& g : impl->set.groups)
    for (int pid : impl->pids())
      for (int cpu : impl->cpus_for(g, cpus, explicit_cpus)) impl->open_group(g, pid, cpu);
  return Counters(std::move(impl));
}

void Counters::enable() { impl_->group_ioctl(0); }
void Counters::disable() { impl_->group_ioctl(1); }
void Counters::reset() { impl_->group_ioctl(2); }

std::vector<Count> Counters::read() {
  std::vector<Count> out;
  read(out);
  return out;
}

void Counters::read(std::vector<Count>& out) {
  auto& I = *impl_;
  out.resize(I.set.events.size());
  // Until the last loop, `state` only says whether a value was read for the event: counted when one
  // was (a value may be 0, so the value itself cannot say).
  for (auto& c : out) {
    c.raw = c.time_enabled = c.time_running = 0;
    c.note.clear();
    c.state = Count::State::not_counted;
  }
  // Runtime faults are noted once per kind and event, for the first CPU that had one: on a large
  // machine the same fault on every CPU would otherwise repeat the note hundreds of times.
  auto& noted = I.noted;
  bool noted_ready = false;  // cleared on the first fault: a read without faults does not touch it
  enum : char { read_fault = 1 << 3, short_read = 1 << 4 };  // bits 0-2: group_ioctls
  auto note = [&](std::size_t e, char kind, auto&& text) {
    if (!noted_ready) noted.assign(out.size(), 0), noted_ready = true;
    if (noted[e] & kind) return;
    noted[e] = static_cast<char>(noted[e] | kind);
    if (!out[e].note.empty()) out[e].note += "; ";
    out[e].note += text();
  };
  auto& buf = I.buffer;
  for (auto& inst : I.instances) {
    for (std::size_t op = 0; op < std::size(group_ioctls); ++op)
      if (int err = inst.ioctl_errors[op])
        for (std::size_t e : inst.events)
          note(e, static_cast<char>(1 << op), [&] {
            return fmt::format("{} failed{}: {}", group_ioctl_names[op], on_cpu(inst.cpu), spec::errno_name(err));
          });
    // Self-monitoring: every counter of the group through its user page (rdpmc), when all allow it.
    if (!inst.pages.empty() && inst.pages.size() == inst.fds.size()) {
      auto& fast = I.fast;
      fast.clear();
      for (const auto& m : inst.pages)
        if (auto r = read_mapped_page(m.get())) fast.push_back(*r);
      if (fast.size() == inst.fds.size()) {
        for (std::size_t k = 0; k < fast.size(); ++k) {
          std::size_t e = inst.events[k];
          out[e].raw += fast[k].value;
          out[e].time_enabled += fast[k].time_enabled;
          out[e].time_running += fast[k].time_running;
          out[e].state = Count::State::counted;
        }
        continue;
      }
    }
    // PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID: nr, enabled, running, {value, id}[nr]
    buf.resize(3 + 2 * inst.fds.size());
    std::size_t want = buf.size() * sizeof(std::uint64_t);
    long r = retry_eintr([&] { return I.sys->read(inst.fds.front().get(), buf.data(), want); });
    if (r < 0) {
      for (std::size_t e : inst.events)
        note(e, read_fault, [&] {
          return fmt::format("read failed{}: {}", on_cpu(inst.cpu), spec::errno_name(static_cast<int>(-r)));
        });
      continue;
    }
    auto bytes = static_cast<std::size_t>(r);
    std::uint64_t nr = 0;  // the {value, id} pairs the read holds in full
    if (bytes >= 3 * sizeof(std::uint64_t))
      nr = std::min<std::uint64_t>({buf[0], inst.fds.size(), (bytes / sizeof(std::uint64_t) - 3) / 2});
    const bool short_read_seen = bytes < want;
    auto& present = I.present;  // which values a short read held
    if (short_read_seen) present.assign(inst.fds.size(), 0);
    // Sizes and data held in locals: the stores into `out` below would otherwise make the compiler
    // reload them for every value (this loop is most of a group read's own time).
    const std::size_t fds = inst.fds.size(), known_ids = inst.ids.size();
    const std::uint64_t* ids = inst.ids.data();
    const std::uint64_t enabled = buf[1], running = buf[2];
    Count* counts = out.data();
    for (std::uint64_t k = 0; k < nr; ++k) {
      std::uint64_t value = buf[3 + 2 * k], id = buf[4 + 2 * k];
      // The kernel reports the leader, then the members in the order they were opened: the id at
      // position k is normally ids[k].
      std::size_t pos = k;
      if (k >= known_ids || ids[k] != id) {
        const std::uint64_t* it = std::find(ids, ids + known_ids, id);
        // Without ids (PERF_EVENT_IOC_ID failed) that order is the only map; with them an unknown id
        // is dropped rather than put on the wrong event.
        if (it == ids + known_ids && inst.ids_known) continue;
        if (it != ids + known_ids) pos = static_cast<std::size_t>(it - ids);
      }
      if (pos >= fds) continue;
      Count& c = counts[inst.events[pos]];
      if (short_read_seen) present[pos] = 1;
      c.raw += value;
      c.time_enabled += enabled;
      c.time_running += running;
      c.state = Count::State::counted;
    }
    // The values a short read left out are not counted on this CPU, which must not pass silently.
    if (short_read_seen)
      for (std::size_t k = 0; k < inst.fds.size(); ++k)
        if (!present[k])
          note(inst.events[k], short_read,
               [&] { return fmt::format("short read{}: {} of {} bytes", on_cpu(inst.cpu), bytes, want); });
  }
  const std::size_t n = out.size();
  for (std::size_t e = 0; e < n; ++e) {
    Count& c = out[e];
    if (I.failures[e]) c.failure = I.failures[e];
    else c.failure.reset();
    if (!I.notes[e].empty()) c.note = I.notes[e] + (c.note.empty() ? "" : "; " + c.note);
    if (!I.opened[e]) c.state = Count::State::not_supported;
    else if (c.state != Count::State::counted || c.time_running == 0) c.state = Count::State::not_counted;
  }
}

const EventSet& Counters::events() const { return impl_->set; }

std::size_t Counters::open_fds() const {
  std::size_t n = 0;
  for (const auto& inst : impl_->instances) n += inst.fds.size();
  return n;
}

}  // namespace perfspec::runtime
