// SPDX-License-Identifier: MIT
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/errno_facts.hpp"
#include "spec/builtin.hpp"
#include "spec/printable.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::spec {
namespace {

// Paraphrased from the ERRORS section of perf_event_open(2) (shared/seeds/003, 2020 edition).
constexpr ErrnoFact facts[] = {
    {E2BIG, "E2BIG",
     "the attr size is smaller than the first published layout, larger than a page, or larger than "
     "this kernel knows with non-zero bytes in the part it does not know; or, for a group's member, "
     "reading the group whole would take more than the kernel allows (16 KiB)"},
    {EACCES, "EACCES",
     "the event needs CAP_PERFMON or CAP_SYS_ADMIN, or a more permissive perf_event_paranoid"},
    {EBADF, "EBADF", "the group leader's file descriptor (or the cgroup descriptor) is not valid"},
    {EBUSY, "EBUSY", "another event already has exclusive access to the PMU"},
    {EFAULT, "EFAULT", "the attr pointer points at an invalid address"},
    {EINTR, "EINTR", "perf and ftrace handling were mixed for a uprobe"},
    {EINVAL, "EINVAL",
     "the event is invalid: config values out of range or setting reserved bits, an unsupported "
     "generic event, a CPU that does not exist, pinned/exclusive on a non-leader, or no room to "
     "add the event"},
    {EMFILE, "EMFILE", "the process ran out of file descriptors (every event uses one)"},
    {ENODEV, "ENODEV", "the event needs a feature this CPU does not have"},
    {ENOENT, "ENOENT", "the type is not valid, or the generic event is not supported by this machine"},
    {ENOSPC, "ENOSPC", "there are more breakpoint events than the hardware has debug registers"},
    {ENOSYS, "ENOSYS", "PERF_SAMPLE_STACK_USER was asked for and the hardware does not support it"},
    {EOPNOTSUPP, "EOPNOTSUPP",
     "the event needs hardware support that is missing: low-skid (precise) sampling, "
     "branch tracing, a PMU interrupt for sampling, or branch stacks on a software event"},
    {EOVERFLOW, "EOVERFLOW", "sample_max_stack is larger than /proc/sys/kernel/perf_event_max_stack"},
    {EPERM, "EPERM",
     "an exclude_* setting is not supported on this architecture, or the event needs "
     "CAP_PERFMON/CAP_SYS_ADMIN (kernel addresses for breakpoints, function tracepoints)"},
    {ESRCH, "ESRCH", "the process to monitor does not exist"},
};

bool is_cpu_event(std::uint32_t type) {
  return type == type_hardware || type == type_hw_cache || type == type_raw;
}

std::string paranoid_text(const OpenContext& c) {
  if (!c.paranoid) return "perf_event_paranoid could not be read";
  int p = *c.paranoid;
  std::string forbids = p >= 2   ? "kernel profiling, CPU-wide events and raw tracepoint access"
                        : p >= 1 ? "CPU-wide events and raw tracepoint access"
                        : p >= 0 ? "raw tracepoint access"
                                 : "nothing";
  return fmt::format("perf_event_paranoid is {}, which forbids unprivileged {}", p, forbids);
}

}  // namespace

const ErrnoFact* errno_fact(int code) {
  for (const auto& f : facts)
    if (f.code == code) return &f;
  return nullptr;
}

std::string errno_name(int code) {
  if (const auto* f = errno_fact(code)) return std::string(f->name);
  // Errnos of read(2) and ioctl(2) beyond perf_event_open's: glibc knows their names (EIO, ENOTTY).
  if (const char* name = ::strerrorname_np(code)) return name;
  return fmt::format("errno {}", code);
}

