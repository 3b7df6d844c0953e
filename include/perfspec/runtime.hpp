// SPDX-License-Identifier: MIT
#pragma once
// Opening, enabling and reading resolved events (perf_event_open(2)), with every failure explained.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "perfspec/event_set.hpp"

struct pollfd;  // <poll.h>

namespace perfspec::runtime {

/// The system calls the runtime makes, and the facts about the host it reads. One small interface,
/// so tests inject any errno or any host without a special kernel. Every call returns -errno on
/// failure; Counters repeats a read or ioctl that returns -EINTR (an implementation need not). The
/// host facts have real implementations here; a test double overrides the ones it fakes.
///
/// Example: a test double that refuses every open with EACCES, on a host with paranoid level 3:
/// ```
/// struct Refuse : runtime::Syscalls {
///   int perf_event_open(const Attr&, int, int, int, unsigned long) override { return -EACCES; }
///   std::optional<int> perf_event_paranoid() override { return 3; }
///   ...  // read, ioctl, close, mmap, munmap forward to runtime::system_calls()
/// };
/// Refuse sys;
/// auto counters = runtime::Counters::open(set, runtime::Target::self_thread(), {}, sys);
/// ```
class Syscalls {
 public:
  virtual ~Syscalls() = default;
  /// perf_event_open(2) for `attr` (perfspec's value type; the real implementation converts it to
  /// the kernel layout). Returns a file descriptor or -errno.
  virtual int perf_event_open(const Attr& attr, int pid, int cpu, int group_fd, unsigned long flags) = 0;
  virtual long read(int fd, void* buffer, std::size_t size) = 0;
  virtual int ioctl(int fd, unsigned long request, unsigned long argument) = 0;
  virtual int close(int fd) = 0;
  /// mmap(2) (MAP_SHARED) of `length` bytes of the event from offset 0 with protection `prot`
  /// (PROT_READ for a counter's user page; PROT_READ|PROT_WRITE for a ring buffer, whose reader
  /// writes data_tail); nullptr on failure, with errno saying why (a double sets errno too).
  virtual void* mmap(int fd, std::size_t length, int prot) = 0;
  virtual int munmap(void* address, std::size_t length) = 0;
  /// poll(2) of `count` descriptors: how many have events, or -errno. Sampler waits with it; the real
  /// one is the default, so a double that does not sample need not override it.
  virtual int poll(::pollfd* fds, std::size_t count, int timeout_ms);

