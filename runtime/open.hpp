// SPDX-License-Identifier: MIT
#pragma once
// Opening an event set: each group on each CPU its PMU allows, fds owned, every failure explained.
// Internal to runtime/: Counters opens for counting; a ring buffer opens for sampling through the
// same code with its own attr preparation.
#include <linux/perf_event.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perfspec/runtime.hpp"

namespace perfspec::runtime {

// A signal can interrupt a read or an ioctl (EINTR); the call is repeated here rather than in each
// Syscalls implementation, so an injected one gets the same treatment as the kernel's. Bounded: a
// process flooded with signals gets EINTR reported instead of spinning. (perf_event_open's EINTR is
// not an interruption but a refusal, perf and ftrace mixed on a uprobe, and is never repeated.)
inline constexpr int max_eintr_retries = 1000;

template <typename Call> auto retry_eintr(Call&& call) {
  auto r = call();
  for (int i = 0; r == -EINTR && i < max_eintr_retries; ++i) r = call();
  return r;
}

/// The group ioctls, in the order their failures are noted.
inline constexpr unsigned long group_ioctls[] = {PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE,
                                                 PERF_EVENT_IOC_RESET};
/// The note a failure of each says it with.
inline constexpr Note::Kind group_ioctl_notes[] = {Note::Kind::enable_failed, Note::Kind::disable_failed,
                                                   Note::Kind::reset_failed};

/// A region of an event fd mapped with Syscalls::mmap, unmapped exactly once.
class Mapping {
 public:
  Mapping(Syscalls& sys, void* address, std::size_t length)
      : sys_(&sys), address_(address), length_(length) {}
  Mapping(Mapping&& o) noexcept
      : sys_(o.sys_), address_(std::exchange(o.address_, nullptr)), length_(o.length_) {}
  Mapping& operator=(Mapping&&) = delete;
  Mapping(const Mapping&) = delete;
  ~Mapping() {
    if (address_) sys_->munmap(address_, length_);
  }
  void* get() const { return address_; }
  std::size_t size() const { return length_; }

 private:
  Syscalls* sys_;
  void* address_;
  std::size_t length_;
};

/// One group opened on one CPU (or on any CPU for a task): leader first.
struct Instance {
  int cpu = -1;
  int thread = -1;  ///< the thread opened on, when the target is one of several threads
  std::vector<Fd> fds;
  std::vector<std::size_t> events;  ///< event index of each fd
  std::vector<std::uint64_t> ids;   ///< PERF_EVENT_IOC_ID of each fd
  bool ids_known = true;            ///< every PERF_EVENT_IOC_ID succeeded
  std::vector<Mapping> pages;       ///< one per fd when user-page reads are on (declared after fds:
                                    ///< unmapped before the fds close)
  /// errno of the last failed enable/disable/reset (group_ioctls order), 0 once it succeeds: until
  /// then the counts do not reflect what was asked, and every read says so.
  int ioctl_errors[std::size(group_ioctls)] = {};
};

/// An event set as opened: the fds, and per event whether it opened, why not, and what fallback
/// was taken.
struct OpenedSet {
  EventSet set;  ///< names updated by fallbacks (`cycles` -> `cycles:u`)
  std::vector<Instance> instances;
  std::vector<std::optional<Failure>> failures;
  std::vector<std::optional<Note>> notes;  // the fallback taken when opening (the last one wins)
  std::vector<char> opened;     // not vector<bool>: reads test it per event, and bit access costs there
  std::vector<char> user_only;  // the EACCES fallback was taken
  /// Per event: the attr it was opened with (the last successful open), or the last one tried when it
  /// never opened (a sampler writes these into perf.data).
  std::vector<Attr> attrs;
  std::vector<char> attr_opened;  // attrs[i] is from a successful open
};

/// Readies an event's attr for perf_event_open: what the caller (counting, sampling) needs of it.
/// `leader` is true for a group's first event (and an event opened alone); `event` is its index in the
/// set.
using PrepareAttr = std::function<void(Attr& attr, bool leader, std::size_t event)>;

/// Opens every group of `set` for `target` on the CPUs each leader's PMU allows (ResolvedEvent
/// placement), with perf's fallbacks (EACCES -> user-only, weak groups -> events alone). Events that
/// cannot be opened are explained in `failures`, never thrown. `task_per_cpu`: a task (Kind::self,
/// Kind::process) is opened on every CPU (`target.cpus`, else all online) instead of on any CPU, as
/// sampling an inherited task needs (the kernel maps no buffer of an inherited per-task event).
OpenedSet open_set(const EventSet& set, const Target& target, const OpenOptions& options, Syscalls& sys,
                   const PrepareAttr& prepare, bool task_per_cpu = false);

/// The CPUs to open a group led by `leader` on: -1 (any) for a task; for CPUs, `wanted` (all online
/// when not `explicit_cpus`) limited to the PMU's own: an uncore PMU's cpumask (all of it when no CPU
/// was asked for), a hybrid core PMU's cpus.
std::vector<int> cpus_for(const ResolvedEvent& leader, const Target& target, const std::vector<int>& wanted,
                          bool explicit_cpus);

}  // namespace perfspec::runtime