namespace {

// EACCES and EPERM: perf_event_paranoid's words for this machine, and what would let the event open.
std::string permission_hint(const OpenContext& c) {
  std::string h = paranoid_text(c);
  if (c.privileged)
    return h +
           "; the process is privileged, so the event itself is refused (a kernel "
           "address, or a setting this PMU forbids)";
  if (c.cpu_wide)
    return h +
           "; count this process instead of the whole CPU, or run with CAP_PERFMON "
           "(or lower perf_event_paranoid)";
  if (c.other_process) return h + "; attaching to another user's process needs CAP_PERFMON or ptrace rights";
  if (!c.exclude_kernel)
    return h +
           "; add the ':u' modifier to count user space only, or run with CAP_PERFMON (or lower "
           "perf_event_paranoid)";
  return h + "; run with CAP_PERFMON, or lower perf_event_paranoid";
}

std::string enoent_hint(const OpenContext& c) {
  // The kernel looks the cgroup's perf_event state up after the PMU accepted the event.
  if (c.cgroup_refused)
    return "the cgroup has no perf_event state in the kernel (the event opens outside it): it is being "
           "removed, or it was made before any controller was enabled in the cgroup2 root's "
           "cgroup.subtree_control, as systemd does at boot (on a system without it: 'echo +pids >' that "
           "file)";
  if (is_cpu_event(c.type) && !c.pmu_in_sysfs)
    return fmt::format(
        "this machine has no '{}' PMU (a virtual machine without a virtual PMU?): hardware "
        "events cannot be counted here; software events (task-clock, page-faults, ...) can",
        c.pmu.empty() ? "cpu" : c.pmu);
  if (is_cpu_event(c.type))
    return "the core PMU does not support this generic event; use a raw event from the CPU's "
           "documentation or 'perfspec list'";
  return fmt::format("the kernel has no PMU of type {} (was the module for '{}' unloaded?)", c.type, c.pmu);
}

std::string einval_hint(const OpenContext& c) {
#if defined(__x86_64__) || defined(__i386__)
  if (c.type == type_breakpoint)
    return "x86 debug registers watch writes (w), reads and writes (rw) or execution (x) of 1, 2, 4 or 8 "
           "bytes: a read-only (r) breakpoint or another length is refused";
#endif
  // The kernel's tracepoint PMU refuses an id it does not have with EINVAL (perf_trace_init).
  if (c.type == type_tracepoint)
    return "the kernel has no tracepoint with this id (the module that defines it was unloaded, or the "
           "id is from another kernel's tracefs)";
  if (c.precise_ip) return "try fewer 'p' modifiers; otherwise a term value is out of range for this PMU";
  return "a term value is out of range or sets reserved bits for this PMU, or a flag is not supported; "
         "check "
         "the encoding with 'perfspec resolve'";
}

}  // namespace

std::string errno_hint(int code, const OpenContext& c) {
  switch (code) {
    case EACCES:
    case EPERM: return permission_hint(c);
    case ENOENT: return enoent_hint(c);
    case ENOSPC:
      if (c.type == type_breakpoint)
#if defined(__aarch64__)
        return "the CPU has no free breakpoint or watchpoint register (arm64 has 2 to 16 of each: the "
               "kernel log's 'hw-breakpoint: found' line says how many): use fewer breakpoint events at once";
#else
        return "the CPU has no free debug register (x86 has 4): use fewer breakpoint events at once";
#endif
      return "the PMU has no free counter for this event: use fewer events in a group";
    case EOPNOTSUPP:
      if (c.precise_ip)
        return "drop the precision modifiers ('p', 'pp', 'ppp', 'P'): this PMU cannot give low-skid samples";
      return "the PMU lacks the feature this event needs (sampling interrupt, branch stacks)";
    case EINVAL: return einval_hint(c);
    case EMFILE:
      return c.fd_limit ? fmt::format(
                              "the limit on open files is {} (ulimit -n): raise it, or count fewer events "
                              "or CPUs at once",
                              *c.fd_limit)
                        : std::string(
                              "raise the open-file limit (ulimit -n), or count fewer events or CPUs at once");
    case ESRCH: return "the process exited or never existed: check the pid";
    case EBUSY:
      return fmt::format(
          "another user of '{}' holds it exclusively (another perf session?): stop it and retry", c.pmu);
    case ENODEV: return "this CPU lacks the feature: the event cannot be counted on this machine";
    case E2BIG:
      // perf_event_open's perf_event_validate_size(): a member whose group's read (every member's value,
      // with its id) or sample would pass 16 KiB; the attr's size is checked before, for every event
      // (the same words for every member refused, so that one paragraph names them all)
      if (c.group_position > 0)
        return "the group is too large: reading it whole would pass the kernel's 16 KiB (about 1,000 members "
               "fit): split it into smaller groups";
      return "the kernel is older than the attr layout perfspec used and a newer field is set (e.g. config3)";
    case EOVERFLOW: return "lower max-stack, or raise /proc/sys/kernel/perf_event_max_stack";
    case EBADF: return "the group leader failed or was closed; open the group again";
    case ENOSYS:
      // The kernel's only ENOSYS is user stack sampling on an architecture without it; without that,
      // the system call itself is missing.
      if (c.stack_user) return "drop call-graph=dwarf (user stack sampling) on this machine";
      return "perf_event_open(2) itself is not there: a kernel without CONFIG_PERF_EVENTS, a seccomp filter "
             "(some containers), or an emulator that does not pass it on (qemu-user)";
    case EFAULT: return "an internal error in perfspec: please report it";
    case EINTR: return "do not mix perf and ftrace on the same uprobe";
    default: return "not a documented perf_event_open(2) error";
  }
}