  /// /proc/sys/kernel/perf_event_paranoid; nullopt when unreadable.
  virtual std::optional<int> perf_event_paranoid();
  /// Whether this process may do what perf_event_paranoid keeps from others (effective uid 0).
  virtual bool privileged();
  /// Whether the machine's switch for reading counters in user space is off: on arm64
  /// /proc/sys/kernel/perf_user_access is 0, on x86 /sys/bus/event_source/devices/cpu/rdpmc is 0
  /// (false when there is no such file). Asked only to explain a user_read_fallback note.
  virtual bool user_access_off();
  /// The soft RLIMIT_NOFILE; nullopt when unknown.
  virtual std::optional<long> fd_limit();
  virtual std::size_t page_size();
  /// The online CPUs (/sys/devices/system/cpu/online, else 0..nproc-1).
  virtual std::vector<int> online_cpus();
};

/// The real system calls.
///
/// Example: `runtime::system_calls().close(fd);`
Syscalls& system_calls();

/// Whether an event of `type` and `config` opens on this thread (any CPU), as perf's
/// is_event_supported() asks before `perf list` shows a generic event: disabled, then again with
/// exclude_kernel (perf_event_paranoid 2), then also with exclude_guest (PMUs that require it).
///
/// Example: `event_opens(1, 0)  // cpu-clock: true wherever perf_event_open(2) is allowed`
bool event_opens(std::uint32_t type, std::uint64_t config, Syscalls& sys = system_calls());

/// An owned file descriptor: closed exactly once, through the Syscalls that opened it.
///
/// Example: `runtime::Fd fd(runtime::system_calls(), raw_fd);  // closed when fd goes out of scope`
class Fd {
 public:
  Fd() = default;
  Fd(Syscalls& sys, int fd) : sys_(&sys), fd_(fd) {}
  Fd(Fd&& o) noexcept : sys_(o.sys_), fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  Syscalls* sys_ = nullptr;
  int fd_ = -1;
};

class Command;

/// What to count.
///
/// Example: `Target::self_thread()`, `Target::process(1234)`, `Target::system_wide({0, 1})`,
/// `Target::command(cmd)`.
struct Target {
  enum class Kind { self, process, cpus };
  Kind kind = Kind::self;
  int pid = 0;                  ///< Kind::process: the process (or a child forked by the caller)
  std::vector<int> threads;     ///< Kind::process: the threads to open on (empty: just `pid`)
  std::vector<int> cpus;        ///< Kind::cpus: these CPUs, every process (empty: all online CPUs)
  bool inherit = false;         ///< count children created after opening too
  bool enable_on_exec = false;  ///< start counting when the (stopped) target calls exec
  /// Kind::cpus: per event of the set, a cgroup (an fd of its directory in the cgroup filesystem) to
  /// count that event in only (PERF_FLAG_PID_CGROUP), or -1 for every process; empty: every event
  /// counts every process (as perf's -G, which names a cgroup per event). The members of a group
  /// in different cgroups are refused by the kernel (EINVAL), reported as the member's failure. The
  /// caller keeps the fds open until Counters::open returns.
  std::vector<int> cgroups{};
  /// Kind::self, Kind::process: the thread/process; Kind::cpus: everything on the given CPUs.
  static Target self_thread() { return {}; }
  static Target process(int pid, bool inherit = true) {
    return {Kind::process, pid, {}, {}, inherit, false, {}};
  }
  static Target system_wide(std::vector<int> cpus = {}) {
    return {Kind::cpus, -1, {}, std::move(cpus), false, false, {}};
  }
  /// A command held before exec (see Command): its counters start at exec, children included.
  static Target command(const Command& command, bool inherit = true);
};

/// A command to count: forked at construction and held before exec until start(), so that counters
/// opened in between (Target::command) begin exactly at exec. Never started, it exits 127 unrun.
/// While it waits it is named `perf-exec` (/proc/PID/comm), as perf names its command then: the
/// constructor returns once it is.
/// The destructor reaps it (after start(): waits for it; callers that want to stop it signal first).
///
/// Example:
/// ```
/// runtime::Command cmd({"ls", "-l"});
/// auto counters = runtime::Counters::open(set, runtime::Target::command(cmd));
/// if (int err = cmd.start()) { /* exec failed: strerror(err) */ }
/// cmd.wait();
/// auto counts = counters.read();
/// ```
class Command {
 public:
  /// `stdout_fd`: where the command's standard output goes (dup2'd onto its fd 1 before exec), -1 for
  /// this process's own; `perfspec record -o -` sends it to standard error, as perf does, since its
  /// own standard output carries the recording.
  explicit Command(const std::vector<std::string>& argv, int stdout_fd = -1);
  ~Command();
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  int pid() const { return pid_; }
  /// Let the command exec. Returns 0, or the errno of a failed exec (it then exits 127 or 126).
  int start();
  /// Wait up to `timeout_ms` (-1: until it exits). True once it has exited (and been reaped).
  bool wait(int timeout_ms = -1);
  bool exited() const { return reaped_; }
  /// Its exit status, 128+N when signal N ended it (as shells report it). Valid once exited().
  int exit_status() const;
  double user_seconds() const;
  double system_seconds() const;
  /// Send a signal (ignored once it has exited).
  void signal(int sig);

