// SPDX-License-Identifier: MIT
#pragma once
// What perf_event_open(2)'s errors mean (the ERRORS section of the man page) and what a user can do
// about each, given what was being opened.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfspec::spec {

struct ErrnoFact {
  int code;
  std::string_view name;     ///< "EACCES"
  std::string_view meaning;  ///< what perf_event_open(2) means by it, in one sentence
};

/// The fact for an errno perf_event_open(2) documents, or nullptr.
///
/// Example: `errno_fact(ENOSPC)->meaning` says there are more breakpoints than debug registers.
const ErrnoFact* errno_fact(int code);
/// "EACCES", or "errno 123" for one the table does not know.
///
/// Example: `errno_name(EACCES) == "EACCES"`.
std::string errno_name(int code);

/// What was being opened when the error came back; everything a hint depends on.
struct OpenContext {
  std::uint32_t type = 0;    ///< attr.type
  std::string pmu;           ///< PMU name the event was resolved for
  bool pmu_in_sysfs = true;  ///< the machine's sysfs lists that PMU
  unsigned precise_ip = 0;
  std::uint32_t bp_type = 0;  ///< breakpoints: HW_BREAKPOINT_R/W/X bits
  bool exclude_kernel = false;
  bool cpu_wide = false;         ///< pid == -1
  bool other_process = false;    ///< pid > 0
  std::optional<int> paranoid;   ///< /proc/sys/kernel/perf_event_paranoid
  bool privileged = false;       ///< euid 0 or CAP_PERFMON
  std::optional<long> fd_limit;  ///< RLIMIT_NOFILE soft limit
  bool stack_user = false;       ///< sample_type has PERF_SAMPLE_STACK_USER (call-graph=dwarf)
  /// Counted in a cgroup (`-G`), refused there, and the same event opens outside it: the cgroup is why.
  bool cgroup_refused = false;
  /// Its place in its group: 0 the leader (or alone), n the n-th member after the leader.
  std::size_t group_position = 0;
};

/// A concrete, actionable hint for `code` in `context` (never empty).
///
/// Example: for EACCES with paranoid 2 and a kernel-counting event: add ':u' or use CAP_PERFMON.
std::string errno_hint(int code, const OpenContext& context);

/// A failure the errno of an event's own perf_event_open(2) does not explain, as runtime met it.
enum class FailureCase : std::uint8_t {
  group_leader_failed,  ///< a strong group's leader could not be opened: `name` is the leader
  group_partial,        ///< EINVAL for a member that opens alone: `count` members were accepted before it
  ring_buffer,          ///< mmap(2) of a ring buffer failed: `count` data pages, `size` bytes, `limit`
                        ///< perf_event_mlock_kb (-1 unknown)
  set_output,           ///< PERF_EVENT_IOC_SET_OUTPUT failed (`error2`), then a buffer of its own too
                        ///< (as ring_buffer)
  inherit_sample_read,  ///< EINVAL for an inherited event with PERF_SAMPLE_READ
  frequency_too_high,   ///< EINVAL for a frequency (`count` Hz) over perf_event_max_sample_rate (`limit`)
  tool_event,           ///< perf's tool events (duration_time, ...) have no kernel counter
  exited,               ///< what was counted exited before its CPU times could be read
  filter_refused,       ///< PERF_EVENT_IOC_SET_FILTER failed (`error`) for the filter `name`; `count` 1
                        ///< when it was another event of the group's
};

/// What runtime saw of such a failure.
struct FailureFacts {
  FailureCase what{};
  int error = 0;   ///< the errno (ring_buffer, set_output: mmap's)
  int error2 = 0;  ///< set_output: the ioctl's errno
  int cpu = -1;    ///< the CPU, or -1
  std::string name{};
  std::uint64_t count = 0, size = 0;
  std::int64_t limit = -1;
};

/// runtime::Failure's words for it: a name where there is no errno ("tool event", "exited"), what it
/// means, what to do, and where it happened (each empty when it adds nothing: the errno's own name
/// and meaning stand).
struct FailureWords {
  std::string name, meaning, hint, detail;
};
FailureWords failure_words(const FailureFacts& facts);

/// /proc/sys/kernel/perf_event_paranoid, nullopt when unreadable.
///
/// Example: `read_paranoid().value_or(2)`
std::optional<int> read_paranoid(const std::string& path = "/proc/sys/kernel/perf_event_paranoid");

}  // namespace perfspec::spec