std::optional<int> read_paranoid(const std::string& path) {
  auto v = io::read_proc_number(path);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

namespace {

FailureWords ring_buffer_words(const FailureFacts& f) {
  FailureWords w;
  w.detail = fmt::format("mapping its ring buffer ({} data pages, {} KiB){}", f.count, f.size / 1024,
                         f.cpu >= 0 ? fmt::format(" on CPU {}", f.cpu) : std::string());
  switch (f.error) {
    case EPERM:
      w.meaning =
          "the buffer would pass the memory a user may lock for perf buffers (perf_event_mlock_kb per CPU, "
          "then RLIMIT_MEMLOCK) and the process lacks CAP_IPC_LOCK";
      w.hint = fmt::format(
          "raise /proc/sys/kernel/perf_event_mlock_kb{} or use fewer pages per buffer "
          "(SamplingOptions::pages, now {})",
          f.limit >= 0 ? fmt::format(" (now {} KiB)", f.limit) : std::string(), f.count);
      break;
    case ENOMEM:
      w.meaning = "the kernel could not allocate the buffer";
      w.hint = fmt::format("use fewer pages per buffer (SamplingOptions::pages, now {})", f.count);
      break;
    case EINVAL:
      w.meaning = "the kernel refused the mapping (its size, or an event that cannot have a buffer)";
      w.hint = "give a power of two of data pages; an inherited event has a buffer per CPU only";
      break;
    default:
      w.meaning = std::strerror(f.error);
      w.hint = "the ring buffer could not be mapped: see the errno";
      break;
  }
  return w;
}

}  // namespace

FailureWords failure_words(const FailureFacts& f) {
  switch (f.what) {
    case FailureCase::group_leader_failed:
      return {"", "", "", fmt::format("its group leader '{}' could not be opened", f.name)};
    case FailureCase::group_partial:
      return {
          "", "",
          "the group does not fit the PMU's counters; this event opens alone: split the group, or count it "
          "outside",
          fmt::format("its first {} events were accepted together, this one was not", f.count)};
    case FailureCase::ring_buffer: return ring_buffer_words(f);
    case FailureCase::set_output: {
      FailureWords w = ring_buffer_words(f);
      w.detail = fmt::format("PERF_EVENT_IOC_SET_OUTPUT into the buffer{} failed ({}), and {}",
                             f.cpu >= 0 ? fmt::format(" of CPU {}", f.cpu) : std::string(),
                             errno_name(f.error2), w.detail);
      w.hint += "; its samples there are not recorded (its values still count in its group)";
      return w;
    }
    case FailureCase::inherit_sample_read:
      return {"", "",
              "the kernel reads group values in samples of inherited events from Linux 6.12 on (with "
              "PERF_SAMPLE_TID); on an older kernel sample without inherit (Target::inherit = false) or "
              "without ':S'",
              "an inherited event with PERF_SAMPLE_READ (`:S`)"};
    case FailureCase::frequency_too_high:
      return {"", "",
              fmt::format("the kernel allows at most {} samples per second "
                          "(/proc/sys/kernel/perf_event_max_sample_rate): ask for fewer",
                          f.limit),
              fmt::format("a frequency of {} Hz", f.count)};
    case FailureCase::tool_event:
      return {"tool event", "a value the counting program computes, not a kernel counter",
              "counted by perfspec stat, not by runtime::Counters", ""};
    case FailureCase::exited:
      return {"exited", "", "the process or thread exited before its CPU times could be read from /proc", ""};
    case FailureCase::filter_refused:
      return {
          "",
          fmt::format("the kernel refused the filter \"{}\" ({})", printable(f.name), std::strerror(f.error)),
          "a filter compares the tracepoint's fields (its format file) with ==, !=, <, <=, >, >=, ~ or &, "
          "joined by && and ||",
          f.count ? "its group's other event had its filter refused" : ""};
  }
  return {};
}

}  // namespace perfspec::spec