 private:
  int pid_ = -1;
  int go_ = -1, err_ = -1;
  int pidfd_ = -1;  ///< pidfd_open(2) of the child: wait() sleeps in poll(2) on it (-1: polls wait4)
  bool reaped_ = false;
  int status_ = 0;
  double user_ = 0, system_ = 0;
};

/// How to open. Where each event may be opened (an uncore PMU's cpumask, a hybrid core PMU's cpus)
/// travels with the event set (ResolvedEvent::placement): nothing is read from sysfs here.
struct OpenOptions {
  /// On EACCES for an event that counts the kernel, retry it user-only (`:u`), as perf does. The
  /// event's report then says so and its name gains `:u`.
  bool fallback_to_user = true;
  /// Kind::self: map the first page of each counter, and let read() take the counts with rdpmc (x86-64)
  /// or the PMU registers (arm64) when every page of a group allows it (index != 0 and
  /// cap_user_rdpmc); otherwise, or on other architectures, read() uses read(2). Same results.
  bool user_page = false;
  /// Per event (by index; empty: none): a tracepoint filter set on each of its fds before anything is
  /// enabled (PERF_EVENT_IOC_SET_FILTER, perf's --filter). Where the kernel refuses one, that instance
  /// is closed and its events fail with the reason (FailureCase::filter_refused).
  std::vector<std::string> filters{};
};

/// Why an event could not be opened.
struct Failure {
  int error = 0;        ///< errno
  std::string name;     ///< "ENOENT"
  std::string meaning;  ///< what perf_event_open(2) means by it
  std::string hint;     ///< what to do
  int cpu = -1;         ///< the CPU it failed on (-1: any)
  std::string detail;   ///< e.g. "its group leader could not be opened"
  /// The kernel refused the event's tracepoint filter (OpenOptions::filters), or its group's other
  /// event's: the event itself could be opened.
  bool filter_refused = false;
};

/// Something to know when reading an event's count: a fallback taken when it was opened, or a fault
/// of this read. A value, not text: `perfspec::describe(note)` (print.hpp) says it in words, and with
/// `perfspec/fmt.hpp` a Note formats as that text.
///
/// Example: `if (n.kind == Note::Kind::read_failed && n.error == EBADF) reopen();`
struct Note {
  enum class Kind : std::uint8_t {
    /// Opening: kernel counting was refused (`error`, EACCES), so it counts user space only and its
    /// name gained `:u` (OpenOptions::fallback_to_user).
    user_only,
    /// Opening: a weak group (`:W`) could not be opened whole, so its events count alone; `error` is
    /// why and `event` the member that could not join it.
    weak_group_alone,
    /// Reading: the last PERF_EVENT_IOC_ENABLE, _DISABLE or _RESET of the group failed (`error`, on
    /// `cpu`), so its counts do not reflect what was asked. Noted by every read until one succeeds.
    enable_failed,
    disable_failed,
    reset_failed,
    /// Reading: read(2) of the group failed (`error`, on `cpu`): not counted there.
    read_failed,
    /// Reading: read(2) of the group returned `bytes` of the `wanted`: the values it left out are
    /// not counted on `cpu`.
    short_read,
    /// Reading: OpenOptions::user_page was asked, but the counter's page did not allow a read in
    /// user space (`obstacle` says why), so the group was read with read(2). Same values.
    user_read_fallback,
    /// Reading: the event's group was enabled but never on the PMU (time_running 0): a group that
    /// needs more counters than the PMU has free is never scheduled. A driver that checks groups
    /// only when they are enabled at open (arm64's, for one) accepts such a group disabled.
    group_never_ran,
  };
  /// Why a counter could not be read in user space (user_read_fallback).
  enum class Obstacle : std::uint8_t {
    none,
    /// arm64: /proc/sys/kernel/perf_user_access is 0.
    perf_user_access_off,
    /// x86: /sys/bus/event_source/devices/cpu/rdpmc is 0.
    rdpmc_off,
    /// The kernel did not grant it (cap_user_rdpmc 0): software events never have it; on arm64 a
    /// hardware event asks with config1 bit 1 (the PMU's `rdpmc` term).
    not_granted,
    /// The counter was on no hardware counter at the read (index 0): disabled, or multiplexed out.
    not_on_counter,
    /// perfspec reads counters in user space on x86-64 and arm64 only.
    architecture,
  };
  Kind kind = Kind::user_only;
  int error = 0;                       ///< errno, when the note is about one
  int cpu = -1;                        ///< the CPU of the counter it is about (-1: a task's, on any CPU)
  std::size_t bytes = 0;               ///< short_read
  std::size_t wanted = 0;              ///< short_read
  std::string event{};                 ///< weak_group_alone: the name of the member that failed
  Obstacle obstacle = Obstacle::none;  ///< user_read_fallback
  friend bool operator==(const Note&, const Note&) = default;
};

/// One event's numbers. `not_supported` and `not_counted` are states, never a silent 0.
///
/// Example: `if (c.state == Count::State::counted) std::printf("%.0f (%.0f%% running)\n", c.scaled(), 100 *
/// c.running_fraction());`
struct Count {
  enum class State { counted, not_counted, not_supported };
  State state = State::not_supported;
  std::uint64_t raw = 0;  ///< summed over CPUs
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  std::optional<Failure> failure;  ///< when not_supported (or when it failed on some CPUs only)
  /// What to know besides the numbers, in order: the fallback taken when opening (at most one), then
  /// this read's faults, each kind once per event (for the first CPU that had it).
  std::vector<Note> notes;
  /// raw * time_enabled / time_running (multiplexing); raw when it ran all the time.
  double scaled() const;
  /// time_running / time_enabled, 1.0 when it ran all the time, 0 when never.
  double running_fraction() const;
};

/// A place counters count in (Counters::places).
struct Place {
  int cpu = -1;
  int thread = -1;
  friend auto operator<=>(const Place&, const Place&) = default;
};

/// The counts of one place (Counters::read_places).
struct PlaceCounts {
  Place place;
  std::vector<Count> counts;
  std::vector<char> here;  ///< per event: opened at this place
};

/// Scaling arithmetic on its own (exact in 128 bits before the division).
///
/// Example: `scale_count(1000, 100, 50) == 2000.0` (the event ran half of the time).
double scale_count(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running);

/// The CPUs an event of `set` counts on for `target`, as perf 6.12 decides them
/// (__perf_evlist__propagate_maps): -1 alone for a task (an uncore PMU's cpumask still), every online
/// CPU system-wide, but an uncore PMU's cpumask and a hybrid core PMU's `cpus`, and `duration_time` CPU
/// 0; with CPUs asked for, those (a hybrid core PMU's limited to its own).
///
/// Example: `event_cpus(set.events[0], Target::system_wide(), {0, 1}) == std::vector<int>{0, 1}`
std::vector<int> event_cpus(const ResolvedEvent& event, const Target& target, const std::vector<int>& online);

/// A member taken out of its group by ungroup_by_cpus, and why (print.hpp's ungroup_warning says it as
/// perf stat does).
struct Ungrouped {
  /// The first member taken out of its group: the group as it was follows (its name, "" for an
  /// anonymous group, and its members' names in order); empty for the others.
  bool first = false;
  std::string group_name{};
  std::vector<std::string> group_members{};
  std::string leader{};
  std::vector<int> leader_cpus{};  ///< the CPUs the leader counts on (-1: any)
  std::string member{};
  std::vector<int> member_cpus{};
};

/// A group whose members would count on other CPUs than its leader cannot be scheduled by the kernel (a
/// software leader with an uncore member: the uncore PMU counts on its cpumask's CPU alone). As perf
/// stat 6.12 does (evlist__check_cpu_maps), each such member is taken out of its group, where it stands,
/// to count alone. Returns the members taken out, in order.
///
/// Example: `std::fputs(perfspec::ungroup_warning(ungroup_by_cpus(set, target)).c_str(), stderr);`
std::vector<Ungrouped> ungroup_by_cpus(EventSet& set, const Target& target, Syscalls& sys = system_calls());

/// An open event set. Owns every file descriptor; nothing leaks on any path, exceptions included.
///
/// Example: `counters.enable(); work(); counters.disable(); auto counts = counters.read(); counters.reset();`
class Counters {
 public:
  /// Open `set` for `target`. Events that cannot be opened are reported in their Count, never thrown:
  /// the others still count. Throws perfspec::Error only for a target that cannot be used at all.
  ///
  /// Example:
  /// ```
  /// auto counters = runtime::Counters::open(resolve("task-clock,page-faults", machine),
  ///                                          runtime::Target::self_thread());
  /// counters.enable(); work(); counters.disable();
  /// for (const auto& c : counters.read()) std::printf("%.0f\n", c.scaled());
  /// ```
  static Counters open(const EventSet& set, const Target& target, const OpenOptions& options = {},
                       Syscalls& sys = system_calls());
  Counters(Counters&&) noexcept;
  Counters& operator=(Counters&&) noexcept;
  ~Counters();

