// SPDX-License-Identifier: MIT
#pragma once
// Processes and threads as /proc shows them, and where cgroups are mounted: what counting a process,
// its threads or a cgroup needs to find (stat, record, the exporter).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/runtime.hpp"

namespace perfspec::runtime {

/// The numbered entries of a /proc folder: the processes of /proc, the threads of /proc/PID/task.
std::vector<int> numbered_entries(const std::string& dir);
std::vector<int> threads_of(int pid);
/// Every thread of every process, as perf lists them from /proc.
std::vector<int> all_threads();

/// The fields of a /proc stat file (/proc/PID/stat, /proc/PID/task/TID/stat) after the name: field 3
/// (the state) first, so that field N is at index N - 3. nullopt when it cannot be read.
std::optional<std::vector<std::string>> stat_fields(const std::string& path);
/// When `pid` started, in clock ticks since boot (field 22); nullopt once it is gone.
std::optional<unsigned long long> start_ticks(int pid);

enum class Process { running, zombie, gone };
/// Whether `pid` still runs. A zombie counts nothing, and its parent may never reap it.
Process process_state(int pid);
inline bool alive(int pid) { return process_state(pid) == Process::running; }

/// The process a thread belongs to (its thread group: /proc/TID/status's Tgid); nullopt once it is gone.
std::optional<int> thread_group(int tid);

/// A thread's name now (/proc/TID/comm, without its newline); nullopt once it is gone.
std::optional<std::string> comm_of(int tid);

/// What fd `fd` of process `pid` is now (readlink of /proc/PID/fd/FD: a path, `pipe:[N]`,
/// `socket:[N]`, ...); nullopt when it is not open or the process is gone.
std::optional<std::string> fd_path(int pid, int fd);

/// User and system CPU time, in nanoseconds (of clock ticks: _SC_CLK_TCK).
struct CpuTimes {
  std::uint64_t user_ns = 0, system_ns = 0;
};
/// A thread's own (/proc/TID/task/TID/stat: utime, stime); nullopt once it is gone.
std::optional<CpuTimes> thread_cpu_times(int tid);
/// A process's with the children it has waited for (/proc/PID/stat: utime + cutime, stime + cstime).
std::optional<CpuTimes> process_cpu_times(int pid);
/// Every CPU's since boot (/proc/stat's cpu line: user + nice, system).
std::optional<CpuTimes> system_cpu_times();

/// Where cgroups are: a cgroup v1 hierarchy with the perf_event controller, else the cgroup2 mount,
/// from /proc/mounts (as perf finds it); empty when neither is mounted.
std::string cgroup_root();
/// The directory of cgroup `name` under `root` (cgroup_root()): a name is a path in the hierarchy,
/// with or without its leading '/'; "/" (or "") is the root itself.
///
/// Example: `cgroup_dir("/sys/fs/cgroup", "/system.slice") == "/sys/fs/cgroup/system.slice"`
std::string cgroup_dir(const std::string& root, std::string_view name);

/// perf's -G: per event, the fd of the cgroup named for it (Target::cgroups; -1 for an empty name),
/// each distinct cgroup's directory opened once and kept in `fds`, which must stay open until the
/// events are. Throws Error (machine) when no cgroup file system is mounted, (usage) naming a cgroup
/// that cannot be opened.
std::vector<int> open_cgroups(const std::vector<std::string>& per_event, std::vector<Fd>& fds);

}  // namespace perfspec::runtime