  /// PERF_EVENT_IOC_ENABLE / DISABLE / RESET on every group leader with PERF_IOC_FLAG_GROUP.
  void enable();
  void disable();
  void reset();
  /// Current values, one per event of the set (in order).
  std::vector<Count> read();
  /// The same into `out`, reusing its storage: no allocation after the first call (for loops that
  /// read often).
  void read(std::vector<Count>& out);
  /// Where the counters count: each distinct CPU (-1: any) and thread (-1: not one thread of
  /// several; Target::process with `threads` opens one counter per thread) of the opened groups,
  /// ordered by CPU, then thread.
  const std::vector<Place>& places() const;
  /// read() split by place: `out[p].counts[e]` is event `e` as counted at `places()[p]` alone, and
  /// `out[p].here[e]` says whether the event was opened there at all (an uncore event only on its
  /// cpumask's CPUs, for one): a count that is not `here` is not_supported (with the event's failure
  /// when it was opened nowhere).
  void read_places(std::vector<PlaceCounts>& out);
  /// The event set, with names updated by fallbacks (`cycles` -> `cycles:u`).
  const EventSet& events() const;
  /// Per event: why it could not be opened (everywhere, or on some CPUs), nullopt when it opened
  /// everywhere it was asked to; known from open(), before any read.
  ///
  /// Example: `if (auto& f = c.failures()[e]) log(f->name + ": " + f->hint);`
  const std::vector<std::optional<Failure>>& failures() const;
  /// Per event: whether it was opened anywhere.
  bool opened(std::size_t event) const;
  /// How many file descriptors are open.
  std::size_t open_fds() const;

 private:
  struct Impl;
  explicit Counters(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The part of struct perf_event_mmap_page that self-monitoring reads (perf_event_open(2), "mmap layout";
/// linux/perf_event.h).
struct UserPage {
  std::uint32_t lock;
  std::uint32_t index;
  std::int64_t offset;
  std::uint64_t time_enabled;
  std::uint64_t time_running;
  bool cap_user_rdpmc;
  bool cap_user_time;
  std::uint16_t pmc_width;
  std::uint16_t time_shift;
  std::uint32_t time_mult;
  std::uint64_t time_offset;
};

/// A snapshot of a counter read through its user page, or nullopt when the page does not allow it
/// (index 0 or no cap_user_rdpmc: fall back to read(2)).
struct UserRead {
  std::uint64_t value;
  std::uint64_t time_enabled;
  std::uint64_t time_running;
};

/// The seqlock read protocol of perf_event_mmap_page: `load` returns a consistent copy of the page
/// fields at one instant (it is called again while `lock` changes), `rdpmc(index - 1)` reads the
/// hardware counter, `cycles()` the time-stamp counter. Retries until the lock is stable.
template <typename Load, typename Rdpmc, typename Cycles>
std::optional<UserRead> read_user_page(Load&& load, Rdpmc&& rdpmc, Cycles&& cycles) {
  for (;;) {
    UserPage p = load();
    std::uint32_t seq = p.lock;
    if (!p.cap_user_rdpmc || p.index == 0) {
      UserPage again = load();
      if (again.lock != seq) continue;
      return std::nullopt;
    }
    std::uint64_t pmc = rdpmc(p.index - 1);
    std::uint64_t cyc = p.cap_user_time ? cycles() : 0;
    UserPage after = load();
    if (after.lock != seq) continue;  // torn: the kernel updated the page meanwhile
    std::int64_t count = p.offset;
    if (p.pmc_width > 0 && p.pmc_width < 64) {
      unsigned shift = 64u - p.pmc_width;
      count += static_cast<std::int64_t>(pmc << shift) >> shift;  // sign-extend to pmc_width
    } else {
      count += static_cast<std::int64_t>(pmc);
    }
    UserRead r{static_cast<std::uint64_t>(count), p.time_enabled, p.time_running};
    if (p.cap_user_time) {
      // time_enabled/running advance by time_offset + (cyc * time_mult) >> time_shift since the page
      // was written (perf_event_mmap_page comment in perf_event.h).
      std::uint64_t quot = cyc >> p.time_shift;
      std::uint64_t rem = cyc & ((std::uint64_t{1} << p.time_shift) - 1);
      std::uint64_t delta = p.time_offset + quot * p.time_mult + ((rem * p.time_mult) >> p.time_shift);
      r.time_enabled += delta;
      r.time_running += delta;
    }
    return r;
  }
}

}  // namespace perfspec::runtime
